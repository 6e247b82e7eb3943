# tests/integration/predict_decide.cmake -- the predictive trigger (PREDICT) decided end to
# end against the loopback fake Prometheus + API server, asserted through the audit's JSON
# and the requests the fake received.
gvw_engine_test(test_predict_decide SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_predict_decide.c
                LIBS m)
set_tests_properties(test_predict_decide PROPERTIES TIMEOUT 120)
