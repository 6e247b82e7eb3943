# tests/unit/prom_matrix.cmake -- the one range-answer reader (receiver/clients/prom_matrix)
gvw_add_test(test_prom_matrix SOURCES unit/test_prom_matrix.c LIBS gvw_pod gvw_clients_parse gvw_alert LABELS unit)
