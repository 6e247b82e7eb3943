# tests/unit/front.cmake -- the one front door (common/front): its head parser and its listener.
if(TARGET gvw_front)
  gvw_add_test(test_conn_head SOURCES unit/test_conn_head.c LIBS gvw_front LABELS unit)
  gvw_add_test(test_guard_listen SOURCES unit/test_guard_listen.c LIBS gvw_front LABELS unit)
endif()
