/*
 * free.c - the freeing side of mm/slab.c: ___cache_free (push on the CPU's
 * array_cache), cache_flusharray (a batch to the shared array, or to
 * free_block when it is full), free_block and slab_put_obj under
 * list_lock, slab destruction outside it, drain_freelist, draining CPU
 * arrays, cache_reap and shrinking, kfree (kmalloc_large blocks included),
 * and the debug checks for foreign, misaligned and double frees.
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
    SLI_EV(c, cpu, SL_EV_SLAB_DESTROY, pfn, SL_NONE32, c->order, sli_slab_freelist_ref(c, freelist), 0);
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
    if (freed)
        SLI_EV(c, cpu, SL_EV_SLAB_SHRINK, SL_NONE32, SL_NONE32, freed, 0, 0);
    return freed;
}

/*
 * cache_flusharray: the bottom `batchcount` (the oldest) entries go to the
 * shared array, as far as it has room, or else to free_block.  The FLUSH
 * event comes first, then one ARRAY_MOVE per object (to the shared array)
 * or free_block's PUT_OBJ events.
 */
static SL_NOINLINE void cache_flusharray(sl_slab_cache *c, sl_slab_array *ac, unsigned cpu)
{
    sl_slab_node *n = &c->node;
    unsigned batchcount = ac->batchcount;
    slab_list destroy = {0};
    sl_spin_lock(&n->list_lock);
    sl_slab_array *shared = n->shared;
    if (shared && shared->limit > shared->avail) {
        unsigned max = shared->limit - shared->avail;
        if (batchcount > max)
            batchcount = max;
        SLI_EV(c, cpu, SL_EV_SLAB_FLUSH, SL_NONE32, SL_NONE32, batchcount, 1, 0);
        for (unsigned i = 0; i < batchcount; i++)
            SLI_EV(c, cpu, SL_EV_SLAB_ARRAY_MOVE, sli_slab_obj_pfn(c, ac->entry[i]),
                   sli_slab_obj_index(c, ac->entry[i]), cpu, 0xffffu, shared->avail + i);
        memcpy(&shared->entry[shared->avail], ac->entry, sizeof(void *) * batchcount);
        WR(shared->avail, shared->avail + batchcount);
    } else {
        SLI_EV(c, cpu, SL_EV_SLAB_FLUSH, SL_NONE32, SL_NONE32, batchcount, 0, 0);
        sli_slab_free_block(c, cpu, ac->entry, batchcount, &destroy);
    }
    sl_spin_unlock(&n->list_lock);
    sli_slab_destroy_list(c, cpu, &destroy);
    ac->avail -= batchcount;
    memmove(ac->entry, &ac->entry[batchcount], sizeof(void *) * ac->avail);
}

/* ___cache_free. */
SL_INLINE void cache_free(sl_slab_cache *c, unsigned cpu, void *obj)
{
    sl_slab_array *ac = c->cpu[cpu];
    if (SL_UNLIKELY(c->init_on_free))
        memset(obj, 0, c->object_size);
    if (SL_LIKELY(ac->avail < ac->limit)) {
        CPU_STAT_INC(ac->free_hit);
    } else {
        CPU_STAT_INC(ac->free_miss);
        cache_flusharray(c, ac, cpu);
    }
    ac->entry[ac->avail++] = obj;
    SLI_EV(c, cpu, SL_EV_SLAB_FREE_HIT, sli_slab_obj_pfn(c, obj), sli_slab_obj_index(c, obj), ac->avail, 0, 0);
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

/* The shared end of kmem_cache_free and kfree: `pg` is the object's head page (or NULL). */
SL_INLINE int free_common(sl_slab_cache *c, sl_page *pg, unsigned cpu, void *obj, uint32_t opcode)
{
    sl_slab *sl = c->sl;
    if (SL_UNLIKELY(cpu >= sl->ncpus))
        return SL_EINVAL;
    uint32_t op = sli_slab_op_begin(sl, cpu, c->id, opcode, 0);
#if SL_DEBUG
    int rc = free_check(c, pg, obj);
    if (rc != SL_OK) {
        SLI_EV(c, cpu, SL_EV_ERROR, SL_NONE32, SL_NONE32, (uint32_t)rc, 0, 0);
        sli_slab_op_end(sl, cpu, c->id, op, opcode, (uint32_t)rc);
        return rc;
    }
#else
    (void)pg;
#endif
    cache_free(c, cpu, obj);
    sli_slab_op_end(sl, cpu, c->id, op, opcode, 0);
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

/* kfree of a kmalloc_large block (`pg` its head page); kernel: free_large_kmalloc. */
static SL_NOINLINE int kfree_large(sl_slab *sl, unsigned cpu, sl_page *pg, const void *ptr)
{
    uint32_t op = sli_slab_op_begin(sl, cpu, 0xffff, SL_SLAB_OP_KFREE, 0);
    int rc = SL_OK;
    if (ptr != sl_page_address(&sl->zone, pg))
        rc = SL_EMISALIGNED;
    else if (!clear_live(sl, ptr))
        rc = SL_EDOUBLEFREE; /* another CPU is freeing it right now */
    if (rc == SL_OK) {
        uint32_t pfn = sl_page_pfn(&sl->zone, pg);
        unsigned order = sl_page_order(pg);
        WR(SLAB_OF(pg)->list, SLAB_LIST_NONE); /* a racing kfree of the block may be reading it */
        rc = sl_page_free(&sl->zone, pg, cpu);
        SLI_WEV(sl, cpu, SL_EV_SLAB_KMALLOC_LARGE, pfn, order, 0);
    } else {
        SLI_WEV(sl, cpu, SL_EV_ERROR, (uint32_t)rc, 0, 0);
    }
    sli_slab_op_end(sl, cpu, 0xffff, op, SL_SLAB_OP_KFREE, (uint32_t)rc);
    return rc;
}

int sl_slab_kfree(sl_slab *sl, unsigned cpu, const void *ptr)
{
    if (!ptr)
        return SL_OK;
    if (SL_UNLIKELY(cpu >= sl->ncpus))
        return SL_EINVAL;
    sl_page *pg = sl_page_from_addr(&sl->zone, ptr);
    sl_slab_cache *c = pg ? SLAB_OF(pg)->cache : NULL;
    if (SL_UNLIKELY(!c)) {
        if (pg && RD(SLAB_OF(pg)->list) == SLAB_LIST_LARGE)
            return kfree_large(sl, cpu, pg, ptr);
        /* outside the arena, in a free block, or in a slab not yet set up */
        SLI_WEV(sl, cpu, SL_EV_ERROR, (uint32_t)SL_EFOREIGN, 0, 0);
        return SL_EFOREIGN;
    }
    return free_common(c, pg, cpu, (void *)ptr, SL_SLAB_OP_KFREE);
}

/*
 * drain_array_locked: moves all of an array (free_all), or (limit + 4) / 5
 * of it but no more than about half, from its bottom (the oldest) to
 * free_block.  list_lock held.  Returns the count.  The DRAIN event comes
 * first, then free_block's PUT_OBJ events.
 */
static unsigned drain_array_locked(sl_slab_cache *c, sl_slab_array *ac, unsigned cpu, bool shared, bool free_all,
                                   slab_list *destroy)
{
    unsigned avail = ac->avail;
    if (!avail)
        return 0;
    unsigned tofree = free_all ? avail : (ac->limit + 4) / 5;
    if (tofree > avail)
        tofree = (avail + 1) / 2;
    SLI_EV(c, cpu, SL_EV_SLAB_DRAIN, SL_NONE32, SL_NONE32, tofree, shared, 0);
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
    unsigned nr = drain_array_locked(c, ac, cpu, shared, free_all, &destroy);
    sl_spin_unlock(&c->node.list_lock);
    sli_slab_destroy_list(c, cpu, &destroy);
    return nr;
}

void sl_slab_drain_cpu(sl_slab *sl, unsigned cpu)
{
    if (cpu >= sl->ncpus)
        return;
    uint32_t op = sli_slab_op_begin(sl, cpu, 0xffff, SL_SLAB_OP_DRAIN, cpu);
    unsigned drained = 0;
    /* Newest caches first: their off-slab freelists go back to the kmalloc caches, drained after. */
    for (unsigned id = sl->ncaches; id-- > 0;) {
        sl_slab_cache *c = sl->caches[id];
        if (c && c->cpu[cpu]->avail)
            drained += drain_array(c, c->cpu[cpu], cpu, false, true);
    }
    sli_slab_op_end(sl, cpu, 0xffff, op, SL_SLAB_OP_DRAIN, drained);
}

/* Raises sl->reap_clock to now_ms (a relaxed atomic maximum: CPUs reap concurrently). */
static void advance_reap_clock(sl_slab *sl, uint64_t now_ms)
{
    uint64_t seen = RD(sl->reap_clock);
    while (seen < now_ms &&
           !__atomic_compare_exchange_n(&sl->reap_clock, &seen, now_ms, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void sl_slab_reap(sl_slab *sl, unsigned cpu, uint64_t now_ms)
{
    if (cpu >= sl->ncpus)
        return;
    advance_reap_clock(sl, now_ms);
    uint32_t op = sli_slab_op_begin(sl, cpu, 0xffff, SL_SLAB_OP_REAP, (uint32_t)now_ms);
    unsigned long destroyed = 0;
    for (unsigned id = sl->ncaches; id-- > 0;) {
        sl_slab_cache *c = sl->caches[id];
        if (!c)
            continue;
        unsigned long destroyed_before = RD(c->stats.destroyed);
        sl_slab_node *n = &c->node;
        /* drain_array on this CPU's array: a touched array is only untouched. */
        sl_slab_array *ac = c->cpu[cpu];
        if (ac->avail) {
            if (ac->touched)
                ac->touched = 0;
            else
                drain_array(c, ac, cpu, false, false);
        }
        /* The node part, once REAPTIMEOUT_NODE has passed: the shared array, then free slabs. */
        slab_list destroy = {0};
        unsigned tofree = 0;
        sl_spin_lock(&n->list_lock);
        if (now_ms < n->next_reap) {
            sl_spin_unlock(&n->list_lock);
            continue;
        }
        n->next_reap = now_ms + SL_SLAB_REAP_NODE_MS;
        if (n->shared && n->shared->avail) {
            if (n->shared->touched)
                n->shared->touched = 0;
            else
                drain_array_locked(c, n->shared, cpu, true, false, &destroy);
        }
        if (n->free_touched)
            n->free_touched = 0;
        else
            tofree = (unsigned)((n->free_limit + 5 * c->num - 1) / (5 * c->num));
        SLI_EV(c, cpu, SL_EV_SLAB_REAP_NODE, SL_NONE32, SL_NONE32, (uint32_t)now_ms, (uint32_t)n->next_reap, tofree);
        sl_spin_unlock(&n->list_lock);
        sli_slab_destroy_list(c, cpu, &destroy);
        if (tofree)
            sli_slab_drain_freelist(c, cpu, tofree);
        destroyed += RD(c->stats.destroyed) - destroyed_before;
    }
    sli_slab_op_end(sl, cpu, 0xffff, op, SL_SLAB_OP_REAP, (uint32_t)destroyed);
}

unsigned sl_slab_shrink(sl_slab *sl)
{
    uint32_t op = sli_slab_op_begin(sl, 0, 0xffff, SL_SLAB_OP_SHRINK, 0);
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
    sli_slab_op_end(sl, 0, 0xffff, op, SL_SLAB_OP_SHRINK, freed);
    return freed;
}
