/*
 * test_slub_eras.c - the slab paths of each kernel era (eras.h): 4.x's
 * frozen CPU partial slabs (acquire_slab, put_cpu_partial by objects before
 * 5.16, __slab_free freezing a full slab, unfreeze_partials), deactivate_slab
 * one CAS per object before 5.12, 4.3's bulk free with interrupts off and
 * 4.4's NULL-marking detached freelists, 7.0's slab layer without a per-CPU
 * slab; and, for every era, random operations from several CPUs against a
 * reference set with validate() after every step.
 */
#include "check.h"

#include "../src/slub/sheaves.h"

typedef struct world {
    sl_page_zone zone;
    sl_trace trace;
    sl_slub_cache *s;
} world;

/* A cache of `size`-byte tracked objects for ncpus CPUs in kernel major.minor, traced when `tr`. */
static int world_open(world *w, unsigned major, unsigned minor, unsigned ncpus, uint32_t size, bool tr)
{
    memset(w, 0, sizeof *w);
    int rc = sl_page_zone_init(&w->zone, 16u << 20, NULL);
    if (rc == SL_OK && tr) {
        rc = sl_trace_init(&w->trace, ncpus, 1 << 14);
        w->trace.enabled = true;
    }
    sl_slub_config cfg = {.object_size = size, .track = 1, .seed = 3};
    cfg.kernel.version = (sl_slub_kversion){(uint8_t)major, (uint8_t)minor};
    if (rc == SL_OK)
        rc = sl_slub_cache_create(&w->zone, tr ? &w->trace : NULL, ncpus, &cfg, &w->s);
    return rc;
}

static void world_close(world *w)
{
    if (w->s)
        sl_slub_cache_destroy(w->s);
    if (w->trace.rings)
        sl_trace_destroy(&w->trace);
    sl_page_zone_destroy(&w->zone);
}

static void check_valid(world *w)
{
    char msg[256];
    int rc = sl_slub_validate(w->s, msg, sizeof msg);
    if (rc != SL_OK)
        fprintf(stderr, "  validate: %s\n", msg);
    SL_CHECK_EQ(rc, SL_OK);
}

static uint64_t st(world *w, unsigned item) { return sl_slub_stat_get(w->s, -1, item); }

static bool frozen(const sli_slub_slab *slab) { return sli_frozen(sl_dw_read(&slab->fc).hi); }

static unsigned chain_length(const sli_slub_slab *p)
{
    unsigned n = 0;
    for (; p; p = p->next)
        n++;
    return n;
}

/*
 * 4.4: a full slab that gets a remote free is frozen by that __slab_free and
 * goes to the freeing CPU's partial list (CPU_PARTIAL_FREE); a free into it
 * there is FREE_FROZEN; the list drains once it holds more than cpu_partial
 * free objects (page->pobjects, counted when each slab joined); a flush
 * unfreezes every slab on it.  6.8 does the same unfrozen, limited by slabs.
 */
static void test_frozen_cpu_partial(void)
{
    for (int v68 = 0; v68 <= 1; v68++) {
        world w;
        SL_REQUIRE(world_open(&w, v68 ? 6 : 4, v68 ? 8 : 4, 2, 256, false) == SL_OK);
        const sl_slub_geometry *g = sl_slub_cache_geometry(w.s);
        SL_CHECK_EQ(g->objects, 16);
        SL_CHECK_EQ(g->cpu_partial, v68 ? 52 : 13);
        enum { SLABS = 4 };
        static void *o[SLABS * 16];
        for (unsigned i = 0; i < SLABS * 16; i++) /* four full slabs, the last one CPU 0's */
            SL_REQUIRE(sl_slub_alloc(w.s, 0, &o[i]) == SL_OK);
        sli_slub_cpu *c1 = &w.s->cpu[1];
        /* CPU 1 bulk-frees 10 objects of slabs 0 and 1: one __slab_free each, freezing (4.4) the full slab. */
        for (unsigned k = 0; k < 2; k++)
            SL_CHECK(sl_slub_free_bulk(w.s, 1, 10, o + 16 * k, NULL) >= 0);
        SL_CHECK_EQ(st(&w, SL_SLUB_CPU_PARTIAL_FREE), 2);
        SL_CHECK_EQ(chain_length(c1->partial), 2);
        if (!v68)
            SL_CHECK_EQ(c1->partial->pobjects, 20);
        for (sli_slub_slab *p = c1->partial; p; p = p->next)
            SL_CHECK_EQ(frozen(p), !v68);
        SL_CHECK_EQ(sl_slub_free(w.s, 1, o[10]), SL_OK); /* into slab 0 on the list */
        SL_CHECK_EQ(st(&w, SL_SLUB_FREE_FROZEN), v68 ? 0 : 1);
        check_valid(&w);
        /* A third slab: 4.4 drains first (20 > 13 free objects), 6.8 does not (3 slabs < 7). */
        SL_CHECK(sl_slub_free_bulk(w.s, 1, 10, o + 32, NULL) >= 0);
        SL_CHECK_EQ(st(&w, SL_SLUB_CPU_PARTIAL_DRAIN), v68 ? 0 : 1);
        SL_CHECK_EQ(chain_length(c1->partial), v68 ? 3 : 1);
        SL_CHECK_EQ(sli_get_node(w.s, 0)->nr_partial, v68 ? 0 : 2);
        for (sli_slub_slab *p = sli_get_node(w.s, 0)->partial_head; p; p = p->lnext)
            SL_CHECK(!frozen(p)); /* unfreeze_partials */
        check_valid(&w);
        /* A flush puts the partial list on the node list, unfrozen. */
        SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 1), SL_OK);
        SL_CHECK(c1->partial == NULL);
        SL_CHECK_EQ(sli_get_node(w.s, 0)->nr_partial, 3);
        for (sli_slub_slab *p = sli_get_node(w.s, 0)->partial_head; p; p = p->lnext)
            SL_CHECK(!frozen(p));
        check_valid(&w);
        for (unsigned k = 0; k < SLABS; k++)
            for (unsigned j = k < 3 ? 10 + (k == 0) : 0; j < 16; j++)
                SL_CHECK_EQ(sl_slub_free(w.s, 0, o[16 * k + j]), SL_OK);
        check_valid(&w);
        world_close(&w);
    }
}

/*
 * 4.4's get_partial_node freezes every slab it takes: the first for the CPU
 * slab, then frozen onto the CPU partial list until the free objects taken
 * pass cpu_partial / 2 (13 / 2 = 6 for 256-byte objects).
 */
static void test_acquire_slab_freezes(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 4, 4, 2, 256, false) == SL_OK);
    static void *o[8 * 16];
    for (unsigned i = 0; i < 8 * 16; i++)
        SL_REQUIRE(sl_slub_alloc(w.s, 0, &o[i]) == SL_OK);
    /* Two free objects in each of slabs 0..6, then CPU 1 flushes them all to the node list. */
    for (unsigned k = 0; k < 7; k++)
        for (unsigned j = 0; j < 2; j++)
            SL_CHECK_EQ(sl_slub_free(w.s, 1, o[k * 16 + j]), SL_OK);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 1), SL_OK);
    SL_CHECK_EQ(sli_get_node(w.s, 0)->nr_partial, 7);
    SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK); /* CPU 0's slab (full) leaves; its next alloc refills */
    void *x;
    SL_REQUIRE(sl_slub_alloc(w.s, 0, &x) == SL_OK);
    /* Slab A for the CPU slab (2 free), then B, C, D onto the partial list: 2+2+2+2 = 8 > 6 stops. */
    SL_CHECK_EQ(st(&w, SL_SLUB_ALLOC_FROM_PARTIAL), 1);
    SL_CHECK_EQ(st(&w, SL_SLUB_CPU_PARTIAL_NODE), 3);
    SL_CHECK_EQ(sli_get_node(w.s, 0)->nr_partial, 3);
    SL_CHECK_EQ(chain_length(w.s->cpu[0].partial), 3);
    for (sli_slub_slab *p = w.s->cpu[0].partial; p; p = p->next)
        SL_CHECK(frozen(p) && sl_dw_read(&p->fc).lo != 0); /* frozen with their freelists in place */
    check_valid(&w);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, x), SL_OK);
    world_close(&w);
}

/* deactivate_slab before 5.12 returns the CPU freelist one object (one CAS) at a time; from 5.12 in one. */
static void test_deactivate_per_object(void)
{
    for (int v512 = 0; v512 <= 1; v512++) {
        world w;
        SL_REQUIRE(world_open(&w, 5, v512 ? 12 : 11, 1, 256, true) == SL_OK);
        void *o[10];
        for (unsigned i = 0; i < 10; i++)
            SL_REQUIRE(sl_slub_alloc(w.s, 0, &o[i]) == SL_OK);
        for (unsigned i = 0; i < 10; i++)
            SL_CHECK_EQ(sl_slub_free(w.s, 0, o[i]), SL_OK); /* all onto the CPU freelist: 16 objects there */
        static sl_event ev[1 << 14];
        sl_trace_drain(&w.trace, 0, ev, 1 << 14);
        SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
        unsigned n = sl_trace_drain(&w.trace, 0, ev, 1 << 14), spliced = 0, found = 0;
        for (unsigned i = 0; i < n; i++)
            if (ev[i].kind == SL_EV_SLUB_DEACTIVATE)
                spliced = ev[i].arg0, found++;
        SL_CHECK_EQ(found, 1);
        SL_CHECK_EQ(spliced, v512 ? 16 : 1); /* stage two splices what stage one left */
        check_valid(&w);
        sl_slub_node_info ni;
        sl_slub_node_info_get(w.s, &ni);
        SL_CHECK_EQ(ni.nr_slabs, 1); /* an empty slab stays while the node list is short */
        world_close(&w);
    }
}

/*
 * kmem_cache_free_bulk across the versions: 4.3 frees the CPU slab's
 * objects without a CAS; 4.4 to 5.18 detached freelists leave NULL in p[];
 * 5.19+ swap entries instead.
 */
static void test_bulk_free_forms(void)
{
    static const struct {
        unsigned major, minor, cas;
        bool nulls;
    } v[] = {{4, 3, 0, false}, {4, 4, 1, true}, {5, 18, 1, true}, {5, 19, 1, false}};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        world w;
        SL_REQUIRE(world_open(&w, v[k].major, v[k].minor, 1, 256, false) == SL_OK);
        void *o[8];
        SL_REQUIRE(sl_slub_alloc_bulk(w.s, 0, 8, o) == 8); /* all from the CPU slab */
        unsigned cas;
        SL_CHECK_EQ(sl_slub_free_bulk(w.s, 0, 8, o, &cas), (int)v[k].cas);
        unsigned nulls = 0;
        for (unsigned i = 0; i < 8; i++)
            nulls += o[i] == NULL;
        SL_CHECK_EQ(nulls, v[k].nulls ? 8 : 0);
        check_valid(&w);
        /* A free that goes to another slab (__slab_free) and an error keep the others going. */
        SL_REQUIRE(sl_slub_alloc_bulk(w.s, 0, 8, o) == 8);
        SL_CHECK_EQ(sl_slub_flush_cpu(w.s, 0), SL_OK);
        o[3] = (char *)o[3] + 1;
        SL_CHECK_EQ(sl_slub_free_bulk(w.s, 0, 8, o, &cas), SL_EMISALIGNED);
        check_valid(&w);
        world_close(&w);
    }
}

/* 7.0 without sheaves (a debug cache) and with: allocations from slabs one object at a time, no CPU slab. */
static void test_no_cpu_slab(void)
{
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
    sl_slub_config cfg = {.object_size = 512, .track = 1};
    cfg.kernel.version = (sl_slub_kversion){7, 0};
    cfg.sheaf_capacity = 4;
    cfg.sheaf_capacity_exact = 1;
    sl_slub_cache *s;
    SL_REQUIRE(sl_slub_cache_create(&z, NULL, 2, &cfg, &s) == SL_OK);
    const sl_slub_geometry *g = sl_slub_cache_geometry(s);
    SL_CHECK_EQ(g->cpu_partial, 0);
    void *o[40];
    /* The first allocation refills main with 4 objects (refill_objects from a new slab). */
    SL_REQUIRE(sl_slub_alloc(s, 0, &o[0]) == SL_OK);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_SLAB), 1);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_SLOWPATH), 0); /* refills are not slow paths */
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_SHEAF_REFILL), 4);
    SL_CHECK(s->cpu[0].slab == NULL && sli_get_node(s, 0)->nr_partial == 1); /* the new slab went to the node list */
    /* A bulk allocation past the sheaves: refill_objects takes the node's partial slab first. */
    SL_CHECK_EQ(sl_slub_alloc_bulk(s, 0, 30, o + 1), 30);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_SLOWPATH), 27); /* stat_add(ALLOC_SLOWPATH, i) */
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_PCS), 4);
    for (unsigned i = 0; i < 31; i++)
        SL_CHECK_EQ(sl_slub_free(s, 1, o[i]), SL_OK);
    /* CPU 1's main and spare take 8, then every fourth free puts a full main in the barn: six, main keeps 3. */
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_PCS), 31);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLOWPATH), 0);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_BARN_PUT), 6);
    SL_CHECK_EQ(s->sheaves->barn[0].nr_full, 6);
    /* A shrink flushes them all to the slabs (__kmem_cache_free_bulk into __slab_free): no slab stays used. */
    SL_CHECK_EQ(sl_slub_shrink(s, NULL), SL_OK);
    sl_slub_node_info ni;
    sl_slub_node_info_get(s, &ni);
    SL_CHECK_EQ(ni.total_objects - ni.partial_free, 0); /* every object back in its slab */
    SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
    for (unsigned k = 0; k < 2; k++)
        SL_CHECK(s->cpu[k].slab == NULL && s->cpu[k].partial == NULL && sl_dw_read(&s->cpu[k].fl_tid).lo == 0);
    SL_CHECK_EQ(sl_slub_set_cpu_partial(s, 10), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_set_cpu_partial(s, 0), SL_OK);
    SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);

    /* A debug cache in 7.0: the bootstrap sheaf only, every allocation ___slab_alloc's. */
    cfg.flags = SL_SLUB_CONSISTENCY_CHECKS;
    SL_REQUIRE(sl_slub_cache_create(&z, NULL, 1, &cfg, &s) == SL_OK);
    SL_CHECK_EQ(sl_slub_cache_sheaf_capacity(s), 0);
    for (unsigned i = 0; i < 10; i++)
        SL_REQUIRE(sl_slub_alloc(s, 0, &o[i]) == SL_OK);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_SLOWPATH), 10);
    SL_CHECK_EQ(sl_slub_free_bulk(s, 0, 10, o, NULL) >= 0, 1);
    SL_CHECK_EQ(sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLOWPATH), 10); /* slab_free_bulk's stat_add */
    SL_CHECK_EQ(sl_slub_validate(s, NULL, 0), SL_OK);
    SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK);
    sl_page_zone_destroy(&z);
}

/*
 * Random operations from 1..3 CPUs against a reference set, validate() after every step, in every era;
 * some on NUMA nodes (CPU c on node c % nodes; `memoryless` a mask), with 3 CPUs.
 */
static void test_random_every_era(void)
{
    static const struct {
        unsigned major, minor;
        uint32_t flags;
        uint16_t sheaf_capacity;
        uint8_t nodes, memoryless;
    } eras[] = {{4, 3, 0, 0, 1, 0},
                {4, 4, 0, 0, 1, 0},
                {5, 11, 0, 0, 1, 0},
                {5, 15, 0, 0, 1, 0},
                {6, 7, 0, 0, 1, 0},
                {6, 17, 0, 0, 1, 0},
                {6, 18, 0, 0, 1, 0},
                {6, 18, 0, 6, 1, 0},
                {7, 0, 0, 0, 1, 0},
                {7, 0, SL_SLUB_CONSISTENCY_CHECKS, 0, 1, 0},
                {4, 4, SL_SLUB_FREELIST_HARDENED, 0, 1, 0},
                {7, 0, SL_SLUB_FREELIST_RANDOM, 5, 1, 0},
                {6, 7, 0, 0, 2, 0},
                {6, 17, 0, 0, 2, 0},
                {6, 18, 0, 6, 2, 0},
                {7, 0, 0, 0, 2, 0},
                {7, 0, SL_SLUB_CONSISTENCY_CHECKS, 0, 2, 0},
                {7, 1, 0, 5, 3, 2},
                {7, 3, 0, 0, 2, 0}};
    for (size_t e = 0; e < sizeof eras / sizeof eras[0]; e++) {
        unsigned ncpus = eras[e].nodes > 1 ? 3 : 1 + e % 3;
        sl_page_zone z;
        SL_REQUIRE(sl_page_zone_init(&z, 8u << 20, NULL) == SL_OK);
        sl_slub_config cfg = {.object_size = 96 + 32 * (uint32_t)(e % 4),
                              .flags = eras[e].flags,
                              .track = 1,
                              .seed = (uint32_t)e,
                              .sheaf_capacity = eras[e].sheaf_capacity,
                              .sheaf_capacity_exact = 1};
        cfg.kernel.version = (sl_slub_kversion){(uint8_t)eras[e].major, (uint8_t)eras[e].minor};
        cfg.nr_nodes = eras[e].nodes;
        cfg.memoryless = eras[e].memoryless;
        for (unsigned c = 0; c < ncpus; c++)
            cfg.cpu_node[c] = (uint8_t)(eras[e].nodes ? c % eras[e].nodes : 0);
        sl_slub_cache *s;
        SL_REQUIRE(sl_slub_cache_create(&z, NULL, ncpus, &cfg, &s) == SL_OK);
        if (eras[e].nodes > 1)
            sl_slub_set_min_partial(s, 1); /* so that get_any_partial finds remote lists worth taking */
        enum { MAXH = 1024 };
        static void *held[MAXH];
        size_t nh = 0;
        uint64_t rng = 0xe7a5ull + e;
        unsigned steps = (unsigned)sl_test_scale(2500), failures = 0;
        for (unsigned step = 0; step < steps && !failures; step++) {
            unsigned cpu = (unsigned)(sl_test_rand(&rng) % ncpus), r = (unsigned)(sl_test_rand(&rng) % 100);
            if (r < 40 && nh < MAXH) {
                void *o;
                SL_CHECK_EQ(sl_slub_alloc(s, cpu, &o), SL_OK);
                held[nh++] = o;
            } else if (r < 75 && nh) {
                size_t k = sl_test_rand(&rng) % nh; /* any CPU: remote frees */
                SL_CHECK_EQ(sl_slub_free(s, cpu, held[k]), SL_OK);
                held[k] = held[--nh];
            } else if (r < 82 && nh + 48 <= MAXH) {
                unsigned n = 1 + (unsigned)(sl_test_rand(&rng) % 48);
                SL_CHECK_EQ(sl_slub_alloc_bulk(s, cpu, n, held + nh), (int)n);
                nh += n;
            } else if (r < 89 && nh) {
                unsigned n = 1 + (unsigned)(sl_test_rand(&rng) % (nh < 48 ? nh : 48));
                void *batch[48];
                for (unsigned i = 0; i < n; i++) { /* scattered, so groups mix slabs */
                    size_t k = sl_test_rand(&rng) % nh;
                    batch[i] = held[k];
                    held[k] = held[--nh];
                }
                SL_CHECK(sl_slub_free_bulk(s, cpu, n, batch, NULL) >= 0);
            } else if (r < 93 && nh) {
                size_t k = sl_test_rand(&rng) % nh;
                SL_CHECK_EQ(sl_slub_kfree_rcu(s, cpu, held[k]), SL_OK);
                held[k] = held[--nh];
            } else if (r < 96) {
                SL_CHECK(sl_slub_rcu_grace_period(s, cpu) >= 0);
            } else if (r < 99) {
                SL_CHECK_EQ(sl_slub_flush_cpu(s, cpu), SL_OK);
            } else {
                SL_CHECK_EQ(sl_slub_shrink(s, NULL), SL_OK);
            }
            char msg[256];
            if (sl_slub_validate(s, msg, sizeof msg) != SL_OK) {
                fprintf(stderr, "  %u.%u step %u: %s\n", eras[e].major, eras[e].minor, step, msg);
                failures++;
            }
        }
        SL_CHECK_EQ(failures, 0);
        for (size_t k = 0; k < nh; k++)
            SL_CHECK_EQ(sl_slub_free(s, (unsigned)(k % ncpus), held[k]), SL_OK);
        SL_CHECK_EQ(sl_slub_cache_destroy(s), SL_OK); /* nothing left allocated, RCU waits included */
        sl_page_stats ps;
        sl_page_stats_get(&z, &ps);
        SL_CHECK_EQ(ps.pages_free, z.npages);
        sl_page_zone_destroy(&z);
    }
}

int main(void)
{
    SL_RUN(test_frozen_cpu_partial);
    SL_RUN(test_acquire_slab_freezes);
    SL_RUN(test_deactivate_per_object);
    SL_RUN(test_bulk_free_forms);
    SL_RUN(test_no_cpu_slab);
    SL_RUN(test_random_every_era);
    return sl_check_summary();
}
