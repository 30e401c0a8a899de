/* test_slub_bindings.c - the browser bridge's SLUB exports (bindings/api_slub.c), run in the
 * WebAssembly build only (the bindings need Emscripten's headers): worlds, operations by
 * (pfn, index), bulk through the scratch area, driver runs, and workloads on CPU threads. */
#include "check.h"

#if defined(__EMSCRIPTEN__)
#include "../bindings/api_slub.c"

static void test_world_and_operations(void)
{
    SL_CHECK(sl_api_slub_world_create(1u << 20, 9, 256, 0, 0, 0, 0, 1, 1, NULL) == NULL);
    SL_CHECK_EQ(sl_api_slub_last_error(), SL_EINVAL);
    sl_api_slub_world *w = sl_api_slub_world_create(4u << 20, 2, 256, 0, SL_SLUB_HWCACHE_ALIGN, 0, 0, 1, 1, NULL);
    SL_REQUIRE(w != NULL);
    uint32_t *sc = sl_api_slub_scratch(w, 0);
    SL_CHECK_EQ(sl_api_slub_alloc(w, 0), SL_OK);
    uint32_t pfn = sc[0], idx = sc[1];
    SL_CHECK(pfn != SL_NONE32);
    SL_CHECK_EQ(sl_api_slub_free(w, 1, pfn, idx), SL_OK);
    SL_CHECK_EQ(sl_api_slub_free(w, 1, 99999, 0), SL_EFOREIGN);
    SL_CHECK_EQ(sl_api_slub_alloc_bulk(w, 0, 40), 40);
    SL_CHECK_EQ(sl_api_slub_free_bulk(w, 0, 40), 3); /* three slabs of 16: one CAS each */
    SL_CHECK_EQ(sl_api_slub_validate(w), SL_OK);
    SL_CHECK(sl_api_slub_stat(w, -1, SL_SLUB_BULK_FREE_CAS) == 3.0);
    sl_event ev[256];
    SL_CHECK(sl_api_slub_drain(w, 0, ev, 256) > 0);
    long need = -sl_api_slub_snapshot(w, NULL, 0);
    SL_REQUIRE(need > 0);
    void *buf = malloc((size_t)need);
    SL_CHECK_EQ(sl_api_slub_snapshot(w, buf, (uint32_t)need), need);
    free(buf);
    uint32_t g[14];
    SL_CHECK_EQ(sl_api_slub_geometry(256, 256, SL_SLUB_KMALLOC, 8, g, NULL), SL_OK);
    SL_CHECK_EQ(g[6], 1);
    /* A driver run: alloc, then an alloc interrupted by an alloc. */
    sl_sched_op ops[2] = {{SL_SCHED_ALLOC, 1, 0, 0}, {SL_SCHED_ALLOC, 1, 0, 0}};
    sl_sched_irq irq = {.at_op = 1, .point = SL_SLUB_PP_ALLOC_BEFORE_CAS, .handler = {SL_SCHED_ALLOC, 0, 0, 0}};
    int32_t res[2], out[8];
    SL_CHECK_EQ(sl_api_slub_run(w, ops, 2, NULL, 0, &irq, 1, 0, NULL, 0, res, out), SL_OK);
    SL_CHECK_EQ(out[0], 2);
    SL_CHECK_EQ(out[4], 1);
    SL_CHECK_EQ(sl_api_slub_validate(w), SL_OK);
    sl_api_slub_world_destroy(w);
}

/* The kernel words of world_create and geometry, and the sysfs tunables. */
static void test_kernel_words_and_tunables(void)
{
    const uint32_t bad[5] = {11, 0xffffffffu, 0, 0, 0}; /* slub_min_order past MAX_PAGE_ORDER */
    SL_CHECK(sl_api_slub_world_create(4u << 20, 2, 256, 0, 0, 0, 0, 1, 1, bad) == NULL);
    SL_CHECK_EQ(sl_api_slub_last_error(), SL_EINVAL);
    const uint32_t too_few[5] = {0, 0xffffffffu, 0, 1, 0}; /* CONFIG_NR_CPUS below the CPU count */
    SL_CHECK(sl_api_slub_world_create(4u << 20, 2, 256, 0, 0, 0, 0, 1, 1, too_few) == NULL);
    const uint32_t k[5] = {1, 0xffffffffu, 0, 64, 0}; /* slub_min_order=1, CONFIG_NR_CPUS=64 */
    sl_api_slub_world *w = sl_api_slub_world_create(4u << 20, 2, 256, 0, 0, SL_SLUB_FP_RT, 1, 1, 1, k);
    SL_REQUIRE(w != NULL);
    uint32_t g[14];
    SL_CHECK_EQ(sl_api_slub_geometry(256, 0, 0, 2, g, k), SL_OK);
    SL_CHECK_EQ(g[6], 1);  /* order */
    SL_CHECK_EQ(g[12], 0); /* fallback_order */
    SL_CHECK_EQ(sl_slub_cache_tid_step(w->cache), 64);
    SL_CHECK_EQ(sl_api_slub_alloc(w, 0), SL_OK);
    SL_CHECK(sl_api_slub_stat(w, 0, SL_SLUB_ALLOC_SLOWPATH) == 1.0);
    SL_CHECK_EQ(sl_api_slub_stat_kernel_count(), 26 + 17);
    SL_CHECK(!strcmp(sl_api_slub_stat_name(19), "order_fallback"));
    SL_CHECK_EQ(sl_api_slub_set_min_partial(w, 0), SL_OK);
    SL_CHECK_EQ(sl_api_slub_set_cpu_partial(w, 13), SL_OK); /* flushes CPU 0 */
    SL_CHECK(sl_api_slub_stat(w, 0, SL_SLUB_CPUSLAB_FLUSH) == 1.0);
    SL_CHECK_EQ(sl_api_slub_shrink(w), 1); /* the slab holds the allocated object */
    SL_CHECK_EQ(sl_api_slub_free(w, 1, w->scratch[0][0], w->scratch[0][1]), SL_OK);
    SL_CHECK_EQ(sl_api_slub_shrink(w), 0);
    SL_CHECK_EQ(sl_api_slub_set_variant(w, 4, 0), SL_EINVAL);
    SL_CHECK_EQ(sl_api_slub_validate(w), SL_OK);
    /* A zone run short: the next slab falls back to order 0. */
    int held = sl_api_slub_fragment(w, 1);
    SL_CHECK(held > 0);
    SL_CHECK_EQ(sl_api_slub_fragment(w, 1), held); /* already */
    SL_CHECK_EQ(sl_api_slub_alloc(w, 0), SL_OK);
    SL_CHECK(sl_api_slub_stat(w, 0, SL_SLUB_ORDER_FALLBACK) == 1.0);
    SL_CHECK_EQ(sl_api_slub_fragment(w, 0), 0);
    SL_CHECK_EQ(sl_api_slub_alloc(w, 1), SL_OK); /* CPU 1's first slab: the cache's order again */
    SL_CHECK(sl_api_slub_stat(w, -1, SL_SLUB_ORDER_FALLBACK) == 1.0);
    SL_CHECK_EQ(sl_api_slub_validate(w), SL_OK);
    SL_CHECK(sl_api_slub_fragment(w, 1) > 0); /* destroy gives the pages back with the zone */
    sl_api_slub_world_destroy(w);
    SL_CHECK_EQ(sl_api_slub_shrink(NULL), SL_EINVAL);
    SL_CHECK_EQ(sl_api_slub_fragment(NULL, 1), SL_EINVAL);
}

static sl_api_slub_world *shared_world;

static void *worker(void *arg)
{
    unsigned cpu = (unsigned)(uintptr_t)arg;
    return (void *)(intptr_t)sl_api_slub_workload(shared_world, cpu, 1, 200000, 7);
}

static void test_workload_threads(void)
{
    SL_SKIP_WITHOUT_THREADS();
    shared_world = sl_api_slub_world_create(16u << 20, 2, 64, 0, 0, 0, 0, 1, 1, NULL);
    SL_REQUIRE(shared_world != NULL);
    sl_api_slub_trace_enable(shared_world, 0);
    sl_thread th[2];
    for (uintptr_t c = 0; c < 2; c++)
        SL_REQUIRE(sl_thread_start(&th[c], worker, (void *)c) == SL_OK);
    for (unsigned c = 0; c < 2; c++)
        sl_thread_join(th[c]);
    for (unsigned c = 0; c < 2; c++)
        sl_api_slub_workload_drain(shared_world, c);
    SL_CHECK_EQ(sl_api_slub_validate(shared_world), SL_OK);
    SL_CHECK(sl_api_slub_stat(shared_world, -1, SL_SLUB_FREE_SLOWPATH) > 0); /* remote frees happened */
    SL_CHECK(sl_api_slub_stat(shared_world, -1, SL_SLUB_ALLOC_FASTPATH) +
                 sl_api_slub_stat(shared_world, -1, SL_SLUB_ALLOC_SLOWPATH) ==
             sl_api_slub_stat(shared_world, -1, SL_SLUB_FREE_FASTPATH) +
                 sl_api_slub_stat(shared_world, -1, SL_SLUB_FREE_SLOWPATH));
    sl_api_slub_world_destroy(shared_world);
}

static atomic_int holder_state; /* 1: CPU 0 claimed, 2: asked to let go */

static void *hold_cpu0(void *arg)
{
    (void)arg;
    if (sl_api_slub_cpu_claim(shared_world, 0) != SL_OK)
        return NULL;
    atomic_store(&holder_state, 1);
    while (atomic_load(&holder_state) != 2)
        sl_cpu_relax();
    sl_api_slub_cpu_release(shared_world, 0);
    return NULL;
}

/* A second thread acting as a CPU is refused, not let loose on its per-CPU state. */
static void test_cpu_claims(void)
{
    SL_SKIP_WITHOUT_THREADS();
    shared_world = sl_api_slub_world_create(4u << 20, 2, 256, 0, 0, 0, 0, 1, 1, NULL);
    SL_REQUIRE(shared_world != NULL);
    /* The same thread may claim again (nested), and is refused nothing. */
    SL_CHECK_EQ(sl_api_slub_cpu_claim(shared_world, 0), SL_OK);
    SL_CHECK_EQ(sl_api_slub_alloc(shared_world, 0), SL_OK);
    sl_api_slub_cpu_release(shared_world, 0);
    sl_thread th;
    SL_REQUIRE(sl_thread_start(&th, hold_cpu0, NULL) == SL_OK);
    while (atomic_load(&holder_state) != 1)
        sl_cpu_relax();
    uint32_t *sc = sl_api_slub_scratch(shared_world, 0);
    SL_CHECK_EQ(sl_api_slub_alloc(shared_world, 0), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_free(shared_world, 0, sc[0], sc[1]), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_flush(shared_world, 0), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_workload(shared_world, 0, 0, 10, 1), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_workload_drain(shared_world, 0), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_set_variant(shared_world, 1, 0), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_set_min_partial(shared_world, 1), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_set_cpu_partial(shared_world, 1), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_shrink(shared_world), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_fragment(shared_world, 1), SL_EBUSY);
    SL_CHECK_EQ(sl_api_slub_validate(shared_world), SL_EBUSY);
    SL_CHECK(strstr(sl_api_slub_validate_message(shared_world), "in use by another thread") != NULL);
    int32_t out[8];
    sl_sched_op op = {SL_SCHED_ALLOC, 1, 0, 0};
    SL_CHECK_EQ(sl_api_slub_run(shared_world, &op, 1, NULL, 0, NULL, 0, 0, NULL, 0, NULL, out), SL_EBUSY);
    /* CPU 1 is free, and a refused run claimed none of the CPUs it could have. */
    SL_CHECK_EQ(sl_api_slub_alloc(shared_world, 1), SL_OK);
    SL_CHECK_EQ(sl_api_slub_cpu_claim(shared_world, 1), SL_OK);
    sl_api_slub_cpu_release(shared_world, 1);
    atomic_store(&holder_state, 2);
    sl_thread_join(th);
    /* Released: the object allocated before is freed as CPU 0 now. */
    SL_CHECK_EQ(sl_api_slub_free(shared_world, 0, sc[0], sc[1]), SL_OK);
    SL_CHECK_EQ(sl_api_slub_validate(shared_world), SL_OK);
    sl_api_slub_world_destroy(shared_world);
}

/* Kernel versions, sheaves, kfree_rcu and the prefill API through the bridge, and scripts that use them. */
static void test_versions_and_sheaves(void)
{
    const uint32_t bad_version[5] = {0x0402, 0, 0, 0, 0}; /* 4.2: before the model's first */
    SL_CHECK(sl_api_slub_world_create_version(4u << 20, 2, 256, 0, 0, 0, 0, 1, 1, NULL, bad_version) == NULL);
    SL_CHECK_EQ(sl_api_slub_last_error(), SL_EINVAL);
    const uint32_t early_618[5] = {0x0612, 0, 0, 1, 0}; /* early boot is 7.0's */
    SL_CHECK(sl_api_slub_world_create_version(4u << 20, 2, 256, 0, 0, 0, 0, 1, 1, NULL, early_618) == NULL);
    const uint32_t v70[5] = {0x0700, 4, 1, 0, 0}; /* 7.0, sheaves of exactly 4 */
    sl_api_slub_world *w = sl_api_slub_world_create_version(4u << 20, 2, 256, 0, 0, 0, 0, 1, 1, NULL, v70);
    SL_REQUIRE(w != NULL);
    SL_CHECK_EQ(sl_api_slub_world_version(w), 0x0700 | SL_SLUB_ERA_SHEAVES << 16);
    uint32_t *sc = sl_api_slub_scratch(w, 0);
    SL_CHECK_EQ(sl_api_slub_alloc(w, 0), SL_OK);
    uint32_t pfn = sc[0], idx = sc[1];
    SL_CHECK_EQ(sl_api_slub_kfree_rcu(w, 0, pfn, idx), SL_OK);
    SL_CHECK_EQ(sl_api_slub_kfree_rcu(w, 0, 99999, 0), SL_EFOREIGN);
    uint32_t info[6];
    SL_CHECK_EQ(sl_api_slub_sheaves_info(w, info), SL_OK);
    SL_CHECK_EQ(info[0], 4);
    SL_CHECK_EQ(info[5], 1);
    SL_CHECK_EQ(sl_api_slub_rcu_grace_period(w, 0), 0); /* the rcu_free sheaf is not full yet */
    SL_CHECK_EQ(sl_api_slub_flush(w, 0), SL_OK);        /* ... a flush hands it to RCU */
    SL_CHECK_EQ(sl_api_slub_rcu_grace_period(w, 0), 1);
    SL_CHECK_EQ(sl_api_slub_prefill_sheaf(w, 1, 0, 3), SL_OK);
    SL_CHECK_EQ(sl_api_slub_prefill_sheaf(w, 1, 0, 3), SL_EBUSY); /* the slot is taken */
    SL_CHECK_EQ(sl_api_slub_sheaf_size(w, 0), 4);
    SL_CHECK_EQ(sl_api_slub_alloc_from_sheaf(w, 1, 0), SL_OK);
    SL_CHECK(sl_api_slub_scratch(w, 1)[0] != SL_NONE32);
    SL_CHECK_EQ(sl_api_slub_alloc_from_sheaf(w, 1, 1), SL_EINVAL); /* an empty slot */
    SL_CHECK_EQ(sl_api_slub_refill_sheaf(w, 1, 0, 9), SL_OK);      /* oversize */
    SL_CHECK_EQ(sl_api_slub_sheaf_size(w, 0), 9);
    SL_CHECK_EQ(sl_api_slub_return_sheaf(w, 1, 0), SL_OK);
    SL_CHECK_EQ(sl_api_slub_sheaf_size(w, 0), -1);
    /* A script: kfree_rcu, a grace period, a prefill and an allocation from it, an interrupt in the sheaf section. */
    SL_CHECK_EQ(sl_api_slub_alloc(w, 0), SL_OK);
    sl_sched_ref ref = {sc[0], sc[1]};
    sl_sched_op ops[5] = {{SL_SCHED_KFREE_RCU, 0, 0, 0},
                          {SL_SCHED_RCU_GP, 0, 0, 0},
                          {SL_SCHED_PREFILL, 1, 2, 3},
                          {SL_SCHED_ALLOC_FROM_SHEAF, 1, 0, 3},
                          {SL_SCHED_ALLOC, 0, 0, 0}};
    sl_sched_irq irq = {.at_op = 1, .point = SL_SLUB_PP_SHEAF_ALLOC, .handler = {SL_SCHED_ALLOC, 0, 0, 0}};
    int32_t res[5], out[8];
    SL_CHECK_EQ(sl_api_slub_run(w, ops, 3, &ref, 1, NULL, 0, 0, NULL, 0, res, out), SL_OK);
    SL_CHECK_EQ(res[2], SL_OK);
    int prefilled = sl_api_slub_sheaf_size(w, 3);
    SL_CHECK(prefilled >= 2);
    SL_CHECK_EQ(sl_api_slub_run(w, ops + 3, 2, &ref, 1, &irq, 1, 0, NULL, 0, res, out), SL_OK);
    SL_CHECK_EQ(out[0], 2);
    SL_CHECK_EQ(out[4], 1);     /* the interrupt fired inside alloc_from_pcs */
    SL_CHECK_EQ(out[5], SL_OK); /* ... and its allocation took the slab path */
    SL_CHECK_EQ(res[0], SL_OK);
    SL_CHECK_EQ(sl_api_slub_sheaf_size(w, 3), prefilled - 1); /* the slot survives between runs */
    sl_sched_op shrink_irq = {SL_SCHED_SHRINK, 0, 0, 0};
    irq.handler = shrink_irq; /* a shrink is never an interrupt handler */
    SL_CHECK_EQ(sl_api_slub_run(w, ops + 4, 1, NULL, 0, &irq, 1, 0, NULL, 0, res, out), SL_EINVAL);
    SL_CHECK_EQ(sl_api_slub_validate(w), SL_OK);
    /* The snapshot taken quiet holds the sheaves; the counters of 7.0 by name. */
    long need = -sl_api_slub_snapshot(w, NULL, 0);
    SL_REQUIRE(need > 0);
    unsigned char *buf = malloc((size_t)need);
    SL_CHECK_EQ(sl_api_slub_snapshot(w, buf, (uint32_t)need), need);
    SL_CHECK_EQ(buf[92] & 3, 1);
    free(buf);
    SL_CHECK_EQ(sl_api_slub_kstat_count(0x0700), 26);
    SL_CHECK_EQ(sl_api_slub_kstat_count(0x0612), 43);
    SL_CHECK_EQ(sl_api_slub_kstat_count(0), 26);
    /* A kernel newer than the newest modelled gets that one's counters (7.3's), with a notice elsewhere; a bad version none. */
    SL_CHECK_EQ(sl_api_slub_kstat_count(0x0802), sl_api_slub_kstat_count(0x0703));
    SL_CHECK_EQ(sl_api_slub_kstat_count(0x10000), SL_EINVAL);
    SL_CHECK(!strcmp(sl_api_slub_kstat_name(0x0700, 0), "alloc_fastpath"));
    SL_CHECK_EQ(sl_api_slub_kstat_stat(0x0700, 0), SL_SLUB_ALLOC_PCS);
    SL_CHECK(sl_api_slub_kstat_name(0x0700, 26) == NULL);
    SL_CHECK_EQ(sl_api_slub_sheaf_capacity(0x0700, 256, 0, 0), 28);
    uint32_t g[14];
    SL_CHECK_EQ(sl_api_slub_geometry_version(10928, 8, 0, 2, g, NULL, 0x0404), SL_OK);
    SL_CHECK_EQ(g[6], 2);
    SL_CHECK_EQ(sl_api_slub_geometry_version(10928, 8, 0, 2, g, NULL, 0x0700), SL_OK);
    SL_CHECK_EQ(g[6], 3);
    SL_CHECK_EQ(sl_api_slub_bootstrap_sheaves(w), SL_EINVAL); /* not created early */
    sl_api_slub_world_destroy(w);
    /* 7.0 created early: the bootstrap sheaf until bootstrap_cache_sheaves. */
    const uint32_t early[5] = {0x0700, 0, 0, 1, 0};
    w = sl_api_slub_world_create_version(4u << 20, 1, 64, 0, 0, 0, 0, 1, 1, NULL, early);
    SL_REQUIRE(w != NULL);
    SL_CHECK_EQ(sl_api_slub_sheaves_info(w, info), SL_OK);
    SL_CHECK_EQ(info[0], 0);
    /* No sheaves yet: kmem_cache_prefill_sheaf hands out an oversize sheaf instead of refusing. */
    SL_CHECK_EQ(sl_api_slub_prefill_sheaf(w, 0, 0, 2), SL_OK);
    SL_CHECK_EQ(sl_api_slub_bootstrap_sheaves(w), SL_OK);
    SL_CHECK_EQ(sl_api_slub_sheaves_info(w, info), SL_OK);
    SL_CHECK_EQ(info[0], 60);
    sl_api_slub_world_destroy(w);
}

/* The allocation's context, kmalloc_nolock, kfree_nolock, kfree_rcu_nolock and the irq_work through the bridge. */
static void test_gfp_and_nolock(void)
{
    const uint32_t v70[5] = {0x0700, 4, 1, 0, 0}, v617[5] = {0x0611, 0, 0, 0, 0};
    sl_api_slub_world *w = sl_api_slub_world_create_version(4u << 20, 1, 256, 0, 0, 0, 0, 1, 1, NULL, v70);
    SL_REQUIRE(w != NULL);
    uint32_t *sc = sl_api_slub_scratch(w, 0);
    SL_CHECK_EQ(sl_api_slub_alloc_gfp(w, 0, 1), SL_OK); /* GFP_ATOMIC on 7.0: it may spin, so a refill */
    SL_CHECK(sc[0] != SL_NONE32);
    SL_CHECK_EQ(sl_api_slub_stat(w, -1, SL_SLUB_SHEAF_REFILL), 4);
    SL_CHECK_EQ(sl_api_slub_stat(w, -1, SL_SLUB_ALLOC_PCS), 1);
    SL_CHECK_EQ(sl_api_slub_stat(w, -1, SL_SLUB_ALLOC_SLOWPATH), 0);
    SL_CHECK_EQ(sl_api_slub_alloc_gfp(w, 0, 9), SL_EINVAL);
    SL_CHECK(sc[0] == SL_NONE32);
    SL_CHECK_EQ(sl_api_slub_kmalloc_nolock(w, 0), SL_OK);
    uint32_t pfn = sc[0], idx = sc[1];
    SL_CHECK(pfn != SL_NONE32);
    SL_CHECK_EQ(sl_api_slub_kfree_nolock(w, 0, pfn, idx), SL_OK); /* main has room: onto it */
    SL_CHECK_EQ(sl_api_slub_kfree_nolock(w, 0, 99999, 0), SL_EFOREIGN);
    SL_CHECK_EQ(sl_api_slub_kmalloc_nolock(w, 0), SL_OK);
    SL_CHECK_EQ(sl_api_slub_kfree_rcu_nolock(w, 0, sc[0], sc[1], 0), SL_EINVAL); /* 7.3 only */
    SL_CHECK_EQ(sl_api_slub_kfree_nolock(w, 0, sc[0], sc[1]), SL_OK);
    SL_CHECK_EQ(sl_api_slub_irq_work(w, 0), 0);
    SL_CHECK_EQ(sl_api_slub_irq_work(w, 3), SL_EINVAL);
    SL_CHECK_EQ(sl_api_slub_validate(w), SL_OK);
    sl_api_slub_world_destroy(w);
    w = sl_api_slub_world_create_version(4u << 20, 1, 256, 0, 0, 0, 0, 1, 1, NULL, v617);
    SL_REQUIRE(w != NULL);
    SL_CHECK_EQ(sl_api_slub_kmalloc_nolock(w, 0), SL_EINVAL); /* came with 6.18 */
    sl_api_slub_world_destroy(w);
    /* 7.3: kfree_rcu_nolock through the bridge; the irq_work then kfree_rcu's what it deferred */
    const uint32_t v73[5] = {0x0703, 4, 1, 0, 0};
    w = sl_api_slub_world_create_version(4u << 20, 1, 256, 0, 0, 0, 0, 1, 1, NULL, v73);
    SL_REQUIRE(w != NULL);
    sc = sl_api_slub_scratch(w, 0);
    SL_CHECK_EQ(sl_api_slub_kmalloc_nolock(w, 0), SL_OK);
    SL_CHECK_EQ(sl_api_slub_kfree_rcu_nolock(w, 0, sc[0], sc[1], 1), SL_OK);
    SL_CHECK_EQ(sl_api_slub_stat(w, -1, SL_SLUB_FREE_RCU_SHEAF), 1);
    SL_CHECK_EQ(sl_api_slub_kfree_rcu_nolock(w, 0, 99999, 0, 0), SL_EFOREIGN);
    SL_CHECK_EQ(sl_api_slub_kfree_rcu_nolock(w, 2, sc[0], sc[1], 0), SL_EINVAL);
    SL_CHECK_EQ(sl_api_slub_validate(w), SL_OK);
    sl_api_slub_world_destroy(w);
}

/*
 * Bulk allocation, prefill and refill in a context through the bridge: each
 * takes GFP_KERNEL's path (the same objects and counters in a second world),
 * and an unknown context is refused with nothing done.
 */
static void test_bulk_and_prefill_gfp(void)
{
    const uint32_t v70[5] = {0x0700, 4, 1, 0, 0};
    uint64_t refill[2], slow[2];
    uint32_t first[2][2];
    for (unsigned g = 0; g < 2; g++) {
        sl_api_slub_world *w = sl_api_slub_world_create_version(4u << 20, 1, 256, 0, 0, 0, 0, 1, 1, NULL, v70);
        SL_REQUIRE(w != NULL);
        uint32_t *sc = sl_api_slub_scratch(w, 0);
        SL_CHECK_EQ(sl_api_slub_alloc_bulk_gfp(w, 0, g ? SL_SLUB_GFP_ATOMIC : SL_SLUB_GFP_KERNEL, 6), 6);
        first[g][0] = sc[0];
        first[g][1] = sc[1];
        SL_CHECK_EQ(sl_api_slub_prefill_sheaf_gfp(w, 0, 1, g ? SL_SLUB_GFP_NOWAIT : SL_SLUB_GFP_KERNEL, 2), SL_OK);
        SL_CHECK_EQ(sl_api_slub_refill_sheaf_gfp(w, 0, 1, g ? SL_SLUB_GFP_ATOMIC : SL_SLUB_GFP_KERNEL, 4), SL_OK);
        SL_CHECK(sl_api_slub_sheaf_size(w, 1) >= 4);
        SL_CHECK_EQ(sl_api_slub_alloc_bulk_gfp(w, 0, 3, 2), SL_EINVAL);
        SL_CHECK_EQ(sl_api_slub_prefill_sheaf_gfp(w, 0, 2, 7, 2), SL_EINVAL);
        SL_CHECK_EQ(sl_api_slub_sheaf_size(w, 2), -1); /* nothing prefilled */
        SL_CHECK_EQ(sl_api_slub_return_sheaf(w, 0, 1), SL_OK);
        refill[g] = sl_api_slub_stat(w, -1, SL_SLUB_SHEAF_REFILL);
        slow[g] = sl_api_slub_stat(w, -1, SL_SLUB_ALLOC_SLOWPATH);
        SL_CHECK_EQ(sl_api_slub_validate(w), SL_OK);
        sl_api_slub_world_destroy(w);
    }
    SL_CHECK_EQ(refill[1], refill[0]);
    SL_CHECK_EQ(slow[1], slow[0]);
    SL_CHECK(first[1][0] == first[0][0] && first[1][1] == first[0][1]);
}

/*
 * NUMA: a world on two nodes (node 1 memoryless, its CPU offline) in 7.1;
 * the topology and each node's state as the page reads them; a bad topology
 * refused; CPU 1 online gives node 1 its barn; the driver's hotplug ops.
 */
static void test_numa_topology(void)
{
    const uint32_t version[5] = {7u << 8 | 1, 4, 1, 0, 0};
    uint32_t topo[3 + SL_SLUB_MAX_CPUS] = {2, 2, 2, 0, 1};
    sl_api_slub_world *w = sl_api_slub_world_create_topology(4u << 20, 2, 64, 0, 0, 0, 0, 1, 1, NULL, version, topo);
    SL_REQUIRE(w != NULL);
    uint32_t t[5 + 3 * SL_SLUB_MAX_CPUS];
    SL_CHECK_EQ(sl_api_slub_topology(w, t), SL_OK);
    SL_CHECK(t[0] == 2 && t[1] == 1 && t[2] == 1 && t[3] == 1 && t[4] == 1000);
    SL_CHECK(t[5 + 1] == 1 && t[5 + SL_SLUB_MAX_CPUS + 1] == 0 && t[5 + 2 * SL_SLUB_MAX_CPUS + 1] == 1);
    SL_CHECK_EQ(sl_api_slub_alloc(w, 1), SL_OK); /* from node 0's memory; no barn for CPU 1 yet */
    uint32_t node[8], pfns[4];
    SL_CHECK(sl_api_slub_node_state(w, 0, node, pfns, 4) >= 0);
    SL_CHECK(node[0] == 1 && node[1] == 1 && node[3] == 1); /* memory, a barn, one slab */
    SL_CHECK(sl_api_slub_node_state(w, 1, node, pfns, 4) == 0);
    SL_CHECK(node[0] == 0 && node[1] == 0 && node[3] == 0);
    SL_CHECK_EQ(sl_api_slub_node_state(w, 2, node, pfns, 4), SL_EINVAL);
    SL_CHECK_EQ(sl_api_slub_cpu_online(w, 1), 1);
    SL_CHECK_EQ(sl_api_slub_topology(w, t), SL_OK);
    SL_CHECK(t[2] == 3 && t[3] == 3);
    SL_CHECK(sl_api_slub_cpu_dead(w, 1) >= 0);
    SL_CHECK_EQ(sl_api_slub_topology(w, t), SL_OK);
    SL_CHECK_EQ(t[3], 1);
    sl_sched_op ops[1] = {{SL_SCHED_CPU_ONLINE, 1, 0, 0}};
    int32_t res[1], out[8];
    SL_CHECK_EQ(sl_api_slub_run(w, ops, 1, NULL, 0, NULL, 0, 0, NULL, 0, res, out), SL_OK);
    SL_CHECK_EQ(res[0], 0); /* the barn exists already */
    SL_CHECK_EQ(sl_api_slub_validate(w), SL_OK);
    sl_api_slub_world_destroy(w);
    topo[3 + 1] = 2; /* CPU 1 on a node that does not exist */
    SL_CHECK(sl_api_slub_world_create_topology(4u << 20, 2, 64, 0, 0, 0, 0, 1, 1, NULL, version, topo) == NULL);
    SL_CHECK_EQ(sl_api_slub_last_error(), SL_EINVAL);
}
#else
static void test_bindings_need_webassembly(void) { SL_SKIP("the bindings are built for WebAssembly only"); }
#endif

int main(void)
{
#if defined(__EMSCRIPTEN__)
    SL_RUN(test_world_and_operations);
    SL_RUN(test_kernel_words_and_tunables);
    SL_RUN(test_workload_threads);
    SL_RUN(test_cpu_claims);
    SL_RUN(test_versions_and_sheaves);
    SL_RUN(test_gfp_and_nolock);
    SL_RUN(test_bulk_and_prefill_gfp);
    SL_RUN(test_numa_topology);
#else
    SL_RUN(test_bindings_need_webassembly);
#endif
    return sl_check_summary();
}
