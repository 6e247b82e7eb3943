# End to end: real Prometheus and Alertmanager, the simulator, the node exporter on the
# stub NVML, and serve.
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim AND TARGET gvw-stub-nvml)
  set(gvw_e2e_env "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  add_test(NAME e2e_incident COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_incident.sh)
  set_tests_properties(e2e_incident PROPERTIES LABELS e2e TIMEOUT 400
    ENVIRONMENT "${gvw_e2e_env}")
endif()
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim AND TARGET gvw-stub-nvml)
  # scripts/demo.sh itself, prebuilt: its end (audit kept, Prometheus, next commands).
  add_test(NAME e2e_demo COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_demo.sh)
  set_tests_properties(e2e_demo PROPERTIES LABELS e2e TIMEOUT 500
    ENVIRONMENT "${gvw_e2e_env}")
endif()
