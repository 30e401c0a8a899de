/*
 * test_live_count.c - the live stream's counting (src/replay/live_count.c)
 * on built records: per-second bins per cache over the window (old seconds
 * fall out, events older than the window are skipped), remote frees
 * against a plain two-generation reference over random events, percpu and
 * page-sized kmalloc counted apart, decayed call-site counts, names kept
 * across a server restart, caches idle for a window forgotten and every
 * table bounded over a long stream, and bad ids refused.
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

int main(void)
{
    SL_RUN(test_bins_remote_sites);
    SL_RUN(test_window_and_late_events);
    SL_RUN(test_names_across_restart_and_bad_ids);
    SL_RUN(test_bounded_over_a_long_stream);
    SL_RUN(test_remote_against_reference);
    return sl_check_summary();
}
