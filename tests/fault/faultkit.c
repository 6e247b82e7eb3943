/* faultkit.c -- two small tools for the fault tests (tests/fault/test_*.sh):
 *
 *   faultkit upstream hold|raw|reply CODE FILE
 *       A misbehaving HTTP upstream on 127.0.0.1 (a port the kernel picks,
 *       printed as "listening PORT" on stdout). `hold` reads requests and never
 *       answers, `raw` answers with bytes that are not HTTP and closes, `reply`
 *       answers every request with CODE and FILE's contents as JSON. Each
 *       request line is printed on stdout ("GET /api/v1/query?...").
 *
 *   faultkit post --port P [--token-file F] [--conns C] [--count N]
 *                 [--seconds S] [--prefix STR] [--alertname NAME] [--log FILE]
 *       A webhook load client: C keep-alive connections post one alert each
 *       request, every alert with a distinct fingerprint PREFIX-<seq>. Stops
 *       after N requests in all (0 = no limit), after S seconds, or, per
 *       connection, when the server cannot be reached any more. --log gets one
 *       line "FINGERPRINT CODE" per request (CODE 0: no answer). The summary
 *       "sent=N ok=A unavailable=B other=C errors=D" goes to stdout.
 *
 * Plain POSIX sockets and threads, so the tools do not share code or bugs
 * with the daemon's own HTTP stack.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#define MAX_CLIENTS 128
#define REQ_MAX (64 * 1024)

static void
die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("faultkit: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static char *
read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    size_t cap = 0, n = 0, r;

    if (f == NULL)
        die("cannot read %s: %s", path, strerror(errno));
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            char *grown = realloc(data, cap + 1);

            if (grown == NULL)
                die("out of memory");
            data = grown;
        }
        if ((r = fread(data + n, 1, cap - n, f)) == 0)
            break;
        n += r;
    }
    fclose(f);
    data[n] = '\0';
    *len = n;
    return data;
}

static double
mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The value of header name (with its colon, any case) in a header block, or NULL. */
static const char *
header(const char *hdr, size_t hlen, const char *name)
{
    const char *p = hdr, *end = hdr + hlen;
    size_t nlen = strlen(name);

    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t linelen = eol ? (size_t)(eol - p) : (size_t)(end - p);

        if (linelen > nlen && strncasecmp(p, name, nlen) == 0)
            return p + nlen + strspn(p + nlen, " \t");
        if (eol == NULL)
            break;
        p = eol + 1;
    }
    return NULL;
}

/* Content-Length of a header block; 0 if absent. */
static size_t
content_length(const char *hdr, size_t hlen)
{
    const char *v = header(hdr, hlen, "Content-Length:");

    return v ? (size_t)strtoul(v, NULL, 10) : 0;
}

/* ---- upstream ------------------------------------------------------------ */

enum mode { HOLD, RAW, REPLY };

struct client {
    int fd;
    char buf[REQ_MAX];
    size_t len;
};

static void
answer(struct client *c, enum mode m, int code, const char *body, size_t blen)
{
    static const char junk[] = "\x16\x03\x01\x00\xa5garbage, not HTTP\r\n\x00\xff\xfe";
    char head[256];
    int n;

    if (m == RAW) {
        (void)!write(c->fd, junk, sizeof(junk) - 1);
        return;
    }
    n = snprintf(head, sizeof(head),
                 "HTTP/1.1 %d Fault\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                 code, blen);
    (void)!write(c->fd, head, (size_t)n);
    (void)!write(c->fd, body, blen);
}

static int
upstream(int argc, char **argv)
{
    enum mode m;
    int code = 0, lfd, one = 1;
    char *body = NULL;
    size_t blen = 0;
    struct sockaddr_in sa;
    socklen_t slen = sizeof(sa);
    struct client *cl[MAX_CLIENTS] = {0};
    struct pollfd pfd[MAX_CLIENTS + 1];

    if (argc < 1)
        die("upstream: hold|raw|reply CODE FILE");
    if (strcmp(argv[0], "hold") == 0) {
        m = HOLD;
    } else if (strcmp(argv[0], "raw") == 0) {
        m = RAW;
    } else if (strcmp(argv[0], "reply") == 0 && argc == 3) {
        m = REPLY;
        code = atoi(argv[1]);
        body = read_file(argv[2], &blen);
    } else {
        die("upstream: unknown mode %s", argv[0]);
    }
    signal(SIGPIPE, SIG_IGN);
    if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
        die("socket: %s", strerror(errno));
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == -1 || listen(lfd, 64) == -1 ||
        getsockname(lfd, (struct sockaddr *)&sa, &slen) == -1)
        die("listen: %s", strerror(errno));
    printf("listening %d\n", ntohs(sa.sin_port));
    fflush(stdout);
    for (;;) {
        nfds_t n = 0;
        int idx[MAX_CLIENTS + 1];

        pfd[n].fd = lfd;
        pfd[n].events = POLLIN;
        idx[n++] = -1;
        for (int i = 0; i < MAX_CLIENTS; i++)
            if (cl[i] != NULL) {
                pfd[n].fd = cl[i]->fd;
                pfd[n].events = POLLIN;
                idx[n++] = i;
            }
        if (poll(pfd, n, -1) == -1) {
            if (errno == EINTR)
                continue;
            die("poll: %s", strerror(errno));
        }
        for (nfds_t k = 0; k < n; k++) {
            struct client *c;
            ssize_t r;
            char *eoh;

            if (pfd[k].revents == 0)
                continue;
            if (idx[k] == -1) {
                int fd = accept(lfd, NULL, NULL);
                int slot = -1;

                if (fd == -1)
                    continue;
                for (int i = 0; i < MAX_CLIENTS; i++)
                    if (cl[i] == NULL) {
                        slot = i;
                        break;
                    }
                if (slot == -1 || (cl[slot] = calloc(1, sizeof(*c))) == NULL) {
                    close(fd);
                    continue;
                }
                cl[slot]->fd = fd;
                continue;
            }
            c = cl[idx[k]];
            r = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
            if (r <= 0 || (c->len += (size_t)r) >= sizeof(c->buf) - 1) {
                close(c->fd);
                free(c);
                cl[idx[k]] = NULL;
                continue;
            }
            c->buf[c->len] = '\0';
            if ((eoh = strstr(c->buf, "\r\n\r\n")) == NULL)
                continue;
            if (c->len < (size_t)(eoh + 4 - c->buf) +
                             content_length(c->buf, (size_t)(eoh - c->buf)))
                continue;
            /* One whole request: print its request line. */
            printf("%.*s\n", (int)strcspn(c->buf, "\r\n"), c->buf);
            fflush(stdout);
            if (m == HOLD) {
                c->len = 0; /* keep reading (and holding) whatever comes next */
                continue;
            }
            answer(c, m, code, body, blen);
            close(c->fd);
            free(c);
            cl[idx[k]] = NULL;
        }
    }
    return 0; /* not reached: SIGTERM ends it */
}

/* ---- post ---------------------------------------------------------------- */

struct load {
    int port;
    const char *token;
    const char *prefix;
    const char *alertname;
    long count;      /* 0 = unlimited */
    double deadline; /* monotonic */
    FILE *log;
    pthread_mutex_t mu;
    long next_seq;
    long sent, ok, unavailable, other, errors;
};

static int
connect_to(int port)
{
    struct sockaddr_in sa;
    struct timeval tv = {15, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    if (fd == -1)
        return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)port);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
        close(fd);
        return -1;
    }
    return fd;
}

static int
send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

        if (w <= 0) {
            if (w == -1 && errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads one response; its status code, or 0 on a transport failure. *close_after
 * is set when the server said Connection: close. */
static int
read_response(int fd, int *close_after)
{
    char buf[16384];
    size_t len = 0, need;
    char *eoh;
    int code;

    for (;;) {
        ssize_t r = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);

        if (r <= 0) {
            if (r == -1 && errno == EINTR)
                continue;
            return 0;
        }
        len += (size_t)r;
        buf[len] = '\0';
        if ((eoh = strstr(buf, "\r\n\r\n")) != NULL)
            break;
        if (len >= sizeof(buf) - 1)
            return 0;
    }
    if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
        return 0;
    {
        const char *conn = header(buf, (size_t)(eoh - buf), "Connection:");

        *close_after = conn != NULL && strncasecmp(conn, "close", 5) == 0;
    }
    need = (size_t)(eoh + 4 - buf) + content_length(buf, (size_t)(eoh - buf));
    while (len < need) {
        char sink[16384];
        size_t want = need - len < sizeof(sink) ? need - len : sizeof(sink);
        ssize_t r = recv(fd, sink, want, 0);

        if (r <= 0) {
            if (r == -1 && errno == EINTR)
                continue;
            return 0;
        }
        len += (size_t)r;
    }
    return code;
}

static void *
worker(void *arg)
{
    struct load *L = arg;
    int fd = -1, failures = 0;
    char body[1024], req[2048], fp[128];

    for (;;) {
        long seq;
        int code = 0, close_after = 0, blen, rlen;

        if (mono() >= L->deadline)
            break;
        if (fd == -1 && (fd = connect_to(L->port)) == -1) {
            /* The server is gone (killed) or refusing: this connection ends. */
            if (++failures >= 3)
                break;
            nanosleep(&(struct timespec){0, 20000000}, NULL);
            continue;
        }
        pthread_mutex_lock(&L->mu);
        seq = L->next_seq++;
        pthread_mutex_unlock(&L->mu);
        if (L->count > 0 && seq >= L->count)
            break;
        snprintf(fp, sizeof(fp), "%s-%ld", L->prefix, seq);
        blen = snprintf(body, sizeof(body),
                        "{\"version\":\"4\",\"status\":\"firing\",\"receiver\":\"fault\","
                        "\"groupKey\":\"{}:{alertname=\\\"%s\\\"}\",\"alerts\":[{"
                        "\"status\":\"firing\",\"labels\":{\"alertname\":\"%s\","
                        "\"seq\":\"%ld\"},\"annotations\":{\"summary\":\"fault load\"},"
                        "\"startsAt\":\"2026-06-02T10:00:00Z\","
                        "\"endsAt\":\"0001-01-01T00:00:00Z\",\"fingerprint\":\"%s\"}]}",
                        L->alertname, L->alertname, seq, fp);
        rlen = snprintf(
            req, sizeof(req),
            "POST /webhook HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
            "Content-Type: application/json\r\n%s%s%sContent-Length: %d\r\n\r\n%s",
            L->port, L->token ? "Authorization: Bearer " : "", L->token ? L->token : "",
            L->token ? "\r\n" : "", blen, body);
        if (send_all(fd, req, (size_t)rlen) == 0)
            code = read_response(fd, &close_after);
        if (code == 0 || close_after) {
            close(fd);
            fd = -1;
        }
        if (code != 0)
            failures = 0;
        pthread_mutex_lock(&L->mu);
        L->sent++;
        if (code == 200)
            L->ok++;
        else if (code == 503)
            L->unavailable++;
        else if (code == 0)
            L->errors++;
        else
            L->other++;
        if (L->log != NULL)
            fprintf(L->log, "%s %d\n", fp, code);
        pthread_mutex_unlock(&L->mu);
    }
    if (fd != -1)
        close(fd);
    return NULL;
}

static int
post(int argc, char **argv)
{
    struct load L;
    int conns = 4;
    double seconds = 60;
    const char *token_file = NULL, *log_path = NULL;
    pthread_t th[256];

    memset(&L, 0, sizeof(L));
    L.prefix = "fault";
    L.alertname = "FaultLoad";
    pthread_mutex_init(&L.mu, NULL);
    for (int i = 0; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (v == NULL)
            die("post: %s needs a value", k);
        i++;
        if (strcmp(k, "--port") == 0)
            L.port = atoi(v);
        else if (strcmp(k, "--token-file") == 0)
            token_file = v;
        else if (strcmp(k, "--conns") == 0)
            conns = atoi(v);
        else if (strcmp(k, "--count") == 0)
            L.count = atol(v);
        else if (strcmp(k, "--seconds") == 0)
            seconds = atof(v);
        else if (strcmp(k, "--prefix") == 0)
            L.prefix = v;
        else if (strcmp(k, "--alertname") == 0)
            L.alertname = v;
        else if (strcmp(k, "--log") == 0)
            log_path = v;
        else
            die("post: unknown option %s", k);
    }
    if (L.port <= 0 || conns < 1 || conns > 256)
        die("post: --port is required, --conns 1..256");
    if (token_file != NULL) {
        size_t n;
        char *t = read_file(token_file, &n);

        while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' '))
            t[--n] = '\0';
        L.token = t;
    }
    if (log_path != NULL && (L.log = fopen(log_path, "w")) == NULL)
        die("cannot write %s: %s", log_path, strerror(errno));
    signal(SIGPIPE, SIG_IGN);
    L.deadline = mono() + seconds;
    for (int i = 0; i < conns; i++)
        if (pthread_create(&th[i], NULL, worker, &L) != 0)
            die("cannot start a thread");
    for (int i = 0; i < conns; i++)
        pthread_join(th[i], NULL);
    if (L.log != NULL)
        fclose(L.log);
    printf("sent=%ld ok=%ld unavailable=%ld other=%ld errors=%ld\n", L.sent, L.ok,
           L.unavailable, L.other, L.errors);
    free((char *)L.token);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "upstream") == 0)
        return upstream(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "post") == 0)
        return post(argc - 2, argv + 2);
    fprintf(stderr,
            "usage: faultkit upstream hold|raw|reply CODE FILE\n"
            "       faultkit post --port P [--token-file F] [--conns C] [--count N]\n"
            "                     [--seconds S] [--prefix STR] [--alertname NAME]"
            " [--log FILE]\n");
    return 2;
}
