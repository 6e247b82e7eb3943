# tests/unit/core.cmake -- unit tests of the decision core and its JSON parsers
if(TARGET gvw_core)
  gvw_add_test(test_quantity SOURCES unit/test_quantity.c LIBS gvw_core LABELS unit)
  gvw_add_test(test_usage SOURCES unit/test_usage.c LIBS gvw_parse LABELS unit)
  gvw_add_test(test_policy SOURCES unit/test_policy.c LIBS gvw_parse LABELS unit)
  gvw_add_test(test_gpu_scope SOURCES unit/test_gpu_scope.c LIBS gvw_parse LABELS unit)
  gvw_add_test(test_free_device SOURCES unit/test_free_device.c LIBS gvw_parse LABELS unit)
  gvw_add_test(test_pods_json SOURCES unit/test_pods_json.c LIBS gvw_parse LABELS unit)
  gvw_add_test(test_prom_json SOURCES unit/test_prom_json.c LIBS gvw_parse LABELS unit)
  gvw_add_test(test_jscan SOURCES unit/test_jscan.c LIBS gvw_json LABELS unit)
  gvw_add_test(test_strpool SOURCES unit/test_strpool.c LIBS gvw_util LABELS unit)
  gvw_add_test(test_rfc3339 SOURCES unit/test_rfc3339.c LIBS gvw_util LABELS unit)
  gvw_add_test(test_duration SOURCES unit/test_duration.c LIBS gvw_util LABELS unit)
  gvw_add_test(test_release_target SOURCES unit/test_release_target.c LIBS gvw_core LABELS unit)
  # Fails each allocation the core and the parsers make in turn: the linker
  # sends their malloc family to tests/lib/oom.c.
  gvw_add_test(test_core_oom SOURCES unit/test_core_oom.c LIBS gvw_parse LABELS unit)
  gvw_oom_test(test_core_oom)
endif()
