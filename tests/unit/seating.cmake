# seating.cmake -- unit tests of the seating chart: the Node capacity parser, the page renderer, the Event body.
if(TARGET gvw_parse)
  gvw_add_test(test_node_json SOURCES unit/test_node_json.c LIBS gvw_parse LABELS unit)
endif()
if(TARGET gvw_daemon)
  gvw_add_test(test_page_html SOURCES unit/test_page_html.c LIBS gvw_daemon LABELS unit)
endif()
