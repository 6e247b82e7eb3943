# tests/unit/lease.cmake -- high availability: the election on a fake clock, the Lease
# JSON (malformed answers included), the gate.
if(TARGET gvw_election)
  gvw_add_test(test_election SOURCES unit/test_election.c LIBS gvw_election LABELS unit)
endif()
if(TARGET gvw_lease)
  gvw_add_test(test_lease_json SOURCES unit/test_lease_json.c LIBS gvw_lease LABELS unit)
endif()
if(TARGET gvw_commands)
  gvw_add_test(test_audit_merge SOURCES unit/test_audit_merge.c
    LIBS gvw_commands gvw_audit gvw_store LABELS unit)
endif()
if(TARGET gvw_lease)
  gvw_add_test(test_refire SOURCES unit/test_refire.c LIBS gvw_lease gvw_alert LABELS unit)
endif()
