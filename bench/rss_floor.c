/* rss_floor.c -- gvw-rss-floor: the resident memory the daemon's libraries cost by
 * themselves, to read the idle-RSS figure against.
 *
 *   gvw-rss-floor
 *
 * Linked like the daemon (libevent, libcurl, sqlite3, jansson, libm) and doing nothing
 * of the daemon's work, it prints VmRSS / RssFile / RssAnon (KiB) at three points:
 * after the dynamic loader ran (every library mapped and relocated, their
 * constructors run), after curl_global_init (OpenSSL's start-up: the daemon needs it
 * for the API server's TLS), and after an event base and an in-memory SQLite
 * database exist. */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <jansson.h>
#include <sqlite3.h>

static void
show(const char *stage)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long rss = -1, file = -1, anon = -1;

    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        sscanf(line, "VmRSS: %ld", &rss);
        sscanf(line, "RssFile: %ld", &file);
        sscanf(line, "RssAnon: %ld", &anon);
    }
    fclose(f);
    printf("FLOOR stage=%s rss_kib=%ld file_kib=%ld anon_kib=%ld\n", stage, rss, file,
           anon);
}

int
main(void)
{
    struct event_base *base;
    sqlite3 *db = NULL;
    json_t *j;

    show("loaded");
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    show("curl_init");
    base = event_base_new();
    j = json_object(); /* keeps jansson linked, as the daemon does */
    if (base == NULL || j == NULL || sqlite3_open(":memory:", &db) != SQLITE_OK ||
        sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", NULL, NULL,
                     NULL) != SQLITE_OK)
        return 1;
    show("event_sqlite");
    sqlite3_close(db);
    json_decref(j);
    event_base_free(base);
    curl_global_cleanup();
    return 0;
}
