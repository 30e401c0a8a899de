/*
 * test_slub_sheaves.c - caches with per-CPU sheaves and a barn, in 6.18
 * (opted in, over the per-CPU slab) and 7.0 (every cache, no per-CPU slab):
 * each path of alloc_from_pcs and free_to_pcs with the counters the kernel
 * keeps, the flushes, kfree_rcu batching and the grace period, the prefill
 * API, the bootstrap sheaf, an interrupt inside the sheaf section falling
 * back to the slab path, and a randomized run against a reference with
 * every invariant checked after every step.  Where the two versions differ
 * (6.18 puts an empty main in the barn after a refill, 7.0 keeps it as the
 * spare) both are run.
 */
#include "sheaves_world.h"

static void check_valid(world *w)
{
    char msg[256];
    int rc = world_validate(w, msg, sizeof msg);
    if (rc != SL_OK)
        fprintf(stderr, "  validate: %s\n", msg);
    SL_CHECK_EQ(rc, SL_OK);
}

/* The first allocation finds every sheaf empty and refills one from slabs; then a spare, then the barn. */
static void test_refill_swap_and_barn(void)
{
    for (int v70 = 0; v70 <= 1; v70++) {
        world w;
        SL_REQUIRE(world_open(&w, 1, 4, 0, v70, NULL, 16) == SL_OK);
        void *o[12];
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 1); /* init_percpu_sheaves: main */
        o[0] = world_alloc(&w, 0);
        SL_REQUIRE(o[0]);
        SL_CHECK_EQ(ST(&w, BARN_GET_FAIL), 1);
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 2); /* alloc_full_sheaf */
        SL_CHECK_EQ(ST(&w, SHEAF_REFILL), 4);
        SL_CHECK_EQ(ST(&w, ALLOC_PCS), 1);
        SL_CHECK_EQ(w.sh->pcs[0].main->size, 3);
        /* The empty main: 6.18 puts it in the barn, 7.0 keeps it as the spare. */
        SL_CHECK_EQ(w.sh->barn[0].nr_empty, v70 ? 0 : 1);
        SL_CHECK(v70 ? w.sh->pcs[0].spare && w.sh->pcs[0].spare->size == 0 : !w.sh->pcs[0].spare);
        for (int i = 1; i < 12; i++)
            SL_REQUIRE((o[i] = world_alloc(&w, 0)));
        SL_CHECK_EQ(ST(&w, SHEAF_REFILL), 12); /* three refills of 4, reusing the two sheaves */
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 2);
        SL_CHECK_EQ(ST(&w, BARN_GET_FAIL), 3);
        SL_CHECK_EQ(ST(&w, ALLOC_PCS), 12);
        check_valid(&w);

        /* Frees: main fills, then the spare (or an empty barn sheaf) takes over, then main goes to the barn. */
        for (int i = 0; i < 12; i++)
            SL_CHECK_EQ(world_free(&w, 0, o[i]), SL_OK);
        SL_CHECK_EQ(ST(&w, FREE_PCS), 12);
        SL_CHECK_EQ(ST(&w, BARN_PUT), 1);
        SL_CHECK_EQ(ST(&w, BARN_PUT_FAIL), 0);
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 3); /* the barn had no empty sheaf: one was allocated */
        SL_CHECK_EQ(w.sh->barn[0].nr_full, 1);
        SL_CHECK_EQ(w.sh->pcs[0].main->size, 4);
        SL_CHECK(w.sh->pcs[0].spare && w.sh->pcs[0].spare->size == 4);
        check_valid(&w);

        /* Allocating 9: main, then the full spare swapped in, then the barn's full sheaf for the empty main. */
        for (int i = 0; i < 9; i++)
            SL_REQUIRE((o[i] = world_alloc(&w, 0)));
        SL_CHECK_EQ(ST(&w, BARN_GET), 1);
        SL_CHECK_EQ(ST(&w, SHEAF_REFILL), 12); /* no slab was touched */
        SL_CHECK_EQ(w.sh->barn[0].nr_full, 0);
        SL_CHECK_EQ(w.sh->barn[0].nr_empty, 1);
        SL_CHECK_EQ(w.sh->pcs[0].main->size, 3);
        check_valid(&w);
        for (int i = 0; i < 9; i++)
            world_free(&w, 0, o[i]);
        world_drain(&w);
        check_valid(&w);
        sl_slub_node_info ni;
        sl_slub_node_info_get(w.s, &ni);
        SL_CHECK_EQ(w.sh->barn[0].nr_full + w.sh->barn[0].nr_empty, 0);
        SL_CHECK(ni.nr_slabs <= 1); /* everything went back: at most min_partial empty slabs stay */
        world_close(&w);
    }
}

/* A barn holding MAX_FULL_SHEAVES full sheaves refuses more: the full spare is flushed to slabs instead. */
static void test_flush_when_barn_full(void)
{
    for (int v70 = 0; v70 <= 1; v70++) {
        world w;
        SL_REQUIRE(world_open(&w, 1, 2, 0, v70, NULL, 16) == SL_OK);
        void *o[40];
        for (int i = 0; i < 40; i++)
            SL_REQUIRE((o[i] = world_alloc(&w, 0)));
        for (int i = 0; i < 40; i++)
            SL_CHECK_EQ(world_free(&w, 0, o[i]), SL_OK);
        /* 10 full sheaves went to the barn (each with a new empty sheaf), then every second free flushed. */
        SL_CHECK_EQ(w.sh->barn[0].nr_full, SLI_MAX_FULL_SHEAVES);
        SL_CHECK_EQ(ST(&w, BARN_PUT), 10);
        SL_CHECK_EQ(ST(&w, BARN_PUT_FAIL), 8);
        SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), 16);
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 12);
        SL_CHECK_EQ(ST(&w, FREE_PCS), 40);
        check_valid(&w);
        /* A cache shrink flushes the CPU's sheaves, then barn_shrink flushes and frees the barn's. */
        uint64_t flushed = ST(&w, SHEAF_FLUSH);
        SL_CHECK_EQ(sl_slub_shrink(w.s, NULL), SL_OK);
        SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), flushed + 20 + 2 + 2); /* the barn's 20, main's and the spare's */
        SL_CHECK_EQ(w.sh->barn[0].nr_full, 0);
        SL_CHECK_EQ(ST(&w, SHEAF_FREE), 11); /* the barn's ten and the spare */
        check_valid(&w);
        world_close(&w);
    }
}

/* With no empty sheaf to be had (the barn has none, allocating one fails), main is flushed in batches of 32. */
static void test_flush_main_in_batches(void)
{
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 1, 1 << 14) == SL_OK);
    tr.enabled = true;
    world w;
    SL_REQUIRE(world_open(&w, 1, 70, 2, true, &tr, 32) == SL_OK);
    static void *o[210];
    for (int i = 0; i < 210; i++)
        SL_REQUIRE((o[i] = world_alloc(&w, 0)));
    static sl_event ev[4096];
    while (sl_trace_drain(&tr, 0, ev, 4096) == 4096) {
    }
    for (int i = 0; i < 210; i++)
        SL_CHECK_EQ(world_free(&w, 0, o[i]), SL_OK);
    SL_CHECK_EQ(ST(&w, BARN_PUT_FAIL), 1);
    SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), 70);
    SL_CHECK_EQ(atomic_load(&w.sh->nr_sheaves), 2); /* the budget held */
    unsigned n = sl_trace_drain(&tr, 0, ev, 4096), batches = 0, sizes[4] = {0};
    for (unsigned i = 0; i < n; i++)
        if (ev[i].kind == SL_EV_SLUB_SHEAF_FLUSH && ev[i].arg2 == 1 && batches < 4)
            sizes[batches++] = ev[i].arg1;
    SL_CHECK_EQ(batches, 3);
    SL_CHECK_EQ(sizes[0], 32);
    SL_CHECK_EQ(sizes[1], 32);
    SL_CHECK_EQ(sizes[2], 6);
    SL_CHECK_EQ(w.sh->pcs[0].main->size, 70);
    check_valid(&w);
    world_close(&w);
    sl_trace_destroy(&tr);
}

/* kfree_rcu batches objects in the rcu_free sheaf; a full one waits for a grace period, then joins the barn. */
static void test_kfree_rcu_batching(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 1, 4, 0, true, NULL, 16) == SL_OK);
    void *o[8];
    for (int i = 0; i < 8; i++)
        SL_REQUIRE((o[i] = world_alloc(&w, 0)));
    for (int i = 0; i < 8; i++)
        SL_CHECK_EQ(sl_slub_kfree_rcu(w.s, 0, o[i]), SL_OK);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF), 8);
    SL_CHECK(w.sh->pcs[0].rcu_free == NULL); /* the second one filled too */
    sl_slub_sheaves_info info;
    sl_slub_sheaves_info_get(w.s, &info);
    SL_CHECK_EQ(info.rcu_waiting, 8);
    check_valid(&w); /* the objects are in the pending sheaves, not free, not lost */
    SL_CHECK_EQ(sl_slub_rcu_grace_period(w.s, 0), 8);
    SL_CHECK_EQ(w.sh->barn[0].nr_full, 2);
    SL_CHECK_EQ(ST(&w, BARN_PUT), 2);
    check_valid(&w);
    /* The next allocations are served from those barn sheaves. */
    void *p = world_alloc(&w, 0);
    SL_CHECK(p != NULL);
    SL_CHECK_EQ(ST(&w, BARN_GET), 1);
    world_free(&w, 0, p);
    /* A half-filled rcu_free sheaf goes to call_rcu on a flush, and is flushed to slabs after the grace period. */
    SL_REQUIRE((p = world_alloc(&w, 0)));
    SL_CHECK_EQ(sl_slub_kfree_rcu(w.s, 0, p), SL_OK);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
    SL_CHECK(w.sh->pcs[0].rcu_free == NULL && w.sh->pcs[0].rcu_pending && w.sh->pcs[0].rcu_pending->size == 1);
    uint64_t flushed = ST(&w, SHEAF_FLUSH);
    SL_CHECK_EQ(sl_slub_rcu_grace_period(w.s, 0), 1);
    SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), flushed + 1);
    check_valid(&w);
    world_close(&w);
}

/* Without sheaves (6.17, or 6.18 without the opt-in) kfree_rcu's objects wait alone, then are freed. */
static void test_kfree_rcu_alone(void)
{
    for (int v = 0; v < 2; v++) {
        sl_page_zone z;
        SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
        sl_slub_config cfg = {.object_size = 128, .track = 1};
        cfg.kernel.version = v ? (sl_slub_kversion){6, 18} : (sl_slub_kversion){6, 17};
        sl_slub_cache *s;
        SL_REQUIRE(sl_slub_cache_create(&z, NULL, 2, &cfg, &s) == SL_OK);
        SL_CHECK(s->sheaves == NULL);
        void *o[5];
        for (int i = 0; i < 5; i++)
            SL_REQUIRE(sl_slub_alloc(s, 1, &o[i]) == SL_OK);
        for (int i = 0; i < 5; i++)
            SL_CHECK_EQ(sl_slub_kfree_rcu(s, i % 2, o[i]), SL_OK);
        SL_CHECK_EQ(sl_slub_kfree_rcu(s, 0, (char *)o[0] + 1), SL_EMISALIGNED);
        sl_slub_sheaves_info info;
        sl_slub_sheaves_info_get(s, &info);
        SL_CHECK_EQ(info.rcu_waiting, 5);
        SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
        uint64_t frees =
            sl_slub_stat_get(s, -1, SL_SLUB_FREE_FASTPATH) + sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLOWPATH);
        SL_CHECK_EQ(sl_slub_rcu_grace_period(s, 0), 3);
        SL_CHECK_EQ(sl_slub_rcu_grace_period(s, 1), 2);
        /* kfree_bulk: one detached freelist per slab, each one do_slab_free (FREE_FASTPATH counts its objects). */
        SL_CHECK(sl_slub_stat_get(s, -1, SL_SLUB_FREE_FASTPATH) + sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLOWPATH) >
                 frees);
        sl_slub_sheaves_info_get(s, &info);
        SL_CHECK_EQ(info.rcu_waiting, 0);
        SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
        SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);
        sl_page_zone_destroy(&z);
    }
}

/* kmem_cache_prefill_sheaf & co: the spare (fast), the barn or a new sheaf (slow), oversize sheaves. */
static void test_prefill_api(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 1, 4, 0, true, NULL, 16) == SL_OK);
    sl_slub_sheaf *sheaf;
    SL_REQUIRE(sl_slub_prefill_sheaf(w.s, 0, 3, &sheaf) == SL_OK);
    SL_CHECK_EQ(ST(&w, SHEAF_PREFILL_SLOW), 1);
    SL_CHECK_EQ(ST(&w, BARN_GET_FAIL), 1);
    SL_CHECK_EQ(sl_slub_sheaf_size(sheaf), 4); /* refilled to the cache's capacity */
    void *o[16];
    for (int i = 0; i < 3; i++)
        SL_CHECK_EQ(sl_slub_alloc_from_sheaf(w.s, 0, sheaf, &o[i]), SL_OK);
    check_valid(&w);
    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, sheaf), SL_OK);
    SL_CHECK_EQ(ST(&w, SHEAF_RETURN_FAST), 1);
    SL_CHECK(w.sh->pcs[0].spare == (sli_sheaf *)(void *)sheaf && sl_slub_sheaf_size(sheaf) == 1);
    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, sheaf), SL_EINVAL); /* not out any more */
    void *x;
    SL_CHECK_EQ(sl_slub_alloc_from_sheaf(w.s, 0, sheaf, &x), SL_EINVAL);
    /* The spare is taken back and refilled. */
    SL_REQUIRE(sl_slub_prefill_sheaf(w.s, 0, 2, &sheaf) == SL_OK);
    SL_CHECK_EQ(ST(&w, SHEAF_PREFILL_FAST), 1);
    SL_CHECK_EQ(sl_slub_sheaf_size(sheaf), 4);
    SL_CHECK_EQ(sl_slub_refill_sheaf(w.s, 0, &sheaf, 4), SL_OK); /* already enough: nothing happens */
    for (int i = 3; i < 7; i++)
        SL_CHECK_EQ(sl_slub_alloc_from_sheaf(w.s, 0, sheaf, &o[i]), SL_OK);
    SL_CHECK_EQ(sl_slub_alloc_from_sheaf(w.s, 0, sheaf, &x), SL_ENOMEM); /* no fallback to the slabs */
    /* Refilling to more than the capacity replaces it with an oversize sheaf. */
    sl_slub_sheaf *old = sheaf;
    SL_CHECK_EQ(sl_slub_refill_sheaf(w.s, 0, &sheaf, 10), SL_OK);
    SL_CHECK(sheaf != old && sl_slub_sheaf_size(sheaf) == 10);
    SL_CHECK_EQ(ST(&w, SHEAF_PREFILL_OVERSIZE), 1);
    SL_CHECK_EQ(ST(&w, SHEAF_RETURN_FAST), 2); /* the old one became the spare again */
    check_valid(&w);
    uint64_t flushed = ST(&w, SHEAF_FLUSH);
    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, sheaf), SL_OK); /* oversize: flushed and freed */
    SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), flushed + 10);
    /* Two prefills out at once: the second return finds the spare taken and refills into the barn. */
    sl_slub_sheaf *s1, *s2;
    SL_REQUIRE(sl_slub_prefill_sheaf(w.s, 0, 4, &s1) == SL_OK && sl_slub_prefill_sheaf(w.s, 0, 4, &s2) == SL_OK);
    SL_CHECK_EQ(sl_slub_alloc_from_sheaf(w.s, 0, s2, &o[7]), SL_OK);
    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, s1), SL_OK);
    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, s2), SL_OK);
    SL_CHECK_EQ(ST(&w, SHEAF_RETURN_SLOW), 1);
    SL_CHECK_EQ(w.sh->barn[0].nr_full, 1);
    SL_CHECK_EQ(ST(&w, BARN_PUT), 1);
    check_valid(&w);
    SL_CHECK_EQ(sl_slub_prefill_sheaf(w.s, 0, 0, &sheaf), SL_EINVAL);
    SL_CHECK(sheaf == NULL);
    for (int i = 0; i < 8; i++)
        world_free(&w, 0, o[i]);
    world_close(&w);
}

/* 7.0's kmalloc caches start with the zero-capacity bootstrap sheaf: every sheaf path fails until bootstrap. */
static void test_bootstrap_sheaf(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 2, 0, 0, true, NULL, 16) == SL_OK);
    SL_CHECK(!sli_sheaves_active(w.sh));
    SL_CHECK_EQ(sl_slub_cache_sheaf_capacity(w.s), 0);
    void *o = world_alloc(&w, 1); /* the slab path */
    SL_REQUIRE(o);
    SL_CHECK_EQ(ST(&w, ALLOC_SLOWPATH), 1);
    SL_CHECK_EQ(world_free(&w, 1, o), SL_OK); /* free_to_pcs fails: __slab_free */
    SL_CHECK_EQ(ST(&w, FREE_SLOWPATH), 1);
    SL_REQUIRE((o = world_alloc(&w, 1)));
    SL_CHECK_EQ(sl_slub_kfree_rcu(w.s, 1, o), SL_OK); /* waits alone */
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF_FAIL), 1);
    SL_CHECK_EQ(ST(&w, ALLOC_PCS) + ST(&w, FREE_PCS) + ST(&w, SHEAF_ALLOC), 0);
    /* kmem_cache_prefill_sheaf: 3 > sheaf_capacity 0, so an oversize sheaf (not a refusal), all from slabs. */
    sl_slub_sheaf *sheaf;
    SL_REQUIRE(sl_slub_prefill_sheaf(w.s, 1, 3, &sheaf) == SL_OK);
    SL_CHECK_EQ(sl_slub_sheaf_size(sheaf), 3);
    SL_CHECK_EQ(ST(&w, SHEAF_PREFILL_OVERSIZE), 1);
    SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 0); /* 7.0 does not count oversize sheaves (7.2 does) */
    check_valid(&w);
    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 1, sheaf), SL_OK); /* flushed and freed */
    SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), 3);
    SL_CHECK_EQ(sl_slub_rcu_grace_period(w.s, 1), 1);
    check_valid(&w);
    SL_CHECK_EQ(sl_slub_bootstrap_sheaves(w.s), SL_OK);
    SL_CHECK(sli_sheaves_active(w.sh) && w.sh->pcs[0].main->capacity == 60); /* calculate_sheaf_capacity */
    SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 2);
    SL_REQUIRE((o = world_alloc(&w, 1)));
    SL_CHECK_EQ(world_free(&w, 1, o), SL_OK);
    SL_CHECK(world_alloc(&w, 1) == o); /* LIFO through main */
    SL_CHECK_EQ(sl_slub_bootstrap_sheaves(w.s), SL_EINVAL);
    check_valid(&w);
    world_free(&w, 1, o);
    world_close(&w);
}

/* An interrupt inside the sheaf section: the handler's trylock fails and it takes the slab path. */
typedef struct irq_ctx {
    world *w;
    unsigned point, fired;
    int kind; /* 0 alloc, 1 free, 2 kfree_rcu, 3 flush */
    void *obj, *got;
    int rc;
} irq_ctx;

static void irq_hook(sl_trace *tr, unsigned cpu, unsigned point, unsigned line, const void *ctx, void *user)
{
    irq_ctx *ic = user;
    (void)tr, (void)line, (void)ctx;
    if (point != ic->point || ic->fired)
        return; /* one interrupt, and none inside the handler */
    ic->fired = 1;
    if (ic->kind == 0)
        ic->got = world_alloc(ic->w, cpu);
    else if (ic->kind == 1)
        ic->rc = world_free(ic->w, cpu, ic->obj);
    else if (ic->kind == 2)
        ic->rc = sl_slub_kfree_rcu(ic->w->s, cpu, ic->obj);
    else
        ic->rc = sl_slub_flush_cpu(ic->w->s, cpu);
}

static unsigned count_events(sl_trace *tr, unsigned kind)
{
    sl_event ev[1024];
    unsigned n, k = 0;
    while ((n = sl_trace_drain(tr, 0, ev, 1024)))
        for (unsigned i = 0; i < n; i++)
            k += ev[i].kind == kind;
    return k;
}

static void test_interrupt_falls_back(void)
{
    for (int v70 = 0; v70 <= 1; v70++) {
        sl_trace tr;
        SL_REQUIRE(sl_trace_init(&tr, 1, 4096) == SL_OK);
        tr.enabled = true;
        world w;
        SL_REQUIRE(world_open(&w, 1, 8, 0, v70, &tr, 16) == SL_OK);
        void *keep = world_alloc(&w, 0), *spare_obj = world_alloc(&w, 0); /* main now holds 6 */
        SL_REQUIRE(keep && spare_obj);
        count_events(&tr, 0);

        /* An allocation interrupted inside alloc_from_pcs by an allocation on the same CPU. */
        irq_ctx ic = {.w = &w, .point = SL_SLUB_PP_SHEAF_ALLOC, .kind = 0};
        sl_trace_set_preempt_hook(&tr, irq_hook, &ic);
        uint64_t slab_path = ST(&w, ALLOC_SLOWPATH) + ST(&w, ALLOC_FASTPATH);
        void *mine = world_alloc(&w, 0);
        SL_CHECK_EQ(ic.fired, 1);
        SL_CHECK(mine && ic.got && mine != ic.got);
        SL_CHECK_EQ(ST(&w, ALLOC_SLOWPATH) + ST(&w, ALLOC_FASTPATH), slab_path + 1); /* the handler's */
        SL_CHECK_EQ(ST(&w, ALLOC_PCS), 3);
        SL_CHECK_EQ(count_events(&tr, SL_EV_SLUB_SHEAF_TRYLOCK_FAIL), 1);
        check_valid(&w);

        /* A free interrupted inside free_to_pcs by a free on the same CPU: the handler's goes to its slab. */
        ic = (irq_ctx){.w = &w, .point = SL_SLUB_PP_SHEAF_FREE, .kind = 1, .obj = ic.got};
        uint32_t main_before = w.sh->pcs[0].main->size;
        SL_CHECK_EQ(world_free(&w, 0, mine), SL_OK);
        SL_CHECK_EQ(ic.fired, 1);
        SL_CHECK_EQ(ic.rc, SL_OK);
        SL_CHECK_EQ(w.sh->pcs[0].main->size, main_before + 1); /* only the interrupted free's object */
        SL_CHECK_EQ(ST(&w, FREE_PCS), 1);
        check_valid(&w);

        /* kfree_rcu interrupted by kfree_rcu: the handler's cannot batch and waits alone. */
        ic = (irq_ctx){.w = &w, .point = SL_SLUB_PP_SHEAF_FREE, .kind = 2, .obj = spare_obj};
        SL_CHECK_EQ(world_free(&w, 0, keep), SL_OK);
        SL_CHECK_EQ(ic.rc, SL_OK);
        SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF_FAIL), 1);
        check_valid(&w);

        /* A flush from inside the section is refused (the kernel never flushes from an interrupt). */
        ic = (irq_ctx){.w = &w, .point = SL_SLUB_PP_SHEAF_ALLOC, .kind = 3};
        SL_REQUIRE((mine = world_alloc(&w, 0)));
        SL_CHECK_EQ(ic.rc, SL_EBUSY);
        check_valid(&w);
        SL_CHECK_EQ(world_free(&w, 0, mine), SL_OK);

        /* An allocation in the refill window, where the lock is dropped: it refills main itself. */
        sl_trace_set_preempt_hook(&tr, NULL, NULL);
        world_drain(&w);
        ic = (irq_ctx){.w = &w, .point = SL_SLUB_PP_SHEAF_REFILL, .kind = 0};
        sl_trace_set_preempt_hook(&tr, irq_hook, &ic);
        mine = world_alloc(&w, 0);
        SL_CHECK_EQ(ic.fired, 1);
        SL_CHECK(mine && ic.got && mine != ic.got);
        /* The handler installed a full main; the interrupted refill keeps its sheaf as the spare. */
        SL_CHECK(w.sh->pcs[0].spare && w.sh->pcs[0].spare->size == 8);
        SL_CHECK_EQ(w.sh->pcs[0].main->size, 6);
        check_valid(&w);
        sl_trace_set_preempt_hook(&tr, NULL, NULL);
        world_free(&w, 0, mine);
        world_free(&w, 0, ic.got);
        world_close(&w);
        sl_trace_destroy(&tr);
    }
}

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The snapshot's sheaves section: every sheaf where it is, its objects as (pfn, index), their object states. */
static void test_snapshot_sheaves(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 2, 4, 0, true, NULL, 16) == SL_OK);
    void *o[12];
    for (int i = 0; i < 12; i++)
        SL_REQUIRE((o[i] = world_alloc(&w, 0)));
    for (int i = 0; i < 9; i++)
        SL_CHECK_EQ(world_free(&w, 1, o[i]), SL_OK); /* CPU 1: main 1, spare 4, barn 4 */
    SL_CHECK_EQ(sl_slub_kfree_rcu(w.s, 1, o[9]), SL_OK);
    sl_slub_sheaf *pre;
    SL_REQUIRE(sl_slub_prefill_sheaf(w.s, 0, 2, &pre) == SL_OK);
    static unsigned char b[1 << 18];
    long n = sl_slub_snapshot(w.s, b, sizeof b);
    SL_REQUIRE(n > 0);
    SL_CHECK_EQ(rd32(b + 4), 2);
    SL_CHECK_EQ(b[88] | b[89] << 8, 7 << 8 | 0); /* version 7.0 */
    SL_CHECK_EQ(b[90], SL_SLUB_ERA_SHEAVES);
    SL_CHECK_EQ(b[92], 1); /* has sheaves, taken quiet, no CPU slab */
    const unsigned char *h = b + rd32(b + 84), *objs = b + rd32(b + 48), *slabs = b + rd32(b + 44);
    const unsigned char *pcs = h + rd32(h + 16), *sheaves = h + rd32(h + 20), *entries = h + rd32(h + 24);
    SL_CHECK_EQ(rd32(h + 8), 1);  /* barn: one full sheaf */
    SL_CHECK_EQ(rd32(h + 28), 4); /* capacity */
    sl_slub_sheaves_info info;
    sl_slub_sheaves_info_get(w.s, &info);
    SL_CHECK_EQ(rd32(h + 4), info.objects);
    SL_CHECK_EQ(rd32(h + 0), info.sheaves + 0); /* every allocated sheaf, no bootstrap, no RCU wait */
    /* CPU 1's main holds o[8]; its record's first entry names that object. */
    uint32_t main1 = rd32(pcs + 16);
    SL_REQUIRE(main1 < rd32(h));
    const unsigned char *r = sheaves + 24 * main1;
    SL_CHECK_EQ(r[4], SLI_SHEAF_MAIN);
    SL_CHECK_EQ(r[5], 1);
    SL_CHECK_EQ(rd32(r + 8), 1);
    uint32_t pfn, idx;
    SL_REQUIRE(sl_slub_object_index(w.s, o[8], &pfn, &idx));
    const unsigned char *e = entries + 8 * rd32(r + 16);
    SL_CHECK_EQ(rd32(e), pfn);
    SL_CHECK_EQ(rd32(e + 4), idx);
    /* Object states: 8 on a CPU's sheaf, 9 in the barn, 10 waiting for RCU, 11 in a prefilled sheaf. */
    unsigned counts[12] = {0};
    for (uint32_t k = 0; k < rd32(b + 16); k++) {
        const unsigned char *sr = slabs + 32 * k;
        for (uint32_t i = 0; i < (uint32_t)(sr[8] | sr[9] << 8); i++)
            counts[objs[16 * (rd32(sr + 20) + i)]]++;
    }
    SL_CHECK_EQ(counts[8], 1 + 4); /* CPU 1's main and spare (CPU 0's main is empty, its spare was prefilled) */
    SL_CHECK_EQ(counts[9], 4);
    SL_CHECK_EQ(counts[10], 1);
    SL_CHECK_EQ(counts[11], 4);
    SL_CHECK_EQ(counts[2], 2); /* o[10], o[11] */
    /* While CPUs run the sheaves are left out, and the flags say so. */
    n = sl_slub_snapshot_running(w.s, b, sizeof b);
    SL_REQUIRE(n > 0);
    SL_CHECK_EQ(b[92], 1 | 2);
    h = b + rd32(b + 84);
    SL_CHECK_EQ(rd32(h) + rd32(h + 4), 0);
    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, pre), SL_OK);
    world_close(&w);
}

/* Random operations on 1..3 CPUs against a reference set, every invariant checked after every step. */
static void test_random_against_reference(void)
{
    for (unsigned round = 0; round < 8; round++) {
        unsigned ncpus = 1 + round % 3;
        bool v70 = round & 1;
        uint32_t capacity = round < 2 ? 4 : round < 4 ? 32 : round < 6 ? 7 : 60;
        uint32_t budget = round == 5 ? 2 * ncpus + 1 : 0; /* sheaf allocations fail past it */
        world w;
        SL_REQUIRE(world_open(&w, ncpus, capacity, budget, v70, NULL, 32) == SL_OK);
        enum { MAXH = 2048 };
        static void *held_objs[MAXH];
        size_t nh = 0;
        sl_slub_sheaf *out[4] = {0};
        uint64_t rng = 0x5eedull + round;
        unsigned steps = (unsigned)sl_test_scale(3000);
        int failures = 0;
        for (unsigned step = 0; step < steps && !failures; step++) {
            unsigned cpu = (unsigned)(sl_test_rand(&rng) % ncpus), r = (unsigned)(sl_test_rand(&rng) % 100);
            if (r < 30 && nh < MAXH) {
                void *o = world_alloc(&w, cpu);
                SL_CHECK(o != NULL);
                if (o)
                    held_objs[nh++] = o;
            } else if (r < 55 && nh) {
                size_t k = sl_test_rand(&rng) % nh; /* from any CPU: remote frees too */
                SL_CHECK_EQ(world_free(&w, cpu, held_objs[k]), SL_OK);
                held_objs[k] = held_objs[--nh];
            } else if (r < 62 && nh + 64 <= MAXH) {
                unsigned n = 1 + (unsigned)(sl_test_rand(&rng) % 64);
                SL_CHECK_EQ(sl_slub_alloc_bulk(w.s, cpu, n, held_objs + nh), (int)n);
                nh += n;
            } else if (r < 69 && nh) {
                unsigned n = 1 + (unsigned)(sl_test_rand(&rng) % (nh < 64 ? nh : 64));
                void *batch[64];
                memcpy(batch, held_objs + nh - n, n * sizeof(void *));
                nh -= n;
                SL_CHECK(sl_slub_free_bulk(w.s, cpu, n, batch, NULL) >= 0);
            } else if (r < 76 && nh) {
                size_t k = sl_test_rand(&rng) % nh;
                SL_CHECK_EQ(sl_slub_kfree_rcu(w.s, cpu, held_objs[k]), SL_OK);
                held_objs[k] = held_objs[--nh];
            } else if (r < 80) {
                SL_CHECK(sl_slub_rcu_grace_period(w.s, cpu) >= 0);
            } else if (r < 82) {
                SL_CHECK_EQ(sl_slub_flush_cpu(w.s, cpu), SL_OK);
            } else if (r < 83) {
                SL_CHECK_EQ(sl_slub_shrink(w.s, NULL), SL_OK);
            } else if (r < 88) {
                unsigned slot = (unsigned)(sl_test_rand(&rng) % 4);
                uint32_t size = 1 + (uint32_t)(sl_test_rand(&rng) % (capacity + 3));
                if (!out[slot]) {
                    int rc = sl_slub_prefill_sheaf(w.s, cpu, size, &out[slot]);
                    SL_CHECK(rc == SL_OK || (budget && rc == SL_ENOMEM)); /* only a sheaf budget fails it */
                } else if (sl_test_rand(&rng) % 2) {
                    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, cpu, out[slot]), SL_OK);
                    out[slot] = NULL;
                } else if (sl_slub_refill_sheaf(w.s, cpu, &out[slot], size) != SL_OK) {
                    SL_CHECK(budget != 0); /* only a sheaf budget makes a refill fail */
                }
            } else if (r < 96 && nh < MAXH) {
                unsigned slot = (unsigned)(sl_test_rand(&rng) % 4);
                void *o;
                if (out[slot] && sl_slub_alloc_from_sheaf(w.s, cpu, out[slot], &o) == SL_OK)
                    held_objs[nh++] = o;
            } else {
                SL_CHECK_EQ(sl_slub_flush_cpu(w.s, cpu), SL_OK);
            }
            char msg[256];
            if (world_validate(&w, msg, sizeof msg) != SL_OK) {
                fprintf(stderr, "  round %u step %u: %s\n", round, step, msg);
                failures++;
            }
        }
        SL_CHECK_EQ(failures, 0);
        for (unsigned slot = 0; slot < 4; slot++)
            if (out[slot])
                SL_CHECK_EQ(sl_slub_return_sheaf(w.s, slot % ncpus, out[slot]), SL_OK);
        for (size_t k = 0; k < nh; k++)
            SL_CHECK_EQ(world_free(&w, (unsigned)(k % ncpus), held_objs[k]), SL_OK);
        world_drain(&w);
        check_valid(&w);
        SL_CHECK_EQ(atomic_load(&w.sh->nr_sheaves), sli_sheaves_active(w.sh) ? ncpus : 0);
        sl_slub_sheaves_info info;
        sl_slub_sheaves_info_get(w.s, &info);
        SL_CHECK_EQ(info.objects + info.rcu_waiting, 0);
        world_close(&w);
    }
}

static void test_kernel_versions(void)
{
    sl_slub_kversion v;
    const char *why;
    SL_CHECK_EQ(sl_slub_kversion_parse("6.18", &v, &why), SL_OK);
    SL_CHECK(v.major == 6 && v.minor == 18);
    const char *bad[] = {"",     "6",     "6.",    ".18", "6.18.", "6.18-rc", "6.18-foo", "6.18.1.2x",
                         "6,18", " 6.18", "+6.18", "4.2", "3.19",  "6.1000",  "0.5",      NULL};
    for (int i = 0; bad[i]; i++) {
        why = NULL;
        SL_CHECK_EQ(sl_slub_kversion_parse(bad[i], &v, &why), SL_EINVAL);
        SL_CHECK(why != NULL);
    }
    SL_CHECK_EQ(sl_slub_kversion_parse(NULL, &v, NULL), SL_EINVAL);
    /* One reader for the core (platform/kversion.h): a stable release, an -rc, a tag are their X.Y. */
    const struct {
        const char *text;
        uint8_t major, minor;
    } good[] = {{"6.18.1", 6, 18},    {"7.3-rc2", 7, 3}, {"v7.1", 7, 1},
                {"6.8.12-rc1", 6, 8}, {"7.00", 7, 0},    {"8.0", 8, 0}};
    for (unsigned i = 0; i < sizeof good / sizeof good[0]; i++) {
        SL_CHECK_EQ(sl_slub_kversion_parse(good[i].text, &v, NULL), SL_OK);
        SL_CHECK(v.major == good[i].major && v.minor == good[i].minor);
    }
    char buf[8];
    SL_CHECK(!strcmp(sl_slub_kversion_format((sl_slub_kversion){7, 0}, buf, sizeof buf), "7.0"));
    struct {
        const char *v;
        unsigned era;
        bool cpu_slab, frozen, irq_off, by_objects, old_order, at_zero, left_pad, per_object, nulls;
        unsigned track;
    } table[] = {
        {"4.3", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 1, 1, 1, 1, 0, 1, 0, 152},
        {"4.4", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 1, 1, 1, 0, 1, 1, 152},
        {"4.18", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 1, 1, 1, 1, 1, 1, 152},
        {"5.12", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 1, 1, 0, 1, 0, 1, 152},
        {"5.16", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 0, 1, 0, 1, 0, 1, 152},
        {"5.19", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 0, 1, 0, 1, 0, 0, 32},
        {"6.7", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 0, 1, 0, 1, 0, 0, 32},
        {"6.8", SL_SLUB_ERA_CPU_SLAB, 1, 0, 0, 0, 0, 0, 1, 0, 0, 32},
        {"6.17", SL_SLUB_ERA_CPU_SLAB, 1, 0, 0, 0, 0, 0, 1, 0, 0, 32},
        {"6.18", SL_SLUB_ERA_OPT_IN_SHEAVES, 1, 0, 0, 0, 0, 0, 1, 0, 0, 32},
        {"7.0", SL_SLUB_ERA_SHEAVES, 0, 0, 0, 0, 0, 0, 1, 0, 0, 32},
        {"7.3", SL_SLUB_ERA_SHEAVES, 0, 0, 0, 0, 0, 0, 1, 0, 0, 32},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        sl_slub_rules r;
        SL_REQUIRE(sl_slub_kversion_parse(table[i].v, &v, NULL) == SL_OK);
        sl_slub_rules_for(v, &r);
        SL_CHECK_EQ(r.era, table[i].era);
        SL_CHECK_EQ(r.cpu_slab, table[i].cpu_slab);
        SL_CHECK_EQ(r.frozen_cpu_partial, table[i].frozen);
        SL_CHECK_EQ(r.bulk_free_irq_off, table[i].irq_off);
        SL_CHECK_EQ(r.cpu_partial_by_objects, table[i].by_objects);
        SL_CHECK_EQ(r.order_lowers_min_objects, table[i].old_order);
        SL_CHECK_EQ(r.freeptr_at_zero, table[i].at_zero);
        SL_CHECK_EQ(r.red_left_pad, table[i].left_pad);
        SL_CHECK_EQ(r.deactivate_per_object, table[i].per_object);
        SL_CHECK_EQ(r.detached_marks_null, table[i].nulls);
        SL_CHECK_EQ(r.track_size, table[i].track);
        SL_CHECK_EQ(r.sheaves, r.era == SL_SLUB_ERA_SHEAVES          ? SL_SLUB_SHEAVES_ALL
                               : r.era == SL_SLUB_ERA_OPT_IN_SHEAVES ? SL_SLUB_SHEAVES_OPT_IN
                                                                     : SL_SLUB_SHEAVES_NONE);
        SL_CHECK(sl_slub_era_name(r.era) != NULL);
    }
    SL_CHECK(sl_slub_era_name(9) == NULL);

    /* Each version's counters, in its order under its names. */
    const sl_slub_kstat *t;
    SL_CHECK_EQ(sl_slub_kstats((sl_slub_kversion){4, 4}, &t), 26);
    SL_CHECK(!strcmp(t[0].name, "alloc_fastpath") && t[0].stat == SL_SLUB_ALLOC_FASTPATH);
    SL_CHECK(!strcmp(t[25].name, "cpu_partial_drain"));
    SL_CHECK_EQ(sl_slub_kstats((sl_slub_kversion){6, 18}, &t), 43);
    SL_CHECK(!strcmp(t[0].name, "alloc_cpu_sheaf") && t[0].stat == SL_SLUB_ALLOC_PCS);
    SL_CHECK(!strcmp(t[3].name, "free_cpu_sheaf") && !strcmp(t[6].name, "free_fastpath"));
    SL_CHECK(!strcmp(t[30].name, "sheaf_flush") && !strcmp(t[42].name, "sheaf_return_slow"));
    SL_CHECK_EQ(sl_slub_kstats((sl_slub_kversion){7, 0}, &t), 26);
    SL_CHECK(!strcmp(t[0].name, "alloc_fastpath") && t[0].stat == SL_SLUB_ALLOC_PCS);
    SL_CHECK(!strcmp(t[4].name, "free_fastpath") && t[4].stat == SL_SLUB_FREE_PCS);
    for (unsigned i = 0; i < 26; i++) /* 7.0 removed the CPU slab's counters */
        SL_CHECK(t[i].stat != SL_SLUB_CPU_PARTIAL_ALLOC && t[i].stat != SL_SLUB_DEACTIVATE_FULL &&
                 t[i].stat != SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL && strcmp(t[i].name, "alloc_cpu_sheaf"));
    /* Names are the model's sysfs names wherever the stat is the same counter. */
    for (unsigned i = 0; i < 43; i++) {
        sl_slub_kstats((sl_slub_kversion){6, 18}, &t);
        SL_CHECK(!strcmp(t[i].name, sl_slub_stat_name(t[i].stat)));
    }
}

/* calculate_sheaf_capacity (7.0) and the 6.18 opt-in. */
static void test_sheaf_capacity(void)
{
    const sl_slub_kversion v618 = {6, 18}, v70 = {7, 0}, v617 = {6, 17};
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v70, 64, 0, 0), 60);    /* 32 + 8 * 60 = 512 */
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v70, 256, 0, 0), 28);   /* 26 -> 240 -> kmalloc-256: 28 */
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v70, 1024, 0, 0), 12);  /* 128 */
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v70, 4096, 0, 0), 4);   /* 64 */
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v70, 4096, 0, 32), 32); /* the request, when larger */
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v70, 64, SL_SLUB_RED_ZONE, 32), 0);
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v618, 64, 0, 0), 0);
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v618, 64, 0, 32), 32);
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v618, 64, SL_SLUB_POISON, 32), 0);
    SL_CHECK_EQ(sl_slub_sheaf_capacity(v617, 64, 0, 32), 0);
    SL_CHECK_EQ(sl_slub_sheaf_request("maple_node"), 32);
    SL_CHECK_EQ(sl_slub_sheaf_request("dentry"), 0);

    /* Which caches get sheaves: 6.18 only with the opt-in and no debug flags; 7.0 all but debug ones. */
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
    struct {
        sl_slub_kversion v;
        uint16_t request;
        uint32_t flags;
        uint32_t capacity;
        bool sheaves;
    } c[] = {{v617, 32, 0, 0, false}, {v618, 0, 0, 0, false},
             {v618, 32, 0, 32, true}, {v618, 32, SL_SLUB_STORE_USER, 0, false},
             {v70, 0, 0, 60, true},   {v70, 0, SL_SLUB_STORE_USER, 0, true}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        sl_slub_config cfg = {.object_size = 200, .flags = c[i].flags, .sheaf_capacity = c[i].request};
        cfg.kernel.version = c[i].v;
        sl_slub_cache *s;
        SL_REQUIRE(sl_slub_cache_create(&z, NULL, 2, &cfg, &s) == SL_OK);
        SL_CHECK_EQ(s->sheaves != NULL, c[i].sheaves);
        SL_CHECK_EQ(sl_slub_cache_sheaf_capacity(s), c[i].capacity);
        void *o;
        SL_CHECK_EQ(sl_slub_alloc(s, 1, &o), SL_OK);
        SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_PCS), c[i].capacity ? 1 : 0);
        SL_CHECK_EQ(sl_slub_free(s, 0, o), SL_OK);
        SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
        SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);
    }
    /* Bad configurations: an unknown version, a CPU-slab variant in 7.0, early_boot before 7.0. */
    sl_slub_config bad = {.object_size = 64};
    bad.kernel.version = (sl_slub_kversion){3, 19};
    sl_slub_cache *s;
    SL_CHECK_EQ(sl_slub_cache_create(&z, NULL, 1, &bad, &s), SL_EINVAL);
    bad.kernel.version = v70;
    bad.fastpath = SL_SLUB_FP_LOCKED;
    SL_CHECK_EQ(sl_slub_cache_create(&z, NULL, 1, &bad, &s), SL_EINVAL);
    bad.fastpath = SL_SLUB_FP_CMPXCHG;
    bad.kernel.version = v618;
    bad.early_boot = 1;
    SL_CHECK_EQ(sl_slub_cache_create(&z, NULL, 1, &bad, &s), SL_EINVAL);
    sl_page_zone_destroy(&z);
}

int main(void)
{
    SL_RUN(test_kernel_versions);
    SL_RUN(test_sheaf_capacity);
    SL_RUN(test_refill_swap_and_barn);
    SL_RUN(test_flush_when_barn_full);
    SL_RUN(test_flush_main_in_batches);
    SL_RUN(test_kfree_rcu_batching);
    SL_RUN(test_kfree_rcu_alone);
    SL_RUN(test_prefill_api);
    SL_RUN(test_bootstrap_sheaf);
    SL_RUN(test_interrupt_falls_back);
    SL_RUN(test_snapshot_sheaves);
    SL_RUN(test_random_against_reference);
    return sl_check_summary();
}
