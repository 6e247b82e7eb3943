# tests/unit/hostile.cmake -- the hostile-input bounds of the decision core: node names,
# readings naming too many GPUs, ambiguous or overflowing series.
if(TARGET gvw_policy)
  gvw_add_test(test_node_name SOURCES unit/test_node_name.c LIBS gvw_policy LABELS unit)
endif()
if(TARGET gvw_pod)
  gvw_add_test(test_hostile_core SOURCES unit/test_hostile_core.c LIBS gvw_pod gvw_clients_parse gvw_alert LABELS unit)
endif()
