/*
 * free.c - the freeing side of mm/slab.c: ___cache_free (push on the CPU's
 * array_cache), cache_flusharray (a batch to the shared array, or to
 * free_block when it is full), free_block and slab_put_obj under
 * list_lock, slab destruction outside it, drain_freelist, draining CPU
 * arrays and shrinking, kfree, and the debug checks for foreign,
 * misaligned and double frees.
 *
 * A free on CPU c touches only c's array until it overflows; then
 * batchcount objects (the oldest, at the bottom of the array) go to the
 * node under list_lock.  A remote free (an object allocated on another
 * CPU) is no different: SLAB has no notion of an object's owner CPU.
 *
 * Debug checks (not in SLABLAB_BENCH builds) run before anything changes,
 * so a rejected free leaves the allocator as it was.
 */
#include "slab_internal.h"

#include <string.h>

static slab_list *node_list(sl_slab_node *n, unsigned which)
{
    return which == SLAB_LIST_FREE ? &n->free : which == SLAB_LIST_PARTIAL ? &n->partial : &n->full;
}

/* slab_put_obj: the object's index goes back at position active-1. */
static void slab_put_obj(sl_slab_cache *c, sl_page *pg, void *obj, unsigned cpu)
{
    slab_page *s = SLAB_OF(pg);
    unsigned objnr = sli_slab_obj_to_index(c, s, obj);
    unsigned moved = 0;
    s->active--;
    if (!s->freelist) { /* OBJFREELIST slab that was full: this object becomes the array */
        s->freelist = obj;
        moved = 1;
    }
    ((freelist_idx_t *)s->freelist)[s->active] = (freelist_idx_t)objnr;
    SLI_EV(c, cpu, SL_EV_SLAB_PUT_OBJ, sli_slab_pfn(c, pg), objnr, s->active, moved, 0);
}

void sli_slab_free_block(sl_slab_cache *c, unsigned cpu, void **objs, unsigned nr, slab_list *destroy)
{
    sl_slab_node *n = &c->node;
    sl_page_zone *z = &c->sl->zone;
    WR(n->free_objects, n->free_objects + nr);
    for (unsigned i = 0; i < nr; i++) {
        sl_page *pg = sl_page_from_addr(z, objs[i]);
        slab_page *s = SLAB_OF(pg);
        sli_slab_list_del(node_list(n, s->list), pg);
        slab_put_obj(c, pg, objs[i], cpu);
        if (s->active == 0) {
            sli_slab_list_add(&n->free, pg, SLAB_LIST_FREE);
            WR(n->free_slabs, n->free_slabs + 1);
        } else {
            /* to the tail: the most time for its other objects to come back */
            sli_slab_list_add_tail(&n->partial, pg, SLAB_LIST_PARTIAL);
        }
        SLI_EV(c, cpu, SL_EV_SLAB_LIST, sli_slab_pfn(c, pg), SL_NONE32, s->list, 0, 0);
    }
    while (n->free_objects > n->free_limit && n->free.last) {
        sl_page *pg = n->free.last;
        WR(n->free_objects, n->free_objects - c->num);
        sli_slab_list_del(&n->free, pg);
        sli_slab_list_add_tail(destroy, pg, SLAB_LIST_NONE);
        WR(n->free_slabs, n->free_slabs - 1);
        WR(n->total_slabs, n->total_slabs - 1);
        SLI_EV(c, cpu, SL_EV_SLAB_LIST, sli_slab_pfn(c, pg), SL_NONE32, SLAB_LIST_NONE, 0, 0);
    }
}

/* Clears an object's live bit (debug); returns whether it was set. */
SL_INLINE bool clear_live(sl_slab *sl, const void *obj)
{
#if SL_DEBUG
    size_t g = sli_slab_granule(sl, obj);
    uint64_t bit = 1ull << (g & 63);
    return __atomic_fetch_and(&sl->live[g >> 6], ~bit, __ATOMIC_RELAXED) & bit;
#else
    (void)sl, (void)obj;
    return true;
#endif
}

static void slab_destroy(sl_slab_cache *c, sl_page *pg, unsigned cpu)
{
    slab_page *s = SLAB_OF(pg);
    void *freelist = s->freelist;
    uint32_t pfn = sli_slab_pfn(c, pg);
    s->cache = NULL;
    int rc = sl_page_free(&c->sl->zone, pg, cpu);
    sl_assert(rc == SL_OK);
    (void)rc;
    STAT_INC(c->stats.destroyed);
    SLI_EV(c, cpu, SL_EV_SLAB_DESTROY, pfn, SL_NONE32, c->order, 0, 0);
    if (c->mgmt == SL_SLAB_OFF)
        sli_slab_cache_free_raw(c->freelist_cache, cpu, freelist);
}

void sli_slab_destroy_list(sl_slab_cache *c, unsigned cpu, slab_list *destroy)
{
    while (destroy->first) {
        sl_page *pg = destroy->first;
        sli_slab_list_del(destroy, pg);
        slab_destroy(c, pg, cpu);
    }
}

unsigned sli_slab_drain_freelist(sl_slab_cache *c, unsigned cpu, unsigned tofree)
{
    sl_slab_node *n = &c->node;
    unsigned freed = 0;
    while (freed < tofree) {
        sl_spin_lock(&n->list_lock);
        sl_page *pg = n->free.last;
        if (!pg) {
            sl_spin_unlock(&n->list_lock);
            break;
        }
        sli_slab_list_del(&n->free, pg);
        WR(n->free_slabs, n->free_slabs - 1);
        WR(n->total_slabs, n->total_slabs - 1);
        WR(n->free_objects, n->free_objects - c->num);
        sl_spin_unlock(&n->list_lock);
        slab_destroy(c, pg, cpu);
        freed++;
    }
    return freed;
}

static SL_NOINLINE void cache_flusharray(sl_slab_cache *c, sl_slab_array *ac, unsigned cpu)
{
    sl_slab_node *n = &c->node;
    unsigned batchcount = ac->batchcount;
    slab_list destroy = {0};
    unsigned to_shared = 0;
    sl_spin_lock(&n->list_lock);
    sl_slab_array *shared = n->shared;
    if (shared && shared->limit > shared->avail) {
        unsigned max = shared->limit - shared->avail;
        if (batchcount > max)
            batchcount = max;
        memcpy(&shared->entry[shared->avail], ac->entry, sizeof(void *) * batchcount);
        WR(shared->avail, shared->avail + batchcount);
        to_shared = 1;
    } else {
        sli_slab_free_block(c, cpu, ac->entry, batchcount, &destroy);
    }
    sl_spin_unlock(&n->list_lock);
    SLI_EV(c, cpu, SL_EV_SLAB_FLUSH, SL_NONE32, SL_NONE32, batchcount, to_shared, 0);
    sli_slab_destroy_list(c, cpu, &destroy);
    ac->avail -= batchcount;
    memmove(ac->entry, &ac->entry[batchcount], sizeof(void *) * ac->avail);
}

/* ___cache_free. */
SL_INLINE void cache_free(sl_slab_cache *c, unsigned cpu, void *obj)
{
    sl_slab_array *ac = c->cpu[cpu];
    if (SL_LIKELY(ac->avail < ac->limit)) {
        CPU_STAT_INC(ac->free_hit);
    } else {
        CPU_STAT_INC(ac->free_miss);
        cache_flusharray(c, ac, cpu);
    }
    ac->entry[ac->avail++] = obj;
    SLI_EV(c, cpu, SL_EV_SLAB_FREE_HIT, SL_NONE32, SL_NONE32, ac->avail, 0, 0);
}

void sli_slab_cache_free_raw(sl_slab_cache *c, unsigned cpu, void *obj)
{
    bool was_live = clear_live(c->sl, obj);
    sl_assert(was_live);
    (void)was_live;
    cache_free(c, cpu, obj);
}

#if SL_DEBUG
/* The checks of cache_free_debugcheck, as error codes; nothing changes unless they pass. */
static int free_check(sl_slab_cache *c, sl_page *pg, const void *obj)
{
    if (!pg || SLAB_OF(pg)->cache != c)
        return SL_EFOREIGN;
    const slab_page *s = SLAB_OF(pg);
    const unsigned char *p = obj;
    if (p < s->s_mem || (size_t)(p - s->s_mem) % c->size || (size_t)(p - s->s_mem) / c->size >= c->num)
        return SL_EMISALIGNED;
    if (!clear_live(c->sl, obj))
        return SL_EDOUBLEFREE;
    return SL_OK;
}
#endif

static void op_event(sl_slab *sl, unsigned cpu, unsigned kind, uint32_t op, uint32_t code, uint32_t cache, int rc)
{
#if defined(SLABLAB_BENCH)
    (void)sl, (void)cpu, (void)kind, (void)op, (void)code, (void)cache, (void)rc;
#else
    sl_trace *tr = sl->trace;
    if (tr && tr->enabled && cpu < tr->ncpus) {
        sl_event ev = {.op = op, .cpu = (uint16_t)cpu, .kind = (uint16_t)kind, .cache = (uint16_t)cache,
                       .flags = 0, .slab = SL_NONE32, .obj = SL_NONE32, .arg0 = code, .arg1 = (uint32_t)rc,
                       .arg2 = 0};
        sl_trace_emit(tr, &ev);
    }
#endif
}

/* The shared end of kmem_cache_free and kfree: `pg` is the object's head page (or NULL). */
SL_INLINE int free_common(sl_slab_cache *c, sl_page *pg, unsigned cpu, void *obj, uint32_t opcode)
{
    sl_slab *sl = c->sl;
    if (SL_UNLIKELY(cpu >= sl->ncpus))
        return SL_EINVAL;
    uint32_t op = SL_OP_BEGIN(sl->trace);
    op_event(sl, cpu, SL_EV_OP_BEGIN, op, opcode, c->id, 0);
#if SL_DEBUG
    int rc = free_check(c, pg, obj);
    if (rc != SL_OK) {
        SLI_EV(c, cpu, SL_EV_ERROR, SL_NONE32, SL_NONE32, (uint32_t)rc, 0, 0);
        op_event(sl, cpu, SL_EV_OP_END, op, opcode, c->id, rc);
        return rc;
    }
#else
    (void)pg;
#endif
    cache_free(c, cpu, obj);
    op_event(sl, cpu, SL_EV_OP_END, op, opcode, c->id, 0);
    return SL_OK;
}

int sl_slab_cache_free(sl_slab_cache *c, unsigned cpu, void *obj)
{
#if SL_DEBUG
    sl_page *pg = sl_page_from_addr(&c->sl->zone, obj);
#else
    sl_page *pg = NULL;
#endif
    return free_common(c, pg, cpu, obj, SL_SLAB_OP_FREE);
}

int sl_slab_kfree(sl_slab *sl, unsigned cpu, const void *ptr)
{
    if (!ptr)
        return SL_OK;
    sl_page *pg = sl_page_from_addr(&sl->zone, ptr);
    sl_slab_cache *c = pg ? SLAB_OF(pg)->cache : NULL;
    if (SL_UNLIKELY(!c)) {
        /* outside the arena, in a free block, or in a slab not yet set up */
        op_event(sl, cpu, SL_EV_ERROR, 0, (uint32_t)SL_EFOREIGN, 0xffff, 0);
        return SL_EFOREIGN;
    }
    return free_common(c, pg, cpu, (void *)ptr, SL_SLAB_OP_KFREE);
}

/*
 * drain_array_locked: moves all of an array (free_all), or (limit + 4) / 5
 * of it but no more than about half, from its bottom (the oldest) to
 * free_block.  list_lock held.  Returns the count.
 */
static unsigned drain_array_locked(sl_slab_cache *c, sl_slab_array *ac, unsigned cpu, bool free_all,
                                   slab_list *destroy)
{
    unsigned avail = ac->avail;
    if (!avail)
        return 0;
    unsigned tofree = free_all ? avail : (ac->limit + 4) / 5;
    if (tofree > avail)
        tofree = (avail + 1) / 2;
    sli_slab_free_block(c, cpu, ac->entry, tofree, destroy);
    WR(ac->avail, avail - tofree);
    memmove(ac->entry, &ac->entry[tofree], sizeof(void *) * (avail - tofree));
    return tofree;
}

/* Takes list_lock, drains, destroys what free_block let go; returns the count drained. */
static unsigned drain_array(sl_slab_cache *c, sl_slab_array *ac, unsigned cpu, bool shared, bool free_all)
{
    slab_list destroy = {0};
    sl_spin_lock(&c->node.list_lock);
    unsigned nr = drain_array_locked(c, ac, cpu, free_all, &destroy);
    sl_spin_unlock(&c->node.list_lock);
    if (nr)
        SLI_EV(c, cpu, SL_EV_SLAB_DRAIN, SL_NONE32, SL_NONE32, nr, shared, 0);
    sli_slab_destroy_list(c, cpu, &destroy);
    return nr;
}

void sl_slab_drain_cpu(sl_slab *sl, unsigned cpu)
{
    if (cpu >= sl->ncpus)
        return;
    /* Newest caches first: their off-slab freelists go back to the kmalloc caches, drained after. */
    for (unsigned id = sl->ncaches; id-- > 0;) {
        sl_slab_cache *c = sl->caches[id];
        if (c && c->cpu[cpu]->avail)
            drain_array(c, c->cpu[cpu], cpu, false, true);
    }
}

void sl_slab_reap(sl_slab *sl, unsigned cpu)
{
    if (cpu >= sl->ncpus)
        return;
    for (unsigned id = sl->ncaches; id-- > 0;) {
        sl_slab_cache *c = sl->caches[id];
        if (!c)
            continue;
        sl_slab_node *n = &c->node;
        /* drain_array on this CPU's array: a touched array is only untouched. */
        sl_slab_array *ac = c->cpu[cpu];
        if (ac->avail) {
            if (ac->touched)
                ac->touched = 0;
            else
                drain_array(c, ac, cpu, false, false);
        }
        /* The node part (REAPTIMEOUT_NODE has passed): the shared array, then free slabs. */
        slab_list destroy = {0};
        unsigned tofree = 0, nr = 0;
        sl_spin_lock(&n->list_lock);
        if (n->shared && n->shared->avail) {
            if (n->shared->touched)
                n->shared->touched = 0;
            else
                nr = drain_array_locked(c, n->shared, cpu, false, &destroy);
        }
        if (n->free_touched)
            n->free_touched = 0;
        else
            tofree = (unsigned)((n->free_limit + 5 * c->num - 1) / (5 * c->num));
        sl_spin_unlock(&n->list_lock);
        if (nr)
            SLI_EV(c, cpu, SL_EV_SLAB_DRAIN, SL_NONE32, SL_NONE32, nr, 1, 0);
        sli_slab_destroy_list(c, cpu, &destroy);
        if (tofree)
            sli_slab_drain_freelist(c, cpu, tofree);
    }
}

unsigned sl_slab_shrink(sl_slab *sl)
{
    unsigned freed = 0;
    for (unsigned id = sl->ncaches; id-- > 0;) {
        sl_slab_cache *c = sl->caches[id];
        if (!c)
            continue;
        unsigned long before = RD(c->stats.destroyed);
        for (unsigned cpu = 0; cpu < sl->ncpus; cpu++)
            if (c->cpu[cpu]->avail)
                drain_array(c, c->cpu[cpu], 0, false, true);
        if (c->node.shared && c->node.shared->avail)
            drain_array(c, c->node.shared, 0, true, true);
        sli_slab_drain_freelist(c, 0, UINT32_MAX);
        freed += (unsigned)(RD(c->stats.destroyed) - before);
    }
    if (sl->trace && sl->trace->enabled && sl->ncaches)
        SLI_EV(sl->caches[0], 0, SL_EV_SLAB_SHRINK, SL_NONE32, SL_NONE32, freed, 0, 0);
    return freed;
}
