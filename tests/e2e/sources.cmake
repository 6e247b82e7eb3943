# End to end: the incident with HAMi and KAI budgets (BUDGET_SOURCES=hami,kai,resource).
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim AND TARGET gvw-stub-nvml)
  set(gvw_e2e_env "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  add_test(NAME e2e_sources COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_sources.sh)
  set_tests_properties(e2e_sources PROPERTIES LABELS e2e TIMEOUT 400
    ENVIRONMENT "${gvw_e2e_env}")
endif()
