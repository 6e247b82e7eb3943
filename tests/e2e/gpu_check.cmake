# The real-GPU check (issue 26): scripts/gpu-check.sh replays the incident on a real
# NVIDIA card. Without a GPU (or without root) it prints "gpu-check: SKIPPED: ..." and
# exits 0; SKIP_REGULAR_EXPRESSION makes ctest report that as skipped, not passed.
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim)
  add_test(NAME gpu_check COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/gpu-check.sh)
  set_tests_properties(gpu_check PROPERTIES LABELS gpu TIMEOUT 400
    SKIP_REGULAR_EXPRESSION "gpu-check: SKIPPED"
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>")
endif()
