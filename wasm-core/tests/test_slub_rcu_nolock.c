/*
 * test_slub_rcu_nolock.c - 7.3's kfree_rcu_nolock (kfree_call_rcu_nolock,
 * __kfree_rcu_sheaf with SLAB_FREE_NOLOCK, defer_kfree_rcu and the
 * deferred submission of rcu sheaves by the irq_work), one test per rule,
 * each failing if the rule were wrong (docs/slub.md, "kfree_rcu_nolock").
 */
#include "sheaves_world.h"

#include "../src/sched/sched.h"
#include "../src/slub/sheaves.h"

static const sl_slub_kversion V618 = {6, 18}, V70 = {7, 0}, V72 = {7, 2}, V73 = {7, 3};

static void check_valid(world *w)
{
    char msg[256] = "";
    int rc = world_validate(w, msg, sizeof msg);
    if (rc != SL_OK)
        fprintf(stderr, "  validate: %s\n", msg);
    SL_CHECK_EQ(rc, SL_OK);
}

/* Before 7.3 there is no kfree_rcu_nolock: refused, the object still the caller's. */
static void test_refused_before_73(void)
{
    const sl_slub_kversion vs[] = {V618, V70, V72};
    for (unsigned i = 0; i < 3; i++) {
        world w;
        SL_REQUIRE(world_open_version(&w, 1, vs[i], 8, 0, NULL, 4) == SL_OK);
        void *o = world_alloc(&w, 0);
        SL_REQUIRE(o);
        SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 0, o, false), SL_EINVAL);
        SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF) + ST(&w, FREE_RCU_SHEAF_FAIL), 0);
        check_valid(&w);
        SL_CHECK_EQ(world_free(&w, 0, o), SL_OK); /* still allocated: the free succeeds */
        world_close(&w);
    }
    world w;
    SL_REQUIRE(world_open_version(&w, 2, V73, 8, 0, NULL, 4) == SL_OK);
    void *o = world_alloc(&w, 0);
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 2, o, false), SL_EINVAL);    /* no such CPU */
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 0, &w, false), SL_EFOREIGN); /* not an object */
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(NULL, 0, o, false), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 0, (char *)o + 1, false), SL_EMISALIGNED); /* checked now */
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 0, o, false), SL_OK);
    world_close(&w);
}

/*
 * With interrupts on, kfree_rcu_nolock batches as kfree_rcu does: the rcu
 * sheaf (taken from the spare when empty, else the barn, else a new one)
 * fills and goes to call_rcu; after the grace period it joins the barn full.
 */
static void test_batches_in_rcu_sheaf(void)
{
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 4, 0, NULL, 4) == SL_OK);
    void *o[4];
    for (int i = 0; i < 4; i++)
        SL_REQUIRE((o[i] = world_alloc(&w, 0)));
    uint64_t alloc = ST(&w, SHEAF_ALLOC);
    for (int i = 0; i < 4; i++)
        SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 0, o[i], false), SL_OK);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF), 4);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF_FAIL), 0);
    SL_CHECK(w.sh->pcs[0].rcu_free == NULL && w.sh->pcs[0].rcu_pending != NULL && w.sh->pcs[0].rcu_irq == NULL);
    SL_CHECK(ST(&w, SHEAF_ALLOC) >= alloc); /* a missing rcu sheaf may still be allocated (kmalloc_nolock) */
    check_valid(&w);
    uint64_t put = ST(&w, BARN_PUT);
    SL_CHECK_EQ(sl_slub_rcu_grace_period(w.s, 0), 4);
    SL_CHECK_EQ(ST(&w, BARN_PUT), put + 1);
    SL_CHECK_EQ(w.sh->barn[0].nr_full, 1);
    check_valid(&w);
    world_close(&w);
}

/*
 * With interrupts off the full sheaf is not handed to call_rcu (the caller
 * may have interrupted call_rcu's irq-off section): it waits for the CPU's
 * irq_work, so a grace period before the irq_work leaves it alone.
 */
static void test_full_sheaf_irqs_off_waits_for_irq_work(void)
{
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 1, 4096) == SL_OK);
    tr.enabled = true;
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 4, 0, &tr, 4) == SL_OK);
    void *o[4];
    for (int i = 0; i < 4; i++)
        SL_REQUIRE((o[i] = world_alloc(&w, 0)));
    for (int i = 0; i < 4; i++)
        SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 0, o[i], true), SL_OK);
    sli_pcs *pcs = &w.sh->pcs[0];
    SL_CHECK(pcs->rcu_free == NULL && pcs->rcu_pending == NULL && pcs->rcu_irq != NULL);
    sl_slub_sheaves_info info;
    sl_slub_sheaves_info_get(w.s, &info);
    SL_CHECK_EQ(info.rcu_waiting, 4);
    check_valid(&w);
    SL_CHECK_EQ(sl_slub_rcu_grace_period(w.s, 0), 0); /* not yet given to RCU */
    SL_CHECK_EQ(w.sh->barn[0].nr_full, 0);
    SL_CHECK_EQ(sl_slub_irq_work(w.s, 0), 0); /* no object of its own: the sheaf's were batched */
    SL_CHECK(pcs->rcu_irq == NULL && pcs->rcu_pending != NULL);
    static sl_event evs[4096];
    unsigned nev = sl_trace_drain(&tr, 0, evs, 4096);
    const sl_event *ev = NULL;
    for (unsigned i = 0; i < nev; i++)
        if (evs[i].kind == SL_EV_SLUB_IRQ_WORK)
            ev = &evs[i];
    SL_REQUIRE(ev);
    SL_CHECK(ev->arg0 == 0 && ev->arg1 == 0 && ev->arg2 == 1); /* one sheaf to call_rcu */
    SL_CHECK_EQ(sl_slub_rcu_grace_period(w.s, 0), 4);
    SL_CHECK_EQ(w.sh->barn[0].nr_full, 1);
    check_valid(&w);
    world_close(&w);
    sl_trace_destroy(&tr);

    /* kfree_rcu with interrupts off is not the model's case: its full sheaf always goes to call_rcu */
    SL_REQUIRE(world_open_version(&w, 1, V73, 4, 0, NULL, 4) == SL_OK);
    for (int i = 0; i < 4; i++)
        SL_REQUIRE((o[i] = world_alloc(&w, 0)));
    for (int i = 0; i < 4; i++)
        SL_CHECK_EQ(sl_slub_kfree_rcu(w.s, 0, o[i]), SL_OK);
    SL_CHECK(w.sh->pcs[0].rcu_irq == NULL && w.sh->pcs[0].rcu_pending != NULL);
    world_close(&w);
}

/*
 * SLAB_FREE_NOLOCK: with no rcu sheaf and no empty spare, the barn is
 * trylocked; held elsewhere, its empty sheaf is left there and a new sheaf
 * is allocated (__GFP_NOWARN, kmalloc_nolock) instead.
 */
static void test_barn_trylocked(void)
{
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 4, 0, NULL, 4) == SL_OK);
    void *o[16];
    for (int i = 0; i < 16; i++)
        SL_REQUIRE((o[i] = world_alloc(&w, 0)));
    for (int i = 0; i < 16; i++)
        SL_CHECK_EQ(world_free(&w, 0, o[i]), SL_OK);
    void *x[12];
    for (int i = 0; i < 12; i++)
        SL_REQUIRE((x[i] = world_alloc(&w, 0))); /* main, spare and one barn sheaf emptied */
    for (int i = 0; i < 5; i++)
        SL_CHECK_EQ(world_free(&w, 0, x[i]), SL_OK); /* main fills, then swaps with the empty spare */
    sli_pcs *pcs = &w.sh->pcs[0];
    SL_REQUIRE(pcs->spare && pcs->spare->size == 4 && pcs->rcu_free == NULL); /* no empty spare to take */
    SL_REQUIRE(w.sh->barn[0].nr_empty > 0);
    unsigned empty = w.sh->barn[0].nr_empty;
    uint64_t alloc = ST(&w, SHEAF_ALLOC);
    sl_spin_lock(&w.sh->barn[0].lock);
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 0, x[5], false), SL_OK);
    sl_spin_unlock(&w.sh->barn[0].lock);
    SL_CHECK_EQ(w.sh->barn[0].nr_empty, empty);
    SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), alloc + 1);
    SL_CHECK(pcs->rcu_free != NULL && pcs->rcu_free->size == 1);
    check_valid(&w);
    /* unlocked, the barn's empty sheaf is taken: no allocation */
    for (int i = 6; i < 9; i++)
        SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 0, x[i], false), SL_OK); /* fills it: to call_rcu */
    SL_REQUIRE(pcs->rcu_free == NULL);
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(w.s, 0, x[9], false), SL_OK);
    SL_CHECK_EQ(w.sh->barn[0].nr_empty, empty - 1);
    SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), alloc + 1);
    check_valid(&w);
    world_close(&w);
}

/* An "NMI" at a preemption point: kfree_rcu_nolock of obj on the same CPU, interrupts off. */
typedef struct nmi_ctx {
    world *w;
    unsigned point, fired;
    void *obj;
    int rc;
} nmi_ctx;

static void nmi_hook(sl_trace *tr, unsigned cpu, unsigned point, unsigned line, const void *ctx, void *user)
{
    nmi_ctx *n = user;
    (void)tr, (void)line, (void)ctx;
    if (point != n->point || n->fired)
        return;
    n->fired = 1;
    n->rc = sl_slub_kfree_rcu_nolock(n->w->s, cpu, n->obj, true);
}

/*
 * Inside the CPU's sheaf section local_trylock fails (FREE_RCU_SHEAF_FAIL):
 * the object is deferred (defer_kfree_rcu), held in validate's eyes, and the
 * irq_work hands it to kfree_rcu's path, which batches it in the rcu sheaf.
 */
static void test_inside_sheaf_section_defers(void)
{
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 1, 4096) == SL_OK);
    tr.enabled = true;
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 8, 0, &tr, 4) == SL_OK);
    void *a = world_alloc(&w, 0), *b = world_alloc(&w, 0);
    SL_REQUIRE(a && b);
    nmi_ctx n = {.w = &w, .point = SL_SLUB_PP_SHEAF_FREE, .obj = b};
    sl_trace_set_preempt_hook(&tr, nmi_hook, &n);
    SL_CHECK_EQ(world_free(&w, 0, a), SL_OK);
    sl_trace_set_preempt_hook(&tr, NULL, NULL);
    SL_CHECK_EQ(n.fired, 1);
    SL_CHECK_EQ(n.rc, SL_OK);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF_FAIL), 1);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF), 0);
    SL_CHECK(w.s->cpu[0].rcu_defer == b && w.s->cpu[0].defer_free == NULL);
    check_valid(&w);
    SL_CHECK_EQ(sl_slub_rcu_grace_period(w.s, 0), 0); /* not yet kfree_rcu'd */
    SL_CHECK_EQ(sl_slub_irq_work(w.s, 0), 1);
    SL_CHECK(w.s->cpu[0].rcu_defer == NULL);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF), 1);
    SL_CHECK(w.sh->pcs[0].rcu_free && w.sh->pcs[0].rcu_free->objects[0] == b);
    check_valid(&w);
    world_drain(&w);
    check_valid(&w);
    world_close(&w);
    sl_trace_destroy(&tr);
}

/*
 * A cache without sheaves (SLAB_NO_SHEAVES): the sheaf fails, the object is
 * deferred; the irq_work's kvfree_call_rcu makes it wait alone, and the
 * grace period frees it to its slab.  kvfree_rcu_barrier (7.3:
 * flush_all_rcu_sheaves begins with deferred_work_barrier) frees a deferred
 * object without an explicit irq_work; destroy does too.
 */
static void test_no_sheaves_and_barriers(void)
{
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
    sl_slub_config cfg = {.object_size = 64, .track = 1, .flags = SL_SLUB_NO_SHEAVES};
    cfg.kernel.version = V73;
    sl_slub_cache *s;
    SL_REQUIRE(sl_slub_cache_create(&z, NULL, 1, &cfg, &s) == SL_OK);
    void *a, *b, *c;
    SL_REQUIRE(sl_slub_alloc(s, 0, &a) == SL_OK && sl_slub_alloc(s, 0, &b) == SL_OK &&
               sl_slub_alloc(s, 0, &c) == SL_OK);
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(s, 0, a, false), SL_OK);
    SL_CHECK(s->cpu[0].rcu_defer == a);
    sl_slub_sheaves_info info;
    sl_slub_sheaves_info_get(s, &info);
    SL_CHECK_EQ(info.rcu_waiting, 1);
    SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
    SL_CHECK_EQ(sl_slub_irq_work(s, 0), 1);
    SL_CHECK(s->cpu[0].rcu_defer == NULL && s->cpu[0].rcu_wait == a);
    uint64_t slow = sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLOWPATH);
    SL_CHECK_EQ(sl_slub_rcu_grace_period(s, 0), 1);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLOWPATH), slow + 1);
    /* kvfree_rcu_barrier: the irq_work first, then the grace periods */
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(s, 0, b, false), SL_OK);
    SL_CHECK(s->cpu[0].rcu_defer == b);
    SL_CHECK_EQ(sl_slub_rcu_barrier(s), 1);
    SL_CHECK(s->cpu[0].rcu_defer == NULL && s->cpu[0].rcu_wait == NULL);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLOWPATH), slow + 2); /* b is back in its slab */
    SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
    /* destroy: kvfree_rcu_barrier_on_cache runs the irq_work, then the grace period: nothing left in use */
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(s, 0, c, false), SL_OK);
    SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);
    sl_page_zone_destroy(&z);
}

/*
 * PREEMPT_RT 7.3: kfree_rcu keeps off the sheaves (5541d897, "disallow
 * kfree_rcu_sheaf() on PREEMPT_RT again"), also when the irq_work passes on
 * what kfree_rcu_nolock deferred; kfree_rcu_nolock itself uses them
 * (SLAB_FREE_NOLOCK).
 */
static void test_preempt_rt(void)
{
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
    sl_slub_config cfg = {.object_size = 64, .fastpath = SL_SLUB_FP_RT, .track = 1};
    cfg.kernel.version = V73;
    sl_slub_cache *s;
    SL_REQUIRE(sl_slub_cache_create(&z, NULL, 1, &cfg, &s) == SL_OK);
    void *o[3];
    for (int i = 0; i < 3; i++)
        SL_REQUIRE(sl_slub_alloc(s, 0, &o[i]) == SL_OK);
    SL_CHECK_EQ(sl_slub_kfree_rcu(s, 0, o[0]), SL_OK);
    SL_CHECK(s->cpu[0].rcu_wait == o[0]);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_RCU_SHEAF) + sl_slub_stat_get(s, -1, SL_SLUB_FREE_RCU_SHEAF_FAIL),
                0);
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(s, 0, o[1], false), SL_OK);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_RCU_SHEAF), 1);
    /* deferred by kfree_rcu_nolock, then kvfree_call_rcu by the irq_work: off the sheaves */
    s->sheaves->pcs[0].lock = 1; /* inside the sheaf section */
    SL_CHECK_EQ(sl_slub_kfree_rcu_nolock(s, 0, o[2], true), SL_OK);
    s->sheaves->pcs[0].lock = 0;
    SL_CHECK(s->cpu[0].rcu_defer == o[2]);
    SL_CHECK_EQ(sl_slub_irq_work(s, 0), 1);
    SL_CHECK(s->cpu[0].rcu_wait == o[2]);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_RCU_SHEAF), 1);
    SL_CHECK_EQ(sl_slub_rcu_barrier(s), 3);
    SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
    SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);
    sl_page_zone_destroy(&z);
}

/* The sandbox driver's place of an object. */
static sl_sched_ref ref_of(world *w, void *o)
{
    uint32_t pfn = 0, idx = 0;
    SL_CHECK(sl_slub_object_index(w->s, o, &pfn, &idx));
    return (sl_sched_ref){pfn, idx};
}

/*
 * The driver's SL_SCHED_KFREE_RCU_NOLOCK: count 1 runs it with interrupts
 * off (a full sheaf waits for the irq_work), count 0 with them on (straight
 * to call_rcu), as an interrupt's handler always off (and inside the sheaf
 * section it defers the object); count 2 is refused; 7.2 refuses the call.
 */
static void test_sched_op(void)
{
    for (unsigned irqs_off = 0; irqs_off < 2; irqs_off++) {
        world w;
        SL_REQUIRE(world_open_version(&w, 1, V73, 2, 0, NULL, 4) == SL_OK);
        void *a = world_alloc(&w, 0), *b = world_alloc(&w, 0);
        SL_REQUIRE(a && b);
        sl_sched_ref refs[2] = {ref_of(&w, a), ref_of(&w, b)};
        sl_trace tr;
        SL_REQUIRE(sl_trace_init(&tr, 1, 1024) == SL_OK);
        const sl_sched_op ops[5] = {{SL_SCHED_KFREE_RCU_NOLOCK, 0, (uint16_t)irqs_off, 0},
                                    {SL_SCHED_KFREE_RCU_NOLOCK, 0, (uint16_t)irqs_off, 1},
                                    {SL_SCHED_RCU_GP, 0, 0, 0},
                                    {SL_SCHED_IRQ_WORK, 0, 0, 0},
                                    {SL_SCHED_RCU_GP, 0, 0, 0}};
        int32_t res[5];
        sl_sched_run r = {.cache = w.s,
                          .trace = &tr,
                          .ops = ops,
                          .nops = 5,
                          .refs = refs,
                          .nrefs = 2,
                          .stop_at_microstep = SL_SCHED_NO_STOP,
                          .results = res};
        SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
        SL_CHECK_EQ(res[0], SL_OK);
        SL_CHECK_EQ(res[1], SL_OK);
        SL_CHECK_EQ(res[2], irqs_off ? 0 : 2);
        SL_CHECK_EQ(res[3], 0);
        SL_CHECK_EQ(res[4], irqs_off ? 2 : 0);
        check_valid(&w);
        const sl_sched_op bad = {SL_SCHED_KFREE_RCU_NOLOCK, 0, 2, 0};
        r.ops = &bad;
        r.nops = 1;
        SL_CHECK_EQ(sl_sched_execute(&r), SL_EINVAL);
        world_close(&w);
        sl_trace_destroy(&tr);
    }
    /* as a handler inside the sheaf section of a free: deferred, then kfree_rcu'd by the irq_work */
    world w;
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 1, 1024) == SL_OK);
    SL_REQUIRE(world_open_version(&w, 1, V73, 8, 0, &tr, 4) == SL_OK);
    void *a = world_alloc(&w, 0), *b = world_alloc(&w, 0);
    SL_REQUIRE(a && b);
    sl_sched_ref refs[2] = {ref_of(&w, a), ref_of(&w, b)};
    const sl_sched_op ops[2] = {{SL_SCHED_FREE, 0, 0, 0}, {SL_SCHED_IRQ_WORK, 0, 0, 0}};
    sl_sched_irq irq = {.at_op = 0, .point = SL_SLUB_PP_SHEAF_FREE, .handler = {SL_SCHED_KFREE_RCU_NOLOCK, 0, 0, 1}};
    int32_t res[2];
    sl_sched_run r = {.cache = w.s,
                      .trace = &tr,
                      .ops = ops,
                      .nops = 2,
                      .refs = refs,
                      .nrefs = 2,
                      .irqs = &irq,
                      .nirqs = 1,
                      .stop_at_microstep = SL_SCHED_NO_STOP,
                      .results = res};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_CHECK_EQ(r.irqs_fired, 1u);
    SL_CHECK_EQ(r.irq_results[0], SL_OK);
    SL_CHECK_EQ(res[1], 1); /* b waited on the deferred list */
    SL_CHECK(w.sh->pcs[0].rcu_free && w.sh->pcs[0].rcu_free->size == 1);
    check_valid(&w);
    world_close(&w);
    /* 7.2: the op runs and the call is refused */
    SL_REQUIRE(world_open_version(&w, 1, V72, 8, 0, &tr, 4) == SL_OK);
    a = world_alloc(&w, 0);
    refs[0] = ref_of(&w, a);
    r = (sl_sched_run){.cache = w.s,
                       .trace = &tr,
                       .ops = &(sl_sched_op){SL_SCHED_KFREE_RCU_NOLOCK, 0, 0, 0},
                       .nops = 1,
                       .refs = refs,
                       .nrefs = 1,
                       .stop_at_microstep = SL_SCHED_NO_STOP,
                       .results = res};
    SL_CHECK_EQ(sl_sched_execute(&r), SL_OK);
    SL_CHECK_EQ(res[0], SL_EINVAL);
    world_close(&w);
    sl_trace_destroy(&tr);
}

int main(void)
{
    SL_RUN(test_refused_before_73);
    SL_RUN(test_batches_in_rcu_sheaf);
    SL_RUN(test_full_sheaf_irqs_off_waits_for_irq_work);
    SL_RUN(test_barn_trylocked);
    SL_RUN(test_inside_sheaf_section_defers);
    SL_RUN(test_no_sheaves_and_barriers);
    SL_RUN(test_preempt_rt);
    SL_RUN(test_sched_op);
    return sl_check_summary();
}
