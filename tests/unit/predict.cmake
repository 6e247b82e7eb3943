# tests/unit/predict.cmake -- the predictive trigger's pure judgement (the matrix reader: prom_matrix.cmake)
if(TARGET gvw_core AND TARGET gvw_net)
  gvw_add_test(test_predict SOURCES unit/test_predict.c LIBS gvw_core LABELS unit)
endif()
