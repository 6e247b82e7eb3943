# tests/unit/predict.cmake -- the predictive trigger's pure judgement (the matrix reader: prom_matrix.cmake)
if(TARGET gvw_policy AND TARGET gvw_clients)
  gvw_add_test(test_predict SOURCES unit/test_predict.c LIBS gvw_policy LABELS unit)
endif()
