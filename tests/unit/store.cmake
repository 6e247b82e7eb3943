# store.cmake -- unit tests of the SQLite audit store and of the `audit` CLI
if(TARGET gvw_store)
  gvw_add_test(test_store
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_store.c
    LIBS gvw_store
    LABELS unit
    WHITE_BOX store)
  gvw_add_test(test_store_json_text
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_store_json_text.c
    LIBS gvw_store
    LABELS unit
    WHITE_BOX store)
  if(TARGET gvw_audit)
    gvw_add_test(test_budget_json
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_budget_json.c
      LIBS gvw_store gvw_audit
      LABELS unit)
  endif()
  if(TARGET gvw_commands)
    gvw_add_test(test_audit_cli
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_audit_cli.c
      LIBS gvw_commands gvw_audit
      LABELS unit)
  endif()
endif()
