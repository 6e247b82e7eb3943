# `budgets --suggest` against a real Prometheus (backfilled with promtool) and a fake API.
if(TARGET gpu-vram-watchdog)
  add_test(NAME suggest_prometheus COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_suggest.sh)
  set_tests_properties(suggest_prometheus PROPERTIES LABELS integration TIMEOUT 120
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
