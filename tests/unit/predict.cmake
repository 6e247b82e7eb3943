# tests/unit/predict.cmake -- the predictive trigger's pure judgement and the matrix parser
if(TARGET gvw_core AND TARGET gvw_net)
  gvw_add_test(test_predict SOURCES unit/test_predict.c LIBS gvw_net gvw_core LABELS unit)
endif()
