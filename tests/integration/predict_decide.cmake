# tests/integration/predict_decide.cmake -- the predictive trigger (PREDICT) decided end to
# end against the loopback fake Prometheus + API server, asserted through the audit's JSON
# and the requests the fake received.
if(NOT TARGET gvw_fake)
  add_library(gvw_fake STATIC ${CMAKE_CURRENT_LIST_DIR}/../fake/fake.c)
  target_include_directories(gvw_fake PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../fake)
  target_link_libraries(gvw_fake PUBLIC PkgConfig::LIBEVENT)
endif()
gvw_add_test(test_predict_decide SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_predict_decide.c
             LIBS gvw_decide gvw_commands gvw_net gvw_metrics gvw_fake m LABELS integration)
set_tests_properties(test_predict_decide PROPERTIES TIMEOUT 120)
