# seating.cmake -- unit tests of the seating chart: the Node capacity parser, the page renderer, the Event body.
if(TARGET gvw_pod)
  gvw_add_test(test_node_json SOURCES unit/test_node_json.c LIBS gvw_pod gvw_clients_parse gvw_alert LABELS unit)
endif()
if(TARGET gvw_seating)
  gvw_add_test(test_page_html SOURCES unit/test_page_html.c LIBS gvw_seating LABELS unit
               WHITE_BOX receiver/seating)
endif()
if(TARGET gvw_clients)
  gvw_add_test(test_kube_event SOURCES unit/test_kube_event.c LIBS gvw_clients LABELS unit)
endif()
if(TARGET gvw_seating)
  gvw_add_test(test_seating SOURCES unit/test_seating.c LIBS gvw_seating LABELS unit
               WHITE_BOX receiver/seating)
endif()
