/*
 * test_stress_sheaves.c - CPU threads on one cache with per-CPU sheaves and a
 * shared barn: local churn, remote frees (an object allocated on one CPU is
 * handed through a lock-free ring to another, whose free puts it on that
 * CPU's sheaf, as the kernel's free_to_pcs does for any local-node object),
 * bulk operations through the sheaves and kfree_rcu with grace periods, in
 * 6.18 (sheaves over the per-CPU slab) and 7.0 (no per-CPU slab); from
 * 6.18 also allocations in GFP_ATOMIC / GFP_NOWAIT context, kmalloc_nolock
 * and kfree_nolock (whose trylocks lose to other CPUs here) and the CPU's
 * irq_work that frees what kfree_nolock deferred.
 * Objects carry a stamp, so an object handed out twice is caught.  At the
 * end everything is freed and drained, every invariant holds, and every
 * page is back in the zone.  Run under TSan by `scripts/test.mjs tsan`.
 */
#include "sheaves_world.h"
#define SL_TEST_RING 16384
#include "spsc_ring.h"

#define MAXCPU 4
#define HELD 256

typedef struct shared {
    world w;
    unsigned ncpus;
    unsigned long ops;
    bool nolock;                /* the version has kmalloc_nolock / kfree_nolock (6.18+) */
    ring rings[MAXCPU][MAXCPU]; /* rings[from][to]: one producer, one consumer each */
} shared;

typedef struct worker {
    shared *sh;
    unsigned cpu;
    void *held[HELD];
    unsigned nheld;
    unsigned long n, bad_stamps, errors, remote, nolock_failed;
} worker;

static void stamp(worker *wk, void *p)
{
    uint64_t st = ((uint64_t)wk->cpu << 56) | ++wk->n;
    ((uint64_t *)p)[0] = st;
    ((uint64_t *)p)[1] = ~st;
}

/* The stamp must be intact (nobody else was handed this object meanwhile); then it is wiped. */
static void unstamp(worker *wk, void *p)
{
    uint64_t st = ((uint64_t *)p)[0];
    if ((st >> 56) >= wk->sh->ncpus || ((uint64_t *)p)[1] != ~st)
        wk->bad_stamps++;
    ((uint64_t *)p)[0] = ((uint64_t *)p)[1] = 0;
}

static void give_back(worker *wk, void *p)
{
    unstamp(wk, p);
    if (world_free(&wk->sh->w, wk->cpu, p) != SL_OK)
        wk->errors++;
}

static void *run(void *arg)
{
    worker *wk = arg;
    shared *sh = wk->sh;
    world *w = &sh->w;
    uint64_t rng = 0x9e37ull * (wk->cpu + 1);
    for (unsigned long i = 0; i < sh->ops; i++) {
        void *p;
        for (unsigned from = 0; from < sh->ncpus; from++) {
            while ((p = ring_get(&sh->rings[from][wk->cpu]))) { /* remote frees waiting for this CPU */
                give_back(wk, p);
                wk->remote++;
            }
        }
        unsigned r = (unsigned)(sl_test_rand(&rng) % 100);
        if (r < 45 && wk->nheld < HELD) {
            /* 6.18+: some allocations in GFP_ATOMIC / GFP_NOWAIT context, some by kmalloc_nolock */
            unsigned how = sh->nolock ? (unsigned)(sl_test_rand(&rng) % 8) : 0;
            int rc = how == 7 ? sl_slub_kmalloc_nolock(w->s, wk->cpu, &p)
                     : how >= 5
                         ? sl_slub_alloc_gfp(w->s, wk->cpu, how == 5 ? SL_SLUB_GFP_ATOMIC : SL_SLUB_GFP_NOWAIT, &p)
                         : ((p = world_alloc(w, wk->cpu)) ? SL_OK : SL_ENOMEM);
            if (rc == SL_OK) {
                stamp(wk, p);
                wk->held[wk->nheld++] = p;
            } else if (how == 7 && (rc == SL_ENOMEM || rc == SL_EBUSY)) {
                wk->nolock_failed++; /* a trylock lost to another CPU: the kernel's NULL */
            } else {
                wk->errors++;
            }
        } else if (r < 90 && wk->nheld) {
            unsigned k = (unsigned)(sl_test_rand(&rng) % wk->nheld);
            p = wk->held[k];
            wk->held[k] = wk->held[--wk->nheld];
            unsigned to = (unsigned)(sl_test_rand(&rng) % sh->ncpus);
            if (sh->nolock && sl_test_rand(&rng) % 4 == 0) {
                unstamp(wk, p);
                if (sl_slub_kfree_nolock(w->s, wk->cpu, p) != SL_OK)
                    wk->errors++;
            } else if (to == wk->cpu || !ring_put(&sh->rings[wk->cpu][to], p)) {
                give_back(wk, p);
            }
        } else if (r < 94 && wk->nheld + 16 <= HELD) {
            void **dst = wk->held + wk->nheld;
            if (sl_slub_alloc_bulk(w->s, wk->cpu, 16, dst) != 16) {
                wk->errors++;
                continue;
            }
            for (unsigned k = 0; k < 16; k++)
                stamp(wk, dst[k]);
            wk->nheld += 16;
        } else if (r < 97 && wk->nheld >= 8) {
            void *batch[8];
            for (unsigned k = 0; k < 8; k++) {
                batch[k] = wk->held[--wk->nheld];
                unstamp(wk, batch[k]);
            }
            if (sl_slub_free_bulk(w->s, wk->cpu, 8, batch, NULL) < 0)
                wk->errors++;
        } else if (r < 99 && wk->nheld) {
            p = wk->held[--wk->nheld];
            unstamp(wk, p);
            if (sl_slub_kfree_rcu(w->s, wk->cpu, p) != SL_OK)
                wk->errors++;
        } else if (r & 1) {
            sl_slub_rcu_grace_period(w->s, wk->cpu);
        } else if (sl_slub_irq_work(w->s, wk->cpu) < 0) { /* kfree_nolock's deferred objects */
            wk->errors++;
        }
    }
    return NULL;
}

static void stress_nodes(unsigned ncpus, sl_slub_kversion v, uint32_t capacity, unsigned long ops, unsigned nodes,
                         uint8_t memoryless)
{
    static shared sh;
    memset(&sh, 0, sizeof sh);
    SL_REQUIRE(world_open_nodes(&sh.w, ncpus, v, capacity, 0, NULL, 64, nodes, memoryless) == SL_OK);
    sl_page_stats before, after;
    sl_page_stats_get(&sh.w.zone, &before);
    sh.ncpus = ncpus;
    sh.ops = ops;
    sh.nolock = sl_slub_cache_rules(sh.w.s)->nolock;
    static worker wk[MAXCPU];
    sl_thread t[MAXCPU];
    for (unsigned c = 0; c < ncpus; c++) {
        wk[c] = (worker){.sh = &sh, .cpu = c};
        SL_REQUIRE(sl_thread_start(&t[c], run, &wk[c]) == SL_OK);
    }
    for (unsigned c = 0; c < ncpus; c++)
        sl_thread_join(t[c]);
    unsigned long bad = 0, errors = 0, remote = 0;
    for (unsigned c = 0; c < ncpus; c++) {
        void *p;
        for (unsigned from = 0; from < ncpus; from++)
            while ((p = ring_get(&sh.rings[from][c])))
                give_back(&wk[c], p);
        while (wk[c].nheld)
            give_back(&wk[c], wk[c].held[--wk[c].nheld]);
        bad += wk[c].bad_stamps;
        errors += wk[c].errors;
        remote += wk[c].remote;
    }
    SL_CHECK_EQ(bad, 0);
    SL_CHECK_EQ(errors, 0);
    SL_CHECK(remote > 0);
    if (sh.w.sh && sli_sheaves_active(sh.w.sh))
        SL_CHECK(ST(&sh.w, BARN_GET) > 0);
    char msg[256];
    int rc = world_validate(&sh.w, msg, sizeof msg);
    if (rc)
        fprintf(stderr, "  %s\n", msg);
    SL_CHECK_EQ(rc, SL_OK);
    world_drain(&sh.w);
    rc = world_validate(&sh.w, msg, sizeof msg);
    SL_CHECK_EQ(rc, SL_OK);
    SL_CHECK_EQ(sl_slub_cache_destroy(sh.w.s), SL_OK); /* nothing left allocated */
    sh.w.s = NULL;
    sl_page_stats_get(&sh.w.zone, &after);
    SL_CHECK_EQ(after.pages_free, before.pages_free); /* every page back in the zone */
    world_close(&sh.w);
}

static void stress(unsigned ncpus, sl_slub_kversion v, uint32_t capacity, unsigned long ops)
{
    stress_nodes(ncpus, v, capacity, ops, 1, 0);
}

static void test_two_cpus_70(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(2, (sl_slub_kversion){7, 0}, 32, sl_test_scale(1000000));
}

/* The eras after 7.0: 7.1's trylock relock, 7.2's and 7.3's refill (a surplus returned by one cmpxchg). */
static void test_eras_71_to_73(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(2, (sl_slub_kversion){7, 3}, 32, sl_test_scale(500000));
    stress(4, (sl_slub_kversion){7, 2}, 4, sl_test_scale(300000));
    stress(3, (sl_slub_kversion){7, 1}, 8, sl_test_scale(200000));
}

static void test_four_cpus_small_sheaves_618(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(4, (sl_slub_kversion){6, 18}, 4, sl_test_scale(400000));
}

/* The same workload without sheaves: 4.4's frozen CPU partial slabs, 4.3's bulk free, 7.0's bootstrap sheaf. */
static void test_frozen_partials_44(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(4, (sl_slub_kversion){4, 4}, 0, sl_test_scale(400000));
    stress(2, (sl_slub_kversion){4, 3}, 0, sl_test_scale(200000));
}

static void test_no_sheaves_70(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(3, (sl_slub_kversion){7, 0}, 0, sl_test_scale(300000));
}

/* NUMA: two nodes (remote frees bypass the sheaves, get_any_partial), and 7.1's barn of a memoryless node. */
static void test_numa_nodes(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress_nodes(4, (sl_slub_kversion){7, 0}, 8, sl_test_scale(300000), 2, 0);
    stress_nodes(3, (sl_slub_kversion){7, 1}, 8, sl_test_scale(300000), 3, 2); /* CPU 1 on memoryless node 1 */
    stress_nodes(4, (sl_slub_kversion){6, 18}, 4, sl_test_scale(200000), 2, 0);
    stress_nodes(4, (sl_slub_kversion){6, 8}, 0, sl_test_scale(200000), 2, 0);
}

int main(void)
{
    SL_RUN(test_numa_nodes);
    SL_RUN(test_two_cpus_70);
    SL_RUN(test_eras_71_to_73);
    SL_RUN(test_four_cpus_small_sheaves_618);
    SL_RUN(test_frozen_partials_44);
    SL_RUN(test_no_sheaves_70);
    return sl_check_summary();
}
