# tests/unit/exporter.cmake -- the exporter's pure parts: cgroup lines, pod lists,
# attribution, the exposition text.
if(TARGET gvw_exporter_core)
  foreach(t test_cgroup test_podlist test_attribute test_expo_render)
    gvw_add_test(${t} SOURCES unit/${t}.c LIBS gvw_exporter_core LABELS unit)
  endforeach()
  # Fails each allocation of the pod list reader, attribution, the rendering and
  # nvml.c (against the stub NVML library) in turn: the linker sends their malloc
  # family to tests/lib/oom.c.
  gvw_add_test(test_exporter_oom SOURCES unit/test_exporter_oom.c LIBS gvw_exporter_core
    LABELS unit)
  gvw_oom_test(test_exporter_oom)
  # gvw-stub-nvml is defined by tests/integration/exporter.cmake (included later).
  add_dependencies(test_exporter_oom gvw-stub-nvml)
  set_property(TEST test_exporter_oom APPEND PROPERTY ENVIRONMENT
    "GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>")
endif()
