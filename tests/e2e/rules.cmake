# rules.cmake -- ctest registration for tests/rules/check.sh (rules/, runbooks/, deploy/)
# Needs promtool (Debian "prometheus") and amtool ("prometheus-alertmanager");
# the script fails naming the package when one is missing. kubectl is optional.
add_test(NAME rules_check COMMAND bash ${CMAKE_SOURCE_DIR}/tests/rules/check.sh)
set_tests_properties(rules_check PROPERTIES LABELS rules TIMEOUT 120)
