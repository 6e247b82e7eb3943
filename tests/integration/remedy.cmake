# tests/integration/remedy.cmake -- the remediation engine (gather, verdict, remedy)
# end to end against a loopback fake Prometheus + API server, asserted through
# the audit's JSON and the requests the fake received.
gvw_engine_test(test_remedy SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_remedy.c)
set_tests_properties(test_remedy PROPERTIES TIMEOUT 240)
