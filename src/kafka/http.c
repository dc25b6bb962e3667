/* http.c - /metrics (Prometheus text) and /healthz over libmicrohttpd.
 *
 * The server runs on libmicrohttpd's internal polling thread, bound to
 * 127.0.0.1 only. It reads the metrics through their atomics and the health
 * mutex (metrics.c), never the model, so a scrape cannot disturb training.
 * The live page (/ and /api/...) serves copies of JSON text the service thread
 * published (track/page.c), never the model either.
 */
#include "kafka/metrics.h"
#include "core/slda_int.h"
#include "track/track.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#if MHD_VERSION < 0x00097002
typedef int slda_mhd_result;
#else
typedef enum MHD_Result slda_mhd_result;
#endif

struct slda_http_s {
    struct MHD_Daemon *daemon;
    slda_metrics_t *metrics;
    char *model_name;
    int port;
    slda_page_t *_Atomic page; /* live page documents (track/page.c), or NULL */
};

static slda_mhd_result reply(struct MHD_Connection *conn, unsigned status, const char *type,
                             void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", type);
    slda_mhd_result ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static slda_mhd_result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    slda_http_t *http = cls;
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n",
                     19, MHD_RESPMEM_PERSISTENT);
    if (!strcmp(url, "/metrics")) {
        size_t len = 0;
        char *body = slda_metrics_prometheus(http->metrics, http->model_name, &len);
        if (!body)
            return MHD_NO;
        return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4", body, len,
                     MHD_RESPMEM_MUST_FREE);
    }
    if (!strcmp(url, "/healthz")) {
        char reason[300];
        int ok = slda_metrics_health(http->metrics, reason, sizeof reason - 1);
        if (ok)
            return reply(conn, MHD_HTTP_OK, "text/plain", "ok\n", 3, MHD_RESPMEM_PERSISTENT);
        strcat(reason, "\n");
        return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", reason, strlen(reason),
                     MHD_RESPMEM_MUST_COPY);
    }
    slda_page_t *page = http->page;
    if (page && !strcmp(url, "/")) {
        size_t len;
        const char *html = slda_page_html(&len);
        return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", (void *)html, len,
                     MHD_RESPMEM_PERSISTENT);
    }
    static const char *const api[SLDA_PAGE__COUNT] = {
        [SLDA_PAGE_TOPICS] = "/api/topics", [SLDA_PAGE_PREVALENCE] = "/api/prevalence",
        [SLDA_PAGE_EVENTS] = "/api/events", [SLDA_PAGE_STATUS] = "/api/status"};
    for (int i = 0; page && i < SLDA_PAGE__COUNT; i++) {
        if (strcmp(url, api[i]))
            continue;
        size_t len = 0;
        char *body = slda_page_get(page, (slda_page_doc_t)i, &len);
        if (!body)
            return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "not ready\n", 10,
                         MHD_RESPMEM_PERSISTENT);
        return reply(conn, MHD_HTTP_OK, "application/json", body, len, MHD_RESPMEM_MUST_FREE);
    }
    return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", "not found: try /metrics or /healthz\n",
                 36, MHD_RESPMEM_PERSISTENT);
}

slda_http_t *slda_http_start(slda_metrics_t *m, const char *model_name, int port,
                             char *errstr, size_t errstr_size)
{
    if (port < 0 || port > 65535) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_INVALID, "http.port \"%d\": out of range", port);
        return NULL;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    slda_http_t *http = slda_xcalloc(1, sizeof *http);
    http->metrics = m;
    http->model_name = slda_xstrdup(model_name ? model_name : "");
    http->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)port, NULL, NULL,
                                    handle, http, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                    MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
    if (!http->daemon) {
        slda_set_err(errstr, errstr_size, SLDA_ERR_IO,
                     "http.port \"%d\": cannot listen on 127.0.0.1 (in use?)", port);
        free(http->model_name);
        free(http);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(http->daemon, MHD_DAEMON_INFO_BIND_PORT);
    http->port = info ? info->port : port;
    return http;
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
    MHD_stop_daemon(http->daemon);
    free(http->model_name);
    free(http);
}
