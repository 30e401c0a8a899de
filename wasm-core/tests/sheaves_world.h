/*
 * sheaves_world.h - what the sheaves tests share: a SLUB cache with the
 * per-CPU sheaves layer on top of it, the sheaves refilling and flushing
 * through the cache's bulk operations (the shape of 6.18, where sheaves sit
 * over the per-CPU slab), and the allocation and free paths a kernel cache
 * with sheaves takes: the sheaves first, the slab path when they cannot.
 */
#ifndef SL_TEST_SHEAVES_WORLD_H
#define SL_TEST_SHEAVES_WORLD_H

#include "check.h"

#include "../src/slub/sheaves.h"

/* __kmem_cache_alloc_bulk: all or nothing. */
static unsigned world_refill(sli_act *a, void **p, unsigned min, unsigned max)
{
    (void)min;
    return sl_slub_alloc_bulk(a->s, a->cpu, max, p) == (int)max ? max : 0;
}
/* __kmem_cache_free_bulk: detached freelists into the slabs. */
static void world_free_bulk(sli_act *a, void **p, unsigned n)
{
    int rc = sl_slub_free_bulk(a->s, a->cpu, n, p, NULL);
    if (rc < 0)
        fprintf(stderr, "free_bulk: %s\n", sl_strerror(rc));
    sl_assert(rc >= 0);
    (void)rc;
}
static const sli_slab_ops world_ops = {world_refill, world_free_bulk};

typedef struct world {
    sl_page_zone zone;
    sl_slub_cache *s;
    sli_sheaves sh;
} world;

/*
 * A cache of 64-byte tracked objects for ncpus CPUs with sheaves of
 * `capacity`; v70 selects 7.0's handling of an empty main after a refill.
 */
static int world_open(world *w, unsigned ncpus, uint32_t capacity, uint32_t max_sheaves, bool v70, sl_trace *tr,
                      unsigned zone_mb)
{
    memset(w, 0, sizeof *w);
    int rc = sl_page_zone_init(&w->zone, (size_t)zone_mb << 20, NULL);
    if (rc)
        return rc;
    sl_slub_config cfg = {.object_size = 64, .track = 1, .seed = 7};
    rc = sl_slub_cache_create(&w->zone, tr, ncpus, &cfg, &w->s);
    if (rc == SL_OK)
        rc = sli_sheaves_init(&w->sh, ncpus, capacity, max_sheaves, &world_ops);
    w->sh.main_to_spare = v70;
    return rc;
}

static sli_act world_act(world *w, unsigned cpu)
{
    sli_act a;
    bool ok = sli_slub_begin(w->s, cpu, &a);
    sl_assert(ok);
    (void)ok;
    return a;
}

/* slab_alloc_node: the sheaves, else the slab path. */
static void *world_alloc(world *w, unsigned cpu)
{
    sli_act a = world_act(w, cpu);
    void *obj = sli_alloc_from_pcs(&w->sh, &a);
    if (!obj && sl_slub_alloc(w->s, cpu, &obj) != SL_OK)
        obj = NULL;
    return obj;
}

/* slab_free: the sheaves, else the slab path. */
static int world_free(world *w, unsigned cpu, void *obj)
{
    sli_act a = world_act(w, cpu);
    return sli_free_to_pcs(&w->sh, &a, obj) ? SL_OK : sl_slub_free(w->s, cpu, obj);
}

/* Flushes every CPU's sheaves, ends the grace periods, empties the barn: all objects back in slabs. */
static void world_drain(world *w)
{
    for (unsigned c = 0; c < w->s->ncpus; c++) {
        sli_act a = world_act(w, c);
        sli_pcs_flush_all(&w->sh, &a);
        sli_sheaves_rcu_gp(&w->sh, &a);
        sl_slub_flush_cpu(w->s, c);
    }
    sli_act a = world_act(w, 0);
    sli_barn_shrink(&w->sh, &a);
}

static void world_close(world *w)
{
    if (w->s) {
        sli_act a = world_act(w, 0);
        sli_sheaves_destroy(&w->sh, &a);
        sl_slub_cache_destroy(w->s);
    }
    sl_page_zone_destroy(&w->zone);
}

/* Every object held by a sheaf: an object of the cache, held once. */
typedef struct held {
    const sl_slub_cache *s;
    void **objs;
    size_t n, cap;
    int bad;
} held;

static int held_visit(void *ctx, const sli_sheaf *sheaf, unsigned place, unsigned cpu)
{
    held *h = ctx;
    (void)place, (void)cpu;
    for (uint32_t i = 0; i < sheaf->size; i++) {
        uint32_t pfn, idx;
        if (!sl_slub_object_index(h->s, sheaf->objects[i], &pfn, &idx))
            h->bad++;
        if (h->n == h->cap) {
            h->cap = h->cap ? 2 * h->cap : 256;
            h->objs = realloc(h->objs, h->cap * sizeof *h->objs);
        }
        h->objs[h->n++] = sheaf->objects[i];
    }
    return 0;
}

static int ptr_cmp(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t)*(void *const *)x, b = (uintptr_t)*(void *const *)y;
    return (a > b) - (a < b);
}

/*
 * The whole state is consistent: the sheaves' invariants, the cache's, every
 * sheaf object an object of the cache held once, and none of them among the
 * `n` objects the caller holds.  Returns 0 or an error with a sentence.
 */
static int world_validate(world *w, void *const *caller, size_t n, char *msg, size_t len)
{
    int rc = sli_sheaves_validate(&w->sh, msg, len);
    if (rc == SL_OK)
        rc = sl_slub_validate(w->s, msg, len);
    if (rc != SL_OK)
        return rc;
    held h = {.s = w->s};
    sli_sheaves_walk(&w->sh, held_visit, &h);
    for (size_t i = 0; i < n; i++) {
        if (h.n == h.cap) {
            h.cap = h.cap ? 2 * h.cap : 256;
            h.objs = realloc(h.objs, h.cap * sizeof *h.objs);
        }
        h.objs[h.n++] = caller[i];
    }
    if (h.n)
        qsort(h.objs, h.n, sizeof *h.objs, ptr_cmp);
    for (size_t i = 1; i < h.n && !h.bad; i++)
        h.bad += h.objs[i] == h.objs[i - 1];
    if (h.bad) {
        snprintf(msg, len, "an object is held twice, or a sheaf holds a non-object");
        rc = SL_ECORRUPT;
    }
    free(h.objs);
    return rc;
}

#endif
