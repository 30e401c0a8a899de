/*
 * test_live_count.c - the live stream's counting (src/replay/live_count.c)
 * on built records: per-second bins per cache over the window (old seconds
 * fall out, events older than the window are skipped), remote frees
 * against a plain two-generation reference over random events, percpu and
 * page-sized kmalloc counted apart, decayed call-site counts, names kept
 * across a server restart, caches idle for a window forgotten and every
 * table bounded over a long stream, and bad ids refused; the stream reader
 * on a sample stream cut at every byte (the same counts and frames handed
 * back) and on corrupt frames (a specific error, never a crash).
 */
#include "check.h"

#include "../src/replay/live_count.h"

#include <math.h>

enum { ALLOC = 1, FREE, KMALLOC, KFREE, PCPU_ALLOC, PCPU_FREE };

typedef struct ev {
    unsigned kind, cpu, cache, site;
    double t_s;
    uint32_t obj;
} ev;

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Counts n events as one batch whose clock starts at second base_s. */
static void add(sl_live_count *c, const ev *e, uint32_t n, int64_t base_s)
{
    unsigned char *r = calloc(n ? n : 1, SL_LIVE_RECORD);
    SL_REQUIRE(r);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char *p = r + i * SL_LIVE_RECORD;
        p[0] = (unsigned char)e[i].kind;
        p[1] = (unsigned char)e[i].cpu;
        p[2] = (unsigned char)e[i].cache;
        p[3] = (unsigned char)(e[i].cache >> 8);
        put32(p + 4, e[i].site);
        put32(p + 8, (uint32_t)llround((e[i].t_s - (double)base_s) * 1e6));
        put32(p + 16, e[i].obj);
        put32(p + 20, 0xffff8881u);
    }
    sl_live_count_add(c, (double)base_s * 1e9, r, n);
    free(r);
}

/* The index of the cache named `name`, or -1. */
static int cache_named(const sl_live_count *c, const char *name)
{
    for (uint32_t i = 0; i < sl_live_count_caches(c); i++)
        if (!strcmp(sl_live_count_cache_name(c, i), name))
            return (int)i;
    return -1;
}

static double window[3 * SL_LIVE_WINDOW_S];

/* Sum of one of cache `name`'s rows (0 allocs, 1 frees, 2 remote) over the window, or -1 when absent. */
static double row_sum(const sl_live_count *c, const char *name, int row)
{
    int i = cache_named(c, name);
    if (i < 0)
        return -1;
    sl_live_count_cache_window(c, (uint32_t)i, window);
    double s = 0;
    for (int k = 0; k < SL_LIVE_WINDOW_S; k++)
        s += window[row * SL_LIVE_WINDOW_S + k];
    return s;
}

static void test_bins_remote_sites(void)
{
    sl_live_count *c = sl_live_count_create();
    SL_REQUIRE(c);
    SL_CHECK_EQ(sl_live_count_name_cache(c, 1, "filpXX", 4), 0);
    ev e[] = {
        {ALLOC, 0, 1, 5, 100.1, 0x1000}, {ALLOC, 0, 1, 5, 100.2, 0x2000},    {FREE, 1, 1, 0, 101.5, 0x1000},
        {FREE, 0, 1, 0, 101.6, 0x2000},  {PCPU_ALLOC, 0, 0, 0, 101.7, 0x30}, {KMALLOC, 1, 0, 0, 101.8, 0x4000},
    };
    add(c, e, 6, 100);
    SL_CHECK_EQ(sl_live_count_now_s(c), 101);
    SL_CHECK_EQ(sl_live_count_events(c), 6);
    SL_CHECK_EQ(sl_live_count_caches(c), 3);
    int filp = cache_named(c, "filp");
    SL_REQUIRE(filp >= 0);
    SL_CHECK(cache_named(c, "percpu") >= 0 && cache_named(c, "kmalloc (pages)") >= 0);
    SL_CHECK_EQ(sl_live_count_cache_window(c, (uint32_t)filp, window), 4);
    const int last = SL_LIVE_WINDOW_S - 1;
    SL_CHECK_EQ(window[last - 1], 2); /* allocs at 100, 101 */
    SL_CHECK_EQ(window[last], 0);
    SL_CHECK_EQ(window[SL_LIVE_WINDOW_S + last - 1], 0); /* frees */
    SL_CHECK_EQ(window[SL_LIVE_WINDOW_S + last], 2);
    SL_CHECK_EQ(window[2 * SL_LIVE_WINDOW_S + last], 1); /* remote: freed on CPU 1, allocated on 0 */
    SL_CHECK_EQ(sl_live_count_remote(c), 1);
    SL_CHECK_EQ(sl_live_count_cache_total(c, (uint32_t)filp), 4);
    const uint32_t *ids;
    SL_REQUIRE(sl_live_count_sites(c, &ids) == 1);
    SL_CHECK_EQ(ids[0], 5);
    double site[2];
    const char *cache = sl_live_count_site(c, 5, site);
    SL_CHECK(cache && !strcmp(cache, "filp"));
    SL_CHECK(fabs(site[0] - 2 * pow(0.5, 0.1)) < 1e-9 && site[1] == 0);
    SL_CHECK(sl_live_count_site(c, 6, site) == NULL);
    SL_CHECK(sl_live_count_cache_name(c, 3) == NULL);
    SL_CHECK_EQ(sl_live_count_cache_window(c, 3, window), 0);
    sl_live_count_destroy(c);
}

static void test_window_and_late_events(void)
{
    sl_live_count *c = sl_live_count_create();
    SL_REQUIRE(c);
    sl_live_count_name_cache(c, 1, "dentry", 6);
    add(c, &(ev){ALLOC, 0, 1, 0, 10, 0x10}, 1, 10);
    add(c, &(ev){ALLOC, 0, 1, 0, 10 + SL_LIVE_WINDOW_S + 5, 0x20}, 1, 10 + SL_LIVE_WINDOW_S + 5);
    SL_CHECK_EQ(row_sum(c, "dentry", 0), 1);
    add(c, &(ev){ALLOC, 0, 1, 0, 12, 0x30}, 1, 12); /* older than the window: skipped */
    SL_CHECK_EQ(row_sum(c, "dentry", 0), 1);
    SL_CHECK_EQ(sl_live_count_events(c), 3);
    SL_CHECK_EQ(sl_live_count_owners(c), 2);
    sl_live_count_destroy(c);
}

static void test_names_across_restart_and_bad_ids(void)
{
    sl_live_count *c = sl_live_count_create();
    SL_REQUIRE(c);
    sl_live_count_name_cache(c, 1, "filp", 4);
    add(c, &(ev){ALLOC, 0, 1, 9, 50, 0x10}, 1, 50);
    sl_live_count_reset_names(c);
    const uint32_t *ids;
    SL_CHECK_EQ(sl_live_count_sites(c, &ids), 0);
    sl_live_count_name_cache(c, 3, "filp", 4);
    add(c, &(ev){ALLOC, 0, 3, 0, 51, 0x20}, 1, 51);
    int i = cache_named(c, "filp");
    SL_REQUIRE(i >= 0);
    SL_CHECK_EQ(sl_live_count_cache_total(c, (uint32_t)i), 2);
    /* An id the server never named is counted under its number; an id past 16 bits is refused. */
    add(c, &(ev){FREE, 0, 700, 0, 51, 0x99}, 1, 51);
    SL_CHECK(cache_named(c, "cache 700") >= 0);
    SL_CHECK_EQ(sl_live_count_name_cache(c, 65536, "x", 1), -1);
    add(c, NULL, 0, 51);
    SL_CHECK_EQ(sl_live_count_events(c), 3);
    /* A batch whose base is no time: counted as events, nothing binned, the clock unmoved. */
    unsigned char rec[SL_LIVE_RECORD] = {ALLOC, 0, 1, 0};
    sl_live_count_add(c, NAN, rec, 1);
    sl_live_count_add(c, -1e9, rec, 1);
    sl_live_count_add(c, 1e300, rec, 1);
    SL_CHECK_EQ(sl_live_count_events(c), 6);
    SL_CHECK_EQ(sl_live_count_now_s(c), 51);
    SL_CHECK_EQ(sl_live_count_cache_total(c, (uint32_t)i), 2);
    sl_live_count_destroy(c);
}

static void test_bounded_over_a_long_stream(void)
{
    /* 2.5 windows of seconds; each second 4 steady caches, one of its own, 700 allocations never freed. */
    sl_live_count *c = sl_live_count_create();
    SL_REQUIRE(c);
    char name[32];
    for (unsigned id = 1; id <= 4; id++) {
        snprintf(name, sizeof name, "steady-%u", id);
        sl_live_count_name_cache(c, id, name, strlen(name));
    }
    const int seconds = SL_LIVE_WINDOW_S * 5 / 2;
    static ev e[700];
    uint32_t obj = 0x1000;
    for (int sec = 0; sec < seconds; sec++) {
        unsigned own = 5 + (unsigned)sec;
        snprintf(name, sizeof name, "gone-%d", sec);
        sl_live_count_name_cache(c, own, name, strlen(name));
        for (unsigned i = 0; i < 700; i++)
            e[i] = (ev){ALLOC, i & 3, i % 5 == 4 ? own : 1 + i % 4, 1 + i % 100, sec + i / 1000.0, obj += 64};
        add(c, e, 700, sec);
    }
    SL_CHECK(700 * seconds > 2 * SL_LIVE_OWNERS);
    SL_CHECK(sl_live_count_owners(c) <= 2 * SL_LIVE_OWNERS);
    SL_CHECK(sl_live_count_caches(c) <= 4 + SL_LIVE_WINDOW_S);
    SL_CHECK(sl_live_count_cache_ids(c) <= 4 + SL_LIVE_WINDOW_S);
    SL_CHECK(cache_named(c, "gone-0") < 0);
    SL_CHECK(cache_named(c, "steady-1") >= 0 && cache_named(c, "gone-749") >= 0);
    const uint32_t *ids;
    SL_CHECK_EQ(sl_live_count_sites(c, &ids), 100);
    SL_CHECK_EQ(sl_live_count_events(c), 700 * seconds);
    sl_live_count_destroy(c);
}

#define POOL 1000000

static int32_t ref_cur[POOL], ref_old[POOL];

static void test_remote_against_reference(void)
{
    /* Objects from a pool small enough to be freed and reused, large enough to rotate generations. */
    sl_live_count *c = sl_live_count_create();
    SL_REQUIRE(c);
    sl_live_count_name_cache(c, 1, "kmalloc-64", 10);
    for (int i = 0; i < POOL; i++)
        ref_cur[i] = ref_old[i] = -1;
    uint32_t ncur = 0, nold = 0, seed = 12345;
    uint64_t remote = 0, rotations = 0;
    static ev e[10000];
    for (int sec = 0; sec < 60; sec++) {
        for (int i = 0; i < 10000; i++) {
            seed = seed * 1103515245u + 12345u;
            uint32_t slot = (seed >> 8) % POOL;
            seed = seed * 1103515245u + 12345u;
            int cpu = (int)((seed >> 16) & 3);
            seed = seed * 1103515245u + 12345u;
            int alloc = (seed >> 8) % 100 < 65;
            e[i] = (ev){alloc ? ALLOC : FREE, (unsigned)cpu, 1, 0, sec + i / 20000.0, 0x100000u + slot * 64};
            if (alloc) {
                ncur += ref_cur[slot] < 0;
                ref_cur[slot] = cpu;
                if (ncur >= SL_LIVE_OWNERS) {
                    memcpy(ref_old, ref_cur, sizeof ref_cur);
                    nold = ncur;
                    for (int k = 0; k < POOL; k++)
                        ref_cur[k] = -1;
                    ncur = 0;
                    rotations++;
                }
            } else {
                int o = ref_cur[slot] >= 0 ? ref_cur[slot] : ref_old[slot];
                remote += o >= 0 && o != cpu;
                ncur -= ref_cur[slot] >= 0;
                nold -= ref_old[slot] >= 0;
                ref_cur[slot] = ref_old[slot] = -1;
            }
        }
        add(c, e, 10000, sec);
    }
    SL_CHECK(remote > 10000);
    SL_CHECK(rotations > 0);
    SL_CHECK_EQ(row_sum(c, "kmalloc-64", 2), remote);
    SL_CHECK_EQ(sl_live_count_remote(c), remote);
    SL_CHECK_EQ(sl_live_count_owners(c), ncur + nold);
    sl_live_count_destroy(c);
}

/* A stream under construction: frames appended to a growing buffer. */
typedef struct stream {
    unsigned char b[8192];
    size_t len;
} stream;

/* Appends a frame of type `type` with payload p (n bytes). */
static void frame(stream *s, unsigned type, const void *p, size_t n)
{
    SL_REQUIRE(s->len + 8 + n <= sizeof s->b);
    put32(s->b + s->len, (uint32_t)n);
    s->b[s->len + 4] = (unsigned char)type;
    s->b[s->len + 5] = s->b[s->len + 6] = s->b[s->len + 7] = 0;
    memcpy(s->b + s->len + 8, p, n);
    s->len += 8 + n;
}

static void cache_frame(stream *s, unsigned id, const char *name)
{
    unsigned char p[64] = {0};
    p[0] = (unsigned char)id;
    p[1] = (unsigned char)(id >> 8);
    memcpy(p + SL_LIVE_CACHE_HDR, name, strlen(name));
    frame(s, SL_LIVE_F_CACHE, p, SL_LIVE_CACHE_HDR + strlen(name));
}

/* An EVENTS frame of n events (kind, cache) at second base_s, kernel_lost `lost`; object i + obj0, on CPU i % 2. */
static void events_frame(stream *s, const unsigned (*kc)[2], uint32_t n, uint32_t base_s, uint32_t lost, uint32_t obj0)
{
    unsigned char p[SL_LIVE_EVENTS_HDR + 16 * SL_LIVE_RECORD] = {0};
    SL_REQUIRE(n <= 16);
    put32(p, n);
    uint64_t base = (uint64_t)base_s * 1000000000ull;
    put32(p + 8, (uint32_t)base);
    put32(p + 12, (uint32_t)(base >> 32));
    put32(p + 16, lost);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char *r = p + SL_LIVE_EVENTS_HDR + i * SL_LIVE_RECORD;
        r[0] = (unsigned char)kc[i][0];
        r[1] = (unsigned char)(i % 2);
        r[2] = (unsigned char)kc[i][1];
        put32(r + 8, 1000 * i);
        put32(r + 16, obj0 + i / 2);
        put32(r + 20, 0xffff8881u);
    }
    frame(s, SL_LIVE_F_EVENTS, p, SL_LIVE_EVENTS_HDR + n * SL_LIVE_RECORD);
}

/* A stream of every frame type the page decodes, an unknown one, and events of filp (3), dentry (4) and percpu. */
static void sample_stream(stream *s)
{
    s->len = 0;
    frame(s, SL_LIVE_F_HELLO, "{\"format\":\"slablab-live/1\"}", 27);
    cache_frame(s, 3, "filp");
    cache_frame(s, 4, "dentry");
    static const unsigned a[6][2] = {{ALLOC, 3}, {ALLOC, 3}, {FREE, 3}, {ALLOC, 4}, {PCPU_ALLOC, 3}, {FREE, 3}};
    events_frame(s, a, 6, 100, 0, 0x1000);
    frame(s, SL_LIVE_F_SITE, "0123456789abcdefsite", 20);
    frame(s, SL_LIVE_F_STATUS, "{}", 2);
    frame(s, 99, "ignored", 7);
    static const unsigned b[4][2] = {{KFREE, 4}, {ALLOC, 3}, {FREE, 4}, {FREE, 3}};
    events_frame(s, b, 4, 101, 7, 0x2000);
    frame(s, SL_LIVE_F_SNAPSHOT, "{\"taken_ns\":[1,2],\"snapshot\":{}}", 33);
    frame(s, SL_LIVE_F_SLABINFO, "{}", 2);
    frame(s, SL_LIVE_F_ERROR, "{}", 2);
}

/* What feeding a stream gave: every frame handed back, in order, and the counts. */
typedef struct fed {
    unsigned char out[8192];
    size_t out_len;
    uint64_t events, remote, lost;
    double newest_ns, filp, dentry;
} fed;

/* Feeds s cut at `cut` (and, when step is non-zero, in pieces of step bytes after it) into c. Returns feed's first failure or 0. */
static int feed(sl_live_count *c, const stream *s, size_t cut, size_t step, fed *f)
{
    memset(f, 0, sizeof *f);
    size_t off = 0;
    while (off < s->len) {
        size_t n = off < cut ? cut - off : (step ? step : s->len - off);
        if (n > s->len - off)
            n = s->len - off;
        /* A copy of exactly the piece, so ASan sees any read past it. */
        unsigned char *piece = malloc(n ? n : 1);
        SL_CHECK(piece != NULL);
        if (!piece)
            return -2;
        memcpy(piece, s->b + off, n);
        int r = sl_live_count_feed(c, piece, n);
        free(piece);
        if (r)
            return r;
        size_t len;
        const unsigned char *out = sl_live_count_out(c, &len);
        SL_CHECK(f->out_len + len <= sizeof f->out);
        if (f->out_len + len > sizeof f->out)
            return -2;
        if (len)
            memcpy(f->out + f->out_len, out, len);
        f->out_len += len;
        off += n;
    }
    f->events = sl_live_count_events(c);
    f->remote = sl_live_count_remote(c);
    f->lost = sl_live_count_kernel_lost(c);
    f->newest_ns = sl_live_count_newest_ns(c);
    f->filp = row_sum(c, "filp", 0) + row_sum(c, "filp", 1);
    f->dentry = row_sum(c, "dentry", 0) + row_sum(c, "dentry", 1);
    return 0;
}

static int same(const fed *a, const fed *b)
{
    return a->out_len == b->out_len && !memcmp(a->out, b->out, a->out_len) && a->events == b->events &&
           a->remote == b->remote && a->lost == b->lost && a->newest_ns == b->newest_ns && a->filp == b->filp &&
           a->dentry == b->dentry;
}

/* The frames of out, as types in order (at most 32). Returns how many. */
static int types(const fed *f, unsigned *t)
{
    int n = 0;
    for (size_t off = 0; off + 8 <= f->out_len && n < 32; n++) {
        t[n] = f->out[off + 4];
        off += 8 + (size_t)f->out[off] + ((size_t)f->out[off + 1] << 8) + ((size_t)f->out[off + 2] << 16);
    }
    return n;
}

static void test_feed_every_cut(void)
{
    static stream s;
    sample_stream(&s);
    static fed whole, cut;
    sl_live_count *c = sl_live_count_create();
    SL_REQUIRE(c);
    SL_REQUIRE(sl_live_count_watch(c, "filp", 4) == 0);
    SL_CHECK_EQ(feed(c, &s, 0, 0, &whole), 0);
    SL_CHECK_EQ(whole.events, 10);
    SL_CHECK_EQ(sl_live_count_pending(c), 0);
    /* filp: allocs of 0x1000 on CPU 0, freed on CPU 0 (same) ... see sample_stream; dentry apart; percpu apart. */
    SL_CHECK_EQ(whole.filp, 6);
    SL_CHECK_EQ(whole.dentry, 3);
    SL_CHECK_EQ(whole.lost, 7);
    SL_CHECK(whole.newest_ns == 101e9 + 3e6);
    /* Handed back: every frame the page decodes but events, and the watched cache's events where they stood. */
    unsigned t[32];
    static const unsigned want[] = {SL_LIVE_F_HELLO,    SL_LIVE_F_CACHE,  SL_LIVE_F_CACHE,  SL_LIVE_F_EVENTS,
                                    SL_LIVE_F_SITE,     SL_LIVE_F_STATUS, SL_LIVE_F_EVENTS, SL_LIVE_F_SNAPSHOT,
                                    SL_LIVE_F_SLABINFO, SL_LIVE_F_ERROR};
    SL_REQUIRE(types(&whole, t) == 10);
    for (int i = 0; i < 10; i++)
        SL_CHECK_EQ(t[i], want[i]);
    /* The first batch's watched events: three of filp's four (percpu's record is no slab's), their records intact. */
    const unsigned char *ev = whole.out + 8 + 27 + 2 * (8 + SL_LIVE_CACHE_HDR) + 10 + 8;
    SL_CHECK_EQ(ev[-8] + (ev[-7] << 8), SL_LIVE_EVENTS_HDR + 4 * SL_LIVE_RECORD);
    SL_CHECK_EQ(ev[0], 4);
    SL_CHECK_EQ(ev[SL_LIVE_EVENTS_HDR], ALLOC);
    SL_CHECK_EQ(ev[SL_LIVE_EVENTS_HDR + 3 * SL_LIVE_RECORD], FREE);
    SL_CHECK_EQ(ev[SL_LIVE_EVENTS_HDR + 3 * SL_LIVE_RECORD + 8], (5000 & 0xff));
    sl_live_count_destroy(c);

    /* Cut at every point (then the rest whole), one byte at a time, and in 7-byte pieces: the same result. */
    for (size_t at = 0; at <= s.len + 2; at++) {
        c = sl_live_count_create();
        SL_REQUIRE(c);
        SL_REQUIRE(sl_live_count_watch(c, "filp", 4) == 0);
        int r = at <= s.len ? feed(c, &s, at, 0, &cut) : feed(c, &s, 0, at == s.len + 1 ? 1 : 7, &cut);
        SL_CHECK_EQ(r, 0);
        SL_CHECK(same(&whole, &cut));
        SL_CHECK_EQ(sl_live_count_pending(c), 0);
        sl_live_count_destroy(c);
    }
}

static void test_feed_refuses_corrupt_frames(void)
{
    static stream s;
    static fed f;
    sl_live_count *c = sl_live_count_create();
    SL_REQUIRE(c);
    /* A frame past the limit, whether its header comes whole or cut. */
    unsigned char big[8] = {0, 0, 0, 0x10, SL_LIVE_F_SNAPSHOT};
    SL_CHECK_EQ(sl_live_count_feed(c, big, 3), 0);
    SL_CHECK_EQ(sl_live_count_feed(c, big + 3, 5), -1);
    SL_CHECK(strstr(sl_live_count_error(c), "a frame of 268435456 bytes (more than 67108864)") != NULL);
    /* It stays refused until a new stream. */
    SL_CHECK_EQ(sl_live_count_feed(c, (const unsigned char *)"", 0), -1);
    sl_live_count_restart(c);
    SL_CHECK_EQ(sl_live_count_error(c)[0], '\0');
    SL_CHECK_EQ(sl_live_count_feed(c, big, 8), -1);
    sl_live_count_restart(c);
    /* An EVENTS frame whose length and count disagree; one too short; a CACHE frame too short. */
    s.len = 0;
    static const unsigned a[2][2] = {{ALLOC, 3}, {FREE, 3}};
    events_frame(&s, a, 2, 5, 0, 0x10);
    s.b[0] = (unsigned char)(SL_LIVE_EVENTS_HDR + SL_LIVE_RECORD);
    SL_CHECK_EQ(feed(c, &s, 0, 0, &f), -1);
    SL_CHECK(strstr(sl_live_count_error(c), "an EVENTS frame of 48 bytes says 2 events") != NULL);
    sl_live_count_restart(c);
    s.len = 0;
    frame(&s, SL_LIVE_F_EVENTS, "short", 5);
    SL_CHECK_EQ(feed(c, &s, 2, 1, &f), -1);
    SL_CHECK(strstr(sl_live_count_error(c), "an EVENTS frame of 5 bytes is too short") != NULL);
    sl_live_count_restart(c);
    s.len = 0;
    frame(&s, SL_LIVE_F_CACHE, "abc", 3);
    SL_CHECK_EQ(feed(c, &s, 0, 0, &f), -1);
    SL_CHECK(strstr(sl_live_count_error(c), "a CACHE frame of 3 bytes is too short") != NULL);
    sl_live_count_restart(c);
    SL_CHECK_EQ(sl_live_count_events(c), 0);
    sl_live_count_destroy(c);

    /*
     * Every byte of the sample stream set to 0x00, 0x7f and 0xff in turn, fed cut at that byte (one
     * counter, a new stream each time): an error or at most the stream's events, never a read astray (ASan).
     */
    sample_stream(&s);
    static stream bad;
    int refused = 0;
    c = sl_live_count_create();
    SL_REQUIRE(c);
    SL_REQUIRE(sl_live_count_watch(c, "filp", 4) == 0);
    for (size_t at = 0; at < s.len; at++)
        for (int v = 0; v < 3; v++) {
            bad = s;
            bad.b[at] = (unsigned char)(v == 0 ? 0x00 : v == 1 ? 0x7f : 0xff);
            sl_live_count_restart(c);
            uint64_t before = sl_live_count_events(c);
            if (feed(c, &bad, at, 0, &f)) {
                refused++;
                SL_CHECK(sl_live_count_error(c)[0] != '\0');
            } else
                SL_CHECK(sl_live_count_events(c) - before <= 10);
        }
    sl_live_count_destroy(c);
    SL_CHECK(refused > 0);
}

int main(void)
{
    SL_RUN(test_bins_remote_sites);
    SL_RUN(test_window_and_late_events);
    SL_RUN(test_names_across_restart_and_bad_ids);
    SL_RUN(test_bounded_over_a_long_stream);
    SL_RUN(test_remote_against_reference);
    SL_RUN(test_feed_every_cut);
    SL_RUN(test_feed_refuses_corrupt_frames);
    return sl_check_summary();
}
