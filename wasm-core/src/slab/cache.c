/*
 * cache.c - the SLAB world and its caches: creation (the kmalloc caches at
 * boot, in kmem_cache_init's order, then kmem_cache_create), enable_cpucache's
 * array sizes, node list helpers, events and operation brackets, object
 * references, cache info, and teardown.
 *
 * Creation and destruction are quiescent (the kernel holds slab_mutex and
 * IPIs every CPU); afterwards a cache's geometry and limits are read-only
 * and everything that changes is described in slab_internal.h.
 */
#include "slab_internal.h"

#include <stdlib.h>
#include <string.h>

#if !defined(SLABLAB_BENCH)
void sli_slab_event(const sl_slab *sl, unsigned cache, unsigned cpu, unsigned kind, uint32_t slab, uint32_t obj,
                    uint32_t a0, uint32_t a1, uint32_t a2)
{
    sl_trace *tr = sl->trace;
    if (!tr || !tr->enabled || cpu >= tr->ncpus)
        return;
    sl_event ev = {.op = sl->cur_op[cpu],
                   .cpu = (uint16_t)cpu,
                   .kind = (uint16_t)kind,
                   .cache = (uint16_t)cache,
                   .flags = 0,
                   .slab = slab,
                   .obj = obj,
                   .arg0 = a0,
                   .arg1 = a1,
                   .arg2 = a2};
    sl_trace_emit(tr, &ev);
}
#endif

uint32_t sli_slab_op_begin(sl_slab *sl, unsigned cpu, unsigned cache, uint32_t code, uint32_t arg)
{
#if defined(SLABLAB_BENCH)
    (void)sl, (void)cpu, (void)cache, (void)code, (void)arg;
    return 0;
#else
    uint32_t op = SL_OP_BEGIN(sl->trace);
    sl->cur_op[cpu] = op;
    sli_slab_event(sl, cache, cpu, SL_EV_OP_BEGIN, SL_NONE32, SL_NONE32, code, arg, 0);
    return op;
#endif
}

void sli_slab_op_end(sl_slab *sl, unsigned cpu, unsigned cache, uint32_t op, uint32_t code, uint32_t result)
{
#if defined(SLABLAB_BENCH)
    (void)sl, (void)cpu, (void)cache, (void)op, (void)code, (void)result;
#else
    sl->cur_op[cpu] = op;
    sli_slab_event(sl, cache, cpu, SL_EV_OP_END, SL_NONE32, SL_NONE32, code, result, 0);
    sl->cur_op[cpu] = 0;
#endif
}

uint32_t sli_slab_obj_pfn(const sl_slab_cache *c, const void *obj)
{
    sl_page *pg = sl_page_from_addr(&c->sl->zone, obj);
    return pg && SLAB_OF(pg)->cache == c ? sl_page_pfn(&c->sl->zone, pg) : SL_NONE32;
}

uint32_t sli_slab_obj_index(const sl_slab_cache *c, const void *obj)
{
    sl_page *pg = sl_page_from_addr(&c->sl->zone, obj);
    return pg && SLAB_OF(pg)->cache == c ? sli_slab_obj_to_index(c, SLAB_OF(pg), obj) : SL_NONE32;
}

uint32_t sli_slab_freelist_ref(const sl_slab_cache *c, const void *freelist)
{
    if (c->mgmt != SL_SLAB_OFF)
        return SL_NONE32;
    return sli_slab_obj_pfn(c->freelist_cache, freelist) << 8 | sli_slab_obj_index(c->freelist_cache, freelist);
}

bool sl_slab_object_ref(sl_slab *sl, const void *obj, uint32_t *pfn, uint32_t *index)
{
    sl_page *pg = sl_page_from_addr(&sl->zone, obj);
    const slab_page *s = pg ? SLAB_OF(pg) : NULL;
    if (!s || !s->cache)
        return false;
    const sl_slab_cache *c = s->cache;
    const unsigned char *p = obj;
    if (p < s->s_mem || (size_t)(p - s->s_mem) % c->size || (size_t)(p - s->s_mem) / c->size >= c->num)
        return false;
    *pfn = sl_page_pfn(&sl->zone, pg);
    *index = (uint32_t)((size_t)(p - s->s_mem) / c->size);
    return true;
}

void *sl_slab_object_at(sl_slab_cache *c, uint32_t pfn, uint32_t index)
{
    sl_page *pg = sl_page_from_pfn(&c->sl->zone, pfn);
    if (!pg || pg->flags != SL_PG_HEAD || SLAB_OF(pg)->cache != c || index >= c->num)
        return NULL;
    return sli_slab_index_to_obj(c, SLAB_OF(pg), index);
}

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

/*
 * __kmem_cache_create (its geometry `g` computed by the caller) +
 * enable_cpucache + setup_kmem_cache_node.
 */
static int cache_new(sl_slab *sl, const sl_slab_spec *spec, const sl_slab_geometry *gp, unsigned id,
                     sl_slab_cache **out)
{
    const sl_slab_geometry g = *gp;
    int rc;
    if (id >= SL_SLAB_MAX_CACHES)
        return SL_EINVAL;
    sl_slab_cache *c = sl_os_alloc_aligned((sizeof *c + SL_CACHELINE - 1) / SL_CACHELINE * SL_CACHELINE, SL_CACHELINE);
    if (!c)
        return SL_ENOMEM;
    memset(c, 0, sizeof *c);
    c->sl = sl;
    c->id = id;
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
    c->init_on_free = sl->kt.variant.init_on_free && !(spec->flags & (SL_SLAB_CTOR | SL_SLAB_TYPESAFE_RCU));
    reciprocal_value(c, g.size);
    if (g.mgmt == SL_SLAB_OFF)
        c->freelist_cache = sl->caches[sl_slab_kmalloc_index(g.freelist_size)];

    sl_slab_tunables t = sl_slab_tunables_for(g.size, sl->ncpus);
    c->limit = t.limit;
    c->batchcount = t.batchcount;
    c->shared_limit = t.shared * t.batchcount;

    c->cpu = calloc(sl->ncpus, sizeof *c->cpu);
    rc = c->cpu ? SL_OK : SL_ENOMEM;
    for (unsigned i = 0; rc == SL_OK && i < sl->ncpus; i++)
        if (!(c->cpu[i] = array_new(c->limit, c->batchcount)))
            rc = SL_ENOMEM;
    if (rc == SL_OK && c->shared_limit && !(c->node.shared = array_new(c->shared_limit, 0xbaadf00du)))
        rc = SL_ENOMEM;
    if (rc != SL_OK) {
        cache_free_struct(c);
        return rc;
    }
    c->node.list_lock = (sl_spinlock)SL_SPINLOCK_INIT;
    c->node.free_limit = (1ul + sl->ncpus) * c->batchcount + c->num;
    /* setup_cpu_cache: the kernel adds the cache's address modulo REAPTIMEOUT_NODE; a stagger by id here. */
    c->node.next_reap = RD(sl->reap_clock) + SL_SLAB_REAP_NODE_MS + (id % 4) * 1000u;
    sl->caches[id] = c;
    if (id >= sl->ncaches)
        sl->ncaches = id + 1;
    SLI_EV(c, 0, SL_EV_SLAB_CACHE_CREATE, SL_NONE32, SL_NONE32, c->size, c->num, c->order | (unsigned)c->mgmt << 8);
    *out = c;
    return SL_OK;
}

int sl_slab_create(const sl_slab_config *cfg, sl_slab **out)
{
    /* Events name an off-slab freelist object as pfn << 8 | index: pfns must fit in 24 bits. */
    if (!cfg || !out || cfg->ncpus < 1 || cfg->ncpus > SL_SLAB_MAX_CPUS || cfg->arena_bytes < ((size_t)8 << 20) ||
        (uint64_t)cfg->arena_bytes > (uint64_t)SL_PAGE_SIZE << 24 || (cfg->trace && cfg->trace->ncpus < cfg->ncpus))
        return SL_EINVAL;
    sl_slab *sl = calloc(1, sizeof *sl);
    if (!sl)
        return SL_ENOMEM;
    int rc = sl_slab_kmalloc_table_init(&sl->kt, &cfg->variant);
    if (rc != SL_OK) {
        free(sl);
        return rc;
    }
    sl->ncpus = cfg->ncpus;
    sl->trace = cfg->trace;
    sl->kmalloc_max_cache = sl_slab_kmalloc_max_cache(&sl->kt);
    rc = sl_page_zone_init(&sl->zone, cfg->arena_bytes, cfg->trace);
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
    /* kmem_cache_init's order (sl_slab_kmalloc_table_init); ids stay the kmalloc indexes. */
    sl->ncaches = SL_SLAB_NKMALLOC;
    for (unsigned step = 0; step < sl->kt.nkmalloc && rc == SL_OK; step++) {
        unsigned i = sl_slab_kmalloc_boot_index(step);
        sl_slab_spec spec = sl_slab_kmalloc_spec(&sl->kt, i);
        sl_slab_cache *c;
        rc = cache_new(sl, &spec, &sl->kt.g[i], i, &c); /* the geometry it got at boot */
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

const sl_slab_kmalloc_table *sl_slab_kmalloc_table_of(const sl_slab *sl) { return &sl->kt; }

int sl_slab_cache_create(sl_slab *sl, const sl_slab_spec *spec, sl_slab_cache **out)
{
    if (!sl || !spec || !out)
        return SL_EINVAL;
    sl_slab_geometry g;
    int rc = sl_slab_geometry_compute(spec, &sl->kt, &g);
    return rc == SL_OK ? cache_new(sl, spec, &g, sl->ncaches, out) : rc;
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
    return i < 0 || (unsigned)i >= sl->kt.nkmalloc ? NULL : sl->caches[i];
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
