# tests/integration/fanout.cmake -- MAX_CONCURRENT_DECISIONS: a 1,000-node alert burst
# against a loopback fake, queued in order, every decision ending with a row.
gvw_engine_test(test_fanout SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fanout.c)
set_tests_properties(test_fanout PROPERTIES TIMEOUT 120)
