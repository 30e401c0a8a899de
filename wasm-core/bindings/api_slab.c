/*
 * api_slab.c - the SLAB model for the browser bridge.
 *
 * Handles are wasm32 pointers passed as numbers.  Binary results are
 * written into caller-provided buffers, all fields little-endian 32-bit:
 *
 *   sl_slab_geometry (44 bytes): mgmt (0 OBJFREELIST, 1 NORMAL(leftover),
 *     2 NORMAL, 3 OFF), size, align, order, num, left, freelist_size,
 *     off_cache_size, colour_off, colour, waste.
 *   sl_slab_cache_info (176 bytes): name[64] (NUL-terminated), id,
 *     object_size, geometry (44 bytes as above), limit, batchcount,
 *     shared_limit, total_slabs, free_slabs, free_objects, active_objs,
 *     cpu_avail, shared_avail, grown, destroyed, alloc_hit, alloc_miss,
 *     free_hit, free_miss.
 *
 * sl_api_slab_info_size() and sl_api_slab_geometry_size() return the sizes
 * so the bridge can check them.
 */
#include "export.h"

#include "../src/slab/slab.h"

#include <string.h>

_Static_assert(sizeof(sl_slab_geometry) == 44, "geometry layout");
_Static_assert(sizeof(sl_slab_cache_info) == 176, "cache info layout (wasm32)");

SL_EXPORT int sl_api_slab_geometry_size(void) { return (int)sizeof(sl_slab_geometry); }
SL_EXPORT int sl_api_slab_info_size(void) { return (int)sizeof(sl_slab_cache_info); }

/* Geometry of one cache under `rules` (0 before, 1 after); returns 0 or an sl_err. */
SL_EXPORT int sl_api_slab_geometry(uint32_t object_size, uint32_t align, uint32_t flags, int rules,
                                   sl_slab_geometry *out)
{
    if (rules != SL_SLAB_RULES_BEFORE && rules != SL_SLAB_RULES_AFTER)
        return SL_EINVAL;
    sl_slab_kmalloc_table kt;
    sl_slab_kmalloc_table_init(&kt, (sl_slab_rules)rules);
    sl_slab_spec spec = {.object_size = object_size, .align = align, .flags = flags};
    return sl_slab_geometry_compute(&spec, &kt, out);
}

/* A world of `ncpus` CPUs over `arena_mb` MiB; `trace` may be 0.  Returns the handle or 0. */
SL_EXPORT sl_slab *sl_api_slab_create(unsigned ncpus, unsigned arena_mb, int rules, sl_trace *trace)
{
    sl_slab_config cfg = {.ncpus = ncpus, .arena_bytes = (size_t)arena_mb << 20, .rules = (sl_slab_rules)rules,
                          .trace = trace};
    sl_slab *sl = NULL;
    return sl_slab_create(&cfg, &sl) == SL_OK ? sl : NULL;
}

SL_EXPORT void sl_api_slab_destroy(sl_slab *sl) { sl_slab_destroy(sl); }

SL_EXPORT void *sl_api_slab_kmalloc(sl_slab *sl, unsigned cpu, uint32_t size) { return sl_slab_kmalloc(sl, cpu, size); }

SL_EXPORT int sl_api_slab_kfree(sl_slab *sl, unsigned cpu, void *p) { return sl_slab_kfree(sl, cpu, p); }

/* Creates a cache; returns its id (>= 20) or a negative sl_err. */
SL_EXPORT int sl_api_slab_cache_create(sl_slab *sl, const char *name, uint32_t object_size, uint32_t align,
                                       uint32_t flags)
{
    sl_slab_spec spec = {.object_size = object_size, .align = align, .flags = flags};
    if (name) {
        size_t n = strnlen(name, SL_SLAB_NAME_MAX - 1);
        memcpy(spec.name, name, n);
    }
    sl_slab_cache *c;
    int rc = sl_slab_cache_create(sl, &spec, &c);
    if (rc != SL_OK)
        return rc;
    sl_slab_cache_info info;
    sl_slab_cache_info_get(c, &info);
    return (int)info.id;
}

/* kmem_cache_alloc / kmem_cache_free on the cache with this id. */
SL_EXPORT void *sl_api_slab_cache_alloc(sl_slab *sl, unsigned id, unsigned cpu)
{
    sl_slab_cache *c = sl_slab_cache_by_id(sl, id);
    return c ? sl_slab_cache_alloc(c, cpu) : NULL;
}

SL_EXPORT int sl_api_slab_cache_free(sl_slab *sl, unsigned id, unsigned cpu, void *p)
{
    sl_slab_cache *c = sl_slab_cache_by_id(sl, id);
    return c ? sl_slab_cache_free(c, cpu, p) : SL_EINVAL;
}

SL_EXPORT int sl_api_slab_cache_destroy(sl_slab *sl, unsigned id)
{
    sl_slab_cache *c = sl_slab_cache_by_id(sl, id);
    return c ? sl_slab_cache_destroy(c) : SL_EINVAL;
}

/* Number of cache ids (destroyed caches keep their id; their info call fails). */
SL_EXPORT int sl_api_slab_cache_count(sl_slab *sl) { return (int)sl_slab_cache_count(sl); }

/* Writes the cache's sl_slab_cache_info; returns 0 or SL_EINVAL. */
SL_EXPORT int sl_api_slab_cache_info(sl_slab *sl, unsigned id, sl_slab_cache_info *out)
{
    sl_slab_cache *c = sl_slab_cache_by_id(sl, id);
    if (!c)
        return SL_EINVAL;
    sl_slab_cache_info_get(c, out);
    return SL_OK;
}

SL_EXPORT void sl_api_slab_drain_cpu(sl_slab *sl, unsigned cpu) { sl_slab_drain_cpu(sl, cpu); }

SL_EXPORT void sl_api_slab_reap(sl_slab *sl, unsigned cpu) { sl_slab_reap(sl, cpu); }

SL_EXPORT int sl_api_slab_shrink(sl_slab *sl) { return (int)sl_slab_shrink(sl); }

/* sl_slab_validate; `why` (may be 0) gets a message of up to `whylen` bytes. */
SL_EXPORT int sl_api_slab_validate(sl_slab *sl, char *why, unsigned whylen)
{
    return sl_slab_validate(sl, why, whylen);
}
