# tests/unit/exporter.cmake -- the exporter's pure parts: cgroup lines, pod lists,
# attribution, the exposition text.
if(TARGET gvw_exporter_core)
  foreach(t test_cgroup test_podlist test_attribute test_expo_render)
    gvw_add_test(${t} SOURCES unit/${t}.c LIBS gvw_exporter_core LABELS unit)
  endforeach()
endif()
