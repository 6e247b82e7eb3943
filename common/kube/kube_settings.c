/* kube_settings.c -- the settings serve and the exporter share, and the API client's
 * options from them */
#include "kube_settings.h"

#include <string.h>

#include "kubec.h"

const char *const kube_settings_log_words[] = {"json", "text", NULL};

void
kube_settings_opts(const struct kube_settings *ks, struct kube_opts *ko)
{
    memset(ko, 0, sizeof(*ko));
    ko->ko_url = ks->ks_api_url;
    ko->ko_token_file = ks->ks_token_file;
    ko->ko_ca_file = ks->ks_ca_file;
    ko->ko_connect_timeout_ms = (long)ks->ks_http_connect_timeout_ms;
    ko->ko_timeout_ms = (long)ks->ks_http_timeout_ms;
}
