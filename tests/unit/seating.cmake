# seating.cmake -- unit tests of the seating chart: the Node capacity parser, the page renderer, the Event body.
if(TARGET gvw_parse)
  gvw_add_test(test_node_json SOURCES unit/test_node_json.c LIBS gvw_parse LABELS unit)
endif()
