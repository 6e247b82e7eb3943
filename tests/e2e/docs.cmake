# docs.cmake -- ctest registration for tests/docs/check.sh (docs/, deploy/examples/)
# Checks the operator docs and tenant examples against the binary's --help.
# kubectl is optional (offline use only); the script skips what needs it.
if(TARGET gpu-vram-watchdog)
  add_test(NAME docs_check COMMAND bash ${CMAKE_SOURCE_DIR}/tests/docs/check.sh)
  set_tests_properties(docs_check PROPERTIES
    LABELS docs
    TIMEOUT 120
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>")
endif()
