# image.cmake -- ctest registration for scripts/image.sh: the container image,
# built with podman from the current sources and run as a cluster would
# (serve non-root on a read-only root, the incident replay inside it).
# Skipped (exit 77, one line why) where podman cannot run. The first run on a
# machine installs podman and makes the base with mmdebstrap (a few minutes).
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim)
  add_test(NAME image COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/image.sh)
  # RUN_SERIAL: its in-container compile takes both cores, and the timed
  # simulator tests (sim_smoke) must not share them with it.
  set_tests_properties(image PROPERTIES LABELS image TIMEOUT 1200 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
