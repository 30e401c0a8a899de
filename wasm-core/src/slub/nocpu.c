/*
 * nocpu.c - the slab layer of Linux 7.0, where sheaves replaced the per-CPU
 * slab ("slab-for-7.0", Vlastimil Babka): no kmem_cache_cpu, no CPU slab,
 * no tid, no CPU partial list, no frozen slabs.  Everything under the
 * sheaves takes objects straight from slabs:
 *
 *   ___slab_alloc         one object: get_from_partial_node pops the first
 *                         object of the first node partial slab by CAS under
 *                         list_lock (the slab leaves the list when that was
 *                         its last free object), else alloc_from_new_slab
 *                         takes the first object of a new slab, which goes
 *                         to the head of the node list.
 *   refill_objects        what sheaves (and kmem_cache_alloc_bulk) refill
 *                         from: get_partial_node_bulk takes node partial
 *                         slabs off the list under list_lock until their
 *                         free objects reach min (and would not pass max),
 *                         get_freelist_nofreeze empties each with one CAS;
 *                         objects past max go back with one __slab_free;
 *                         slabs not needed go back to the list head (or are
 *                         discarded when empty beyond min_partial); then new
 *                         slabs until min is reached.
 *                         That is 7.0 and 7.1.  7.2 ("slab-for-7.2": "mm,
 *                         slab: simplify returning slab in
 *                         __refill_objects_node()" and "add an optimistic
 *                         __slab_try_return_freelist()") returns the
 *                         overshooting slab's surplus with one CAS that
 *                         assumes the slab is still full (no list_lock, no
 *                         counter; __slab_free only if a remote free raced
 *                         in), keeps that slab with the ones not needed, and
 *                         puts them all back at the *tail* of the node list
 *                         in the order taken, empty or not; 7.3 takes
 *                         list_lock around that CAS ("take n->list_lock in
 *                         __slab_try_return_freelist() to avoid race", a
 *                         7.3-rc fix known by its subject only).
 *   alloc_from_new_slab   7.2's "defer freelist construction until after bulk
 *                         allocation from a new slab" hands out the first
 *                         objects in allocation order and links only the
 *                         rest; the model links the whole slab first
 *                         (sli_slub_new_slab) and takes the same objects in
 *                         the same order: the difference is the free-pointer
 *                         writes into objects handed out, not the outcome.
 *   __slab_free           free.c's, for a cache without CPU partial lists:
 *                         lock-free unless the slab changes lists.
 *
 * What guards what is slub_internal.h's: a slab's freelist+counters change
 * only by sl_dw_cas, from any CPU; the node list under list_lock.  A slab
 * taken off the list by get_partial_node_bulk is on no list while the
 * refill holds it, and inuse covers every object the refill took, so a
 * racing __slab_free neither finds it on the list nor sees it empty unless
 * it is: exactly the kernel's reasoning.
 *
 * Debug caches never come here: they keep alloc.c's single-object paths,
 * which 7.0 shares with 6.2+ (the model counts their ALLOC_SLOWPATH there).
 */
#include "slub_internal.h"

/*
 * get_from_partial_node: the first object of the first node partial slab,
 * under list_lock; the CAS may fail against a remote free (which takes the
 * lock only when it would empty the slab), so it loops.  NULL when the list
 * is empty.
 */
static void *get_from_partial_node(sli_act *a, sli_slub_node *n)
{
    sl_slub_cache *s = a->s;
    if (!__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED))
        return NULL;
    void *object = NULL;
    if (!sli_list_lock_ctx(a, n, 0)) /* kmalloc_nolock: spin_trylock_irqsave */
        return NULL;
    sli_slub_slab *slab = n->partial_head;
    if (slab) {
        sl_dword old, new_;
        do {
            old = sl_dw_read(&slab->fc);
            object = (void *)old.lo;
            new_ = (sl_dword){(uintptr_t)sli_get_fp(s, object),
                              sli_counters(sli_inuse(old.hi) + 1, sli_objects(old.hi), 0)};
            a->cas++;
            if (sl_dw_cas(&slab->fc, old, new_))
                break;
            sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_FAIL, 1);
            SLI_EV(a, SLUB_SLAB_CAS_FAIL, slab, NULL, 4, 0, 0);
        } while (true);
        SLI_EV(a, SLUB_ALLOC_SINGLE, slab, object, 0, sli_inuse(new_.hi), 0);
        if (!new_.lo)
            sli_slub_remove_partial(a, slab);
    }
    sl_spin_unlock(&n->list_lock);
    return object;
}

/*
 * alloc_from_new_slab: the first `count` objects of a new slab (nobody else
 * sees it yet: plain writes); a slab with objects left goes to the head of
 * the node list.  Returns how many; 0 when a context that may not spin
 * (kmalloc_nolock) finds list_lock taken: the new slab is given back
 * (free_new_slab_nolock) and nothing is taken.
 */
static unsigned alloc_from_new_slab(sli_act *a, sli_slub_slab *slab, void **p, unsigned count)
{
    sl_slub_cache *s = a->s;
    sli_slub_node *n = sli_slab_node(s, slab);
    uint32_t objects = sli_objects(slab->fc.hi), allocated = 0;
    bool locked = false;
    if (objects > count && !sli_allow_spin(a)) {
        if (!sli_list_lock_ctx(a, n, 1)) {
            sli_slub_discard_slab(a, slab);
            return 0;
        }
        locked = true;
    }
    void *object = (void *)slab->fc.lo;
    while (object && allocated < count) {
        p[allocated++] = object;
        object = sli_get_fp(s, object);
    }
    slab->fc = (sl_dword){(uintptr_t)object, sli_counters(allocated, objects, 0)};
    SLI_EV(a, SLUB_NEW_SLAB, slab, p[0], sli_slab_order(slab), objects, allocated);
    if (objects > count) {
        if (!locked)
            sli_list_lock(a, n);
        sli_slub_add_partial(a, slab, false);
        sl_spin_unlock(&n->list_lock);
    }
    return allocated;
}

void *sli_slub_alloc_nocpu(sli_act *a)
{
    sl_slub_cache *s = a->s;
    /* get_from_partial: numa_mem_id()'s node, then get_from_any_partial (as get_any_partial, alloc.c). */
    void *object = get_from_partial_node(a, sli_get_node(s, sli_mem_nid(a)));
    if (!object && s->nr_nodes > 1 && sli_remote_defrag_allowed(a)) {
        const uint8_t *zl = s->zonelist[sli_mem_nid(a)];
        for (unsigned k = 0; k < s->nr_mem_nodes && !object; k++) {
            sli_slub_node *n = sli_get_node(s, zl[k]);
            if (__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED) > s->g.min_partial)
                object = get_from_partial_node(a, n);
        }
    }
    if (object)
        return object;
    sli_slub_slab *slab = sli_slub_new_slab(a);
    if (!slab)
        return NULL;
    sli_stat(a, SL_SLUB_ALLOC_SLAB, 1);
    /* A context that may spin never fails here; one that may not gives up ("could cause an endless loop"). */
    return alloc_from_new_slab(a, slab, &object, 1) ? object : NULL;
}

/*
 * get_partial_node_bulk: node partial slabs taken off the list, in list
 * order, chained through slab->next into *out, until their free objects
 * (read racily: a lower bound) reach max, stopping before a slab that would
 * pass max once min is reached.  Returns the free objects counted.
 */
static unsigned get_partial_node_bulk(sli_act *a, sli_slub_node *n, unsigned min, unsigned max, sli_slub_slab **out)
{
    sli_slub_slab *head = NULL, **tail = &head;
    unsigned total_free = 0;
    *out = NULL;
    if (!__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED))
        return 0;
    if (!sli_list_lock_ctx(a, n, 0)) /* __refill_objects_any: spin_trylock_irqsave */
        return 0;
    for (sli_slub_slab *slab = n->partial_head, *next; slab; slab = next) {
        next = slab->lnext;
        uintptr_t c = sl_dw_read(&slab->fc).hi;
        unsigned slab_free = sli_objects(c) - sli_inuse(c);
        if (total_free >= min && total_free + slab_free > max)
            break;
        sli_slub_remove_partial(a, slab);
        slab->next = NULL;
        *tail = slab;
        tail = &slab->next;
        total_free += slab_free;
        if (total_free >= max)
            break;
    }
    sl_spin_unlock(&n->list_lock);
    *out = head;
    return total_free;
}

/* get_freelist_nofreeze: the slab's whole freelist with one CAS (inuse = objects); *taken gets the count. */
static void *get_freelist_nofreeze(sli_act *a, sli_slub_slab *slab, uint32_t *taken)
{
    for (;;) {
        sl_dword old = sl_dw_read(&slab->fc);
        uint32_t objects = sli_objects(old.hi);
        a->cas++;
        if (sl_dw_cas(&slab->fc, old, (sl_dword){0, sli_counters(objects, objects, 0)})) {
            *taken = objects - sli_inuse(old.hi);
            return (void *)old.lo;
        }
        sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_FAIL, 1);
        SLI_EV(a, SLUB_SLAB_CAS_FAIL, slab, NULL, 5, 0, 0);
    }
}

/*
 * __slab_try_return_freelist (7.2): the surplus `head` (cnt objects, its
 * last one's free pointer NULL) back onto a slab we emptied, assuming it is
 * still full; false if a free raced in (its freelist is no longer NULL).
 * 7.3 holds list_lock around it.
 */
static bool slab_try_return_freelist(sli_act *a, sli_slub_slab *slab, void *head, uint32_t cnt)
{
    bool locked = a->s->rules.try_return_locked, done = false;
    sli_slub_node *n = sli_slab_node(a->s, slab);
    if (locked)
        sli_list_lock(a, n);
    sl_dword old = sl_dw_read(&slab->fc);
    if (!old.lo) {
        sl_dword new_ = {(uintptr_t)head, sli_counters(sli_inuse(old.hi) - cnt, sli_objects(old.hi), 0)};
        a->cas++;
        done = sl_dw_cas(&slab->fc, old, new_);
        if (!done) {
            sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_FAIL, 1);
            SLI_EV(a, SLUB_SLAB_CAS_FAIL, slab, NULL, 6, 0, 0);
        }
    }
    if (locked)
        sl_spin_unlock(&n->list_lock);
    return done;
}

/*
 * __refill_objects_node of 7.2 on: slabs consumed in list order; the
 * overshooting slab's surplus returned by slab_try_return_freelist (else
 * __slab_free) and that slab kept first among the slabs not needed, which
 * all go back to the tail of the node list in order (list_splice_tail),
 * none discarded.  Returns the objects put in p (at most max).
 */
static unsigned refill_objects_node_tail(sli_act *a, sli_slub_node *n, void **p, unsigned max, sli_slub_slab *slabs)
{
    sl_slub_cache *s = a->s;
    unsigned refilled = 0;
    while (slabs) {
        sli_slub_slab *slab = slabs;
        slabs = slab->next;
        slab->next = NULL;
        uint32_t count;
        void *object = get_freelist_nofreeze(a, slab, &count);
        SLI_EV(a, SLUB_REFILL_NODE_PARTIAL, slab, object, count, 0, 0);
        while (count && object && refilled < max) {
            p[refilled++] = object;
            object = sli_get_fp(s, object);
            count--;
        }
        if (count && object) {
            if (slab_try_return_freelist(a, slab, object, count)) {
                slab->next = slabs; /* list_add(&slab->slab_list, &pc.slabs) */
                slabs = slab;
                break;
            }
            void *tail = object;
            for (uint32_t k = 1; k < count && sli_get_fp(s, tail); k++)
                tail = sli_get_fp(s, tail);
            sli_slub_slab_free(a, slab, object, tail, count);
        }
        if (refilled >= max)
            break;
    }
    if (slabs) {
        sli_list_lock(a, n);
        while (slabs) {
            sli_slub_slab *slab = slabs;
            slabs = slab->next;
            slab->next = NULL;
            sli_slub_add_partial(a, slab, true);
        }
        sl_spin_unlock(&n->list_lock);
    }
    return refilled;
}

/* __refill_objects_node: returns the objects put in p (at most max). */
static unsigned refill_objects_node(sli_act *a, sli_slub_node *n, void **p, unsigned min, unsigned max)
{
    sl_slub_cache *s = a->s;
    sli_slub_slab *slabs;
    unsigned refilled = 0;
    if (!get_partial_node_bulk(a, n, min, max, &slabs))
        return 0;
    if (s->rules.refill_return_tail)
        return refill_objects_node_tail(a, n, p, max, slabs);
    while (slabs && refilled < max) {
        sli_slub_slab *slab = slabs;
        slabs = slab->next;
        slab->next = NULL;
        uint32_t taken;
        void *object = get_freelist_nofreeze(a, slab, &taken);
        SLI_EV(a, SLUB_REFILL_NODE_PARTIAL, slab, object, taken, 0, 0);
        /* Bounded by the count taken, so a corrupt freelist is never followed past it. */
        for (uint32_t k = 0; object && refilled < max && k < taken; k++) {
            p[refilled++] = object;
            object = sli_get_fp(s, object);
        }
        if (object) {
            /* More than max wanted: the rest goes back as one detached freelist. */
            void *head = object, *tail = object;
            uint32_t cnt = 0, limit = sli_slab_objects(slab);
            for (; object && cnt < limit; cnt++) {
                tail = object;
                object = sli_get_fp(s, object);
            }
            sli_slub_slab_free(a, slab, head, tail, cnt);
        }
    }
    if (slabs) {
        /* Slabs taken but not needed: back to the list head, or discarded when empty beyond min_partial. */
        sli_slub_slab *discard = NULL;
        sli_list_lock(a, n);
        while (slabs) {
            sli_slub_slab *slab = slabs;
            slabs = slab->next;
            slab->next = NULL;
            if (!sli_inuse(sl_dw_read(&slab->fc).hi) && n->nr_partial >= s->g.min_partial) {
                slab->next = discard;
                discard = slab;
            } else {
                sli_slub_add_partial(a, slab, false);
            }
        }
        sl_spin_unlock(&n->list_lock);
        while (discard) {
            sli_slub_slab *slab = discard;
            discard = slab->next;
            sli_slub_discard_slab(a, slab);
        }
    }
    return refilled;
}

/*
 * __refill_objects_any: unless the draw against remote_node_defrag_ratio
 * says no, the zonelist's nodes (nearest first) holding more than
 * min_partial partial slabs, each list_lock only trylocked (allow_spin =
 * false), until min objects are had.  Returns the objects put in p.
 */
static unsigned refill_objects_any(sli_act *a, void **p, unsigned min, unsigned max)
{
    sl_slub_cache *s = a->s;
    unsigned refilled = 0;
    if (!sli_remote_defrag_allowed(a))
        return 0;
    const uint8_t *zl = s->zonelist[sli_mem_nid(a)];
    uint8_t ctx = a->ctx;
    a->ctx = SLI_CTX_NOLOCK; /* get_partial_node_bulk(..., allow_spin = false): a trylock */
    for (unsigned k = 0; k < s->nr_mem_nodes; k++) {
        sli_slub_node *n = sli_get_node(s, zl[k]);
        if (__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED) <= s->g.min_partial)
            continue;
        unsigned r = refill_objects_node(a, n, p, min, max);
        refilled += r;
        if (r >= min)
            break;
        p += r;
        min -= r;
        max -= r;
    }
    a->ctx = ctx;
    return refilled;
}

unsigned sli_slub_refill_objects(sli_act *a, void **p, unsigned min, unsigned max)
{
    unsigned refilled = refill_objects_node(a, sli_get_node(a->s, sli_mem_nid(a)), p, min, max);
    if (refilled < min && a->s->nr_nodes > 1)
        refilled += refill_objects_any(a, p + refilled, min - refilled, max - refilled);
    while (refilled < min) {
        sli_slub_slab *slab = sli_slub_new_slab(a);
        if (!slab)
            break;
        sli_stat(a, SL_SLUB_ALLOC_SLAB, 1);
        refilled += alloc_from_new_slab(a, slab, p + refilled, max - refilled);
    }
    return refilled;
}
