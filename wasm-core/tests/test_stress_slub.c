/* test_stress_slub.c - CPU threads hammering one SLUB cache: local churn plus a large share of
 * remote frees (objects handed to the other CPU through a lock-free ring and freed there).
 * Each object carries a stamp so a double hand-out is caught; at the end every object is
 * freed, validate() passes, and every page goes back to the zone.  Every fast-path variant,
 * a debug cache, and slabs of the fallback order on a fragmented zone. */
#define SL_TEST_RING 65536 /* deep enough to ride out a peer thread being descheduled */
#include "spsc_ring.h"

#include <sched.h>

#include "../src/slub/slub.h"

#define MAXCPU 4

typedef struct shared {
    sl_slub_cache *s;
    unsigned ncpus;
    unsigned long ops_per_cpu;
    ring rings[MAXCPU];    /* rings[k]: objects for CPU k to free */
    atomic_uint producing; /* CPUs still producing */
} shared;

typedef struct worker {
    shared *sh;
    unsigned cpu;
    unsigned long allocs, frees, remote_frees, bad_stamps, errors;
} worker;

static uint64_t stamp_of(unsigned cpu, unsigned long n) { return ((uint64_t)cpu << 56) | n; }

static void free_checked(worker *w, void *p, bool remote)
{
    w->remote_frees += remote;
    /* The stamp must be intact: nobody else was handed this object meanwhile. */
    uint64_t st = *(uint64_t *)p;
    if ((st >> 56) >= w->sh->ncpus || *((uint64_t *)p + 1) != ~st)
        w->bad_stamps++;
    if (sl_slub_free(w->sh->s, w->cpu, p) != SL_OK)
        w->errors++;
    w->frees++;
}

/*
 * Puts p in the peer's ring.  A full ring means the peer is off the CPU (this
 * machine's load, not the allocator): holding p for a local free instead drove
 * the remote share under the check's third on a loaded machine, so wait for
 * the peer, freeing what it sent us meanwhile (both waiting on each other's
 * full ring would otherwise never end).
 */
static void hand_to_peer(worker *w, ring *peer_ring, void *p)
{
    while (!ring_put(peer_ring, p)) {
        void *in = ring_get(&w->sh->rings[w->cpu]);
        if (in)
            free_checked(w, in, true);
        else
            sched_yield();
    }
}

static void *run_cpu(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    void *held[64];
    unsigned nheld = 0;
    uint64_t rng = 0x1234567ull * (w->cpu + 1);
    unsigned peer = (w->cpu + 1) % sh->ncpus;
    unsigned long n = 0;
    while (w->allocs + w->frees < sh->ops_per_cpu) {
        unsigned r = (unsigned)(sl_test_rand(&rng) % 100);
        void *in = r < 60 ? ring_get(&sh->rings[w->cpu]) : NULL;
        if (in) {
            free_checked(w, in, true); /* a remote free: the object came from another CPU */
        } else if (nheld < 64 && r < 80) {
            void *p;
            if (sl_slub_alloc(sh->s, w->cpu, &p) != SL_OK) {
                w->errors++;
                continue;
            }
            w->allocs++;
            uint64_t st = stamp_of(w->cpu, ++n);
            ((uint64_t *)p)[0] = st;
            ((uint64_t *)p)[1] = ~st;
            if (r % 4 == 0)
                held[nheld++] = p;
            else
                hand_to_peer(w, &sh->rings[peer], p);
        } else if (nheld) {
            free_checked(w, held[--nheld], false);
        }
    }
    while (nheld)
        free_checked(w, held[--nheld], false);
    atomic_fetch_sub(&sh->producing, 1);
    /* Drain what others still send us until every CPU has stopped producing. */
    for (;;) {
        void *in = ring_get(&sh->rings[w->cpu]);
        if (in) {
            free_checked(w, in, true);
            continue;
        }
        if (atomic_load(&sh->producing) == 0 && !(in = ring_get(&sh->rings[w->cpu])))
            break;
        if (in)
            free_checked(w, in, true);
    }
    return NULL;
}

static const char *const fastpath_names[SL_SLUB_NR_FASTPATHS] = {"cmpxchg", "locked", "plain", "rt"};

/* boot: the kernel's boot parameters; fragmented: every other page of the zone held, so that
 * only order-0 blocks are free (slabs of a higher order fall back). */
static unsigned stress_node_count = 1; /* NUMA nodes of the next stress_in's cache: CPU c on node c % count */

static void stress_in(sl_slub_fastpath fp, uint32_t flags, const sl_slub_boot *boot, bool fragmented, unsigned ncpus,
                      unsigned long total_ops)
{
    sl_page_zone zone;
    SL_REQUIRE(sl_page_zone_init(&zone, 64u << 20, NULL) == SL_OK);
    static sl_page *pinned[(64u << 20) / SL_PAGE_SIZE];
    uint32_t npinned = 0;
    if (fragmented) {
        for (uint32_t i = 0; i < zone.npages; i++)
            pinned[npinned++] = sl_page_alloc(&zone, 0, 0);
        for (uint32_t i = 0; i < npinned; i += 2)
            sl_page_free(&zone, pinned[i], 0);
        for (uint32_t i = 1; i < npinned; i += 2)
            pinned[i / 2] = pinned[i];
        npinned /= 2;
    }
    static shared sh;
    memset(&sh, 0, sizeof sh);
    sl_slub_config cfg = {.object_size = 64, .flags = flags, .track = 1, .fastpath = (uint8_t)fp, .seed = 5};
    if (boot)
        cfg.kernel.boot = *boot;
    cfg.nr_nodes = (uint8_t)stress_node_count;
    for (unsigned c = 0; c < ncpus; c++)
        cfg.cpu_node[c] = (uint8_t)(c % stress_node_count);
    SL_REQUIRE(sl_slub_cache_create(&zone, NULL, ncpus, &cfg, &sh.s) == SL_OK);
    sh.ncpus = ncpus;
    sh.ops_per_cpu = total_ops / ncpus;
    atomic_store(&sh.producing, ncpus);
    worker w[MAXCPU];
    sl_thread th[MAXCPU];
    uint64_t t0 = sl_time_ns();
    for (unsigned c = 0; c < ncpus; c++) {
        w[c] = (worker){.sh = &sh, .cpu = c};
        SL_REQUIRE(sl_thread_start(&th[c], run_cpu, &w[c]) == SL_OK);
    }
    unsigned long allocs = 0, frees = 0, remote = 0;
    for (unsigned c = 0; c < ncpus; c++) {
        sl_thread_join(th[c]);
        SL_CHECK_EQ(w[c].bad_stamps, 0);
        SL_CHECK_EQ(w[c].errors, 0);
        allocs += w[c].allocs;
        frees += w[c].frees;
        remote += w[c].remote_frees;
    }
    double secs = (double)(sl_time_ns() - t0) / 1e9;
    printf("  %s%s, %u CPUs: %lu ops (%lu allocs, %lu frees, %.0f%% of frees remote) in %.2f s; "
           "fast-path allocs %.1f%%, CPU CAS failures %llu, slab CAS failures %llu\n",
           fastpath_names[fp],
           flags        ? " (debug cache)"
           : fragmented ? " (fragmented zone)"
                        : "",
           ncpus, allocs + frees, allocs, frees, 100.0 * (double)remote / (double)(frees ? frees : 1), secs,
           100.0 * (double)sl_slub_stat_get(sh.s, -1, SL_SLUB_ALLOC_FASTPATH) / (double)(allocs ? allocs : 1),
           (unsigned long long)sl_slub_stat_get(sh.s, -1, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL),
           (unsigned long long)sl_slub_stat_get(sh.s, -1, SL_SLUB_CMPXCHG_DOUBLE_FAIL));
    /* Every object accounted for. */
    SL_CHECK_EQ(allocs, frees);
    SL_CHECK(allocs + frees >= total_ops - ncpus);
    SL_CHECK(remote * 3 > frees); /* a large share of the frees were remote */
    SL_CHECK(sl_slub_stat_get(sh.s, -1, SL_SLUB_FREE_SLOWPATH) > 0);
    if (fragmented)
        SL_CHECK_EQ(sl_slub_stat_get(sh.s, -1, SL_SLUB_ORDER_FALLBACK), sl_slub_stat_get(sh.s, -1, SL_SLUB_ALLOC_SLAB));
    char msg[200];
    SL_CHECK_EQ(sl_slub_validate(sh.s, msg, sizeof msg), SL_OK);
    for (unsigned c = 0; c < ncpus; c++)
        SL_CHECK_EQ(sl_slub_flush_cpu(sh.s, c), SL_OK);
    int v = sl_slub_validate(sh.s, msg, sizeof msg);
    SL_CHECK_EQ(v, SL_OK);
    if (v)
        fprintf(stderr, "  validate: %s\n", msg);
    sl_slub_node_info ni;
    sl_slub_node_info_get(sh.s, &ni);
    SL_CHECK(ni.nr_slabs <= stress_node_count * sl_slub_cache_geometry(sh.s)->min_partial); /* per node */
    SL_CHECK_EQ(sl_slub_cache_destroy(sh.s), SL_OK); /* SL_EBUSY if any object were still allocated */
    while (npinned)
        sl_page_free(&zone, pinned[--npinned], 0);
    sl_page_stats ps;
    sl_page_stats_get(&zone, &ps);
    SL_CHECK_EQ(ps.pages_free, ps.pages_total);
    SL_CHECK_EQ(sl_page_validate(&zone), SL_OK);
    sl_page_zone_destroy(&zone);
}

static void stress(sl_slub_fastpath fp, uint32_t flags, unsigned ncpus, unsigned long total_ops)
{
    stress_in(fp, flags, NULL, false, ncpus, total_ops);
}

static void test_stress_cmpxchg(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(SL_SLUB_FP_CMPXCHG, 0, 2, sl_test_scale(10000000));
}

static void test_stress_locked_and_plain_four_cpus(void)
{
    SL_SKIP_WITHOUT_THREADS();
    /* plain is only unsafe against interrupts: across CPUs each one owns its state. */
    stress(SL_SLUB_FP_LOCKED, 0, 4, sl_test_scale(1000000));
    stress(SL_SLUB_FP_PLAIN, 0, 3, sl_test_scale(1000000));
}

static void test_stress_debug_cache(void)
{
    SL_SKIP_WITHOUT_THREADS();
    /* No CPU slabs: every operation takes the node's list_lock, from every CPU at once. */
    stress(SL_SLUB_FP_CMPXCHG, SL_SLUB_POISON | SL_SLUB_RED_ZONE | SL_SLUB_STORE_USER, 3, sl_test_scale(1000000));
}

static void test_stress_rt_and_order_fallback(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(SL_SLUB_FP_RT, 0, 3, sl_test_scale(1000000));
    /* slub_min_order=2 on a zone with only order-0 blocks free: every slab at the fallback order. */
    sl_slub_boot boot = {.min_order = 2};
    stress_in(SL_SLUB_FP_CMPXCHG, 0, &boot, true, 3, sl_test_scale(1000000));
}

/* Two NUMA nodes: frees into the other node's slabs, get_any_partial, __put_partials across nodes. */
static void test_stress_two_nodes(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress_node_count = 2;
    stress(SL_SLUB_FP_CMPXCHG, 0, 4, sl_test_scale(1000000));
    stress(SL_SLUB_FP_CMPXCHG, SL_SLUB_POISON | SL_SLUB_RED_ZONE | SL_SLUB_STORE_USER, 3, sl_test_scale(300000));
    stress_node_count = 1;
}

int main(void)
{
    SL_RUN(test_stress_two_nodes);
    SL_RUN(test_stress_cmpxchg);
    SL_RUN(test_stress_locked_and_plain_four_cpus);
    SL_RUN(test_stress_debug_cache);
    SL_RUN(test_stress_rt_and_order_fallback);
    return sl_check_summary();
}
