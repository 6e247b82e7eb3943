# tests/integration/kube_tls.cmake -- the API server over https (KUBE_CA_FILE, the
# certificate's name, the bearer token) against tests/fake/tls_kube.py; needs
# python3 and openssl at test time (scripts/install-deps.sh), and fails without them.
if(TARGET gpu-vram-watchdog)
  add_test(NAME kube_tls COMMAND bash ${CMAKE_SOURCE_DIR}/tests/integration/test_kube_tls.sh)
  set_tests_properties(kube_tls PROPERTIES LABELS integration TIMEOUT 120
    ENVIRONMENT "GVW_BINARY=$<TARGET_FILE:gpu-vram-watchdog>;GVW_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
