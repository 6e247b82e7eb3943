# tests/integration/pod_lists.cmake -- pod lists as a real API server sends them: finished
# pods are no tenant of check, budgets or the exporter; a list past the bound is refused
# clearly; their peak RSS at the body cap (after fault.cmake and exporter.cmake: gvw-faultkit
# and the stub NVML).
if(TARGET gpu-vram-watchdog AND TARGET gvw-faultkit AND TARGET gvw-stub-nvml)
  add_test(NAME pod_lists COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_pod_lists.sh)
  set_tests_properties(pod_lists PROPERTIES LABELS integration TIMEOUT 120
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_FAULTKIT=$<TARGET_FILE:gvw-faultkit>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR};GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data")
endif()
# Peak RSS of serve and the exporter on pod lists at the 32 MiB body cap; only without
# sanitizers (ASan's shadow and quarantine inflate RSS by design).
if(NOT GVW_SANITIZE AND TARGET gpu-vram-watchdog AND TARGET gvw-faultkit AND TARGET gvw-stub-nvml)
  add_test(NAME fault_podlist_rss COMMAND bash ${CMAKE_SOURCE_DIR}/tests/fault/podlist_rss.sh)
  set_tests_properties(fault_podlist_rss PROPERTIES LABELS "fault;rss" TIMEOUT 300
    SKIP_RETURN_CODE 77
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_FAULTKIT=$<TARGET_FILE:gvw-faultkit>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR};GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data")
endif()
