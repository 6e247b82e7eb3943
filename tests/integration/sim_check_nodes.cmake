# `check` without --node when the GPU nodes cannot be known (after sim.cmake: it uses gvw-sim).
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim)
  add_test(NAME check_nodes COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_check_nodes.sh)
  set_tests_properties(check_nodes PROPERTIES LABELS integration TIMEOUT 60
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
