# tests/unit/pod_model.cmake -- one PodList, one reading (common/pod): serve's decision,
# the exporter and `budgets --suggest` read the same pods and budgets.
if(TARGET gvw_exporter_core AND TARGET gvw_suggest_core)
  gvw_add_test(test_pod_model SOURCES unit/test_pod_model.c
               LIBS gvw_exporter_core gvw_suggest_core LABELS unit
               WHITE_BOX receiver/seating/suggest) # suggest_pods.h: --suggest's reading
endif()
