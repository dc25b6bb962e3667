/* http.c - /metrics (Prometheus text), /healthz and the live page over HTTP on 127.0.0.1.
 *
 * One thread of its own runs an epoll loop over the listening socket and the
 * connections. It reads the metrics through their atomics and the health
 * mutex (metrics.c), never the model, so a scrape cannot disturb training; the
 * live page (/ and /api/...) serves copies of JSON text the service thread
 * published (track/page.c).
 *
 * Nothing a local process does can take /healthz offline (the supervisor
 * would restart a healthy service):
 *   - at most HTTP_MAX_CONNS connections are open; a new one beyond that
 *     closes the connection that has waited longest for its request to
 *     complete (the slowest client), or, all of them answered already, the
 *     oldest;
 *   - a request must arrive whole within HTTP_REQUEST_MS of the connection's
 *     accept, a response be taken within HTTP_RESPONSE_MS: total deadlines,
 *     not restarted by each byte (a client sending one header line every few
 *     seconds is dropped all the same);
 *   - the request line is at most HTTP_LINE_MAX bytes (414) and the headers
 *     HTTP_HEAD_MAX (431); methods other than GET and HEAD get 405, but for
 *     POST /api/labels.
 * POST /api/labels takes {"topic":K,"label":"text"} with Content-Type
 * application/json (a type a cross-site form cannot send without the CORS
 * preflight this server never answers: another web page cannot label topics)
 * and a body of at most HTTP_BODY_MAX bytes within the request buffer; the
 * label is queued for the service thread (track/page.c), which sets it on the
 * model between minibatches: 202 with the label, 400 with the reason.
 * Every response closes its connection (HTTP/1.1 with "Connection: close"):
 * monitoring and the page make one request per connection, and a connection
 * that cannot be kept idle cannot be held either. Once the response is sent,
 * the server shuts its side and reads what the client still sends until the
 * client closes (at most HTTP_LINGER_MS): closing a socket with unread bytes
 * would reset it, and the client could lose the answer (a 431 to a request
 * whose headers are still arriving).
 */
#include "kafka/metrics.h"
#include "core/json.h"
#include "core/slda_int.h"
#include "engine/labels.h"
#include "track/track.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef HTTP_MAX_CONNS
#define HTTP_MAX_CONNS 64       /* a few scrapers, probes and pages at once, with room */
#endif
#ifndef HTTP_REQUEST_MS
#define HTTP_REQUEST_MS 2000    /* loopback requests take well under a millisecond */
#endif
#ifndef HTTP_RESPONSE_MS
#define HTTP_RESPONSE_MS 10000  /* the page's largest document, to a slow browser */
#endif
#ifndef HTTP_LINGER_MS
#define HTTP_LINGER_MS 1000     /* after the response, for the client to close first */
#endif
#define HTTP_LINE_MAX 4096      /* request line: longer is 414 */
#define HTTP_HEAD_MAX 8192      /* request line and headers: longer is 431 */
#define HTTP_BODY_MAX 1024      /* a POST's body: a label of 120 bytes, escaped, with room */

typedef struct conn_s {
    int fd;                /* -1: a free slot */
    double opened;         /* monotonic seconds at accept */
    double deadline;       /* the request, then the response, by then */
    size_t len;            /* bytes of the request read */
    char req[HTTP_HEAD_MAX];
    char *out;             /* the response (head and body), malloc'ed; NULL while reading */
    size_t out_len, out_off;
    int lingering;         /* the response is sent: drain until the client closes */
} conn_t;

struct slda_http_s {
    slda_metrics_t *metrics;
    char *model_name;
    int port;
    slda_page_t *_Atomic page; /* live page documents (track/page.c), or NULL */
    int lfd, efd, wake;        /* listening socket, epoll, eventfd that stops the thread */
    pthread_t tid;
    conn_t conns[HTTP_MAX_CONNS];
};

/* ---- connections ---- */

static void conn_close(slda_http_t *http, conn_t *c)
{
    epoll_ctl(http->efd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->out);
    c->fd = -1;
    c->out = NULL;
    c->len = c->out_len = c->out_off = 0;
    c->lingering = 0;
}

/* The slot for a new connection: a free one, else the one to drop (see the top). */
static conn_t *conn_slot(slda_http_t *http)
{
    conn_t *reading = NULL, *any = NULL;
    for (int i = 0; i < HTTP_MAX_CONNS; i++) {
        conn_t *c = &http->conns[i];
        if (c->fd < 0)
            return c;
        if (!c->out && (!reading || c->opened < reading->opened))
            reading = c;
        if (!any || c->opened < any->opened)
            any = c;
    }
    conn_t *victim = reading ? reading : any;
    conn_close(http, victim);
    return victim;
}

static void accept_all(slda_http_t *http, double now)
{
    for (;;) {
        int fd = accept4(http->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN: none left; EMFILE and the like: try at the next wake-up */
        conn_t *c = conn_slot(http);
        c->fd = fd;
        c->opened = now;
        c->deadline = now + HTTP_REQUEST_MS / 1000.0;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
        if (epoll_ctl(http->efd, EPOLL_CTL_ADD, fd, &ev) != 0)
            conn_close(http, c);
    }
}

/* ---- responses ---- */

static const char *status_text(unsigned status)
{
    switch (status) {
    case 200: return "OK";
    case 202: return "Accepted";
    case 404: return "Not Found";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 405: return "Method Not Allowed";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 400: return "Bad Request";
    default: return "Service Unavailable";
    }
}

/* Queue the response (the body is copied, or taken when owned) and switch to writing; extra:
 * more header lines, each ended by CRLF (or NULL). */
static void respond_ex(slda_http_t *http, conn_t *c, double now, unsigned status,
                       const char *type, const char *extra, const char *body, size_t len,
                       int owned, int head_only)
{
    char head[384];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                      "Cache-Control: no-store\r\n%sConnection: close\r\n\r\n",
                      status, status_text(status), type, len, extra ? extra : "");
    size_t blen = head_only ? 0 : len;
    c->out = slda_xmalloc((size_t)hl + blen + 1);
    memcpy(c->out, head, (size_t)hl);
    if (blen)
        memcpy(c->out + hl, body, blen);
    if (owned)
        free((void *)body);
    c->out_len = (size_t)hl + blen;
    c->out_off = 0;
    c->deadline = now + HTTP_RESPONSE_MS / 1000.0;
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(http->efd, EPOLL_CTL_MOD, c->fd, &ev);
}

#define TEXT(s) s, sizeof s - 1

static void respond(slda_http_t *http, conn_t *c, double now, unsigned status, const char *type,
                    const char *body, size_t len, int owned, int head_only)
{
    respond_ex(http, c, now, status, type, NULL, body, len, owned, head_only);
}

/* The response to a complete request for path (method GET or HEAD); gzip: the client takes
 * Content-Encoding gzip (the page's JSON at K=1000 is a quarter of its size so). */
static void route(slda_http_t *http, conn_t *c, double now, const char *path, int head, int gzip)
{
    if (!strcmp(path, "/metrics")) {
        size_t len = 0;
        char *body = slda_metrics_prometheus(http->metrics, http->model_name, &len);
        respond(http, c, now, 200, "text/plain; version=0.0.4", body, len, 1, head);
        return;
    }
    if (!strcmp(path, "/healthz")) {
        char reason[300];
        if (slda_metrics_health(http->metrics, reason, sizeof reason - 1)) {
            respond(http, c, now, 200, "text/plain", TEXT("ok\n"), 0, head);
            return;
        }
        strcat(reason, "\n");
        respond(http, c, now, 503, "text/plain", reason, strlen(reason), 0, head);
        return;
    }
    slda_page_t *page = http->page;
    if (page && !strcmp(path, "/")) {
        size_t len;
        const char *html = slda_page_html(&len);
        respond(http, c, now, 200, "text/html; charset=utf-8", html, len, 0, head);
        return;
    }
    static const char *const api[SLDA_PAGE__COUNT] = {
        [SLDA_PAGE_TOPICS] = "/api/topics", [SLDA_PAGE_PREVALENCE] = "/api/prevalence",
        [SLDA_PAGE_EVENTS] = "/api/events", [SLDA_PAGE_STATUS] = "/api/status",
        [SLDA_PAGE_EXAMPLES] = "/api/examples", [SLDA_PAGE_CHART] = "/api/chart",
        [SLDA_PAGE_AUTHORS] = "/api/authors", [SLDA_PAGE_GROUPS] = "/api/groups",
        [SLDA_PAGE_SUPERS] = "/api/supers"};
    for (int i = 0; page && i < SLDA_PAGE__COUNT; i++) {
        if (strcmp(path, api[i]))
            continue;
        size_t len = 0;
        char *body = gzip ? slda_page_get_gzip(page, (slda_page_doc_t)i, &len) : NULL;
        int gz = body != NULL;
        if (!body)
            body = slda_page_get(page, (slda_page_doc_t)i, &len);
        if (!body)
            respond(http, c, now, 503, "text/plain", TEXT("not ready\n"), 0, head);
        else
            respond_ex(http, c, now, 200, "application/json",
                       gz ? "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n"
                          : "Vary: Accept-Encoding\r\n",
                       body, len, 1, head);
        return;
    }
    respond(http, c, now, 404, "text/plain", TEXT("not found: try /metrics or /healthz\n"), 0,
            head);
}

/* A header's value (name with its colon, lower case) in the head [start, end), copied into
 * out; 0 when absent. */
static int header_value(const char *start, const char *end, const char *name, char *out,
                        size_t size)
{
    size_t nl = strlen(name);
    for (const char *p = start; p && p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *stop = eol ? eol : end;
        if ((size_t)(stop - p) > nl && !strncasecmp(p, name, nl)) {
            const char *v = p + nl;
            while (v < stop && (*v == ' ' || *v == '\t'))
                v++;
            size_t n = (size_t)(stop - v);
            while (n && (v[n - 1] == '\r' || v[n - 1] == ' '))
                n--;
            snprintf(out, size, "%.*s", (int)n, v);
            return 1;
        }
        p = eol ? eol + 1 : NULL;
    }
    return 0;
}

/* POST /api/labels: the body (complete) parsed and the label queued. */
static void post_label(slda_http_t *http, conn_t *c, double now, const char *body, size_t len)
{
    slda_json_t js;
    char err[300], msg[600];
    uint32_t topic = SLDA_JSON_NONE, label = SLDA_JSON_NONE;
    int parsed = 0;
    slda_json_init(&js);
    slda_err_t perr = slda_json_parse(&js, body, len, err, sizeof err);
    if (perr == SLDA_OK && js.nodes[0].type == SLDA_JSON_OBJECT) {
        parsed = 1;
        topic = slda_json_object_get(&js, 0, "topic");
        label = slda_json_object_get(&js, 0, "label");
    } else {
        snprintf(msg, sizeof msg, "body: not a JSON object (%s)\n",
                 perr == SLDA_OK ? "another value" : err);
    }
    double k = -1;
    if (topic != SLDA_JSON_NONE && js.nodes[topic].type == SLDA_JSON_NUMBER)
        k = strtod(js.src + js.nodes[topic].start, NULL);
    char *text = NULL;
    if (label != SLDA_JSON_NONE && js.nodes[label].type == SLDA_JSON_STRING) {
        text = slda_xmalloc(slda_json_raw_len(&js, label) + 1);
        slda_json_string(&js, label, text);
    }
    int ok = 0;
    if (!parsed)
        ; /* msg says why */
    else if (!(k >= 0 && k < SLDA_MAX_TOPICS && k == (double)(uint32_t)k) || !text)
        snprintf(msg, sizeof msg, "body: {\"topic\": a topic id, \"label\": a string} "
                                  "expected\n");
    else if (slda_label_check(text, err, sizeof err) != SLDA_OK)
        snprintf(msg, sizeof msg, "%s\n", err);
    else if ((ok = slda_page_label_post(http->page, (uint32_t)k, text)) < 0)
        snprintf(msg, sizeof msg, "topic %u: not a topic of the model\n", (uint32_t)k);
    else if (!ok)
        snprintf(msg, sizeof msg, "too many labels waiting: try again\n");
    ok = ok > 0;
    if (ok) {
        char *out = NULL;
        size_t olen = 0;
        FILE *f = open_memstream(&out, &olen);
        fprintf(f, "{\"topic\":%u,\"label\":", (uint32_t)k);
        slda_json_write_string(f, text);
        fprintf(f, ",\"queued\":true}");
        fclose(f);
        respond(http, c, now, 202, "application/json", out, olen, 1, 0);
    } else {
        respond(http, c, now, 400, "text/plain", slda_xstrdup(msg), strlen(msg), 1, 0);
    }
    free(text);
    slda_json_clear(&js);
}

/* The request so far: answered once its head is complete (or too long). */
static void parse(slda_http_t *http, conn_t *c, double now)
{
    char *eol = memchr(c->req, '\n', c->len);
    if (!eol) {
        if (c->len > HTTP_LINE_MAX)
            respond(http, c, now, 414, "text/plain", TEXT("request line too long\n"), 0, 0);
        return;
    }
    if ((size_t)(eol - c->req) > HTTP_LINE_MAX) {
        respond(http, c, now, 414, "text/plain", TEXT("request line too long\n"), 0, 0);
        return;
    }
    char *end = NULL;
    for (size_t i = 0; i + 1 < c->len && !end; i++) /* "\r\n\r\n" or "\n\n" */
        if (c->req[i] == '\n' && (c->req[i + 1] == '\n' ||
                                 (c->req[i + 1] == '\r' && i + 2 < c->len && c->req[i + 2] == '\n')))
            end = c->req + i;
    if (!end) {
        if (c->len >= HTTP_HEAD_MAX)
            respond(http, c, now, 431, "text/plain", TEXT("request headers too large\n"), 0, 0);
        return;
    }
    *eol = '\0';
    char *method = c->req, *sp = strchr(method, ' ');
    char *path = sp ? sp + 1 : NULL, *sp2 = path ? strchr(path, ' ') : NULL;
    if (!sp || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7)) {
        respond(http, c, now, 400, "text/plain", TEXT("bad request\n"), 0, 0);
        return;
    }
    *sp = *sp2 = '\0';
    char *query = strchr(path, '?');
    if (query)
        *query = '\0';
    int head = !strcmp(method, "HEAD");
    if (!strcmp(method, "POST") && http->page && !strcmp(path, "/api/labels")) {
        char type[200] = "", clen[40] = "";
        size_t hl = (size_t)(end - c->req) + (end[1] == '\r' ? 3 : 2); /* head with its end */
        header_value(eol + 1, end, "content-type:", type, sizeof type);
        long n = header_value(eol + 1, end, "content-length:", clen, sizeof clen)
                     ? strtol(clen, NULL, 10) : -1;
        if (strncasecmp(type, "application/json", 16))
            respond(http, c, now, 415, "text/plain", TEXT("Content-Type: application/json "
                                                          "expected\n"), 0, 0);
        else if (n < 0 || n > HTTP_BODY_MAX || hl + (size_t)n > sizeof c->req)
            respond(http, c, now, 413, "text/plain", TEXT("a body of 0..1024 bytes with "
                                                          "Content-Length expected\n"), 0, 0);
        else if (c->len >= hl + (size_t)n)
            post_label(http, c, now, c->req + hl, (size_t)n);
        else
            *sp = *sp2 = ' ', *eol = '\n'; /* the body is still coming: parse again later */
        if (query)
            *query = '?';
        return;
    }
    if (strcmp(method, "GET") && !head) {
        respond(http, c, now, 405, "text/plain", TEXT("method not allowed\n"), 0, 0);
        return;
    }
    char enc[300] = "";
    header_value(eol + 1, end, "accept-encoding:", enc, sizeof enc);
    route(http, c, now, path, head, strstr(enc, "gzip") != NULL);
}

static void on_readable(slda_http_t *http, conn_t *c, double now)
{
    for (;;) {
        ssize_t n = read(c->fd, c->req + c->len, sizeof c->req - c->len);
        if (n > 0) {
            c->len += (size_t)n;
            parse(http, c, now);
            if (c->out || c->len == sizeof c->req)
                return; /* answered (or 431 on the next round) */
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            conn_close(http, c);
        return;
    }
}

static void on_writable(slda_http_t *http, conn_t *c, double now)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        conn_close(http, c);
        return;
    }
    shutdown(c->fd, SHUT_WR); /* sent: linger for the client's close (see the top) */
    c->lingering = 1;
    c->deadline = now + HTTP_LINGER_MS / 1000.0;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(http->efd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* After the response: read and drop what the client sends until it closes. */
static void on_lingering(slda_http_t *http, conn_t *c)
{
    char sink[4096];
    for (;;) {
        ssize_t n = read(c->fd, sink, sizeof sink);
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        conn_close(http, c);
        return;
    }
}

/* ---- the loop ---- */

static int next_timeout_ms(const slda_http_t *http, double now)
{
    double first = now + 1.0;
    for (int i = 0; i < HTTP_MAX_CONNS; i++)
        if (http->conns[i].fd >= 0 && http->conns[i].deadline < first)
            first = http->conns[i].deadline;
    int ms = (int)((first - now) * 1000.0) + 1;
    return ms < 1 ? 1 : ms;
}

static void *loop(void *arg)
{
    slda_http_t *http = arg;
    struct epoll_event evs[32];
    for (;;) {
        int n = epoll_wait(http->efd, evs, 32, next_timeout_ms(http, slda_mono_s()));
        double now = slda_mono_s();
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &http->wake)
                return NULL;
            if (p == &http->lfd) {
                accept_all(http, now);
                continue;
            }
            conn_t *c = p;
            if (c->fd < 0)
                continue; /* closed earlier in this round (a slot given to a new one) */
            if (c->lingering)
                on_lingering(http, c);
            else if (c->out)
                on_writable(http, c, now);
            else if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
                on_readable(http, c, now);
        }
        for (int i = 0; i < HTTP_MAX_CONNS; i++)
            if (http->conns[i].fd >= 0 && now >= http->conns[i].deadline)
                conn_close(http, &http->conns[i]);
    }
}

static int listen_loopback(int port, int *bound)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof addr;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 512) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &alen) != 0) {
        close(fd);
        return -1;
    }
    *bound = ntohs(addr.sin_port);
    return fd;
}

slda_http_t *slda_http_start(slda_metrics_t *m, const char *model_name, int port,
                             char *errstr, size_t errstr_size)
{
    if (port < 0 || port > 65535) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "http.port \"%d\": out of range", port);
        return NULL;
    }
    slda_http_t *http = slda_xcalloc(1, sizeof *http);
    http->metrics = m;
    http->model_name = slda_xstrdup(model_name ? model_name : "");
    for (int i = 0; i < HTTP_MAX_CONNS; i++)
        http->conns[i].fd = -1;
    http->efd = http->wake = -1;
    http->lfd = listen_loopback(port, &http->port);
    if (http->lfd < 0) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                     "http.port \"%d\": cannot listen on 127.0.0.1 (%s)", port, strerror(errno));
        goto fail;
    }
    http->efd = epoll_create1(EPOLL_CLOEXEC);
    http->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event le = {.events = EPOLLIN, .data.ptr = &http->lfd};
    struct epoll_event we = {.events = EPOLLIN, .data.ptr = &http->wake};
    if (http->efd < 0 || http->wake < 0 || epoll_ctl(http->efd, EPOLL_CTL_ADD, http->lfd, &le) ||
        epoll_ctl(http->efd, EPOLL_CTL_ADD, http->wake, &we) ||
        pthread_create(&http->tid, NULL, loop, http) != 0) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_IO, "http.port \"%d\": cannot start (%s)",
                     port, strerror(errno));
        goto fail;
    }
    return http;
fail:
    if (http->lfd >= 0)
        close(http->lfd);
    if (http->efd >= 0)
        close(http->efd);
    if (http->wake >= 0)
        close(http->wake);
    free(http->model_name);
    free(http);
    return NULL;
}

int slda_http_port(const slda_http_t *http)
{
    return http->port;
}

void slda_http_set_page(slda_http_t *http, slda_page_t *page)
{
    http->page = page;
}

void slda_http_stop(slda_http_t *http)
{
    if (!http)
        return;
    uint64_t one = 1;
    if (write(http->wake, &one, sizeof one) != sizeof one)
        abort(); /* an eventfd write of 1 cannot fail short of a bug */
    pthread_join(http->tid, NULL);
    for (int i = 0; i < HTTP_MAX_CONNS; i++)
        if (http->conns[i].fd >= 0)
            conn_close(http, &http->conns[i]);
    close(http->lfd);
    close(http->efd);
    close(http->wake);
    free(http->model_name);
    free(http);
}
