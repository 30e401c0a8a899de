/*
 * test_slab_runtime.c - the SLAB runtime on one thread: array cache sizes,
 * refill and flush amounts as mm/slab.c computes them, each management type
 * (the OBJFREELIST array moving between objects), off-slab freelists from
 * kmalloc caches, error codes for bad frees, shrinking, exhaustion, events,
 * and a randomized run against a reference model with sl_slab_validate()
 * after every step.
 */
#include "check.h"

#include "../src/slab/slab.h"

#define MiB ((size_t)1 << 20)

static sl_slab *world(unsigned ncpus, size_t arena, sl_slab_rules rules, sl_trace *tr)
{
    sl_slab *sl = NULL;
    sl_slab_config cfg = {.ncpus = ncpus, .arena_bytes = arena, .rules = rules, .trace = tr};
    int rc = sl_slab_create(&cfg, &sl);
    SL_CHECK_EQ(rc, SL_OK);
    return sl;
}

static bool valid(sl_slab *sl)
{
    char why[256];
    int rc = sl_slab_validate(sl, why, sizeof why);
    if (rc != SL_OK)
        fprintf(stderr, "  validate: %s\n", why);
    return rc == SL_OK;
}

static sl_slab_cache_info info(const sl_slab_cache *c)
{
    sl_slab_cache_info i;
    sl_slab_cache_info_get(c, &i);
    return i;
}

static void test_config_errors(void)
{
    sl_slab *sl;
    sl_slab_config cfg = {.ncpus = 0, .arena_bytes = 16 * MiB};
    SL_CHECK_EQ(sl_slab_create(&cfg, &sl), SL_EINVAL);
    cfg.ncpus = SL_SLAB_MAX_CPUS + 1;
    SL_CHECK_EQ(sl_slab_create(&cfg, &sl), SL_EINVAL);
    cfg.ncpus = 1;
    cfg.arena_bytes = MiB;
    SL_CHECK_EQ(sl_slab_create(&cfg, &sl), SL_EINVAL);
    cfg.arena_bytes = 16 * MiB;
    cfg.rules = (sl_slab_rules)7;
    SL_CHECK_EQ(sl_slab_create(&cfg, &sl), SL_EINVAL);
}

/* enable_cpucache's limits, batchcounts and shared arrays. */
static void test_array_sizes(void)
{
    sl_slab *one = world(1, 16 * MiB, SL_SLAB_RULES_AFTER, NULL);
    sl_slab *two = world(2, 16 * MiB, SL_SLAB_RULES_AFTER, NULL);
    SL_REQUIRE(one && two);
    static const struct {
        size_t size;
        unsigned limit, batch;
    } want[] = {{32, 120, 60}, {256, 120, 60}, {512, 54, 27}, {1024, 54, 27}, {2048, 24, 12},
                {4096, 24, 12}, {8192, 8, 4}, {131072, 8, 4}, {262144, 1, 1}, {4 * MiB, 1, 1}};
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
        sl_slab_cache_info a = info(sl_slab_kmalloc_cache(one, want[i].size));
        sl_slab_cache_info b = info(sl_slab_kmalloc_cache(two, want[i].size));
        SL_CHECK_EQ(a.limit, want[i].limit);
        SL_CHECK_EQ(a.batchcount, want[i].batch);
        SL_CHECK_EQ(a.shared_limit, 0);
        SL_CHECK_EQ(b.shared_limit, want[i].size <= 4096 ? 8 * want[i].batch : 0);
    }
    SL_CHECK_EQ(sl_slab_cache_count(one), SL_SLAB_NKMALLOC);
    SL_CHECK(valid(one));
    sl_slab_destroy(one);
    sl_slab_destroy(two);
}

/* First allocation: refill of 16 (BATCHREFILL_LIMIT, array untouched) from one new slab. */
static void test_refill_and_flush_amounts(void)
{
    sl_slab *sl = world(1, 16 * MiB, SL_SLAB_RULES_AFTER, NULL);
    SL_REQUIRE(sl);
    sl_slab_spec spec = {.name = "t32", .object_size = 32};
    sl_slab_cache *c;
    SL_REQUIRE(sl_slab_cache_create(sl, &spec, &c) == SL_OK);
    void *objs[400];
    objs[0] = sl_slab_cache_alloc(c, 0);
    SL_REQUIRE(objs[0]);
    sl_slab_cache_info i = info(c);
    SL_CHECK_EQ(i.g.num, 124);
    SL_CHECK_EQ(i.total_slabs, 1);
    SL_CHECK_EQ(i.free_objects, 124 - 16);
    SL_CHECK_EQ(i.alloc_miss, 1);
    SL_CHECK(valid(sl));
    /* 15 more come from the array; the 17th refills with the full batch (touched now): 60. */
    for (unsigned k = 1; k < 17; k++)
        objs[k] = sl_slab_cache_alloc(c, 0);
    i = info(c);
    SL_CHECK_EQ(i.alloc_hit, 15);
    SL_CHECK_EQ(i.alloc_miss, 2);
    SL_CHECK_EQ(i.free_objects, 124 - 16 - 60);
    for (unsigned k = 17; k < 400; k++)
        SL_REQUIRE((objs[k] = sl_slab_cache_alloc(c, 0)) != NULL);
    SL_CHECK(valid(sl));
    /* Frees fill the array to its limit (120), then each overflow flushes a batch of 60 to free_block. */
    unsigned long before_free_objects = info(c).free_objects;
    for (unsigned k = 0; k < 121; k++)
        SL_CHECK_EQ(sl_slab_cache_free(c, 0, objs[k]), SL_OK);
    i = info(c);
    SL_CHECK_EQ(i.free_miss, 1);
    SL_CHECK_EQ(i.free_objects, before_free_objects + 60);
    SL_CHECK(valid(sl));
    for (unsigned k = 121; k < 400; k++)
        SL_CHECK_EQ(sl_slab_cache_free(c, 0, objs[k]), SL_OK);
    SL_CHECK(valid(sl));
    /* free_limit = (1 + ncpus) * batchcount + num: free slabs beyond it went back to the pages. */
    i = info(c);
    SL_CHECK(i.free_objects <= 2u * 60 + 124 + 124);
    SL_CHECK(sl_slab_shrink(sl) > 0);
    i = info(c);
    SL_CHECK_EQ(i.total_slabs, 0);
    SL_CHECK(valid(sl));
    SL_CHECK_EQ(sl_slab_cache_destroy(c), SL_OK);
    SL_CHECK(valid(sl));
    sl_slab_destroy(sl);
}

/* cache_reap: a touched array is spared once; then (limit + 4) / 5 go; free slabs trickle back. */
static void test_reap(void)
{
    sl_slab *sl = world(1, 16 * MiB, SL_SLAB_RULES_AFTER, NULL);
    SL_REQUIRE(sl);
    sl_slab_spec spec = {.name = "reap-32", .object_size = 32};
    sl_slab_cache *c;
    SL_REQUIRE(sl_slab_cache_create(sl, &spec, &c) == SL_OK);
    static void *objs[1000];
    for (unsigned k = 0; k < 1000; k++)
        SL_REQUIRE((objs[k] = sl_slab_cache_alloc(c, 0)) != NULL);
    for (unsigned k = 0; k < 1000; k++)
        SL_CHECK_EQ(sl_slab_cache_free(c, 0, objs[k]), SL_OK);
    sl_slab_cache_info i0 = info(c);
    SL_REQUIRE(i0.cpu_avail >= 48);
    sl_slab_reap(sl, 0); /* touched by the allocations: only untouched now */
    SL_CHECK_EQ(info(c).cpu_avail, i0.cpu_avail);
    sl_slab_reap(sl, 0);
    SL_CHECK_EQ(info(c).cpu_avail, i0.cpu_avail - (120 + 4) / 5);
    SL_CHECK(valid(sl));
    SL_REQUIRE(i0.total_slabs > 0);
    /* Every object is free: reaping alone empties the array and gives back every slab, one per run. */
    for (unsigned r = 0; r < 20; r++) {
        unsigned long slabs = info(c).total_slabs;
        sl_slab_reap(sl, 0);
        SL_CHECK(info(c).total_slabs + 1 >= slabs);
        SL_CHECK(valid(sl));
    }
    SL_CHECK_EQ(info(c).cpu_avail, 0);
    SL_CHECK_EQ(info(c).total_slabs, 0);
    sl_slab_destroy(sl);
}

/* Specs that land on each management type, per rules. */
static const struct {
    const char *name;
    uint32_t size, flags;
    sl_slab_mgmt before, after;
} typed[] = {
    {"objfl-256", 256, 0, SL_SLAB_OFF, SL_SLAB_OBJFREELIST},
    {"left-192-ctor", 192, SL_SLAB_CTOR, SL_SLAB_NORMAL_LEFTOVER, SL_SLAB_NORMAL_LEFTOVER},
    {"normal-40", 40, 0, SL_SLAB_NORMAL, SL_SLAB_NORMAL},
    {"off-256-rcu", 256, SL_SLAB_TYPESAFE_RCU, SL_SLAB_OFF, SL_SLAB_OFF},
    {"objfl-1k", 1024, 0, SL_SLAB_OFF, SL_SLAB_OBJFREELIST},
    {"big-3000", 3000, 0, SL_SLAB_NORMAL_LEFTOVER, SL_SLAB_OBJFREELIST}, /* order 1, 2 objects */
};
#define NTYPED (sizeof typed / sizeof typed[0])

static void test_management_types(void)
{
    for (unsigned r = 0; r < 2; r++) {
        sl_slab *sl = world(1, 16 * MiB, (sl_slab_rules)r, NULL);
        SL_REQUIRE(sl);
        for (unsigned t = 0; t < NTYPED; t++) {
            sl_slab_spec spec = {.object_size = typed[t].size, .flags = typed[t].flags};
            snprintf(spec.name, sizeof spec.name, "%s", typed[t].name);
            sl_slab_cache *c;
            SL_REQUIRE(sl_slab_cache_create(sl, &spec, &c) == SL_OK);
            sl_slab_cache_info i = info(c);
            SL_CHECK_EQ(i.g.mgmt, r ? typed[t].after : typed[t].before);
            /* Fill three slabs, empty them in an interleaved order, validating throughout. */
            unsigned n = 3 * i.g.num;
            void *objs[800];
            SL_REQUIRE(n <= 800);
            for (unsigned k = 0; k < n; k++) {
                SL_REQUIRE((objs[k] = sl_slab_cache_alloc(c, 0)) != NULL);
                memset(objs[k], 0xa5, typed[t].size);
            }
            sl_slab_drain_cpu(sl, 0);
            SL_CHECK(valid(sl));
            for (unsigned k = 0; k < n; k += 2)
                SL_CHECK_EQ(sl_slab_cache_free(c, 0, objs[k]), SL_OK);
            sl_slab_drain_cpu(sl, 0);
            SL_CHECK(valid(sl));
            for (unsigned k = 1; k < n; k += 2)
                SL_CHECK_EQ(sl_slab_cache_free(c, 0, objs[k]), SL_OK);
            sl_slab_drain_cpu(sl, 0);
            SL_CHECK(valid(sl));
            SL_CHECK_EQ(sl_slab_cache_destroy(c), SL_OK);
        }
        sl_slab_shrink(sl);
        SL_CHECK(valid(sl));
        sl_page_stats ps;
        sl_page_stats_get(sl_slab_zone(sl), &ps);
        SL_CHECK_EQ(ps.pages_free, ps.pages_total);
        sl_slab_destroy(sl);
    }
}

/* The OBJFREELIST array: in the last object of a new slab, gone when full, then in the first object freed. */
static void test_objfreelist_array_moves(void)
{
    sl_slab *sl = world(1, 16 * MiB, SL_SLAB_RULES_AFTER, NULL);
    SL_REQUIRE(sl);
    sl_slab_cache *k1 = sl_slab_kmalloc_cache(sl, 1024);
    SL_REQUIRE(info(k1).g.mgmt == SL_SLAB_OBJFREELIST && info(k1).g.num == 4);
    void *p[4];
    for (unsigned i = 0; i < 4; i++)
        p[i] = sl_slab_kmalloc(sl, 0, 1000);
    /* One refill took all four objects of one slab: the last handed out is the array's home, object 3,
     * and the array pops LIFO, so p[0] is object 3. */
    sl_page *pg = sl_page_from_addr(sl_slab_zone(sl), p[0]);
    SL_REQUIRE(pg);
    unsigned char *base = sl_page_address(sl_slab_zone(sl), pg);
    SL_CHECK(p[0] == base + 3 * 1024);
    SL_CHECK(p[3] == base);
    for (unsigned i = 0; i < 4; i++)
        memset(p[i], 0x5a, 1024); /* the array is gone: users may write every byte */
    SL_CHECK(valid(sl));
    /* Free object 1 alone through free_block: the array moves into it. */
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p[2]), SL_OK);
    sl_slab_drain_cpu(sl, 0);
    SL_CHECK(valid(sl));
    SL_CHECK_EQ(((unsigned char *)p[2])[3], 1); /* freelist[active = 3] = object 1 */
    void *again = sl_slab_kmalloc(sl, 0, 1024);
    SL_CHECK(again == p[2]);
    SL_CHECK(valid(sl));
    for (unsigned i = 0; i < 4; i++)
        SL_CHECK_EQ(sl_slab_kfree(sl, 0, i == 2 ? again : p[i]), SL_OK);
    SL_CHECK(valid(sl));
    sl_slab_destroy(sl);
}

/* Before OBJFREELIST, kmalloc-128 is OFF_SLAB: each slab holds a kmalloc-32 object. */
static void test_off_slab_freelist_from_kmalloc(void)
{
    sl_slab *sl = world(1, 16 * MiB, SL_SLAB_RULES_BEFORE, NULL);
    SL_REQUIRE(sl);
    sl_slab_cache *k128 = sl_slab_kmalloc_cache(sl, 128), *k32 = sl_slab_kmalloc_cache(sl, 32);
    SL_REQUIRE(info(k128).g.mgmt == SL_SLAB_OFF);
    void *p = sl_slab_kmalloc(sl, 0, 128);
    SL_REQUIRE(p);
    SL_CHECK_EQ(info(k128).total_slabs, 1);
    SL_CHECK_EQ(info(k32).total_slabs, 1);
    SL_CHECK(valid(sl));
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_OK);
    SL_CHECK_EQ(sl_slab_shrink(sl), 2);
    SL_CHECK_EQ(info(k32).total_slabs, 0);
    SL_CHECK(valid(sl));
    sl_slab_destroy(sl);
}

static void test_bad_frees(void)
{
    if (!SL_DEBUG)
        SL_SKIP("benchmark build: no free checks");
    sl_slab *sl = world(2, 16 * MiB, SL_SLAB_RULES_AFTER, NULL);
    SL_REQUIRE(sl);
    char *p = sl_slab_kmalloc(sl, 0, 100), *q = sl_slab_kmalloc(sl, 0, 100);
    SL_REQUIRE(p && q);
    int local;
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, &local), SL_EFOREIGN);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p + 8), SL_EMISALIGNED);
    SL_CHECK_EQ(sl_slab_kfree(sl, 5, p), SL_EINVAL);
    sl_slab_cache *k64 = sl_slab_kmalloc_cache(sl, 64);
    SL_CHECK_EQ(sl_slab_cache_free(k64, 0, p), SL_EFOREIGN);
    SL_CHECK(valid(sl));
    SL_CHECK_EQ(sl_slab_kfree(sl, 1, p), SL_OK); /* remote free */
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_EDOUBLEFREE);
    SL_CHECK_EQ(sl_slab_kfree(sl, 1, p), SL_EDOUBLEFREE);
    SL_CHECK(valid(sl));
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, NULL), SL_OK);
    SL_CHECK(sl_slab_kmalloc(sl, 0, 0) == NULL);
    SL_CHECK(sl_slab_kmalloc(sl, 0, 4 * MiB + 1) == NULL);
    /* A pointer into a block the page allocator holds free. */
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, sl_slab_zone(sl)->base + sl_slab_zone(sl)->npages * SL_PAGE_SIZE / 2 + 64),
                SL_EFOREIGN);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, q), SL_OK);
    sl_slab_drain_cpu(sl, 0);
    sl_slab_drain_cpu(sl, 1);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, q), SL_EDOUBLEFREE); /* also once the object is back in its slab */
    SL_CHECK(valid(sl));
    sl_slab_destroy(sl);
}

static void test_exhaustion(void)
{
    sl_slab *sl = world(1, 8 * MiB, SL_SLAB_RULES_BEFORE, NULL);
    SL_REQUIRE(sl);
    void *big[4];
    unsigned nbig = 0;
    while (nbig < 4 && (big[nbig] = sl_slab_kmalloc(sl, 0, 3 * MiB)))
        nbig++;
    /* Two 4 MiB blocks, but before OBJFREELIST kmalloc-4M is OFF_SLAB: the first slab's freelist
     * comes from kmalloc-32, whose page splits the second block. */
    SL_CHECK_EQ(nbig, 1);
    static void *small[8192];
    unsigned n = 0;
    while (n < 8192 && (small[n] = sl_slab_kmalloc(sl, 0, 2048)))
        n++;
    SL_CHECK(n < 8192); /* ran out */
    SL_CHECK(valid(sl));
    for (unsigned i = 0; i < n; i++)
        SL_CHECK_EQ(sl_slab_kfree(sl, 0, small[i]), SL_OK);
    for (unsigned i = 0; i < nbig; i++)
        SL_CHECK_EQ(sl_slab_kfree(sl, 0, big[i]), SL_OK);
    sl_slab_shrink(sl);
    SL_CHECK(valid(sl));
    sl_page_stats ps;
    sl_page_stats_get(sl_slab_zone(sl), &ps);
    SL_CHECK_EQ(ps.pages_free, ps.pages_total);
    sl_slab_destroy(sl);
}

/* validate() notices a use-after-free write into a freelist array and a duplicated index. */
static void test_validate_catches_corruption(void)
{
    sl_slab *sl = world(1, 16 * MiB, SL_SLAB_RULES_AFTER, NULL);
    SL_REQUIRE(sl);
    /* kmalloc-32 is NORMAL: the array is the last 124 bytes of the slab. */
    void *p = sl_slab_kmalloc(sl, 0, 32);
    sl_page *pg = sl_page_from_addr(sl_slab_zone(sl), p);
    unsigned char *fl = (unsigned char *)sl_page_address(sl_slab_zone(sl), pg) + SL_PAGE_SIZE - 124;
    unsigned char saved = fl[100];
    fl[100] = fl[101];
    char why[256];
    SL_CHECK_EQ(sl_slab_validate(sl, why, sizeof why), SL_ECORRUPT);
    SL_CHECK(strstr(why, "repeated index") != NULL);
    fl[100] = saved;
    SL_CHECK(valid(sl));
    /* kmalloc-1k is OBJFREELIST: free one object of a full slab to free_block, then scribble on it. */
    void *q[4];
    for (unsigned i = 0; i < 4; i++)
        q[i] = sl_slab_kmalloc(sl, 0, 1024);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, q[1]), SL_OK);
    sl_slab_drain_cpu(sl, 0);
    SL_CHECK(valid(sl));
    memset(q[1], 0x77, 8);
    SL_CHECK_EQ(sl_slab_validate(sl, why, sizeof why), SL_ECORRUPT);
    sl_slab_destroy(sl);
}

static void test_events(void)
{
#if defined(SLABLAB_BENCH)
    SL_SKIP("benchmark build: no events");
#endif
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 1, 4096) == SL_OK);
    tr.enabled = true;
    sl_slab *sl = world(1, 16 * MiB, SL_SLAB_RULES_AFTER, &tr);
    SL_REQUIRE(sl);
    static sl_event ev[4096];
    sl_trace_drain(&tr, 0, ev, 4096);
    void *p = sl_slab_kmalloc(sl, 0, 64);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_OK);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_EDOUBLEFREE);
    unsigned n = sl_trace_drain(&tr, 0, ev, 4096);
    unsigned seen[300] = {0};
    for (unsigned i = 0; i < n; i++)
        if (ev[i].kind < 300)
            seen[ev[i].kind]++;
    SL_CHECK_EQ(seen[SL_EV_OP_BEGIN], 3);
    SL_CHECK_EQ(seen[SL_EV_OP_END], 3);
    SL_CHECK_EQ(seen[SL_EV_SLAB_REFILL], 1);
    SL_CHECK_EQ(seen[SL_EV_SLAB_GROW], 1);
    SL_CHECK_EQ(seen[SL_EV_SLAB_GET_OBJ], 16);
    SL_CHECK_EQ(seen[SL_EV_SLAB_FREE_HIT], 1);
    SL_CHECK_EQ(seen[SL_EV_ERROR], 1);
    SL_CHECK_EQ(seen[SL_EV_PAGE_ALLOC], 1);
    SL_CHECK_EQ(ev[0].kind, SL_EV_OP_BEGIN);
    SL_CHECK_EQ(ev[0].arg0, SL_SLAB_OP_KMALLOC);
    SL_CHECK_EQ(ev[0].cache, 1); /* kmalloc-64 */
    sl_slab_destroy(sl);
    sl_trace_destroy(&tr);
}

/* Randomized: several caches of every type, CPUs taking turns, validate() after every step. */
typedef struct held {
    void *p;
    sl_slab_cache *c; /* NULL: from kmalloc */
    uint32_t size;
    uint32_t tag;
} held;

static void fill(const held *h)
{
    uint32_t n = h->size < 64 ? h->size : 64;
    for (uint32_t i = 0; i < n; i++)
        ((unsigned char *)h->p)[i] = (unsigned char)(h->tag + i);
}

static bool intact(const held *h)
{
    uint32_t n = h->size < 64 ? h->size : 64;
    for (uint32_t i = 0; i < n; i++)
        if (((unsigned char *)h->p)[i] != (unsigned char)(h->tag + i))
            return false;
    return true;
}

static void randomized(sl_slab_rules rules, uint64_t seed, unsigned steps)
{
    enum { NCPU = 3, MAXH = 3000 };
    sl_slab *sl = world(NCPU, 32 * MiB, rules, NULL);
    SL_REQUIRE(sl);
    sl_slab_cache *caches[NTYPED];
    for (unsigned t = 0; t < NTYPED; t++) {
        sl_slab_spec spec = {.object_size = typed[t].size, .flags = typed[t].flags, .align = t == 2 ? 8 : 0};
        snprintf(spec.name, sizeof spec.name, "%s", typed[t].name);
        SL_REQUIRE(sl_slab_cache_create(sl, &spec, &caches[t]) == SL_OK);
    }
    static held h[MAXH];
    unsigned nh = 0;
    uint64_t rng = seed;
    for (unsigned step = 0; step < steps; step++) {
        uint64_t r = sl_test_rand(&rng);
        unsigned cpu = (unsigned)(r % NCPU);
        unsigned what = (unsigned)(r >> 8) % 100;
        if (what < 45 && nh < MAXH) {
            held x = {.tag = step};
            if ((r >> 16) & 1) {
                unsigned t = (unsigned)(r >> 20) % NTYPED;
                x.c = caches[t];
                x.size = typed[t].size;
                x.p = sl_slab_cache_alloc(x.c, cpu);
            } else {
                x.size = 1 + (uint32_t)((r >> 24) % ((r >> 60) ? 600 : 20000));
                x.p = sl_slab_kmalloc(sl, cpu, x.size);
            }
            SL_REQUIRE(x.p);
            SL_REQUIRE(((uintptr_t)x.p & 7) == 0);
            fill(&x);
            h[nh++] = x;
        } else if (what < 90 && nh) {
            unsigned i = (unsigned)((r >> 32) % nh);
            SL_REQUIRE(intact(&h[i]));
            int rc = h[i].c ? sl_slab_cache_free(h[i].c, cpu, h[i].p) : sl_slab_kfree(sl, cpu, h[i].p);
            SL_REQUIRE(rc == SL_OK);
            if (SL_DEBUG && (r >> 40) % 8 == 0) /* and again: must be refused */
                SL_REQUIRE(sl_slab_kfree(sl, (cpu + 1) % NCPU, h[i].p) == SL_EDOUBLEFREE);
            h[i] = h[--nh];
        } else if (what < 94) {
            sl_slab_drain_cpu(sl, cpu);
        } else if (what < 97) {
            sl_slab_reap(sl, cpu);
        } else {
            sl_slab_shrink(sl);
        }
        SL_REQUIRE(valid(sl));
    }
    for (unsigned i = 0; i < nh; i++) {
        SL_REQUIRE(intact(&h[i]));
        SL_REQUIRE(sl_slab_kfree(sl, i % NCPU, h[i].p) == SL_OK);
    }
    sl_slab_shrink(sl);
    SL_CHECK(valid(sl));
    sl_page_stats ps;
    sl_page_stats_get(sl_slab_zone(sl), &ps);
    SL_CHECK_EQ(ps.pages_free, ps.pages_total);
    sl_slab_destroy(sl);
}

static void test_randomized_after(void) { randomized(SL_SLAB_RULES_AFTER, 7, (unsigned)sl_test_scale(3000)); }
static void test_randomized_before(void) { randomized(SL_SLAB_RULES_BEFORE, 11, (unsigned)sl_test_scale(3000)); }

int main(void)
{
    SL_RUN(test_config_errors);
    SL_RUN(test_array_sizes);
    SL_RUN(test_refill_and_flush_amounts);
    SL_RUN(test_reap);
    SL_RUN(test_management_types);
    SL_RUN(test_objfreelist_array_moves);
    SL_RUN(test_off_slab_freelist_from_kmalloc);
    SL_RUN(test_bad_frees);
    SL_RUN(test_exhaustion);
    SL_RUN(test_validate_catches_corruption);
    SL_RUN(test_events);
    SL_RUN(test_randomized_after);
    SL_RUN(test_randomized_before);
    return sl_check_summary();
}
