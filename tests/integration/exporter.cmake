# tests/integration/exporter.cmake -- the stub NVML library and the exporter run against it
# The stub: a shared library with NVML's file name, its GPUs read from a text file
# (tests/stub_nvml/stub_nvml.c; the contract is STUB-NVML in the report).
add_library(gvw-stub-nvml SHARED ${CMAKE_SOURCE_DIR}/tests/stub_nvml/stub_nvml.c)
set_target_properties(gvw-stub-nvml PROPERTIES
  OUTPUT_NAME nvidia-ml PREFIX lib SUFFIX .so.1 NO_SONAME ON
  C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/stub-nvml)
if(TARGET gpu-vram-watchdog)
  add_executable(gvw-fake-kube ${CMAKE_SOURCE_DIR}/tests/fake/fake_kube_server.c)
  target_link_libraries(gvw-fake-kube PRIVATE PkgConfig::LIBEVENT)
  add_test(NAME test_exporter
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_exporter.sh)
  set_tests_properties(test_exporter PROPERTIES
    LABELS integration TIMEOUT 120
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_FAKE_KUBE=$<TARGET_FILE:gvw-fake-kube>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  # Hostile clients against the front door (issue 27), /healthz probed throughout.
  add_test(NAME test_exporter_frontdoor
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_exporter_frontdoor.sh)
  set_tests_properties(test_exporter_frontdoor PROPERTIES
    LABELS integration TIMEOUT 120
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
if(TARGET gpu-vram-watchdog)
  # BUDGET_SOURCES=dra: the exporter reads the claims gvw-sim serves (sim.cmake,
  # included after this file; $<TARGET_FILE:> resolves it).
  add_test(NAME test_exporter_dra
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_exporter_dra.sh)
  set_tests_properties(test_exporter_dra PROPERTIES
    LABELS integration TIMEOUT 120
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
