/* test_slub.c - the SLUB model path by path: fast path, each refill source, remote frees,
 * deactivation, discard, bulk in both forms, debug detections, snapshots, and a randomized
 * run against a reference model with validate() after every step. */
#include "slub_world.h"

#include <string.h>

static void test_geometry_worked_example(void)
{
    sl_slub_geometry g;
    /* kernel-algorithms.md: kmalloc-256 (align 256 as a power-of-two kmalloc size), 8 CPUs. */
    SL_REQUIRE(sl_slub_calculate_geometry(256, 256, SL_SLUB_KMALLOC, 8, NULL, &g) == SL_OK);
    SL_CHECK_EQ(g.size, 256);
    SL_CHECK_EQ(g.order, 1);
    SL_CHECK_EQ(g.objects, 32);
    SL_CHECK_EQ(g.min_partial, 5);
    SL_CHECK_EQ(g.cpu_partial, 52);
    SL_CHECK_EQ(g.cpu_partial_slabs, 4);
    SL_CHECK_EQ(g.offset, 128);
    /* The same cache on this machine's 2 CPUs: order 0, 16 objects (sysfs kmalloc-256). */
    SL_REQUIRE(sl_slub_calculate_geometry(256, 256, SL_SLUB_KMALLOC, 2, NULL, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 0);
    SL_CHECK_EQ(g.objects, 16);
    /* anon_vma: ctor + RCU put the free pointer after the object: 96 -> 104. */
    SL_REQUIRE(sl_slub_calculate_geometry(96, 8, SL_SLUB_CTOR | SL_SLUB_TYPESAFE_BY_RCU, 2, NULL, &g) == SL_OK);
    SL_CHECK_EQ(g.size, 104);
    SL_CHECK_EQ(g.offset, 96);
    SL_CHECK_EQ(g.objects, 39);
    /* kvm_vcpu: no order up to 3 holds one object: get_order fallback. */
    SL_REQUIRE(sl_slub_calculate_geometry(51488, 16, 0, 2, NULL, &g) == SL_OK);
    SL_CHECK_EQ(g.order, 4);
    SL_CHECK_EQ(g.objects, 1);
    SL_CHECK_EQ(g.min_partial, 7);
    SL_CHECK_EQ(g.cpu_partial, 6);
    /* Debug caches: red zone and poison grow the slot, no CPU partial lists. */
    SL_REQUIRE(sl_slub_calculate_geometry(64, 8, SL_SLUB_RED_ZONE | SL_SLUB_POISON, 2, NULL, &g) == SL_OK);
    SL_CHECK_EQ(g.inuse, 72);
    SL_CHECK_EQ(g.offset, 72);
    SL_CHECK_EQ(g.red_left_pad, 8);
    SL_CHECK_EQ(g.size, 96);
    SL_CHECK_EQ(g.cpu_partial, 0);
    SL_CHECK_EQ(sl_slub_calculate_geometry(0, 8, 0, 2, NULL, &g), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_calculate_geometry(64, 12, 0, 2, NULL, &g), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_calculate_geometry(64, 8, 0, 0, NULL, &g), SL_EINVAL);
}

static void test_fast_path_and_tid(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 2, 4u << 20, k256));
    const sl_slub_geometry *g = sl_slub_cache_geometry(w.s);
    SL_CHECK_EQ(g->objects, 16);
    void *a, *b;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 1, &a), SL_OK); /* first: slow path, new slab */
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_ALLOC_SLAB), 1);
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_ALLOC_FASTPATH), 0);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 1, &b), SL_OK);
#if !defined(SLABLAB_BENCH) /* benchmark builds drop the fast-path counters, as without CONFIG_SLUB_STATS */
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_ALLOC_FASTPATH), 1);
#endif
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_ALLOC_SLOWPATH), 1);
    SL_CHECK_EQ((char *)b - (char *)a, 256); /* in-order freelist of a fresh slab */
    SL_CHECK_EQ(sl_slub_free(w.s, 1, b), SL_OK);
#if !defined(SLABLAB_BENCH)
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_FREE_FASTPATH), 1);
#endif
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_FREE_SLOWPATH), 0);
    void *c;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 1, &c), SL_OK);
    SL_CHECK(c == b); /* LIFO */
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* tid: starts at the CPU number, steps by TID_STEP = 2; 1 slow + 2 fast allocs + 1 free. */
    unsigned char snap[1 << 16];
    long n = sl_slub_snapshot(w.s, snap, sizeof snap);
    SL_REQUIRE(n > 0);
    uint32_t off_cpu, tid;
    memcpy(&off_cpu, snap + 40, 4);
    memcpy(&tid, snap + off_cpu + 32 + 8, 4);
    SL_CHECK_EQ(tid, 1 + 4 * 2);
    memcpy(&tid, snap + off_cpu + 8, 4);
    SL_CHECK_EQ(tid, 0);
#if !defined(SLABLAB_BENCH)
    /* OP_END of an alloc names the object; the first alloc went through a new slab. */
    sl_event ev[64];
    unsigned ne = sl_trace_drain(&w.tr, 1, ev, 64), ends = 0, new_slabs = 0;
    uint32_t pfn, idx;
    SL_REQUIRE(sl_slub_object_index(w.s, a, &pfn, &idx));
    for (unsigned i = 0; i < ne; i++) {
        new_slabs += ev[i].kind == SL_EV_SLUB_NEW_SLAB;
        if (ev[i].kind == SL_EV_OP_END && ev[i].arg0 == 1 && ends++ == 0) {
            SL_CHECK_EQ(ev[i].slab, pfn);
            SL_CHECK_EQ(ev[i].obj, idx);
            SL_CHECK_EQ(ev[i].op, 1);
        }
    }
    SL_CHECK_EQ(ends, 3);
    SL_CHECK_EQ(new_slabs, 1);
#endif
    SL_CHECK_EQ(sl_slub_free(w.s, 1, a), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, c), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 2, &a), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, NULL), SL_EINVAL);
    world_fini(&w);
}

/* Allocates n objects on cpu into out[]. */
static void alloc_n(world *w, unsigned cpu, unsigned n, void **out)
{
    for (unsigned i = 0; i < n; i++)
        SL_CHECK_EQ(sl_slub_alloc(w->s, cpu, &out[i]), SL_OK);
}

static void test_refill_sources(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 2, 4u << 20, k256));
    void *o[64];
    /* New slab, then the slab's own freelist after a remote free into the frozen CPU slab. */
    alloc_n(&w, 0, 16, o);                          /* slab A full on CPU 0 */
    SL_CHECK_EQ(sl_slub_free(w.s, 1, o[3]), SL_OK); /* remote free: A is frozen */
    SL_CHECK_EQ(st(&w, 1, SL_SLUB_FREE_FROZEN), 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[3]), SL_OK);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_REFILL), 1);
    /* A is full again: the next alloc bypasses it and takes a new slab B. */
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[16]), SL_OK);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_DEACTIVATE_BYPASS), 1);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_SLAB), 2);
    /* A free into full slab A puts A on the freeing CPU's partial list (CPU 1 here). */
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o[5]), SL_OK);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_CPU_PARTIAL_FREE), 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Exhaust B: CPU 0 then refills from its partial list (A). */
    alloc_n(&w, 0, 15, &o[17]);
    void *x;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &x), SL_OK);
    SL_CHECK(x == o[5]);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_CPU_PARTIAL_ALLOC), 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    o[5] = x;
    /* Free two objects of B remotely from CPU 1: B goes to CPU 1's partial list; flushing CPU 1
     * moves it to the node list; CPU 0, once A runs dry, takes it from there. */
    SL_CHECK_EQ(sl_slub_free(w.s, 1, o[20]), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, o[21]), SL_OK);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 1), SL_OK);
    sl_slub_node_info ni;
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[20]), SL_OK);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_FROM_PARTIAL), 1);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[21]), SL_OK);
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    for (unsigned i = 0; i < 32; i++)
        SL_CHECK_EQ(sl_slub_free(w.s, i % 2, o[i]), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

static void test_deactivate_and_discard(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 2, 8u << 20, k256));
    enum { N = 16 * 12 };
    static void *o[N];
    alloc_n(&w, 0, N, o); /* 12 slabs */
    sl_slub_node_info ni;
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_slabs, 12);
    /* Free everything from CPU 1: full slabs go to CPU 1's partial list, which drains to the
     * node when it holds cpu_partial_slabs (7) slabs; empty slabs beyond min_partial (5) are
     * discarded. */
    for (unsigned i = 0; i < N - 16; i++)
        SL_CHECK_EQ(sl_slub_free(w.s, 1, o[i]), SL_OK);
    SL_CHECK(st(&w, 1, SL_SLUB_CPU_PARTIAL_DRAIN) >= 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 1), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, 5); /* min_partial empty slabs are kept */
    SL_CHECK(st(&w, -1, SL_SLUB_FREE_SLAB) >= 6);
    /* Deactivating CPU 0's slab (full, objects still allocated): DEACTIVATE_FULL. */
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_DEACTIVATE_FULL), 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Free the rest remotely: the unfrozen full slab goes to CPU 1's partial list. */
    for (unsigned i = N - 16; i < N; i++)
        SL_CHECK_EQ(sl_slub_free(w.s, 1, o[i]), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* A CPU slab with free objects deactivates to the node list (with its CPU freelist spliced). */
    void *p[3];
    alloc_n(&w, 0, 3, p);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, p[0]), SL_OK);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_DEACTIVATE_TO_HEAD) + st(&w, 0, SL_SLUB_DEACTIVATE_EMPTY), 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, p[1]), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, p[2]), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

static void test_bulk_forms_and_cas_counts(void)
{
    for (int form = 0; form < 2; form++) {
        world w;
        sl_slub_config cfg = k256;
        cfg.bulk_free = (uint8_t)form;
        SL_REQUIRE(world_init(&w, 2, 4u << 20, cfg));
        void *p[48];
        SL_CHECK_EQ(sl_slub_alloc_bulk(w.s, 0, 48, p), 48); /* three slabs, the last one CPU 0's */
        SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_SLAB), 3);
        SL_CHECK_EQ(valid(&w), SL_OK);
        /* Free the first 32 (two full slabs, not CPU 0's slab) from CPU 0. */
        unsigned cas;
        int rc = sl_slub_free_bulk(w.s, 0, 32, p, &cas);
        if (form == SL_SLUB_BULK_DETACHED) {
            SL_CHECK_EQ(rc, 2); /* one cmpxchg_double_slab per slab */
            SL_CHECK_EQ(cas, 2);
            SL_CHECK_EQ(st(&w, 0, SL_SLUB_BULK_FREE_GROUPS), 2);
        } else {
            SL_CHECK_EQ(cas, 32); /* one per object */
        }
        SL_CHECK_EQ(valid(&w), SL_OK);
        /* Interleaved slabs: the look-ahead of 3 still groups them. */
        SL_CHECK_EQ(sl_slub_alloc_bulk(w.s, 1, 32, p), 32);
        void *q[32];
        for (unsigned i = 0; i < 16; i++)
            q[2 * i] = p[i], q[2 * i + 1] = p[16 + i];
        uint64_t groups = st(&w, 1, SL_SLUB_BULK_FREE_GROUPS);
        rc = sl_slub_free_bulk(w.s, 1, 32, q, &cas);
        if (form == SL_SLUB_BULK_DETACHED) {
            /* The look-ahead gives up after 3 objects of the other slab: small groups. */
            SL_CHECK_EQ(cas, st(&w, 1, SL_SLUB_BULK_FREE_GROUPS) - groups);
            SL_CHECK(cas > 2 && cas < 16);
        } else {
            SL_CHECK_EQ(cas, 32);
        }
        SL_CHECK_EQ(valid(&w), SL_OK);
        SL_CHECK_EQ(sl_slub_free_bulk(w.s, 0, 16, p + 32, &cas), form == SL_SLUB_BULK_DETACHED ? 1 : 16);
        SL_CHECK_EQ(valid(&w), SL_OK);
        world_fini(&w);
    }
}

static void test_bulk_alloc_out_of_memory(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 1, 2 * SL_PAGE_SIZE, k256)); /* two slabs of 16 */
    void *p[40];
    SL_CHECK_EQ(sl_slub_alloc_bulk(w.s, 0, 40, p), 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc_bulk(w.s, 0, 32, p), 32);
    void *x;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &x), SL_ENOMEM);
    SL_CHECK_EQ(sl_slub_free_bulk(w.s, 0, 32, p, NULL), 2);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

static void test_debug_detections(void)
{
    world w;
    sl_slub_config cfg = {
        .object_size = 64, .flags = SL_SLUB_CONSISTENCY_CHECKS | SL_SLUB_POISON | SL_SLUB_RED_ZONE, .track = 1};
    SL_REQUIRE(world_init(&w, 2, 4u << 20, cfg));
    void *a, *b;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &b), SL_OK);
    /* Double free. */
    SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_EDOUBLEFREE);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, a), SL_EDOUBLEFREE);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Foreign and misaligned pointers. */
    int local;
    SL_CHECK_EQ(sl_slub_free(w.s, 0, &local), SL_EFOREIGN);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, NULL), SL_EFOREIGN);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, (char *)b + 8), SL_EMISALIGNED);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Write after free: the poison check on the next allocation of that object (the head of its
     * slab's freelist) fails; the slab is taken out of use and the allocation goes on elsewhere. */
    memset(a, 0, 8);
    void *c, *d;
    uint32_t pfn_b, pfn_c, idx;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &c), SL_OK);
    SL_REQUIRE(c != NULL && c != a);
    SL_REQUIRE(sl_slub_object_index(w.s, b, &pfn_b, &idx) && sl_slub_object_index(w.s, c, &pfn_c, &idx));
    SL_CHECK(pfn_b != pfn_c);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* b lives in the disabled slab: check_slab refuses its free. */
    SL_CHECK_EQ(sl_slub_free(w.s, 0, b), SL_ECORRUPT);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Overflow into the right red zone: the free is refused, the object quarantined. */
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &d), SL_OK);
    ((unsigned char *)c)[64] = 0;
    SL_CHECK_EQ(sl_slub_free(w.s, 0, c), SL_EREDZONE);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, c), SL_EDOUBLEFREE);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Underflow into the left red zone. */
    ((unsigned char *)d)[-1] = 0;
    SL_CHECK_EQ(sl_slub_free(w.s, 1, d), SL_EREDZONE);
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_ERRORS), 10);
#if !defined(SLABLAB_BENCH) /* events are compiled out there */
    /* Every error left an ERROR event. */
    sl_event ev[4096];
    unsigned errors = 0;
    for (unsigned cpu = 0; cpu < 2; cpu++) {
        unsigned n = sl_trace_drain(&w.tr, cpu, ev, 4096);
        for (unsigned i = 0; i < n; i++)
            errors += ev[i].kind == SL_EV_ERROR;
    }
    SL_CHECK_EQ(errors, st(&w, -1, SL_SLUB_ERRORS));
#endif
    /* Bulk free with a bad pointer in the middle frees the rest and reports the first error. */
    void *p[8];
    SL_CHECK_EQ(sl_slub_alloc_bulk(w.s, 0, 8, p), 8);
    p[4] = &local;
    SL_CHECK_EQ(sl_slub_free_bulk(w.s, 0, 8, p, NULL), SL_EFOREIGN);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

/* Linux 6.2+: a debug cache has no CPU slab; each object comes from, and goes back to, a slab under list_lock. */
static void test_debug_cache_paths(void)
{
    world w;
    sl_slub_config cfg = {.object_size = 256, .flags = SL_SLUB_STORE_USER, .track = 1};
    SL_REQUIRE(world_init(&w, 2, 4u << 20, cfg));
    uint32_t n = sl_slub_cache_geometry(w.s)->objects, size = sl_slub_cache_geometry(w.s)->size;
    SL_REQUIRE(n >= 4 && n <= 64);
    void *o[128];
    sl_slub_node_info ni;
    /* The first allocation makes a slab, which goes on the node partial list, not to the CPU. */
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o[0]), SL_OK);
    SL_CHECK_EQ(st(&w, 0, SL_SLUB_ALLOC_SLAB), 1);
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, 1);
    /* Every allocation is a slow path from that slab, from either CPU; no fast path, no CPU partial. */
    for (uint32_t i = 1; i < n; i++)
        SL_CHECK_EQ(sl_slub_alloc(w.s, i % 2, &o[i]), SL_OK);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_ALLOC_SLAB), 1);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_ALLOC_SLOWPATH), n);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_ALLOC_FASTPATH), 0);
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, 0); /* full: off the list */
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* A second slab; then a free into the full first one puts it back on the list, at the tail. */
    SL_CHECK_EQ(sl_slub_alloc(w.s, 1, &o[n]), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o[0]), SL_OK);
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_partial, 2);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_FREE_ADD_PARTIAL), 1);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_FREE_FASTPATH), 0);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_CPU_PARTIAL_FREE), 0);
    /* The head of the list (the second slab) serves the next allocation. */
    void *x;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &x), SL_OK);
    SL_CHECK_EQ((char *)x - (char *)o[n], size);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Freeing everything: empty slabs stay while the list is below min_partial. */
    SL_CHECK_EQ(sl_slub_free(w.s, 1, x), SL_OK);
    for (uint32_t i = 1; i <= n; i++)
        SL_CHECK_EQ(sl_slub_free(w.s, i % 2, o[i]), SL_OK);
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.nr_slabs, 2);
    SL_CHECK_EQ(ni.nr_partial, 2);
    SL_CHECK_EQ(st(&w, -1, SL_SLUB_FREE_SLOWPATH), n + 2);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o[3]), SL_EDOUBLEFREE);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

static void test_hardening(void)
{
    world w;
    sl_slub_config cfg = {
        .object_size = 128, .flags = SL_SLUB_FREELIST_HARDENED | SL_SLUB_FREELIST_RANDOM, .track = 1, .seed = 7};
    SL_REQUIRE(world_init(&w, 1, 4u << 20, cfg));
    void *p[32];
    SL_CHECK_EQ(sl_slub_alloc_bulk(w.s, 0, 32, p), 32);
    /* Randomised: the allocation order is not the address order. */
    unsigned in_order = 0;
    for (unsigned i = 1; i < 32; i++)
        in_order += (char *)p[i] - (char *)p[i - 1] == 128;
    SL_CHECK(in_order < 20);
    /* Hardened: the stored free pointer is not the next object's address. */
    void *a, *b;
    SL_CHECK_EQ(sl_slub_free(w.s, 0, p[0]), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, p[1]), SL_OK);
    uintptr_t stored;
    memcpy(&stored, (char *)p[1] + 64, sizeof stored);
    SL_CHECK(stored != (uintptr_t)p[0]);
    /* The naive double-free check: freeing the CPU freelist's head again. */
    SL_CHECK_EQ(sl_slub_free(w.s, 0, p[1]), SL_EDOUBLEFREE);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &b), SL_OK);
    SL_CHECK(a == p[1] && b == p[0]);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_fini(&w);
}

static void test_double_free_without_checks_is_caught_by_validate(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 1, 1u << 20, k256));
    void *a, *b;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &a), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &b), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, b), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_OK); /* no checks: accepted, as the kernel would */
    SL_CHECK_EQ(sl_slub_validate(w.s, vmsg, sizeof vmsg), SL_EFREELIST);
    SL_CHECK(strlen(vmsg) > 0);
    /* Nothing hangs: allocations hand out the cycle and the tracker flags the repeat. */
    void *x;
    int dup = 0;
    for (unsigned i = 0; i < 40; i++)
        dup += sl_slub_alloc(w.s, 0, &x) == SL_EFREELIST;
    SL_CHECK(dup > 0);
    world_fini(&w); /* destroy's walks are bounded: a corrupt cache is torn down too */
}

static void test_snapshot_layout(void)
{
    world w;
    SL_REQUIRE(world_init(&w, 2, 4u << 20, k256));
    void *p[20];
    alloc_n(&w, 0, 20, p);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, p[2]), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, p[17]), SL_OK);
    long need = sl_slub_snapshot(w.s, NULL, 0);
    SL_REQUIRE(need < 0);
    unsigned char *buf = malloc((size_t)-need);
    SL_REQUIRE(buf);
    SL_CHECK_EQ(sl_slub_snapshot(w.s, buf, (size_t)-need - 1), need);
    SL_CHECK_EQ(sl_slub_snapshot(w.s, buf, (size_t)-need), -need);
    uint32_t h[18];
    memcpy(h, buf, sizeof h);
    SL_CHECK_EQ(h[0], 0x42554c53);
    SL_CHECK_EQ(h[1], 2);  /* version */
    SL_CHECK_EQ(h[3], 2);  /* cpus */
    SL_CHECK_EQ(h[4], 2);  /* slabs */
    SL_CHECK_EQ(h[5], 32); /* objects */
    /* Slab 0 (full, on CPU 1's partial list after the remote free into it) and slab 1 (CPU 0's). */
    unsigned char *s0 = buf + h[11], *s1 = s0 + 32;
    SL_CHECK_EQ(s0[5], 2);
    SL_CHECK_EQ(s0[6], 1);
    SL_CHECK_EQ(s1[5], 1);
    SL_CHECK_EQ(s1[6], 0);
    SL_CHECK_EQ(s1[7], 1);
    uint32_t head;
    memcpy(&head, s0 + 12, 4);
    SL_CHECK_EQ(head, 2);
    unsigned char *objs = buf + h[12];
    SL_CHECK_EQ(objs[16 * 2], 0);            /* on the slab freelist */
    SL_CHECK_EQ(objs[16 * 3], 2);            /* allocated */
    SL_CHECK_EQ(objs[16 * (16 + 1)], 1);     /* p[17] on CPU 0's freelist */
#if !defined(SLABLAB_BENCH)                  /* no operation numbers there */
    SL_CHECK_EQ(objs[16 * (16 + 1) + 2], 0); /* freed by CPU 0 */
#endif
    uint32_t nxt;
    memcpy(&nxt, objs + 16 * 17 + 4, 4);
    SL_CHECK_EQ(nxt, 4); /* then the never-used rest of the slab */
    unsigned char *cpu0 = buf + h[10];
    uint32_t fl_pfn, fl_obj;
    memcpy(&fl_pfn, cpu0, 4);
    memcpy(&fl_obj, cpu0 + 4, 4);
    uint32_t pfn1;
    memcpy(&pfn1, s1, 4);
    SL_CHECK_EQ(fl_pfn, pfn1);
    SL_CHECK_EQ(fl_obj, 1);
    free(buf);
    world_fini(&w);
}

/* A reference model: the set of allocated objects.  Random ops on random CPUs. */
static void test_random_against_reference(void)
{
    for (int variant = 0; variant < SL_SLUB_NR_FASTPATHS; variant++) {
        world w;
        sl_slub_config cfg = {.object_size = 48 + 40 * variant,
                              .track = 1,
                              .fastpath = (uint8_t)variant,
                              .bulk_free = (uint8_t)(variant & 1),
                              .seed = 3,
                              .flags = variant == 2 ? SL_SLUB_FREELIST_RANDOM | SL_SLUB_FREELIST_HARDENED : 0};
        SL_REQUIRE(world_init(&w, 4, 2u << 20, cfg));
        enum { MAXH = 600 };
        static void *held[MAXH];
        static unsigned char snap[1 << 20];
        unsigned nheld = 0;
        uint64_t rng = 99 + (uint64_t)variant;
        unsigned steps = (unsigned)sl_test_scale(3000), failures = 0;
        for (unsigned step = 0; step < steps && failures == 0; step++) {
            unsigned cpu = (unsigned)(sl_test_rand(&rng) % 4), r = (unsigned)(sl_test_rand(&rng) % 100);
            if (r < 45 && nheld < MAXH) {
                void *o;
                int rc = sl_slub_alloc(w.s, cpu, &o);
                if (rc == SL_OK) {
                    for (unsigned i = 0; i < nheld; i++)
                        failures += held[i] == o;
                    memset(o, 0x5a, cfg.object_size);
                    held[nheld++] = o;
                } else {
                    failures += rc != SL_ENOMEM;
                }
            } else if (r < 85 && nheld) {
                unsigned i = (unsigned)(sl_test_rand(&rng) % nheld);
                failures += sl_slub_free(w.s, cpu, held[i]) != SL_OK;
                held[i] = held[--nheld];
            } else if (r < 92 && nheld + 40 <= MAXH) {
                unsigned k = 1 + (unsigned)(sl_test_rand(&rng) % 40);
                int got = sl_slub_alloc_bulk(w.s, cpu, k, held + nheld);
                failures += got != (int)k && got != 0;
                nheld += (unsigned)got;
            } else if (r < 98 && nheld) {
                unsigned k = 1 + (unsigned)(sl_test_rand(&rng) % (nheld < 40 ? nheld : 40));
                /* Take k random held objects to the end and bulk-free them. */
                for (unsigned j = 0; j < k; j++) {
                    unsigned i = (unsigned)(sl_test_rand(&rng) % (nheld - j));
                    void *t = held[i];
                    held[i] = held[nheld - 1 - j];
                    held[nheld - 1 - j] = t;
                }
                failures += sl_slub_free_bulk(w.s, cpu, k, held + nheld - k, NULL) < 0;
                nheld -= k;
            } else {
                failures += sl_slub_flush_cpu(w.s, cpu) != SL_OK;
            }
            if (valid(&w) != SL_OK)
                failures++;
            /* The model's objects are exactly the ones the snapshot shows allocated. */
            long n = sl_slub_snapshot(w.s, snap, sizeof snap);
            if (n <= 0) {
                failures++;
            } else {
                uint32_t nobj, off_obj, allocated = 0;
                memcpy(&nobj, snap + 20, 4);
                memcpy(&off_obj, snap + 48, 4);
                for (uint32_t i = 0; i < nobj; i++)
                    allocated += snap[off_obj + 16 * i] == 2;
                failures += allocated != nheld;
            }
            if (failures)
                fprintf(stderr, "  variant %d failed at step %u\n", variant, step);
        }
        SL_CHECK_EQ(failures, 0);
        /* Free everything; after flushing, only min_partial empty slabs at most remain. */
        for (unsigned i = 0; i < nheld; i++)
            SL_CHECK_EQ(sl_slub_free(w.s, i % 4, held[i]), SL_OK);
        for (unsigned c = 0; c < 4; c++)
            sl_slub_flush_cpu(w.s, c);
        SL_CHECK_EQ(valid(&w), SL_OK);
        sl_slub_node_info ni;
        sl_slub_node_info_get(w.s, &ni);
        SL_CHECK(ni.nr_slabs <= sl_slub_cache_geometry(w.s)->min_partial);
        SL_CHECK_EQ(ni.nr_slabs, ni.nr_partial);
        SL_CHECK_EQ(sl_slub_cache_destroy(w.s), SL_OK);
        sl_page_stats ps;
        sl_page_stats_get(&w.zone, &ps);
        SL_CHECK_EQ(ps.pages_free, ps.pages_total);
        sl_page_zone_destroy(&w.zone);
        sl_trace_destroy(&w.tr);
    }
}

int main(void)
{
    SL_RUN(test_geometry_worked_example);
    SL_RUN(test_fast_path_and_tid);
    SL_RUN(test_refill_sources);
    SL_RUN(test_deactivate_and_discard);
    SL_RUN(test_bulk_forms_and_cas_counts);
    SL_RUN(test_bulk_alloc_out_of_memory);
    SL_RUN(test_debug_detections);
    SL_RUN(test_debug_cache_paths);
    SL_RUN(test_hardening);
    SL_RUN(test_double_free_without_checks_is_caught_by_validate);
    SL_RUN(test_snapshot_layout);
    SL_RUN(test_random_against_reference);
    return sl_check_summary();
}
