# tests/unit/capsize.cmake -- GPUMEM_CAPACITY_MIB=auto's arithmetic and label parsing
if(TARGET gvw_policy)
  gvw_add_test(test_capsize SOURCES unit/test_capsize.c LIBS gvw_capsize gvw_config LABELS unit)
endif()
