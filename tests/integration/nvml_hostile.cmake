# tests/integration/nvml_hostile.cmake -- the exporter against an NVML that lies (the stub's
# GVW_STUB_NVML_EVIL modes), and the receiver reading a saturated series (after exporter.cmake
# and fault.cmake: the stub, the fake API server and gvw-faultkit).
if(TARGET gpu-vram-watchdog AND TARGET gvw-fake-kube AND TARGET gvw-faultkit)
  add_test(NAME test_exporter_nvml
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_exporter_nvml.sh)
  set_tests_properties(test_exporter_nvml PROPERTIES LABELS integration TIMEOUT 120
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_FAKE_KUBE=$<TARGET_FILE:gvw-fake-kube>;GVW_FAULTKIT=$<TARGET_FILE:gvw-faultkit>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
