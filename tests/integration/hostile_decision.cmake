# tests/integration/hostile_decision.cmake -- hostile input to a decision: alert
# labels that are no node name, Prometheus answers naming too many GPUs or
# ambiguous series, sums past any card; against the loopback fake.
gvw_engine_test(test_hostile_decision SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/test_hostile_decision.c)
set_tests_properties(test_hostile_decision PROPERTIES TIMEOUT 300)
