/*
 * alloc.c - allocation: the lockless fast path (slab_alloc_node), the slow
 * path (___slab_alloc with get_freelist, freeze_slab, get_partial_node; for
 * debug caches alloc_single_from_partial / _new_slab, with no CPU slab, and
 * alloc_debug_processing's checks) and kmem_cache_alloc_bulk, following
 * Linux 6.8+ (where CPU partial slabs are no longer frozen; the 4.4 code of
 * the seeds froze them, see docs/slub.md).  On PREEMPT_RT (the `rt`
 * variant) USE_LOCKLESS_FAST_PATH() is false: every allocation is
 * ___slab_alloc under the CPU's local_lock, whose first case (objects on
 * the CPU freelist) is the everyday one there.
 *
 * The CPU freelist+tid double word is read without a lock and replaced with
 * one double-word CAS that fails if an interrupt on this CPU (or anything
 * else) changed either word in between: that is why the tid exists.  The
 * slow path runs "with interrupts off": no preemption point sits inside it,
 * so its updates of c->fl_tid are CASes that cannot fail.  A slab's
 * freelist+counters may be changed by remote frees at any moment and is
 * changed only by sl_dw_cas (cmpxchg_double_slab).
 *
 * sl_slub_alloc jumps to s->alloc_fn: for a cache that needs nothing but the
 * fast path, a leaf function built for its variant (the kernel inlines
 * slab_alloc_node, built for one); otherwise, and whenever the leaf cannot
 * finish, alloc_op, the complete operation with events, preemption points,
 * hooks and the slow path.
 */
#include "sheaves.h"

/* Sets this CPU's freelist and tid (the slow path's writes, irqs off: the CAS cannot fail). */
static void cpu_store(sli_act *a, void *freelist, uintptr_t tid)
{
    sl_dword cur = sl_dw_read(&a->c->fl_tid);
    a->cas++;
    bool ok = sl_dw_cas_local(&a->c->fl_tid, cur, (sl_dword){(uintptr_t)freelist, tid});
    sl_assert(ok);
    (void)ok;
}

/*
 * get_freelist (freeze = false) / freeze_slab (freeze = true): takes the
 * slab's whole freelist with one CAS, marking every object in use.  With
 * get_freelist the slab stays frozen only if it had free objects.  *taken
 * gets the number of objects taken.  Returns the freelist (may be NULL).
 */
static void *take_slab_freelist(sli_act *a, sli_slub_slab *slab, bool freeze, uint32_t *taken)
{
    for (;;) {
        sl_dword old = sl_dw_read(&slab->fc);
        uint32_t objects = sli_objects(old.hi);
        uint32_t frozen = freeze ? 1u : old.lo != 0;
        sl_dword new_ = {0, sli_counters(objects, objects, frozen)};
        a->cas++;
        if (sl_dw_cas(&slab->fc, old, new_)) {
            *taken = objects - sli_inuse(old.hi);
            if (frozen)
                slab->cpu = a->cpu;
            return (void *)old.lo;
        }
        sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_FAIL, 1);
        SLI_EV(a, SLUB_SLAB_CAS_FAIL, slab, NULL, freeze ? 2 : 1, 0, 0);
    }
}

/*
 * Takes the first object of an unfrozen slab's freelist under the node's
 * list_lock, where a debug cache's every change of that slab happens (its
 * frees too), so the CAS cannot fail.  Returns the object; *inuse gets the
 * count after.
 */
static void *take_one_locked(sli_act *a, sli_slub_slab *slab, uint32_t *inuse)
{
    sl_dword old = sl_dw_read(&slab->fc);
    void *object = (void *)old.lo;
    *inuse = sli_inuse(old.hi) + 1;
    a->cas++;
    bool ok = sl_dw_cas(&slab->fc, old,
                        (sl_dword){(uintptr_t)sli_get_fp(a->s, object), sli_counters(*inuse, sli_objects(old.hi), 0)});
    sl_assert(ok);
    (void)ok;
    return object;
}

/*
 * get_partial_node of a debug cache: alloc_single_from_partial on each node
 * partial slab in turn until one yields an object.  A slab leaves the list
 * when that was its last free object, or when alloc_debug_processing failed
 * on the object (the slab is then disabled and the search goes on).
 * Returns the object, or NULL when no slab on the list gave one.
 */
static void *alloc_single_from_partial(sli_act *a, sli_slub_node *n)
{
    if (!__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED))
        return NULL;
    void *object = NULL;
    if (!sli_list_lock_ctx(a, n, 0)) /* kmalloc_nolock: spin_trylock_irqsave */
        return NULL;
    for (sli_slub_slab *slab = n->partial_head, *next; slab && !object; slab = next) {
        next = slab->lnext;
        uint32_t inuse;
        void *taken = take_one_locked(a, slab, &inuse);
        SLI_EV(a, SLUB_ALLOC_SINGLE, slab, taken, 0, inuse, 0);
        if (!sli_slub_alloc_debug(a, slab, taken)) {
            sli_slub_remove_partial(a, slab);
            continue;
        }
        object = taken;
        if (inuse == sli_objects(sl_dw_read(&slab->fc).hi))
            sli_slub_remove_partial(a, slab); /* full: on no list (add_full tracks nothing here) */
    }
    sl_spin_unlock(&n->list_lock);
    return object;
}

/*
 * alloc_single_from_new_slab: the first object of a new slab, which goes on
 * the node partial list (head) unless that object was its only one.
 * Returns the object, or NULL if alloc_debug_processing failed on it (the
 * slab, disabled, goes on no list).
 */
static void *alloc_single_from_new_slab(sli_act *a, sli_slub_slab *slab)
{
    sli_slub_node *n = sli_slab_node(a->s, slab);
    if (!sli_list_lock_ctx(a, n, 1)) {
        sli_slub_discard_slab(a, slab); /* "Unlucky, discard newly allocated slab" */
        return NULL;
    }
    uint32_t inuse;
    void *object = take_one_locked(a, slab, &inuse);
    SLI_EV(a, SLUB_ALLOC_SINGLE, slab, object, 1, inuse, 0);
    if (!sli_slub_alloc_debug(a, slab, object))
        object = NULL;
    else if (inuse < sli_slab_objects(slab))
        sli_slub_add_partial(a, slab, false);
    sl_spin_unlock(&n->list_lock);
    return object;
}

/*
 * ___slab_alloc of a debug cache (no CPU slab, no CPU partial list): one
 * object from the node list, else from a new slab; a new slab whose first
 * object fails its check sends it back to new_objects, the node list first.
 * Returns NULL when no page is left.
 */
static void *alloc_single(sli_act *a)
{
    for (;;) {
        void *object = alloc_single_from_partial(a, sli_get_node(a->s, sli_mem_nid(a)));
        if (!object && a->s->nr_nodes > 1 && sli_remote_defrag_allowed(a)) {
            /* get_any_partial: the zonelist's nodes holding more than min_partial partial slabs */
            const uint8_t *zl = a->s->zonelist[sli_mem_nid(a)];
            for (unsigned k = 0; k < a->s->nr_mem_nodes && !object; k++) {
                sli_slub_node *n = sli_get_node(a->s, zl[k]);
                if (__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED) > a->s->g.min_partial)
                    object = alloc_single_from_partial(a, n);
            }
        }
        if (object)
            return object;
        sli_slub_slab *slab = sli_slub_new_slab(a);
        if (!slab)
            return NULL;
        sli_stat(a, SL_SLUB_ALLOC_SLAB, 1);
        object = alloc_single_from_new_slab(a, slab);
        if (object || !sli_allow_spin(a))
            return object; /* kmalloc_nolock does not go round again */
    }
}

/*
 * get_partial_node: the first node partial slab is returned (removed from the
 * list); further ones go to this CPU's partial list until more than
 * cpu_partial_slabs / 2 were moved (none when cpu_partial_slabs is 0, as
 * after writing 0 to sysfs cpu_partial).  Returns NULL when the list is
 * empty.
 */
static sli_slub_slab *get_partial_node(sli_act *a, sli_slub_node *n)
{
    sl_slub_cache *s = a->s;
    if (!__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED))
        return NULL;
    sli_slub_slab *partial = NULL;
    unsigned partial_slabs = 0;
    if (!sli_list_lock_ctx(a, n, 0)) /* kmalloc_nolock (6.18): spin_trylock_irqsave */
        return NULL;
    for (sli_slub_slab *slab = n->partial_head, *next; slab; slab = next) {
        next = slab->lnext;
        sli_slub_remove_partial(a, slab);
        if (!partial) {
            partial = slab;
            sli_stat(a, SL_SLUB_ALLOC_FROM_PARTIAL, 1);
            if (s->g.cpu_partial_slabs == 0) /* slub_get_cpu_partial(s) == 0 */
                break;
        } else {
            sli_slub_put_cpu_partial(a, slab, false);
            sli_stat(a, SL_SLUB_CPU_PARTIAL_NODE, 1);
            SLI_EV(a, SLUB_CPU_PARTIAL_NODE, slab, NULL, 0, 0, 0);
            if (++partial_slabs > s->g.cpu_partial_slabs / 2)
                break;
        }
    }
    sl_spin_unlock(&n->list_lock);
    return partial;
}

/*
 * acquire_slab (before 6.8): freezes a node partial slab with one CAS,
 * taking its whole freelist for the CPU slab (`take`) or leaving it for the
 * CPU partial list; *objects gets its free objects.  Under list_lock, where
 * a racing __slab_free may still change the slab: a failed CAS gives up, as
 * the kernel's __cmpxchg_double_slab does there.  Returns false then.
 */
static bool acquire_slab(sli_act *a, sli_slub_slab *slab, bool take, void **freelist, uint32_t *objects)
{
    sl_dword old = sl_dw_read(&slab->fc);
    uint32_t n = sli_objects(old.hi);
    sl_dword new_ =
        take ? (sl_dword){0, sli_counters(n, n, 1)} : (sl_dword){old.lo, sli_counters(sli_inuse(old.hi), n, 1)};
    a->cas++;
    if (!sl_dw_cas(&slab->fc, old, new_)) {
        sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_FAIL, 1);
        SLI_EV(a, SLUB_SLAB_CAS_FAIL, slab, NULL, 6, 0, 0);
        return false;
    }
    *freelist = (void *)old.lo;
    *objects = n - sli_inuse(old.hi);
    slab->cpu = a->cpu;
    return true;
}

/*
 * get_partial_node before 6.8: every slab taken is frozen.  The first
 * gives its freelist to the CPU slab (ALLOC_FROM_PARTIAL); the next go to
 * this CPU's partial list, frozen with their freelists (CPU_PARTIAL_NODE),
 * until the free objects taken pass cpu_partial / 2 (before 5.16), or more
 * than cpu_partial_slabs / 2 slabs went there (5.16 to 6.7).  Returns the
 * first slab with *freelist its objects, or NULL.
 */
static sli_slub_slab *get_partial_node_frozen(sli_act *a, sli_slub_node *n, void **freelist, uint32_t *taken)
{
    sl_slub_cache *s = a->s;
    if (!__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED))
        return NULL;
    sli_slub_slab *first = NULL;
    uint32_t available = 0, partial_slabs = 0;
    sli_list_lock(a, n);
    for (sli_slub_slab *slab = n->partial_head, *next; slab; slab = next) {
        next = slab->lnext;
        void *t;
        uint32_t objects;
        if (!acquire_slab(a, slab, !first, &t, &objects))
            break;
        sli_slub_remove_partial(a, slab);
        available += objects;
        if (!first) {
            first = slab;
            *freelist = t;
            *taken = objects;
            sli_stat(a, SL_SLUB_ALLOC_FROM_PARTIAL, 1);
        } else {
            sli_slub_put_cpu_partial(a, slab, false);
            sli_stat(a, SL_SLUB_CPU_PARTIAL_NODE, 1);
            SLI_EV(a, SLUB_CPU_PARTIAL_NODE, slab, NULL, objects, 0, 0);
            partial_slabs++;
        }
        if (s->rules.cpu_partial_by_objects ? available > s->g.cpu_partial / 2
                                            : partial_slabs > s->g.cpu_partial_slabs / 2)
            break;
    }
    sl_spin_unlock(&n->list_lock);
    return first;
}

/*
 * get_partial_node of the era on node n: the slab for the CPU with its
 * freelist in *freelist (*taken objects), or NULL.
 */
static sli_slub_slab *get_partial_node_era(sli_act *a, sli_slub_node *n, void **freelist, uint32_t *taken)
{
    if (a->s->rules.frozen_cpu_partial)
        return get_partial_node_frozen(a, n, freelist, taken);
    sli_slub_slab *slab = get_partial_node(a, n);
    if (slab)
        *freelist = take_slab_freelist(a, slab, true, taken);
    return slab;
}

/*
 * get_partial: the CPU's memory node first (numa_mem_id), then, with more
 * than one node, get_any_partial: unless the draw against
 * remote_node_defrag_ratio says no (sli_remote_defrag_allowed), the
 * zonelist's nodes nearest first, each only if it holds more than
 * min_partial partial slabs.  Returns the slab or NULL.
 */
static sli_slub_slab *get_partial(sli_act *a, void **freelist, uint32_t *taken)
{
    sl_slub_cache *s = a->s;
    sli_slub_slab *slab = get_partial_node_era(a, sli_get_node(s, sli_mem_nid(a)), freelist, taken);
    if (slab || s->nr_nodes == 1 || !sli_remote_defrag_allowed(a))
        return slab;
    const uint8_t *zl = s->zonelist[sli_mem_nid(a)];
    for (unsigned k = 0; k < s->nr_mem_nodes && !slab; k++) {
        sli_slub_node *n = sli_get_node(s, zl[k]);
        if (__atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED) > s->g.min_partial)
            slab = get_partial_node_era(a, n, freelist, taken);
    }
    return slab;
}

/* kernel: ___slab_alloc */
void *sli_slub_slab_alloc_slow(sli_act *a)
{
    sl_slub_cache *s = a->s;
    sli_slub_cpu *c = a->c;
    sli_slub_slab *slab;
    void *freelist;
    uint32_t taken;
    sli_stat(a, SL_SLUB_ALLOC_SLOWPATH, 1);
    SLI_EV(a, SLUB_ALLOC_SLOWPATH, c->slab, NULL, 0, 0, 0);
    if (sli_kmem_cache_debug(s))
        return alloc_single(a);
    if (!s->rules.cpu_slab)
        return sli_slub_alloc_nocpu(a);

    slab = c->slab;
    if (!slab)
        goto new_slab;
    freelist = (void *)sl_dw_read(&c->fl_tid).lo;
    if (freelist)
        goto load_freelist;
    /* Objects freed remotely into our frozen slab wait on the slab's own freelist. */
    freelist = take_slab_freelist(a, slab, false, &taken);
    if (!freelist) {
        c->slab = NULL;
        cpu_store(a, NULL, sli_next_tid(s, sl_dw_read(&c->fl_tid).hi));
        sli_stat(a, SL_SLUB_DEACTIVATE_BYPASS, 1);
        SLI_EV(a, SLUB_DEACTIVATE_BYPASS, slab, NULL, 0, 0, 0);
        goto new_slab;
    }
    sli_stat(a, SL_SLUB_ALLOC_REFILL, 1);
    SLI_EV(a, SLUB_REFILL_FREELIST, slab, freelist, taken, 0, 0);

load_freelist:
    cpu_store(a, sli_get_fp(s, freelist), sli_next_tid(s, sl_dw_read(&c->fl_tid).hi));
    return freelist;

new_slab:
    if (c->partial) {
        slab = c->partial;
        c->partial = slab->next; /* slub_set_percpu_partial */
        slab->next = NULL;
        c->slab = slab;
        freelist = take_slab_freelist(a, slab, false, &taken);
        sl_assert(freelist); /* VM_BUG_ON(!freelist): CPU partial slabs have free objects */
        sli_stat(a, SL_SLUB_CPU_PARTIAL_ALLOC, 1);
        SLI_EV(a, SLUB_REFILL_CPU_PARTIAL, slab, freelist, taken, 0, 0);
        if (!freelist) {
            c->slab = NULL;
            goto new_slab;
        }
        goto load_freelist;
    }

    slab = get_partial(a, &freelist, &taken);
    if (slab) {
        SLI_EV(a, SLUB_REFILL_NODE_PARTIAL, slab, freelist, taken, 0, 0);
        goto retry_load_slab;
    }

    slab = sli_slub_new_slab(a);
    if (!slab)
        return NULL;
    sli_stat(a, SL_SLUB_ALLOC_SLAB, 1);
    /* No other reference to the slab yet: no CAS needed. */
    freelist = (void *)slab->fc.lo;
    uint32_t objects = sli_objects(slab->fc.hi);
    slab->fc = (sl_dword){0, sli_counters(objects, objects, 1)};
    SLI_EV(a, SLUB_NEW_SLAB, slab, freelist, sli_slab_order(slab), objects, 0);

retry_load_slab:
    if (c->slab) {
        /* Someone (an interrupt, in the kernel) installed a CPU slab meanwhile: flush it. */
        sli_slub_slab *flush_slab = c->slab;
        void *flush_freelist = (void *)sl_dw_read(&c->fl_tid).lo;
        c->slab = NULL;
        cpu_store(a, NULL, sli_next_tid(s, sl_dw_read(&c->fl_tid).hi));
        sli_slub_deactivate_slab(a, flush_slab, flush_freelist);
        sli_stat(a, SL_SLUB_CPUSLAB_FLUSH, 1);
        SLI_EV(a, SLUB_CPUSLAB_FLUSH, flush_slab, NULL, 0, 0, 0);
        goto retry_load_slab;
    }
    c->slab = slab;
    slab->cpu = a->cpu;
    goto load_freelist;
}

/*
 * __slab_alloc_node on PREEMPT_RT: tid, freelist and slab are read (an
 * RT kernel may be preempted anywhere here), then, the lockless path being
 * off, ___slab_alloc does everything again under local_lock.  The model
 * holds the lock for the whole slow path (the kernel drops it around the
 * page allocator); nothing else runs as this CPU meanwhile either way.
 */
static SLI_SLOW void *slab_alloc_rt(sli_act *a)
{
    sli_slub_cpu *c = a->c;
#if !defined(SLABLAB_BENCH)
    sl_dword cur = sl_dw_read(&c->fl_tid);
    sl_slub_pp_ctx ctx = {.cache = a->s, .op = a->op, .cpu = a->cpu, .tid = cur.hi, .freelist = (void *)cur.lo};
    SL_PREEMPT_POINT(a->s->trace, a->cpu, SL_SLUB_PP_ALLOC_BEFORE_CAS, &ctx);
#endif
    sl_spin_lock(&c->lock);
    void *object = sli_slub_slab_alloc_slow(a);
    sl_spin_unlock(&c->lock);
    return object;
}

/* slab_alloc_node: the fast path, or ___slab_alloc.  Returns the object or NULL (no memory). */
SL_INLINE void *slab_alloc(sli_act *a)
{
    sl_slub_cache *s = a->s;
    sli_slub_cpu *c = a->c;
    if (SL_UNLIKELY(s->fastpath == SL_SLUB_FP_RT))
        return slab_alloc_rt(a);
    for (;;) {
        sl_dword cur = sl_dw_read(&c->fl_tid);
        SLI_BARRIER();
        void *object = (void *)cur.lo;
        uintptr_t tid = cur.hi;
        if (SL_UNLIKELY(!object || !c->slab))
            return sli_slub_slab_alloc_slow(a);
        void *next = sli_get_fp(s, object);
#if !defined(SLABLAB_BENCH)
        sl_slub_pp_ctx ctx = {.cache = s, .op = a->op, .cpu = a->cpu, .tid = tid, .freelist = object, .next = next};
        SL_PREEMPT_POINT(s->trace, a->cpu, SL_SLUB_PP_ALLOC_BEFORE_CAS, &ctx);
#endif
        if (SL_LIKELY(sli_update_cpu_freelist(a, object, tid, next))) {
            sli_stat_fast(a, SL_SLUB_ALLOC_FASTPATH, 1);
            SLI_EV(a, SLUB_ALLOC_FASTPATH, c->slab, object, (uint32_t)tid, (uint32_t)sli_next_tid(s, tid), 0);
            return object;
        }
        sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL, 1);
        SLI_EV(a, SLUB_CPU_CAS_FAIL, c->slab, object, 0, (uint32_t)tid, (uint32_t)sl_dw_read(&c->fl_tid).hi);
    }
}

/* kmem_cache_alloc in context ctx (sli_ctx) as one complete operation: events, hooks, fast or slow path. */
static SL_NOINLINE int alloc_op_ctx(sl_slub_cache *s, unsigned cpu, unsigned ctx, void **obj)
{
    sli_act a;
    if (SL_UNLIKELY(!obj) || !sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    a.ctx = (uint8_t)ctx;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, SLI_OPC_ALLOC, 1, NULL);
    void *p = s->sheaves ? sli_alloc_from_pcs(s->sheaves, &a) : NULL; /* 6.18+: alloc_from_pcs first */
    if (!p)
        p = slab_alloc(&a);
    int rc = SL_LIKELY(p) ? SL_OK : SL_ENOMEM;
    if (SL_UNLIKELY(p && s->debug_hooks))
        rc = sli_slub_alloc_hook(&a, p);
    *obj = rc == SL_OK ? p : NULL;
    sli_slub_op_event(&a, SL_EV_OP_END, SLI_OPC_ALLOC, rc, *obj);
    return rc;
}
static SL_NOINLINE int alloc_op(sl_slub_cache *s, unsigned cpu, void **obj)
{
    return alloc_op_ctx(s, cpu, SLI_CTX_BLOCK, obj);
}

int sl_slub_alloc_gfp(sl_slub_cache *s, unsigned cpu, sl_slub_gfp gfp, void **obj)
{
    if (SL_UNLIKELY(!obj || !s))
        return SL_EINVAL;
    switch (gfp) {
    case SL_SLUB_GFP_KERNEL:
        return sl_slub_alloc(s, cpu, obj);
    case SL_SLUB_GFP_ATOMIC:
    case SL_SLUB_GFP_NOWAIT:
        return alloc_op_ctx(s, cpu, SLI_CTX_NONBLOCK, obj);
    default:
        *obj = NULL;
        return SL_EINVAL;
    }
}

/*
 * kmalloc_nolock on this cache (as the kmalloc bucket its size picks): 6.18
 * __slab_alloc_node without the sheaves, refusing with -EBUSY when the CPU
 * slab's local_lock is held (PREEMPT_RT here); 7.x alloc_from_pcs then
 * ___slab_alloc, every lock taken with a trylock.
 */
int sl_slub_kmalloc_nolock(sl_slub_cache *s, unsigned cpu, void **obj)
{
    sli_act a;
    if (SL_UNLIKELY(!obj) || !sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    *obj = NULL;
    if (!s->rules.nolock)
        return SL_EINVAL; /* kmalloc_nolock came with 6.18 */
    a.ctx = SLI_CTX_NOLOCK;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, SLI_OPC_ALLOC, 1, NULL);
    void *p = NULL;
    int rc = SL_ENOMEM;
    if (!s->rules.cpu_slab) {
        p = s->sheaves ? sli_alloc_from_pcs(s->sheaves, &a) : NULL;
        if (!p)
            p = sli_slub_slab_alloc_slow(&a);
    } else if (s->fastpath == SL_SLUB_FP_RT && atomic_load_explicit(&a.c->lock.locked, memory_order_relaxed)) {
        /* local_lock_is_locked(&s->cpu_slab->lock): -EBUSY, the kernel tries the next kmalloc bucket */
        SLI_EV(&a, SLUB_TRYLOCK_BUSY, NULL, NULL, 2, 5, 0);
        rc = SL_EBUSY;
    } else {
        p = slab_alloc(&a);
    }
    if (p)
        rc = SL_OK;
    if (SL_UNLIKELY(p && s->debug_hooks))
        rc = sli_slub_alloc_hook(&a, p);
    *obj = rc == SL_OK ? p : NULL;
    sli_slub_op_event(&a, SL_EV_OP_END, SLI_OPC_ALLOC, rc, *obj);
    return rc;
}

/*
 * The kernel inlines slab_alloc_node's fast path into every caller, built
 * for one fast-path variant.  Here that is a leaf function per variant (no
 * frame, no act; only the CAS variants save RBX for CMPXCHG16B) for caches
 * that need nothing else (s->leaf): read tid and freelist, read the
 * object's free pointer, replace the pair.  Anything else (an empty CPU
 * freelist or no CPU slab, a failed CAS) goes to alloc_op, which starts
 * over, as the kernel's `goto redo` does.
 */
SL_INLINE int leaf_alloc(sl_slub_cache *s, unsigned cpu, void **obj, const unsigned fp)
{
    if (SL_UNLIKELY(cpu >= s->ncpus))
        return alloc_op(s, cpu, obj);
    sli_slub_cpu *c = &s->cpu[cpu];
    SLI_HIDE_VAR(c);
    sl_dword cur = sl_dw_read(&c->fl_tid);
    SLI_BARRIER();
    void *object = (void *)cur.lo;
    if (SL_UNLIKELY(!object || !c->slab))
        return alloc_op(s, cpu, obj);
    void *next = sli_get_fp_raw(s, object);
    if (SL_UNLIKELY(!sli_cpu_freelist_update(s, c, fp, object, cur.hi, next))) {
        sli_cstat(c, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL, 1);
        return alloc_op(s, cpu, obj);
    }
    sli_cstat_fast(c, SL_SLUB_ALLOC_FASTPATH, 1);
    *obj = object;
    return SL_OK;
}
static SL_NOINLINE int alloc_cmpxchg(sl_slub_cache *s, unsigned cpu, void **obj)
{
    return leaf_alloc(s, cpu, obj, SL_SLUB_FP_CMPXCHG);
}
static SL_NOINLINE int alloc_locked(sl_slub_cache *s, unsigned cpu, void **obj)
{
    return leaf_alloc(s, cpu, obj, SL_SLUB_FP_LOCKED);
}
static SL_NOINLINE int alloc_plain(sl_slub_cache *s, unsigned cpu, void **obj)
{
    return leaf_alloc(s, cpu, obj, SL_SLUB_FP_PLAIN);
}
/*
 * PREEMPT_RT's everyday allocation as a leaf: ___slab_alloc's first case
 * under local_lock (c->slab set, objects on c->freelist: load_freelist, a
 * plain write of freelist and tid), counted as ALLOC_SLOWPATH as the kernel
 * counts it.  Anything else goes to alloc_op.
 */
static SL_NOINLINE int alloc_rt(sl_slub_cache *s, unsigned cpu, void **obj)
{
    if (SL_UNLIKELY(cpu >= s->ncpus))
        return alloc_op(s, cpu, obj);
    sli_slub_cpu *c = &s->cpu[cpu];
    SLI_HIDE_VAR(c);
    sl_spin_lock(&c->lock);
    sl_dword cur = sl_dw_read(&c->fl_tid);
    void *object = (void *)cur.lo;
    if (SL_UNLIKELY(!object || !c->slab)) {
        sl_spin_unlock(&c->lock);
        return alloc_op(s, cpu, obj);
    }
    sl_dw_write_plain(&c->fl_tid, (sl_dword){(uintptr_t)sli_get_fp_raw(s, object), sli_next_tid(s, cur.hi)});
    sl_spin_unlock(&c->lock);
    sli_cstat(c, SL_SLUB_ALLOC_SLOWPATH, 1);
    *obj = object;
    return SL_OK;
}

/*
 * alloc_from_pcs as a leaf, for a cache with sheaves that needs nothing
 * else: under the local trylock, pop main's top object.  A held lock or an
 * empty main go to alloc_op (which replaces main, or takes the slab path).
 */
static SL_NOINLINE int alloc_sheaf(sl_slub_cache *s, unsigned cpu, void **obj)
{
    if (SL_UNLIKELY(cpu >= s->ncpus))
        return alloc_op(s, cpu, obj);
    sli_pcs *pcs = &s->sheaves->pcs[cpu];
    if (SL_UNLIKELY(!sli_pcs_trylock(pcs)))
        return alloc_op(s, cpu, obj);
    sli_sheaf *main = pcs->main;
    if (SL_UNLIKELY(!main->size)) {
        sli_pcs_unlock(pcs);
        return alloc_op(s, cpu, obj);
    }
    *obj = main->objects[--main->size];
    sli_pcs_unlock(pcs);
    sli_cstat_fast(&s->cpu[cpu], SL_SLUB_ALLOC_PCS, 1);
    return SL_OK;
}

sli_alloc_fn sli_slub_alloc_fn(unsigned leaf)
{
    switch (leaf) {
    case SLI_LEAF_SHEAF:
        return alloc_sheaf;
    case SLI_LEAF_CMPXCHG:
        return alloc_cmpxchg;
    case SLI_LEAF_LOCKED:
        return alloc_locked;
    case SLI_LEAF_PLAIN:
        return alloc_plain;
    case SLI_LEAF_RT:
        return alloc_rt;
    default:
        return alloc_op;
    }
}

/* The cache's leaf fast path, or the complete operation (debug, hardened, traced caches). */
int sl_slub_alloc(sl_slub_cache *s, unsigned cpu, void **obj)
{
    if (SL_UNLIKELY(!obj || !s))
        return SL_EINVAL;
    return s->alloc_fn(s, cpu, obj);
}

/*
 * __kmem_cache_alloc_bulk over the per-CPU slab (6.x): with interrupts off,
 * pop objects off the CPU freelist, calling ___slab_alloc when it runs dry;
 * the tid is bumped before each slow path and once at the end.  The model
 * keeps the freelist in a local while "interrupts are off" and stores it
 * with one CAS, which is the same as the kernel's plain writes there.  A
 * debug cache's every object comes from ___slab_alloc.
 */
unsigned sli_slub_alloc_bulk_cpu(sli_act *a, unsigned n, void **p)
{
    sl_slub_cache *s = a->s;
    sl_dword cur = sl_dw_read(&a->c->fl_tid);
    unsigned i;
    for (i = 0; i < n; i++) {
        void *object = (void *)cur.lo;
        if (SL_UNLIKELY(!object || !a->c->slab)) {
            cpu_store(a, object, sli_next_tid(s, cur.hi));
            p[i] = sli_slub_slab_alloc_slow(a);
            if (!p[i])
                break;
            cur = sl_dw_read(&a->c->fl_tid);
        } else {
            cur.lo = (uintptr_t)sli_get_fp(s, object);
            p[i] = object;
            sli_stat_fast(a, SL_SLUB_ALLOC_FASTPATH, 1);
            SLI_EV(a, SLUB_ALLOC_FASTPATH, a->c->slab, object, (uint32_t)cur.hi, (uint32_t)cur.hi, 1);
        }
    }
    /* cur is the CPU freelist unless the slow path just failed (then c already is). */
    if (i == n)
        cpu_store(a, (void *)cur.lo, sli_next_tid(s, sl_dw_read(&a->c->fl_tid).hi));
    if (i < n) {
        sli_slub_free_bulk_slabs(a, p, i); /* out of memory part way: give back what was taken */
        return 0;
    }
    return n;
}

/*
 * The slab part of kmem_cache_alloc_bulk: 7.0 refill_objects (a debug
 * cache: ___slab_alloc per object), before it the per-CPU slab loop.
 * All or nothing: n, or 0.
 */
unsigned sli_slub_alloc_bulk_slabs(sli_act *a, unsigned n, void **p)
{
    sl_slub_cache *s = a->s;
    if (s->rules.cpu_slab)
        return sli_slub_alloc_bulk_cpu(a, n, p);
    unsigned got = 0;
    if (sli_kmem_cache_debug(s)) {
        while (got < n && (p[got] = sli_slub_slab_alloc_slow(a)))
            got++;
    } else {
        got = sli_slub_refill_objects(a, p, n, n);
        if (got == n)
            sli_stat(a, SL_SLUB_ALLOC_SLOWPATH, got);
    }
    if (got < n) {
        sli_slub_free_bulk_slabs(a, p, got);
        return 0;
    }
    return n;
}

/*
 * kmem_cache_alloc_bulk: from the sheaves first (alloc_from_pcs_bulk, 6.18+)
 * then from slabs; then the post-alloc hooks.  A hook that finds an object
 * handed out twice fails the call like an allocation failure: the objects
 * before it go back as frees, the rest unhooked, the bad one stays out.
 */
int sl_slub_alloc_bulk(sl_slub_cache *s, unsigned cpu, size_t n, void **p)
{
    return sl_slub_alloc_bulk_gfp(s, cpu, SL_SLUB_GFP_KERNEL, n, p);
}

int sl_slub_alloc_bulk_gfp(sl_slub_cache *s, unsigned cpu, sl_slub_gfp gfp, size_t n, void **p)
{
    sli_act a;
    int ctx = sli_ctx_of_gfp(gfp);
    if (ctx < 0 || (!p && n) || n > (1u << 20) || !sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    a.ctx = (uint8_t)ctx; /* no path below asks it: see sl_slub_alloc_bulk_gfp in slub.h */
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, SLI_OPC_ALLOC_BULK, (int32_t)n, NULL);
    sli_stat(&a, SL_SLUB_BULK_ALLOC_CALLS, 1);
    unsigned got = s->sheaves ? sli_alloc_from_pcs_bulk(s->sheaves, &a, (unsigned)n, p) : 0;
    if (got < n && !sli_slub_alloc_bulk_slabs(&a, (unsigned)n - got, p + got)) {
        /* Out of memory: the sheaves' objects go to slabs, not back to the sheaves (as the kernel). */
        sli_slub_free_bulk_slabs(&a, p, got);
        got = 0;
    } else {
        got = (unsigned)n;
    }
    for (unsigned i = 0; got && s->debug_hooks && i < n; i++) {
        if (sli_slub_alloc_hook(&a, p[i]) == SL_OK)
            continue;
        unsigned cas;
        sl_slub_free_bulk(s, cpu, i, p, &cas);
        if (i + 1 < n)
            sli_slub_free_bulk_slabs(&a, p + i + 1, (unsigned)n - i - 1);
        got = 0;
    }
    SLI_EV(&a, SLUB_BULK_ALLOC, NULL, NULL, (uint32_t)n, got, 0);
    sli_slub_op_event(&a, SL_EV_OP_END, SLI_OPC_ALLOC_BULK, (int32_t)got, NULL);
    return (int)got;
}
