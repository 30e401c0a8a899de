/*
 * free.c - freeing: the lockless fast path (do_slab_free; on PREEMPT_RT its
 * local_lock branch), the remote/slow path (__slab_free), the per-CPU
 * partial list (put_cpu_partial, __put_partials), deactivate_slab and
 * flushing a CPU, and kmem_cache_free_bulk in its two forms (Linux 6.8+;
 * see alloc.c).
 *
 * FREELIST_HARDENED's BUG_ON(object == fp) lives in set_freepointer, so the
 * kernel runs it wherever an object is linked onto a freelist: here
 * do_slab_free, __slab_free, deactivate_slab, build_detached_freelist and
 * free_to_partial_list each check before they link (sli_fp_self_link) and
 * refuse the double free the kernel would BUG() on.
 *
 * __slab_free runs from any CPU without a lock: one sl_dw_cas on the slab's
 * freelist+counters pushes the chain.  Only when the slab may have to change
 * lists (it becomes empty, or it was full) does it take the node list_lock
 * before that CAS, so that the list decision and the counters agree.  A full
 * slab that gets its first free back goes to the freeing CPU's partial list
 * without the lock (6.8+: unfrozen, not on the node list).
 *
 * Every walk of a freelist is bounded by the slab's object count, so a
 * corrupt (cyclic) freelist is reported, never looped on.
 *
 * sl_slub_free jumps to s->free_fn: a leaf function per variant for caches
 * that need nothing but the fast path (see alloc.c), else free_op, the
 * complete operation; the leaf hands a free into another slab straight to
 * __slab_free and everything else to free_op.
 */
#include "sheaves.h"

/*
 * kmem_cache_has_cpu_partial: a property of the cache, not of the
 * cpu_partial tunable (which may be 0); 7.0 has no CPU partial lists.
 */
static bool has_cpu_partial(const sl_slub_cache *s) { return !sli_kmem_cache_debug(s) && s->rules.cpu_slab; }

/*
 * FREE_SLOWPATH as 7.0 counts it: by the callers of __slab_free, per object
 * (before 7.0 __slab_free counts itself, once per call).
 */
SL_INLINE void stat_free_slowpath_nocpu(sli_act *a, uint64_t n)
{
    if (!a->s->rules.cpu_slab)
        sli_stat(a, SL_SLUB_FREE_SLOWPATH, n);
}

/* unfreeze_partials' CAS (before 6.8): a CPU partial slab is unfrozen, under list_lock; remote frees may race it. */
static void unfreeze(sli_act *a, sli_slub_slab *slab)
{
    for (;;) {
        sl_dword old = sl_dw_read(&slab->fc);
        a->cas++;
        if (sl_dw_cas(&slab->fc, old, (sl_dword){old.lo, sli_counters(sli_inuse(old.hi), sli_objects(old.hi), 0)}))
            return;
        sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_FAIL, 1);
        SLI_EV(a, SLUB_SLAB_CAS_FAIL, slab, NULL, 7, 0, 0);
    }
}

/*
 * __put_partials (before 6.8 unfreeze_partials, which also unfreezes each
 * slab): moves a detached CPU partial chain to the node lists, each slab to
 * its own node's (the list_lock switched when the node changes, as the
 * kernel's n2 != n); empty slabs beyond min_partial are discarded instead.
 */
void sli_slub_put_partials(sli_act *a, sli_slub_slab *chain)
{
    sl_slub_cache *s = a->s;
    sli_slub_node *n = NULL;
    sli_slub_slab *discard = NULL;
    while (chain) {
        sli_slub_slab *slab = chain;
        chain = slab->next;
        slab->next = NULL;
        if (sli_slab_node(s, slab) != n) {
            if (n)
                sl_spin_unlock(&n->list_lock);
            n = sli_slab_node(s, slab);
            sli_list_lock(a, n);
        }
        if (s->rules.frozen_cpu_partial)
            unfreeze(a, slab);
        if (!sli_inuse(sl_dw_read(&slab->fc).hi) && n->nr_partial >= s->g.min_partial) {
            slab->next = discard;
            discard = slab;
        } else {
            sli_slub_add_partial(a, slab, true);
            sli_stat(a, SL_SLUB_FREE_ADD_PARTIAL, 1);
        }
    }
    if (n)
        sl_spin_unlock(&n->list_lock);
    while (discard) {
        sli_slub_slab *slab = discard;
        discard = slab->next;
        sli_stat(a, SL_SLUB_DEACTIVATE_EMPTY, 1);
        sli_slub_discard_slab(a, slab);
        sli_stat(a, SL_SLUB_FREE_SLAB, 1);
    }
}

/*
 * put_cpu_partial: pushes a slab with free objects on this CPU's partial
 * list (unfrozen from 6.8, frozen before).  With `drain` (a free put it
 * here) a list already holding cpu_partial_slabs slabs (before 5.16: more
 * than cpu_partial free objects, page->pobjects) is first moved to the node.
 */
void sli_slub_put_cpu_partial(sli_act *a, sli_slub_slab *slab, bool drain)
{
    sli_slub_cpu *c = a->c;
    const sl_slub_cache *s = a->s;
    sli_slub_slab *oldslab = c->partial, *to_put = NULL;
    uint32_t slabs = 0, pobjects = 0;
    if (oldslab) {
        bool full = s->rules.cpu_partial_by_objects ? oldslab->pobjects > s->g.cpu_partial
                                                    : oldslab->slabs >= s->g.cpu_partial_slabs;
        if (drain && full) {
            to_put = oldslab;
            oldslab = NULL;
        } else {
            slabs = oldslab->slabs;
            pobjects = oldslab->pobjects;
        }
    }
    slabs++;
    uintptr_t counters = sl_dw_read(&slab->fc).hi;
    slab->pobjects = pobjects + sli_objects(counters) - sli_inuse(counters);
    slab->slabs = slabs;
    slab->next = oldslab;
    slab->cpu = a->cpu;
    c->partial = slab;
    SLI_EV(a, SLUB_CPU_PARTIAL_ADD, slab, NULL, slabs, drain, 0);
    if (to_put) {
        SLI_EV(a, SLUB_CPU_PARTIAL_DRAIN, NULL, NULL, to_put->slabs, 0, 0);
        sli_slub_put_partials(a, to_put);
        sli_stat(a, SL_SLUB_CPU_PARTIAL_DRAIN, 1);
    }
}

/*
 * deactivate_slab's stage one before 5.12: every object of the CPU freelist
 * but the last goes onto the slab's freelist with its own CAS, the slab
 * still frozen.  Stops early at a link that leaves the slab (stage two then
 * reports it).  Returns what is left of the CPU freelist.
 */
static void *drain_cpu_freelist(sli_act *a, sli_slub_slab *slab, void *freelist, uint32_t limit)
{
    sl_slub_cache *s = a->s;
    for (uint32_t k = 0; freelist && k < limit; k++) {
        void *next = sli_get_fp(s, freelist);
        if (!next || sli_slab_of(s, next) != slab)
            break;
        for (;;) {
            sl_dword old = sl_dw_read(&slab->fc);
            if (sli_fp_self_link(a, SLI_LINK_DEACTIVATE, slab, freelist, (void *)old.lo))
                break; /* freed remotely too (a double free): it stays on the slab's freelist, once */
            sli_set_fp(s, freelist, (void *)old.lo);
            sl_dword new_ = {(uintptr_t)freelist, sli_counters(sli_inuse(old.hi) - 1, sli_objects(old.hi), 1)};
            a->cas++;
            if (sl_dw_cas(&slab->fc, old, new_))
                break;
            sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_FAIL, 1);
            SLI_EV(a, SLUB_SLAB_CAS_FAIL, slab, NULL, 8, 0, 0);
        }
        freelist = next;
    }
    return freelist;
}

/*
 * deactivate_slab: gives a CPU slab back.  Stage one counts the CPU
 * freelist and finds its tail; stage two splices it onto the slab's freelist
 * and unfreezes with one CAS; stage three discards an empty slab beyond
 * min_partial, puts one with free objects on the node list, or leaves a full
 * one untracked.
 */
void sli_slub_deactivate_slab(sli_act *a, sli_slub_slab *slab, void *freelist)
{
    sl_slub_cache *s = a->s;
    sli_slub_node *n = sli_slab_node(s, slab);
    bool tail = false;
    uint32_t free_delta = 0;
    void *freelist_tail = NULL;
    if (sl_dw_read(&slab->fc).lo) {
        sli_stat(a, SL_SLUB_DEACTIVATE_REMOTE_FREES, 1);
        tail = true;
    }
    uint32_t limit = sli_objects(sl_dw_read(&slab->fc).hi);
    if (s->rules.deactivate_per_object)
        freelist = drain_cpu_freelist(a, slab, freelist, limit);
    for (void *it = freelist; it; it = sli_get_fp(s, it)) {
        if (free_delta == limit || sli_slab_of(s, it) != slab) {
            /* freelist_corrupted(): isolate the rest rather than follow it. */
            sli_slub_error(a, SL_EFREELIST, slab, NULL);
            break;
        }
        freelist_tail = it;
        free_delta++;
    }
    sl_dword old, new_;
    for (;;) {
        old = sl_dw_read(&slab->fc);
        if (freelist_tail && sli_fp_self_link(a, SLI_LINK_DEACTIVATE, slab, freelist_tail, (void *)old.lo)) {
            /* The CPU freelist's tail was also freed remotely onto the slab's freelist (a double free
             * without checks): it stays there, once, and the CPU freelist is spliced without it. */
            void *prev = NULL;
            for (void *it = freelist; it != freelist_tail; it = sli_get_fp(s, it))
                prev = it;
            freelist_tail = prev;
            free_delta--;
            continue;
        }
        uint32_t inuse = sli_inuse(old.hi);
        new_.lo = old.lo;
        if (freelist_tail) {
            inuse -= free_delta;
            sli_set_fp(s, freelist_tail, (void *)old.lo);
            new_.lo = (uintptr_t)freelist;
        }
        new_.hi = sli_counters(inuse, sli_objects(old.hi), 0);
        a->cas++;
        if (sl_dw_cas(&slab->fc, old, new_))
            break;
        sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_FAIL, 1);
        SLI_EV(a, SLUB_SLAB_CAS_FAIL, slab, NULL, 3, 0, 0);
    }
    uint32_t inuse = sli_inuse(new_.hi);
    /* Event arg1: 0 stays full, 1 node list head, 2 node list tail, 3 discarded. */
    if (!inuse && __atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED) >= s->g.min_partial) {
        SLI_EV(a, SLUB_DEACTIVATE, slab, NULL, free_delta, 3, inuse);
        sli_stat(a, SL_SLUB_DEACTIVATE_EMPTY, 1);
        sli_slub_discard_slab(a, slab);
        sli_stat(a, SL_SLUB_FREE_SLAB, 1);
    } else if (new_.lo) {
        SLI_EV(a, SLUB_DEACTIVATE, slab, NULL, free_delta, tail ? 2 : 1, inuse);
        sli_list_lock(a, n);
        sli_slub_add_partial(a, slab, tail);
        sl_spin_unlock(&n->list_lock);
        sli_stat(a, tail ? SL_SLUB_DEACTIVATE_TO_TAIL : SL_SLUB_DEACTIVATE_TO_HEAD, 1);
    } else {
        SLI_EV(a, SLUB_DEACTIVATE, slab, NULL, free_delta, 0, inuse);
        sli_stat(a, SL_SLUB_DEACTIVATE_FULL, 1);
    }
}

/*
 * free_to_partial_list: a debug cache's free, all under the node's
 * list_lock.  A full slab goes onto the node partial list (tail); an empty
 * one is discarded when the list holds min_partial slabs already.  Returns 0
 * or SL_EDOUBLEFREE / SL_ECORRUPT (a slab disabled meanwhile: check_slab
 * under the lock) with nothing freed.
 */
static SLI_SLOW int free_to_partial_list(sli_act *a, sli_slub_slab *slab, void *head, void *tail, uint32_t cnt)
{
    sl_slub_cache *s = a->s;
    sli_slub_node *n = sli_slab_node(s, slab);
    sli_list_lock(a, n);
    sl_dword old = sl_dw_read(&slab->fc);
    void *prior = (void *)old.lo;
    uint32_t inuse = sli_inuse(old.hi);
    int err = sli_frozen(old.hi) ? SL_ECORRUPT : inuse < cnt ? SL_EDOUBLEFREE : SL_OK;
    if (SL_UNLIKELY(err != SL_OK)) {
        sl_spin_unlock(&n->list_lock);
        sli_slub_error(a, err, slab, head);
        return err;
    }
    if (SL_UNLIKELY(sli_fp_self_link(a, SLI_LINK_FREE_TO_PARTIAL, slab, tail, prior))) {
        sl_spin_unlock(&n->list_lock);
        return SL_EDOUBLEFREE;
    }
    inuse -= cnt;
    sli_set_fp(s, tail, prior);
    a->cas++;
    bool ok = sl_dw_cas(&slab->fc, old, (sl_dword){(uintptr_t)head, sli_counters(inuse, sli_objects(old.hi), 0)});
    sl_assert(ok); /* every change of a debug cache's slab happens under list_lock */
    (void)ok;
    SLI_EV(a, SLUB_FREE_TO_PARTIAL, slab, head, cnt, inuse, 0);
    bool discard = !inuse && n->nr_partial >= s->g.min_partial;
    if (!prior) {
        if (!discard) {
            sli_slub_add_partial(a, slab, true);
            sli_stat(a, SL_SLUB_FREE_ADD_PARTIAL, 1);
        }
    } else if (discard) {
        sli_slub_remove_partial(a, slab);
        sli_stat(a, SL_SLUB_FREE_REMOVE_PARTIAL, 1);
    }
    sl_spin_unlock(&n->list_lock);
    if (discard) {
        sli_stat(a, SL_SLUB_FREE_SLAB, 1);
        sli_slub_discard_slab(a, slab);
    }
    return SL_OK;
}

/* __slab_free: frees the chain head..tail (cnt objects) into a slab that is not this CPU's slab. */
static SLI_SLOW int slab_free_slow(sli_act *a, sli_slub_slab *slab, void *head, void *tail, uint32_t cnt)
{
    sl_slub_cache *s = a->s;
    sli_slub_node *n = sli_slab_node(s, slab);
    bool locked = false, on_node_partial = false, was_frozen;
    sl_dword old, new_;
    if (s->rules.cpu_slab)
        sli_stat(a, SL_SLUB_FREE_SLOWPATH, 1);
    if (sli_kmem_cache_debug(s))
        return free_to_partial_list(a, slab, head, tail, cnt);
    for (;;) {
        if (locked) {
            sl_spin_unlock(&n->list_lock);
            locked = false;
        }
#if !defined(SLABLAB_BENCH)
        sl_slub_pp_ctx ctx = {.cache = s,
                              .op = a->op,
                              .cpu = a->cpu,
                              .freelist = (void *)sl_dw_read(&slab->fc).lo,
                              .next = head,
                              .tail = tail,
                              .cnt = cnt};
        SL_PREEMPT_POINT(s->trace, a->cpu, SL_SLUB_PP_SLAB_FREE, &ctx);
#endif
        old = sl_dw_read(&slab->fc);
        void *prior = (void *)old.lo;
        uint32_t inuse = sli_inuse(old.hi);
        if (SL_UNLIKELY(inuse < cnt)) {
            /* More frees than objects in use: a double free the counters reveal. Change nothing. */
            sli_slub_error(a, SL_EDOUBLEFREE, slab, head);
            return SL_EDOUBLEFREE;
        }
        if (SL_UNLIKELY(sli_fp_self_link(a, SLI_LINK_SLAB_FREE, slab, tail, prior)))
            return SL_EDOUBLEFREE; /* tail is the slab freelist's head already */
        sli_set_fp(s, tail, prior);
        was_frozen = sli_frozen(old.hi);
        inuse -= cnt;
        bool freeze = false;
        if ((!inuse || !prior) && !was_frozen) {
            if (has_cpu_partial(s) && !prior) {
                /* Full until now: it goes to this CPU's partial list (before 6.8 frozen in this CAS). */
                freeze = s->rules.frozen_cpu_partial;
            } else {
                sli_list_lock(a, n);
                locked = true;
                on_node_partial = slab->on_node_partial;
            }
        }
        new_ = (sl_dword){(uintptr_t)head, sli_counters(inuse, sli_objects(old.hi), was_frozen || freeze)};
        a->cas++;
        if (sl_dw_cas(&slab->fc, old, new_))
            break;
        sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_FAIL, 1);
        SLI_EV(a, SLUB_SLAB_CAS_FAIL, slab, NULL, 0, 0, 0);
    }
    void *prior = (void *)old.lo;
    uint32_t inuse = sli_inuse(new_.hi);
    SLI_EV(a, SLUB_FREE_SLOWPATH, slab, head, cnt, inuse, was_frozen);
    if (!locked) {
        if (was_frozen) {
            sli_stat(a, SL_SLUB_FREE_FROZEN, 1);
            SLI_EV(a, SLUB_FREE_FROZEN, slab, head, cnt, 0, 0);
        } else if (has_cpu_partial(s) && !prior) {
            /* The slab was full: it goes to this CPU's partial list. */
            sli_slub_put_cpu_partial(a, slab, true);
            sli_stat(a, SL_SLUB_CPU_PARTIAL_FREE, 1);
        }
        return SL_OK;
    }
    /* Partly free but not on the node list (on some CPU's partial list): nothing to do. */
    if (prior && !on_node_partial) {
        sl_spin_unlock(&n->list_lock);
        return SL_OK;
    }
    if (!inuse && n->nr_partial >= s->g.min_partial)
        goto slab_empty;
    if (!has_cpu_partial(s) && !prior) {
        sli_slub_add_partial(a, slab, true);
        sli_stat(a, SL_SLUB_FREE_ADD_PARTIAL, 1);
    }
    sl_spin_unlock(&n->list_lock);
    return SL_OK;

slab_empty:
    if (prior) {
        sli_slub_remove_partial(a, slab);
        sli_stat(a, SL_SLUB_FREE_REMOVE_PARTIAL, 1);
    }
    sl_spin_unlock(&n->list_lock);
    sli_stat(a, SL_SLUB_FREE_SLAB, 1);
    sli_slub_discard_slab(a, slab);
    return SL_OK;
}

int sli_slub_slab_free(sli_act *a, sli_slub_slab *slab, void *head, void *tail, uint32_t cnt)
{
    return slab_free_slow(a, slab, head, tail, cnt);
}

/*
 * do_slab_free's PREEMPT_RT branch: under local_lock, c->slab is checked
 * again (the RT kernel may have been preempted since it compared them: the
 * lock, not the tid, is what protects this path), then freelist and tid are
 * written plainly.  Returns 0, SL_EDOUBLEFREE, or 1 when the CPU slab
 * changed and the free must start over.
 */
static SLI_SLOW int slab_free_rt(sli_act *a, sli_slub_slab *slab, void *head, void *tail, uint32_t cnt)
{
    sl_slub_cache *s = a->s;
    sli_slub_cpu *c = a->c;
    sl_spin_lock(&c->lock);
    if (SL_UNLIKELY(slab != c->slab)) {
        sl_spin_unlock(&c->lock);
        SLI_EV(a, SLUB_RT_REDO, slab, head, 0, 0, 0);
        return 1;
    }
    sl_dword cur = sl_dw_read(&c->fl_tid);
    if (SL_UNLIKELY(sli_fp_self_link(a, SLI_LINK_DO_SLAB_FREE, slab, tail, (void *)cur.lo))) {
        sl_spin_unlock(&c->lock);
        return SL_EDOUBLEFREE;
    }
    sli_set_fp(s, tail, (void *)cur.lo);
    sl_dw_write_plain(&c->fl_tid, (sl_dword){(uintptr_t)head, sli_next_tid(s, cur.hi)});
    sl_spin_unlock(&c->lock);
    sli_stat_fast(a, SL_SLUB_FREE_FASTPATH, cnt);
    SLI_EV(a, SLUB_FREE_FASTPATH, slab, head, cnt, (uint32_t)sli_next_tid(s, cur.hi), 0);
    (void)cnt; /* benchmark builds count and trace nothing here */
    return SL_OK;
}

/*
 * do_slab_free of a chain head..tail of cnt objects of `slab`: the fast path
 * when slab is this CPU's slab, else __slab_free.  The tid is read first
 * (with the freelist: one double-word read), then, after SLI_BARRIER, the
 * CPU slab.  Returns 0 or SL_EDOUBLEFREE (nothing freed).
 */
SL_INLINE int do_slab_free(sli_act *a, sli_slub_slab *slab, void *head, void *tail, uint32_t cnt)
{
    sl_slub_cache *s = a->s;
    sli_slub_cpu *c = a->c;
    for (;;) {
        sl_dword cur = sl_dw_read(&c->fl_tid);
        uintptr_t tid = cur.hi;
        SLI_BARRIER();
        if (SL_UNLIKELY(slab != c->slab))
            return slab_free_slow(a, slab, head, tail, cnt);
        if (SL_UNLIKELY(s->fastpath == SL_SLUB_FP_RT)) {
#if !defined(SLABLAB_BENCH)
            sl_slub_pp_ctx ctx = {.cache = s,
                                  .op = a->op,
                                  .cpu = a->cpu,
                                  .tid = tid,
                                  .freelist = (void *)cur.lo,
                                  .next = head,
                                  .tail = tail,
                                  .cnt = cnt};
            SL_PREEMPT_POINT(s->trace, a->cpu, SL_SLUB_PP_FREE_BEFORE_CAS, &ctx);
#endif
            int rc = slab_free_rt(a, slab, head, tail, cnt);
            if (rc <= 0)
                return rc;
            continue;
        }
        void *freelist = (void *)cur.lo;
        if (SL_UNLIKELY(sli_fp_self_link(a, SLI_LINK_DO_SLAB_FREE, slab, tail, freelist)))
            return SL_EDOUBLEFREE;
        sli_set_fp(s, tail, freelist);
#if !defined(SLABLAB_BENCH)
        sl_slub_pp_ctx ctx = {.cache = s,
                              .op = a->op,
                              .cpu = a->cpu,
                              .tid = tid,
                              .freelist = freelist,
                              .next = head,
                              .tail = tail,
                              .cnt = cnt};
        SL_PREEMPT_POINT(s->trace, a->cpu, SL_SLUB_PP_FREE_BEFORE_CAS, &ctx);
#endif
        if (SL_LIKELY(sli_update_cpu_freelist(a, freelist, tid, head))) {
            sli_stat_fast(a, SL_SLUB_FREE_FASTPATH, cnt);
            SLI_EV(a, SLUB_FREE_FASTPATH, slab, head, cnt, (uint32_t)sli_next_tid(s, tid), 0);
            return SL_OK;
        }
        sli_stat(a, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL, 1);
        SLI_EV(a, SLUB_CPU_CAS_FAIL, slab, head, 1, (uint32_t)tid, (uint32_t)sl_dw_read(&c->fl_tid).hi);
    }
}

/*
 * kmem_cache_free of one object within operation a: checks, then the
 * sheaves (free_to_pcs, 6.18+), then do_slab_free (7.0: __slab_free).
 */
SL_INLINE int free_one(sli_act *a, void *obj)
{
    int err;
    sli_slub_slab *slab = sli_slub_free_check(a, obj, &err);
    if (SL_UNLIKELY(!slab))
        return err;
    /* 6.18+ slab_free: an object of another node's slab never goes onto the sheaves */
    if (a->s->sheaves && !sli_slab_remote(a, slab) && sli_free_to_pcs(a->s->sheaves, a, obj))
        return SL_OK;
    stat_free_slowpath_nocpu(a, 1);
    return do_slab_free(a, slab, obj, obj, 1);
}

/* kmem_cache_free as one complete operation: events, checks, hooks, fast or slow path. */
static SL_NOINLINE int free_op(sl_slub_cache *s, unsigned cpu, void *obj)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, SLI_OPC_FREE, 1, obj);
    int rc = free_one(&a, obj);
    sli_slub_op_event(&a, SL_EV_OP_END, SLI_OPC_FREE, rc, NULL);
    return rc;
}

/* ---- kfree_nolock (6.18+) --------------------------------------------- */

enum {
    OPC_IRQ_WORK = 17
}; /* OP_BEGIN/OP_END's code for the irq_work step: SL_SCHED_IRQ_WORK (14-16 are the web's tuning brackets) */

/*
 * defer_free: obj goes on this CPU's llist (through its free pointer slot)
 * for the CPU's irq_work, which the first object queues (llist_add true).
 */
static void defer_free(sli_act *a, sli_slub_slab *slab, void *obj)
{
    bool first = a->c->defer_free == NULL;
    sli_set_fp(a->s, obj, a->c->defer_free);
    a->c->defer_free = obj;
    SLI_EV(a, SLUB_DEFER_FREE, slab, obj, first, 0, 0);
    (void)first;
    (void)slab; /* benchmark builds have no events */
}

int sl_slub_kfree_nolock(sl_slub_cache *s, unsigned cpu, void *obj)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a) || !s->rules.nolock)
        return SL_EINVAL;
    a.ctx = SLI_CTX_NOLOCK;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, SLI_OPC_FREE, 1, obj);
    int rc;
    sli_slub_slab *slab = sli_slub_free_check(&a, obj, &rc);
    if (slab) {
        rc = SL_OK;
        if (!s->rules.cpu_slab) {
            /* 7.x: free_to_pcs(s, x, false), else defer_free */
            if (!(s->sheaves && sli_free_to_pcs(s->sheaves, &a, obj)))
                defer_free(&a, slab, obj);
        } else if (slab != a.c->slab ||
                   (s->fastpath == SL_SLUB_FP_RT && atomic_load_explicit(&a.c->lock.locked, memory_order_relaxed))) {
            /* 6.18 do_slab_free(cnt == 0): __slab_free may need locks; a held local_lock (RT) too */
            if (slab == a.c->slab)
                SLI_EV(&a, SLUB_TRYLOCK_BUSY, slab, obj, 2, 5, 0);
            defer_free(&a, slab, obj);
        } else {
            rc = do_slab_free(&a, slab, obj, obj, 1); /* onto this CPU's freelist, no sheaves in 6.18 */
        }
    }
    sli_slub_op_event(&a, SL_EV_OP_END, SLI_OPC_FREE, rc, NULL);
    return rc;
}

unsigned sli_slub_free_deferred(sli_act *a)
{
    sl_slub_cache *s = a->s;
    void *list = a->c->defer_free;
    unsigned n = 0, by_rcu = 0, sheaves = 0;
    a->c->defer_free = NULL;
    while (list) {
        void *x = list;
        list = sli_get_fp(s, x);
        sli_set_fp(s, x, NULL); /* the llist link, cleared as the kernel clears it */
        stat_free_slowpath_nocpu(a, 1);
        (void)sli_slub_slab_free(a, sli_slab_of(s, x), x, x, 1);
        n++;
    }
    /* 7.3: objects_by_rcu, each to kvfree_call_rcu (the kfree_rcu path, spinning allowed) */
    list = a->c->rcu_defer;
    a->c->rcu_defer = NULL;
    while (list) {
        void *x = list;
        list = sli_get_fp(s, x);
        sli_set_fp(s, x, NULL);
        sli_slub_kvfree_call_rcu(a, sli_slab_of(s, x), x);
        by_rcu++;
    }
    /* then rcu_sheaves, each to call_rcu */
    if (s->sheaves)
        sheaves = sli_sheaves_submit_deferred(s->sheaves, a);
    if (n || by_rcu || sheaves)
        SLI_EV(a, SLUB_IRQ_WORK, NULL, NULL, n, by_rcu, sheaves);
    return n + by_rcu;
}

int sl_slub_irq_work(sl_slub_cache *s, unsigned cpu)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_IRQ_WORK, 0, NULL);
    unsigned n = sli_slub_free_deferred(&a);
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_IRQ_WORK, (int32_t)n, NULL);
    return (int)n;
}

/*
 * Where the leaf fast path leaves off.  An object start in a slab of this
 * cache that is not this CPU's slab goes straight to __slab_free (the leaf's
 * caches have no hooks and no trace); anything else (a foreign or misaligned
 * pointer, a failed CAS) to free_op, which starts over and reports errors.
 * It takes c rather than cpu and looks the slab up again, so that the leaf
 * keeps fewer values live: passing more cost it two callee-saved registers
 * on every call, the lookup costs a few instructions on this path only.
 */
static SLI_SLOW int leaf_free_miss(sl_slub_cache *s, sli_slub_cpu *c, void *obj)
{
    unsigned cpu = (unsigned)(c - s->cpu);
    sli_slub_slab *slab = sli_slab_of(s, obj);
    sli_act a;
    if (slab && slab != c->slab && sli_off_is_obj(s, slab, sli_obj_offset(s, slab, obj)) && sli_slub_begin(s, cpu, &a))
        return slab_free_slow(&a, slab, obj, obj, 1);
    return free_op(s, cpu, obj);
}

/*
 * kmem_cache_free's fast path as a leaf function per variant (see
 * sl_slub_alloc): read tid (with the freelist) first, then SLI_BARRIER, then
 * one lookup (virt_to_page + compound_head; a pointer outside the zone or in
 * a free block finds nothing) and slab == c->slab (the CPU slab is this
 * cache's, so that is cache_from_obj's check too), set the free pointer,
 * replace freelist+tid; leaf_free_miss otherwise.  The rt leaf reads
 * nothing before the lookup (its tid read would go unused): under
 * local_lock it checks the slab again, sets the free pointer and writes
 * freelist and tid.  Outside benchmark builds it also checks that the
 * pointer is an object start, so that a misaligned free can never corrupt
 * the CPU freelist; the kernel checks that only for debug caches
 * (SLAB_CONSISTENCY_CHECKS), and so do benchmark builds here.  Frees that
 * reach leaf_free_miss (another slab, a foreign pointer) are checked in
 * every build.
 */
SL_INLINE int leaf_free(sl_slub_cache *s, unsigned cpu, void *obj, const unsigned fp)
{
    if (SL_UNLIKELY(cpu >= s->ncpus))
        return free_op(s, cpu, obj);
    const sl_page_zone *z = s->zone;
    sli_slub_cpu *c = &s->cpu[cpu];
    SLI_HIDE_VAR(c);
    sl_dword cur = {0, 0};
    if (fp != SL_SLUB_FP_RT) {
        cur = sl_dw_read(&c->fl_tid);
        SLI_BARRIER();
    }
    uint32_t pfn = sl_page_head_pfn(z, obj);
    if (SL_UNLIKELY(pfn == SL_PFN_NONE))
        return leaf_free_miss(s, c, obj);
    sli_slub_slab *slab = SL_PAGE_PRIV(&z->pages[pfn], sli_slub_slab);
    if (SL_UNLIKELY(slab != c->slab))
        return leaf_free_miss(s, c, obj);
#if !defined(SLABLAB_BENCH)
    uint32_t off = (uint32_t)((uintptr_t)obj - (uintptr_t)z->base - ((uintptr_t)pfn << SL_PAGE_SHIFT));
    if (SL_UNLIKELY(!sli_off_is_obj(s, slab, off - s->g.red_left_pad)))
        return leaf_free_miss(s, c, obj);
#endif
    if (fp == SL_SLUB_FP_RT) {
        sl_spin_lock(&c->lock);
        if (SL_UNLIKELY(slab != c->slab)) {
            sl_spin_unlock(&c->lock);
            return leaf_free_miss(s, c, obj);
        }
        cur = sl_dw_read(&c->fl_tid);
        sli_set_fp_raw(s, obj, (void *)cur.lo);
        sl_dw_write_plain(&c->fl_tid, (sl_dword){(uintptr_t)obj, sli_next_tid(s, cur.hi)});
        sl_spin_unlock(&c->lock);
    } else {
        sli_set_fp_raw(s, obj, (void *)cur.lo);
        if (SL_UNLIKELY(!sli_cpu_freelist_update(s, c, fp, (void *)cur.lo, cur.hi, obj))) {
            sli_cstat(c, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL, 1);
            return leaf_free_miss(s, c, obj);
        }
    }
    sli_cstat_fast(c, SL_SLUB_FREE_FASTPATH, 1);
    return SL_OK;
}
static SL_NOINLINE int free_cmpxchg(sl_slub_cache *s, unsigned cpu, void *obj)
{
    return leaf_free(s, cpu, obj, SL_SLUB_FP_CMPXCHG);
}
static SL_NOINLINE int free_locked(sl_slub_cache *s, unsigned cpu, void *obj)
{
    return leaf_free(s, cpu, obj, SL_SLUB_FP_LOCKED);
}
static SL_NOINLINE int free_plain(sl_slub_cache *s, unsigned cpu, void *obj)
{
    return leaf_free(s, cpu, obj, SL_SLUB_FP_PLAIN);
}
static SL_NOINLINE int free_rt(sl_slub_cache *s, unsigned cpu, void *obj)
{
    return leaf_free(s, cpu, obj, SL_SLUB_FP_RT);
}

/*
 * slab_free's free_to_pcs as a leaf, for a cache with sheaves that needs
 * nothing else: the lookup and the cache check (kmem_cache_free's
 * cache_from_obj, on with FREELIST_HARDENED, a distribution default),
 * outside benchmark builds the object-start check, then a push onto main
 * under the local trylock.  A held lock, a full main or a bad pointer go to
 * free_op, which starts over.
 */
static SL_NOINLINE int free_sheaf(sl_slub_cache *s, unsigned cpu, void *obj)
{
    if (SL_UNLIKELY(cpu >= s->ncpus))
        return free_op(s, cpu, obj);
    const sl_page_zone *z = s->zone;
    uint32_t pfn = sl_page_head_pfn(z, obj);
    if (SL_UNLIKELY(pfn == SL_PFN_NONE))
        return free_op(s, cpu, obj);
    sli_slub_slab *slab = SL_PAGE_PRIV(&z->pages[pfn], sli_slub_slab);
    if (SL_UNLIKELY(__atomic_load_n(&slab->cache, __ATOMIC_RELAXED) != s))
        return free_op(s, cpu, obj);
#if !defined(SLABLAB_BENCH)
    uint32_t off = (uint32_t)((uintptr_t)obj - (uintptr_t)z->base - ((uintptr_t)pfn << SL_PAGE_SHIFT));
    if (SL_UNLIKELY(!sli_off_is_obj(s, slab, off - s->g.red_left_pad)))
        return free_op(s, cpu, obj);
#endif
    sli_sheaves *sh = s->sheaves;
    sli_pcs *pcs = &sh->pcs[cpu];
    if (SL_UNLIKELY(!sli_pcs_trylock(pcs)))
        return free_op(s, cpu, obj);
    sli_sheaf *main = pcs->main;
    if (SL_UNLIKELY(main->size == sh->capacity)) {
        sli_pcs_unlock(pcs);
        return free_op(s, cpu, obj);
    }
    main->objects[main->size++] = obj;
    sli_pcs_unlock(pcs);
    sli_cstat_fast(&s->cpu[cpu], SL_SLUB_FREE_PCS, 1);
    return SL_OK;
}

sli_free_fn sli_slub_free_fn(unsigned leaf)
{
    switch (leaf) {
    case SLI_LEAF_SHEAF:
        return free_sheaf;
    case SLI_LEAF_CMPXCHG:
        return free_cmpxchg;
    case SLI_LEAF_LOCKED:
        return free_locked;
    case SLI_LEAF_PLAIN:
        return free_plain;
    case SLI_LEAF_RT:
        return free_rt;
    default:
        return free_op;
    }
}

/* The cache's leaf fast path, or the complete operation (debug, hardened, traced caches). */
int sl_slub_free(sl_slub_cache *s, unsigned cpu, void *obj)
{
    if (SL_UNLIKELY(!s))
        return SL_EINVAL;
    return s->free_fn(s, cpu, obj);
}

typedef struct detached_freelist {
    sli_slub_slab *slab;
    void *tail;
    void *freelist;
    uint32_t cnt;
} detached_freelist;

/*
 * Starts a detached freelist with `object` (its tail) after its checks
 * (without `checks`, the lookup only): returns its slab, or NULL when it
 * fails them (its error goes to *first_err).
 */
static sli_slub_slab *group_start(sli_act *a, void *object, int *first_err, bool checks)
{
    int err = SL_OK;
    sli_slub_slab *slab = checks ? sli_slub_free_check(a, object, &err) : sli_slab_of(a->s, object);
    if (!slab) {
        if (!*first_err)
            *first_err = checks ? err : SL_EFOREIGN;
        return NULL;
    }
    sli_set_fp(a->s, object, NULL);
    return slab;
}

/*
 * Links `object`, an object of the group's slab, in front of the group's
 * head `freelist` after its checks; true if it did (the object is the new
 * head).  One that fails them, or (FREELIST_HARDENED) is the head already,
 * is left out (its error goes to *first_err).  The scans keep the group in
 * locals and fill the caller's detached_freelist when it is done: a
 * free-pointer store could alias that, so every object would reload and
 * store its head and count (detached bulk 158, WebAssembly: 7.5 -> 6.8 ns
 * per object; natively 5.1 -> 4.7 ns).
 */
SL_INLINE bool group_link(sli_act *a, sli_slub_slab *slab, void *freelist, void *object, int *first_err, bool checks)
{
    int err = checks ? sli_slub_free_checks(a, slab, object) : SL_OK;
    if (err == SL_OK && sli_fp_self_link(a, SLI_LINK_DETACHED, slab, object, freelist))
        err = SL_EDOUBLEFREE;
    if (err == SL_OK) {
        sli_set_fp(a->s, object, freelist);
        return true;
    }
    if (!*first_err)
        *first_err = err;
    return false;
}

/*
 * build_detached_freelist (6.x): takes p[size-1], then scans downwards for
 * objects of the same slab, linking each onto a private freelist and
 * swapping it to the tail of the unscanned part; gives up after three
 * objects of other slabs (the look-ahead).  Returns how many entries remain
 * to be scanned.  An object that fails its checks, or (FREELIST_HARDENED)
 * is the group's head already, listed twice in a row, is consumed without
 * being linked (its error goes to *first_err).  As the kernel, one virt_to_slab
 * per object: a later object is compared with the group's slab by its page
 * alone (the group's slab is known to be this cache's), then only its
 * object-start check and a debug cache's hook run.  Without `checks`
 * (__kmem_cache_free_bulk of objects the model took itself) only the lookup.
 */
static size_t build_detached_freelist(sli_act *a, size_t size, void **p, detached_freelist *df, int *first_err,
                                      bool checks)
{
    int lookahead = 3;
    void *object = p[--size];
    sli_slub_slab *slab = df->slab = group_start(a, object, first_err, checks);
    if (!slab)
        return size;
    void *freelist = df->tail = object;
    uint32_t cnt = 1;
    size_t same = size;
    /* sli_slab_lookup with the zone in a local: a free-pointer store could alias a->s->zone. */
    const sl_page_zone *zone = a->s->zone;
    while (size) {
        object = p[--size];
        sl_page *pg = object ? sl_page_from_addr(zone, object) : NULL;
        if (pg && SL_PAGE_PRIV(pg, sli_slub_slab) == slab) {
            if (group_link(a, slab, freelist, object, first_err, checks)) {
                freelist = object;
                cnt++;
            }
            same--;
            if (size != same) {
                void *t = p[size];
                p[size] = p[same];
                p[same] = t;
            }
            continue;
        }
        if (!--lookahead)
            break;
    }
    df->freelist = freelist;
    df->cnt = cnt;
    return same;
}

/*
 * slab_common.c's generic __kmem_cache_free_bulk of 4.3 to 6.7 (SLUB's own
 * hook-less bulk free has had that name since 6.8 and is the detached
 * form): one kmem_cache_free per object.  Returns the first error.  Its own
 * function: inside sl_slub_free_bulk gcc put this loop in the .cold section
 * (optimised for size), 10 cycles more per object.
 */
static SL_NOINLINE int free_bulk_generic(sli_act *a, size_t n, void **p)
{
    int first_err = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = free_one(a, p[i]);
        if (rc && !first_err)
            first_err = rc;
    }
    return first_err;
}

/*
 * build_detached_freelist of 4.4 to 5.18: the entries taken become NULL (and
 * are skipped when met again) instead of being swapped to the end; the scan
 * starts over after the first object of another slab it skipped.  Returns
 * where the next scan starts (0: done).
 */
static size_t build_detached_freelist_nulls(sli_act *a, size_t size, void **p, detached_freelist *df, int *first_err)
{
    size_t first_skipped_index = 0;
    int lookahead = 3;
    void *object;
    df->slab = NULL;
    do {
        object = p[--size];
    } while (!object && size);
    if (!object)
        return 0;
    p[size] = NULL; /* mark object processed */
    sli_slub_slab *slab = df->slab = group_start(a, object, first_err, true);
    if (!slab)
        return size;
    void *freelist = df->tail = object;
    uint32_t cnt = 1;
    while (size) {
        object = p[--size];
        if (!object)
            continue; /* skip processed objects */
        if (sli_slab_lookup(a->s, object) == slab) {
            if (group_link(a, slab, freelist, object, first_err, true)) {
                freelist = object;
                cnt++;
            }
            p[size] = NULL;
            continue;
        }
        if (!--lookahead)
            break;
        if (!first_skipped_index)
            first_skipped_index = size + 1;
    }
    df->freelist = freelist;
    df->cnt = cnt;
    return first_skipped_index;
}

/*
 * kmem_cache_free_bulk of 4.3 (seed 004): with interrupts off, object by
 * object, an object of the CPU slab pushed straight onto the CPU freelist
 * (plain writes: interrupts are off), any other freed by __slab_free with
 * interrupts on again (the tid moved on first); the tid moves on at the end.
 * Returns the first error.
 */
static int free_bulk_irq_off(sli_act *a, size_t n, void **p)
{
    sl_slub_cache *s = a->s;
    sli_slub_cpu *c = a->c;
    int first_err = 0, err;
    sl_dword cur = sl_dw_read(&c->fl_tid);
    for (size_t i = 0; i < n; i++) {
        sli_slub_slab *slab = sli_slub_free_check(a, p[i], &err);
        if (slab && slab == c->slab) {
            if (sli_fp_self_link(a, SLI_LINK_DO_SLAB_FREE, slab, p[i], (void *)cur.lo)) {
                err = SL_EDOUBLEFREE;
            } else {
                sli_set_fp(s, p[i], (void *)cur.lo);
                cur.lo = (uintptr_t)p[i];
                SLI_EV(a, SLUB_FREE_FASTPATH, slab, p[i], 1, (uint32_t)cur.hi, 0);
            }
        } else if (slab) {
            sl_dw_write_plain(&c->fl_tid, (sl_dword){cur.lo, sli_next_tid(s, cur.hi)});
            err = slab_free_slow(a, slab, p[i], p[i], 1);
            cur = sl_dw_read(&c->fl_tid);
        }
        if (err && !first_err)
            first_err = err;
    }
    sl_dw_write_plain(&c->fl_tid, (sl_dword){cur.lo, sli_next_tid(s, cur.hi)});
    return first_err;
}

void sli_slub_free_bulk_slabs(sli_act *a, void **p, unsigned n)
{
    size_t size = n;
    int err = 0;
    while (size) {
        detached_freelist df;
        size = build_detached_freelist(a, size, p, &df, &err, false);
        if (df.slab)
            do_slab_free(a, df.slab, df.freelist, df.tail, df.cnt);
    }
    sl_assert(err == 0); /* only objects of this cache come here */
    (void)err;
}

/*
 * kmem_cache_free_bulk of a cache with sheaves (free_to_pcs_bulk): each
 * object checked (the free hooks), then onto sheaves while room can be
 * found, the rest to slabs.  Returns the first error.
 */
static int free_bulk_sheaves(sli_act *a, size_t n, void **p)
{
    int first_err = 0, err;
    size_t kept = 0;
    /* free_to_pcs_bulk: objects of another node's slabs go to their slabs in batches of PCS_BATCH_MAX */
    void *remote[SLI_PCS_BATCH_MAX];
    unsigned nremote = 0;
    for (size_t i = 0; i < n; i++) {
        sli_slub_slab *slab = sli_slub_free_check(a, p[i], &err);
        if (!slab) {
            if (!first_err)
                first_err = err;
        } else if (sli_slab_remote(a, slab)) {
            remote[nremote++] = p[i];
            if (nremote == SLI_PCS_BATCH_MAX) {
                sli_slub_free_bulk_slabs(a, remote, nremote);
                stat_free_slowpath_nocpu(a, nremote);
                nremote = 0;
            }
        } else {
            p[kept++] = p[i];
        }
    }
    unsigned sent = sli_free_to_pcs_bulk(a->s->sheaves, a, (unsigned)kept, p);
    stat_free_slowpath_nocpu(a, sent);
    if (nremote) {
        sli_slub_free_bulk_slabs(a, remote, nremote);
        stat_free_slowpath_nocpu(a, nremote);
    }
    return first_err;
}

/* kernel: kmem_cache_free_bulk */
int sl_slub_free_bulk(sl_slub_cache *s, unsigned cpu, size_t n, void **p, unsigned *cas_out)
{
    sli_act a;
    if (cas_out)
        *cas_out = 0;
    if ((!p && n) || !sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, SLI_OPC_FREE_BULK, (int32_t)n, NULL);
    sli_stat(&a, SL_SLUB_BULK_FREE_CALLS, 1);
    int first_err = 0;
    if (s->bulk_free == SL_SLUB_BULK_GENERIC) {
        first_err = free_bulk_generic(&a, n, p);
    } else if (s->sheaves && sli_sheaves_active(s->sheaves)) {
        first_err = free_bulk_sheaves(&a, n, p);
    } else if (s->rules.bulk_free_irq_off) {
        first_err = free_bulk_irq_off(&a, n, p);
    } else {
        size_t size = n;
        while (size) {
            detached_freelist df;
            size = s->rules.detached_marks_null ? build_detached_freelist_nulls(&a, size, p, &df, &first_err)
                                                : build_detached_freelist(&a, size, p, &df, &first_err, true);
            if (!df.slab)
                continue;
            SLI_EV(&a, SLUB_DETACHED_FREELIST, df.slab, df.freelist, df.cnt, (uint32_t)size, 0);
#if !defined(SLABLAB_BENCH)
            sl_slub_pp_ctx ctx = {.cache = s,
                                  .op = a.op,
                                  .cpu = a.cpu,
                                  .freelist = df.freelist,
                                  .next = df.freelist,
                                  .tail = df.tail,
                                  .cnt = df.cnt};
            SL_PREEMPT_POINT(s->trace, a.cpu, SL_SLUB_PP_BULK_GROUP, &ctx);
#endif
            sli_stat(&a, SL_SLUB_BULK_FREE_GROUPS, 1);
            stat_free_slowpath_nocpu(&a, df.cnt);
            int rc = do_slab_free(&a, df.slab, df.freelist, df.tail, df.cnt);
            if (rc && !first_err)
                first_err = rc;
        }
    }
    sli_stat(&a, SL_SLUB_BULK_FREE_CAS, a.cas);
    SLI_EV(&a, SLUB_BULK_FREE, NULL, NULL, (uint32_t)n, s->bulk_free, a.cas);
    if (cas_out)
        *cas_out = a.cas;
    int rc = first_err ? first_err : (int)a.cas;
    sli_slub_op_event(&a, SL_EV_OP_END, SLI_OPC_FREE_BULK, rc, NULL);
    return rc;
}

/* kernel: flush_all */
int sl_slub_flush_cpu(sl_slub_cache *s, unsigned cpu)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, SLI_OPC_FLUSH, 0, NULL);
    if (s->sheaves && sli_pcs_flush_all(s->sheaves, &a) != SL_OK) {
        /* From inside the CPU's sheaf section (a hook at a preemption point): the kernel never does that. */
        sli_slub_op_event(&a, SL_EV_OP_END, SLI_OPC_FLUSH, SL_EBUSY, NULL);
        return SL_EBUSY;
    }
    sli_slub_flush_cpu_slab(&a);
    sli_slub_op_event(&a, SL_EV_OP_END, SLI_OPC_FLUSH, 0, NULL);
    return SL_OK;
}

void sli_slub_flush_cpu_slab(sli_act *a)
{
    sl_slub_cache *s = a->s;
    sli_slub_cpu *c = a->c;
    sli_slub_slab *slab = c->slab;
    SLI_EV(a, SLUB_FLUSH_CPU, slab, NULL, 0, 0, 0);
    if (slab) {
        /* flush_slab: the CPU slab leaves, the tid moves on, then deactivate_slab */
        void *freelist = (void *)sl_dw_read(&c->fl_tid).lo;
        c->slab = NULL;
        sl_dword cur = sl_dw_read(&c->fl_tid);
        a->cas++;
        sl_dw_cas_local(&c->fl_tid, cur, (sl_dword){0, sli_next_tid(s, cur.hi)});
        sli_slub_deactivate_slab(a, slab, freelist);
        sli_stat(a, SL_SLUB_CPUSLAB_FLUSH, 1);
    }
    /* put_partials */
    sli_slub_slab *partial = c->partial;
    c->partial = NULL;
    sli_slub_put_partials(a, partial);
}
