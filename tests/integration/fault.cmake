# tests/integration/fault.cmake -- the daemon as a process under faults (tests/fault/):
# an unwritable or stalled store, a removed database file, overload, kill -9 under
# load, broken upstreams; and, without sanitizers only, an RSS leak check over
# 100,000 webhooks; hostile clients at the front door (front_door). tests/fault/valgrind.sh is run by hand (docs/robustness.md).
# gvw-sim is defined by sim.cmake, included after this file; $<TARGET_FILE:> resolves it.
if(TARGET gpu-vram-watchdog)
  find_package(Threads REQUIRED)
  add_executable(gvw-faultkit ${CMAKE_SOURCE_DIR}/tests/fault/faultkit.c)
  target_link_libraries(gvw-faultkit PRIVATE Threads::Threads)

  set(gvw_fault_env "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SIM=$<TARGET_FILE:gvw-sim>;GVW_FAULTKIT=$<TARGET_FILE:gvw-faultkit>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR};GVW_TEST_DATA=${CMAKE_SOURCE_DIR}/tests/data")
  foreach(t store_faults overload durability upstream_faults graceful_stop front_door)
    add_test(NAME fault_${t} COMMAND bash ${CMAKE_SOURCE_DIR}/tests/fault/test_${t}.sh)
    set_tests_properties(fault_${t} PROPERTIES LABELS fault TIMEOUT 120
      SKIP_RETURN_CODE 77 ENVIRONMENT "${gvw_fault_env}")
  endforeach()
  # ASan's quarantine grows RSS by design: the leak check only means something without it.
  if(NOT GVW_SANITIZE)
    add_test(NAME fault_rss COMMAND bash ${CMAKE_SOURCE_DIR}/tests/fault/rss.sh)
    set_tests_properties(fault_rss PROPERTIES LABELS "fault;rss" TIMEOUT 180
      SKIP_RETURN_CODE 77 ENVIRONMENT "${gvw_fault_env};GVW_RSS_ASSERT=1")
  endif()
endif()
