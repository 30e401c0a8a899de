/* test_slub_fastpath.c - what the lean fast paths could break: the object index by the kernel's
 * reciprocal_divide and the divide-free object-start check against plain division for every
 * offset of every geometry the sysfs fixture produces; the leaf fast paths (caches without a
 * trace, tracking or hardening) against the complete operation on the same operation sequence;
 * and bad pointers freed through the leaf path, which must be reported and never crash. */
#include "check.h"

#include "../src/slub/slub_internal.h"

#include <string.h>

static void fixture_dir(char *buf, size_t len)
{
    const char *f = __FILE__;
    const char *slash = strrchr(f, '/');
    snprintf(buf, len, "%.*s/fixtures/sysfs", slash ? (int)(slash - f) : 1, slash ? f : ".");
}

/* Every offset of one slab (and a little past it), and random 32-bit offsets, for geometry g. */
static unsigned check_geometry(const sl_slub_geometry *g, uint64_t *rng)
{
    unsigned bad = 0;
    sli_recip r = sli_reciprocal_value(g->size);
    uint64_t c = sli_divisible_c(g->size);
    uint32_t limit = g->objects * g->size, slab = (uint32_t)SL_PAGE_SIZE << g->order;
    for (uint32_t off = 0; off < slab + 2 * g->size; off++) {
        bool start = off % g->size == 0 && off / g->size < g->objects;
        bad += sli_reciprocal_divide(off, r) != off / g->size;
        bad += (off < limit && sli_divisible(off, c)) != start;
    }
    for (unsigned k = 0; k < 4096; k++) {
        uint32_t off = (uint32_t)sl_test_rand(rng);
        bad += sli_reciprocal_divide(off, r) != off / g->size;
        bad += sli_divisible(off, c) != (off % g->size == 0);
    }
    /* The extremes of the 32-bit range (an offset below the first object wraps to them). */
    for (uint32_t off = UINT32_MAX; off > UINT32_MAX - 2 * g->size; off--) {
        bad += sli_reciprocal_divide(off, r) != off / g->size;
        bad += sli_divisible(off, c) != (off % g->size == 0);
    }
    if (bad)
        fprintf(stderr, "  size %u order %u objects %u: %u mismatches\n", g->size, g->order, g->objects, bad);
    return bad;
}

static void test_reciprocal_index_and_object_start(void)
{
    char dir[4096];
    fixture_dir(dir, sizeof dir);
    sl_slub_kcache *v;
    int n = sl_slub_sysfs_read(dir, &v);
    SL_REQUIRE(n > 200);
    uint64_t rng = 7;
    unsigned geometries = 0, bad = 0;
    static const unsigned cpus[] = {1, 2, 8};
    for (int i = 0; i < n; i++) {
        for (unsigned k = 0; k < 3; k++) {
            sl_slub_geometry g;
            if (sl_slub_calculate_geometry(v[i].object_size, v[i].align, v[i].flags, cpus[k], NULL, &g) != SL_OK)
                continue;
            geometries++;
            bad += check_geometry(&g, &rng);
        }
    }
    free(v);
    /* Sizes the fixture may lack: the smallest slots, powers of two, odd multiples of 8. */
    for (uint32_t size = 8; size <= 8192; size += size < 256 ? 8 : 248) {
        sl_slub_geometry g;
        SL_REQUIRE(sl_slub_calculate_geometry(size, 8, 0, 2, NULL, &g) == SL_OK);
        geometries++;
        bad += check_geometry(&g, &rng);
    }
    SL_CHECK(geometries > 600);
    SL_CHECK_EQ(bad, 0);
    /* reciprocal_value's edge cases: d = 1 and powers of two shift only. */
    sli_recip one = sli_reciprocal_value(1), p2 = sli_reciprocal_value(4096);
    SL_CHECK_EQ(sli_reciprocal_divide(UINT32_MAX, one), UINT32_MAX);
    SL_CHECK_EQ(sli_reciprocal_divide(UINT32_MAX, p2), UINT32_MAX >> 12);
}

/* A cache on its own zone; with `traced` a trace, which sends every operation down the complete path. */
typedef struct world {
    sl_trace tr;
    sl_page_zone zone;
    sl_slub_cache *s;
    bool traced;
} world;

static bool world_init(world *w, bool traced, unsigned ncpus, sl_slub_config cfg)
{
    memset(w, 0, sizeof *w);
    w->traced = traced;
    if (traced && sl_trace_init(&w->tr, ncpus, 1 << 12) != SL_OK)
        return false;
    if (sl_page_zone_init(&w->zone, 8u << 20, NULL) != SL_OK)
        return false;
    return sl_slub_cache_create(&w->zone, traced ? &w->tr : NULL, ncpus, &cfg, &w->s) == SL_OK;
}

static void world_fini(world *w)
{
    sl_slub_cache_destroy(w->s);
    sl_page_zone_destroy(&w->zone);
    if (w->traced)
        sl_trace_destroy(&w->tr);
}

static bool valid(world *w)
{
    char msg[256];
    int rc = sl_slub_validate(w->s, msg, sizeof msg);
    if (rc)
        fprintf(stderr, "  validate: %s\n", msg);
    return rc == SL_OK;
}

/* The object's place as (pfn << 16 | index), comparable across two zones of the same size. */
static uint64_t place(world *w, void *obj)
{
    uint32_t pfn, idx;
    return sl_slub_object_index(w->s, obj, &pfn, &idx) ? ((uint64_t)pfn << 16) | idx : UINT64_MAX;
}

static void test_leaf_path_matches_complete_operation(void)
{
    for (unsigned fp = SL_SLUB_FP_CMPXCHG; fp < SL_SLUB_NR_FASTPATHS; fp++) {
        sl_slub_config cfg = {.object_size = 192, .fastpath = (uint8_t)fp, .seed = 5};
        world leaf, full;
        SL_REQUIRE(world_init(&leaf, false, 3, cfg));
        SL_REQUIRE(world_init(&full, true, 3, cfg));
#if !defined(SLABLAB_BENCH)
        SL_CHECK(leaf.s->leaf == 1 + fp);
        SL_CHECK_EQ(full.s->leaf, SLI_LEAF_NONE);
#endif
        enum { MAXH = 400 };
        static void *hl[MAXH], *hf[MAXH];
        unsigned nheld = 0, mismatches = 0;
        uint64_t rng = 11 + fp;
        unsigned steps = (unsigned)sl_test_scale(20000);
        for (unsigned step = 0; step < steps; step++) {
            unsigned cpu = (unsigned)(sl_test_rand(&rng) % 3), r = (unsigned)(sl_test_rand(&rng) % 100);
            if (r < 50 && nheld < MAXH) {
                void *a, *b;
                int ra = sl_slub_alloc(leaf.s, cpu, &a), rb = sl_slub_alloc(full.s, cpu, &b);
                mismatches += ra != SL_OK || rb != SL_OK || place(&leaf, a) != place(&full, b);
                if (ra == SL_OK && rb == SL_OK) {
                    hl[nheld] = a;
                    hf[nheld++] = b;
                }
            } else if (r < 98 && nheld) {
                /* Often the CPU that allocated it (fast path), often another (__slab_free). */
                unsigned i = (unsigned)(sl_test_rand(&rng) % nheld);
                mismatches += sl_slub_free(leaf.s, cpu, hl[i]) != SL_OK;
                mismatches += sl_slub_free(full.s, cpu, hf[i]) != SL_OK;
                hl[i] = hl[--nheld];
                hf[i] = hf[nheld];
            } else {
                mismatches += sl_slub_flush_cpu(leaf.s, cpu) != SL_OK || sl_slub_flush_cpu(full.s, cpu) != SL_OK;
            }
            if (step % 1000 == 0)
                mismatches += !valid(&leaf) + !valid(&full);
        }
        SL_CHECK_EQ(mismatches, 0);
        /* Same paths taken: every counter agrees. */
        for (unsigned st = 0; st < SL_SLUB_NR_STATS; st++) {
            uint64_t a = sl_slub_stat_get(leaf.s, -1, st), b = sl_slub_stat_get(full.s, -1, st);
            if (a != b)
                fprintf(stderr, "  fastpath %u: %s %llu leaf, %llu complete\n", fp, sl_slub_stat_name(st),
                        (unsigned long long)a, (unsigned long long)b);
            SL_CHECK_EQ(a, b);
        }
        SL_CHECK(sl_slub_stat_get(leaf.s, -1, SL_SLUB_FREE_SLOWPATH) > 1000); /* remote frees happened */
        for (unsigned i = 0; i < nheld; i++) {
            SL_CHECK_EQ(sl_slub_free(leaf.s, i % 3, hl[i]), SL_OK);
            SL_CHECK_EQ(sl_slub_free(full.s, i % 3, hf[i]), SL_OK);
        }
        SL_CHECK(valid(&leaf) && valid(&full));
        SL_CHECK_EQ(sl_slub_cache_destroy(leaf.s), SL_OK);
        SL_CHECK_EQ(sl_slub_cache_destroy(full.s), SL_OK);
        leaf.s = full.s = NULL;
        sl_page_zone_destroy(&leaf.zone);
        sl_page_zone_destroy(&full.zone);
        sl_trace_destroy(&full.tr);
    }
}

static void test_bad_pointers_through_the_leaf_path(void)
{
    static const unsigned variants[] = {SL_SLUB_FP_CMPXCHG, SL_SLUB_FP_PLAIN, SL_SLUB_FP_RT};
    for (unsigned v = 0; v < 3; v++) {
        unsigned fp = variants[v];
        world w;
        SL_REQUIRE(world_init(&w, false, 2, (sl_slub_config){.object_size = 96, .fastpath = (uint8_t)fp}));
        /* Another cache on the same zone with order-3 slabs, so tail pages exist. */
        sl_slub_cache *big;
        SL_REQUIRE(sl_slub_cache_create(&w.zone, NULL, 2, &(sl_slub_config){.object_size = 2048}, &big) == SL_OK);
        SL_REQUIRE(sl_slub_cache_geometry(big)->order > 0);
        void *a, *b, *o;
        SL_REQUIRE(sl_slub_alloc(w.s, 0, &a) == SL_OK && sl_slub_alloc(w.s, 0, &b) == SL_OK);
        SL_REQUIRE(sl_slub_alloc(big, 0, &o) == SL_OK);
        const sl_slub_geometry *g = sl_slub_cache_geometry(w.s);
        unsigned char *zbase = w.zone.base, *zend = zbase + ((size_t)w.zone.npages << SL_PAGE_SHIFT);
        int local;
        uint64_t errors = 0;
        struct {
            void *p;
            int rc;
        } bad[] = {
            {NULL, SL_EFOREIGN},
            {&local, SL_EFOREIGN},
            {zbase - 1, SL_EFOREIGN},
            {zend, SL_EFOREIGN},
            {zend - 64, SL_EFOREIGN},                  /* a free page at the arena's end */
            {o, SL_EFOREIGN},                          /* an object of another cache */
            {(char *)o + SL_PAGE_SIZE, SL_EFOREIGN},   /* a tail page of its slab */
            {(char *)b + g->size / 2, SL_EMISALIGNED}, /* the CPU slab, not an object start */
            {(char *)a + 1, SL_EMISALIGNED},
            {(char *)a - (uintptr_t)a % SL_PAGE_SIZE + g->objects * g->size, SL_EMISALIGNED}, /* past the last */
        };
        for (unsigned k = 0; k < sizeof bad / sizeof bad[0]; k++) {
#if defined(SLABLAB_BENCH)
            /* As the kernel without debugging, the benchmark build's leaf does not check object starts
             * in the CPU slab. */
            if (bad[k].rc == SL_EMISALIGNED)
                continue;
#endif
            int rc = sl_slub_free(w.s, 0, bad[k].p);
            if (rc != bad[k].rc)
                fprintf(stderr, "  fastpath %u, bad pointer %u: %d\n", fp, k, rc);
            SL_CHECK_EQ(rc, bad[k].rc);
            errors++;
            SL_CHECK_EQ(sl_slub_stat_get(w.s, -1, SL_SLUB_ERRORS), errors);
        }
        SL_CHECK(valid(&w));
        /* Misaligned into a slab that is not the CPU's slab: CPU 1 has none. */
        SL_CHECK_EQ(sl_slub_free(w.s, 1, (char *)a + 8), SL_EMISALIGNED);
        /* Bad arguments. */
        SL_CHECK_EQ(sl_slub_free(w.s, 2, a), SL_EINVAL);
        SL_CHECK_EQ(sl_slub_free(NULL, 0, a), SL_EINVAL);
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, NULL), SL_EINVAL);
        SL_CHECK_EQ(sl_slub_alloc(w.s, SL_SLUB_MAX_CPUS, &o), SL_EINVAL);
        SL_CHECK_EQ(sl_slub_alloc(NULL, 0, &o), SL_EINVAL);
        /* The cache still works: both objects free, one locally, one remotely. */
        SL_CHECK_EQ(sl_slub_free(w.s, 0, a), SL_OK);
        SL_CHECK_EQ(sl_slub_free(w.s, 1, b), SL_OK);
        /* Detached bulk free with a foreign pointer: reported, the others freed, one lookup each. */
        void *p[8];
        SL_REQUIRE(sl_slub_alloc_bulk(w.s, 0, 8, p) == 8);
        void *kept = p[3];
        p[3] = &local;
        unsigned cas;
        SL_CHECK_EQ(sl_slub_free_bulk(w.s, 0, 8, p, &cas), SL_EFOREIGN);
        SL_CHECK_EQ(cas,
                    fp == SL_SLUB_FP_CMPXCHG ? 1u : 0u); /* the seven share a slab: one group; plain and rt write */
        SL_CHECK(valid(&w));
        SL_CHECK_EQ(sl_slub_free(w.s, 0, kept), SL_OK);
        SL_CHECK_EQ(sl_slub_free(big, 0, o), SL_OK);
        SL_CHECK_EQ(sl_slub_cache_destroy(big), SL_OK);
        SL_CHECK_EQ(sl_slub_cache_destroy(w.s), SL_OK);
        w.s = NULL;
        sl_page_zone_destroy(&w.zone);
    }
}

/* Switching the variant at run time switches the leaf with it. */
static void test_set_fastpath_switches_the_leaf(void)
{
    world w;
    SL_REQUIRE(world_init(&w, false, 1, (sl_slub_config){.object_size = 64}));
    void *o;
    for (unsigned fp = SL_SLUB_FP_CMPXCHG; fp < SL_SLUB_NR_FASTPATHS; fp++) {
        sl_slub_set_fastpath(w.s, (sl_slub_fastpath)fp);
        SL_CHECK_EQ(w.s->leaf, 1 + fp);
        SL_CHECK(w.s->alloc_fn == sli_slub_alloc_fn(1 + fp) && w.s->free_fn == sli_slub_free_fn(1 + fp));
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o), SL_OK);
        SL_CHECK_EQ(sl_slub_free(w.s, 0, o), SL_OK);
    }
    SL_CHECK(valid(&w));
    world_fini(&w);
    /* Hardened and tracked caches never take the leaf. */
    SL_REQUIRE(world_init(&w, false, 1, (sl_slub_config){.object_size = 64, .flags = SL_SLUB_FREELIST_HARDENED}));
    SL_CHECK_EQ(w.s->leaf, SLI_LEAF_NONE);
    world_fini(&w);
    SL_REQUIRE(world_init(&w, false, 1, (sl_slub_config){.object_size = 64, .track = 1}));
    SL_CHECK_EQ(w.s->leaf, SLI_LEAF_NONE);
    world_fini(&w);
}

int main(void)
{
    SL_RUN(test_reciprocal_index_and_object_start);
    SL_RUN(test_leaf_path_matches_complete_operation);
    SL_RUN(test_bad_pointers_through_the_leaf_path);
    SL_RUN(test_set_fastpath_switches_the_leaf);
    return sl_check_summary();
}
