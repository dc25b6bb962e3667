/* 0015-kafka_metrics - counters, Prometheus text, /metrics and /healthz, log backoff, mock control.
 *
 * No Kafka traffic: the metrics object is driven directly, the HTTP server is
 * queried over a loopback socket, the logger's sink is captured, and the
 * mock cluster's control parser is fed good and bad commands.
 */
#include "kafka/metrics.h"
#include "kafka/mockbroker.h"
#include "core/slda_int.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* GET path from 127.0.0.1:port; returns the whole response (malloc'ed). */
static char *http_get(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr)) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t r;
    while ((r = read(fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    buf[len] = '\0';
    close(fd);
    return buf;
}

typedef struct captured_s {
    int lines;
    char last[1200];
} captured_t;

static void capture(int level, const char *line, void *opaque)
{
    captured_t *c = opaque;
    c->lines++;
    snprintf(c->last, sizeof c->last, "%d %s", level, line);
}

static void test_prometheus(void)
{
    slda_metrics_t *m = slda_metrics_new();
    slda_metrics_add(m, SLDA_M_DOCS, 120);
    slda_metrics_add(m, SLDA_M_TOKENS, 3400);
    slda_metrics_add(m, SLDA_M_UPDATES, 4);
    slda_metrics_set(m, SLDA_G_RHO, 0.25);
    slda_metrics_set(m, SLDA_G_LAG, 17);
    slda_metrics_deadletter(m, SLDA_ERR_UTF8);
    slda_metrics_deadletter(m, SLDA_ERR_UTF8);
    slda_metrics_deadletter(m, SLDA_ERR_TOO_LARGE);
    CHECK_INT(slda_metrics_deadletters(m, SLDA_OK), 3);
    CHECK_INT(slda_metrics_deadletters(m, SLDA_ERR_UTF8), 2);
    char *text = slda_metrics_prometheus(m, "news", NULL);
    printf("%s", text);
    CHECK_CONTAINS(text, "streamlda_documents_total{model=\"news\"} 120\n");
    CHECK_CONTAINS(text, "streamlda_tokens_total{model=\"news\"} 3400\n");
    CHECK_CONTAINS(text, "streamlda_updates_total{model=\"news\"} 4\n");
    CHECK_CONTAINS(text, "streamlda_rho{model=\"news\"} 0.25\n");
    CHECK_CONTAINS(text, "streamlda_consumer_lag{model=\"news\"} 17\n");
    CHECK_CONTAINS(text, "streamlda_deadletters_total{model=\"news\",reason=\"utf8\"} 2\n");
    CHECK_CONTAINS(text, "streamlda_deadletters_total{model=\"news\",reason=\"too_large\"} 1\n");
    CHECK_CONTAINS(text, "# TYPE streamlda_snapshot_seconds gauge\n");
    CHECK_CONTAINS(text, "streamlda_kafka_errors_total{model=\"news\"} 0\n");
    free(text);
    char line[512];
    slda_metrics_status_line(m, line, sizeof line);
    printf("status: %s\n", line);
    CHECK_CONTAINS(line, "docs 120 (");
    CHECK_CONTAINS(line, "lag 17");
    CHECK_CONTAINS(line, "deadletters 3");
    slda_metrics_destroy(m);
}

static void test_http(void)
{
    char err[256];
    slda_metrics_t *m = slda_metrics_new();
    slda_http_t *http = slda_http_start(m, "svc", 0, err, sizeof err);
    CHECK_TRUE(http != NULL, "%s", err);
    if (!http) {
        printf("http: %s\n", err);
        slda_metrics_destroy(m);
        return;
    }
    int port = slda_http_port(http);
    printf("http on port %d\n", port);
    CHECK_GT(port, 0);
    char *r = http_get(port, "/healthz");
    printf("starting: %s\n", r ? r : "(null)");
    CHECK_CONTAINS(r, "503");
    CHECK_CONTAINS(r, "starting");
    free(r);
    slda_metrics_set_health(m, 1, NULL);
    r = http_get(port, "/healthz");
    CHECK_CONTAINS(r, " 200 OK\r\n");
    CHECK_CONTAINS(r, "\r\n\r\nok\n");
    free(r);
    slda_metrics_set_service_health(m, 0, "cannot write snapshots");
    slda_metrics_set_health(m, 1, NULL); /* the consumer's health does not hide it */
    r = http_get(port, "/healthz");
    CHECK_CONTAINS(r, "503");
    CHECK_CONTAINS(r, "cannot write snapshots");
    free(r);
    slda_metrics_set_service_health(m, 1, NULL);
    slda_metrics_set_health(m, 0, "all brokers down");
    r = http_get(port, "/healthz");
    CHECK_CONTAINS(r, "503");
    CHECK_CONTAINS(r, "all brokers down");
    free(r);
    slda_metrics_add(m, SLDA_M_SNAPSHOTS, 2);
    r = http_get(port, "/metrics");
    CHECK_CONTAINS(r, " 200 OK\r\n");
    CHECK_CONTAINS(r, "text/plain; version=0.0.4");
    CHECK_CONTAINS(r, "streamlda_snapshots_total{model=\"svc\"} 2\n");
    CHECK_CONTAINS(r, "streamlda_healthy{model=\"svc\"} 0\n");
    free(r);
    r = http_get(port, "/other");
    CHECK_CONTAINS(r, "404");
    free(r);
    /* The port is taken now: a second server on it must fail cleanly. */
    slda_http_t *again = slda_http_start(m, "svc", port, err, sizeof err);
    CHECK_NULL(again);
    CHECK_CONTAINS(err, "http.port");
    slda_http_stop(again);
    slda_http_stop(http);
    slda_http_stop(NULL);
    slda_metrics_destroy(m);
}

static void test_log_backoff(void)
{
    slda_metrics_t *m = slda_metrics_new();
    captured_t cap = {0};
    slda_metrics_set_log_sink(m, capture, &cap);
    for (int i = 0; i < 1000; i++)
        slda_log(m, SLDA_LOG_WARN, "broker-down", "broker down (%d)", i);
    printf("1000 repeats of one key -> %d line(s), last: %s\n", cap.lines, cap.last);
    CHECK_INT(cap.lines, 1);
    slda_log(m, SLDA_LOG_WARN, "other", "another cause");
    CHECK_INT(cap.lines, 2);
    slda_log(m, SLDA_LOG_INFO, NULL, "never suppressed");
    slda_log(m, SLDA_LOG_INFO, NULL, "never suppressed");
    CHECK_INT(cap.lines, 4);
    slda_log_reset(m, "broker-down");
    slda_log(m, SLDA_LOG_WARN, "broker-down", "broker down again");
    CHECK_INT(cap.lines, 5);
    CHECK_CONTAINS(cap.last, "broker down again");
    sleep(1); /* past the first 1 s backoff: the next line reports the suppressed ones */
    slda_log(m, SLDA_LOG_WARN, "other", "another cause, later");
    CHECK_INT(cap.lines, 6);
    slda_log(m, SLDA_LOG_WARN, "other", "x");
    slda_log(m, SLDA_LOG_WARN, "other", "x");
    sleep(2);
    slda_log(m, SLDA_LOG_WARN, "other", "after backoff");
    printf("after backoff: %s\n", cap.last);
    CHECK_CONTAINS(cap.last, "after backoff (2 similar suppressed)");
    slda_metrics_destroy(m);
    slda_metrics_destroy(NULL);
}

static void test_mock_control(void)
{
    char err[512];
    slda_mock_t *mock = slda_mock_new(2, err, sizeof err);
    CHECK_TRUE(mock != NULL, "%s", err);
    if (!mock)
        return;
    printf("mock cluster: %s\n", slda_mock_bootstraps(mock));
    CHECK_CONTAINS(slda_mock_bootstraps(mock), "127.0.0.1:");
    CHECK_INT(slda_mock_topics_create(mock, "a,b:3, c:1", 2, err, sizeof err), SLDA_OK);
    CHECK_INT(slda_mock_topics_create(mock, "d:zero", 2, err, sizeof err), SLDA_ERR_INVALID);
    CHECK_CONTAINS(err, "topic \"d\": bad partition count \"zero\"");
    const char *good[] = {"down 1", "up 1", "rtt 2 250", "rtt 2 0", "errors Fetch 3",
                          "errors Produce 2 NOT_LEADER_FOR_PARTITION", "errors 8 1 7",
                          "clear Fetch", "# comment", "", "down -1", "up -1",
                          "topic-error x", "topic-error x 0"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        slda_err_t e = slda_mock_control(mock, good[i], err, sizeof err);
        if (e)
            printf("control \"%s\": %s\n", good[i], err);
        CHECK_INT(e, SLDA_OK);
    }
    const char *bad[] = {"reboot 1", "errors Nonsense 3", "errors Fetch 0", "errors Fetch 2 NO_SUCH_ERROR",
                         "rtt 1", "topic-error x NOPE"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        slda_err_t e = slda_mock_control(mock, bad[i], err, sizeof err);
        printf("control \"%s\" -> %s: %s\n", bad[i], slda_err_name(e), err);
        CHECK_INT(e, SLDA_ERR_INVALID);
        CHECK_CONTAINS(err, "control \"");
    }
    slda_mock_destroy(mock);
    slda_mock_destroy(NULL);
}

int main(void)
{
    test_prometheus();
    test_http();
    test_log_backoff();
    test_mock_control();
    return slda_test_done("0015-kafka_metrics");
}
