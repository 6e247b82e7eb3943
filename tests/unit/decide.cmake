# tests/unit/decide.cmake -- unit tests of receiver/decide's pure parts: the verdict a
# decision's row is made of (its reason, error and candidates), out of memory too
if(TARGET gvw_decide)
  gvw_add_test(test_verdict SOURCES unit/test_verdict.c LIBS gvw_decide LABELS unit)
  gvw_oom_test(test_verdict)
endif()
