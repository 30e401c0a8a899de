/* test_slub_interrupt.c - interrupts injected into the fast paths through the deterministic
 * driver: the tid makes cmpxchg/locked retry; the RFC's plain writes corrupt the freelist and
 * validate() says so; PREEMPT_RT's local_lock makes everything read before it be read again.
 * Also micro-step snapshots and replay determinism. */
#include "check.h"

#include "../src/sched/sched.h"

#include <string.h>

typedef struct world {
    sl_trace tr;
    sl_page_zone zone;
    sl_slub_cache *s;
} world;

static bool world_init(world *w, sl_slub_fastpath fp)
{
    sl_slub_config cfg = {.object_size = 256, .flags = SL_SLUB_HWCACHE_ALIGN, .track = 1, .fastpath = (uint8_t)fp};
    return sl_trace_init(&w->tr, 2, 1 << 14) == SL_OK && sl_page_zone_init(&w->zone, 1u << 20, &w->tr) == SL_OK &&
           sl_slub_cache_create(&w->zone, &w->tr, 2, &cfg, &w->s) == SL_OK;
}

/* Also for a cache corrupted on purpose: destroy's walks are bounded. */
static void world_fini(world *w)
{
    sl_slub_cache_destroy(w->s);
    sl_page_zone_destroy(&w->zone);
    sl_trace_destroy(&w->tr);
}

#if defined(SLABLAB_BENCH)
#define SKIP_IN_BENCH() SL_SKIP("preemption points and events are compiled out in benchmark builds")
#else
#define SKIP_IN_BENCH() ((void)0)
#endif

static const sl_sched_op warmup[] = {{SL_SCHED_ALLOC, 0, 0, 0}, {SL_SCHED_ALLOC, 0, 0, 0}, {SL_SCHED_ALLOC, 0, 0, 0}};

/* Runs warmup + one alloc on CPU 0 interrupted before its CAS by an alloc. */
static void run_alloc_interrupted(world *w, int32_t results[4], sl_sched_run *r)
{
    sl_sched_op ops[4];
    memcpy(ops, warmup, sizeof warmup);
    ops[3] = (sl_sched_op){SL_SCHED_ALLOC, 0, 0, 0};
    static sl_sched_irq irq;
    irq = (sl_sched_irq){.at_op = 3, .point = SL_SLUB_PP_ALLOC_BEFORE_CAS, .handler = {SL_SCHED_ALLOC, 0, 0, 0}};
    *r = (sl_sched_run){.cache = w->s,
                        .trace = &w->tr,
                        .ops = ops,
                        .nops = 4,
                        .irqs = &irq,
                        .nirqs = 1,
                        .stop_at_microstep = SL_SCHED_NO_STOP,
                        .results = results};
    SL_CHECK_EQ(sl_sched_execute(r), SL_OK);
}

/*
 * "Why the tid", in every variant.  cmpxchg and locked: the interrupted CAS fails on the changed
 * tid and the operation retries.  Seed 001's plain writes have no tid check: the interrupted
 * alloc writes back the freelist it had read and hands out the handler's object again.  rt: the
 * point sits before local_lock; the handler's alloc takes the head, and the interrupted one,
 * under the lock, reads the freelist again (no tid needed there): no retry, nothing handed out
 * twice.
 */
static void test_alloc_interrupted(void)
{
    SKIP_IN_BENCH();
    for (int fp = SL_SLUB_FP_CMPXCHG; fp < SL_SLUB_NR_FASTPATHS; fp++) {
        world w;
        SL_REQUIRE(world_init(&w, (sl_slub_fastpath)fp));
        int32_t res[4];
        sl_sched_run r;
        run_alloc_interrupted(&w, res, &r);
        SL_CHECK_EQ(r.irqs_fired, 1);
        SL_CHECK_EQ(r.irq_results[0], SL_OK);
        bool retries = fp == SL_SLUB_FP_CMPXCHG || fp == SL_SLUB_FP_LOCKED;
        SL_CHECK_EQ(sl_slub_stat_get(w.s, 0, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL), retries ? 1 : 0);
        char msg[200];
        if (fp == SL_SLUB_FP_PLAIN) {
            SL_CHECK_EQ(res[3], SL_EFREELIST);
            SL_CHECK_EQ(sl_slub_validate(w.s, msg, sizeof msg), SL_EFREELIST);
            SL_CHECK(strstr(msg, "twice") != NULL);
            world_fini(&w);
            continue;
        }
        SL_CHECK_EQ(res[3], SL_OK);
        SL_CHECK_EQ(sl_slub_validate(w.s, msg, sizeof msg), SL_OK);
        if (fp == SL_SLUB_FP_RT)
            SL_CHECK_EQ(sl_slub_stat_get(w.s, 0, SL_SLUB_ALLOC_SLOWPATH), 5);
        /* Five objects handed out, all distinct: the snapshot counts five allocated. */
        unsigned char snap[8192];
        long n = sl_slub_snapshot(w.s, snap, sizeof snap);
        SL_REQUIRE(n > 0);
        uint32_t nobj, off_obj;
        memcpy(&nobj, snap + 20, 4);
        memcpy(&off_obj, snap + 48, 4);
        unsigned allocated = 0;
        for (uint32_t i = 0; i < nobj; i++)
            allocated += snap[off_obj + 16 * i] == 2;
        SL_CHECK_EQ(allocated, 5);
        /* The events show the failed CAS between the interrupt and the retry (none with rt). */
        sl_event ev[2048];
        unsigned ne = sl_trace_drain(&w.tr, 0, ev, 2048), seen_irq = 0, fail_after_irq = 0;
        for (unsigned i = 0; i < ne; i++) {
            if (ev[i].kind == SL_EV_INTERRUPT_END)
                seen_irq = 1;
            if (seen_irq && ev[i].kind == SL_EV_SLUB_CPU_CAS_FAIL)
                fail_after_irq = 1;
        }
        SL_CHECK_EQ(fail_after_irq, retries ? 1u : 0u);
        world_fini(&w);
    }
}

/*
 * Runs warmup on CPU 0, then frees its slab's object 1 while an interrupt runs `handler` (an
 * op kind) on the same CPU at the free's preemption point; *res gets the free's result.
 */
static void run_free_interrupted(world *w, uint8_t handler, int32_t *res, sl_sched_run *r)
{
    sl_sched_run r0 = {.cache = w->s, .trace = &w->tr, .ops = warmup, .nops = 3, .stop_at_microstep = SL_SCHED_NO_STOP};
    SL_CHECK_EQ(sl_sched_execute(&r0), SL_OK);
    unsigned char snap[8192];
    SL_REQUIRE(sl_slub_snapshot(w->s, snap, sizeof snap) > 0);
    uint32_t off_slab;
    static sl_sched_ref ref;
    memcpy(&off_slab, snap + 44, 4);
    memcpy(&ref.pfn, snap + off_slab, 4);
    ref.index = 1;
    static const sl_sched_op op = {SL_SCHED_FREE, 0, 0, 0};
    static sl_sched_irq irq;
    irq = (sl_sched_irq){.at_op = 0, .point = SL_SLUB_PP_FREE_BEFORE_CAS, .handler = {handler, 0, 0, 0}};
    *r = (sl_sched_run){.cache = w->s,
                        .trace = &w->tr,
                        .ops = &op,
                        .nops = 1,
                        .refs = &ref,
                        .nrefs = 1,
                        .irqs = &irq,
                        .nirqs = 1,
                        .stop_at_microstep = SL_SCHED_NO_STOP,
                        .results = res};
    SL_CHECK_EQ(sl_sched_execute(r), SL_OK);
}

/* rt: the CPU slab changes between the comparison and local_lock (a flush): the free starts over. */
static void test_rt_free_sees_the_slab_change(void)
{
    SKIP_IN_BENCH();
    world w;
    SL_REQUIRE(world_init(&w, SL_SLUB_FP_RT));
    int32_t res;
    sl_sched_run r;
    run_free_interrupted(&w, SL_SCHED_FLUSH, &res, &r);
    SL_CHECK_EQ(r.irqs_fired, 1);
    SL_CHECK_EQ(res, SL_OK);
    SL_CHECK_EQ(sl_slub_stat_get(w.s, 0, SL_SLUB_FREE_SLOWPATH), 1); /* redone as __slab_free */
    sl_event ev[512];
    unsigned ne = sl_trace_drain(&w.tr, 0, ev, 512), redo = 0;
    for (unsigned i = 0; i < ne; i++)
        redo += ev[i].kind == SL_EV_SLUB_RT_REDO;
    SL_CHECK_EQ(redo, 1);
    SL_CHECK_EQ(sl_slub_validate(w.s, NULL, 0), SL_OK);
    world_fini(&w);
}

static void test_free_interrupted(void)
{
    SKIP_IN_BENCH();
    for (int fp = SL_SLUB_FP_CMPXCHG; fp < SL_SLUB_NR_FASTPATHS; fp++) {
        world w;
        SL_REQUIRE(world_init(&w, (sl_slub_fastpath)fp));
        /* Allocate three, then free the second while an interrupt allocates on the same CPU. */
        int32_t res;
        sl_sched_run r;
        run_free_interrupted(&w, SL_SCHED_ALLOC, &res, &r);
        SL_CHECK_EQ(r.irqs_fired, 1);
        SL_CHECK_EQ(res, SL_OK);
        int v = sl_slub_validate(w.s, NULL, 0);
        if (fp == SL_SLUB_FP_PLAIN) {
            /* The freed object now points at the object the handler took: an allocated object on
             * the CPU freelist. */
            SL_CHECK_EQ(v, SL_EFREELIST);
        } else {
            /* cmpxchg and locked retry on the changed tid; rt reads the freelist under its lock. */
            SL_CHECK_EQ(v, SL_OK);
            SL_CHECK_EQ(sl_slub_stat_get(w.s, 0, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL), fp == SL_SLUB_FP_RT ? 0 : 1);
        }
        world_fini(&w);
    }
}

static void test_microstep_stop_and_determinism(void)
{
    SKIP_IN_BENCH();
    sl_sched_op ops[8] = {{SL_SCHED_ALLOC, 0, 0, 0},       {SL_SCHED_ALLOC, 0, 0, 0}, {SL_SCHED_ALLOC, 1, 0, 0},
                          {SL_SCHED_ALLOC_BULK, 1, 20, 0}, {SL_SCHED_ALLOC, 0, 0, 0}, {SL_SCHED_FREE, 1, 0, 0},
                          {SL_SCHED_FREE_BULK, 0, 3, 1},   {SL_SCHED_FLUSH, 1, 0, 0}};
    sl_sched_irq irq = {.at_op = 4, .point = SL_SLUB_PP_ALLOC_BEFORE_CAS, .handler = {SL_SCHED_ALLOC, 0, 0, 0}};
    static unsigned char snaps[3][16384], stop[16384];
    sl_event evs[2][512];
    unsigned nev[2] = {0, 0};
    long lens[3];
    for (int round = 0; round < 3; round++) {
        world w;
        SL_REQUIRE(world_init(&w, SL_SLUB_FP_CMPXCHG));
        /* Objects to free are named by place, as the UI does: the first slab (pfn 0, the lowest
         * block) objects 0..3. */
        sl_sched_ref refs[4];
        for (unsigned i = 0; i < 4; i++)
            refs[i] = (sl_sched_ref){0, i};
        sl_sched_run r = {.cache = w.s,
                          .trace = &w.tr,
                          .ops = ops,
                          .nops = 8,
                          .refs = refs,
                          .nrefs = 4,
                          .irqs = &irq,
                          .nirqs = 1,
                          .stop_at_microstep = round == 2 ? 3 : SL_SCHED_NO_STOP,
                          .snap_buf = stop,
                          .snap_cap = sizeof stop};
        SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
        lens[round] = sl_slub_snapshot(w.s, snaps[round], sizeof snaps[round]);
        SL_REQUIRE(lens[round] > 0);
        if (round < 2) {
            SL_CHECK_EQ(r.ops_done, 8);
            SL_CHECK(r.microsteps >= 5);
            SL_CHECK_EQ(r.irqs_fired, 1);
            SL_CHECK_EQ(sl_slub_validate(w.s, NULL, 0), SL_OK);
            nev[round] = sl_trace_drain(&w.tr, 0, evs[round], 512);
        } else {
            SL_CHECK(r.snap_len > 0);
            SL_CHECK(r.ops_done < 8);
            SL_CHECK_EQ(r.ops_done, r.stop_op + 1);
        }
        world_fini(&w);
    }
    SL_CHECK_EQ(lens[0], lens[1]);
    SL_CHECK(memcmp(snaps[0], snaps[1], (size_t)lens[0]) == 0);
    SL_CHECK_EQ(nev[0], nev[1]);
    SL_CHECK(nev[0] > 10 && memcmp(evs[0], evs[1], sizeof(sl_event) * nev[0]) == 0);
}

/* A micro-step inside a detached-freelist bulk free shows the group being freed as its own chain. */
static void test_detached_freelist_in_flight(void)
{
    SKIP_IN_BENCH();
    world w;
    SL_REQUIRE(world_init(&w, SL_SLUB_FP_CMPXCHG));
    sl_sched_ref refs[16];
    for (unsigned i = 0; i < 16; i++)
        refs[i] = (sl_sched_ref){0, i}; /* the first slab, full, not CPU 0's slab any more */
    sl_sched_op ops[2] = {{SL_SCHED_ALLOC_BULK, 0, 32, 0}, {SL_SCHED_FREE_BULK, 0, 16, 0}};
    static unsigned char snap[16384];
    sl_sched_run r = {.cache = w.s,
                      .trace = &w.tr,
                      .ops = ops,
                      .nops = 2,
                      .refs = refs,
                      .nrefs = 16,
                      .stop_at_microstep = 1,
                      .snap_buf = snap,
                      .snap_cap = sizeof snap};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_REQUIRE(r.snap_len > 0);
    SL_CHECK_EQ(r.stop_op, 1);
    uint32_t h[21];
    memcpy(h, snap, sizeof h);
    SL_CHECK_EQ(h[18], 0);  /* in-flight chain head: slab pfn 0 */
    SL_CHECK_EQ(h[20], 16); /* one group of 16 */
    const unsigned char *objs = snap + h[12];
    unsigned inflight = 0, walked = 0;
    for (unsigned i = 0; i < 16; i++)
        inflight += objs[16 * i] == 6;
    SL_CHECK_EQ(inflight, 16);
    for (uint32_t i = h[19]; i != 0xffffffffu && walked < 20; walked++) {
        SL_REQUIRE(i < 16 && objs[16 * i] == 6);
        memcpy(&i, objs + 16 * i + 4, 4);
    }
    SL_CHECK_EQ(walked, 16);
    /* After the run the group is on the slab's freelist. */
    SL_CHECK_EQ(sl_slub_validate(w.s, NULL, 0), SL_OK);
    world_fini(&w);
}

static void test_bad_scripts_are_refused(void)
{
    world w;
    SL_REQUIRE(world_init(&w, SL_SLUB_FP_CMPXCHG));
    sl_sched_op bad_cpu = {SL_SCHED_ALLOC, 5, 0, 0}, bad_kind = {9, 0, 0, 0}, bad_ref = {SL_SCHED_FREE, 0, 0, 3};
    sl_sched_run r = {.cache = w.s, .trace = &w.tr, .ops = &bad_cpu, .nops = 1, .stop_at_microstep = SL_SCHED_NO_STOP};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_EINVAL);
    r.ops = &bad_kind;
    SL_CHECK_EQ(sl_sched_execute(&r), SL_EINVAL);
    r.ops = &bad_ref;
    SL_CHECK_EQ(sl_sched_execute(&r), SL_EINVAL);
    /* A reference to a place holding no object is run, and the free reports a foreign pointer. */
    sl_sched_ref nowhere = {12345, 0};
    sl_sched_op fr = {SL_SCHED_FREE, 0, 0, 0};
    int32_t res;
    r = (sl_sched_run){.cache = w.s,
                       .trace = &w.tr,
                       .ops = &fr,
                       .nops = 1,
                       .refs = &nowhere,
                       .nrefs = 1,
                       .stop_at_microstep = SL_SCHED_NO_STOP,
                       .results = &res};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_CHECK_EQ(res, SL_EFOREIGN);
    world_fini(&w);
}

/*
 * The context and no-lock operations through the driver on 7.0: an atomic
 * alloc on empty sheaves refills a sheaf (it may spin: 7.0-rc3's
 * fb1091febd66), as a blocking one does; a kmalloc_nolock from an interrupt at the sheaf preemption
 * point (local_trylock held) goes to a slab; a kfree_nolock from an
 * interrupt inside the sheaf free is deferred until the irq_work op.  A
 * context the driver does not know is refused before anything runs.
 */
static void test_context_and_nolock_ops(void)
{
    SKIP_IN_BENCH();
    world w;
    sl_slub_config cfg = {
        .object_size = 256, .flags = SL_SLUB_HWCACHE_ALIGN, .track = 1, .kernel = {.version = {7, 0}}};
    SL_REQUIRE(sl_trace_init(&w.tr, 2, 1 << 14) == SL_OK && sl_page_zone_init(&w.zone, 1u << 20, &w.tr) == SL_OK &&
               sl_slub_cache_create(&w.zone, &w.tr, 2, &cfg, &w.s) == SL_OK);
#define STAT(item) sl_slub_stat_get(w.s, -1, SL_SLUB_##item)
    const sl_sched_op first[2] = {{SL_SCHED_ALLOC_GFP, 0, SL_SLUB_GFP_ATOMIC, 0}, {SL_SCHED_ALLOC, 1, 0, 0}};
    int32_t res[3] = {-1, -1, -1};
    sl_sched_run r = {
        .cache = w.s, .trace = &w.tr, .ops = first, .nops = 1, .stop_at_microstep = SL_SCHED_NO_STOP, .results = res};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_CHECK_EQ(res[0], SL_OK);
    uint64_t atomic_refill = STAT(SHEAF_REFILL);
    SL_CHECK(atomic_refill > 0);
    SL_CHECK_EQ(STAT(ALLOC_SLOWPATH), 0u);
    r.ops = first + 1;
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_CHECK_EQ(res[0], SL_OK);
    SL_CHECK_EQ(STAT(SHEAF_REFILL), 2 * atomic_refill);

    /* CPU 1 now has a filled main sheaf: interrupt an alloc and a free inside it. */
    const sl_sched_op ops[3] = {{SL_SCHED_ALLOC, 1, 0, 0}, {SL_SCHED_ALLOC, 1, 0, 0}, {SL_SCHED_IRQ_WORK, 1, 0, 0}};
    sl_sched_irq irq = {.at_op = 0, .point = SL_SLUB_PP_SHEAF_ALLOC, .handler = {SL_SCHED_KMALLOC_NOLOCK, 0, 0, 0}};
    r = (sl_sched_run){.cache = w.s,
                       .trace = &w.tr,
                       .ops = ops,
                       .nops = 1,
                       .irqs = &irq,
                       .nirqs = 1,
                       .stop_at_microstep = SL_SCHED_NO_STOP,
                       .results = res};
    uint64_t slow = STAT(ALLOC_SLOWPATH);
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_CHECK_EQ(r.irqs_fired, 1u);
    SL_CHECK_EQ(r.irq_results[0], SL_OK);
    SL_CHECK_EQ(STAT(ALLOC_SLOWPATH), slow + 1); /* the handler's, from a slab */
    SL_CHECK_EQ(sl_slub_validate(w.s, NULL, 0), SL_OK);

    /* A free on CPU 1 interrupted inside its sheaf section by a kfree_nolock: deferred to the irq_work op. */
    void *a = NULL, *b = NULL;
    SL_REQUIRE(sl_slub_alloc(w.s, 1, &a) == SL_OK && sl_slub_alloc(w.s, 1, &b) == SL_OK);
    sl_sched_ref refs[2] = {{0, 0}, {0, 0}};
    for (uint32_t pfn = 0; pfn < 1024; pfn++)
        for (uint32_t i = 0; i < 64; i++) {
            void *o = sl_slub_object_at(w.s, pfn, i);
            if (o && (o == a || o == b))
                refs[o == a ? 0 : 1] = (sl_sched_ref){pfn, i};
        }
    SL_REQUIRE(sl_slub_object_at(w.s, refs[0].pfn, refs[0].index) == a &&
               sl_slub_object_at(w.s, refs[1].pfn, refs[1].index) == b);
    const sl_sched_op fr[3] = {{SL_SCHED_FREE, 1, 0, 0}, {SL_SCHED_IRQ_WORK, 1, 0, 0}, {SL_SCHED_IRQ_WORK, 1, 0, 0}};
    irq = (sl_sched_irq){.at_op = 0, .point = SL_SLUB_PP_SHEAF_FREE, .handler = {SL_SCHED_KFREE_NOLOCK, 0, 0, 1}};
    r = (sl_sched_run){.cache = w.s,
                       .trace = &w.tr,
                       .ops = fr,
                       .nops = 3,
                       .refs = refs,
                       .nrefs = 2,
                       .irqs = &irq,
                       .nirqs = 1,
                       .stop_at_microstep = SL_SCHED_NO_STOP,
                       .results = res};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_CHECK_EQ(r.irqs_fired, 1u);
    SL_CHECK_EQ(r.irq_results[0], SL_OK);
    SL_CHECK_EQ(res[0], SL_OK);
    SL_CHECK_EQ(res[1], 1); /* b waited on CPU 1's deferred list */
    SL_CHECK_EQ(res[2], 0);
    SL_CHECK_EQ(sl_slub_validate(w.s, NULL, 0), SL_OK);

    /* A context other than GFP_ATOMIC (1) or GFP_NOWAIT (2) is refused before anything runs. */
    const sl_sched_op bad[2] = {{SL_SCHED_ALLOC, 0, 0, 0}, {SL_SCHED_ALLOC_GFP, 0, 3, 0}};
    const sl_sched_op bad_ref = {SL_SCHED_KFREE_NOLOCK, 0, 0, 5};
    r = (sl_sched_run){.cache = w.s,
                       .trace = &w.tr,
                       .ops = bad,
                       .nops = 2,
                       .refs = refs,
                       .nrefs = 2,
                       .stop_at_microstep = SL_SCHED_NO_STOP,
                       .results = res};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_EINVAL);
    SL_CHECK_EQ(r.ops_done, 0u);
    r.ops = &bad_ref;
    r.nops = 1;
    SL_CHECK_EQ(sl_sched_execute(&r), SL_EINVAL);
    /* A kfree_nolock of a place holding no object runs, and reports a foreign pointer. */
    const sl_sched_ref nowhere = {12345, 0};
    const sl_sched_op kfn = {SL_SCHED_KFREE_NOLOCK, 0, 0, 0};
    r = (sl_sched_run){.cache = w.s,
                       .trace = &w.tr,
                       .ops = &kfn,
                       .nops = 1,
                       .refs = &nowhere,
                       .nrefs = 1,
                       .stop_at_microstep = SL_SCHED_NO_STOP,
                       .results = res};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_CHECK_EQ(res[0], SL_EFOREIGN);
    SL_CHECK_EQ(sl_slub_validate(w.s, NULL, 0), SL_OK);
    world_fini(&w);
#undef STAT
}

/*
 * Bulk allocations, prefills and refills carry a context through the driver
 * (a bulk op's `first`; a sheaf op's bits 8-15 beside its slot): the ops
 * run (the context changes no path of theirs: test_slub_eras7), scripts
 * written before contexts (0: GFP_KERNEL) run as before, and a context the
 * driver does not know, or stray bits, are refused before anything runs.
 */
static void test_bulk_and_prefill_ops_take_a_context(void)
{
    SKIP_IN_BENCH();
    world w;
    sl_slub_config cfg = {.object_size = 64, .track = 1, .kernel = {.version = {7, 0}}};
    SL_REQUIRE(sl_trace_init(&w.tr, 2, 1 << 14) == SL_OK && sl_page_zone_init(&w.zone, 1u << 20, &w.tr) == SL_OK &&
               sl_slub_cache_create(&w.zone, &w.tr, 2, &cfg, &w.s) == SL_OK);
    sl_slub_sheaf *slots[SL_SCHED_SHEAF_SLOTS] = {0};
    const sl_sched_op ops[5] = {
        {SL_SCHED_ALLOC_BULK, 0, 5, SL_SLUB_GFP_ATOMIC},
        {SL_SCHED_PREFILL, 0, 3, 2 | SL_SLUB_GFP_NOWAIT << 8},
        {SL_SCHED_REFILL_SHEAF, 0, 6, 2 | SL_SLUB_GFP_ATOMIC << 8},
        {SL_SCHED_PREFILL, 1, 2, 4}, /* GFP_KERNEL, as every script before contexts */
        {SL_SCHED_ALLOC_BULK, 1, 3, 0},
    };
    int32_t res[5] = {-1, -1, -1, -1, -1};
    sl_sched_run r = {.cache = w.s,
                      .trace = &w.tr,
                      .ops = ops,
                      .nops = 5,
                      .sheaf_slots = slots,
                      .stop_at_microstep = SL_SCHED_NO_STOP,
                      .results = res};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_CHECK_EQ(res[0], 5);
    SL_CHECK_EQ(res[1], SL_OK);
    SL_CHECK_EQ(res[2], SL_OK);
    SL_CHECK_EQ(res[3], SL_OK);
    SL_CHECK_EQ(res[4], 3);
    SL_CHECK(slots[2] && sl_slub_sheaf_size(slots[2]) >= 6);
    SL_CHECK(slots[4] && sl_slub_sheaf_size(slots[4]) >= 2);
    const sl_sched_op bad[3] = {{SL_SCHED_ALLOC_BULK, 0, 2, 3},
                                {SL_SCHED_PREFILL, 0, 2, 1 | 3u << 8},
                                {SL_SCHED_REFILL_SHEAF, 0, 2, 2 | 1u << 16}};
    uint64_t bulk_calls = sl_slub_stat_get(w.s, -1, SL_SLUB_BULK_ALLOC_CALLS);
    uint64_t prefills =
        sl_slub_stat_get(w.s, -1, SL_SLUB_SHEAF_PREFILL_FAST) + sl_slub_stat_get(w.s, -1, SL_SLUB_SHEAF_PREFILL_SLOW);
    for (unsigned i = 0; i < 3; i++) {
        r.ops = &bad[i];
        r.nops = 1;
        SL_CHECK_EQ(sl_sched_execute(&r), SL_EINVAL);
    }
    SL_CHECK_EQ(sl_slub_stat_get(w.s, -1, SL_SLUB_BULK_ALLOC_CALLS), bulk_calls);
    SL_CHECK_EQ(sl_slub_stat_get(w.s, -1, SL_SLUB_SHEAF_PREFILL_FAST) +
                    sl_slub_stat_get(w.s, -1, SL_SLUB_SHEAF_PREFILL_SLOW),
                prefills);
    for (unsigned i = 0; i < SL_SCHED_SHEAF_SLOTS; i++)
        if (slots[i])
            SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, slots[i]), SL_OK);
    SL_CHECK_EQ(sl_slub_validate(w.s, NULL, 0), SL_OK);
    world_fini(&w);
}

int main(void)
{
    SL_RUN(test_alloc_interrupted);
    SL_RUN(test_rt_free_sees_the_slab_change);
    SL_RUN(test_free_interrupted);
    SL_RUN(test_microstep_stop_and_determinism);
    SL_RUN(test_detached_freelist_in_flight);
    SL_RUN(test_bad_scripts_are_refused);
    SL_RUN(test_context_and_nolock_ops);
    SL_RUN(test_bulk_and_prefill_ops_take_a_context);
    return sl_check_summary();
}
