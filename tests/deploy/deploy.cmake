# deploy.cmake -- ctest registration for tests/deploy/check.sh: deploy/ rendered
# with kustomize and checked offline (OpenAPI schemas, workload hardening and
# probes, Pod Security "restricted", references, RBAC allow-list). Needs
# kubectl, node and npm; the first run installs the pinned schema packages.
add_test(NAME deploy_check COMMAND bash ${CMAKE_SOURCE_DIR}/tests/deploy/check.sh)
set_tests_properties(deploy_check PROPERTIES LABELS deploy TIMEOUT 300)
