# The engine's act step against gvw-sim answering as a real API server (after
# sim.cmake: it runs gvw-sim). Prometheus is the loopback fake.
if(TARGET gvw-sim AND TARGET gvw_decide AND TARGET gvw_commands)
  gvw_engine_test(test_act_sim SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_act_sim.c)
  set_property(TEST test_act_sim APPEND PROPERTY ENVIRONMENT "GVW_SIM=$<TARGET_FILE:gvw-sim>")
  set_tests_properties(test_act_sim PROPERTIES TIMEOUT 120)
endif()
