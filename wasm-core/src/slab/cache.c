/*
 * cache.c - the SLAB world and its caches: creation (the kmalloc caches at
 * boot, then kmem_cache_create), enable_cpucache's array sizes, node list
 * helpers, cache info, and teardown.
 *
 * Creation and destruction are quiescent (the kernel holds slab_mutex and
 * IPIs every CPU); afterwards a cache's geometry and limits are read-only
 * and everything that changes is described in slab_internal.h.
 */
#include "slab_internal.h"

#include <stdlib.h>
#include <string.h>

#if !defined(SLABLAB_BENCH)
void sli_slab_event(const sl_slab_cache *c, unsigned cpu, unsigned kind, uint32_t slab, uint32_t obj, uint32_t a0,
                    uint32_t a1, uint32_t a2)
{
    sl_trace *tr = c->sl->trace;
    if (!tr || !tr->enabled || cpu >= tr->ncpus)
        return;
    sl_event ev = {.op = 0, .cpu = (uint16_t)cpu, .kind = (uint16_t)kind, .cache = (uint16_t)c->id,
                   .flags = 0, .slab = slab, .obj = obj, .arg0 = a0, .arg1 = a1, .arg2 = a2};
    sl_trace_emit(tr, &ev);
}
#endif

void sli_slab_list_add(slab_list *l, sl_page *pg, unsigned which)
{
    slab_page *s = SLAB_OF(pg);
    s->list = which;
    s->prev = NULL;
    s->next = l->first;
    if (l->first)
        SLAB_OF(l->first)->prev = pg;
    else
        l->last = pg;
    l->first = pg;
    l->n++;
}

void sli_slab_list_add_tail(slab_list *l, sl_page *pg, unsigned which)
{
    slab_page *s = SLAB_OF(pg);
    s->list = which;
    s->next = NULL;
    s->prev = l->last;
    if (l->last)
        SLAB_OF(l->last)->next = pg;
    else
        l->first = pg;
    l->last = pg;
    l->n++;
}

void sli_slab_list_del(slab_list *l, sl_page *pg)
{
    slab_page *s = SLAB_OF(pg);
    if (s->prev)
        SLAB_OF(s->prev)->next = s->next;
    else
        l->first = s->next;
    if (s->next)
        SLAB_OF(s->next)->prev = s->prev;
    else
        l->last = s->prev;
    s->next = s->prev = NULL;
    s->list = SLAB_LIST_NONE;
    l->n--;
}

/* lib/reciprocal_div.c reciprocal_value(). */
static void reciprocal_value(sl_slab_cache *c, uint32_t d)
{
    unsigned l = d > 1 ? 32u - (unsigned)__builtin_clz(d - 1) : 0;
    uint64_t m = ((1ull << 32) * ((1ull << l) - d)) / d + 1;
    c->reciprocal_m = (uint32_t)m;
    c->reciprocal_sh1 = (uint8_t)(l < 1 ? l : 1);
    c->reciprocal_sh2 = (uint8_t)(l > 1 ? l - 1 : 0);
}

static sl_slab_array *array_new(unsigned entries, unsigned batchcount)
{
    size_t bytes = sizeof(sl_slab_array) + sizeof(void *) * entries;
    bytes = (bytes + SL_CACHELINE - 1) / SL_CACHELINE * SL_CACHELINE;
    sl_slab_array *a = sl_os_alloc_aligned(bytes, SL_CACHELINE);
    if (a)
        *a = (sl_slab_array){.avail = 0, .limit = entries, .batchcount = batchcount, .touched = 0};
    return a;
}

static void cache_free_struct(sl_slab_cache *c)
{
    if (c->cpu)
        for (unsigned i = 0; i < c->sl->ncpus; i++)
            sl_os_free(c->cpu[i]);
    free(c->cpu);
    sl_os_free(c->node.shared);
    sl_os_free(c);
}

/* __kmem_cache_create + enable_cpucache + setup_kmem_cache_node. */
static int cache_new(sl_slab *sl, const sl_slab_spec *spec, sl_slab_cache **out)
{
    sl_slab_geometry g;
    int rc = sl_slab_geometry_compute(spec, &sl->kt, &g);
    if (rc != SL_OK)
        return rc;
    if (sl->ncaches == SL_SLAB_MAX_CACHES)
        return SL_EINVAL;
    sl_slab_cache *c = sl_os_alloc_aligned((sizeof *c + SL_CACHELINE - 1) / SL_CACHELINE * SL_CACHELINE,
                                           SL_CACHELINE);
    if (!c)
        return SL_ENOMEM;
    memset(c, 0, sizeof *c);
    c->sl = sl;
    c->id = sl->ncaches;
    memcpy(c->name, spec->name, sizeof c->name);
    c->name[sizeof c->name - 1] = 0;
    c->object_size = spec->object_size;
    c->g = g;
    c->size = g.size;
    c->num = g.num;
    c->order = g.order;
    c->colour = g.colour;
    c->colour_off = g.colour_off;
    c->freelist_size = g.freelist_size;
    c->mgmt = g.mgmt;
    reciprocal_value(c, g.size);
    if (g.mgmt == SL_SLAB_OFF)
        c->freelist_cache = sl->caches[sl_slab_kmalloc_index(g.freelist_size)];

    /* enable_cpucache: the kernel's guesses by buffer size. */
    unsigned limit = g.size > 131072 ? 1 : g.size > SL_PAGE_SIZE ? 8 : g.size > 1024 ? 24 : g.size > 256 ? 54 : 120;
    unsigned shared = g.size <= SL_PAGE_SIZE && sl->ncpus > 1 ? 8 : 0;
    c->limit = limit;
    c->batchcount = (limit + 1) / 2;
    c->shared_limit = shared * c->batchcount;

    c->cpu = calloc(sl->ncpus, sizeof *c->cpu);
    rc = c->cpu ? SL_OK : SL_ENOMEM;
    for (unsigned i = 0; rc == SL_OK && i < sl->ncpus; i++)
        if (!(c->cpu[i] = array_new(limit, c->batchcount)))
            rc = SL_ENOMEM;
    if (rc == SL_OK && c->shared_limit && !(c->node.shared = array_new(c->shared_limit, 0xbaadf00du)))
        rc = SL_ENOMEM;
    if (rc != SL_OK) {
        cache_free_struct(c);
        return rc;
    }
    c->node.list_lock = (sl_spinlock)SL_SPINLOCK_INIT;
    c->node.free_limit = (1ul + sl->ncpus) * c->batchcount + c->num;
    sl->caches[sl->ncaches++] = c;
    SLI_EV(c, 0, SL_EV_SLAB_CACHE_CREATE, SL_NONE32, SL_NONE32, c->size, c->num, c->order | (unsigned)c->mgmt << 8);
    *out = c;
    return SL_OK;
}

int sl_slab_create(const sl_slab_config *cfg, sl_slab **out)
{
    if (!cfg || !out || cfg->ncpus < 1 || cfg->ncpus > SL_SLAB_MAX_CPUS || cfg->arena_bytes < ((size_t)8 << 20) ||
        (cfg->rules != SL_SLAB_RULES_BEFORE && cfg->rules != SL_SLAB_RULES_AFTER) ||
        (cfg->trace && cfg->trace->ncpus < cfg->ncpus))
        return SL_EINVAL;
    sl_slab *sl = calloc(1, sizeof *sl);
    if (!sl)
        return SL_ENOMEM;
    sl->ncpus = cfg->ncpus;
    sl->rules = cfg->rules;
    sl->trace = cfg->trace;
    int rc = sl_page_zone_init(&sl->zone, cfg->arena_bytes, cfg->trace);
    if (rc != SL_OK) {
        free(sl);
        return rc;
    }
#if SL_DEBUG
    size_t granules = ((size_t)sl->zone.npages << SL_PAGE_SHIFT) >> 4;
    sl->live = calloc((granules + 63) / 64, sizeof(uint64_t));
    if (!sl->live) {
        sl_page_zone_destroy(&sl->zone);
        free(sl);
        return SL_ENOMEM;
    }
#endif
    sl_slab_kmalloc_table_init(&sl->kt, cfg->rules);
    for (unsigned i = 0; i < SL_SLAB_NKMALLOC && rc == SL_OK; i++) {
        sl_slab_spec spec = {.object_size = sl_slab_kmalloc_size(i), .flags = SL_SLAB_HWCACHE_ALIGN};
        sl_slab_kmalloc_name(i, spec.name, sizeof spec.name);
        sl_slab_cache *c;
        rc = cache_new(sl, &spec, &c);
    }
    if (rc != SL_OK) {
        sl_slab_destroy(sl);
        return rc;
    }
    *out = sl;
    return SL_OK;
}

void sl_slab_destroy(sl_slab *sl)
{
    if (!sl)
        return;
    for (unsigned i = 0; i < sl->ncaches; i++)
        if (sl->caches[i])
            cache_free_struct(sl->caches[i]);
    sl_page_zone_destroy(&sl->zone);
#if SL_DEBUG
    free(sl->live);
#endif
    free(sl);
}

sl_page_zone *sl_slab_zone(sl_slab *sl) { return &sl->zone; }

int sl_slab_cache_create(sl_slab *sl, const sl_slab_spec *spec, sl_slab_cache **out)
{
    if (!sl || !spec || !out)
        return SL_EINVAL;
    return cache_new(sl, spec, out);
}

int sl_slab_cache_destroy(sl_slab_cache *c)
{
    if (!c || c->id < SL_SLAB_NKMALLOC)
        return SL_EINVAL; /* the kmalloc caches live as long as the world */
    sl_slab *sl = c->sl;
    /* __kmem_cache_shutdown: drain every array, free the free slabs. */
    slab_list destroy = {0};
    sl_spin_lock(&c->node.list_lock);
    for (unsigned i = 0; i < sl->ncpus; i++) {
        sl_slab_array *ac = c->cpu[i];
        sli_slab_free_block(c, i, ac->entry, ac->avail, &destroy);
        ac->avail = 0;
    }
    if (c->node.shared) {
        sli_slab_free_block(c, 0, c->node.shared->entry, c->node.shared->avail, &destroy);
        WR(c->node.shared->avail, 0);
    }
    sl_spin_unlock(&c->node.list_lock);
    sli_slab_destroy_list(c, 0, &destroy);
    sli_slab_drain_freelist(c, 0, UINT32_MAX);
    if (c->node.total_slabs)
        return SL_EBUSY;
    sl->caches[c->id] = NULL;
    cache_free_struct(c);
    return SL_OK;
}

sl_slab_cache *sl_slab_kmalloc_cache(sl_slab *sl, size_t size)
{
    int i = sl_slab_kmalloc_index(size);
    return i < 0 ? NULL : sl->caches[i];
}

unsigned sl_slab_cache_count(sl_slab *sl) { return sl->ncaches; }

sl_slab_cache *sl_slab_cache_by_id(sl_slab *sl, unsigned id) { return id < sl->ncaches ? sl->caches[id] : NULL; }

void sl_slab_cache_info_get(const sl_slab_cache *c, sl_slab_cache_info *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out->name, c->name, sizeof out->name);
    out->id = c->id;
    out->object_size = c->object_size;
    out->g = c->g;
    out->limit = c->limit;
    out->batchcount = c->batchcount;
    out->shared_limit = c->shared_limit;
    out->total_slabs = RD(c->node.total_slabs);
    out->free_slabs = RD(c->node.free_slabs);
    out->free_objects = RD(c->node.free_objects);
    out->active_objs = out->total_slabs * c->num - out->free_objects;
    out->grown = RD(c->stats.grown);
    out->destroyed = RD(c->stats.destroyed);
    for (unsigned i = 0; i < c->sl->ncpus; i++) {
        const sl_slab_array *ac = c->cpu[i];
        out->alloc_hit += RD(ac->alloc_hit);
        out->alloc_miss += RD(ac->alloc_miss);
        out->free_hit += RD(ac->free_hit);
        out->free_miss += RD(ac->free_miss);
        out->cpu_avail += RD(ac->avail);
    }
    if (c->node.shared)
        out->shared_avail = RD(c->node.shared->avail);
}
