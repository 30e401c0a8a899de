/*
 * test_slab_runtime.c - the SLAB runtime on one thread: array cache sizes,
 * refill and flush amounts as mm/slab.c computes them, each management type
 * (the OBJFREELIST array moving between objects), off-slab freelists from
 * kmalloc caches, the kernel-version rules (kmalloc_large from 6.1,
 * init_on_free), cache_reap's node timer, error codes for bad frees,
 * shrinking, exhaustion, the events a view replays, the snapshot, and
 * randomized runs with sl_slab_validate() after every step.
 */
#include "check.h"

#include "../src/slab/slab.h"

#define MiB ((size_t)1 << 20)

static sl_slab *world_v(unsigned ncpus, size_t arena, sl_slab_variant v, sl_trace *tr)
{
    sl_slab *sl = NULL;
    sl_slab_config cfg = {.ncpus = ncpus, .arena_bytes = arena, .variant = v, .trace = tr};
    int rc = sl_slab_create(&cfg, &sl);
    SL_CHECK_EQ(rc, SL_OK);
    return sl;
}

/* A world of the default kernel (6.7). */
static sl_slab *world(unsigned ncpus, size_t arena, sl_slab_rules rules, sl_trace *tr)
{
    return world_v(ncpus, arena, (sl_slab_variant){.rules = rules}, tr);
}

static const sl_slab_variant v410_after = {.rules = SL_SLAB_RULES_AFTER, .kernel = SL_SLAB_KERNEL(4, 10)};

/* A 16 MiB world of the default kernel recording events in rings of `ring` per CPU; NULL if either fails. */
static sl_slab *traced_world(sl_trace *tr, unsigned ncpus, sl_slab_rules rules, unsigned ring)
{
    if (sl_trace_init(tr, ncpus, ring) != SL_OK)
        return NULL;
    tr->enabled = true;
    return world(ncpus, 16 * MiB, rules, tr);
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
    cfg.variant.rules = (sl_slab_rules)7;
    SL_CHECK_EQ(sl_slab_create(&cfg, &sl), SL_EINVAL);
    cfg.variant = (sl_slab_variant){.kernel = SL_SLAB_KERNEL(6, 8)};
    SL_CHECK_EQ(sl_slab_create(&cfg, &sl), SL_EINVAL);
    cfg.variant = (sl_slab_variant){.kernel = SL_SLAB_KERNEL(5, 2), .init_on_free = true};
    SL_CHECK_EQ(sl_slab_create(&cfg, &sl), SL_EINVAL);
    if (sizeof(size_t) > 4) { /* pfns must fit the 24 bits events name off-slab freelists with */
        cfg.variant = (sl_slab_variant){0};
        cfg.arena_bytes = (size_t)SL_PAGE_SIZE << 24 << 1;
        SL_CHECK_EQ(sl_slab_create(&cfg, &sl), SL_EINVAL);
    }
}

/* enable_cpucache's limits, batchcounts and shared arrays (4.10: kmalloc caches up to 4 MiB). */
static void test_array_sizes(void)
{
    sl_slab *one = world_v(1, 16 * MiB, v410_after, NULL);
    sl_slab *two = world_v(2, 16 * MiB, v410_after, NULL);
    SL_REQUIRE(one && two);
    static const struct {
        size_t size;
        unsigned limit, batch;
    } want[] = {{32, 120, 60},  {256, 120, 60}, {512, 54, 27},  {1024, 54, 27}, {2048, 24, 12},
                {4096, 24, 12}, {8192, 8, 4},   {131072, 8, 4}, {262144, 1, 1}, {4 * MiB, 1, 1}};
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
    sl_slab_reap(sl, 0, 0); /* touched by the allocations: only untouched now */
    SL_CHECK_EQ(info(c).cpu_avail, i0.cpu_avail);
    sl_slab_reap(sl, 0, SL_SLAB_REAP_CPU_MS);
    SL_CHECK_EQ(info(c).cpu_avail, i0.cpu_avail - (120 + 4) / 5);
    SL_CHECK(valid(sl));
    SL_REQUIRE(i0.total_slabs > 0);
    /* Every object is free: reaping alone empties the array and gives back every slab, one per node run. */
    for (unsigned r = 0; r < 20; r++) {
        unsigned long slabs = info(c).total_slabs;
        sl_slab_reap(sl, 0, (r + 1) * SL_SLAB_REAP_NODE_MS);
        SL_CHECK(info(c).total_slabs + 1 >= slabs);
        SL_CHECK(valid(sl));
    }
    SL_CHECK_EQ(info(c).cpu_avail, 0);
    SL_CHECK_EQ(info(c).total_slabs, 0);
    sl_slab_destroy(sl);
}

/*
 * The node part of cache_reap (shared array, free slabs) runs once per
 * REAPTIMEOUT_NODE (4 s) per node, on whichever CPU's reap finds the timer
 * expired, not on every CPU's run; caches are staggered by a second per id.
 */
static void test_reap_node_tick(void)
{
#if defined(SLABLAB_BENCH)
    SL_SKIP("benchmark build: no events");
#endif
    sl_trace tr;
    sl_slab *sl = traced_world(&tr, 2, SL_SLAB_RULES_AFTER, 4096);
    SL_REQUIRE(sl);
    sl_slab_spec spec = {.name = "tick-a", .object_size = 32};
    sl_slab_cache *c;
    SL_REQUIRE(sl_slab_cache_create(sl, &spec, &c) == SL_OK); /* id 20: first due at 4000 ms */
    snprintf(spec.name, sizeof spec.name, "tick-b");
    SL_REQUIRE(sl_slab_cache_create(sl, &spec, &c) == SL_OK); /* id 21: first due at 5000 ms */
    static const struct {
        unsigned cpu;
        uint64_t now;
        int ran; /* cache id whose node part ran, -1 none */
    } steps[] = {
        {0, 0, -1},    {1, 2000, -1}, {0, 3999, -1}, {0, 4000, 20}, {1, 4001, -1},  {1, 5000, 21},
        {0, 7999, -1}, {1, 8000, 20}, {0, 8001, -1}, {0, 9000, 21}, {1, 12000, 20},
    };
    static sl_event ev[4096];
    for (unsigned cpu = 0; cpu < 2; cpu++)
        sl_trace_drain(&tr, cpu, ev, 4096);
    for (unsigned i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        sl_slab_reap(sl, steps[i].cpu, steps[i].now);
        unsigned n = sl_trace_drain(&tr, steps[i].cpu, ev, 4096), runs = 0, ops = 0;
        for (unsigned k = 0; k < n; k++) {
            if (ev[k].kind == SL_EV_SLAB_REAP_NODE && ev[k].cache >= 20) {
                runs++;
                SL_CHECK_EQ(ev[k].cache, steps[i].ran);
                SL_CHECK_EQ(ev[k].arg0, steps[i].now);
                SL_CHECK_EQ(ev[k].arg1, steps[i].now + SL_SLAB_REAP_NODE_MS);
            }
            ops += ev[k].kind == SL_EV_OP_BEGIN && ev[k].arg0 == SL_SLAB_OP_REAP;
        }
        SL_CHECK_EQ(runs, steps[i].ran < 0 ? 0 : 1);
        SL_CHECK_EQ(ops, 1);
        SL_CHECK_EQ(ev[0].kind, SL_EV_OP_BEGIN);
        SL_CHECK_EQ(ev[n - 1].kind, SL_EV_OP_END);
    }
    SL_CHECK(valid(sl));
    sl_slab_destroy(sl);
    sl_trace_destroy(&tr);
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

/*
 * Before OBJFREELIST, kmalloc-256 is OFF_SLAB: each slab holds a kmalloc-32
 * object.  kmalloc-128, created first at boot, could not be.
 */
static void test_off_slab_freelist_from_kmalloc(void)
{
    sl_slab *sl = world(1, 16 * MiB, SL_SLAB_RULES_BEFORE, NULL);
    SL_REQUIRE(sl);
    SL_CHECK_EQ(info(sl_slab_kmalloc_cache(sl, 128)).g.mgmt, SL_SLAB_NORMAL);
    sl_slab_cache *k128 = sl_slab_kmalloc_cache(sl, 256), *k32 = sl_slab_kmalloc_cache(sl, 32);
    SL_REQUIRE(info(k128).g.mgmt == SL_SLAB_OFF);
    void *p = sl_slab_kmalloc(sl, 0, 256);
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
    sl_slab *sl =
        world_v(1, 8 * MiB, (sl_slab_variant){.rules = SL_SLAB_RULES_BEFORE, .kernel = SL_SLAB_KERNEL(6, 0)}, NULL);
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
    sl_slab *sl = traced_world(&tr, 1, SL_SLAB_RULES_AFTER, 4096);
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

/* From 6.1, kmalloc above 8 KiB takes whole pages from the page allocator; 6.0 still had kmalloc-16k. */
static void test_kmalloc_large(void)
{
    sl_slab *sl = world(1, 16 * MiB, SL_SLAB_RULES_AFTER, NULL);
    SL_REQUIRE(sl);
    SL_CHECK(sl_slab_kmalloc_cache(sl, 8192) != NULL);
    SL_CHECK(sl_slab_kmalloc_cache(sl, 8193) == NULL);
    sl_page_stats ps0, ps;
    sl_page_stats_get(sl_slab_zone(sl), &ps0);
    char *p = sl_slab_kmalloc(sl, 0, 8193);
    SL_REQUIRE(p);
    SL_CHECK_EQ((uintptr_t)(p - (char *)sl_slab_zone(sl)->base) % (4 * SL_PAGE_SIZE), 0); /* order 2, aligned */
    sl_page_stats_get(sl_slab_zone(sl), &ps);
    SL_CHECK_EQ(ps0.pages_free - ps.pages_free, 4);
    memset(p, 0x5c, 8193);
    char *q = sl_slab_kmalloc(sl, 0, 4u << 20); /* KMALLOC_MAX_SIZE: a whole order-10 block */
    SL_REQUIRE(q);
    SL_CHECK(sl_slab_kmalloc(sl, 0, (4u << 20) + 1) == NULL);
    SL_CHECK(valid(sl));
    uint32_t pfn, idx;
    SL_CHECK(!sl_slab_object_ref(sl, p, &pfn, &idx)); /* not a slab object */
    if (SL_DEBUG)
        SL_CHECK_EQ(sl_slab_kfree(sl, 0, p + 64), SL_EMISALIGNED);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_OK);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_EFOREIGN); /* its pages are free now */
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, q), SL_OK);
    sl_page_stats_get(sl_slab_zone(sl), &ps);
    SL_CHECK_EQ(ps.pages_free, ps0.pages_free);
    SL_CHECK(valid(sl));
    sl_slab_destroy(sl);

    sl = world_v(1, 16 * MiB, (sl_slab_variant){.kernel = SL_SLAB_KERNEL(6, 0)}, NULL);
    SL_REQUIRE(sl);
    p = sl_slab_kmalloc(sl, 0, 8193);
    SL_REQUIRE(p);
    SL_CHECK(sl_slab_object_ref(sl, p, &pfn, &idx)); /* an object of kmalloc-16k */
    SL_CHECK_EQ(info(sl_slab_kmalloc_cache(sl, 8193)).total_slabs, 1);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_OK);
    SL_CHECK(valid(sl));
    sl_slab_destroy(sl);
}

/* init_on_free (5.3 on): no OBJFREELIST, and every freed object is zeroed; constructor caches keep theirs. */
static void test_init_on_free(void)
{
    sl_slab *sl = world_v(1, 16 * MiB, (sl_slab_variant){.rules = SL_SLAB_RULES_AFTER, .init_on_free = true}, NULL);
    SL_REQUIRE(sl);
    for (unsigned id = 0; id < sl_slab_cache_count(sl); id++) {
        sl_slab_cache *c = sl_slab_cache_by_id(sl, id);
        if (c)
            SL_CHECK(info(c).g.mgmt != SL_SLAB_OBJFREELIST);
    }
    unsigned char *p = sl_slab_kmalloc(sl, 0, 200);
    SL_REQUIRE(p);
    memset(p, 0xaa, 200);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_OK);
    unsigned nonzero = 0;
    for (unsigned i = 0; i < 256; i++) /* kmalloc-256: object_size 256 */
        nonzero += p[i] != 0;
    SL_CHECK_EQ(nonzero, 0);
    sl_slab_spec spec = {.name = "ctor-200", .object_size = 200, .flags = SL_SLAB_CTOR};
    sl_slab_cache *c;
    SL_REQUIRE(sl_slab_cache_create(sl, &spec, &c) == SL_OK);
    p = sl_slab_cache_alloc(c, 0);
    SL_REQUIRE(p);
    memset(p, 0xaa, 200);
    SL_CHECK_EQ(sl_slab_cache_free(c, 0, p), SL_OK);
    SL_CHECK_EQ(p[100], 0xaa); /* slab_want_init_on_free is false with a constructor */
    SL_CHECK(valid(sl));
    sl_slab_destroy(sl);
}

/* Drains every ring of tr into ev; returns the count (in emission order: one CPU). */
static unsigned drain_all(sl_trace *tr, sl_event *ev, unsigned max)
{
    unsigned n = 0;
    for (unsigned cpu = 0; cpu < tr->ncpus; cpu++)
        n += sl_trace_drain(tr, cpu, ev + n, max - n);
    return n;
}

/* ALLOC_HIT and FREE_HIT name the object; every event of an operation carries its number. */
static void test_event_objects(void)
{
#if defined(SLABLAB_BENCH)
    SL_SKIP("benchmark build: no events");
#endif
    sl_trace tr;
    sl_slab *sl = traced_world(&tr, 1, SL_SLAB_RULES_AFTER, 8192);
    SL_REQUIRE(sl);
    static sl_event ev[8192];
    void *p = sl_slab_kmalloc(sl, 0, 64), *q = sl_slab_kmalloc(sl, 0, 64);
    SL_REQUIRE(p && q);
    drain_all(&tr, ev, 8192);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, q), SL_OK);
    void *again = sl_slab_kmalloc(sl, 0, 64);
    SL_CHECK(again == q);
    unsigned n = drain_all(&tr, ev, 8192);
    uint32_t pfn, idx;
    SL_REQUIRE(sl_slab_object_ref(sl, q, &pfn, &idx));
    unsigned hits = 0;
    uint32_t op = 0;
    for (unsigned i = 0; i < n; i++) {
        if (ev[i].kind == SL_EV_OP_BEGIN)
            op = ev[i].op;
        else
            SL_CHECK_EQ(ev[i].op, op);
        if (ev[i].kind == SL_EV_SLAB_ALLOC_HIT || ev[i].kind == SL_EV_SLAB_FREE_HIT) {
            hits++;
            SL_CHECK_EQ(ev[i].slab, pfn);
            SL_CHECK_EQ(ev[i].obj, idx);
            SL_CHECK_EQ(ev[i].cache, 1);
        }
    }
    SL_CHECK_EQ(hits, 2);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_OK);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, q), SL_OK);
    sl_slab_destroy(sl);
    sl_trace_destroy(&tr);
}

/*
 * A flush to the shared array, a refill from it, a drain and a shrink: each
 * batch is announced and then named object by object, and the world-wide
 * operations are bracketed by OP_BEGIN / OP_END.
 */
static void test_event_batches(void)
{
#if defined(SLABLAB_BENCH)
    SL_SKIP("benchmark build: no events");
#endif
    sl_trace tr;
    sl_slab *sl = traced_world(&tr, 2, SL_SLAB_RULES_AFTER, 1 << 14);
    SL_REQUIRE(sl);
    sl_slab_spec spec = {.name = "batch-512", .object_size = 512};
    sl_slab_cache *c;
    SL_REQUIRE(sl_slab_cache_create(sl, &spec, &c) == SL_OK); /* limit 54, batchcount 27, shared 8 x 27 */
    static void *objs[55];
    for (unsigned k = 0; k < 55; k++)
        SL_REQUIRE((objs[k] = sl_slab_cache_alloc(c, 0)) != NULL);
    sl_slab_drain_cpu(sl, 0); /* the refills' leftovers: the array starts empty */
    static sl_event ev[1 << 14];
    drain_all(&tr, ev, 1 << 14);
    for (unsigned k = 0; k < 55; k++) /* the 55th free overflows the array: 27 go to the shared array */
        SL_CHECK_EQ(sl_slab_cache_free(c, 0, objs[k]), SL_OK);
    unsigned n = drain_all(&tr, ev, 1 << 14), flush = 0, moves = 0;
    for (unsigned i = 0; i < n; i++) {
        if (ev[i].kind == SL_EV_SLAB_FLUSH) {
            flush++;
            SL_CHECK_EQ(ev[i].arg0, 27);
            SL_CHECK_EQ(ev[i].arg1, 1);
            for (unsigned k = 0; k < 27 && i + 1 + k < n; k++) { /* the oldest 27, bottom first */
                const sl_event *m = &ev[i + 1 + k];
                uint32_t pfn, idx;
                SL_REQUIRE(sl_slab_object_ref(sl, objs[k], &pfn, &idx));
                SL_CHECK_EQ(m->kind, SL_EV_SLAB_ARRAY_MOVE);
                SL_CHECK(m->slab == pfn && m->obj == idx);
                SL_CHECK(m->arg0 == 0 && m->arg1 == 0xffff && m->arg2 == k);
                moves++;
            }
        }
    }
    SL_CHECK_EQ(flush, 1);
    SL_CHECK_EQ(moves, 27);
    /* CPU 1 refills from the shared array: the newest 16 (BATCHREFILL_LIMIT, array untouched). */
    void *got = sl_slab_cache_alloc(c, 1);
    SL_REQUIRE(got);
    n = drain_all(&tr, ev, 1 << 14);
    unsigned refill = 0;
    moves = 0;
    for (unsigned i = 0; i < n; i++) {
        if (ev[i].kind == SL_EV_SLAB_REFILL_SHARED) {
            refill++;
            SL_CHECK_EQ(ev[i].arg0, 16);
            SL_CHECK_EQ(ev[i].arg1, 27 - 16);
        } else if (ev[i].kind == SL_EV_SLAB_ARRAY_MOVE) {
            uint32_t pfn, idx;
            SL_REQUIRE(sl_slab_object_ref(sl, objs[11 + moves], &pfn, &idx)); /* shared slots 11..26 */
            SL_CHECK(ev[i].slab == pfn && ev[i].obj == idx);
            SL_CHECK(ev[i].arg0 == 0xffff && ev[i].arg1 == 1 && ev[i].arg2 == moves);
            moves++;
        }
    }
    SL_CHECK_EQ(refill, 1);
    SL_CHECK_EQ(moves, 16);
    SL_CHECK(got == objs[26]); /* the top of CPU 1's array: the newest object moved */
    SL_CHECK_EQ(sl_slab_cache_free(c, 1, got), SL_OK);
    /* drain_cpu: bracketed, the DRAIN announced before its PUT_OBJs. */
    drain_all(&tr, ev, 1 << 14);
    sl_slab_drain_cpu(sl, 0);
    n = drain_all(&tr, ev, 1 << 14);
    SL_REQUIRE(n > 2);
    SL_CHECK(ev[0].kind == SL_EV_OP_BEGIN && ev[0].arg0 == SL_SLAB_OP_DRAIN && ev[0].cache == 0xffff);
    SL_CHECK(ev[n - 1].kind == SL_EV_OP_END && ev[n - 1].arg0 == SL_SLAB_OP_DRAIN && ev[n - 1].arg1 == 28);
    SL_CHECK(ev[1].kind == SL_EV_SLAB_DRAIN && ev[1].arg0 == 28 && ev[1].arg1 == 0);
    unsigned puts = 0;
    for (unsigned i = 0; i < n; i++)
        puts += ev[i].kind == SL_EV_SLAB_PUT_OBJ;
    SL_CHECK_EQ(puts, 28);
    /* shrink: one operation on CPU 0; the shared array's 11 drained; the slabs given back. */
    sl_slab_drain_cpu(sl, 1);
    drain_all(&tr, ev, 1 << 14);
    unsigned destroyed = sl_slab_shrink(sl);
    SL_CHECK(destroyed > 0);
    n = drain_all(&tr, ev, 1 << 14);
    SL_CHECK(ev[0].kind == SL_EV_OP_BEGIN && ev[0].arg0 == SL_SLAB_OP_SHRINK);
    SL_CHECK(ev[n - 1].kind == SL_EV_OP_END && ev[n - 1].arg0 == SL_SLAB_OP_SHRINK && ev[n - 1].arg1 == destroyed);
    unsigned shared_drains = 0, destroys = 0;
    for (unsigned i = 0; i < n; i++) {
        shared_drains += ev[i].kind == SL_EV_SLAB_DRAIN && ev[i].arg1 == 1 && ev[i].arg0 == 11;
        destroys += ev[i].kind == SL_EV_SLAB_DESTROY;
        if (ev[i].kind != SL_EV_PAGE_FREE) /* the page allocator's events carry no operation */
            SL_CHECK_EQ(ev[i].op, ev[0].op);
    }
    SL_CHECK_EQ(shared_drains, 1);
    SL_CHECK_EQ(destroys, destroyed);
    SL_CHECK(valid(sl));
    sl_slab_destroy(sl);
    sl_trace_destroy(&tr);
}

/* Little-endian u32 at byte `at` of a snapshot. */
static uint32_t snap32(const unsigned char *b, size_t at)
{
    uint32_t v;
    memcpy(&v, b + at, 4);
    return v;
}

/* The snapshot's layout words (sl_slab_snapshot_layout), named. */
enum { L_VERSION, L_HDR, L_CACHE, L_ARRAY, L_SLAB, L_REF };

/*
 * GROW and DESTROY of an OFF_SLAB cache name the kmalloc object holding the
 * slab's freelist array: the one the snapshot shows the slab pointing to.
 */
static void test_event_offslab_freelist(void)
{
#if defined(SLABLAB_BENCH)
    SL_SKIP("benchmark build: no events");
#endif
    sl_trace tr;
    sl_slab *sl = traced_world(&tr, 1, SL_SLAB_RULES_BEFORE, 4096);
    SL_REQUIRE(sl);
    sl_slab_cache *k256 = sl_slab_kmalloc_cache(sl, 256);
    SL_REQUIRE(info(k256).g.mgmt == SL_SLAB_OFF);
    static sl_event ev[4096];
    drain_all(&tr, ev, 4096);
    void *p = sl_slab_kmalloc(sl, 0, 256);
    SL_REQUIRE(p);
    unsigned n = drain_all(&tr, ev, 4096);
    uint32_t grow_fl = SL_NONE32, grow_slab = SL_NONE32;
    for (unsigned i = 0; i < n; i++)
        if (ev[i].kind == SL_EV_SLAB_GROW && ev[i].cache == 5) {
            grow_slab = ev[i].slab;
            grow_fl = ev[i].arg2;
            SL_CHECK_EQ(ev[i].arg0, 0); /* order */
        }
    SL_REQUIRE(grow_fl != SL_NONE32);
    /* The snapshot's slab record of that slab: freelist kind 2 (off-slab) at (pfn, index). */
    uint32_t layout[SL_SLAB_SNAPSHOT_LAYOUT_WORDS];
    sl_slab_snapshot_layout(layout);
    long need = sl_slab_snapshot(sl, NULL, 0);
    SL_REQUIRE(need < 0);
    unsigned char *b = malloc((size_t)-need);
    SL_REQUIRE(b && sl_slab_snapshot(sl, b, (size_t)-need) == -need);
    uint32_t nslabs = snap32(b, 24), off_slabs = snap32(b, 48);
    bool found = false;
    for (uint32_t i = 0; i < nslabs; i++) {
        const unsigned char *r = b + off_slabs + (size_t)layout[L_SLAB] * i;
        if (snap32(r, 0) != grow_slab)
            continue;
        found = true;
        SL_CHECK_EQ(r[7], 2);
        SL_CHECK_EQ(snap32(r, 20) << 8 | snap32(r, 24), grow_fl);
    }
    SL_CHECK(found);
    free(b);
    /* Destroying the slab names the same object, freed with it. */
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, p), SL_OK);
    drain_all(&tr, ev, 4096);
    sl_slab_shrink(sl);
    n = drain_all(&tr, ev, 4096);
    unsigned destroys = 0;
    for (unsigned i = 0; i < n; i++)
        if (ev[i].kind == SL_EV_SLAB_DESTROY && ev[i].slab == grow_slab) {
            destroys++;
            SL_CHECK_EQ(ev[i].arg1, grow_fl);
        }
    SL_CHECK_EQ(destroys, 1);
    sl_slab_destroy(sl);
    sl_trace_destroy(&tr);
}

/* The snapshot agrees with the cache info and with itself, and refuses a short buffer. */
static void test_snapshot(void)
{
    sl_slab *sl = world(2, 16 * MiB, SL_SLAB_RULES_AFTER, NULL);
    SL_REQUIRE(sl);
    sl_slab_spec spec = {.name = "snap-100", .object_size = 100, .flags = SL_SLAB_CTOR}; /* NORMAL(leftover) */
    sl_slab_cache *c;
    SL_REQUIRE(sl_slab_cache_create(sl, &spec, &c) == SL_OK);
    static void *objs[300];
    for (unsigned k = 0; k < 300; k++)
        SL_REQUIRE((objs[k] = sl_slab_cache_alloc(c, k % 2)) != NULL);
    for (unsigned k = 0; k < 300; k += 3)
        SL_CHECK_EQ(sl_slab_cache_free(c, 0, objs[k]), SL_OK);
    void *big[3];
    for (unsigned k = 0; k < 3; k++)
        SL_REQUIRE((big[k] = sl_slab_kmalloc(sl, 1, 1000)) != NULL); /* kmalloc-1k: OBJFREELIST */
    void *large = sl_slab_kmalloc(sl, 0, 20000);
    SL_REQUIRE(large);
    uint32_t layout[SL_SLAB_SNAPSHOT_LAYOUT_WORDS];
    sl_slab_snapshot_layout(layout);
    SL_CHECK_EQ(layout[L_VERSION], 1);
    long need = sl_slab_snapshot(sl, NULL, 0);
    SL_REQUIRE(need < 0);
    unsigned char *b = malloc((size_t)-need);
    SL_REQUIRE(b);
    SL_CHECK_EQ(sl_slab_snapshot(sl, b, (size_t)-need - 1), need);
    SL_REQUIRE(sl_slab_snapshot(sl, b, (size_t)-need) == -need);
    SL_CHECK_EQ(snap32(b, 0), 0x42414c53u);
    SL_CHECK_EQ(snap32(b, 8), (uint32_t)-need);
    SL_CHECK_EQ(snap32(b, 12), 2);
    SL_CHECK_EQ(snap32(b, 16), 12); /* 11 kmalloc caches of 6.7 and snap-100 */
    SL_CHECK_EQ(snap32(b, 32), 1);  /* one kmalloc_large block */
    SL_CHECK_EQ(snap32(b, 64), 607);
    uint32_t ncaches = snap32(b, 16), off_caches = snap32(b, 40), off_arrays = snap32(b, 44);
    uint32_t off_slabs = snap32(b, 48), off_entries = snap32(b, 52), off_fl = snap32(b, 60);
    for (uint32_t r = 0; r < ncaches; r++) {
        const unsigned char *cr = b + off_caches + (size_t)layout[L_CACHE] * r;
        sl_slab_cache *cc = sl_slab_cache_by_id(sl, snap32(cr, 64));
        SL_REQUIRE(cc);
        sl_slab_cache_info ci = info(cc);
        SL_CHECK(!strcmp((const char *)cr, ci.name));
        SL_CHECK_EQ(snap32(cr, 84), ci.g.num);
        SL_CHECK_EQ(snap32(cr, 88), ci.g.mgmt);
        SL_CHECK_EQ(snap32(cr, 128 + 4), ci.total_slabs);
        uint32_t first_slab = snap32(cr, 148), nslabs = snap32(cr, 152), first_array = snap32(cr, 156);
        SL_CHECK_EQ(nslabs, ci.total_slabs);
        /* free objects: num - active over the slabs; and the freelist bytes list them. */
        unsigned long free_objs = 0, entries = 0;
        for (uint32_t i = first_slab; i < first_slab + nslabs; i++) {
            const unsigned char *sr = b + off_slabs + (size_t)layout[L_SLAB] * i;
            uint16_t active;
            memcpy(&active, sr + 8, 2);
            free_objs += ci.g.num - active;
            static const uint8_t kind_of[SL_SLAB_NMGMT] = {1, 0, 0, 2};
            if (ci.g.mgmt == SL_SLAB_OBJFREELIST && active == ci.g.num)
                SL_CHECK_EQ(sr[7], 3); /* a full OBJFREELIST slab has no array */
            else
                SL_CHECK_EQ(sr[7], kind_of[ci.g.mgmt]);
            uint64_t seen = 0;
            for (unsigned pos = active; pos < ci.g.num && ci.g.num <= 64; pos++)
                seen |= 1ull << b[off_fl + snap32(sr, 28) + pos];
            if (ci.g.num <= 64)
                SL_CHECK_EQ((unsigned long)__builtin_popcountll(seen), ci.g.num - active);
        }
        SL_CHECK_EQ(free_objs, ci.free_objects);
        for (uint32_t a = 0; a < 3; a++) {
            const unsigned char *ar = b + off_arrays + (size_t)layout[L_ARRAY] * (first_array + a);
            SL_CHECK_EQ(snap32(ar, 0), a < 2 ? a : 0xffff);
            entries += snap32(ar, 4);
            for (uint32_t e = 0; e < snap32(ar, 4); e++) {
                const unsigned char *er = b + off_entries + 8 * (snap32(ar, 20) + e);
                SL_CHECK(sl_slab_object_at(cc, snap32(er, 0), snap32(er, 4)) != NULL);
            }
        }
        SL_CHECK_EQ(entries, ci.cpu_avail + ci.shared_avail);
    }
    free(b);
    SL_CHECK_EQ(sl_slab_kfree(sl, 0, large), SL_OK);
    sl_slab_destroy(sl);
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

static void randomized(sl_slab_variant variant, uint64_t seed, unsigned steps)
{
    enum { NCPU = 3, MAXH = 3000 };
    sl_slab *sl = world_v(NCPU, 32 * MiB, variant, NULL);
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
            if (SL_DEBUG && (r >> 40) % 8 == 0) { /* and again: must be refused */
                /* a kmalloc_large block's pages are free now: a pointer into free pages */
                bool large = !h[i].c && !sl_slab_kmalloc_cache(sl, h[i].size);
                SL_REQUIRE(sl_slab_kfree(sl, (cpu + 1) % NCPU, h[i].p) == (large ? SL_EFOREIGN : SL_EDOUBLEFREE));
            }
            h[i] = h[--nh];
        } else if (what < 94) {
            sl_slab_drain_cpu(sl, cpu);
        } else if (what < 97) {
            sl_slab_reap(sl, cpu, (uint64_t)step * 100);
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

/* 6.7 (kmalloc_large above 8 KiB), 4.10 (kmalloc caches up to 4 MiB), and 6.7 with init_on_free. */
static void test_randomized_after(void)
{
    randomized((sl_slab_variant){.rules = SL_SLAB_RULES_AFTER}, 7, (unsigned)sl_test_scale(3000));
}
static void test_randomized_before(void)
{
    randomized((sl_slab_variant){.rules = SL_SLAB_RULES_BEFORE}, 11, (unsigned)sl_test_scale(3000));
}
static void test_randomized_410(void) { randomized(v410_after, 13, (unsigned)sl_test_scale(3000)); }
static void test_randomized_init_on_free(void)
{
    randomized((sl_slab_variant){.rules = SL_SLAB_RULES_AFTER, .init_on_free = true}, 17,
               (unsigned)sl_test_scale(3000));
}

int main(void)
{
    SL_RUN(test_config_errors);
    SL_RUN(test_array_sizes);
    SL_RUN(test_refill_and_flush_amounts);
    SL_RUN(test_reap);
    SL_RUN(test_reap_node_tick);
    SL_RUN(test_management_types);
    SL_RUN(test_objfreelist_array_moves);
    SL_RUN(test_off_slab_freelist_from_kmalloc);
    SL_RUN(test_bad_frees);
    SL_RUN(test_exhaustion);
    SL_RUN(test_validate_catches_corruption);
    SL_RUN(test_events);
    SL_RUN(test_kmalloc_large);
    SL_RUN(test_init_on_free);
    SL_RUN(test_event_objects);
    SL_RUN(test_event_batches);
    SL_RUN(test_event_offslab_freelist);
    SL_RUN(test_snapshot);
    SL_RUN(test_randomized_after);
    SL_RUN(test_randomized_before);
    SL_RUN(test_randomized_410);
    SL_RUN(test_randomized_init_on_free);
    return sl_check_summary();
}
