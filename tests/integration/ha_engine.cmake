# tests/integration/ha_engine.cmake -- high availability in the decision engine: the
# fence before each act (a stand-in gate), Events from followers, the brakes the Lease
# carries; against the loopback fake.
gvw_engine_test(test_ha_engine SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ha_engine.c)
set_tests_properties(test_ha_engine PROPERTIES TIMEOUT 120)
