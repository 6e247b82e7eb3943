# tests/integration/fanout.cmake -- MAX_CONCURRENT_DECISIONS: a 1,000-node alert burst
# against a loopback fake, queued in order, every decision ending with a row.
if(TARGET gvw_decide AND TARGET gvw_net)
  if(NOT TARGET gvw_fake)
    add_library(gvw_fake STATIC ${CMAKE_CURRENT_LIST_DIR}/../fake/fake.c)
    target_include_directories(gvw_fake PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../fake)
    target_link_libraries(gvw_fake PUBLIC PkgConfig::LIBEVENT)
  endif()
  gvw_add_test(test_fanout SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fanout.c
               LIBS gvw_decide gvw_net gvw_metrics gvw_fake LABELS integration)
  set_tests_properties(test_fanout PROPERTIES TIMEOUT 120)
endif()
