/* store_checkpoint.c -- WAL checkpoints on a thread of their own, off the event loop */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "store_int.h"

/*
 * WAL checkpoints off the daemon's thread. SQLite's automatic checkpoint runs
 * inside the commit that takes the WAL past 1000 frames: it copies the pages
 * into the database file and fdatasyncs both files, milliseconds during which
 * the event loop, and every webhook waiting for that group commit, stands still
 * (bench/commit.c: one commit in ~150 takes over 5 ms). A READWRITE store
 * therefore replaces the automatic checkpoint with a WAL hook that wakes a
 * thread, which runs a PASSIVE checkpoint on its own connection (PASSIVE never
 * blocks the writer or readers; the writer restarts the WAL once it is copied).
 * Durability is unchanged: commits were never fsynced (synchronous=NORMAL), the
 * checkpoint's fsyncs only move. If the thread cannot start, SQLite's
 * automatic checkpoint stays.
 *
 * Measured (bench/NOTES.md): intake p99 6.4 -> 3.0 ms (wrk, 32 connections,
 * ~16,000 webhooks/s); the group commit's p99.9 5.8 -> 0.5 ms.
 */
#define CHECKPOINT_FRAMES 1000 /* SQLite's own autocheckpoint threshold */
/* Under sustained writes the thread's checkpoint never catches the writer, so
 * the WAL is never restarted and would grow without end: past this size the
 * commit itself copies what is left (little: the thread copied the rest) and
 * the next transaction starts the WAL over. */
#define CHECKPOINT_INLINE_FRAMES 8000

struct checkpointer {
    pthread_t ck_thread;
    pthread_mutex_t ck_mu;
    pthread_cond_t ck_cv;
    int ck_want; /* the WAL grew by CHECKPOINT_FRAMES since the last wake-up */
    int ck_stop;
    int ck_woke_at;    /* WAL frames at the last wake-up; the hook's (main thread) only */
    int ck_prev;       /* WAL frames after the previous commit; the hook's only */
    sqlite3 *ck_db;    /* owned; used by the thread only */
    sqlite3 *ck_owner; /* the store's connection, whose WAL hook wakes us */
    struct checkpointer *ck_next;
};

/* The running checkpointers, found by their store's connection at close (the
 * WAL hook's argument cannot be read back safely: SQLite's own hook has one). */
static pthread_mutex_t checkpointers_mu = PTHREAD_MUTEX_INITIALIZER;
static struct checkpointer *checkpointers;

/* Runs after each commit on the daemon's thread: a flag and a signal once every
 * CHECKPOINT_FRAMES new frames (as often as SQLite would checkpoint; waking the
 * thread after every commit would copy the hot pages over and over), and only
 * past CHECKPOINT_INLINE_FRAMES a checkpoint (busy, a no-op, while the thread's
 * runs). */
static int
wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
    struct checkpointer *ck = arg;

    if (frames < ck->ck_prev)
        ck->ck_woke_at = 0; /* the WAL started over */
    ck->ck_prev = frames;
    if (frames >= ck->ck_woke_at + CHECKPOINT_FRAMES) {
        ck->ck_woke_at = frames;
        pthread_mutex_lock(&ck->ck_mu);
        if (!ck->ck_want) {
            ck->ck_want = 1;
            pthread_cond_signal(&ck->ck_cv);
        }
        pthread_mutex_unlock(&ck->ck_mu);
    }
    if (frames >= CHECKPOINT_INLINE_FRAMES)
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
}

static void *
checkpointer_main(void *arg)
{
    struct checkpointer *ck = arg;

    pthread_mutex_lock(&ck->ck_mu);
    for (;;) {
        while (!ck->ck_want && !ck->ck_stop)
            pthread_cond_wait(&ck->ck_cv, &ck->ck_mu);
        if (ck->ck_stop)
            break;
        ck->ck_want = 0;
        pthread_mutex_unlock(&ck->ck_mu);
        /* A failure (busy, I/O) leaves the frames for the next wake-up. */
        sqlite3_wal_checkpoint_v2(ck->ck_db, "main", SQLITE_CHECKPOINT_PASSIVE, NULL,
                                  NULL);
        pthread_mutex_lock(&ck->ck_mu);
    }
    pthread_mutex_unlock(&ck->ck_mu);
    return NULL;
}

static void
checkpointer_free(struct checkpointer *ck)
{
    sqlite3_close(ck->ck_db);
    pthread_cond_destroy(&ck->ck_cv);
    pthread_mutex_destroy(&ck->ck_mu);
    free(ck);
}

/* Starts the thread and installs the hook; on any failure nothing changes. */
void
checkpointer_start(struct store *s)
{
    struct checkpointer *ck;
    const char *path = sqlite3_db_filename(s->st_db, "main");
    sigset_t all, old;
    int rc;

    if (!sqlite3_threadsafe() || path == NULL || path[0] == '\0' ||
        (ck = calloc(1, sizeof(*ck))) == NULL)
        return;
    if (pthread_mutex_init(&ck->ck_mu, NULL) != 0) {
        free(ck);
        return;
    }
    if (pthread_cond_init(&ck->ck_cv, NULL) != 0) {
        pthread_mutex_destroy(&ck->ck_mu);
        free(ck);
        return;
    }
    /* A connection reads nothing until asked: one read opens its view of the
     * WAL, without which a checkpoint on it finds no WAL to copy. */
    if (sqlite3_open_v2(path, &ck->ck_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK ||
        sqlite3_busy_timeout(ck->ck_db, BUSY_TIMEOUT_RW_MS) != SQLITE_OK ||
        sqlite3_exec(ck->ck_db, "PRAGMA schema_version", NULL, NULL, NULL) != SQLITE_OK) {
        checkpointer_free(ck);
        return;
    }
    /* The thread takes no signals: they stay with the event loop. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&ck->ck_thread, NULL, checkpointer_main, ck);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        checkpointer_free(ck);
        return;
    }
    ck->ck_owner = s->st_db;
    pthread_mutex_lock(&checkpointers_mu);
    ck->ck_next = checkpointers;
    checkpointers = ck;
    pthread_mutex_unlock(&checkpointers_mu);
    sqlite3_wal_hook(s->st_db, wal_hook, ck); /* replaces the automatic checkpoint */
}

void
checkpointer_stop(struct store *s)
{
    struct checkpointer *ck, **pp;

    if (s->st_db == NULL || s->st_mode != STORE_READWRITE)
        return;
    pthread_mutex_lock(&checkpointers_mu);
    for (pp = &checkpointers; (ck = *pp) != NULL; pp = &ck->ck_next)
        if (ck->ck_owner == s->st_db) {
            *pp = ck->ck_next;
            break;
        }
    pthread_mutex_unlock(&checkpointers_mu);
    if (ck == NULL)
        return; /* it never started: SQLite's automatic checkpoint ran */
    sqlite3_wal_hook(s->st_db, NULL, NULL); /* no wake-ups for a stopping thread */
    pthread_mutex_lock(&ck->ck_mu);
    ck->ck_stop = 1;
    pthread_cond_signal(&ck->ck_cv);
    pthread_mutex_unlock(&ck->ck_mu);
    pthread_join(ck->ck_thread, NULL);
    checkpointer_free(ck);
}
