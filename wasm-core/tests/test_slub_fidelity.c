/* test_slub_fidelity.c - the outcomes where the model once differed from mm/slub.c 6.8+: debug
 * checks only with CONSISTENCY_CHECKS, a failed allocation check that disables the slab and goes
 * on, FREELIST_HARDENED's self-link check on every path, __OBJECT_POISON, the sysfs tunables and
 * boot parameters, the order fallback, TID_STEP, PREEMPT_RT, and the counters under the kernel's
 * names and order. */
#include "slub_world.h"

#include <string.h>

/* Events of `kind` left in every CPU's ring (draining them); *last gets the last one seen. */
static unsigned events_of(world *w, unsigned kind, sl_event *last)
{
#if defined(SLABLAB_BENCH)
    (void)w, (void)kind, (void)last;
    return 0;
#else
    static sl_event ev[1 << 16];
    unsigned count = 0;
    for (unsigned cpu = 0; cpu < w->tr.ncpus; cpu++) {
        unsigned n = sl_trace_drain(&w->tr, cpu, ev, 1 << 16);
        for (unsigned i = 0; i < n; i++)
            if (ev[i].kind == kind) {
                count++;
                if (last)
                    *last = ev[i];
            }
    }
    return count;
#endif
}

#if defined(SLABLAB_BENCH)
#define EXPECT_EVENTS(n) 0
#else
#define EXPECT_EVENTS(n) (n)
#endif

static bool all_bytes(const void *p, int v, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != v)
            return false;
    return true;
}

static uint32_t pfn_of(world *w, const void *obj)
{
    uint32_t pfn = SL_NONE32, idx;
    (void)sl_slub_object_index(w->s, obj, &pfn, &idx);
    return pfn;
}

/* ---- 1. checks run with CONSISTENCY_CHECKS only -------------------------- */

static void test_poison_and_red_zone_without_checks(void)
{
    /* POISON only: a write after free is not checked on the next allocation (the kernel's
     * check_object runs from alloc_consistency_checks alone); the poison is still written. */
    world w;
    sl_slub_config cfg = {.object_size = 64, .flags = SL_SLUB_POISON, .track = 1};
    SL_REQUIRE(world_init(&w, 1, 1u << 20, cfg));
    void *a, *b;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_OK);
    SL_CHECK(all_bytes(a, 0x6b, 63) && ((unsigned char *)a)[63] == 0xa5); /* POISON_FREE ... POISON_END */
    memset(a, 0, 8);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &b), SL_OK);
    SL_CHECK(b == a);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_ERRORS), 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);

    /* RED_ZONE only: an overflow is not checked on free; the red zones are still written. */
    cfg = (sl_slub_config){.object_size = 64, .flags = SL_SLUB_RED_ZONE, .track = 1};
    SL_REQUIRE(world_init(&w, 1, 1u << 20, cfg));
    const sl_slub_geometry *g = sl_slub_cache_geometry(w.s);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    SL_CHECK(all_bytes((char *)a + 64, 0xcc, g->inuse - 64)); /* SLUB_RED_ACTIVE */
    SL_CHECK(all_bytes((char *)a - g->red_left_pad, 0xcc, g->red_left_pad));
    ((unsigned char *)a)[64] = 0;
    SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_OK);
    SL_CHECK(all_bytes((char *)a + 64, 0xbb, g->inuse - 64)); /* SLUB_RED_INACTIVE again */
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_ERRORS), 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);

    /* With CONSISTENCY_CHECKS the same overflow is refused. */
    cfg.flags |= SL_SLUB_CONSISTENCY_CHECKS;
    SL_REQUIRE(world_init(&w, 1, 1u << 20, cfg));
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    ((unsigned char *)a)[64] = 0;
    SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_EREDZONE);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

/* ---- 2. a failed allocation check disables the slab, the allocation goes on ---- */

static void test_failed_alloc_check_disables_slab(void)
{
    world w;
    sl_slub_config cfg = {.object_size = 256, .flags = SL_SLUB_CONSISTENCY_CHECKS | SL_SLUB_POISON, .track = 1};
    SL_REQUIRE(world_init(&w, 1, 1u << 20, cfg));
    uint32_t n = sl_slub_cache_geometry(w.s)->objects;
    SL_REQUIRE(n >= 4 && n <= 64);
    void *o[128];
    for (uint32_t i = 0; i < 2 * n; i++) /* slabs A and B, both full: on no list */
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[i]), SL_OK);
    uint32_t pfn_a = pfn_of(&w, o[0]), pfn_b = pfn_of(&w, o[n]);
    SL_REQUIRE(pfn_a != pfn_b);
    /* Free two of A, then one of B: the node list is A (freelist o[2] -> o[1]), B (o[n]). */
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o[1]), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o[2]), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o[n]), SL_OK);
    (void)events_of(&w, 0, NULL);
    memset(o[2], 0, 8); /* a write after free into A's freelist head */
    void *x;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &x), SL_OK); /* A fails its check; B serves */
    SL_CHECK(x == o[n]);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_ERRORS), 1);
    sl_event ev;
    SL_CHECK_EQ(events_of(&w, SL_EV_SLUB_SLAB_DISABLED, &ev), EXPECT_EVENTS(1));
#if !defined(SLABLAB_BENCH)
    SL_CHECK_EQ(ev.slab, pfn_a);
    SL_CHECK_EQ(ev.arg0, 1); /* o[1] leaks with the slab */
#endif
    sl_slub_node_info ni;
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* A is out of use: its objects cannot be freed; B's can. */
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o[3]), SL_ECORRUPT);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, x), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* The next allocation takes B again, never A. */
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &x), SL_OK);
    SL_CHECK_EQ(pfn_of(&w, x), pfn_b);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

/* ---- 3. FREELIST_HARDENED's BUG_ON(object == fp) on every path ----------- */

static const sl_slub_config hardened = {.object_size = 256, .flags = SL_SLUB_FREELIST_HARDENED, .track = 1};

static void test_hardened_remote_double_free(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 2, 1u << 20, hardened));
    void *a, *b;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &b), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, a), SL_OK); /* __slab_free: a heads the slab's freelist */
    (void)events_of(&w, 0, NULL);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, a), SL_EDOUBLEFREE);
    sl_event ev;
    SL_CHECK_EQ(events_of(&w, SL_EV_SLUB_HARDENED_DOUBLE_FREE, &ev), EXPECT_EVENTS(1));
#if !defined(SLABLAB_BENCH)
    SL_CHECK_EQ(ev.arg0, 1); /* __slab_free */
#endif
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, b), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

static void test_hardened_bulk_adjacent_duplicate(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 1, 1u << 20, hardened));
    void *p[3];
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &p[0]), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &p[1]), SL_OK);
    p[2] = p[1]; /* the same object twice in a row */
    uint64_t fast = st(&w, 0, SL_SLUB_FREE_FASTPATH);
    unsigned cas;
    SL_CHECK_EQ(sl_slub_free_bulk(w.s, 0, 3, p, &cas), SL_EDOUBLEFREE);
    SL_CHECK_EQ(cas, 1); /* one group: p[1], p[0] */
#if !defined(SLABLAB_BENCH)
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_FREE_FASTPATH) - fast, 2); /* += count, the duplicate not counted */
#else
    (void)fast;
#endif
    SL_CHECK_EQ(valid(&w), SL_OK);
    void *x, *y;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &x), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &y), SL_OK);
    SL_CHECK(x != y);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

static void test_hardened_deactivate(void)
{
    /* An object on its CPU's freelist (alone, so the tail) freed again by another CPU lands on
     * the slab's freelist too; deactivate_slab would link it to itself. */
    world w;
    SL_REQUIRE(world_init(&w, 2, 1u << 20, hardened));
    uint32_t n = sl_slub_cache_geometry(w.s)->objects;
    void *o[64];
    SL_REQUIRE(n <= 64);
    for (uint32_t i = 0; i < n; i++)
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[i]), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o[5]), SL_OK); /* CPU freelist: o[5] */
    SL_CHECK_EQ(sl_slub_free(w.s, 1, o[5]), SL_OK); /* a double free no check sees: slab freelist o[5] */
    SL_CHECK_EQ(sl_slub_validate(w.s, NULL, 0), SL_EFREELIST);
    (void)events_of(&w, 0, NULL);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
    sl_event ev;
    SL_CHECK_EQ(events_of(&w, SL_EV_SLUB_HARDENED_DOUBLE_FREE, &ev), EXPECT_EVENTS(1));
#if !defined(SLABLAB_BENCH)
    SL_CHECK_EQ(ev.arg0, 2); /* deactivate_slab */
#endif
    /* o[5] is on the slab's freelist once; every other object is allocated. */
    SL_CHECK_EQ(valid(&w), SL_OK);
    for (uint32_t i = 0; i < n; i++)
        if (i != 5)
            SL_CHECK_EQ(sl_slub_free(w.s, 1, o[i]), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

static void test_hardened_free_to_partial_list(void)
{
    /* A debug cache without CONSISTENCY_CHECKS frees under list_lock: the self link is caught there. */
    world w;
    sl_slub_config cfg = {.object_size = 256, .flags = SL_SLUB_POISON | SL_SLUB_FREELIST_HARDENED};
    SL_REQUIRE(world_init(&w, 1, 1u << 20, cfg));
    void *a, *b;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &b), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_OK);
    (void)events_of(&w, 0, NULL);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_EDOUBLEFREE);
    sl_event ev;
    SL_CHECK_EQ(events_of(&w, SL_EV_SLUB_HARDENED_DOUBLE_FREE, &ev), EXPECT_EVENTS(1));
#if !defined(SLABLAB_BENCH)
    SL_CHECK_EQ(ev.arg0, 4); /* free_to_partial_list */
#endif
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

/* ---- 4. __OBJECT_POISON: not for TYPESAFE_BY_RCU or constructor caches --- */

static void test_no_poison_for_rcu_and_ctor(void)
{
    static const uint32_t kinds[2] = {SL_SLUB_TYPESAFE_BY_RCU, SL_SLUB_CTOR};
    for (unsigned k = 0; k < 2; k++) {
        world w;
        sl_slub_config cfg = {
            .object_size = 64, .flags = SL_SLUB_POISON | SL_SLUB_CONSISTENCY_CHECKS | kinds[k], .track = 1};
        SL_REQUIRE(world_init(&w, 1, 1u << 20, cfg));
        SL_CHECK_EQ(sl_slub_cache_geometry(w.s)->offset, 64); /* POISON still moves the free pointer out */
        void *a, *b;
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
        memset(a, 0x11, 64);
        SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_OK);
        SL_CHECK(all_bytes(a, 0x11, 64)); /* left as the user wrote it */
        ((unsigned char *)a)[3] = 0x22;   /* allowed: users of such caches touch free objects */
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &b), SL_OK);
        SL_CHECK(b == a);
        SL_CHECK_EQ(st(&w, -1, SL_SLUB_ERRORS), 0);
        SL_CHECK_EQ(valid(&w), SL_OK);
        world_fini(&w);
    }
}

/* ---- 5. tunables and boot parameters -------------------------------------- */

static void test_min_partial_tunable(void)
{
    for (uint32_t keep = 0; keep <= 7; keep += 7) {
        world w;
        SL_REQUIRE(world_init(&w, 1, 4u << 20, k256));
        SL_CHECK_EQ(sl_slub_cache_geometry(w.s)->min_partial, 5);
        SL_CHECK_EQ(sl_slub_set_min_partial(w.s, keep), SL_OK);
        SL_CHECK_EQ(sl_slub_cache_geometry(w.s)->min_partial, keep);
        static void *o[16 * 10];
        for (unsigned i = 0; i < 16 * 10; i++)
            SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[i]), SL_OK);
        SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
        for (unsigned i = 0; i < 16 * 10; i++)
            SL_CHECK_EQ(sl_slub_free(w.s, 0, o[i]), SL_OK);
        SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
        sl_slub_node_info ni;
        sl_slub_node_info_get(w.s, &ni);
        SL_CHECK_EQ(ni.nr_slabs, keep); /* empty slabs are kept only while the list is below min_partial */
        SL_CHECK_EQ(valid(&w), SL_OK);
        world_fini(&w);
    }
    SL_CHECK_EQ(sl_slub_set_min_partial(NULL, 1), SL_EINVAL);
}

/* How many slabs one refill from the node list moves to the CPU partial list. */
static void cpu_partial_node_moves(uint32_t cpu_partial, uint32_t *slabs_out, uint64_t *moved_out)
{
    *moved_out = UINT64_MAX;
    world w;
    SL_REQUIRE(world_init(&w, 2, 8u << 20, k256)); /* 16 objects per slab */
    if (cpu_partial != 52)
        SL_CHECK_EQ(sl_slub_set_cpu_partial(w.s, cpu_partial), SL_OK);
    *slabs_out = sl_slub_cache_geometry(w.s)->cpu_partial_slabs;
    enum { SLABS = 12 };
    static void *o[16 * SLABS];
    for (unsigned i = 0; i < 16 * SLABS; i++)
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[i]), SL_OK);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
    /* One object freed from each slab by CPU 1, then CPU 1's partial list flushed to the node. */
    for (unsigned k = 0; k < SLABS; k++) {
        SL_CHECK_EQ(sl_slub_free(w.s, 1, o[16 * k]), SL_OK);
        if (k % 2)
            SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 1), SL_OK); /* keep the CPU list from draining */
    }
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 1), SL_OK);
    sl_slub_node_info ni;
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, SLABS);
    void *x;
    uint64_t before = st(&w, 0, SL_SLUB_CPU_PARTIAL_NODE);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &x), SL_OK);
    uint64_t moved = st(&w, 0, SL_SLUB_CPU_PARTIAL_NODE) - before;
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_FROM_PARTIAL), 1);
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, SLABS - 1 - moved);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
    *moved_out = moved;
}

static void test_cpu_partial_tunable_and_get_partial_node(void)
{
    uint32_t slabs;
    uint64_t moved;
    /* get_partial_node moves slabs until more than cpu_partial_slabs / 2 went: 52 objects,
     * 16 per slab -> 7 slabs -> 4 moved. */
    cpu_partial_node_moves(52, &slabs, &moved);
    SL_CHECK_EQ(moved, 4);
    SL_CHECK_EQ(slabs, 7);
    cpu_partial_node_moves(120, &slabs, &moved); /* DIV_ROUND_UP(240, 16) = 15 -> 8 */
    SL_CHECK_EQ(moved, 8);
    SL_CHECK_EQ(slabs, 15);
    cpu_partial_node_moves(0, &slabs, &moved); /* cpu_partial 0: none */
    SL_CHECK_EQ(moved, 0);
    SL_CHECK_EQ(slabs, 0);

    /* Writing cpu_partial flushes every CPU (flush_all), and a debug cache takes only 0. */
    world w;
    SL_REQUIRE(world_init(&w, 2, 4u << 20, k256));
    void *a, *b;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 1, &b), SL_OK);
    SL_CHECK_EQ(sl_slub_set_cpu_partial(w.s, 30), SL_OK);
    SL_CHECK_EQ(sl_slub_cache_geometry(w.s)->cpu_partial, 30);
    SL_CHECK_EQ(sl_slub_cache_geometry(w.s)->cpu_partial_slabs, 4);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_CPUSLAB_FLUSH), 1);
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_CPUSLAB_FLUSH), 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* cpu_partial 0 on a cache with CPU partial lists: a full slab's first free still goes to
     * the CPU list (kmem_cache_has_cpu_partial), which drains at once each time. */
    SL_CHECK_EQ(sl_slub_set_cpu_partial(w.s, 0), SL_OK);
    static void *o[48];
    for (unsigned i = 0; i < 48; i++)
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[i]), SL_OK);
    for (unsigned k = 0; k < 3; k++)
        SL_CHECK_EQ(sl_slub_free(w.s, 1, o[16 * k + 1]), SL_OK);
    SL_CHECK(st(&w, 1, SL_SLUB_CPU_PARTIAL_FREE) >= 2);
    SL_CHECK(st(&w, 1, SL_SLUB_CPU_PARTIAL_DRAIN) >= 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
    sl_slub_config dbg = {.object_size = 256, .flags = SL_SLUB_STORE_USER};
    SL_REQUIRE(world_init(&w, 1, 1u << 20, dbg));
    SL_CHECK_EQ(sl_slub_set_cpu_partial(w.s, 30), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_set_cpu_partial(w.s, 0), SL_OK);
    world_fini(&w);
}

static void test_shrink_tunable(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 1, 4u << 20, k256));
    /* Eight slabs with 0 (full), 16 (empty), 3, 1, 16, 5, 1 and 2 free objects. */
    static const unsigned freed[8] = {0, 16, 3, 1, 16, 5, 1, 2};
    static void *o[16 * 8];
    for (unsigned i = 0; i < 16 * 8; i++)
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[i]), SL_OK);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
    SL_CHECK_EQ(sl_slub_set_min_partial(w.s, 10), SL_OK); /* keep the empty ones for shrink to take */
    for (unsigned k = 0; k < 8; k++)
        for (unsigned i = 0; i < freed[k]; i++)
            SL_CHECK_EQ(sl_slub_free(w.s, 0, o[16 * k + i]), SL_OK);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
    sl_slub_node_info ni;
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, 7);
    SL_CHECK_EQ(ni.partial_free, 16 + 3 + 1 + 16 + 5 + 1 + 2);
    int remaining = -1;
    SL_CHECK_EQ(sl_slub_shrink(w.s, &remaining), SL_OK);
    SL_CHECK_EQ(remaining, 1);
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_slabs, 6); /* both empty slabs discarded although min_partial is 10 */
    SL_CHECK_EQ(ni.nr_partial, 5);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* The list now runs from the fullest (fewest free objects) to the emptiest. */
    long need = -sl_slub_snapshot(w.s, NULL, 0);
    unsigned char *snap = malloc((size_t)need);
    SL_REQUIRE(snap && sl_slub_snapshot(w.s, snap, (size_t)need) == need);
    uint32_t nslabs, nnode, off_slab, off_list;
    memcpy(&nslabs, snap + 16, 4);
    memcpy(&nnode, snap + 24, 4);
    memcpy(&off_slab, snap + 44, 4);
    memcpy(&off_list, snap + 52, 4);
    SL_REQUIRE(nnode == 5);
    static const unsigned want[5] = {1, 1, 2, 3, 5};
    for (uint32_t i = 0; i < nnode; i++) {
        uint32_t pfn;
        memcpy(&pfn, snap + off_list + 4 * i, 4);
        for (uint32_t r = 0; r < nslabs; r++) {
            const unsigned char *rec = snap + off_slab + 32 * r;
            uint32_t rp;
            uint16_t objects, inuse;
            memcpy(&rp, rec, 4);
            memcpy(&objects, rec + 8, 2);
            memcpy(&inuse, rec + 10, 2);
            if (rp == pfn)
                SL_CHECK_EQ((unsigned)(objects - inuse), want[i]);
        }
    }
    free(snap);
    /* Freeing the rest and shrinking leaves no slab at all. */
    for (unsigned k = 0; k < 8; k++)
        for (unsigned i = freed[k]; i < 16; i++)
            SL_CHECK_EQ(sl_slub_free(w.s, 0, o[16 * k + i]), SL_OK);
    SL_CHECK_EQ(sl_slub_shrink(w.s, &remaining), SL_OK);
    SL_CHECK_EQ(remaining, 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

static void test_boot_parameters(void)
{
    sl_slub_geometry g;
    /* 256-byte objects on 2 CPUs: order 0, 16 objects by default. */
    SL_REQUIRE(sl_slub_calculate_geometry(256, 256, SL_SLUB_KMALLOC, 2, NULL, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 0);
    SL_CHECK_EQ(g.fallback_order, 0);
    sl_slub_boot b = {.min_order = 2};
    SL_REQUIRE(sl_slub_calculate_geometry(256, 256, SL_SLUB_KMALLOC, 2, &(sl_slub_kernel){.boot = b}, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 2);
    SL_CHECK_EQ(g.objects, 64);
    SL_CHECK_EQ(g.fallback_order, 0);
    SL_CHECK_EQ(g.fallback_objects, 16);
    SL_CHECK_EQ(g.cpu_partial_slabs, 2); /* DIV_ROUND_UP(104, 64) */
    /* slub_min_objects=64: min_order = get_order(64 * 256) = 2. */
    b = (sl_slub_boot){.min_objects = 64};
    SL_REQUIRE(sl_slub_calculate_geometry(256, 256, SL_SLUB_KMALLOC, 2, &(sl_slub_kernel){.boot = b}, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 2);
    /* ... capped by slub_max_order=1: at most the objects of order 1. */
    b.max_order = 1;
    b.max_order_set = 1;
    SL_REQUIRE(sl_slub_calculate_geometry(256, 256, SL_SLUB_KMALLOC, 2, &(sl_slub_kernel){.boot = b}, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 1);
    /* A 3000-byte object wastes 1096 of 4096 bytes at order 0, more than 1/16: order 3 by
     * default (8 CPUs), order 0 with slub_max_order=0 (every fraction fails, get_order(size)). */
    SL_REQUIRE(sl_slub_calculate_geometry(3000, 8, 0, 8, NULL, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 3);
    b = (sl_slub_boot){.max_order = 0, .max_order_set = 1};
    SL_REQUIRE(sl_slub_calculate_geometry(3000, 8, 0, 8, &(sl_slub_kernel){.boot = b}, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 0);
    /* min 4 then max 2: setup_slub_max_order lowers min_order to 2. */
    b = (sl_slub_boot){.min_order = 4, .max_order = 2, .max_order_set = 1};
    SL_REQUIRE(sl_slub_calculate_geometry(64, 8, 0, 2, &(sl_slub_kernel){.boot = b}, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 2);
    /* min 5 alone raises the max order to 5. */
    b = (sl_slub_boot){.min_order = 5};
    SL_REQUIRE(sl_slub_calculate_geometry(64, 8, 0, 2, &(sl_slub_kernel){.boot = b}, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 5);
    b = (sl_slub_boot){.min_order = 11};
    SL_CHECK_EQ(sl_slub_calculate_geometry(64, 8, 0, 2, &(sl_slub_kernel){.boot = b}, &g), SL_EINVAL);
    /* A cache created under slub_min_order=1 has order-1 slabs. */
    world w;
    sl_slub_config cfg = k256;
    cfg.kernel.boot.min_order = 1;
    SL_REQUIRE(world_init(&w, 1, 1u << 20, cfg));
    SL_CHECK_EQ(sl_slub_cache_geometry(w.s)->order, 1);
    void *a;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    sl_slub_node_info ni;
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.total_objects, 32);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

/* ---- 6. order fallback ------------------------------------------------------ */

/* Leaves no free block above order 0 in a zone of `pages` pages: every other page held. */
static void fragment(sl_page_zone *z, uint32_t pages, sl_page **held)
{
    for (uint32_t i = 0; i < pages; i++)
        held[i] = sl_page_alloc(z, 0, 0);
    for (uint32_t i = 0; i < pages; i += 2)
        if (held[i]) {
            sl_page_free(z, held[i], 0);
            held[i] = NULL;
        }
}

static void test_order_fallback(void)
{
    for (int variant = 0; variant < 3; variant++) {
        /* traced (complete operations), untraced (leaf fast paths), shuffled freelists */
        world w;
        sl_slub_config cfg = {.object_size = 192, .track = variant != 1, .seed = 3};
        cfg.kernel.boot.min_order = 1; /* 42 objects per slab; the fallback order 0 holds 21 */
        if (variant == 2)
            cfg.flags |= SL_SLUB_FREELIST_RANDOM;
        enum { PAGES = 16 };
        SL_REQUIRE(sl_trace_init(&w.tr, 2, 1 << 16) == SL_OK &&
                   sl_page_zone_init(&w.zone, PAGES * SL_PAGE_SIZE, &w.tr) == SL_OK &&
                   sl_slub_cache_create(&w.zone, variant == 1 ? NULL : &w.tr, 2, &cfg, &w.s) == SL_OK);
        const sl_slub_geometry *g = sl_slub_cache_geometry(w.s);
        SL_REQUIRE(g->order == 1 && g->objects == 42 && g->fallback_order == 0 && g->fallback_objects == 21);
        sl_page *held[PAGES];
        fragment(&w.zone, PAGES, held);
        void *o[40];
        for (unsigned i = 0; i < 40; i++)
            SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[i]), SL_OK);
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_ORDER_FALLBACK), 2); /* two slabs of 21, both order 0 */
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_SLAB), 2);
        sl_event ev;
        SL_CHECK_EQ(events_of(&w, SL_EV_SLUB_ORDER_FALLBACK, &ev), variant == 1 ? 0 : EXPECT_EVENTS(2));
#if !defined(SLABLAB_BENCH)
        if (variant != 1) {
            SL_CHECK_EQ(ev.arg0, 1);
            SL_CHECK_EQ(ev.arg1, 0);
            SL_CHECK_EQ(ev.arg2, 21);
        }
#endif
        sl_slub_node_info ni;
        sl_slub_node_info_get(w.s, &ni);
        SL_CHECK_EQ(ni.total_objects, 42);
        SL_CHECK_EQ(valid(&w), SL_OK);
        /* Past the 21 objects of a fallback slab lie 64 bytes of slack: no object there (with the
         * cache's 42 as the bound, offset 21 * 192 would pass for one and corrupt a freelist). */
        uint32_t pfn = pfn_of(&w, o[39]); /* the second slab, CPU 0's slab */
        SL_CHECK(sl_slub_object_at(w.s, pfn, 20) != NULL);
        SL_CHECK(sl_slub_object_at(w.s, pfn, 21) == NULL);
        unsigned char *base = (unsigned char *)sl_slub_object_at(w.s, pfn, 0);
#if defined(SLABLAB_BENCH)
        /* As the kernel without debugging, the benchmark build's leaf does not check object starts in the CPU slab. */
        bool leaf_checks = variant != 1;
#else
        bool leaf_checks = true;
#endif
        if (leaf_checks)
            SL_CHECK_EQ(sl_slub_free(w.s, 0, base + 21 * 192), SL_EMISALIGNED); /* the CPU slab (the leaf's check) */
        SL_CHECK_EQ(sl_slub_free(w.s, 1, base + 21 * 192), SL_EMISALIGNED);     /* not CPU 1's slab */
        base = (unsigned char *)sl_slub_object_at(w.s, pfn_of(&w, o[0]), 0);    /* the first slab, full */
        SL_CHECK_EQ(sl_slub_free(w.s, 0, base + 21 * 192), SL_EMISALIGNED);
        SL_CHECK_EQ(valid(&w), SL_OK);
        /* Once order-1 blocks are free again, new slabs get the cache's order. */
        for (uint32_t i = 0; i < PAGES; i++)
            if (held[i])
                sl_page_free(&w.zone, held[i], 0);
        void *more[42];
        for (unsigned i = 0; i < 42; i++)
            SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &more[i]), SL_OK);
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_ORDER_FALLBACK), 2);
        sl_slub_node_info_get(w.s, &ni);
        SL_CHECK_EQ(ni.total_objects, 42 + 42);
        SL_CHECK_EQ(valid(&w), SL_OK);
        for (unsigned i = 0; i < 40; i++)
            SL_CHECK_EQ(sl_slub_free(w.s, i % 2, o[i]), SL_OK);
        for (unsigned i = 0; i < 42; i++)
            SL_CHECK_EQ(sl_slub_free(w.s, i % 2, more[i]), SL_OK);
        SL_CHECK_EQ(valid(&w), SL_OK);
        SL_CHECK_EQ(sl_slub_cache_destroy(w.s), SL_OK);
        sl_page_stats ps;
        sl_page_stats_get(&w.zone, &ps);
        SL_CHECK_EQ(ps.pages_free, ps.pages_total);
        sl_page_zone_destroy(&w.zone);
        sl_trace_destroy(&w.tr);
    }
}

/* ---- 7. TID_STEP -------------------------------------------------------------- */

static uintptr_t cpu_tid(world *w, unsigned cpu)
{
    static unsigned char snap[1 << 16];
    long n = sl_slub_snapshot(w->s, snap, sizeof snap);
    SL_CHECK(n > 0);
    if (n <= 0)
        return UINTPTR_MAX;
    uint32_t off_cpu, lo, hi;
    memcpy(&off_cpu, snap + 40, 4);
    memcpy(&lo, snap + off_cpu + 32 * cpu + 8, 4);
    memcpy(&hi, snap + off_cpu + 32 * cpu + 12, 4);
    return (uintptr_t)(((uint64_t)hi << 32) | lo);
}

static void test_tid_step(void)
{
    static const struct {
        uint16_t nr_cpus;
        uint8_t no_preempt;
        unsigned long step;
    } kernels[4] = {{0, 0, 4}, {8192, 0, 8192}, {5, 0, 8}, {0, 1, 1}};
    for (unsigned k = 0; k < 4; k++) {
        world w;
        sl_slub_config cfg = k256;
        cfg.kernel.nr_cpus = kernels[k].nr_cpus;
        cfg.kernel.no_preempt = kernels[k].no_preempt;
        SL_REQUIRE(world_init(&w, 3, 1u << 20, cfg));
        SL_CHECK_EQ(sl_slub_cache_tid_step(w.s), kernels[k].step);
        void *a, *b;
        SL_CHECK_EQ(sl_slub_alloc(w.s, 2, &a), SL_OK); /* slow path: one tid step */
        SL_CHECK_EQ(sl_slub_alloc(w.s, 2, &b), SL_OK); /* fast path: another */
        SL_CHECK_EQ(cpu_tid(&w, 2), 2 + 2 * kernels[k].step);
        SL_CHECK_EQ(cpu_tid(&w, 1), 1); /* init_tid(cpu) */
        SL_CHECK_EQ(valid(&w), SL_OK);
        world_fini(&w);
    }
    /* CONFIG_NR_CPUS below the CPU count, or past 8192, is no kernel. */
    world w;
    sl_slub_config cfg = k256;
    cfg.kernel.nr_cpus = 2;
    SL_CHECK(!world_init(&w, 3, 1u << 20, cfg));
    world_fini(&w);
    cfg.kernel.nr_cpus = 8193;
    SL_CHECK(!world_init(&w, 3, 1u << 20, cfg));
    world_fini(&w);
}

/* ---- 10. PREEMPT_RT ------------------------------------------------------------ */

static void test_rt_counts_every_alloc_as_slow_path(void)
{
    for (int traced = 0; traced < 2; traced++) {
        world w;
        sl_slub_config cfg = k256;
        cfg.fastpath = SL_SLUB_FP_RT;
        SL_REQUIRE(sl_trace_init(&w.tr, 2, 1 << 16) == SL_OK && sl_page_zone_init(&w.zone, 1u << 20, &w.tr) == SL_OK &&
                   sl_slub_cache_create(&w.zone, traced ? &w.tr : NULL, 2, &cfg, &w.s) == SL_OK);
        void *o[20];
        for (unsigned i = 0; i < 20; i++)
            SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[i]), SL_OK);
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_SLOWPATH), 20);
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_FASTPATH), 0);
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_SLAB), 2);
        for (unsigned i = 16; i < 20; i++)
            SL_CHECK_EQ(sl_slub_free(w.s, 0, o[i]), SL_OK); /* into the CPU slab, under local_lock */
#if !defined(SLABLAB_BENCH)
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_FREE_FASTPATH), 4);
#endif
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL), 0);
        /* TID_STEP 2: 20 allocs, the 17th twice (DEACTIVATE_BYPASS moves it on, then the new slab's
         * load_freelist), and 4 frees. */
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_DEACTIVATE_BYPASS), 1);
        SL_CHECK_EQ(cpu_tid(&w, 0), 25 * 2);
        for (unsigned i = 0; i < 16; i++)
            SL_CHECK_EQ(sl_slub_free(w.s, 1, o[i]), SL_OK); /* remote: __slab_free, no lock */
        SL_CHECK_EQ(st(&w, 1, SL_SLUB_FREE_SLOWPATH), 16);
        SL_CHECK_EQ(valid(&w), SL_OK);
        world_fini(&w);
    }
}

/* ---- counters: the kernel's names and order, and the ones no other test pins ---- */

static void test_counter_names_and_order(void)
{
    SL_CHECK_EQ(SL_SLUB_NR_KERNEL_STATS, 26 + 17); /* 6.8-6.17's, then the 17 6.18 added for sheaves */
    SL_CHECK(!strcmp(sl_slub_stat_name(26), "alloc_cpu_sheaf"));
    SL_CHECK(!strcmp(sl_slub_stat_name(SL_SLUB_ALLOC_FASTPATH), "alloc_fastpath"));
    SL_CHECK_EQ(SL_SLUB_ALLOC_NODE_MISMATCH, 10);
    SL_CHECK(!strcmp(sl_slub_stat_name(10), "alloc_node_mismatch"));
    SL_CHECK_EQ(SL_SLUB_ORDER_FALLBACK, 19);
    SL_CHECK(!strcmp(sl_slub_stat_name(19), "order_fallback"));
    SL_CHECK(!strcmp(sl_slub_stat_name(25), "cpu_partial_drain"));
    SL_CHECK(!strcmp(sl_slub_stat_name(SL_SLUB_NR_KERNEL_STATS), "bulk_alloc_calls"));
    SL_CHECK(!strcmp(sl_slub_stat_name(SL_SLUB_ERRORS), "errors"));
    SL_CHECK(sl_slub_stat_name(SL_SLUB_NR_STATS) == NULL);
}

static void test_deactivation_counters(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 2, 4u << 20, k256));
    void *o[16], *x;
    for (unsigned i = 0; i < 16; i++)
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[i]), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o[0]), SL_OK); /* onto CPU 0's freelist */
    SL_CHECK_EQ(sl_slub_free(w.s, 1, o[1]), SL_OK); /* remote: onto the frozen slab's own freelist */
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
    /* The slab had remote frees: DEACTIVATE_REMOTE_FREES, and it goes to the list's tail. */
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_CPUSLAB_FLUSH), 1);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_DEACTIVATE_REMOTE_FREES), 1);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_DEACTIVATE_TO_TAIL), 1);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_DEACTIVATE_TO_HEAD), 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Freeing the rest from CPU 1 empties a slab on the node list: FREE_REMOVE_PARTIAL once the
     * list holds min_partial slabs; with one slab on it, it stays. */
    SL_CHECK_EQ(sl_slub_set_min_partial(w.s, 0), SL_OK);
    for (unsigned i = 2; i < 16; i++)
        SL_CHECK_EQ(sl_slub_free(w.s, 1, o[i]), SL_OK);
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_FREE_REMOVE_PARTIAL), 1);
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_FREE_SLAB), 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Bulk: FREE_FASTPATH grows by each group's count, not by one per call. */
    void *p[10];
    SL_CHECK_EQ(sl_slub_alloc_bulk(w.s, 0, 10, p), 10);
    uint64_t fast = st(&w, 0, SL_SLUB_FREE_FASTPATH);
    SL_CHECK_EQ(sl_slub_free_bulk(w.s, 0, 10, p, NULL), 1);
#if !defined(SLABLAB_BENCH)
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_FREE_FASTPATH) - fast, 10);
#else
    (void)fast;
#endif
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &x), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, x), SL_OK);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_ALLOC_NODE_MISMATCH), 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

int main(void)
{
    SL_RUN(test_poison_and_red_zone_without_checks);
    SL_RUN(test_failed_alloc_check_disables_slab);
    SL_RUN(test_hardened_remote_double_free);
    SL_RUN(test_hardened_bulk_adjacent_duplicate);
    SL_RUN(test_hardened_deactivate);
    SL_RUN(test_hardened_free_to_partial_list);
    SL_RUN(test_no_poison_for_rcu_and_ctor);
    SL_RUN(test_min_partial_tunable);
    SL_RUN(test_cpu_partial_tunable_and_get_partial_node);
    SL_RUN(test_shrink_tunable);
    SL_RUN(test_boot_parameters);
    SL_RUN(test_order_fallback);
    SL_RUN(test_tid_step);
    SL_RUN(test_rt_counts_every_alloc_as_slow_path);
    SL_RUN(test_counter_names_and_order);
    SL_RUN(test_deactivation_counters);
    return sl_check_summary();
}
