# seating.cmake -- `budgets`, the seating-chart page (headless Chromium) and the Events,
# against the incident scenario with the simulator and a real Prometheus.
if(TARGET gpu-vram-watchdog AND TARGET gvw-sim)
  add_test(NAME e2e_seating_chart COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_seating_chart.sh)
  set_tests_properties(e2e_seating_chart PROPERTIES LABELS e2e TIMEOUT 200
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
