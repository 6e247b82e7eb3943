# tests/integration/loop_block.cmake -- the event loop stays responsive while serve
# decides on hostile Prometheus answers (each under the 8 MiB cap: 85,000 GPUs in the
# device query, one pod on 60,000 GPUs, 20,000 GPUs fanned out, 256 GPUs x 80,000
# series, a taint over 256 GPUs, FREE_QUERY naming $gpu on 2,000 and 200 GPUs):
# bench/loop_block.py times GET /healthz throughout and fails past 5 s (the old code
# held it 30 s to minutes), or when a decision does not end as it should. Needs python3.
if(TARGET gpu-vram-watchdog)
  add_test(NAME test_loop_block COMMAND python3 ${CMAKE_SOURCE_DIR}/bench/loop_block.py
    --binary $<TARGET_FILE:gpu-vram-watchdog> --max-block-ms 5000 --timeout 120)
  set_tests_properties(test_loop_block PROPERTIES LABELS integration TIMEOUT 900)
endif()
