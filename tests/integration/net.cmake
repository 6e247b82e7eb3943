# tests/integration/net.cmake -- the network clients against a fake HTTP server on loopback
if(TARGET gvw_clients)
  if(NOT TARGET gvw_fake)
    add_library(gvw_fake STATIC ${CMAKE_CURRENT_LIST_DIR}/../fake/fake.c)
    target_include_directories(gvw_fake PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../fake)
    target_link_libraries(gvw_fake PUBLIC PkgConfig::LIBEVENT)
  endif()
  set(gvw_net_tests test_httpc)
  # prom.c and kube.c call the parsers: those tests wait for gvw_pod.
  if(TARGET gvw_pod)
    list(APPEND gvw_net_tests test_prom test_kube test_capacity test_net_oom)
  endif()
  foreach(t ${gvw_net_tests})
    gvw_add_test(${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/${t}.c
                 LIBS gvw_clients gvw_advertise gvw_fake LABELS integration
                 WHITE_BOX receiver/clients) # test_kube reads kube_json.h
  endforeach()
  # A rotated CA file, against a TLS server on the test's loop: libevent's OpenSSL
  # glue and OpenSSL's headers (libevent-dev; libssl-dev, which libcurl4-openssl-dev
  # brings).
  pkg_check_modules(EVSSL IMPORTED_TARGET libevent_openssl openssl)
  if(EVSSL_FOUND)
    gvw_add_test(test_httpc_ca SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_httpc_ca.c
                 LIBS gvw_clients gvw_fake PkgConfig::EVSSL LABELS integration)
    list(APPEND gvw_net_tests test_httpc_ca)
  else()
    message(WARNING "test_httpc_ca not built: pkg-config finds no libevent_openssl "
                    "or openssl (install libevent-dev and libssl-dev)")
  endif()
  if(TARGET test_net_oom)
    # Fails each allocation the clients make in turn (see the test's header).
    gvw_oom_test(test_net_oom)
  endif()
  # gvw_add_test names the daemon binary in the environment; built alone
  # (GVW_ONLY_AREAS) that target is missing and would stop CMake. These tests
  # never run the binary.
  if(NOT TARGET gpu-vram-watchdog)
    set_tests_properties(${gvw_net_tests} PROPERTIES ENVIRONMENT
      "GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  endif()
endif()
