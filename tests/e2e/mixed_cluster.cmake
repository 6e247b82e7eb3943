# End to end on a mixed T4 + H100 cluster (issue 26): two simulated nodes, an exporter
# each on the stub NVML, real Prometheus and Alertmanager, serve with the shipped settings.
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim AND TARGET gvw-stub-nvml)
  add_test(NAME e2e_mixed_cluster COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_mixed_cluster.sh)
  set_tests_properties(e2e_mixed_cluster PROPERTIES LABELS e2e TIMEOUT 400
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
