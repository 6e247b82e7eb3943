# tests/integration/free_device_net.cmake -- FREE_QUERY=auto's device query over the
# network, against the loopback fake Prometheus + API server (gather and verdict).
if(TARGET gvw_decide AND TARGET gvw_net)
  if(NOT TARGET gvw_fake)
    add_library(gvw_fake STATIC ${CMAKE_CURRENT_LIST_DIR}/../fake/fake.c)
    target_include_directories(gvw_fake PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../fake)
    target_link_libraries(gvw_fake PUBLIC PkgConfig::LIBEVENT)
  endif()
  gvw_add_test(test_free_device_net SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_free_device_net.c
               LIBS gvw_decide gvw_report gvw_net gvw_fake LABELS integration)
endif()
