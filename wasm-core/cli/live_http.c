/*
 * live_http.c - `slablab serve`'s HTTP side, on libmicrohttpd (one thread
 * per connection, so that a live stream may wait for its next frame).
 *
 * Every request passes, in this order (the first failure answers):
 *   method     GET or HEAD only (read-only server)             405
 *   Host       the address served ("127.0.0.1:P", "localhost:P",
 *              "[::1]:P" on loopback; the --bind address else),
 *              so that a DNS-rebound name cannot reach it      421
 *   Origin     absent, or exactly http://<Host>; and no
 *              Sec-Fetch-Site: cross-site                      403
 *   token      ?token= or the cookie set from it: absent       401
 *                                               wrong          403
 * then the route: /api/live (the binary stream, live_wire.h),
 * /api/watch, /api/snapshot, /api/status, or a file of the built site
 * looked up by exact path in memory (live_site.h): anything else is 404.
 */
#if SLABLAB_HAVE_MHD
#include "live_server.h"

#include "live_wire.h"

#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compares two strings in time independent of where they differ (the token). */
static bool same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < la && i < lb; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

static void common_headers(struct MHD_Response *r, bool api)
{
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Content-Security-Policy", "frame-ancestors 'none'");
    MHD_add_response_header(r, "Cross-Origin-Opener-Policy", "same-origin");
    MHD_add_response_header(r, "Cross-Origin-Embedder-Policy", "require-corp");
    MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
    MHD_add_response_header(r, "Cache-Control", api ? "no-store" : "no-cache");
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *type, const void *body,
                              size_t len, bool copy, const char *cookie)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    common_headers(r, strncmp(type, "text/html", 9) && strncmp(type, "text/javascript", 15));
    MHD_add_response_header(r, "Content-Type", type);
    if (cookie)
        MHD_add_response_header(r, "Set-Cookie", cookie);
    enum MHD_Result ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, const char *why)
{
    char body[256];
    int n = snprintf(body, sizeof body, "slablab serve: %u %s\n", status, why);
    return answer(conn, status, "text/plain; charset=utf-8", body, (size_t)n, true, NULL);
}

/* Whether host (the Host header) names this server. */
static bool host_allowed(const sl_live_server *srv, const char *host)
{
    if (!host)
        return false;
    char want[96];
    if (srv->bind_loopback) {
        static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
        for (size_t i = 0; i < 3; i++) {
            snprintf(want, sizeof want, "%s:%u", names[i], srv->port);
            if (!strcmp(host, want))
                return true;
        }
        return false;
    }
    if (!strcmp(srv->bind, "0.0.0.0") || !strcmp(srv->bind, "::"))
        return true; /* any address of the machine: the token is the guard */
    snprintf(want, sizeof want, strchr(srv->bind, ':') ? "[%s]:%u" : "%s:%u", srv->bind, srv->port);
    return !strcmp(host, want);
}

/* Whether names is a comma-separated list of plausible cache names. */
static bool names_ok(const char *names)
{
    if (!names || !*names || strlen(names) > 1024)
        return false;
    size_t run = 0;
    for (const char *p = names; *p; p++) {
        if (*p == ',') {
            if (run == 0)
                return false;
            run = 0;
            continue;
        }
        if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') &&
            !strchr("_-.:()", *p))
            return false;
        if (++run >= 32)
            return false;
    }
    return run > 0;
}

typedef struct stream_ctx {
    sl_live_server *srv;
    sl_live_client *client;
} stream_ctx;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream_ctx *s = cls;
    for (;;) {
        long n = sl_live_client_read(s->srv->hub, s->client, (unsigned char *)buf, max, 250);
        if (n < 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (n > 0)
            return (ssize_t)n;
        /* Nothing yet: status frames come every second, so a gone page is noticed at the next write. */
    }
}

static void stream_done(void *cls)
{
    stream_ctx *s = cls;
    sl_live_hub *hub = s->srv->hub;
    pthread_mutex_lock(&hub->mu);
    s->srv->streams--;
    pthread_mutex_unlock(&hub->mu);
    sl_live_hub_leave(hub, s->client);
    free(s);
}

static enum MHD_Result serve_stream(sl_live_server *srv, struct MHD_Connection *conn)
{
    sl_live_hub *hub = srv->hub;
    pthread_mutex_lock(&hub->mu);
    bool full = srv->streams >= LIVE_MAX_STREAMS;
    if (!full)
        srv->streams++;
    pthread_mutex_unlock(&hub->mu);
    if (full)
        return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "too many live pages (at most 8)");
    stream_ctx *s = calloc(1, sizeof *s);
    sl_live_client *c = s ? sl_live_hub_join(hub) : NULL;
    if (!c) {
        free(s);
        pthread_mutex_lock(&hub->mu);
        srv->streams--;
        pthread_mutex_unlock(&hub->mu);
        return refuse(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    s->srv = srv;
    s->client = c;
    const char *watch = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "watch");
    if (watch && names_ok(watch)) {
        sl_live_hub_watch(hub, c->id, watch);
        sl_live_wake_snapshots(srv);
    }
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, s, stream_done);
    if (!r) {
        stream_done(s);
        return MHD_NO;
    }
    common_headers(r, true);
    MHD_add_response_header(r, "Content-Type", "application/octet-stream");
    enum MHD_Result ok = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result serve_api(sl_live_server *srv, struct MHD_Connection *conn, const char *url, const char *cookie)
{
    if (!strcmp(url, "/api/live"))
        return serve_stream(srv, conn);
    if (!strcmp(url, "/api/watch")) {
        const char *client = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "client");
        const char *names = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "cache");
        unsigned long id = client ? strtoul(client, NULL, 10) : 0;
        if (!names_ok(names) || id == 0)
            return refuse(conn, MHD_HTTP_BAD_REQUEST, "watch needs client=<id from HELLO> and cache=<names>");
        if (sl_live_hub_watch(srv->hub, (unsigned)id, names))
            return refuse(conn, MHD_HTTP_NOT_FOUND, "no live page with that client id");
        sl_live_wake_snapshots(srv);
        return answer(conn, MHD_HTTP_NO_CONTENT, "text/plain", "", 0, false, cookie);
    }
    if (!strcmp(url, "/api/snapshot")) {
        const char *names = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "cache");
        if (!names_ok(names))
            return refuse(conn, MHD_HTTP_BAD_REQUEST, "snapshot needs cache=<name>[,<name>...]");
        char err[1024];
        size_t len;
        char *json = sl_live_snapshot_json(srv, names, false, &len, err, sizeof err);
        if (!json)
            return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, err);
        struct MHD_Response *r = MHD_create_response_from_buffer(len, json, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            free(json);
            return MHD_NO;
        }
        common_headers(r, true);
        MHD_add_response_header(r, "Content-Type", "application/json");
        enum MHD_Result ok = MHD_queue_response(conn, MHD_HTTP_OK, r);
        MHD_destroy_response(r);
        return ok;
    }
    if (!strcmp(url, "/api/status")) {
        sl_live_hub *hub = srv->hub;
        char json[512];
        pthread_mutex_lock(&hub->mu);
        int n = snprintf(
            json, sizeof json,
            "{\"format\":\"%s\",\"pages\":%u,\"attached\":%s,\"events_in\":%" PRIu64 ",\"kernel_lost\":%" PRIu64 "}",
            LIVE_WIRE_FORMAT, hub->nclients, hub->attached ? "true" : "false", hub->events_in, hub->kernel_lost);
        pthread_mutex_unlock(&hub->mu);
        return answer(conn, MHD_HTTP_OK, "application/json", json, (size_t)n, true, cookie);
    }
    return refuse(conn, MHD_HTTP_NOT_FOUND, "no such endpoint");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_size, void **state)
{
    (void)version, (void)upload_data;
    sl_live_server *srv = cls;
    static int seen;
    if (*state == NULL) { /* first call: headers only; answer on this call unless there is a body */
        *state = &seen;
        if (strcmp(method, "GET") && strcmp(method, "HEAD"))
            return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET and HEAD only");
    }
    if (*upload_size) {
        *upload_size = 0; /* a body on a GET: ignored */
        return MHD_YES;
    }
    if (!host_allowed(srv, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host")))
        return refuse(conn, MHD_HTTP_MISDIRECTED_REQUEST, "this server does not answer to that Host");
    const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    if (origin) {
        char want[128];
        snprintf(want, sizeof want, "http://%s", MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host"));
        if (strcmp(origin, want))
            return refuse(conn, MHD_HTTP_FORBIDDEN, "wrong Origin: only pages this server serves may connect");
    }
    const char *site = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (site && !strcmp(site, "cross-site"))
        return refuse(conn, MHD_HTTP_FORBIDDEN, "wrong Origin: a cross-site request");
    const char *query_token = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
    const char *cookie_token = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, srv->cookie);
    const char *token = query_token ? query_token : cookie_token;
    if (!token)
        return refuse(conn, MHD_HTTP_UNAUTHORIZED, "token needed: open the URL slablab serve printed");
    if (!same_secret(token, srv->token))
        return refuse(conn, MHD_HTTP_FORBIDDEN, "wrong token: open the URL slablab serve printed");
    char set_cookie[160];
    const char *cookie = NULL;
    if (query_token) {
        snprintf(set_cookie, sizeof set_cookie, "%s=%s; Path=/; HttpOnly; SameSite=Strict", srv->cookie, srv->token);
        cookie = set_cookie;
    }
    if (!strncmp(url, "/api/", 5)) {
        if (strcmp(method, "GET"))
            return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "the live endpoints take GET");
        return serve_api(srv, conn, url, cookie);
    }
    const sl_site_file *f = sl_site_find(&srv->site, url);
    if (!f)
        return refuse(conn, MHD_HTTP_NOT_FOUND, "not found");
    return answer(conn, MHD_HTTP_OK, f->type, f->data, f->len, false, cookie);
}

/*
 * The listening socket is bound here, before the daemon starts, so that the
 * port (given, or the kernel's pick for 0) and the cookie's name derived
 * from it are written before libmicrohttpd's threads can read them.
 */
struct MHD_Daemon *sl_live_http_start(sl_live_server *srv, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sslen;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    bool ipv6 = strchr(srv->bind, ':') != NULL;
    if (ipv6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)srv->port);
        if (inet_pton(AF_INET6, srv->bind, &a->sin6_addr) != 1) {
            snprintf(err, errlen, "--bind: '%s' is not an IP address", srv->bind);
            return NULL;
        }
        sslen = sizeof *a;
        flags |= MHD_USE_IPv6;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)srv->port);
        if (inet_pton(AF_INET, srv->bind, &a->sin_addr) != 1) {
            snprintf(err, errlen, "--bind: '%s' is not an IP address", srv->bind);
            return NULL;
        }
        sslen = sizeof *a;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    if (fd >= 0) {
        /* As libmicrohttpd sets on its own sockets: a restarted server takes its port back at once. */
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (ipv6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    }
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sslen) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0) {
        if (fd >= 0)
            close(fd);
        snprintf(err, errlen, "could not listen on %s port %u (in use, or not an address of this machine?)", srv->bind,
                 srv->port);
        return NULL;
    }
    srv->port = ntohs(ipv6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    snprintf(srv->cookie, sizeof srv->cookie, "slablab_token_%u", srv->port);
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)32, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_END);
    if (!d) {
        close(fd);
        snprintf(err, errlen, "could not start the HTTP server on %s port %u", srv->bind, srv->port);
        return NULL;
    }
    return d;
}
#endif /* SLABLAB_HAVE_MHD */
