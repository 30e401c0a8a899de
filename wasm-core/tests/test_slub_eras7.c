/*
 * test_slub_eras7.c - the SLUB eras after 7.0 (7.1, 7.2, 7.3, and a newer
 * version with its notice) and the sheaves rules issue 23 found wrong, one
 * test per rule, each failing on the model as it was before (docs/slub.md,
 * "Kernel eras").
 */
#include "sheaves_world.h"

#include "../src/slub/sheaves.h"

#include <stdlib.h>

static const sl_slub_kversion V70 = {7, 0}, V71 = {7, 1}, V72 = {7, 2}, V73 = {7, 3};

static void check_valid(world *w)
{
    char msg[256] = "";
    int rc = world_validate(w, msg, sizeof msg);
    if (rc != SL_OK)
        fprintf(stderr, "  validate: %s\n", msg);
    SL_CHECK_EQ(rc, SL_OK);
}

/* Each version's rules, and a version newer than the newest with its notice. */
static void test_rules_per_version(void)
{
    sl_slub_rules r;
    sl_slub_rules_for(V70, &r);
    SL_CHECK(r.sheaf_exemptions && !r.relock_trylock && !r.refill_return_tail && !r.oversize_counted &&
             !r.try_return_locked);
    sl_slub_rules_for(V71, &r);
    SL_CHECK(r.relock_trylock && !r.refill_return_tail && !r.oversize_counted);
    sl_slub_rules_for(V72, &r);
    SL_CHECK(r.relock_trylock && r.refill_return_tail && r.oversize_counted && !r.try_return_locked);
    sl_slub_rules_for(V73, &r);
    SL_CHECK(r.refill_return_tail && r.try_return_locked && r.era == SL_SLUB_ERA_SHEAVES);
    char notice[160];
    SL_CHECK(!sl_slub_kversion_notice(V73, notice, sizeof notice));
    SL_CHECK(!sl_slub_kversion_notice((sl_slub_kversion){6, 18}, notice, sizeof notice));
    sl_slub_kversion v;
    SL_REQUIRE(sl_slub_kversion_parse("7.5", &v, NULL) == SL_OK);
    sl_slub_rules_for(v, &r);
    SL_CHECK(r.version.major == 7 && r.version.minor == 5 && r.follows.major == 7 && r.follows.minor == 3);
    SL_CHECK(r.try_return_locked);
    SL_CHECK(sl_slub_kversion_notice(v, notice, sizeof notice));
    SL_CHECK(strstr(notice, "7.5 is newer than the newest kernel the model follows (7.3)") != NULL);
    SL_CHECK(strstr(notice, "gets 7.3's rules") != NULL);
}

/*
 * Allocates every object the zone can give (into *objs, which the caller
 * frees with free()); returns how many.  Afterwards every slab is full and
 * the page allocator has nothing left.
 */
static unsigned exhaust(world *w, unsigned cpu, void ***objs)
{
    unsigned n = 0, cap = 1024;
    void **v = malloc(cap * sizeof *v);
    for (;;) {
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        if (!(v[n] = world_alloc(w, cpu)))
            break;
        n++;
    }
    *objs = v;
    return n;
}

/* Frees k objects to their slabs (through the sheaves, then a flush), leaving k free objects on slabs. */
static void free_to_slabs(world *w, unsigned cpu, void **objs, unsigned k)
{
    for (unsigned i = 0; i < k; i++)
        SL_CHECK_EQ(world_free(w, cpu, objs[i]), SL_OK);
    SL_CHECK_EQ(sl_slub_flush_cpu(w->s, cpu), SL_OK);
}

/*
 * A refill that comes up short on the allocation path: the objects it got
 * stay in the sheaf and are counted (SHEAF_REFILL), then the sheaf is
 * flushed (SHEAF_FLUSH) and freed, and the allocation takes the slab path.
 */
static void test_short_refill_alloc_path(void)
{
    const sl_slub_kversion vs[] = {V70, V73};
    for (unsigned i = 0; i < 2; i++) {
        world w;
        SL_REQUIRE(world_open_version(&w, 1, vs[i], 8, 0, NULL, 1) == SL_OK);
        void **objs;
        unsigned n = exhaust(&w, 0, &objs);
        SL_REQUIRE(n > 16);
        free_to_slabs(&w, 0, objs, 3); /* 3 free objects on slabs, no page left */
        uint64_t refill = ST(&w, SHEAF_REFILL), flush = ST(&w, SHEAF_FLUSH), freed = ST(&w, SHEAF_FREE);
        uint64_t slow = ST(&w, ALLOC_SLOWPATH);
        void *o = world_alloc(&w, 0);
        SL_CHECK(o != NULL);
        SL_CHECK_EQ(ST(&w, SHEAF_REFILL), refill + 3); /* counted as the kernel's stat_add(SHEAF_REFILL, filled) */
        SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), flush + 3);   /* sheaf_flush_unused */
        SL_CHECK_EQ(ST(&w, SHEAF_FREE), freed + 1);    /* free_empty_sheaf */
        SL_CHECK_EQ(ST(&w, ALLOC_SLOWPATH), slow + 1); /* then ___slab_alloc */
        check_valid(&w);
        objs[0] = o;
        for (unsigned k = 0; k < n; k++)
            if (k == 0 || k >= 3)
                world_free(&w, 0, objs[k]);
        free(objs);
        world_close(&w);
    }
}

/*
 * kmem_cache_refill_sheaf that comes up short: -ENOMEM, and the objects it
 * got stay in the caller's sheaf (the model used to give them back).
 */
static void test_short_refill_prefilled_sheaf(void)
{
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 8, 0, NULL, 1) == SL_OK);
    sl_slub_sheaf *sheaf;
    SL_REQUIRE(sl_slub_prefill_sheaf(w.s, 0, 8, &sheaf) == SL_OK);
    void *held[8];
    for (unsigned k = 0; k < 8; k++)
        SL_REQUIRE(sl_slub_alloc_from_sheaf(w.s, 0, sheaf, &held[k]) == SL_OK);
    void **objs;
    unsigned n = exhaust(&w, 0, &objs);
    free_to_slabs(&w, 0, objs, 3);
    uint64_t refill = ST(&w, SHEAF_REFILL);
    SL_CHECK_EQ(sl_slub_refill_sheaf(w.s, 0, &sheaf, 8), SL_ENOMEM);
    SL_CHECK_EQ(sl_slub_sheaf_size(sheaf), 3);
    SL_CHECK_EQ(ST(&w, SHEAF_REFILL), refill + 3);
    check_valid(&w);
    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, sheaf), SL_OK);
    for (unsigned k = 3; k < n; k++)
        world_free(&w, 0, objs[k]);
    for (unsigned k = 0; k < 8; k++)
        world_free(&w, 0, held[k]);
    free(objs);
    check_valid(&w);
    world_close(&w);
}

/*
 * kmem_cache_prefill_sheaf on a cache whose sheaves are off (a debug cache:
 * capacity 0) hands out an oversize sheaf, filled object by object through
 * the debug path; 7.2 counts it in SHEAF_ALLOC and SHEAF_FREE, 7.0 does not.
 */
static void test_prefill_with_sheaves_off(void)
{
    const sl_slub_kversion vs[] = {V70, V72};
    for (unsigned i = 0; i < 2; i++) {
        sl_page_zone z;
        SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
        sl_slub_config cfg = {.object_size = 64, .flags = SL_SLUB_CONSISTENCY_CHECKS | SL_SLUB_STORE_USER, .seed = 3};
        cfg.kernel.version = vs[i];
        sl_slub_cache *s;
        SL_REQUIRE(sl_slub_cache_create(&z, NULL, 1, &cfg, &s) == SL_OK);
        SL_CHECK_EQ(sl_slub_cache_sheaf_capacity(s), 0);
        sl_slub_sheaf *sheaf;
        SL_REQUIRE(sl_slub_prefill_sheaf(s, 0, 5, &sheaf) == SL_OK);
        SL_CHECK_EQ(sl_slub_sheaf_size(sheaf), 5);
        SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_SHEAF_PREFILL_OVERSIZE), 1);
        SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_SHEAF_ALLOC), i ? 1u : 0u);
        void *o;
        SL_REQUIRE(sl_slub_alloc_from_sheaf(s, 0, sheaf, &o) == SL_OK);
        SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
        SL_CHECK_EQ(sl_slub_return_sheaf(s, 0, sheaf), SL_OK);
        SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_SHEAF_FREE), i ? 1u : 0u);
        SL_CHECK_EQ(sl_slub_free(s, 0, o), SL_OK);
        SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
        SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);
        sl_page_zone_destroy(&z);
    }
}

/*
 * kfree_rcu's objects that found no rcu sheaf (here: no sheaf can be
 * allocated) go through kfree_bulk after the grace period, straight to their
 * slabs: never onto the CPU's sheaves.
 */
static void test_kfree_rcu_waiters_bypass_sheaves(void)
{
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 8, 1, NULL, 4) == SL_OK); /* the main sheaf is the only one */
    void *o[4];
    for (int i = 0; i < 4; i++)
        SL_REQUIRE((o[i] = world_alloc(&w, 0)));
    for (int i = 0; i < 4; i++)
        SL_CHECK_EQ(sl_slub_kfree_rcu(w.s, 0, o[i]), SL_OK);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF_FAIL), 4);
    uint32_t main_before = w.sh->pcs[0].main->size;
    uint64_t pcs = ST(&w, FREE_PCS), slow = ST(&w, FREE_SLOWPATH);
    SL_CHECK_EQ(sl_slub_rcu_grace_period(w.s, 0), 4);
    SL_CHECK_EQ(w.sh->pcs[0].main->size, main_before);
    SL_CHECK_EQ(ST(&w, FREE_PCS), pcs);
    SL_CHECK_EQ(ST(&w, FREE_SLOWPATH), slow + 4);
    check_valid(&w);
    world_close(&w);
}

/* calculate_sheaf_capacity gives the boot caches and kmemleak's none (7.0 on), in the model and in compare. */
static void test_caches_without_sheaves(void)
{
    SL_CHECK_EQ(sl_slub_known_flags("kmem_cache"), (uint32_t)SL_SLUB_NO_SHEAVES);
    SL_CHECK_EQ(sl_slub_known_flags("kmem_cache_node"), (uint32_t)SL_SLUB_NO_SHEAVES);
    SL_CHECK_EQ(sl_slub_known_flags("kmemleak_object"), (uint32_t)SL_SLUB_NO_SHEAVES);
    SL_CHECK_EQ(sl_slub_known_flags("dentry"), 0u);
    SL_CHECK_EQ(sl_slub_sheaf_capacity(V70, 256, SL_SLUB_NO_SHEAVES, 0), 0u);
    SL_CHECK_EQ(sl_slub_sheaf_capacity(V70, 256, 0, 0), 28u); /* 26, made a kmalloc bucket */
    sl_slub_kcache k;
    sl_slub_kcache_init(&k, "kmem_cache_node");
    k.object_size = 64;
    k.kernel[SL_SLUB_KFIG_SHEAF_CAPACITY] = 0;
    k.has[SL_SLUB_KFIG_SHEAF_CAPACITY] = true;
    sl_slub_kernel kern = {.version = V73};
    sl_slub_geometry g;
    uint32_t model[SL_SLUB_NR_KFIGS];
    SL_CHECK_EQ(sl_slub_kcache_compare(&k, 4, &kern, &g, model), 1);
    SL_CHECK_EQ(model[SL_SLUB_KFIG_SHEAF_CAPACITY], 0u);
    /* A cache created with the flag keeps the bootstrap sheaf: every operation takes the slab path. */
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
    sl_slub_config cfg = {.object_size = 64, .flags = SL_SLUB_NO_SHEAVES};
    cfg.kernel.version = V73;
    sl_slub_cache *s;
    SL_REQUIRE(sl_slub_cache_create(&z, NULL, 1, &cfg, &s) == SL_OK);
    SL_CHECK_EQ(sl_slub_cache_sheaf_capacity(s), 0);
    void *o;
    SL_REQUIRE(sl_slub_alloc(s, 0, &o) == SL_OK);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_SLOWPATH), 1);
    SL_CHECK_EQ(sl_slub_free(s, 0, o), SL_OK);
    SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);
    sl_page_zone_destroy(&z);
}

/* A PREEMPT_RT 7.x kernel: the cache is created, sheaves work, kfree_rcu keeps off them. */
static void test_preempt_rt_7x(void)
{
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
    sl_slub_config cfg = {.object_size = 64, .fastpath = SL_SLUB_FP_RT, .track = 1};
    cfg.kernel.version = V73;
    sl_slub_cache *s;
    SL_REQUIRE(sl_slub_cache_create(&z, NULL, 2, &cfg, &s) == SL_OK);
    void *o[3];
    for (int i = 0; i < 3; i++)
        SL_REQUIRE(sl_slub_alloc(s, 0, &o[i]) == SL_OK);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_PCS), 3); /* the first refilled main, then popped */
    SL_CHECK_EQ(sl_slub_free(s, 0, o[0]), SL_OK);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_PCS), 1);
    SL_CHECK_EQ(sl_slub_kfree_rcu(s, 0, o[1]), SL_OK);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_RCU_SHEAF) + sl_slub_stat_get(s, -1, SL_SLUB_FREE_RCU_SHEAF_FAIL),
                0);
    sl_slub_sheaves_info info;
    sl_slub_sheaves_info_get(s, &info);
    SL_CHECK_EQ(info.rcu_waiting, 1);
    SL_CHECK_EQ(sl_slub_rcu_grace_period(s, 0), 1);
    SL_CHECK_EQ(sl_slub_free(s, 1, o[2]), SL_OK);
    SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
    SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);
    /* Still no CPU-slab variant on 7.x. */
    cfg.fastpath = SL_SLUB_FP_PLAIN;
    SL_CHECK_EQ(sl_slub_cache_create(&z, NULL, 2, &cfg, &s), SL_EINVAL);
    sl_page_zone_destroy(&z);
}

/*
 * Four full slabs A..D, then 5 objects of each freed to them: the node
 * partial list is A, B, C, D with 5 free objects each, nothing in sheaves.
 */
static void four_partial_slabs(world *w, void ***objs_out, unsigned *n_out)
{
    void **objs = malloc(256 * sizeof *objs);
    *objs_out = objs;
    *n_out = 0;
    for (unsigned k = 0; k < 256; k++)
        SL_REQUIRE((objs[k] = world_alloc(w, 0)));
    SL_REQUIRE(sli_get_node(w->s, 0)->nr_partial == 0);
    /* objects come from slabs in order: 64 per slab, refilled 8 at a time */
    for (unsigned slab = 0; slab < 4; slab++)
        free_to_slabs(w, 0, objs + slab * 64, 5);
    SL_REQUIRE(sli_get_node(w->s, 0)->nr_partial == 4);
    *objs_out = objs;
    *n_out = 256;
}

/* The slab of obj in w's cache. */
static sli_slub_slab *slab_of(world *w, void *obj) { return sli_slab_of(w->s, obj); }

/*
 * Refill from partial slabs, 7.0/7.1 against 7.2/7.3: A's 5 and 3 of B's;
 * B's surplus of 2 goes back by __slab_free (7.0: FREE_ADD_PARTIAL, B to the
 * tail as a slab that was full) or by one optimistic CAS with B kept and
 * spliced back to the tail (7.2: no counter; 7.3: under list_lock).
 */
static void test_refill_from_partial_per_era(void)
{
    const sl_slub_kversion vs[] = {V70, V71, V72, V73};
    for (unsigned i = 0; i < 4; i++) {
        world w;
        SL_REQUIRE(world_open_version(&w, 1, vs[i], 8, 0, NULL, 4) == SL_OK);
        void **objs = NULL;
        unsigned n = 0;
        four_partial_slabs(&w, &objs, &n);
        sli_slub_slab *a = slab_of(&w, objs[5]), *b = slab_of(&w, objs[64 + 5]), *c = slab_of(&w, objs[128 + 5]),
                      *d = slab_of(&w, objs[192 + 5]);
        SL_REQUIRE(sli_get_node(w.s, 0)->partial_head == a);
        uint64_t add = ST(&w, FREE_ADD_PARTIAL), locks = ST(&w, MODEL_LIST_LOCK), refill = ST(&w, SHEAF_REFILL);
        void *o = world_alloc(&w, 0); /* main empty, barn empty: a new sheaf refilled from A and B */
        SL_REQUIRE(o);
        SL_CHECK_EQ(ST(&w, SHEAF_REFILL), refill + 8);
        /* A emptied and off the list; the list is C, D, B with B holding its 2 surplus objects. */
        SL_CHECK_EQ(sli_inuse(sl_dw_read(&a->fc).hi), 64);
        SL_CHECK(sli_get_node(w.s, 0)->partial_head == c && c->lnext == d && d->lnext == b && !b->lnext);
        SL_CHECK_EQ(sli_inuse(sl_dw_read(&b->fc).hi), 62);
        bool v72 = i >= 2, v73 = i == 3;
        SL_CHECK_EQ(ST(&w, FREE_ADD_PARTIAL), add + (v72 ? 0 : 1));
        /* list_lock: get_partial_node_bulk, then __slab_free (7.0) or the splice (7.2), plus the CAS's (7.3) */
        SL_CHECK_EQ(ST(&w, MODEL_LIST_LOCK), locks + 2 + (v73 ? 1 : 0));
        check_valid(&w);
        world_free(&w, 0, o);
        for (unsigned k = 0; k < n; k++)
            if (k % 64 >= 5)
                world_free(&w, 0, objs[k]);
        free(objs);
        world_close(&w);
    }
}

/* 7.1's relock: a hook holds the CPU's lock through the refill (a preempted PREEMPT_RT task). */
typedef struct hold_ctx {
    world *w;
    unsigned fired;
} hold_ctx;

static void hold_lock_hook(sl_trace *tr, unsigned cpu, unsigned point, unsigned line, const void *ctx, void *user)
{
    hold_ctx *h = user;
    (void)tr, (void)line, (void)ctx;
    if (point != SL_SLUB_PP_SHEAF_REFILL || h->fired)
        return;
    h->fired = 1;
    atomic_store_explicit(&h->w->sh->pcs[cpu].lock, 1, memory_order_relaxed);
}

static void test_relock_trylock_71(void)
{
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 1, 4096) == SL_OK);
    tr.enabled = true;
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V71, 8, 0, &tr, 4) == SL_OK);
    hold_ctx h = {.w = &w};
    sl_trace_set_preempt_hook(&tr, hold_lock_hook, &h);
    uint64_t put = ST(&w, BARN_PUT), slow = ST(&w, ALLOC_SLOWPATH);
    void *o = world_alloc(&w, 0);
    SL_CHECK_EQ(h.fired, 1);
    SL_CHECK(o != NULL);
    SL_CHECK_EQ(ST(&w, BARN_PUT), put + 1);        /* the full sheaf went to the barn */
    SL_CHECK_EQ(ST(&w, ALLOC_SLOWPATH), slow + 1); /* and the allocation took the slab path */
    SL_CHECK_EQ(w.sh->barn[0].nr_full, 1);
    sl_trace_set_preempt_hook(&tr, NULL, NULL);
    atomic_store_explicit(&w.sh->pcs[0].lock, 0, memory_order_relaxed); /* the other task lets go */
    check_valid(&w);
    void *p = world_alloc(&w, 0); /* now main trades for the barn's full sheaf */
    SL_CHECK(p != NULL);
    SL_CHECK_EQ(ST(&w, BARN_GET), 1);
    world_free(&w, 0, o);
    world_free(&w, 0, p);
    check_valid(&w);
    world_close(&w);
    sl_trace_destroy(&tr);
}

/* slub_cpu_dead and kvfree_rcu_barrier. */
static void test_cpu_dead_and_rcu_barrier(void)
{
    world w;
    SL_REQUIRE(world_open_version(&w, 2, V73, 8, 0, NULL, 4) == SL_OK);
    void *o[12];
    for (int i = 0; i < 12; i++)
        SL_REQUIRE((o[i] = world_alloc(&w, 1)));
    for (int i = 0; i < 10; i++)
        SL_CHECK_EQ(world_free(&w, 1, o[i]), SL_OK); /* main full, then a spare */
    SL_CHECK_EQ(sl_slub_kfree_rcu(w.s, 1, o[10]), SL_OK);
    SL_REQUIRE(w.sh->pcs[1].rcu_free && w.sh->pcs[1].spare);
    unsigned held = w.sh->pcs[1].main->size + w.sh->pcs[1].spare->size;
    uint64_t flush = ST(&w, SHEAF_FLUSH);
    SL_CHECK_EQ(sl_slub_cpu_dead(w.s, 1), (int)held);
    SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), flush + held);
    SL_CHECK(!w.sh->pcs[1].spare && !w.sh->pcs[1].rcu_free && w.sh->pcs[1].main->size == 0);
    check_valid(&w);
    /* kvfree_rcu_barrier: an rcu_free sheaf on CPU 0 and the one the dead CPU queued are both freed. */
    SL_CHECK_EQ(sl_slub_kfree_rcu(w.s, 0, o[11]), SL_OK);
    SL_CHECK_EQ(sl_slub_rcu_barrier(w.s), 2);
    sl_slub_sheaves_info info;
    sl_slub_sheaves_info_get(w.s, &info);
    SL_CHECK_EQ(info.rcu_waiting, 0);
    check_valid(&w);
    world_drain(&w);
    world_close(&w);
}

/* ---- the allocation's context (GFP), kmalloc_nolock, kfree_nolock ------------- */

static const sl_slub_kversion V617 = {6, 17}, V618 = {6, 18};

/* The counters one allocation moved, in context gfp, on a cache whose sheaves are all empty. */
typedef struct alloc_delta {
    uint64_t pcs, refill, barn_fail, slow, new_slab;
} alloc_delta;

static alloc_delta first_alloc(sl_slub_kversion v, sl_slub_gfp gfp)
{
    world w;
    alloc_delta none = {~0ull, ~0ull, ~0ull, ~0ull, ~0ull};
    if (world_open_version(&w, 1, v, 8, 0, NULL, 4) != SL_OK) {
        SL_CHECK(!"world_open_version");
        return none;
    }
    void *o = NULL;
    SL_CHECK_EQ(sl_slub_alloc_gfp(w.s, 0, gfp, &o), SL_OK);
    SL_CHECK(o != NULL);
    alloc_delta d = {ST(&w, ALLOC_PCS), ST(&w, SHEAF_REFILL), ST(&w, BARN_GET_FAIL), ST(&w, ALLOC_SLOWPATH),
                     ST(&w, ALLOC_SLAB)};
    check_valid(&w);
    SL_CHECK_EQ(world_free(&w, 0, o), SL_OK);
    world_drain(&w);
    world_close(&w);
    return d;
}

/*
 * An allocation that finds main, spare and barn without objects: with
 * GFP_KERNEL every sheaf era refills a sheaf; with GFP_ATOMIC or GFP_NOWAIT
 * 6.18 does not (can_alloc = gfpflags_allow_blocking) and takes the slab
 * path, while 7.0 on refill (allow_spin = gfpflags_allow_spinning: 7.0-rc3's
 * fb1091febd66 "mm/slab: allow sheaf refill if blocking is not allowed").
 */
static void test_gfp_context_per_era(void)
{
    const sl_slub_kversion refill_always[] = {V70, V71, V72, V73}, refill_blocking[] = {V618};
    for (unsigned g = SL_SLUB_GFP_KERNEL; g <= SL_SLUB_GFP_NOWAIT; g++) {
        for (unsigned i = 0; i < 4; i++) {
            alloc_delta d = first_alloc(refill_always[i], (sl_slub_gfp)g);
            SL_CHECK_EQ(d.refill, 8);
            SL_CHECK_EQ(d.pcs, 1);
            SL_CHECK_EQ(d.slow, 0);
        }
        for (unsigned i = 0; i < 1; i++) {
            alloc_delta d = first_alloc(refill_blocking[i], (sl_slub_gfp)g);
            SL_CHECK_EQ(d.barn_fail, 1);
            if (g == SL_SLUB_GFP_KERNEL) {
                SL_CHECK_EQ(d.refill, 8);
                SL_CHECK_EQ(d.pcs, 1);
            } else {
                SL_CHECK_EQ(d.refill, 0); /* no sheaf refilled: the slab path */
                SL_CHECK_EQ(d.pcs, 0);
                SL_CHECK_EQ(d.slow, 1);
                SL_CHECK_EQ(d.new_slab, 1);
            }
        }
    }
    /* Before 6.18 the context changes nothing the model shows. */
    alloc_delta k = first_alloc(V617, SL_SLUB_GFP_KERNEL), at = first_alloc(V617, SL_SLUB_GFP_ATOMIC);
    SL_CHECK(k.slow == at.slow && k.new_slab == at.new_slab && at.pcs == 0);
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 8, 0, NULL, 4) == SL_OK);
    void *o = &w;
    SL_CHECK_EQ(sl_slub_alloc_gfp(w.s, 0, (sl_slub_gfp)7, &o), SL_EINVAL);
    SL_CHECK(o == NULL);
    world_close(&w);
}

/*
 * A non-blocking allocation on 6.18 still takes a full sheaf from the barn
 * (BARN_GET): only the refill depends on the context.
 */
static void test_gfp_atomic_takes_barn_sheaf(void)
{
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V618, 4, 0, NULL, 4) == SL_OK);
    void *objs[16];
    for (unsigned i = 0; i < 16; i++)
        SL_REQUIRE((objs[i] = world_alloc(&w, 0)) != NULL);
    for (unsigned i = 0; i < 16; i++)
        SL_CHECK_EQ(world_free(&w, 0, objs[i]), SL_OK);
    SL_REQUIRE(w.sh->barn[0].nr_full > 0);
    /* empty main and spare so the next allocation must look in the barn */
    while (w.sh->pcs[0].main->size || (w.sh->pcs[0].spare && w.sh->pcs[0].spare->size)) {
        void *o;
        SL_REQUIRE(sl_slub_alloc_gfp(w.s, 0, SL_SLUB_GFP_KERNEL, &o) == SL_OK);
    }
    uint64_t get = ST(&w, BARN_GET), refill = ST(&w, SHEAF_REFILL), slow = ST(&w, ALLOC_SLOWPATH);
    void *o;
    SL_CHECK_EQ(sl_slub_alloc_gfp(w.s, 0, SL_SLUB_GFP_ATOMIC, &o), SL_OK);
    SL_CHECK_EQ(ST(&w, BARN_GET), get + 1);
    SL_CHECK_EQ(ST(&w, SHEAF_REFILL), refill);
    SL_CHECK_EQ(ST(&w, ALLOC_SLOWPATH), slow);
    check_valid(&w);
    world_drain(&w);
    world_close(&w);
}

/*
 * What kmem_cache_alloc_bulk, kmem_cache_prefill_sheaf and
 * kmem_cache_refill_sheaf do, recorded step by step: every counter and
 * every object handed out (as slab pfn and index), so that two runs in
 * different contexts can be compared.
 */
typedef struct bulk_run {
    uint64_t stats[6][SL_SLUB_NR_STATS];
    uint32_t objs[40][2];
    unsigned nobjs;
    int rc[6];
} bulk_run;

static void record_objs(world *w, bulk_run *r, void **p, unsigned n)
{
    for (unsigned i = 0; i < n && r->nobjs < 40; i++, r->nobjs++)
        SL_CHECK(sl_slub_object_index(w->s, p[i], &r->objs[r->nobjs][0], &r->objs[r->nobjs][1]));
}

static void record_stats(world *w, bulk_run *r, unsigned step)
{
    for (unsigned i = 0; i < SL_SLUB_NR_STATS; i++)
        r->stats[step][i] = sl_slub_stat_get(w->s, -1, i);
}

/*
 * On kernel v, every call in context gfp: a bulk allocation of 20 on an
 * empty main sheaf, 20 frees, a bulk allocation of 12 from the sheaves and
 * the barn, a prefill of 6 refilled to 8 (2 taken from it, then returned),
 * an oversize prefill of 12 returned.
 */
static bool bulk_prefill_run(sl_slub_kversion v, sl_slub_gfp gfp, bulk_run *r)
{
    memset(r, 0, sizeof *r);
    world w;
    if (world_open_version(&w, 1, v, 8, 0, NULL, 4) != SL_OK)
        return false;
    void *p[20];
    r->rc[0] = sl_slub_alloc_bulk_gfp(w.s, 0, gfp, 20, p);
    record_objs(&w, r, p, 20);
    record_stats(&w, r, 0);
    for (unsigned i = 0; i < 20; i++)
        SL_CHECK_EQ(world_free(&w, 0, p[i]), SL_OK);
    record_stats(&w, r, 1);
    r->rc[2] = sl_slub_alloc_bulk_gfp(w.s, 0, gfp, 12, p);
    record_objs(&w, r, p, 12);
    record_stats(&w, r, 2);
    sl_slub_sheaf *sheaf = NULL;
    r->rc[3] = sl_slub_prefill_sheaf_gfp(w.s, 0, gfp, 6, &sheaf);
    if (sheaf) {
        r->rc[3] |= sl_slub_refill_sheaf_gfp(w.s, 0, gfp, &sheaf, 8) << 8;
        void *o[2];
        for (unsigned i = 0; i < 2; i++)
            SL_CHECK_EQ(sl_slub_alloc_from_sheaf(w.s, 0, sheaf, &o[i]), SL_OK);
        record_objs(&w, r, o, 2);
        SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, sheaf), SL_OK);
    }
    record_stats(&w, r, 3);
    sheaf = NULL;
    r->rc[4] = sl_slub_prefill_sheaf_gfp(w.s, 0, gfp, 12, &sheaf);
    if (sheaf)
        SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, sheaf), SL_OK);
    record_stats(&w, r, 4);
    check_valid(&w);
    world_drain(&w);
    world_close(&w);
    return true;
}

/*
 * kmem_cache_alloc_bulk, kmem_cache_prefill_sheaf and kmem_cache_refill_sheaf
 * in GFP_ATOMIC and GFP_NOWAIT context take exactly the GFP_KERNEL path in
 * 6.18, 7.0, 7.1 and 7.3: their gfp only reaches the allocations beneath
 * them (alloc_from_pcs_bulk never refills a sheaf; its barn trylock of 7.0
 * to 7.2 is for flags that may not spin), which the model's page allocator
 * makes alike.  An allocation of one object in the same context does take
 * another path on 6.18 (test_gfp_context_per_era).  An unknown
 * context is refused before anything is done.
 */
static void test_bulk_and_prefill_context_per_era(void)
{
    const sl_slub_kversion vs[] = {V618, V70, V71, V73};
    for (unsigned i = 0; i < 4; i++) {
        bulk_run *k = malloc(sizeof *k), *nb = malloc(sizeof *nb);
        SL_REQUIRE(k && nb && bulk_prefill_run(vs[i], SL_SLUB_GFP_KERNEL, k));
        SL_CHECK_EQ(k->rc[0], 20);
        SL_CHECK_EQ(k->rc[2], 12);
        SL_CHECK_EQ(k->rc[3], SL_OK);
        SL_CHECK_EQ(k->rc[4], SL_OK);
        SL_CHECK_EQ(k->nobjs, 34);
        /* The first bulk allocation found main empty and refilled nothing, in any context. */
        SL_CHECK_EQ(k->stats[0][SL_SLUB_SHEAF_REFILL], 0);
        SL_CHECK(k->stats[4][SL_SLUB_SHEAF_PREFILL_OVERSIZE] == 1);
        for (sl_slub_gfp g = SL_SLUB_GFP_ATOMIC; g <= SL_SLUB_GFP_NOWAIT; g++) {
            SL_REQUIRE(bulk_prefill_run(vs[i], g, nb));
            SL_CHECK(!memcmp(k->rc, nb->rc, sizeof k->rc));
            SL_CHECK_EQ(nb->nobjs, k->nobjs);
            SL_CHECK(!memcmp(k->objs, nb->objs, sizeof k->objs));
            for (unsigned step = 0; step < 5; step++)
                for (unsigned st = 0; st < SL_SLUB_NR_STATS; st++)
                    if (k->stats[step][st] != nb->stats[step][st]) {
                        fprintf(stderr, "  %u.%u gfp %d step %u: %s %llu != %llu\n", vs[i].major, vs[i].minor, g, step,
                                sl_slub_stat_name(st), (unsigned long long)nb->stats[step][st],
                                (unsigned long long)k->stats[step][st]);
                        SL_CHECK(false);
                    }
        }
        free(k);
        free(nb);
    }
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 8, 0, NULL, 4) == SL_OK);
    void *p[2];
    sl_slub_sheaf *sheaf = (sl_slub_sheaf *)&w;
    SL_CHECK_EQ(sl_slub_alloc_bulk_gfp(w.s, 0, (sl_slub_gfp)3, 2, p), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_prefill_sheaf_gfp(w.s, 0, (sl_slub_gfp)9, 4, &sheaf), SL_EINVAL);
    SL_CHECK(sheaf == NULL);
    SL_CHECK_EQ(ST(&w, BULK_ALLOC_CALLS), 0);
    SL_CHECK_EQ(ST(&w, SHEAF_PREFILL_SLOW) + ST(&w, SHEAF_PREFILL_FAST), 0);
    SL_REQUIRE(sl_slub_prefill_sheaf_gfp(w.s, 0, SL_SLUB_GFP_NOWAIT, 4, &sheaf) == SL_OK);
    SL_CHECK_EQ(sl_slub_refill_sheaf_gfp(w.s, 0, (sl_slub_gfp)-1, &sheaf, 8), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_sheaf_size(sheaf), 8); /* prefilled to the capacity, as the kernel does */
    SL_CHECK_EQ(sl_slub_return_sheaf(w.s, 0, sheaf), SL_OK);
    check_valid(&w);
    world_close(&w);
}

/*
 * kmalloc_nolock: none before 6.18; 6.18 never uses the sheaves; 7.x tries
 * them (BARN_GET_FAIL) but never refills, then ___slab_alloc.
 */
static void test_kmalloc_nolock_per_era(void)
{
    world w;
    void *o = &w;
    SL_REQUIRE(world_open_version(&w, 1, V617, 0, 0, NULL, 4) == SL_OK);
    SL_CHECK_EQ(sl_slub_kmalloc_nolock(w.s, 0, &o), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_kfree_nolock(w.s, 0, &w), SL_EINVAL);
    world_close(&w);

    SL_REQUIRE(world_open_version(&w, 1, V618, 8, 0, NULL, 4) == SL_OK);
    SL_CHECK_EQ(sl_slub_kmalloc_nolock(w.s, 0, &o), SL_OK);
    SL_CHECK(o != NULL);
    SL_CHECK_EQ(ST(&w, ALLOC_PCS), 0);
    SL_CHECK_EQ(ST(&w, BARN_GET_FAIL), 0); /* alloc_from_pcs not called at all */
    SL_CHECK_EQ(ST(&w, ALLOC_SLOWPATH), 1);
    void *o2;
    SL_CHECK_EQ(sl_slub_kmalloc_nolock(w.s, 0, &o2), SL_OK); /* the CPU slab's fast path */
    SL_CHECK_EQ(ST(&w, ALLOC_FASTPATH), 1);
    SL_CHECK_EQ(sl_slub_kfree_nolock(w.s, 0, o2), SL_OK);
    SL_CHECK_EQ(sl_slub_kfree_nolock(w.s, 0, o), SL_OK);
    SL_CHECK_EQ(ST(&w, FREE_FASTPATH), 2); /* into this CPU's slab: do_slab_free's fast path, no sheaf */
    SL_CHECK_EQ(ST(&w, FREE_PCS), 0);
    check_valid(&w);
    world_close(&w);

    const sl_slub_kversion vs[] = {V70, V73};
    for (unsigned i = 0; i < 2; i++) {
        SL_REQUIRE(world_open_version(&w, 1, vs[i], 8, 0, NULL, 4) == SL_OK);
        SL_CHECK_EQ(sl_slub_kmalloc_nolock(w.s, 0, &o), SL_OK);
        SL_CHECK_EQ(ST(&w, BARN_GET_FAIL), 1);
        SL_CHECK_EQ(ST(&w, SHEAF_REFILL), 0);
        SL_CHECK_EQ(ST(&w, ALLOC_SLOWPATH), 1);
        SL_CHECK_EQ(ST(&w, ALLOC_SLAB), 1);
        /* kfree_nolock: main has room, so free_to_pcs takes it */
        SL_CHECK_EQ(sl_slub_kfree_nolock(w.s, 0, o), SL_OK);
        SL_CHECK_EQ(ST(&w, FREE_PCS), 1);
        check_valid(&w);
        world_drain(&w);
        world_close(&w);
    }
}

/*
 * kmalloc_nolock when another CPU holds the node's list_lock (7.x): the
 * partial slab cannot be taken and a new slab cannot be put on the list,
 * so the new slab goes back and the call fails without waiting; with the
 * lock free it takes the partial slab's object.
 */
static void test_kmalloc_nolock_list_lock_busy(void)
{
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 8, 0, NULL, 4) == SL_OK);
    void *objs[100];
    for (unsigned i = 0; i < 100; i++)
        SL_REQUIRE((objs[i] = world_alloc(&w, 0)) != NULL);
    free_to_slabs(&w, 0, objs, 1); /* one free object on a slab: a node partial slab */
    SL_REQUIRE(sl_slub_nr_partial(w.s) >= 1);
    uint32_t slabs = sl_slub_nr_slabs(w.s);
    uint64_t slabs_had = ST(&w, ALLOC_SLAB);
    sl_spin_lock(&sli_get_node(w.s, 0)->list_lock); /* "another CPU" holds it */
    void *o = &w;
    SL_CHECK_EQ(sl_slub_kmalloc_nolock(w.s, 0, &o), SL_ENOMEM);
    SL_CHECK(o == NULL);
    sl_spin_unlock(&sli_get_node(w.s, 0)->list_lock);
    SL_CHECK_EQ(ST(&w, ALLOC_SLAB), slabs_had + 1); /* a slab was had ... */
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), slabs);      /* ... and given back */
    check_valid(&w);
    uint64_t new_slabs = ST(&w, ALLOC_SLAB);
    SL_CHECK_EQ(sl_slub_kmalloc_nolock(w.s, 0, &o), SL_OK);
    SL_CHECK(o != NULL);
    SL_CHECK_EQ(ST(&w, ALLOC_SLAB), new_slabs); /* from the partial slab, no new one */
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), slabs);
    SL_CHECK_EQ(world_free(&w, 0, o), SL_OK);
    for (unsigned i = 1; i < 100; i++)
        SL_CHECK_EQ(world_free(&w, 0, objs[i]), SL_OK);
    check_valid(&w);
    world_drain(&w);
    world_close(&w);
}

/*
 * kfree_nolock when main and spare are full (7.x): no sheaf is allocated or
 * flushed (a kfree would allocate one): the object is deferred, validate
 * counts it, and the CPU's irq_work frees it to its slab (FREE_SLOWPATH).
 * A barn lock held elsewhere makes kmalloc_nolock skip the barn's full sheaf.
 */
static void test_kfree_nolock_defers_7x(void)
{
    const sl_slub_kversion vs[] = {V70, V71, V73};
    for (unsigned i = 0; i < 3; i++) {
        world w;
        SL_REQUIRE(world_open_version(&w, 1, vs[i], 4, 0, NULL, 4) == SL_OK);
        void *objs[32];
        for (unsigned k = 0; k < 32; k++)
            SL_REQUIRE((objs[k] = world_alloc(&w, 0)) != NULL);
        sli_pcs *pcs = &w.sh->pcs[0];
        unsigned k = 0;
        while (!(pcs->main->size == 4 && pcs->spare && pcs->spare->size == 4)) {
            SL_REQUIRE(k < 31);
            SL_CHECK_EQ(world_free(&w, 0, objs[k++]), SL_OK);
        }
        uint64_t sheaf_alloc = ST(&w, SHEAF_ALLOC), flush = ST(&w, SHEAF_FLUSH), slow = ST(&w, FREE_SLOWPATH);
        SL_CHECK_EQ(sl_slub_kfree_nolock(w.s, 0, objs[k]), SL_OK);
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), sheaf_alloc);
        SL_CHECK_EQ(ST(&w, SHEAF_FLUSH), flush);
        SL_CHECK_EQ(ST(&w, FREE_SLOWPATH), slow);
        SL_CHECK(w.s->cpu[0].defer_free == objs[k]);
        check_valid(&w);
        SL_CHECK_EQ(sl_slub_irq_work(w.s, 0), 1);
        SL_CHECK_EQ(sl_slub_irq_work(w.s, 0), 0);
        SL_CHECK_EQ(ST(&w, FREE_SLOWPATH), slow + 1);
        check_valid(&w);
        /* the same free by kfree allocates an empty sheaf (7.x __pcs_replace_full_main) */
        SL_CHECK_EQ(world_free(&w, 0, objs[k + 1]), SL_OK);
        SL_CHECK_EQ(ST(&w, SHEAF_ALLOC), sheaf_alloc + 1);
        for (unsigned j = k + 2; j < 32; j++)
            SL_CHECK_EQ(world_free(&w, 0, objs[j]), SL_OK);
        /* a full sheaf in the barn, but its lock is held elsewhere */
        while (pcs->main->size || (pcs->spare && pcs->spare->size)) {
            void *o;
            SL_REQUIRE(sl_slub_alloc(w.s, 0, &o) == SL_OK);
        }
        SL_REQUIRE(w.sh->barn[0].nr_full > 0);
        uint64_t get = ST(&w, BARN_GET), fail = ST(&w, BARN_GET_FAIL);
        sl_spin_lock(&w.sh->barn[0].lock);
        void *o;
        SL_CHECK_EQ(sl_slub_kmalloc_nolock(w.s, 0, &o), SL_OK);
        sl_spin_unlock(&w.sh->barn[0].lock);
        SL_CHECK_EQ(ST(&w, BARN_GET), get);
        SL_CHECK_EQ(ST(&w, BARN_GET_FAIL), fail + 1);
        check_valid(&w);
        world_close(&w); /* destroy runs the irq_work first (defer_free_barrier); objects left are leaked */
    }
}

/*
 * kfree_nolock in 6.18: an object of another slab than the CPU's is
 * deferred (its __slab_free might need locks); the irq_work frees it.  On
 * PREEMPT_RT a held local_lock defers even this CPU's slab's object and
 * makes kmalloc_nolock refuse (-EBUSY).
 */
static void test_kfree_nolock_618(void)
{
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V618, 0, 0, NULL, 4) == SL_OK);
    void *objs[100];
    for (unsigned i = 0; i < 100; i++)
        SL_REQUIRE((objs[i] = world_alloc(&w, 0)) != NULL);
    uint64_t slow = ST(&w, FREE_SLOWPATH), fast = ST(&w, FREE_FASTPATH);
    SL_CHECK_EQ(sl_slub_kfree_nolock(w.s, 0, objs[0]), SL_OK); /* the first slab is no longer the CPU's */
    SL_CHECK(w.s->cpu[0].defer_free == objs[0]);
    SL_CHECK_EQ(ST(&w, FREE_SLOWPATH), slow);
    check_valid(&w);
    SL_CHECK_EQ(sl_slub_irq_work(w.s, 0), 1);
    SL_CHECK_EQ(ST(&w, FREE_SLOWPATH), slow + 1);
    SL_CHECK_EQ(sl_slub_kfree_nolock(w.s, 0, objs[99]), SL_OK); /* the CPU slab's: fast path */
    SL_CHECK_EQ(ST(&w, FREE_FASTPATH), fast + 1);
    check_valid(&w);
    for (unsigned i = 1; i < 99; i++)
        SL_CHECK_EQ(world_free(&w, 0, objs[i]), SL_OK);
    world_close(&w);

    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
    sl_slub_config cfg = {.object_size = 64, .track = 1, .fastpath = SL_SLUB_FP_RT};
    cfg.kernel.version = V618;
    sl_slub_cache *s;
    SL_REQUIRE(sl_slub_cache_create(&z, NULL, 1, &cfg, &s) == SL_OK);
    void *a, *b;
    SL_REQUIRE(sl_slub_alloc(s, 0, &a) == SL_OK && sl_slub_alloc(s, 0, &b) == SL_OK);
    sl_spin_lock(&s->cpu[0].lock); /* an interrupted ___slab_alloc holds the CPU slab's local_lock */
    void *o = &z;
    SL_CHECK_EQ(sl_slub_kmalloc_nolock(s, 0, &o), SL_EBUSY);
    SL_CHECK(o == NULL);
    SL_CHECK_EQ(sl_slub_kfree_nolock(s, 0, a), SL_OK);
    SL_CHECK(s->cpu[0].defer_free == a);
    sl_spin_unlock(&s->cpu[0].lock);
    SL_CHECK_EQ(sl_slub_irq_work(s, 0), 1);
    SL_CHECK_EQ(sl_slub_kfree_nolock(s, 0, b), SL_OK);
    SL_CHECK(s->cpu[0].defer_free == NULL);
    char msg[200];
    SL_CHECK_EQ(sl_slub_validate(s, msg, sizeof msg), SL_OK);
    SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);
    sl_page_zone_destroy(&z);
}

/* An "NMI" at a preemption point: kmalloc_nolock (kind 0) or kfree_nolock of obj (kind 1) on the same CPU. */
typedef struct nmi_ctx {
    world *w;
    unsigned point, kind, fired;
    void *obj, *got;
    int rc;
} nmi_ctx;

static void nmi_hook(sl_trace *tr, unsigned cpu, unsigned point, unsigned line, const void *ctx, void *user)
{
    nmi_ctx *n = user;
    (void)tr, (void)line, (void)ctx;
    if (point != n->point || n->fired)
        return;
    n->fired = 1;
    n->rc = n->kind == 0 ? sl_slub_kmalloc_nolock(n->w->s, cpu, &n->got) : sl_slub_kfree_nolock(n->w->s, cpu, n->obj);
}

/*
 * The reason _nolock exists (7.x): called while the same CPU is inside its
 * sheaf section, local_trylock fails; kmalloc_nolock takes ___slab_alloc,
 * kfree_nolock defers the object to the irq_work.
 */
static void test_nolock_inside_sheaf_section(void)
{
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 1, 4096) == SL_OK);
    tr.enabled = true;
    world w;
    SL_REQUIRE(world_open_version(&w, 1, V73, 8, 0, &tr, 4) == SL_OK);
    void *a = world_alloc(&w, 0), *b = world_alloc(&w, 0);
    SL_REQUIRE(a && b);
    nmi_ctx n = {.w = &w, .point = SL_SLUB_PP_SHEAF_ALLOC, .kind = 0};
    sl_trace_set_preempt_hook(&tr, nmi_hook, &n);
    uint64_t slow = ST(&w, ALLOC_SLOWPATH);
    void *c = world_alloc(&w, 0);
    SL_CHECK_EQ(n.fired, 1);
    SL_CHECK_EQ(n.rc, SL_OK);
    SL_CHECK(c && n.got && c != n.got);
    SL_CHECK_EQ(ST(&w, ALLOC_SLOWPATH), slow + 1); /* the handler's, from a slab */
    check_valid(&w);
    n = (nmi_ctx){.w = &w, .point = SL_SLUB_PP_SHEAF_FREE, .kind = 1, .obj = n.got};
    uint64_t free_pcs = ST(&w, FREE_PCS);
    SL_CHECK_EQ(world_free(&w, 0, c), SL_OK);
    SL_CHECK_EQ(n.fired, 1);
    SL_CHECK_EQ(n.rc, SL_OK);
    SL_CHECK_EQ(ST(&w, FREE_PCS), free_pcs + 1); /* only the interrupted free's */
    SL_CHECK(w.s->cpu[0].defer_free == n.obj);
    check_valid(&w);
    sl_trace_set_preempt_hook(&tr, NULL, NULL);
    SL_CHECK_EQ(sl_slub_irq_work(w.s, 0), 1);
    SL_CHECK_EQ(world_free(&w, 0, a), SL_OK);
    SL_CHECK_EQ(world_free(&w, 0, b), SL_OK);
    check_valid(&w);
    world_close(&w);
    sl_trace_destroy(&tr);
}

int main(void)
{
    SL_RUN(test_rules_per_version);
    SL_RUN(test_short_refill_alloc_path);
    SL_RUN(test_short_refill_prefilled_sheaf);
    SL_RUN(test_prefill_with_sheaves_off);
    SL_RUN(test_kfree_rcu_waiters_bypass_sheaves);
    SL_RUN(test_caches_without_sheaves);
    SL_RUN(test_preempt_rt_7x);
    SL_RUN(test_refill_from_partial_per_era);
    SL_RUN(test_relock_trylock_71);
    SL_RUN(test_cpu_dead_and_rcu_barrier);
    SL_RUN(test_gfp_context_per_era);
    SL_RUN(test_gfp_atomic_takes_barn_sheaf);
    SL_RUN(test_bulk_and_prefill_context_per_era);
    SL_RUN(test_kmalloc_nolock_per_era);
    SL_RUN(test_kmalloc_nolock_list_lock_busy);
    SL_RUN(test_kfree_nolock_defers_7x);
    SL_RUN(test_kfree_nolock_618);
    SL_RUN(test_nolock_inside_sheaf_section);
    return sl_check_summary();
}
