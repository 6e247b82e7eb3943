# End to end on a 2-GPU node (issue #15): real Prometheus and Alertmanager, the simulator,
# the node exporter on the stub NVML, and serve in GPU scope. Skips (77) on a build
# without GPU scope.
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim AND TARGET gvw-stub-nvml)
  add_test(NAME e2e_two_gpus COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_two_gpus.sh)
  set_tests_properties(e2e_two_gpus PROPERTIES LABELS e2e TIMEOUT 400 SKIP_RETURN_CODE 77
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
