# suggest.cmake -- unit tests of `budgets --suggest`'s no-I/O library (receiver/seating/suggest).
if(TARGET gvw_suggest_core)
  # gvw_suggest too: the table and patch printing (names from outside, cleaned).
  gvw_add_test(test_suggest SOURCES unit/test_suggest.c LIBS gvw_suggest gvw_suggest_core
               LABELS unit WHITE_BOX receiver/seating/suggest)
endif()
