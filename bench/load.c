/* load.c -- gvw-load: a fixed number of keep-alive POSTs, for runs that must be
 * exactly N requests (footprint, callgrind), where wrk only knows durations.
 *
 *   gvw-load -p PORT -n TOTAL [-c CONNS] [-f BODYFILE] [-t TOKEN] [-P PATH]
 *            [-S SLOW_US -o SLOWFILE]
 *
 * Opens CONNS connections to 127.0.0.1:PORT, each with one request in flight at a
 * time, until TOTAL answers have arrived. Prints one line:
 *   LOAD requests=N status200=N other=N seconds=S rps=R p50_us=.. p90_us=.. p99_us=..
 *        p999_us=.. max_us=..
 * With -S and -o, every request slower than SLOW_US is written to SLOWFILE as
 * "start_ns end_ns" (CLOCK_MONOTONIC, the clock `perf record -k CLOCK_MONOTONIC`
 * stamps events with), so a slow request can be matched with what the server
 * was doing meanwhile (bench/offcpu.sh).
 * Exit 0 when every answer was 200, else 1. Loopback only; bounded by TOTAL and a
 * 10 s per-answer timeout. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024
#define RBUF 65536

struct conn {
    int fd;
    size_t woff; /* bytes of the request written */
    char *rbuf;
    size_t rlen;
    int64_t t0; /* when the request started, ns */
    int busy;
};

static int64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char *
read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b;
    long n;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 || (b = malloc((size_t)n + 1)) == NULL ||
        fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "gvw-load: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    b[n] = '\0';
    *len = (size_t)n;
    return b;
}

static int
connect_to(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd == -1 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
        perror("gvw-load: connect");
        exit(2);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* A whole response in c->rbuf: its length, and its status in *status; 0 if not yet. */
static size_t
complete(const struct conn *c, int *status)
{
    const char *end = memmem(c->rbuf, c->rlen, "\r\n\r\n", 4), *cl;
    size_t head, body = 0;

    if (end == NULL)
        return 0;
    head = (size_t)(end - c->rbuf) + 4;
    cl = memmem(c->rbuf, head, "Content-Length:", 15);
    if (cl == NULL)
        cl = memmem(c->rbuf, head, "content-length:", 15);
    if (cl != NULL)
        body = strtoul(cl + 15, NULL, 10);
    if (c->rlen < head + body)
        return 0;
    *status = atoi(c->rbuf + 9);
    return head + body;
}

static int
cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
    int port = 0, nconns = 32, opt;
    long total = 0, sent = 0, done = 0, ok = 0, other = 0;
    const char *file = NULL, *token = NULL, *path = "/webhook", *slow_path = NULL;
    long slow_us = 0;
    FILE *slow = NULL;
    char *body = NULL, *req;
    size_t blen = 0, rlen;
    struct conn *conns;
    struct pollfd *pfd;
    int64_t *lat, t_start, t_end;

    while ((opt = getopt(argc, argv, "p:n:c:f:t:P:S:o:")) != -1) {
        switch (opt) {
        case 'p':
            port = atoi(optarg);
            break;
        case 'n':
            total = atol(optarg);
            break;
        case 'c':
            nconns = atoi(optarg);
            break;
        case 'f':
            file = optarg;
            break;
        case 't':
            token = optarg;
            break;
        case 'P':
            path = optarg;
            break;
        case 'S':
            slow_us = atol(optarg);
            break;
        case 'o':
            slow_path = optarg;
            break;
        default:
            fprintf(stderr, "usage: gvw-load -p PORT -n TOTAL [-c CONNS] [-f BODY] "
                            "[-t TOKEN] [-P PATH] [-S SLOW_US -o SLOWFILE]\n");
            return 2;
        }
    }
    if (port <= 0 || total <= 0 || nconns <= 0 || nconns > MAX_CONNS) {
        fprintf(stderr, "gvw-load: -p and -n are needed; 1 <= -c <= %d\n", MAX_CONNS);
        return 2;
    }
    if (nconns > total)
        nconns = (int)total;
    if (slow_path != NULL && (slow = fopen(slow_path, "w")) == NULL) {
        fprintf(stderr, "gvw-load: cannot write %s\n", slow_path);
        return 2;
    }
    if (file != NULL)
        body = read_file(file, &blen);
    rlen = (size_t)asprintf(&req,
                            "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            "Content-Type: application/json\r\n%s%s%s"
                            "Content-Length: %zu\r\n\r\n%s",
                            body ? "POST" : "GET", path,
                            token ? "Authorization: Bearer " : "", token ? token : "",
                            token ? "\r\n" : "", blen, body ? body : "");
    conns = calloc((size_t)nconns, sizeof(*conns));
    pfd = calloc((size_t)nconns, sizeof(*pfd));
    lat = calloc((size_t)total, sizeof(*lat));
    if (conns == NULL || pfd == NULL || lat == NULL)
        return 2;
    for (int i = 0; i < nconns; i++) {
        conns[i].fd = connect_to(port);
        conns[i].rbuf = malloc(RBUF);
    }
    t_start = now_ns();
    while (done < total) {
        for (int i = 0; i < nconns; i++) {
            struct conn *c = &conns[i];
            if (!c->busy && sent < total) {
                c->busy = 1;
                c->woff = 0;
                c->rlen = 0;
                c->t0 = now_ns();
                sent++;
            }
            pfd[i].fd = c->fd;
            pfd[i].events = c->busy ? (c->woff < rlen ? POLLOUT : POLLIN) : 0;
        }
        if (poll(pfd, (nfds_t)nconns, 10000) <= 0) {
            fprintf(stderr, "gvw-load: no answer for 10 s (%ld of %ld done)\n", done,
                    total);
            return 2;
        }
        for (int i = 0; i < nconns; i++) {
            struct conn *c = &conns[i];
            ssize_t n;
            size_t whole;
            int status;

            if (pfd[i].revents & POLLOUT) {
                n = write(c->fd, req + c->woff, rlen - c->woff);
                if (n > 0)
                    c->woff += (size_t)n;
                else if (n == -1 && errno != EAGAIN) {
                    perror("gvw-load: write");
                    return 2;
                }
            }
            if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                n = read(c->fd, c->rbuf + c->rlen, RBUF - c->rlen);
                if (n == 0 || (n == -1 && errno != EAGAIN)) {
                    fprintf(stderr, "gvw-load: the server closed a connection\n");
                    return 2;
                }
                if (n > 0)
                    c->rlen += (size_t)n;
                if ((whole = complete(c, &status)) > 0) {
                    lat[done] = now_ns() - c->t0;
                    if (slow != NULL && lat[done] > slow_us * 1000)
                        fprintf(slow, "%lld %lld\n", (long long)c->t0,
                                (long long)(c->t0 + lat[done]));
                    done++;
                    if (status == 200)
                        ok++;
                    else
                        other++;
                    c->busy = 0;
                }
            }
        }
    }
    t_end = now_ns();
    if (slow != NULL)
        fclose(slow);
    qsort(lat, (size_t)done, sizeof(*lat), cmp64);
    printf("LOAD requests=%ld status200=%ld other=%ld seconds=%.3f rps=%.0f p50_us=%lld "
           "p90_us=%lld p99_us=%lld p999_us=%lld max_us=%lld\n",
           done, ok, other, (double)(t_end - t_start) / 1e9,
           (double)done / ((double)(t_end - t_start) / 1e9),
           (long long)(lat[done / 2] / 1000), (long long)(lat[done * 9 / 10] / 1000),
           (long long)(lat[done * 99 / 100] / 1000),
           (long long)(lat[done * 999 / 1000] / 1000), (long long)(lat[done - 1] / 1000));
    for (int i = 0; i < nconns; i++)
        close(conns[i].fd);
    return other == 0 ? 0 : 1;
}
