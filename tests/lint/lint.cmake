# lint -- the style the project declares, enforced in the test command: clang-format
# (--dry-run -Werror, the root .clang-format) and cppcheck over every tracked C file.
add_test(NAME lint COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/lint.sh)
set_tests_properties(lint PROPERTIES LABELS lint TIMEOUT 300)
