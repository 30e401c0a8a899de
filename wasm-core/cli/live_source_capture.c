/*
 * live_source_capture.c - `slablab serve --from CAPTURE`: a recording played
 * back as a live stream (live_source.h).
 *
 * Loading.  The capture is read once, at start, by the replay's reader
 * (src/replay: gunzip, ustar, the ftrace parser and the pairing; its SLUB
 * models are not run, as for `replay --check`).  Each event the replay
 * applies becomes a 32-byte cap_event in one array; its input line gives
 * the tracepoint (kmem_cache_alloc or kmalloc, kmem_cache_free or kfree:
 * the replay folds them together) and the call site's recorded name.  The
 * archive's snapshots are kept with the number of events before them (the
 * start snapshot 0, the end one all); the capture's sysfs and
 * /proc/slabinfo (sl_slabinfo_load) give the caches' geometry and the
 * SLABINFO frame.  A capture has no cache or call-site addresses, so each
 * gets a made-up one: cache i is address i, call sites are their
 * function's made-up address plus the recorded offset (see
 * sl_live_capture_take_symbols).
 *
 * Playing.  A playback (one per sl_live_source_open_capture: the event
 * thread opens one when a page comes and closes it when the last leaves)
 * walks the array in passes.  At a pass's start it hands over the SLABINFO
 * frame, then, before event k, every snapshot recorded before event k, each
 * stamped with the time it is handed over (the first of each pass marked
 * "restart": the state jumps back to the recording's start); events are due at the pass's
 * start plus their recorded offset (SL_LIVE_PACE_RECORDED), when the token
 * bucket has a token (SL_LIVE_PACE_RATE: `rate` a second, at most 20 ms of
 * them at once), or at once (SL_LIVE_PACE_MAX, the clock read every 256
 * events); each carries the time it was due.  A record for a cache goes out
 * before its first event in each playback (the hub names it once).
 *
 * Threads: a capture is read-only once loaded; a playback belongs to the
 * event thread.
 */
#include "cli.h"
#include "input.h"
#include "live_source.h"
#include "live_wire.h"

#include "../src/replay/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One recorded event, as the playback hands it out. */
typedef struct cap_event {
    uint64_t ts;    /* recorded, ns */
    uint64_t obj;   /* the object (percpu: the percpu pointer) */
    uint32_t site;  /* made-up call-site address less CAP_SITE_BASE (0: none); see site_of_line */
    uint32_t bytes; /* kmalloc and percpu allocations: bytes_alloc; else 0, as the kernel source sends */
    uint16_t cache; /* 1-based index into caches, 0: none */
    uint16_t cpu;
    uint8_t kind; /* enum live_kind */
    uint8_t pad[3];
} cap_event;
_Static_assert(sizeof(cap_event) == 32, "cap_event is 32 bytes");

typedef struct cap_snapshot {
    uint64_t before; /* events before it */
    char *json;      /* slablab-snapshot/1 */
    size_t len;
} cap_snapshot;

enum { CAP_MAX_SNAPSHOTS = 2, CAP_MAX_CACHES = 4096, CAP_MAX_FUNCS = 65535 };
/* Made-up call-site addresses: function i at CAP_SITE_BASE + (i + 1) * 64 KiB, its offsets below the next
 * (an offset past 64 KiB, which no kernel function reaches in practice, is clamped): 65,535 functions in 32 bits. */
#define CAP_SITE_BASE 0xffffffff00000000ull
#define CAP_SITE_SPAN (1u << 16)

struct sl_live_capture {
    cap_event *ev;
    size_t n, cap;
    struct live_cache_rec caches[CAP_MAX_CACHES]; /* [i - 1]: cache i */
    unsigned ncaches;
    uint16_t *cache_of_replay; /* the replay's cache index -> ours (0: not met yet) */
    unsigned ncache_of_replay;
    char **funcs; /* call-site function names, index i -> address CAP_SITE_BASE + (i + 1) MiB */
    unsigned nfuncs, cap_funcs;
    uint32_t *func_hash; /* open addressing, 2 * CAP_MAX_FUNCS slots of index + 1 */
    cap_snapshot snaps[CAP_MAX_SNAPSHOTS];
    unsigned nsnaps;
    char *slabinfo; /* the SLABINFO frame's JSON but for its at_ns: "\"caches\":[...]}" */
    sl_slabinfo_set sysfs;
    bool have_sysfs;
    char release[128];
    unsigned cpus;
    uint64_t lost;
    /* While loading. */
    sl_replay *r;
    sl_strbuf member;
    char member_name[64];
    bool member_big, too_many, no_memory;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- Loading ---- */

static uint32_t hash_name(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* The index + 1 of function name s[0..n), adding it; 0 when the table is full or out of memory. */
static uint32_t func_index(sl_live_capture *cap, const char *s, size_t n)
{
    const size_t slots = 2 * CAP_MAX_FUNCS;
    for (size_t i = hash_name(s, n) % slots;; i = (i + 1) % slots) {
        uint32_t k = cap->func_hash[i];
        if (k && !strncmp(cap->funcs[k - 1], s, n) && cap->funcs[k - 1][n] == '\0')
            return k;
        if (k)
            continue;
        if (cap->nfuncs == CAP_MAX_FUNCS)
            return 0;
        if (cap->nfuncs == cap->cap_funcs) {
            unsigned ncap = cap->cap_funcs ? cap->cap_funcs * 2 : 256;
            char **grown = realloc(cap->funcs, ncap * sizeof *grown);
            if (!grown)
                return 0;
            cap->funcs = grown;
            cap->cap_funcs = ncap;
        }
        char *copy = strndup(s, n);
        if (!copy)
            return 0;
        cap->funcs[cap->nfuncs++] = copy;
        cap->func_hash[i] = cap->nfuncs;
        return cap->nfuncs;
    }
}

/*
 * The made-up address of the call site in line ("call_site=func+0x3c/0x110",
 * or a bare address when the kernel had no symbol): its function's address
 * plus the offset.  Returns its low 32 bits (the high ones are
 * CAP_SITE_BASE's), 0 when the line has no call site.
 */
static uint32_t site_of_line(sl_live_capture *cap, const char *line, size_t len)
{
    const char *end = line + len;
    const char *p = NULL;
    for (const char *q = line; q + 10 <= end; q++)
        if (!memcmp(q, "call_site=", 10)) {
            p = q + 10;
            break;
        }
    if (!p)
        return 0;
    const char *stop = p;
    while (stop < end && *stop != ' ' && *stop != '\t' && *stop != '\n')
        stop++;
    const char *slash = memchr(p, '/', (size_t)(stop - p));
    if (slash)
        stop = slash;
    const char *plus = NULL;
    for (const char *q = stop; q > p; q--)
        if (q[-1] == '+') {
            plus = q - 1;
            break;
        }
    uint64_t off = 0;
    if (plus && stop - plus > 3 && plus[1] == '0' && plus[2] == 'x') {
        char num[20];
        size_t k = (size_t)(stop - plus - 3);
        if (k < sizeof num) {
            memcpy(num, plus + 3, k);
            num[k] = '\0';
            off = strtoull(num, NULL, 16);
        }
    } else {
        plus = stop;
    }
    if (plus == p)
        return 0;
    uint32_t f = func_index(cap, p, (size_t)(plus - p));
    if (!f)
        return 0;
    if (off >= CAP_SITE_SPAN)
        off = CAP_SITE_SPAN - 1;
    return (uint32_t)((uint64_t)f * CAP_SITE_SPAN + off);
}

/* Whether the tracepoint named before the line's fields is a cache's own (kmem_cache_alloc/free[_node]). */
static bool line_is_cache_event(const char *line, size_t len)
{
    const char *end = line + len;
    for (const char *q = line; q + 11 <= end; q++) {
        if (!memcmp(q, "call_site=", 10))
            break;
        if (!memcmp(q, "kmem_cache_", 11))
            return true;
    }
    return false;
}

/* Our index (1-based) of the replay's cache c, naming it on first sight; 0 when none or the table is full. */
static uint16_t cache_of(sl_live_capture *cap, unsigned c)
{
    if (c == 0xffff)
        return 0;
    if (c >= cap->ncache_of_replay) {
        unsigned n = c + 64;
        uint16_t *grown = realloc(cap->cache_of_replay, n * sizeof *grown);
        if (!grown) {
            cap->no_memory = true;
            return 0;
        }
        memset(grown + cap->ncache_of_replay, 0, (n - cap->ncache_of_replay) * sizeof *grown);
        cap->cache_of_replay = grown;
        cap->ncache_of_replay = n;
    }
    if (cap->cache_of_replay[c])
        return cap->cache_of_replay[c];
    sl_replay_cache_info info;
    if (cap->ncaches == CAP_MAX_CACHES || sl_replay_cache_info_get(cap->r, c, 0, &info) != SL_OK || !info.name)
        return 0;
    struct live_cache_rec *rec = &cap->caches[cap->ncaches];
    memset(rec, 0, sizeof *rec);
    rec->kind = LIVE_CACHE;
    rec->cache = cap->ncaches + 1;
    snprintf(rec->name, sizeof rec->name, "%s", info.name);
    if (cap->have_sysfs) {
        const char *name = info.name;
        for (unsigned i = 0; i < cap->sysfs.naliases; i++)
            if (!strcmp(cap->sysfs.aliases[i].name, name))
                name = cap->sysfs.aliases[i].target;
        for (unsigned i = 0; i < cap->sysfs.ncaches; i++) {
            const sl_slabinfo_cache *s = &cap->sysfs.caches[i];
            if (strcmp(s->name, name))
                continue;
            rec->object_size = s->object_size;
            rec->size = s->slab_size;
            rec->oo = s->order << 16 | (s->objs_per_slab & 0xffff);
            break;
        }
    }
    cap->ncaches++;
    cap->cache_of_replay[c] = (uint16_t)cap->ncaches;
    return (uint16_t)cap->ncaches;
}

static void on_op(void *user, const sl_replay_op *op)
{
    sl_live_capture *cap = user;
    uint8_t kind;
    switch (op->kind) {
    case SL_REPLAY_OP_ALLOC:
        kind = LIVE_ALLOC;
        break;
    case SL_REPLAY_OP_FREE:
    case SL_REPLAY_OP_FREE_UNKNOWN:
        kind = LIVE_FREE;
        break;
    case SL_REPLAY_OP_PCPU_ALLOC:
        kind = LIVE_PCPU_ALLOC;
        break;
    case SL_REPLAY_OP_PCPU_FREE:
    case SL_REPLAY_OP_PCPU_FREE_UNKNOWN:
        kind = LIVE_PCPU_FREE;
        break;
    default: /* percpu chunks: the live stream has no such event */
        return;
    }
    if (cap->n == SL_LIVE_CAPTURE_MAX_EVENTS) {
        cap->too_many = true;
        sl_replay_cancel(cap->r);
        return;
    }
    if (cap->n == cap->cap) {
        size_t ncap = cap->cap ? cap->cap * 2 : 65536;
        cap_event *grown = realloc(cap->ev, ncap * sizeof *grown);
        if (!grown) {
            cap->no_memory = true;
            sl_replay_cancel(cap->r);
            return;
        }
        cap->ev = grown;
        cap->cap = ncap;
    }
    const char *line;
    size_t len;
    sl_replay_current(cap->r, &line, &len);
    bool pcpu = kind == LIVE_PCPU_ALLOC || kind == LIVE_PCPU_FREE;
    if (!pcpu && !line_is_cache_event(line, len))
        kind = kind == LIVE_ALLOC ? LIVE_KMALLOC : LIVE_KFREE;
    cap_event *e = &cap->ev[cap->n++];
    memset(e, 0, sizeof *e);
    e->ts = op->ts_ns;
    e->obj = op->ptr;
    e->cpu = op->cpu;
    e->kind = kind;
    e->cache = pcpu ? 0 : cache_of(cap, op->cache);
    e->bytes = kind == LIVE_KMALLOC || kind == LIVE_PCPU_ALLOC ? op->bytes : 0;
    e->site = site_of_line(cap, line, len);
}

static void on_member(void *user, const char *name, const void *data, size_t len, bool end)
{
    sl_live_capture *cap = user;
    bool start = !strcmp(name, "snapshot-start.json"), last = !strcmp(name, "snapshot-end.json");
    if (!start && !last)
        return;
    if (strcmp(cap->member_name, name)) { /* a new member */
        snprintf(cap->member_name, sizeof cap->member_name, "%s", name);
        sl_strbuf_free(&cap->member);
        cap->member_big = false;
    }
    if (!end) {
        /* The page refuses frames past 64 MiB (web/live/wire.ts MAX_FRAME). */
        if (cap->member.len + len > (64u << 20) - 4096)
            cap->member_big = true;
        else if (!cap->member_big)
            sl_strbuf_append(&cap->member, data, len);
        return;
    }
    const char *text = cap->member.data;
    if (cap->member_big || cap->member.failed || !text || !strstr(text, "\"slablab-snapshot/1\"") ||
        cap->nsnaps == CAP_MAX_SNAPSHOTS) {
        fprintf(stderr, "slablab serve: %s of the capture is %s: served without it\n", name,
                cap->member_big ? "over 64 MiB" : "not a slablab-snapshot/1");
    } else {
        cap_snapshot *s = &cap->snaps[cap->nsnaps++];
        s->before = cap->n;
        s->len = cap->member.len;
        s->json = cap->member.data; /* taken over */
        memset(&cap->member, 0, sizeof cap->member);
        /* The recorded kernel's full release, for the page's banner. */
        const char *rel = strstr(s->json, "\"release\":\"");
        if (rel && !cap->release[0]) {
            rel += 11;
            size_t k = strcspn(rel, "\"\\");
            if (k < sizeof cap->release)
                snprintf(cap->release, sizeof cap->release, "%.*s", (int)k, rel);
        }
    }
    sl_strbuf_free(&cap->member);
    cap->member_name[0] = '\0';
}

/* The capture's /proc/slabinfo counts (from its sysfs, else its slabinfo) as the SLABINFO frame's caches. */
static char *slabinfo_json(const sl_slabinfo_set *set)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fputs("\"caches\":[", f);
    for (unsigned i = 0; i < set->ncaches; i++) {
        const sl_slabinfo_cache *c = &set->caches[i];
        fprintf(f, "%s[", i ? "," : "");
        sl_cli_json_string(f, c->name);
        uint64_t total = c->slabs * c->objs_per_slab;
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%u,%u,%u,%" PRIu64 "]", c->objects,
                total > c->objects ? total : c->objects, c->slab_size, c->objs_per_slab,
                1u << (c->order < 16 ? c->order : 0), c->slabs);
    }
    fputs("]}", f);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

void sl_live_capture_free(sl_live_capture *cap)
{
    if (!cap)
        return;
    sl_replay_destroy(cap->r);
    free(cap->ev);
    free(cap->cache_of_replay);
    for (unsigned i = 0; i < cap->nfuncs; i++)
        free(cap->funcs[i]);
    free(cap->funcs);
    free(cap->func_hash);
    for (unsigned i = 0; i < cap->nsnaps; i++)
        free(cap->snaps[i].json);
    free(cap->slabinfo);
    if (cap->have_sysfs)
        sl_slabinfo_free(&cap->sysfs);
    sl_strbuf_free(&cap->member);
    free(cap);
}

int sl_live_capture_load(sl_live_capture **out, const char *path, char *err, size_t errlen)
{
    *out = NULL;
    char why[512];
    FILE *in = sl_cli_open_input(path, why, sizeof why);
    if (!in) {
        snprintf(err, errlen, "--from: %s", why);
        return 1;
    }
    sl_live_capture *cap = calloc(1, sizeof *cap);
    if (cap)
        cap->func_hash = calloc(2 * CAP_MAX_FUNCS, sizeof *cap->func_hash);
    if (!cap || !cap->func_hash) {
        sl_cli_close_input(in);
        sl_live_capture_free(cap);
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    /* Geometry and counts first (a plain trace has neither: that is not an error). */
    char ignored[256];
    cap->have_sysfs = strcmp(path, "-") && sl_slabinfo_load(path, &cap->sysfs, ignored, sizeof ignored) == SL_OK;
    /* The replay parses and pairs; its models are not needed (a cache name no cache has, as replay --check). */
    sl_replay_config cfg = {.cache = "\x01 serve --from", .on_op = on_op, .on_member = on_member, .user = cap};
    int rc = sl_replay_create(&cfg, &cap->r);
    if (rc != SL_OK) {
        sl_cli_close_input(in);
        sl_live_capture_free(cap);
        snprintf(err, errlen, "%s", sl_strerror(rc));
        return 1;
    }
    static uint8_t buf[1 << 20];
    size_t n;
    while (rc == SL_OK && (n = fread(buf, 1, sizeof buf, in)) > 0)
        rc = sl_replay_feed(cap->r, buf, n, NULL);
    int read_errno = ferror(in) ? errno : 0;
    sl_cli_close_input(in);
    if (rc == SL_OK && !read_errno)
        rc = sl_replay_finish(cap->r);
    const char *refused = sl_replay_error(cap->r);
    int status = 1;
    if (read_errno)
        snprintf(err, errlen, "--from: reading %s failed: %s", path, strerror(read_errno));
    else if (cap->too_many)
        snprintf(err, errlen,
                 "--from: %s has more than %u events, which is more than serve keeps in memory: cut it "
                 "(scripts/slabcap-cut.mjs) or record a shorter capture",
                 path, SL_LIVE_CAPTURE_MAX_EVENTS);
    else if (cap->no_memory)
        snprintf(err, errlen, "--from: out of memory reading %s", path);
    else if (refused)
        snprintf(err, errlen, "--from: %s is not a capture serve can play: %s", path, refused);
    else if (cap->n == 0)
        snprintf(err, errlen,
                 "--from: %s has no slab or percpu allocation or free to play (record one with `sudo slablab "
                 "capture -o FILE -- COMMAND`)",
                 path);
    else
        status = 0;
    if (status) {
        sl_live_capture_free(cap);
        return 1;
    }
    sl_replay_summary sum;
    sl_replay_summary_get(cap->r, &sum);
    cap->cpus = sum.model_cpus;
    cap->lost = sum.lost_events;
    if (!cap->release[0])
        snprintf(cap->release, sizeof cap->release, "%s", sum.kernel[0][0] ? sum.kernel[0] : "unknown");
    if (cap->have_sysfs)
        cap->slabinfo = slabinfo_json(&cap->sysfs);
    sl_replay_destroy(cap->r);
    cap->r = NULL;
    *out = cap;
    return 0;
}

void sl_live_capture_info_get(const sl_live_capture *cap, sl_live_capture_info *info)
{
    memset(info, 0, sizeof *info);
    info->release = cap->release;
    info->cpus = cap->cpus;
    info->events = cap->n;
    info->lost = cap->lost;
    info->snapshots = cap->nsnaps;
    info->caches = cap->ncaches;
    info->sites = cap->nfuncs;
    info->span_s = cap->n ? (double)(cap->ev[cap->n - 1].ts - cap->ev[0].ts) / 1e9 : 0;
}

void sl_live_capture_take_symbols(sl_live_capture *cap, sl_ksyms *k)
{
    sl_ksyms_free(k);
    k->syms = calloc(cap->nfuncs ? cap->nfuncs : 1, sizeof *k->syms);
    if (!k->syms)
        return;
    for (unsigned i = 0; i < cap->nfuncs; i++) {
        k->syms[i].addr = CAP_SITE_BASE + (uint64_t)(i + 1) * CAP_SITE_SPAN;
        k->syms[i].name = cap->funcs[i];
        cap->funcs[i] = NULL;
    }
    k->n = cap->nfuncs;
}

/* ---- Playing ---- */

typedef struct cap_source {
    sl_live_source base;
    const sl_live_capture *cap;
    sl_live_playback pb;
    sl_live_record_fn fn;
    sl_live_json_fn json_fn;
    void *ctx;
    size_t pos;          /* next event */
    unsigned next_snap;  /* next snapshot of this pass */
    bool pass_started;   /* this pass's SLABINFO went out */
    bool ended;          /* the last pass is over (no --loop) */
    uint64_t pass_start; /* CLOCK_MONOTONIC ns: the pass's first event is due then (recorded pace) */
    uint64_t last_ts;    /* the last event's stamp: stamps never go back */
    double tokens;       /* SL_LIVE_PACE_RATE */
    uint64_t refilled;   /* ... as of this time */
    bool named[CAP_MAX_CACHES];
} cap_source;

static void json_frame(cap_source *s, int type, const char *prefix, uint64_t t, const char *mid, const char *body,
                       size_t body_len, const char *suffix)
{
    char head[96];
    int h = snprintf(head, sizeof head, "%s%" PRIu64 "%s", prefix, t, mid);
    size_t suf = strlen(suffix);
    char *json = malloc((size_t)h + body_len + suf);
    if (!json)
        return;
    memcpy(json, head, (size_t)h);
    memcpy(json + h, body, body_len);
    memcpy(json + (size_t)h + body_len, suffix, suf);
    s->json_fn(s->ctx, type, json, (size_t)h + body_len + suf);
    free(json);
}

/* A stamp after every event handed out so far, at least `now`. */
static uint64_t stamp_after(cap_source *s, uint64_t now)
{
    uint64_t t = s->last_ts ? s->last_ts + 1000 : now; /* 1 µs: the wire's resolution */
    return t > now ? t : now;
}

/* Hands over what comes before event s->pos: a pass's SLABINFO, the snapshots recorded there. */
static void frames_before(cap_source *s, uint64_t now)
{
    const sl_live_capture *cap = s->cap;
    if (!s->pass_started) {
        s->pass_started = true;
        if (cap->slabinfo) {
            const char *body = cap->slabinfo;
            json_frame(s, LIVE_F_SLABINFO, "{\"at_ns\":", now, ",", body, strlen(body), "");
        }
    }
    while (s->next_snap < cap->nsnaps && cap->snaps[s->next_snap].before == s->pos) {
        const cap_snapshot *snap = &cap->snaps[s->next_snap++];
        uint64_t t = stamp_after(s, now);
        /* Each pass starts from the recorded state, whatever a page saw before (the pass before, an
         * earlier playback before it reconnected or picked a cache): its first snapshot is marked
         * "restart", so that a page seeds from it instead of comparing what it had with it. */
        bool restart = s->next_snap == 1;
        char mid[64];
        snprintf(mid, sizeof mid, ",%" PRIu64 "],%s\"snapshot\":", t, restart ? "\"restart\":true," : "");
        json_frame(s, LIVE_F_SNAPSHOT, "{\"taken_ns\":[", t, mid, snap->json, snap->len, "}");
        s->last_ts = t;
        /* The recorded pace goes on from the snapshot: the next event is due 1 µs after it. */
        if (s->pb.pace == SL_LIVE_PACE_RECORDED && s->pos < cap->n) {
            uint64_t ts = cap->ev[s->pos].ts, t0 = cap->ev[0].ts;
            s->pass_start = t + 1000 - (ts > t0 ? ts - t0 : 0);
        }
    }
}

/* Hands event s->pos to the callback, stamped t; names its cache first in this playback. */
static void emit(cap_source *s, uint64_t t)
{
    const sl_live_capture *cap = s->cap;
    const cap_event *e = &cap->ev[s->pos++];
    if (e->cache && !s->named[e->cache - 1]) {
        s->named[e->cache - 1] = true;
        struct live_cache_rec rec = cap->caches[e->cache - 1];
        s->fn(s->ctx, &rec, sizeof rec);
    }
    if (t < s->last_ts)
        t = s->last_ts;
    s->last_ts = t;
    struct live_event ev = {
        .kind = e->kind,
        .cpu = e->cpu,
        .bytes = e->bytes,
        .ts = t,
        .cache = e->cache,
        .obj = e->obj,
        .call_site = e->site ? CAP_SITE_BASE + e->site : 0,
    };
    s->fn(s->ctx, &ev, sizeof ev);
}

/* The time event s->pos is due at the recorded pace. */
static uint64_t due_recorded(const cap_source *s)
{
    const sl_live_capture *cap = s->cap;
    uint64_t ts = cap->ev[s->pos].ts, t0 = cap->ev[0].ts;
    return s->pass_start + (ts > t0 ? ts - t0 : 0);
}

static void sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static int cap_poll(sl_live_source *base, int timeout_ms)
{
    cap_source *s = (cap_source *)base;
    const sl_live_capture *cap = s->cap;
    uint64_t now = mono_ns(), deadline = now + (uint64_t)timeout_ms * 1000000u;
    int delivered = 0;
    for (;;) {
        if (s->ended) {
            sleep_until(deadline);
            return delivered;
        }
        frames_before(s, now);
        if (s->pos == cap->n) { /* the pass is over: its last snapshot went out above */
            if (!s->pb.loop) {
                s->ended = true;
                fprintf(stderr,
                        "slablab serve: the recording ended (%zu events); the page keeps its picture "
                        "(--loop plays it again)\n",
                        cap->n);
                continue;
            }
            s->pos = 0;
            s->next_snap = 0;
            s->pass_started = false;
            s->pass_start = stamp_after(s, now) + 1000;
            continue;
        }
        if (s->pb.pace == SL_LIVE_PACE_MAX) {
            for (int k = 0; k < 256 && s->pos < cap->n; k++) {
                if (s->next_snap < cap->nsnaps && cap->snaps[s->next_snap].before == s->pos)
                    break;
                emit(s, now);
                delivered++;
            }
            now = mono_ns();
            if (now >= deadline)
                return delivered;
            continue;
        }
        uint64_t due;
        if (s->pb.pace == SL_LIVE_PACE_RATE) {
            double burst = s->pb.rate / 50 > 1 ? s->pb.rate / 50 : 1;
            s->tokens += (double)(now - s->refilled) * s->pb.rate / 1e9;
            if (s->tokens > burst)
                s->tokens = burst;
            s->refilled = now;
            if (s->tokens >= 1) {
                s->tokens -= 1;
                emit(s, now);
                delivered++;
                if ((delivered & 255) == 0)
                    now = mono_ns();
                continue;
            }
            due = now + (uint64_t)((1 - s->tokens) * 1e9 / s->pb.rate) + 1;
        } else {
            due = due_recorded(s);
            if (due <= now) {
                emit(s, due);
                delivered++;
                if ((delivered & 255) == 0)
                    now = mono_ns();
                continue;
            }
        }
        if (due >= deadline) {
            sleep_until(deadline);
            return delivered;
        }
        sleep_until(due);
        now = mono_ns();
    }
}

static uint64_t cap_lost(sl_live_source *base) { return ((cap_source *)base)->cap->lost; }

static void cap_close(sl_live_source *base) { free(base); }

static const sl_live_source_ops cap_ops = {cap_poll, cap_lost, cap_close};

int sl_live_source_open_capture(sl_live_source **out, const sl_live_capture *cap, const sl_live_playback *pb,
                                sl_live_record_fn fn, sl_live_json_fn json_fn, void *ctx, char *err, size_t errlen)
{
    cap_source *s = calloc(1, sizeof *s);
    if (!s) {
        *out = NULL;
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    s->base.ops = &cap_ops;
    s->cap = cap;
    s->pb = *pb;
    s->fn = fn;
    s->json_fn = json_fn;
    s->ctx = ctx;
    s->pass_start = mono_ns();
    s->refilled = s->pass_start;
    *out = &s->base;
    return 0;
}
