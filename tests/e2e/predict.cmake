# The predictive trigger end to end (issue #29): a drift recycled before the
# floor, a one-off step left alone; real Prometheus and Alertmanager.
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim AND TARGET gvw-stub-nvml)
  add_test(NAME e2e_predict COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_predict.sh)
  set_tests_properties(e2e_predict PROPERTIES LABELS e2e TIMEOUT 300
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
