/*
 * slub_world.h - what the SLUB model's tests share: a world (a trace, a zone of `arena` bytes
 * reporting to it, one cache for `ncpus` CPUs), its counters and validate() with the reason
 * printed.  Included by one test file each; everything static.
 */
#ifndef SL_TEST_SLUB_WORLD_H
#define SL_TEST_SLUB_WORLD_H

#include "check.h"

#include "../src/slub/slub.h"

typedef struct world {
    sl_trace tr;
    sl_page_zone zone;
    sl_slub_cache *s;
} world;

static char vmsg[256];

/* The cache most tests use: 256-byte objects, cache-line aligned, tracked (16 per order-0 slab on 2 CPUs). */
static const sl_slub_config k256 = {.object_size = 256, .flags = SL_SLUB_HWCACHE_ALIGN, .track = 1, .seed = 1};

static bool world_init(world *w, unsigned ncpus, size_t arena, sl_slub_config cfg)
{
    return sl_trace_init(&w->tr, ncpus, 1 << 16) == SL_OK && sl_page_zone_init(&w->zone, arena, &w->tr) == SL_OK &&
           sl_slub_cache_create(&w->zone, &w->tr, ncpus, &cfg, &w->s) == SL_OK;
}

/* Also for a cache corrupted on purpose: destroy's walks are bounded. */
static void world_fini(world *w)
{
    sl_slub_cache_destroy(w->s);
    sl_page_zone_destroy(&w->zone);
    sl_trace_destroy(&w->tr);
}

static uint64_t st(world *w, int cpu, unsigned stat) { return sl_slub_stat_get(w->s, cpu, stat); }

static int valid(world *w)
{
    int rc = sl_slub_validate(w->s, vmsg, sizeof vmsg);
    if (rc)
        fprintf(stderr, "  validate: %s\n", vmsg);
    return rc;
}

#endif
