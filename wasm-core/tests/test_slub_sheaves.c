/*
 * test_slub_sheaves.c - the per-CPU sheaves and the barn (sheaves.c): each
 * path of alloc_from_pcs and free_to_pcs with the counters the kernel keeps,
 * the flushes, kfree_rcu batching, the prefill API, the bootstrap sheaf, an
 * interrupt inside the sheaf section falling back to the slab path, and a
 * randomized run against a reference with every invariant checked after
 * every step.  Both eras' handling of an empty main after a refill (6.18:
 * to the barn; 7.0: kept as the spare) are run where it matters.
 */
#include "sheaves_world.h"

#include "../src/slub/eras.h"

#define ST(w, item) sli_sheaves_stat(&(w)->sh, -1, SLI_SH_##item)

static void check_valid(world *w, void *const *held_objs, size_t n)
{
    char msg[256];
    int rc = world_validate(w, held_objs, n, msg, sizeof msg);
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
        SL_CHECK_EQ(w.sh.pcs[0].main->size, 3);
        /* The empty main: 6.18 puts it in the barn, 7.0 keeps it as the spare. */
        SL_CHECK_EQ(w.sh.barn.nr_empty, v70 ? 0 : 1);
        SL_CHECK(v70 ? w.sh.pcs[0].spare && w.sh.pcs[0].spare->size == 0 : !w.sh.pcs[0].spare);
        for (int i = 1; i < 12; i++)
            SL_REQUIRE((o[i] = world_alloc(&w, 0)));
        SL_CHECK_EQ(ST(&w, SHEAF_REFILL), 12); /* three refills of 4, reusing the two sheaves */
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 2);
        SL_CHECK_EQ(ST(&w, BARN_GET_FAIL), 3);
        SL_CHECK_EQ(ST(&w, ALLOC_PCS), 12);
        check_valid(&w, o, 12);

        /* Frees: main fills, then the spare (or an empty barn sheaf) takes over, then main goes to the barn. */
        for (int i = 0; i < 12; i++)
            SL_CHECK_EQ(world_free(&w, 0, o[i]), SL_OK);
        SL_CHECK_EQ(ST(&w, FREE_PCS), 12);
        SL_CHECK_EQ(ST(&w, BARN_PUT), 1);
        SL_CHECK_EQ(ST(&w, BARN_PUT_FAIL), 0);
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 3); /* the barn had no empty sheaf: one was allocated */
        SL_CHECK_EQ(w.sh.barn.nr_full, 1);
        SL_CHECK_EQ(w.sh.pcs[0].main->size, 4);
        SL_CHECK(w.sh.pcs[0].spare && w.sh.pcs[0].spare->size == 4);
        check_valid(&w, NULL, 0);

        /* Allocating 9: main, then the full spare swapped in, then the barn's full sheaf for the empty main. */
        for (int i = 0; i < 9; i++)
            SL_REQUIRE((o[i] = world_alloc(&w, 0)));
        SL_CHECK_EQ(ST(&w, BARN_GET), 1);
        SL_CHECK_EQ(ST(&w, SHEAF_REFILL), 12); /* no slab was touched */
        SL_CHECK_EQ(w.sh.barn.nr_full, 0);
        SL_CHECK_EQ(w.sh.barn.nr_empty, 1);
        SL_CHECK_EQ(w.sh.pcs[0].main->size, 3);
        check_valid(&w, o, 9);
        for (int i = 0; i < 9; i++)
            world_free(&w, 0, o[i]);
        world_drain(&w);
        check_valid(&w, NULL, 0);
        sl_slub_node_info ni;
        sl_slub_node_info_get(w.s, &ni);
        SL_CHECK_EQ(w.sh.barn.nr_full + w.sh.barn.nr_empty, 0);
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
        SL_CHECK_EQ(w.sh.barn.nr_full, SLI_MAX_FULL_SHEAVES);
        SL_CHECK_EQ(ST(&w, BARN_PUT), 10);
        SL_CHECK_EQ(ST(&w, BARN_PUT_FAIL), 8);
        SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), 16);
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 12);
        SL_CHECK_EQ(ST(&w, FREE_PCS), 40);
        check_valid(&w, NULL, 0);
        /* barn_shrink (a cache shrink) flushes and frees them all. */
        sli_act a = world_act(&w, 0);
        SL_CHECK_EQ(sli_barn_shrink(&w.sh, &a), 20);
        SL_CHECK_EQ(w.sh.barn.nr_full, 0);
        SL_CHECK_EQ(ST(&w, SHEAF_FREE), 10);
        check_valid(&w, NULL, 0);
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
    SL_CHECK_EQ(atomic_load(&w.sh.nr_sheaves), 2); /* the budget held */
    unsigned n = sl_trace_drain(&tr, 0, ev, 4096), batches = 0, sizes[4] = {0};
    for (unsigned i = 0; i < n; i++)
        if (ev[i].kind == SL_EV_SLUB_SHEAF_FLUSH && ev[i].arg2 == 1 && batches < 4)
            sizes[batches++] = ev[i].arg1;
    SL_CHECK_EQ(batches, 3);
    SL_CHECK_EQ(sizes[0], 32);
    SL_CHECK_EQ(sizes[1], 32);
    SL_CHECK_EQ(sizes[2], 6);
    SL_CHECK_EQ(w.sh.pcs[0].main->size, 70);
    check_valid(&w, NULL, 0);
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
    sli_act a = world_act(&w, 0);
    for (int i = 0; i < 8; i++)
        SL_CHECK(sli_kfree_rcu_sheaf(&w.sh, &a, o[i]));
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF), 8);
    SL_CHECK(w.sh.pcs[0].rcu_free == NULL); /* the second one filled too */
    unsigned pending = 0;
    for (sli_sheaf *s = w.sh.pcs[0].rcu_pending; s; s = s->next)
        pending += s->size;
    SL_CHECK_EQ(pending, 8);
    check_valid(&w, NULL, 0); /* the objects are in the pending sheaves, not free, not lost */
    SL_CHECK_EQ(sli_sheaves_rcu_gp(&w.sh, &a), 8);
    SL_CHECK_EQ(w.sh.barn.nr_full, 2);
    SL_CHECK_EQ(ST(&w, BARN_PUT), 2);
    check_valid(&w, NULL, 0);
    /* The next allocations are served from those barn sheaves. */
    void *p = world_alloc(&w, 0);
    SL_CHECK(p != NULL);
    SL_CHECK_EQ(ST(&w, BARN_GET), 1);
    world_free(&w, 0, p);
    /* A half-filled rcu_free sheaf goes to call_rcu on a flush, and is flushed to slabs after the grace period. */
    SL_REQUIRE((p = world_alloc(&w, 0)));
    SL_CHECK(sli_kfree_rcu_sheaf(&w.sh, &a, p));
    SL_CHECK_EQ(sli_pcs_flush_all(&w.sh, &a), SL_OK);
    SL_CHECK(w.sh.pcs[0].rcu_free == NULL && w.sh.pcs[0].rcu_pending && w.sh.pcs[0].rcu_pending->size == 1);
    uint64_t flushed = ST(&w, SHEAF_FLUSH);
    SL_CHECK_EQ(sli_sheaves_rcu_gp(&w.sh, &a), 1);
    SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), flushed + 1);
    check_valid(&w, NULL, 0);
    world_close(&w);
}

/* kmem_cache_prefill_sheaf & co: the spare (fast), the barn or a new sheaf (slow), oversize sheaves. */
static void test_prefill_api(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 1, 4, 0, true, NULL, 16) == SL_OK);
    sli_act a = world_act(&w, 0);
    int err;
    sli_sheaf *sheaf = sli_prefill_sheaf(&w.sh, &a, 3, &err);
    SL_REQUIRE(sheaf);
    SL_CHECK_EQ(ST(&w, SHEAF_PREFILL_SLOW), 1);
    SL_CHECK_EQ(ST(&w, BARN_GET_FAIL), 1);
    SL_CHECK_EQ(sheaf->size, 4); /* refilled to the cache's capacity */
    void *o[16];
    for (int i = 0; i < 3; i++)
        SL_CHECK((o[i] = sli_alloc_from_sheaf(&w.sh, &a, sheaf)) != NULL);
    check_valid(&w, o, 3);
    sli_return_sheaf(&w.sh, &a, sheaf);
    SL_CHECK_EQ(ST(&w, SHEAF_RETURN_FAST), 1);
    SL_CHECK(w.sh.pcs[0].spare == sheaf && sheaf->size == 1);
    /* The spare is taken back and refilled. */
    sheaf = sli_prefill_sheaf(&w.sh, &a, 2, &err);
    SL_REQUIRE(sheaf);
    SL_CHECK_EQ(ST(&w, SHEAF_PREFILL_FAST), 1);
    SL_CHECK_EQ(sheaf->size, 4);
    SL_CHECK_EQ(sli_refill_sheaf(&w.sh, &a, &sheaf, 4), SL_OK); /* already enough: nothing happens */
    for (int i = 3; i < 7; i++)
        SL_CHECK((o[i] = sli_alloc_from_sheaf(&w.sh, &a, sheaf)) != NULL);
    SL_CHECK(sli_alloc_from_sheaf(&w.sh, &a, sheaf) == NULL); /* no fallback to the slabs */
    /* Refilling to more than the capacity replaces it with an oversize sheaf. */
    sli_sheaf *old = sheaf;
    SL_CHECK_EQ(sli_refill_sheaf(&w.sh, &a, &sheaf, 10), SL_OK);
    SL_CHECK(sheaf != old && sheaf->capacity == 10 && sheaf->size == 10);
    SL_CHECK_EQ(ST(&w, SHEAF_PREFILL_OVERSIZE), 1);
    SL_CHECK_EQ(ST(&w, SHEAF_RETURN_FAST), 2); /* the old one became the spare again */
    check_valid(&w, o, 7);
    uint64_t flushed = ST(&w, SHEAF_FLUSH);
    sli_return_sheaf(&w.sh, &a, sheaf); /* oversize: flushed and freed */
    SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), flushed + 10);
    /* Two prefills out at once: the second return finds the spare taken and refills into the barn. */
    sli_sheaf *s1 = sli_prefill_sheaf(&w.sh, &a, 4, &err), *s2 = sli_prefill_sheaf(&w.sh, &a, 4, &err);
    SL_REQUIRE(s1 && s2);
    o[7] = sli_alloc_from_sheaf(&w.sh, &a, s2);
    sli_return_sheaf(&w.sh, &a, s1);
    sli_return_sheaf(&w.sh, &a, s2);
    SL_CHECK_EQ(ST(&w, SHEAF_RETURN_SLOW), 1);
    SL_CHECK_EQ(w.sh.barn.nr_full, 1);
    SL_CHECK_EQ(ST(&w, BARN_PUT), 1);
    check_valid(&w, o, 8);
    SL_CHECK(sli_prefill_sheaf(&w.sh, &a, 0, &err) == NULL && err == SL_EINVAL);
    for (int i = 0; i < 8; i++)
        world_free(&w, 0, o[i]);
    world_close(&w);
}

/* 7.0's kmalloc caches start with the zero-capacity bootstrap sheaf: every sheaf path fails until bootstrap. */
static void test_bootstrap_sheaf(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 2, 0, 0, true, NULL, 16) == SL_OK);
    SL_CHECK(!sli_sheaves_active(&w.sh));
    sli_act a = world_act(&w, 1);
    SL_CHECK(sli_alloc_from_pcs(&w.sh, &a) == NULL);
    void *o = world_alloc(&w, 1); /* the slab path */
    SL_REQUIRE(o);
    SL_CHECK(!sli_free_to_pcs(&w.sh, &a, o));
    SL_CHECK(!sli_kfree_rcu_sheaf(&w.sh, &a, o));
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF_FAIL), 1);
    SL_CHECK_EQ(ST(&w, ALLOC_PCS) + ST(&w, FREE_PCS) + ST(&w, SHEAF_ALLOC), 0);
    int err;
    sli_sheaf *s = sli_prefill_sheaf(&w.sh, &a, 3, &err); /* every prefill is oversize */
    SL_REQUIRE(s);
    SL_CHECK_EQ(ST(&w, SHEAF_PREFILL_OVERSIZE), 1);
    check_valid(&w, &o, 1);
    sli_return_sheaf(&w.sh, &a, s);
    SL_CHECK_EQ(sli_sheaves_bootstrap(&w.sh, &a, 8), SL_OK);
    SL_CHECK(sli_sheaves_active(&w.sh) && w.sh.pcs[0].main->capacity == 8);
    SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), 2);
    SL_CHECK(sli_free_to_pcs(&w.sh, &a, o));
    SL_CHECK(world_alloc(&w, 1) == o); /* LIFO */
    SL_CHECK_EQ(sli_sheaves_bootstrap(&w.sh, &a, 8), SL_EINVAL);
    check_valid(&w, &o, 1);
    world_free(&w, 1, o);
    world_close(&w);
}

/* An interrupt inside the sheaf section: the handler's trylock fails and it takes the slab path. */
typedef struct irq_ctx {
    world *w;
    unsigned point, fired;
    int kind; /* 0 alloc, 1 free, 2 kfree_rcu */
    void *obj, *got;
} irq_ctx;

static void irq_hook(sl_trace *tr, unsigned cpu, unsigned point, const void *ctx, void *user)
{
    irq_ctx *ic = user;
    (void)tr, (void)ctx;
    if (point != ic->point || ic->fired)
        return; /* one interrupt, and none inside the handler */
    ic->fired = 1;
    if (ic->kind == 0) {
        ic->got = world_alloc(ic->w, cpu);
    } else if (ic->kind == 1) {
        world_free(ic->w, cpu, ic->obj);
    } else {
        sli_act a = world_act(ic->w, cpu);
        if (!sli_kfree_rcu_sheaf(&ic->w->sh, &a, ic->obj))
            sl_slub_free(ic->w->s, cpu, ic->obj); /* kfree_rcu's own batching, after a grace period */
    }
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
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 1, 4096) == SL_OK);
    tr.enabled = true;
    world w;
    SL_REQUIRE(world_open(&w, 1, 8, 0, true, &tr, 16) == SL_OK);
    void *keep = world_alloc(&w, 0), *spare_obj = world_alloc(&w, 0); /* main now holds 6 */
    SL_REQUIRE(keep && spare_obj);
    count_events(&tr, 0);

    /* An allocation interrupted inside alloc_from_pcs by an allocation on the same CPU. */
    irq_ctx ic = {.w = &w, .point = SLI_PP_SHEAF_ALLOC, .kind = 0};
    sl_trace_set_preempt_hook(&tr, irq_hook, &ic);
    uint64_t slab_allocs = sl_slub_stat_get(w.s, -1, SL_SLUB_ALLOC_FASTPATH);
    void *mine = world_alloc(&w, 0);
    SL_CHECK_EQ(ic.fired, 1);
    SL_CHECK(mine && ic.got && mine != ic.got);
    SL_CHECK_EQ(sl_slub_stat_get(w.s, -1, SL_SLUB_ALLOC_FASTPATH), slab_allocs + 1); /* the handler's */
    SL_CHECK_EQ(ST(&w, ALLOC_PCS), 3);
    SL_CHECK_EQ(count_events(&tr, SL_EV_SLUB_SHEAF_TRYLOCK_FAIL), 1);
    void *held_objs[4] = {keep, spare_obj, mine, ic.got};
    check_valid(&w, held_objs, 4);

    /* A free interrupted inside free_to_pcs by a free on the same CPU: the handler's goes to its slab. */
    ic = (irq_ctx){.w = &w, .point = SLI_PP_SHEAF_FREE, .kind = 1, .obj = ic.got};
    uint32_t main_before = w.sh.pcs[0].main->size;
    SL_CHECK_EQ(world_free(&w, 0, mine), SL_OK);
    SL_CHECK_EQ(ic.fired, 1);
    SL_CHECK_EQ(w.sh.pcs[0].main->size, main_before + 1); /* only the interrupted free's object */
    SL_CHECK_EQ(ST(&w, FREE_PCS), 1);
    check_valid(&w, held_objs, 2);

    /* kfree_rcu interrupted by kfree_rcu: the handler's cannot batch. */
    ic = (irq_ctx){.w = &w, .point = SLI_PP_SHEAF_FREE, .kind = 2, .obj = spare_obj};
    SL_CHECK_EQ(world_free(&w, 0, keep), SL_OK);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF_FAIL), 1);
    check_valid(&w, NULL, 0);

    /* An allocation in the refill window, where the lock is dropped: it refills main itself. */
    world_drain(&w);
    ic = (irq_ctx){.w = &w, .point = SLI_PP_SHEAF_REFILL, .kind = 0};
    mine = world_alloc(&w, 0);
    SL_CHECK_EQ(ic.fired, 1);
    SL_CHECK(mine && ic.got && mine != ic.got);
    /* The handler installed a full main; the interrupted refill keeps its sheaf as the spare. */
    SL_CHECK(w.sh.pcs[0].spare && w.sh.pcs[0].spare->size == 8);
    SL_CHECK_EQ(w.sh.pcs[0].main->size, 6);
    void *two[2] = {mine, ic.got};
    check_valid(&w, two, 2);
    sl_trace_set_preempt_hook(&tr, NULL, NULL);
    world_free(&w, 0, mine);
    world_free(&w, 0, ic.got);
    world_close(&w);
    sl_trace_destroy(&tr);
}

/* Random operations on 1..3 CPUs against a reference set, every invariant checked after every step. */
static void test_random_against_reference(void)
{
    for (unsigned round = 0; round < 6; round++) {
        unsigned ncpus = 1 + round % 3;
        bool v70 = round & 1;
        uint32_t capacity = round < 2 ? 4 : round < 4 ? 32 : 7;
        uint32_t budget = round == 5 ? 2 * ncpus + 1 : 0; /* sheaf allocations fail past it */
        world w;
        SL_REQUIRE(world_open(&w, ncpus, capacity, budget, v70, NULL, 32) == SL_OK);
        enum { MAXH = 2048 };
        static void *held_objs[MAXH];
        size_t nh = 0;
        sli_sheaf *out[4] = {0};
        uint64_t rng = 0x5eedull + round;
        unsigned steps = (unsigned)sl_test_scale(3000);
        int failures = 0;
        for (unsigned step = 0; step < steps && !failures; step++) {
            unsigned cpu = (unsigned)(sl_test_rand(&rng) % ncpus), r = (unsigned)(sl_test_rand(&rng) % 100);
            sli_act a = world_act(&w, cpu);
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
                unsigned got = sli_alloc_from_pcs_bulk(&w.sh, &a, n, held_objs + nh);
                if (got < n)
                    SL_CHECK_EQ(sl_slub_alloc_bulk(w.s, cpu, n - got, held_objs + nh + got), (int)(n - got));
                nh += n;
            } else if (r < 69 && nh) {
                unsigned n = 1 + (unsigned)(sl_test_rand(&rng) % (nh < 64 ? nh : 64));
                void *batch[64];
                memcpy(batch, held_objs + nh - n, n * sizeof(void *));
                nh -= n;
                sli_free_to_pcs_bulk(&w.sh, &a, n, batch);
            } else if (r < 76 && nh) {
                size_t k = sl_test_rand(&rng) % nh;
                if (!sli_kfree_rcu_sheaf(&w.sh, &a, held_objs[k]))
                    SL_CHECK_EQ(sl_slub_free(w.s, cpu, held_objs[k]), SL_OK);
                held_objs[k] = held_objs[--nh];
            } else if (r < 80) {
                sli_sheaves_rcu_gp(&w.sh, &a);
            } else if (r < 82) {
                SL_CHECK_EQ(sli_pcs_flush_all(&w.sh, &a), SL_OK);
            } else if (r < 83) {
                sli_barn_shrink(&w.sh, &a);
            } else if (r < 88) {
                unsigned slot = (unsigned)(sl_test_rand(&rng) % 4);
                int err;
                if (!out[slot])
                    out[slot] = sli_prefill_sheaf(&w.sh, &a, 1 + (uint32_t)(sl_test_rand(&rng) % (capacity + 3)), &err);
                else if (sl_test_rand(&rng) % 2)
                    sli_return_sheaf(&w.sh, &a, out[slot]), out[slot] = NULL;
                else if (sli_refill_sheaf(&w.sh, &a, &out[slot], 1 + (uint32_t)(sl_test_rand(&rng) % (capacity + 3))))
                    SL_CHECK(out[slot] != NULL);
            } else if (r < 96 && nh < MAXH) {
                unsigned slot = (unsigned)(sl_test_rand(&rng) % 4);
                void *o = out[slot] ? sli_alloc_from_sheaf(&w.sh, &a, out[slot]) : NULL;
                if (o)
                    held_objs[nh++] = o;
            } else {
                sl_slub_flush_cpu(w.s, cpu);
            }
            char msg[256];
            if (world_validate(&w, held_objs, nh, msg, sizeof msg) != SL_OK) {
                fprintf(stderr, "  round %u step %u: %s\n", round, step, msg);
                failures++;
            }
        }
        SL_CHECK_EQ(failures, 0);
        for (unsigned slot = 0; slot < 4; slot++)
            if (out[slot]) {
                sli_act a = world_act(&w, slot % ncpus);
                sli_return_sheaf(&w.sh, &a, out[slot]);
            }
        for (size_t k = 0; k < nh; k++)
            world_free(&w, (unsigned)(k % ncpus), held_objs[k]);
        world_drain(&w);
        check_valid(&w, NULL, 0);
        SL_CHECK_EQ(atomic_load(&w.sh.nr_sheaves), sli_sheaves_active(&w.sh) ? ncpus : 0);
        world_close(&w);
    }
}

static void test_kernel_versions(void)
{
    sl_slub_kversion v;
    const char *why;
    SL_CHECK_EQ(sl_slub_kversion_parse("6.18", &v, &why), SL_OK);
    SL_CHECK(v.major == 6 && v.minor == 18);
    const char *bad[] = {"", "6", "6.", ".18", "6.18.1", "6,18", " 6.18", "+6.18", "4.2", "8.0", "3.19", "6.1000",
                         NULL};
    for (int i = 0; bad[i]; i++) {
        why = NULL;
        SL_CHECK_EQ(sl_slub_kversion_parse(bad[i], &v, &why), SL_EINVAL);
        SL_CHECK(why != NULL);
    }
    SL_CHECK_EQ(sl_slub_kversion_parse(NULL, &v, NULL), SL_EINVAL);
    char buf[8];
    SL_CHECK(!strcmp(sl_slub_kversion_format((sl_slub_kversion){7, 0}, buf, sizeof buf), "7.0"));
    struct {
        const char *v;
        unsigned era;
        bool cpu_slab, frozen, irq_off, by_objects, old_order, at_zero, left_pad;
        unsigned track;
    } table[] = {
        {"4.3", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 1, 1, 1, 1, 0, 152},
        {"4.4", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 1, 1, 1, 0, 152},
        {"4.18", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 1, 1, 1, 1, 152},
        {"5.16", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 0, 1, 0, 1, 152},
        {"6.7", SL_SLUB_ERA_FROZEN_PARTIAL, 1, 1, 0, 0, 1, 0, 1, 32},
        {"6.8", SL_SLUB_ERA_CPU_SLAB, 1, 0, 0, 0, 0, 0, 1, 32},
        {"6.17", SL_SLUB_ERA_CPU_SLAB, 1, 0, 0, 0, 0, 0, 1, 32},
        {"6.18", SL_SLUB_ERA_OPT_IN_SHEAVES, 1, 0, 0, 0, 0, 0, 1, 32},
        {"7.0", SL_SLUB_ERA_SHEAVES, 0, 0, 0, 0, 0, 0, 1, 32},
        {"7.3", SL_SLUB_ERA_SHEAVES, 0, 0, 0, 0, 0, 0, 1, 32},
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
        SL_CHECK_EQ(r.track_size, table[i].track);
        SL_CHECK_EQ(r.sheaves, r.era == SL_SLUB_ERA_SHEAVES ? SL_SLUB_SHEAVES_ALL
                              : r.era == SL_SLUB_ERA_OPT_IN_SHEAVES ? SL_SLUB_SHEAVES_OPT_IN : SL_SLUB_SHEAVES_NONE);
        SL_CHECK(sl_slub_era_name(r.era) != NULL);
    }
    SL_CHECK(sl_slub_era_name(9) == NULL);
}

int main(void)
{
    SL_RUN(test_kernel_versions);
    SL_RUN(test_refill_swap_and_barn);
    SL_RUN(test_flush_when_barn_full);
    SL_RUN(test_flush_main_in_batches);
    SL_RUN(test_kfree_rcu_batching);
    SL_RUN(test_prefill_api);
    SL_RUN(test_bootstrap_sheaf);
    SL_RUN(test_interrupt_falls_back);
    SL_RUN(test_random_against_reference);
    return sl_check_summary();
}
