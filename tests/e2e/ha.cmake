# tests/e2e/ha.cmake -- two serve replicas behind one Lease (gvw-sim's, with
# faults), the real exporter and Prometheus: election, follower webhooks, fencing,
# SIGTERM handover, brakes across the failover, the merged audit.
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim AND TARGET gvw-stub-nvml)
  add_test(NAME ha_replicas COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_ha.sh)
  set_tests_properties(ha_replicas PROPERTIES LABELS e2e TIMEOUT 240
    SKIP_RETURN_CODE 77
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
