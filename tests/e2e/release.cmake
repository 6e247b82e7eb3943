# End to end, the second act (issue #18): llama-swap runs away, is asked to unload
# through its cooperative-release route on its pod IP, and is not recycled.
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim AND TARGET gvw-stub-nvml)
  add_test(NAME e2e_release COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_release.sh)
  set_tests_properties(e2e_release PROPERTIES LABELS e2e TIMEOUT 400
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
