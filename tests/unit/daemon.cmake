# Unit tests of the daemon's own modules (config, webhook payload, metrics, httpd helpers).
if(TARGET gvw_daemon)
  gvw_add_test(test_config SOURCES unit/test_config.c LIBS gvw_daemon LABELS unit)
  gvw_add_test(test_alert SOURCES unit/test_alert.c LIBS gvw_daemon LABELS unit)
  gvw_add_test(test_metrics SOURCES unit/test_metrics.c LIBS gvw_daemon LABELS unit)
  gvw_add_test(test_log SOURCES unit/test_log.c LIBS gvw_daemon LABELS unit)
endif()
