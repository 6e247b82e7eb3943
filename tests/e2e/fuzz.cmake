# fuzz.cmake -- ctest registration of the libFuzzer smoke (tests/fuzz/smoke.sh)
# Builds the fuzz targets with clang (never the main build's compiler) into
# <build>/fuzz and runs each for ~18 s. Needs the Debian packages clang and
# libclang-rt-14-dev; the script fails naming them when they are missing.
add_test(NAME fuzz_smoke
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/fuzz/smoke.sh ${CMAKE_BINARY_DIR}/fuzz)
set_tests_properties(fuzz_smoke PROPERTIES LABELS fuzz TIMEOUT 300)
