# The real-control-plane tier (docs/guide.md "The real-control-plane tier"): serve, the
# exporter, advertise, check and budgets against kube-apiserver, etcd, the
# controller manager, the scheduler and kwok built from pinned sources by
# tests/controlplane/build.sh (GVW_CP_BIN names its bin folder; scripts/test.sh
# builds it and exports it; unset, the test runs build.sh itself, which answers
# at once from the cache). No Go toolchain: the test fails, it never skips.
if(TARGET gpu-vram-watchdog AND TARGET gvw-stub-nvml)
  add_test(NAME controlplane COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_controlplane.sh)
  set_tests_properties(controlplane PROPERTIES LABELS "controlplane" TIMEOUT 900
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR};GVW_CP_TIMINGS=${CMAKE_BINARY_DIR}/controlplane-timings.txt")
endif()

# Leader election on the real control plane (README "High availability"): two
# serve replicas behind deploy/'s Lease Role, SIGTERM, SIGKILL mid-incident, a
# partition through tests/controlplane/cut_relay.py; its own cluster.
if(TARGET gpu-vram-watchdog AND TARGET gvw-stub-nvml)
  add_test(NAME controlplane_ha COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_controlplane_ha.sh)
  set_tests_properties(controlplane_ha PROPERTIES LABELS "controlplane" TIMEOUT 600
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR};GVW_CP_TIMINGS=${CMAKE_BINARY_DIR}/controlplane-ha-timings.txt")
endif()

# BUDGET_SOURCES=dra on the real control plane (issue 36): a ResourceSlice with
# consumable memory published as a driver would, claims the real scheduler
# allocates, the pod overshooting its claim recycled; its own cluster.
if(TARGET gpu-vram-watchdog AND TARGET gvw-stub-nvml)
  add_test(NAME controlplane_dra COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_controlplane_dra.sh)
  set_tests_properties(controlplane_dra PROPERTIES LABELS "controlplane" TIMEOUT 300
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR};GVW_CP_TIMINGS=${CMAKE_BINARY_DIR}/controlplane-dra-timings.txt")
endif()
# deploy/ and each overlay as an operator installs them (docs/guide.md "The
# real-control-plane tier"): rendered with kubectl kustomize, applied server-side
# to a fresh cluster each (the prometheus-operator's own CRDs and upstream
# promtool from tests/controlplane/monitoring.sh, pinned, cached; GVW_MONITORING
# names its folder), and serve run with the StatefulSet's rendered settings.
if(TARGET gpu-vram-watchdog)
  add_test(NAME controlplane_overlays
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_controlplane_overlays.sh)
  set_tests_properties(controlplane_overlays PROPERTIES LABELS "controlplane" TIMEOUT 300
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()

# BUDGET_SOURCES=hami and =kai on the real control plane (issue 36): a node whose
# status carries HAMi's resources, pods the real scheduler seats with gpumem
# limits; pods with KAI/Run:ai annotations beside Run:ai's reservation pod; the
# pod overshooting its declared share recycled on each; its own cluster.
if(TARGET gpu-vram-watchdog AND TARGET gvw-stub-nvml)
  add_test(NAME controlplane_sources COMMAND bash ${CMAKE_SOURCE_DIR}/tests/e2e/test_controlplane_sources.sh)
  set_tests_properties(controlplane_sources PROPERTIES LABELS "controlplane" TIMEOUT 300
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_STUB_NVML=$<TARGET_FILE:gvw-stub-nvml>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR};GVW_CP_TIMINGS=${CMAKE_BINARY_DIR}/controlplane-sources-timings.txt")
endif()
