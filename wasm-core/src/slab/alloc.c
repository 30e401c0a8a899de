/*
 * alloc.c - the allocation side of mm/slab.c: ____cache_alloc (pop from the
 * CPU's array_cache), cache_alloc_refill (from the shared array, then from
 * partial and free slabs under list_lock, else a new slab),
 * cache_grow_begin/end, alloc_slabmgmt, cache_init_objs, slab_get_obj and
 * fixup_slab_list, and kmalloc (from 6.1, kmalloc_large above 8 KiB: whole
 * pages from the page allocator, marked SLAB_LIST_LARGE on their head page).
 *
 * The freelist array of a slab is an array of one-byte indexes; positions
 * active .. num-1 list the free objects and slab_get_obj takes the one at
 * position `active`.  Where it lives is the management type:
 *   OBJFREELIST  inside a free object of the slab.  cache_init_objs puts it
 *                in the last object, whose index sits at the last position,
 *                so that object is handed out last; when the slab becomes
 *                full, fixup_slab_list sets freelist = NULL, and the next
 *                free (slab_put_obj) makes the freed object the new home.
 *                The array's own object is always at position num-1.
 *   NORMAL       at the end of the slab: page + (PAGE_SIZE << order) - num.
 *   OFF          an object of the kmalloc cache for num bytes, allocated on
 *                the growing CPU and freed with the slab.
 * Locking is described in slab_internal.h: the CPU's array without locks
 * (its thread owns it), everything on the node under list_lock.
 */
#include "slab_internal.h"

#include <string.h>

#define BATCHREFILL_LIMIT 16

static slab_list *node_list(sl_slab_node *n, unsigned which)
{
    return which == SLAB_LIST_FREE ? &n->free : which == SLAB_LIST_PARTIAL ? &n->partial : &n->full;
}

/* Marks an object handed to a user (debug): the bit must have been clear. */
SL_INLINE void mark_live(sl_slab *sl, void *obj)
{
#if SL_DEBUG
    size_t g = sli_slab_granule(sl, obj);
    uint64_t old = __atomic_fetch_or(&sl->live[g >> 6], 1ull << (g & 63), __ATOMIC_RELAXED);
    sl_assert(!(old & (1ull << (g & 63))));
    (void)old;
#else
    (void)sl, (void)obj;
#endif
}

static void *slab_get_obj(sl_slab_cache *c, sl_page *pg, unsigned cpu)
{
    slab_page *s = SLAB_OF(pg);
    unsigned idx = ((freelist_idx_t *)s->freelist)[s->active];
    s->active++;
    SLI_EV(c, cpu, SL_EV_SLAB_GET_OBJ, sli_slab_pfn(c, pg), idx, s->active, 0, 0);
    return sli_slab_index_to_obj(c, s, idx);
}

/* Moves a slab to the list its fullness asks for (list_lock held or slab private). */
static void fixup_slab_list(sl_slab_cache *c, sl_page *pg, unsigned cpu)
{
    sl_slab_node *n = &c->node;
    slab_page *s = SLAB_OF(pg);
    if (s->list != SLAB_LIST_NONE)
        sli_slab_list_del(node_list(n, s->list), pg);
    if (s->active == c->num) {
        sli_slab_list_add(&n->full, pg, SLAB_LIST_FULL);
        if (c->mgmt == SL_SLAB_OBJFREELIST)
            s->freelist = NULL; /* its home was the last object handed out */
    } else {
        sli_slab_list_add(&n->partial, pg, SLAB_LIST_PARTIAL);
    }
    SLI_EV(c, cpu, SL_EV_SLAB_LIST, sli_slab_pfn(c, pg), SL_NONE32, s->list, 0, 0);
}

/* get_first_slab: a partial slab, else a free one (list_lock held). */
static sl_page *get_first_slab(sl_slab_node *n)
{
    if (n->partial.first)
        return n->partial.first;
    n->free_touched = 1;
    sl_page *pg = n->free.first;
    if (pg)
        WR(n->free_slabs, n->free_slabs - 1);
    return pg;
}

/* alloc_block: up to batchcount objects from one slab into the array; returns what is left of batchcount. */
static int alloc_block(sl_slab_cache *c, sl_slab_array *ac, sl_page *pg, int batchcount, unsigned cpu)
{
    slab_page *s = SLAB_OF(pg);
    sl_assert(s->active < c->num);
    while (s->active < c->num && batchcount--)
        ac->entry[ac->avail++] = slab_get_obj(c, pg, cpu);
    return batchcount;
}

/*
 * transfer_objects (refill from the shared array): the newest `max` (at
 * most) entries of `from` onto `to`, in their order; returns the count.
 * The REFILL_SHARED event comes first, then one ARRAY_MOVE per object.
 */
static unsigned transfer_objects(sl_slab_cache *c, unsigned cpu, sl_slab_array *to, sl_slab_array *from, unsigned max)
{
    unsigned nr = from->avail;
    if (nr > max)
        nr = max;
    if (nr > to->limit - to->avail)
        nr = to->limit - to->avail;
    if (!nr)
        return 0;
    SLI_EV(c, cpu, SL_EV_SLAB_REFILL_SHARED, SL_NONE32, SL_NONE32, nr, from->avail - nr, 0);
    for (unsigned i = 0; i < nr; i++) {
        void *obj = from->entry[from->avail - nr + i];
        SLI_EV(c, cpu, SL_EV_SLAB_ARRAY_MOVE, sli_slab_obj_pfn(c, obj), sli_slab_obj_index(c, obj), 0xffffu, cpu,
               to->avail + i);
    }
    memcpy(to->entry + to->avail, from->entry + from->avail - nr, sizeof(void *) * nr);
    WR(from->avail, from->avail - nr);
    to->avail += nr;
    return nr;
}

static void *cache_alloc(sl_slab_cache *c, unsigned cpu);

/*
 * cache_grow_begin: a new slab of c->order pages, objects initialised, on no
 * list; NULL when the page allocator (or, OFF_SLAB, the freelist cache) is
 * out of memory.
 */
static sl_page *cache_grow_begin(sl_slab_cache *c, unsigned cpu)
{
    sl_slab *sl = c->sl;
    sl_page *pg = sl_page_alloc(&sl->zone, c->order, cpu);
    if (!pg)
        return NULL;
    sl_slab_node *n = &c->node;
    /* The kernel bumps colour_next with interrupts off but no lock; a lock keeps the model race-free. */
    sl_spin_lock(&n->list_lock);
    n->colour_next++;
    if (n->colour_next >= c->colour)
        n->colour_next = 0;
    size_t offset = n->colour_next;
    sl_spin_unlock(&n->list_lock);
    if (offset >= c->colour)
        offset = 0;
    offset *= c->colour_off;

    unsigned char *addr = sl_page_address(&sl->zone, pg);
    slab_page *s = SLAB_OF(pg);
    s->cache = c;
    s->s_mem = addr + offset;
    s->active = 0;
    s->list = SLAB_LIST_NONE;
    s->next = s->prev = NULL;
    /* alloc_slabmgmt */
    if (c->mgmt == SL_SLAB_OFF) {
        s->freelist = cache_alloc(c->freelist_cache, cpu);
        if (!s->freelist) {
            s->cache = NULL;
            sl_page_free(&sl->zone, pg, cpu);
            return NULL;
        }
    } else if (c->mgmt == SL_SLAB_OBJFREELIST) {
        s->freelist = sli_slab_index_to_obj(c, s, c->num - 1); /* cache_init_objs */
    } else {
        s->freelist = addr + (SL_PAGE_SIZE << c->order) - c->freelist_size;
    }
    freelist_idx_t *fl = s->freelist;
    for (unsigned i = 0; i < c->num; i++)
        fl[i] = (freelist_idx_t)i;
    STAT_INC(c->stats.grown);
    SLI_EV(c, cpu, SL_EV_SLAB_GROW, sli_slab_pfn(c, pg), SL_NONE32, c->order, (uint32_t)offset,
           sli_slab_freelist_ref(c, s->freelist));
    return pg;
}

/* cache_grow_end: puts the new slab on its list and counts it. */
static void cache_grow_end(sl_slab_cache *c, sl_page *pg, unsigned cpu)
{
    if (!pg)
        return;
    sl_slab_node *n = &c->node;
    slab_page *s = SLAB_OF(pg);
    sl_spin_lock(&n->list_lock);
    WR(n->total_slabs, n->total_slabs + 1);
    if (!s->active) {
        sli_slab_list_add_tail(&n->free, pg, SLAB_LIST_FREE);
        WR(n->free_slabs, n->free_slabs + 1);
        SLI_EV(c, cpu, SL_EV_SLAB_LIST, sli_slab_pfn(c, pg), SL_NONE32, SLAB_LIST_FREE, 0, 0);
    } else {
        fixup_slab_list(c, pg, cpu);
    }
    WR(n->free_objects, n->free_objects + c->num - s->active);
    sl_spin_unlock(&n->list_lock);
}

static SL_NOINLINE void *cache_alloc_refill(sl_slab_cache *c, unsigned cpu)
{
    sl_slab_array *ac = c->cpu[cpu];
    sl_slab_node *n = &c->node;
    int batchcount = (int)ac->batchcount;
    if (!ac->touched && batchcount > BATCHREFILL_LIMIT)
        batchcount = BATCHREFILL_LIMIT; /* little recent activity: a partial refill */
    SLI_EV(c, cpu, SL_EV_SLAB_REFILL, SL_NONE32, SL_NONE32, (uint32_t)batchcount, ac->touched, 0);
    sl_assert(ac->avail == 0);
    sl_slab_array *shared = n->shared;
    if (!RD(n->free_objects) && (!shared || !RD(shared->avail)))
        goto direct_grow;

    sl_spin_lock(&n->list_lock);
    if (shared && transfer_objects(c, cpu, ac, shared, (unsigned)batchcount)) {
        shared->touched = 1;
        goto alloc_done;
    }
    while (batchcount > 0) {
        sl_page *pg = get_first_slab(n);
        if (!pg)
            break;
        batchcount = alloc_block(c, ac, pg, batchcount, cpu);
        fixup_slab_list(c, pg, cpu);
    }
    WR(n->free_objects, n->free_objects - ac->avail);
alloc_done:
    sl_spin_unlock(&n->list_lock);

direct_grow:
    if (SL_UNLIKELY(!ac->avail)) {
        sl_page *pg = cache_grow_begin(c, cpu);
        if (pg)
            alloc_block(c, ac, pg, batchcount, cpu);
        cache_grow_end(c, pg, cpu);
        if (!ac->avail)
            return NULL;
    }
    ac->touched = 1;
    return ac->entry[--ac->avail];
}

/* ____cache_alloc plus the debug bookkeeping. */
SL_INLINE void *cache_alloc_inline(sl_slab_cache *c, unsigned cpu)
{
    sl_slab_array *ac = c->cpu[cpu];
    void *obj;
    if (SL_LIKELY(ac->avail)) {
        ac->touched = 1;
        obj = ac->entry[--ac->avail];
        CPU_STAT_INC(ac->alloc_hit);
        SLI_EV(c, cpu, SL_EV_SLAB_ALLOC_HIT, sli_slab_obj_pfn(c, obj), sli_slab_obj_index(c, obj), ac->avail, 0, 0);
    } else {
        CPU_STAT_INC(ac->alloc_miss);
        obj = cache_alloc_refill(c, cpu);
        if (!obj)
            return NULL;
    }
    mark_live(c->sl, obj);
    return obj;
}

static void *cache_alloc(sl_slab_cache *c, unsigned cpu) { return cache_alloc_inline(c, cpu); }

void *sl_slab_cache_alloc(sl_slab_cache *c, unsigned cpu)
{
    if (SL_UNLIKELY(cpu >= c->sl->ncpus))
        return NULL;
    uint32_t op = sli_slab_op_begin(c->sl, cpu, c->id, SL_SLAB_OP_ALLOC, c->object_size);
    void *obj = cache_alloc_inline(c, cpu);
    sli_slab_op_end(c->sl, cpu, c->id, op, SL_SLAB_OP_ALLOC, obj ? 0 : (uint32_t)SL_ENOMEM);
    return obj;
}

/* kmalloc_slab's size_index[] for sizes 1..192 in 8-byte steps, SLAB's KMALLOC_MIN_SIZE 32. */
static const uint8_t size_index[24] = {
    0, 0, 0, 0,             /* 8 16 24 32 -> kmalloc-32 */
    1, 1, 1, 1,             /* 40 .. 64 -> kmalloc-64 */
    2, 2, 2, 2,             /* 72 .. 96 -> kmalloc-96 */
    3, 3, 3, 3,             /* 104 .. 128 -> kmalloc-128 */
    4, 4, 4, 4, 4, 4, 4, 4, /* 136 .. 192 -> kmalloc-192 */
};

/* kmalloc_slab: the cache index for sizes up to the largest kmalloc cache, -1 above it or for 0. */
SL_INLINE int kmalloc_slab(const sl_slab *sl, size_t size)
{
    if (SL_LIKELY(size - 1 < 192))
        return size_index[(size - 1) / 8];
    if (SL_UNLIKELY(size - 1 >= sl->kmalloc_max_cache))
        return -1; /* 0 (wrapped), or kmalloc_large */
    return (int)(64u - (unsigned)__builtin_clzll((unsigned long long)(size - 1))) - 9 + 6;
}

/* kmalloc_large (6.1 on): 2^get_order(size) pages, the head page marked as a large block. */
static SL_NOINLINE void *kmalloc_large(sl_slab *sl, unsigned cpu, size_t size)
{
    unsigned order = 0;
    while ((SL_PAGE_SIZE << order) < size)
        order++;
    uint32_t op = sli_slab_op_begin(sl, cpu, 0xffff, SL_SLAB_OP_KMALLOC, (uint32_t)size);
    sl_page *pg = sl_page_alloc(&sl->zone, order, cpu);
    void *p = NULL;
    if (pg) {
        SLAB_OF(pg)->list = SLAB_LIST_LARGE;
        p = sl_page_address(&sl->zone, pg);
        mark_live(sl, p);
        SLI_WEV(sl, cpu, SL_EV_SLAB_KMALLOC_LARGE, sl_page_pfn(&sl->zone, pg), order, 1);
    }
    sli_slab_op_end(sl, cpu, 0xffff, op, SL_SLAB_OP_KMALLOC, p ? 0 : (uint32_t)SL_ENOMEM);
    return p;
}

void *sl_slab_kmalloc(sl_slab *sl, unsigned cpu, size_t size)
{
    int idx = kmalloc_slab(sl, size);
    if (SL_UNLIKELY(idx < 0 || cpu >= sl->ncpus))
        return size && size <= SL_SLAB_KMALLOC_MAX && cpu < sl->ncpus ? kmalloc_large(sl, cpu, size) : NULL;
    sl_slab_cache *c = sl->caches[idx];
    uint32_t op = sli_slab_op_begin(sl, cpu, c->id, SL_SLAB_OP_KMALLOC, (uint32_t)size);
    void *obj = cache_alloc_inline(c, cpu);
    sli_slab_op_end(sl, cpu, c->id, op, SL_SLAB_OP_KMALLOC, obj ? 0 : (uint32_t)SL_ENOMEM);
    return obj;
}
