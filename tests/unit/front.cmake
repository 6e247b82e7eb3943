# tests/unit/front.cmake -- the one front door's pure part (common/front): its head parser.
if(TARGET gvw_front)
  gvw_add_test(test_conn_head SOURCES unit/test_conn_head.c LIBS gvw_front LABELS unit)
endif()
