# End to end: the incident replayed once per budget source (issue 36): the runaway's
# budget from HAMi, KAI, DRA and GPUMEM_RESOURCE, each recycled (test_sources.sh SOURCE).
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim AND TARGET gvw-stub-nvml)
  set(gvw_e2e_env "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  foreach(src hami kai dra resource)
    add_test(NAME e2e_sources_${src} COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_sources.sh ${src})
    set_tests_properties(e2e_sources_${src} PROPERTIES LABELS e2e TIMEOUT 400
      ENVIRONMENT "${gvw_e2e_env}")
  endforeach()
endif()
