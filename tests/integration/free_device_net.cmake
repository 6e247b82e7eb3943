# tests/integration/free_device_net.cmake -- FREE_QUERY=auto's device query over the
# network, against the loopback fake Prometheus + API server (gather and verdict).
gvw_engine_test(test_free_device_net SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_free_device_net.c
                LIBS gvw_audit)
