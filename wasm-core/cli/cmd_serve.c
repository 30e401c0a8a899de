/*
 * cmd_serve.c - `slablab serve`: the built lab and a live stream of the
 * running kernel's allocations (docs/live.md).
 *
 * Threads:
 *   main      parses the options, loads the site, starts HTTP, prints the
 *             URL with its token, then waits for SIGINT/SIGTERM or
 *             --exit-after, and tears everything down in order;
 *   events    attaches the event program (live_source.c) while at least one
 *             page is streaming and detaches it when the last one leaves;
 *             drains the kernel ring into the hub every 20 ms, status every
 *             second; with --from, plays the recording instead
 *             (live_source_capture.c), from its start each time a first
 *             page comes or a page picks a cache (/api/watch), its
 *             snapshots at their recorded places;
 *   snapshots every --snapshot-interval seconds, or when a page asks, reads
 *             the caches the pages watch (snapshot_read.c) and sends them
 *             (not with --from: the recording's snapshots are the ones);
 *   HTTP      libmicrohttpd's, one per connection (live_http.c).
 * The BPF links are file descriptors of this process: whatever way it
 * ends, a crash included, the kernel detaches the programs.
 */
#include "cli.h"
#include "live_server.h"
#include "live_source.h"
#include "live_wire.h"
#include "snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#if SLABLAB_HAVE_MHD
#include <microhttpd.h>
#endif

static int run_serve(int argc, char **argv);

SL_CLI_COMMAND(
    serve, .name = "serve",
    .summary = "serve the lab with a live stream of the running kernel's allocations (Linux, root), or of a capture",
    .usage =
        "slablab serve [--port N] [--caches NAME[,NAME...]] [--site DIR] [--snapshot-interval S]\n"
        "                     [--ring-mb N] [--queue-mb N] [--exit-after S]\n"
        "                     [--bind ADDR --i-understand-this-exposes-kernel-addresses]\n"
        "slablab serve --from CAPTURE.slabcap [--rate EVENTS_PER_S|max] [--loop] [--port N] [--site DIR] ...\n"
        "  --port N               TCP port (default 7683; 0: any free port)\n"
        "  --caches NAMES         stream only these caches (at most 16; default every cache,\n"
        "                         kmalloc's and percpu's included)\n"
        "  --site DIR             the built lab (default: the one inside a release binary, else\n"
        "                         the dist/ of this checkout)\n"
        "  --snapshot-interval S  seconds between snapshots of the watched caches (default 5; 0: on request only)\n"
        "  --ring-mb N            kernel ring buffer MiB, a power of two (default 8)\n"
        "  --queue-mb N           per-page queue MiB before events are dropped (default 16)\n"
        "  --exit-after S         stop by itself after S seconds (tests)\n"
        "  --from CAPTURE         stream a recording (`slablab capture`; .slabcap, .slabcap.gz or ftrace\n"
        "                         text) instead of this kernel: no root, no BPF; its snapshots at their places\n"
        "  --rate N|max           with --from: N events a second, or as fast as the server takes them\n"
        "                         (default: the recorded timing)\n"
        "  --loop                 with --from: play it again from the start after its last event\n"
        "  SLABLAB_SERVE_TOKEN    (environment) the token to use, 32 hex digits, e.g. kept across restarts\n"
        "  --bind ADDR            listen on ADDR instead of 127.0.0.1: the stream shows kernel\n"
        "                         addresses, so this needs --i-understand-this-exposes-kernel-addresses",
    .run = run_serve)

#define DEFAULT_PORT 7683

#if SLABLAB_HAVE_MHD
static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void sl_live_wake_snapshots(sl_live_server *srv)
{
    pthread_mutex_lock(&srv->wake_mu);
    srv->snapshot_wanted = true;
    pthread_cond_signal(&srv->wake);
    pthread_mutex_unlock(&srv->wake_mu);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

char *sl_live_snapshot_json(sl_live_server *srv, const char *names, bool wrap, size_t *len, char *err, size_t errlen)
{
    if (srv->recording) {
        snprintf(err, errlen,
                 "this server plays a recording (--from): its snapshots come in the stream, at their recorded places");
        return NULL;
    }
    char copy[1100];
    const char *list[LIVE_HUB_MAX_WATCH];
    size_t n = 0;
    snprintf(copy, sizeof copy, "%s", names);
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && n < LIVE_HUB_MAX_WATCH;
         t = strtok_r(NULL, ",", &save))
        list[n++] = t;
    sl_snap_options opt = {.names = list, .nnames = n, .max_slabs = srv->max_slabs, .objects = true};
    sl_snapshot snap;
    memset(&snap, 0, sizeof snap);
    pthread_mutex_lock(&srv->snap_mu);
    uint64_t start = mono_ns();
    int rc = sl_snapshot_take(&snap, &opt, err, errlen);
    uint64_t end = mono_ns();
    pthread_mutex_unlock(&srv->snap_mu);
    char *buf = NULL;
    if (rc == 0) {
        sl_snapshot_decode(&snap);
        FILE *f = open_memstream(&buf, len);
        if (f && wrap)
            fprintf(f, "{\"taken_ns\":[%" PRIu64 ",%" PRIu64 "],\"snapshot\":", start, end);
        if (!f || sl_snapshot_write_json(&snap, f) || (wrap && fputs("}", f) < 0)) {
            snprintf(err, errlen, "could not write the snapshot as JSON");
            if (f)
                fclose(f);
            free(buf);
            buf = NULL;
        } else if (fclose(f)) {
            snprintf(err, errlen, "could not write the snapshot as JSON");
            free(buf);
            buf = NULL;
        }
    }
    sl_snapshot_free(&snap);
    return buf;
}

/* Sends /proc/slabinfo's per-cache counts as a SLABINFO frame (nothing when it cannot be read). */
static void send_slabinfo(sl_live_hub *hub)
{
    FILE *in = fopen("/proc/slabinfo", "r");
    if (!in)
        return;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out) {
        fclose(in);
        return;
    }
    fprintf(out, "{\"at_ns\":%" PRIu64 ",\"caches\":[", mono_ns());
    char line[512];
    bool first = true;
    while (fgets(line, sizeof line, in)) {
        char name[64];
        unsigned long active, num, objsize, perslab, pages, tunables[3], slabs, active_slabs, shared;
        if (sscanf(line, "%63s %lu %lu %lu %lu %lu : tunables %lu %lu %lu : slabdata %lu %lu %lu", name, &active, &num,
                   &objsize, &perslab, &pages, &tunables[0], &tunables[1], &tunables[2], &active_slabs, &slabs,
                   &shared) != 12)
            continue;
        fprintf(out, "%s[", first ? "" : ",");
        sl_cli_json_string(out, name);
        fprintf(out, ",%lu,%lu,%lu,%lu,%lu,%lu]", active, num, objsize, perslab, pages, slabs);
        first = false;
    }
    fputs("]}", out);
    fclose(in);
    if (fclose(out) == 0)
        sl_live_hub_send_json(hub, LIVE_F_SLABINFO, buf, len);
    free(buf);
}

/* Puts what the program left out as the server's own into the hub's status (under its lock). */
static void note_own(sl_live_hub *hub, sl_live_source *src)
{
    sl_live_own own;
    sl_live_source_own(src, &own);
    pthread_mutex_lock(&hub->mu);
    hub->own_known = true;
    hub->server_own = own.events;
    hub->own_by_context = own.by_context;
    snprintf(hub->own_note, sizeof hub->own_note, "%s", own.note);
    pthread_mutex_unlock(&hub->mu);
}

/* The recording's snapshots and slabinfo (ctx: the hub): after the events before them, so flushed first. */
static void recording_json(void *ctx, int type, const char *json, size_t len)
{
    sl_live_hub *hub = ctx;
    sl_live_hub_flush(hub, hub->kernel_lost);
    sl_live_hub_send_json(hub, type, json, len);
}

/* Opens the event source: the recording (from its start) or the kernel's event program. Returns as they do. */
static int open_source(sl_live_server *srv, sl_live_source **src, char *err, size_t errlen)
{
    if (srv->recording)
        return sl_live_source_open_capture(src, srv->recording, &srv->playback, sl_live_hub_record, recording_json,
                                           srv->hub, err, errlen);
    return sl_live_source_open(src, srv->filter, srv->nfilter, srv->ring_mb, sl_live_hub_record, srv->hub, err, errlen);
}

static void *event_thread(void *arg)
{
    sl_live_server *srv = arg;
    sl_live_hub *hub = srv->hub;
    sl_live_source *src = NULL;
    uint64_t retry_at = 0, last_flush = now_ms(), last_status = now_ms(), last_slabinfo = 0;
    while (!srv->stop) {
        pthread_mutex_lock(&hub->mu);
        unsigned pages = hub->nclients;
        pthread_mutex_unlock(&hub->mu);
        uint64_t now = now_ms();
        if (pages && !src && now >= retry_at) {
            char err[600];
            int rc = open_source(srv, &src, err, sizeof err);
            pthread_mutex_lock(&hub->mu);
            hub->attached = rc == 0;
            snprintf(hub->source_error, sizeof hub->source_error, "%.500s", rc ? err : "");
            pthread_mutex_unlock(&hub->mu);
            if (rc) {
                fprintf(stderr, "slablab serve: %s\n", err);
                retry_at = now + 5000;
            } else {
                fprintf(stderr, "slablab serve: a page is watching: %s\n",
                        srv->recording ? "playing the recording from its start" : "event program attached");
                if (!srv->recording) {
                    sl_live_own own;
                    sl_live_source_own(src, &own);
                    if (own.by_context)
                        fprintf(stderr, "slablab serve: left out as the server's own: its process-context work (%s)\n",
                                own.note);
                    else
                        fprintf(stderr,
                                "slablab serve: WARNING: left out as the server's own: every event while it is "
                                "current, interrupt work included (counted as server_own): %s\n",
                                own.note);
                    note_own(hub, src);
                }
            }
        } else if (!pages && src) {
            note_own(hub, src);
            sl_live_hub_flush(hub, sl_live_source_lost(src));
            sl_live_source_close(src);
            src = NULL;
            pthread_mutex_lock(&hub->mu);
            hub->attached = false;
            pthread_mutex_unlock(&hub->mu);
            fprintf(stderr, "slablab serve: no page is watching: %s\n",
                    srv->recording ? "the recording stopped" : "event program detached");
        }
        if (src && srv->recording) {
            /* A page picked a cache: play the recording again from its start, so that the cache's
             * agreement begins at the start snapshot (which came before the page picked it). */
            pthread_mutex_lock(&srv->wake_mu);
            bool again = srv->snapshot_wanted;
            srv->snapshot_wanted = false;
            pthread_mutex_unlock(&srv->wake_mu);
            char err[200];
            sl_live_source *fresh = NULL;
            if (again && sl_live_source_open_capture(&fresh, srv->recording, &srv->playback, sl_live_hub_record,
                                                     recording_json, hub, err, sizeof err) == 0) {
                sl_live_hub_flush(hub, hub->kernel_lost);
                sl_live_source_close(src);
                src = fresh;
                fprintf(stderr, "slablab serve: a page picked a cache: playing the recording again from its start\n");
            }
        }
        if (src) {
            if (sl_live_source_poll(src, 20) < 0)
                fprintf(stderr, "slablab serve: reading the event ring failed\n");
        } else {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
        }
        now = now_ms();
        if (now - last_flush >= 20) {
            if (src)
                note_own(hub, src);
            sl_live_hub_flush(hub, src ? sl_live_source_lost(src) : hub->kernel_lost);
            last_flush = now;
        }
        if (now - last_status >= 1000) {
            sl_live_hub_status(hub);
            last_status = now;
        }
        if (pages && !srv->recording && now - last_slabinfo >= 2000) {
            send_slabinfo(hub);
            last_slabinfo = now;
        }
    }
    sl_live_source_close(src);
    return NULL;
}

static void *snapshot_thread(void *arg)
{
    sl_live_server *srv = arg;
    while (!srv->stop) {
        pthread_mutex_lock(&srv->wake_mu);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += srv->snapshot_s ? srv->snapshot_s : 3600;
        while (!srv->snapshot_wanted && !srv->stop)
            if (pthread_cond_timedwait(&srv->wake, &srv->wake_mu, &until) == ETIMEDOUT)
                break;
        bool asked = srv->snapshot_wanted;
        srv->snapshot_wanted = false;
        pthread_mutex_unlock(&srv->wake_mu);
        if (srv->stop || (!asked && !srv->snapshot_s))
            continue;
        char names[1100];
        if (!sl_live_hub_watched(srv->hub, names, sizeof names))
            continue;
        char err[1024];
        size_t len;
        char *json = sl_live_snapshot_json(srv, names, true, &len, err, sizeof err);
        if (json) {
            sl_live_hub_send_json(srv->hub, LIVE_F_SNAPSHOT, json, len);
            free(json);
        } else {
            char msg[1200];
            size_t j = 0;
            j += (size_t)snprintf(msg, sizeof msg, "{\"snapshot_error\":");
            FILE *f = fmemopen(msg + j, sizeof msg - j, "w");
            if (f) {
                sl_cli_json_string(f, err);
                fputc('}', f);
                long used = ftell(f);
                fclose(f);
                sl_live_hub_send_json(srv->hub, LIVE_F_ERROR, msg, j + (size_t)used);
            }
        }
    }
    return NULL;
}

#if SLABLAB_SITE_EMBEDDED
/* The built lab packed at build time (scripts/build-release.mjs; live_site.h), from site_pack.S. */
extern const unsigned char sl_site_pack[], sl_site_pack_end[];
#else
/* The dist/ of the checkout this binary was built in (wasm-core/build/<dir>/slablab), else "dist". */
static void default_site(char *out, size_t len)
{
    char exe[4000];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            if ((size_t)snprintf(out, len, "%.3800s/../../../dist", exe) < len && access(out, R_OK) == 0)
                return;
        }
    }
    snprintf(out, len, "dist");
}
#endif

/* Loads the site: DIR when --site named one, else the one inside this binary (a release build), else
 * the checkout's dist/; dir is set to what was read, for the banner. Returns sl_site_load's answer. */
static int load_site(sl_site *site, char *dir, size_t dirlen, char *err, size_t errlen)
{
    const size_t max_bytes = (size_t)512 << 20;
    if (!dir[0]) {
#if SLABLAB_SITE_EMBEDDED
        snprintf(dir, dirlen, "inside this binary");
        return sl_site_load_pack(site, sl_site_pack, (size_t)(sl_site_pack_end - sl_site_pack), max_bytes, err, errlen);
#else
        default_site(dir, dirlen);
#endif
    }
    return sl_site_load(site, dir, max_bytes, err, errlen);
}
#endif /* SLABLAB_HAVE_MHD */

static bool is_loopback(const char *addr) { return !strncmp(addr, "127.", 4) || !strcmp(addr, "::1"); }

static int run_serve(int argc, char **argv)
{
    const sl_cli_command *cmd = &sl_cli_cmd_serve;
    static sl_live_server srv;
    memset(&srv, 0, sizeof srv);
    snprintf(srv.bind, sizeof srv.bind, "127.0.0.1");
    srv.port = DEFAULT_PORT;
    srv.ring_mb = 8;
    srv.snapshot_s = 5;
    srv.max_slabs = 4096;
    unsigned queue_mb = 16;
    unsigned long exit_after = 0;
    bool understood = false, bind_given = false, kernel_option = false, rate_given = false;
    const char *from = NULL;
    char site_dir[PATH_MAX + 32] = "";
    char *filter_buf = NULL;
    int rc = SL_CLI_USAGE;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        unsigned long v;
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--port")) {
            if (!val || !sl_cli_parse_ulong(val, 0, 65535, &v)) {
                sl_cli_usage_error(cmd, "--port needs a port number from 0 to 65535 (got '%s')", val ? val : "nothing");
                goto done;
            }
            srv.port = (unsigned)v;
            i++;
        } else if (!strcmp(a, "--bind")) {
            if (!val || !*val || strlen(val) >= sizeof srv.bind) {
                sl_cli_usage_error(cmd, "--bind needs an IP address");
                goto done;
            }
            snprintf(srv.bind, sizeof srv.bind, "%s", !strcmp(val, "localhost") ? "127.0.0.1" : val);
            bind_given = true;
            i++;
        } else if (!strcmp(a, "--i-understand-this-exposes-kernel-addresses")) {
            understood = true;
        } else if (!strcmp(a, "--caches")) {
            if (!val || !*val || filter_buf) {
                sl_cli_usage_error(cmd, "--caches needs cache names, once");
                goto done;
            }
            filter_buf = strdup(val);
            if (!filter_buf)
                goto done;
            for (char *save = NULL, *t = strtok_r(filter_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (srv.nfilter == LIVE_MAX_FILTER || strlen(t) >= LIVE_NAME_LEN) {
                    sl_cli_usage_error(cmd, "--caches takes at most %d names of under %d characters", LIVE_MAX_FILTER,
                                       LIVE_NAME_LEN);
                    goto done;
                }
                srv.filter[srv.nfilter++] = t;
            }
            kernel_option = true;
            i++;
        } else if (!strcmp(a, "--site")) {
            if (!val || !*val) {
                sl_cli_usage_error(cmd, "--site needs a directory");
                goto done;
            }
            snprintf(site_dir, sizeof site_dir, "%s", val);
            i++;
        } else if (!strcmp(a, "--snapshot-interval")) {
            if (!val || !sl_cli_parse_ulong(val, 0, 3600, &v)) {
                sl_cli_usage_error(cmd, "--snapshot-interval needs seconds from 0 to 3600");
                goto done;
            }
            srv.snapshot_s = (unsigned)v;
            kernel_option = true;
            i++;
        } else if (!strcmp(a, "--ring-mb")) {
            if (!val || !sl_cli_parse_ulong(val, 1, 1024, &v) || (v & (v - 1))) {
                sl_cli_usage_error(cmd, "--ring-mb needs a power of two from 1 to 1024");
                goto done;
            }
            srv.ring_mb = (unsigned)v;
            kernel_option = true;
            i++;
        } else if (!strcmp(a, "--queue-mb")) {
            if (!val || !sl_cli_parse_ulong(val, 1, 1024, &v)) {
                sl_cli_usage_error(cmd, "--queue-mb needs MiB from 1 to 1024");
                goto done;
            }
            queue_mb = (unsigned)v;
            i++;
        } else if (!strcmp(a, "--exit-after")) {
            if (!val || !sl_cli_parse_ulong(val, 1, 86400 * 365, &exit_after)) {
                sl_cli_usage_error(cmd, "--exit-after needs seconds (at least 1)");
                goto done;
            }
            i++;
        } else if (!strcmp(a, "--from")) {
            if (!val || !*val || from) {
                sl_cli_usage_error(cmd, "--from needs a capture file (slablab capture -o FILE), once");
                goto done;
            }
            from = val;
            i++;
        } else if (!strcmp(a, "--rate")) {
            char *end = NULL;
            double r = val ? strtod(val, &end) : 0;
            if (val && !strcmp(val, "max")) {
                srv.playback.pace = SL_LIVE_PACE_MAX;
            } else if (!val || end == val || *end || !(r >= 1 && r <= 1e9)) {
                sl_cli_usage_error(cmd, "--rate needs events a second from 1 to 1e9, or max (got '%s')",
                                   val ? val : "nothing");
                goto done;
            } else {
                srv.playback.pace = SL_LIVE_PACE_RATE;
                srv.playback.rate = r;
            }
            rate_given = true;
            i++;
        } else if (!strcmp(a, "--loop")) {
            srv.playback.loop = true;
        } else {
            sl_cli_usage_error(cmd, "unknown argument '%s'", a);
            goto done;
        }
    }
    if (!from && (rate_given || srv.playback.loop)) {
        sl_cli_usage_error(cmd, "--rate and --loop play a recording: they need --from CAPTURE");
        goto done;
    }
    if (from && kernel_option) {
        sl_cli_usage_error(cmd, "--caches, --ring-mb and --snapshot-interval read the kernel: not with --from "
                                "(a recording has its own events and snapshots)");
        goto done;
    }
    if (from)
        srv.snapshot_s = 0;
    srv.bind_loopback = is_loopback(srv.bind);
    if (bind_given && !srv.bind_loopback && !understood) {
        sl_cli_usage_error(cmd,
                           "refusing to listen on %s: the live stream shows kernel addresses to anyone who has the "
                           "token; add --i-understand-this-exposes-kernel-addresses to do it anyway",
                           srv.bind);
        goto done;
    }
    rc = 1;
#if !SLABLAB_HAVE_MHD
    (void)queue_mb, (void)exit_after, (void)site_dir;
    fprintf(stderr, "slablab serve: this slablab was built without libmicrohttpd: install libmicrohttpd-dev "
                    "(apt-get install libmicrohttpd-dev), then rebuild (node scripts/setup.mjs bench)\n");
    goto done;
#else
    char err[1024];
    sl_live_capture_info rec = {0};
    if (from) {
        if (sl_live_capture_load(&srv.recording, from, err, sizeof err)) {
            fprintf(stderr, "slablab serve: %s\n", err);
            goto done;
        }
        sl_live_capture_info_get(srv.recording, &rec);
    }
    int site_rc = load_site(&srv.site, site_dir, sizeof site_dir, err, sizeof err);
    if (site_rc) {
        fprintf(stderr, "slablab serve: %s\n", err);
        goto done;
    }
    /* A token kept across restarts (the page then reconnects by itself): from the environment,
     * which only root reads for a root process, never from the command line, which ps shows. */
    const char *kept = getenv("SLABLAB_SERVE_TOKEN");
    bool keep = kept && *kept;
    if (keep) {
        size_t n = strlen(kept);
        bool hex = n == LIVE_TOKEN_HEX;
        for (size_t i = 0; hex && i < n; i++)
            hex = (kept[i] >= '0' && kept[i] <= '9') || (kept[i] >= 'a' && kept[i] <= 'f');
        if (!hex) {
            fprintf(stderr, "slablab serve: SLABLAB_SERVE_TOKEN must be %d lower-case hex digits\n", LIVE_TOKEN_HEX);
            sl_site_free(&srv.site);
            goto done;
        }
        memcpy(srv.token, kept, LIVE_TOKEN_HEX + 1);
    }
    unsigned char rnd[LIVE_TOKEN_HEX / 2];
    if (!keep && getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        fprintf(stderr, "slablab serve: no random numbers for the token (%s)\n", strerror(errno));
        sl_site_free(&srv.site);
        goto done;
    }
    for (size_t i = 0; !keep && i < sizeof rnd; i++)
        snprintf(srv.token + 2 * i, 3, "%02x", rnd[i]);

    struct utsname u;
    uname(&u);
    char hello[900];
    if (from) {
        /* The recorded machine's, and what the page says of the recording (docs/live.md, HELLO). */
        char pace[48];
        if (srv.playback.pace == SL_LIVE_PACE_RATE)
            snprintf(pace, sizeof pace, "%.0f", srv.playback.rate);
        else
            snprintf(pace, sizeof pace, "\"%s\"", srv.playback.pace == SL_LIVE_PACE_MAX ? "max" : "recorded");
        const char *base = strrchr(from, '/') ? strrchr(from, '/') + 1 : from;
        char name[160];
        FILE *f = fmemopen(name, sizeof name, "w");
        if (f) {
            char cut[100];
            snprintf(cut, sizeof cut, "%s", base);
            sl_cli_json_string(f, cut);
            fputc('\0', f);
            fclose(f);
        } else {
            snprintf(name, sizeof name, "\"\"");
        }
        snprintf(hello, sizeof hello,
                 "\"release\":\"%.100s\",\"nr_cpus\":%u,\"snapshot_interval\":0,\"filtered\":false,"
                 "\"source\":\"recording\",\"recording\":{\"file\":%s,\"events\":%" PRIu64 ",\"snapshots\":%u,"
                 "\"span_s\":%.3f,\"lost\":%" PRIu64 ",\"pace\":%s,\"loop\":%s}",
                 rec.release, rec.cpus, name, rec.events, rec.snapshots, rec.span_s, rec.lost, pace,
                 srv.playback.loop ? "true" : "false");
    } else {
        snprintf(
            hello, sizeof hello,
            "\"release\":\"%.100s\",\"nr_cpus\":%ld,\"snapshot_interval\":%u,\"filtered\":%s,\"source\":\"kernel\"",
            u.release, sysconf(_SC_NPROCESSORS_CONF), srv.snapshot_s, srv.nfilter ? "true" : "false");
    }
    srv.hub = calloc(1, sizeof *srv.hub);
    if (!srv.hub || sl_live_hub_init(srv.hub, (size_t)queue_mb << 20, hello)) {
        fprintf(stderr, "slablab serve: out of memory\n");
        free(srv.hub);
        sl_site_free(&srv.site);
        goto done;
    }
    if (srv.recording) { /* the recording's call-site names, not this machine's /proc/kallsyms */
        sl_live_capture_take_symbols(srv.recording, &srv.hub->ksyms);
        srv.hub->snapshots_droppable = true;
    }
    pthread_mutex_init(&srv.snap_mu, NULL);
    pthread_mutex_init(&srv.wake_mu, NULL);
    pthread_cond_init(&srv.wake, NULL);

    /* Signals are taken by sigtimedwait below, in no other thread. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct MHD_Daemon *d = sl_live_http_start(&srv, err, sizeof err);
    pthread_t ev, sn;
    bool threads = false;
    if (!d) {
        fprintf(stderr, "slablab serve: %s\n", err);
    } else if (pthread_create(&ev, NULL, event_thread, &srv) == 0) {
        if (srv.recording || pthread_create(&sn, NULL, snapshot_thread, &srv) == 0) {
            threads = true;
        } else {
            srv.stop = true;
            pthread_join(ev, NULL);
        }
    }
    if (threads) {
        const char *host = srv.bind_loopback ? "127.0.0.1" : srv.bind;
        if (!srv.bind_loopback)
            fprintf(stderr,
                    "slablab serve: WARNING: listening on %s: anyone who can reach it and has the token sees "
                    "kernel addresses (and the URL below carries the token)\n",
                    srv.bind);
        if (srv.recording)
            printf("slablab serve: the lab with a recording of Linux %s (%s: %" PRIu64
                   " events over %.1f s, %u snapshots) played %s%s, %zu files (%zu KiB) from %s; open\n",
                   rec.release, from, rec.events, rec.span_s, rec.snapshots,
                   srv.playback.pace == SL_LIVE_PACE_MAX    ? "as fast as it goes"
                   : srv.playback.pace == SL_LIVE_PACE_RATE ? "at a set rate"
                                                            : "at its recorded pace",
                   srv.playback.loop ? " in a loop" : "", srv.site.n, srv.site.bytes >> 10, site_dir);
        else
            printf("slablab serve: the lab with Linux %s live, %zu files (%zu KiB) from %s; open\n", u.release,
                   srv.site.n, srv.site.bytes >> 10, site_dir);
        printf("  http://%s%s%s:%u/?mode=live&token=%s\n", strchr(host, ':') ? "[" : "", host,
               strchr(host, ':') ? "]" : "", srv.port, srv.token);
        fflush(stdout);
        uint64_t end = exit_after ? now_ms() + exit_after * 1000u : 0;
        for (;;) {
            struct timespec slice = {0, 200 * 1000000L};
            int sig = sigtimedwait(&sigs, NULL, &slice);
            if (sig == SIGINT || sig == SIGTERM) {
                fprintf(stderr, "slablab serve: %s: stopping\n", sig == SIGINT ? "interrupted" : "terminated");
                break;
            }
            if (end && now_ms() >= end) {
                fprintf(stderr, "slablab serve: --exit-after reached: stopping\n");
                break;
            }
        }
        rc = 0;
        srv.stop = true;
        sl_live_hub_stop(srv.hub);
        sl_live_wake_snapshots(&srv);
        if (!srv.recording)
            pthread_join(sn, NULL);
        pthread_join(ev, NULL); /* detaches the event program */
    }
    if (d)
        MHD_stop_daemon(d);
    sl_live_hub_destroy(srv.hub);
    free(srv.hub);
    sl_site_free(&srv.site);
    pthread_cond_destroy(&srv.wake);
    pthread_mutex_destroy(&srv.wake_mu);
    pthread_mutex_destroy(&srv.snap_mu);
#endif
done:
    sl_live_capture_free(srv.recording);
    free(filter_buf);
    return rc;
}
