# tests/integration/remedy.cmake -- the remediation engine (gather, verdict, remedy)
# end to end against a loopback fake Prometheus + API server, asserted through
# the audit's JSON and the requests the fake received.
if(TARGET gvw_decide AND TARGET gvw_net)
  if(NOT TARGET gvw_fake)
    add_library(gvw_fake STATIC ${CMAKE_CURRENT_LIST_DIR}/../fake/fake.c)
    target_include_directories(gvw_fake PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../fake)
    target_link_libraries(gvw_fake PUBLIC PkgConfig::LIBEVENT)
  endif()
  gvw_add_test(test_remedy SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_remedy.c
               LIBS gvw_decide gvw_commands gvw_net gvw_metrics gvw_fake LABELS integration)
  set_tests_properties(test_remedy PROPERTIES TIMEOUT 120)
endif()
