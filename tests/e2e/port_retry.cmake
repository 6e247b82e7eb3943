# port_retry.cmake -- start_on_free_port (tests/lib/harness.sh): a Prometheus or
# Alertmanager whose port a parallel test took moves to another port.
add_test(NAME e2e_port_retry COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_port_retry.sh)
set_tests_properties(e2e_port_retry PROPERTIES LABELS e2e TIMEOUT 200
  ENVIRONMENT "GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
