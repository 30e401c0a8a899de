/*
 * sheaves_world.h - what the sheaves tests share: a SLUB cache of one
 * kernel version with per-CPU sheaves (6.18: opted in with a
 * sheaf_capacity, over the per-CPU slab; 7.0: every cache, over 7.0's slab
 * layer), small sheaves of an exact capacity so that they fill and empty
 * within a test, and the model's checker.
 */
#ifndef SL_TEST_SHEAVES_WORLD_H
#define SL_TEST_SHEAVES_WORLD_H

#include "check.h"

#include "../src/slub/sheaves.h"

typedef struct world {
    sl_page_zone zone;
    sl_slub_cache *s;
    sli_sheaves *sh; /* the cache's (s->sheaves) */
} world;

/*
 * A cache of 64-byte tracked objects for ncpus CPUs in kernel v with sheaves
 * of exactly `capacity` where v has sheaves (7.0 with capacity 0: a cache
 * created before bootstrap_cache_sheaves), at most max_sheaves sheaves at
 * once (0: no limit).
 */
static int world_open_nodes(world *w, unsigned ncpus, sl_slub_kversion v, uint32_t capacity, uint32_t max_sheaves,
                            sl_trace *tr, unsigned zone_mb, unsigned nodes, uint8_t memoryless);
static int world_open_version(world *w, unsigned ncpus, sl_slub_kversion v, uint32_t capacity, uint32_t max_sheaves,
                              sl_trace *tr, unsigned zone_mb)
{
    return world_open_nodes(w, ncpus, v, capacity, max_sheaves, tr, zone_mb, 1, 0);
}

/* The same on `nodes` NUMA nodes, CPU c on node c % nodes, `memoryless` the nodes without memory. */
static int world_open_nodes(world *w, unsigned ncpus, sl_slub_kversion v, uint32_t capacity, uint32_t max_sheaves,
                            sl_trace *tr, unsigned zone_mb, unsigned nodes, uint8_t memoryless)
{
    memset(w, 0, sizeof *w);
    int rc = sl_page_zone_init(&w->zone, (size_t)zone_mb << 20, NULL);
    if (rc)
        return rc;
    sl_slub_config cfg = {.object_size = 64,
                          .track = 1,
                          .seed = 7,
                          .sheaf_capacity = (uint16_t)capacity,
                          .sheaf_capacity_exact = 1,
                          .max_sheaves = (uint16_t)max_sheaves,
                          .early_boot = v.major >= 7 && !capacity,
                          .nr_nodes = (uint8_t)nodes,
                          .memoryless = memoryless};
    for (unsigned c = 0; c < ncpus && c < SL_SLUB_MAX_CPUS; c++)
        cfg.cpu_node[c] = (uint8_t)(c % (nodes ? nodes : 1));
    cfg.kernel.version = v;
    rc = sl_slub_cache_create(&w->zone, tr, ncpus, &cfg, &w->s);
    if (rc == SL_OK)
        w->sh = w->s->sheaves;
    return rc;
}

/* The same in 6.18 or (v70) 7.0, where the cache must have sheaves. */
static inline int world_open(world *w, unsigned ncpus, uint32_t capacity, uint32_t max_sheaves, bool v70, sl_trace *tr,
                             unsigned zone_mb)
{
    sl_slub_kversion v = v70 ? (sl_slub_kversion){7, 0} : (sl_slub_kversion){6, 18};
    int rc = world_open_version(w, ncpus, v, capacity, max_sheaves, tr, zone_mb);
    return rc == SL_OK && !w->sh ? SL_EINVAL : rc;
}

static void *world_alloc(world *w, unsigned cpu)
{
    void *obj;
    return sl_slub_alloc(w->s, cpu, &obj) == SL_OK ? obj : NULL;
}

static int world_free(world *w, unsigned cpu, void *obj) { return sl_slub_free(w->s, cpu, obj); }

/* Ends every grace period, flushes every CPU and shrinks: every object back in its slab. */
static void world_drain(world *w)
{
    for (unsigned c = 0; c < w->s->ncpus; c++) {
        sl_slub_rcu_grace_period(w->s, c);
        sl_slub_flush_cpu(w->s, c);
        sl_slub_rcu_grace_period(w->s, c); /* the rcu_free sheaf the flush handed to RCU */
    }
    sl_slub_shrink(w->s, NULL);
}

static void world_close(world *w)
{
    if (w->s)
        sl_slub_cache_destroy(w->s);
    sl_page_zone_destroy(&w->zone);
}

/*
 * The whole state is consistent (sl_slub_validate: slabs, sheaves, barn,
 * RCU waits; with tracking, an object the caller holds is allocated and so
 * cannot also be in a sheaf).  Returns 0 or an error with a sentence.
 */
static int world_validate(world *w, char *msg, size_t len) { return sl_slub_validate(w->s, msg, len); }

/* Counter `item` (SL_SLUB_*) of every CPU. */
#define ST(w, item) sl_slub_stat_get((w)->s, -1, SL_SLUB_##item)

#endif
