# tests/integration/sim.cmake -- gvw-sim, the simulated GPU node the end-to-end test runs
# against, and its smoke test.
add_executable(gvw-sim
  ${CMAKE_SOURCE_DIR}/tests/sim/main.c
  ${CMAKE_SOURCE_DIR}/tests/sim/server.c
  ${CMAKE_SOURCE_DIR}/tests/sim/kubeapi.c
  ${CMAKE_SOURCE_DIR}/tests/sim/selector.c
  ${CMAKE_SOURCE_DIR}/tests/sim/jsonpatch.c
  ${CMAKE_SOURCE_DIR}/tests/sim/exporter.c
  ${CMAKE_SOURCE_DIR}/tests/sim/nodefs.c
  ${CMAKE_SOURCE_DIR}/tests/sim/release.c
  ${CMAKE_SOURCE_DIR}/tests/sim/world.c
  ${CMAKE_SOURCE_DIR}/tests/sim/scenario.c
  ${CMAKE_SOURCE_DIR}/tests/fake/lease_api.c)
target_include_directories(gvw-sim PRIVATE ${CMAKE_SOURCE_DIR}/tests/fake)
target_link_libraries(gvw-sim PRIVATE PkgConfig::LIBEVENT PkgConfig::JANSSON m)

add_test(NAME sim_smoke
  COMMAND bash ${CMAKE_SOURCE_DIR}/tests/sim/smoke.sh $<TARGET_FILE:gvw-sim>
          ${CMAKE_SOURCE_DIR}/tests/sim/scenarios/incident-2026-06-02.json)
set_tests_properties(sim_smoke PROPERTIES LABELS "integration;sim" TIMEOUT 60
  SKIP_RETURN_CODE 77)

# The answers a real API server gives to evictions and deletes (SPEC "A real API
# server"): DELETE options from the body, PDB refusal forms, load shedding.
add_test(NAME sim_answers
  COMMAND bash ${CMAKE_SOURCE_DIR}/tests/sim/answers.sh $<TARGET_FILE:gvw-sim>)
set_tests_properties(sim_answers PROPERTIES LABELS "integration;sim" TIMEOUT 60
  SKIP_RETURN_CODE 77)
