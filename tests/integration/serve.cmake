# Integration tests that drive the real binary over HTTP on loopback.
if(TARGET gpu-vram-watchdog)
  add_test(NAME serve_http COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_serve_http.sh)
  set_tests_properties(serve_http PROPERTIES LABELS integration TIMEOUT 120
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  add_test(NAME budget_sources_cli
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_budget_sources_cli.sh)
  set_tests_properties(budget_sources_cli PROPERTIES LABELS integration TIMEOUT 60
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
