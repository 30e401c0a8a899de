/*
 * sheaves.c - per-CPU sheaves and the node barn, as Linux 6.18 added them
 * ("slab: add opt-in caching layer of percpu sheaves", Vlastimil Babka) and
 * 7.0 made them the only per-CPU layer.  The functions carry the kernel's
 * names and follow mm/slub.c of 7.0; where 6.18 differs, sli_sheaves says so
 * (main_to_spare) or the caller does (which slab path runs underneath).
 *
 * Structures (sheaves.h):
 *   sheaf   an array of object pointers used as a stack: an allocation pops
 *           objects[--size], a free pushes objects[size++].  Its capacity is
 *           the cache's sheaf_capacity, except a prefilled "oversize" sheaf.
 *   pcs     per CPU: main (never NULL: with capacity 0 it is the shared
 *           zero-capacity bootstrap sheaf, on which both the pop and the
 *           push fail), spare (NULL, or a second sheaf), rcu_free (the sheaf
 *           kfree_rcu() fills), and the model's rcu_pending list of sheaves
 *           handed to call_rcu.
 *   barn    per node: full and empty sheaves for any CPU of the node,
 *           normally at most 10 of each (the undo paths may exceed that, as
 *           in the kernel).  barn[nid] exists while bit nid of barn_nodes is
 *           set (sheaves.h): 6.18 and 7.0 one per node with memory, found
 *           by numa_mem_id(); 7.1 one per online node, found by
 *           numa_node_id(), so sli_get_barn may be NULL and each caller
 *           backs off as the kernel's do.
 *
 * What guards what:
 *   pcs->lock is the kernel's local_trylock_t: taken only by the thread
 *           acting as that CPU.  Every pcs field is read and written only
 *           under it.  An "interrupt" (an operation a preemption-point hook
 *           runs on the same CPU) that finds it taken gets false from the
 *           trylock and takes the slab path instead; that is what the
 *           kernel's trylock exists for.  The lock is dropped around every
 *           call into the slab layer (refill, flush), so an interrupt may
 *           change pcs there, and the code re-checks what it finds after
 *           re-taking it, exactly where the kernel does.  The paths that use
 *           the kernel's local_lock() (process context only: flush, prefill,
 *           return) report SL_EBUSY if they find it taken.
 *   barn->lock (a spin lock) guards the barn's lists and counts; nr_full and
 *           nr_empty are also read without it, as the kernel's data_race()
 *           reads, to skip the lock when it cannot help.
 *   prefilled_lock guards the model's list of sheaves handed out by
 *           kmem_cache_prefill_sheaf (any CPU may return one).
 * The counters sheaves move (SL_SLUB_ALLOC_PCS ... SHEAF_RETURN_SLOW) are
 * the cache's per-CPU ones, counted as the acting CPU.
 *
 * Invariants (sli_sheaves_validate): main is never NULL and is the
 * bootstrap sheaf exactly while capacity is 0; every sheaf is in one place
 * (a CPU's main/spare/rcu_free, an rcu list, the barn, or out prefilled);
 * size <= capacity; rcu_free is never full (it goes to call_rcu when it
 * fills); barn sheaves are full (size == capacity) or empty as their list
 * says; nr_full and nr_empty count the lists; nr_sheaves counts every
 * allocated sheaf.  Objects in sheaves are free objects of the cache that
 * are on no slab freelist: the cache's validate() counts them there.
 *
 * Model-only: sheaves are malloc'd (the kernel kmallocs them); max_sheaves
 * makes a sheaf allocation fail, as the kernel's GFP_NOWAIT kmalloc may, so
 * that the paths for that case can be driven.
 * The operation's context (sli_act.ctx, its gfp flags) decides whether an
 * empty main may be refilled from slabs: in 6.18 only when it may block,
 * from 7.0 whenever it may spin (refill_nonblocking); kmalloc_nolock
 * never refills, and it and kfree_nolock take the barn's lock with a
 * trylock (barn_lock) and neither allocate nor flush a sheaf to free.
 * A refill from slabs that comes up short (no memory) keeps what it got
 * in the sheaf and counts it in SHEAF_REFILL (refill_sheaf); then the
 * allocation path and kmem_cache_prefill_sheaf flush the sheaf
 * (SHEAF_FLUSH) and free it, while kmem_cache_refill_sheaf leaves the
 * objects in the caller's sheaf and fails (as 7.0 since its -rc fix of
 * freeing the sheaf with objects in it, and every 7.x read: docs/slub.md).
 * 7.1's relock after a refill is a trylock (relock_trylock): in the model
 * it fails only when a preemption-point hook leaves the lock taken (a test
 * of a PREEMPT_RT task holding it), and then the full sheaf goes to the barn.
 */
#include "sheaves.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sli_sheaf sli_bootstrap_sheaf;

/* An event naming obj (may be NULL) by its slab and index. */
#if defined(SLABLAB_BENCH)
/* Compiled under sizeof, never evaluated, so that what only events read still counts as used. */
#define SH_EV(a, kind, obj, a0, a1, a2)                                                                                \
    ((void)sizeof((uintptr_t[]){(uintptr_t)(a), (uintptr_t)(obj), (a0), (a1), (a2)}))
#else
#define SH_EV(a, kind, obj, a0, a1, a2)                                                                                \
    SLI_EV((a), kind, (obj) ? sli_slab_of((a)->s, (obj)) : NULL, (obj), (a0), (a1), (a2))
#endif

/* ---- sheaves ------------------------------------------------------- */

/* SLUB_PCS_SHEAVES: pcs as it is now (under its lock), after a change no other event spells out. */
static void pcs_sheaves_event(sli_act *a, const sli_pcs *pcs)
{
    SH_EV(a, SLUB_PCS_SHEAVES, NULL, pcs->main->id, pcs->spare ? pcs->spare->id : 0,
          pcs->rcu_free ? pcs->rcu_free->id : 0);
}

/*
 * __alloc_empty_sheaf (counted = true: SHEAF_ALLOC) or the bare kzalloc of
 * an oversize prefill.  NULL when max_sheaves are already out or malloc
 * fails.
 */
static sli_sheaf *new_sheaf(sli_sheaves *sh, sli_act *a, uint32_t capacity, bool counted)
{
    unsigned n = atomic_fetch_add_explicit(&sh->nr_sheaves, 1, memory_order_relaxed);
    sli_sheaf *sheaf = NULL;
    if (!sh->max_sheaves || n < sh->max_sheaves)
        sheaf = calloc(1, sizeof *sheaf + (size_t)capacity * sizeof(void *));
    if (!sheaf) {
        atomic_fetch_sub_explicit(&sh->nr_sheaves, 1, memory_order_relaxed);
        return NULL;
    }
    sheaf->capacity = capacity;
    sheaf->id = atomic_fetch_add_explicit(&sh->next_id, 1, memory_order_relaxed) + 1;
    if (counted)
        sli_stat(a, SL_SLUB_SHEAF_ALLOC, 1);
    SH_EV(a, SLUB_SHEAF_NEW, NULL, sheaf->id, capacity, 0);
    return sheaf;
}

/* free_empty_sheaf (counted: SHEAF_FREE) or the bare kfree of an oversize sheaf. */
static void drop_sheaf(sli_sheaves *sh, sli_act *a, sli_sheaf *sheaf, bool counted)
{
    sl_assert(sheaf->size == 0 && sheaf != &sli_bootstrap_sheaf);
    SH_EV(a, SLUB_SHEAF_DROP, NULL, sheaf->id, 0, 0);
    free(sheaf);
    atomic_fetch_sub_explicit(&sh->nr_sheaves, 1, memory_order_relaxed);
    if (counted)
        sli_stat(a, SL_SLUB_SHEAF_FREE, 1);
}

/* sheaf_flush_unused: every object of a sheaf no CPU holds goes back to its slab. */
static void sheaf_flush_unused(sli_sheaves *sh, sli_act *a, sli_sheaf *sheaf)
{
    uint32_t n = sheaf->size;
    if (!n)
        return;
    sli_stat(a, SL_SLUB_SHEAF_FLUSH, n);
    SH_EV(a, SLUB_SHEAF_FLUSH, sheaf->objects[n - 1], sheaf->id, n, 0);
    sh->ops->free_bulk(a, sheaf->objects, n);
    sheaf->size = 0;
}

/*
 * refill_sheaf: fills the sheaf up to the cache's capacity from slabs.
 * Returns 0, or SL_ENOMEM when the slabs gave fewer: what they gave stays
 * in the sheaf, counted (see the essay).
 */
static int refill_sheaf(sli_sheaves *sh, sli_act *a, sli_sheaf *sheaf)
{
    uint32_t to_fill = sh->capacity - sheaf->size;
    if (!to_fill)
        return SL_OK;
    unsigned filled = sh->ops->refill(a, &sheaf->objects[sheaf->size], to_fill, to_fill);
    sheaf->size += filled;
    sli_stat(a, SL_SLUB_SHEAF_REFILL, filled);
    if (filled)
        SH_EV(a, SLUB_SHEAF_REFILL, sheaf->objects[sheaf->size - 1], sheaf->id, filled, sheaf->size);
#if !defined(SLABLAB_BENCH)
    for (uint32_t slot = sheaf->size - filled; slot < sheaf->size; slot++)
        SH_EV(a, SLUB_SHEAF_FILL, sheaf->objects[slot], sheaf->id, slot, 0);
#endif
    return filled < to_fill ? SL_ENOMEM : SL_OK;
}

/* alloc_full_sheaf: a new sheaf refilled to capacity, or NULL. */
static sli_sheaf *alloc_full_sheaf(sli_sheaves *sh, sli_act *a)
{
    sli_sheaf *sheaf = new_sheaf(sh, a, sh->capacity, true);
    if (sheaf && refill_sheaf(sh, a, sheaf) != SL_OK) {
        sheaf_flush_unused(sh, a, sheaf);
        drop_sheaf(sh, a, sheaf, true);
        sheaf = NULL;
    }
    return sheaf;
}

/* ---- the barn ------------------------------------------------------ */

static uint32_t barn_nr(const uint32_t *count) { return __atomic_load_n(count, __ATOMIC_RELAXED); }
static void barn_set(uint32_t *count, uint32_t v) { sl_store_relaxed(count, v); }

static void barn_push(sli_sheaf **list, uint32_t *count, sli_sheaf *sheaf)
{
    sheaf->next = *list;
    *list = sheaf;
    barn_set(count, *count + 1);
}
static sli_sheaf *barn_pop(sli_sheaf **list, uint32_t *count)
{
    sli_sheaf *sheaf = *list;
    *list = sheaf->next;
    sheaf->next = NULL;
    barn_set(count, *count - 1);
    return sheaf;
}

/*
 * The barn's lock as the operation may take it: spin_lock_irqsave, or where
 * spinning is not allowed (allow_spin false: kmalloc_nolock, kfree_nolock)
 * spin_trylock_irqsave.  False (nothing held) when the trylock fails.
 */
static bool barn_lock(sli_act *a, sli_barn *barn, bool allow_spin, unsigned site)
{
    if (SL_LIKELY(allow_spin)) {
        sl_spin_lock(&barn->lock);
        return true;
    }
    if (sl_spin_trylock(&barn->lock))
        return true;
    SH_EV(a, SLUB_TRYLOCK_BUSY, NULL, 1, site, 0);
    return false;
}

static sli_sheaf *barn_get_empty_sheaf(sli_act *a, sli_barn *barn, bool allow_spin)
{
    sli_sheaf *empty = NULL;
    if (!barn_nr(&barn->nr_empty))
        return NULL;
    if (!barn_lock(a, barn, allow_spin, 3))
        return NULL;
    if (barn->nr_empty)
        empty = barn_pop(&barn->empty, &barn->nr_empty);
    sl_spin_unlock(&barn->lock);
    return empty;
}

/* The undo paths' puts ignore the limits, as the kernel's do. */
static void barn_put_empty_sheaf(sli_barn *barn, sli_sheaf *sheaf)
{
    sl_spin_lock(&barn->lock);
    barn_push(&barn->empty, &barn->nr_empty, sheaf);
    sl_spin_unlock(&barn->lock);
}
static void barn_put_full_sheaf(sli_barn *barn, sli_sheaf *sheaf)
{
    sl_spin_lock(&barn->lock);
    barn_push(&barn->full, &barn->nr_full, sheaf);
    sl_spin_unlock(&barn->lock);
}

static sli_sheaf *barn_get_full_or_empty_sheaf(sli_barn *barn)
{
    sli_sheaf *sheaf = NULL;
    if (!barn_nr(&barn->nr_full) && !barn_nr(&barn->nr_empty))
        return NULL;
    sl_spin_lock(&barn->lock);
    if (barn->nr_full)
        sheaf = barn_pop(&barn->full, &barn->nr_full);
    else if (barn->nr_empty)
        sheaf = barn_pop(&barn->empty, &barn->nr_empty);
    sl_spin_unlock(&barn->lock);
    return sheaf;
}

/* A full sheaf for the given empty one, or NULL (nothing changes then; also when the trylock fails). */
static sli_sheaf *barn_replace_empty_sheaf(sli_act *a, sli_barn *barn, sli_sheaf *empty, bool allow_spin)
{
    sli_sheaf *full = NULL;
    if (!barn_nr(&barn->nr_full))
        return NULL;
    if (!barn_lock(a, barn, allow_spin, 2))
        return NULL;
    if (barn->nr_full) {
        full = barn_pop(&barn->full, &barn->nr_full);
        barn_push(&barn->empty, &barn->nr_empty, empty);
    }
    sl_spin_unlock(&barn->lock);
    return full;
}

/* barn_replace_full_sheaf's outcomes: an empty sheaf, or why not. */
typedef enum {
    REPLACED = 0,
    BARN_TOO_FULL = 1 /* -E2BIG */,
    BARN_NO_EMPTY = 2 /* -ENOMEM */,
    BARN_BUSY = 3 /* -EBUSY: trylock */
} replace_full;

static replace_full barn_replace_full_sheaf(sli_act *a, sli_barn *barn, sli_sheaf *full, sli_sheaf **empty,
                                            bool allow_spin)
{
    replace_full rc = BARN_NO_EMPTY;
    /* The kernel does not repeat the limit check under the lock either. */
    if (barn_nr(&barn->nr_full) >= SLI_MAX_FULL_SHEAVES)
        return BARN_TOO_FULL;
    if (!barn_nr(&barn->nr_empty))
        return BARN_NO_EMPTY;
    if (!barn_lock(a, barn, allow_spin, 4))
        return BARN_BUSY;
    if (barn->nr_empty) {
        *empty = barn_pop(&barn->empty, &barn->nr_empty);
        barn_push(&barn->full, &barn->nr_full, full);
        rc = REPLACED;
    }
    sl_spin_unlock(&barn->lock);
    return rc;
}

/* barn_shrink of one barn. */
static unsigned barn_shrink(sli_sheaves *sh, sli_act *a, sli_barn *barn)
{
    sl_spin_lock(&barn->lock);
    sli_sheaf *full = barn->full, *empty = barn->empty;
    barn->full = barn->empty = NULL;
    barn_set(&barn->nr_full, 0);
    barn_set(&barn->nr_empty, 0);
    sl_spin_unlock(&barn->lock);
    unsigned flushed = 0, nfull = 0, nempty = 0;
    while (full) {
        sli_sheaf *sheaf = full;
        full = sheaf->next;
        flushed += sheaf->size;
        sheaf_flush_unused(sh, a, sheaf);
        drop_sheaf(sh, a, sheaf, true);
        nfull++;
    }
    while (empty) {
        sli_sheaf *sheaf = empty;
        empty = sheaf->next;
        drop_sheaf(sh, a, sheaf, true);
        nempty++;
    }
    SH_EV(a, SLUB_BARN_SHRINK, NULL, nfull, nempty, flushed);
    return flushed;
}

unsigned sli_barn_shrink(sli_sheaves *sh, sli_act *a)
{
    unsigned flushed = 0;
    for (unsigned nid = 0; nid < SL_SLUB_MAX_NODES; nid++)
        if ((sh->barn_nodes >> nid) & 1u)
            flushed += barn_shrink(sh, a, &sh->barn[nid]);
    return flushed;
}

/* ---- flushing ------------------------------------------------------- */

/*
 * sheaf_flush_main: main's objects go to the slabs in batches of at most
 * PCS_BATCH_MAX, each taken off main under the lock and freed outside it.
 * Returns true if anything was flushed.
 */
static bool sheaf_flush_main(sli_sheaves *sh, sli_act *a)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    void *objects[SLI_PCS_BATCH_MAX];
    bool ret = false;
    for (;;) {
        if (!sli_pcs_trylock(pcs))
            return ret;
        sli_sheaf *sheaf = pcs->main;
        uint32_t batch = sheaf->size < SLI_PCS_BATCH_MAX ? sheaf->size : SLI_PCS_BATCH_MAX;
        sheaf->size -= batch;
        memcpy(objects, sheaf->objects + sheaf->size, batch * sizeof(void *));
        uint32_t remaining = sheaf->size, id = sheaf->id;
        sli_pcs_unlock(pcs);
        if (batch) {
            SH_EV(a, SLUB_SHEAF_FLUSH, objects[batch - 1], id, batch, 1);
            sh->ops->free_bulk(a, objects, batch);
            sli_stat(a, SL_SLUB_SHEAF_FLUSH, batch);
        }
        ret = true;
        if (!remaining)
            return ret;
    }
}

/* call_rcu(&sheaf->rcu_head, flush ? rcu_free_sheaf_nobarn : rcu_free_sheaf), on this CPU. */
static void call_rcu_sheaf(sli_pcs *pcs, sli_sheaf *sheaf, bool flush)
{
    sheaf->rcu_flush = flush;
    sheaf->next = pcs->rcu_pending;
    pcs->rcu_pending = sheaf;
}

int sli_pcs_flush_all(sli_sheaves *sh, sli_act *a)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    if (!sli_sheaves_active(sh))
        return SL_OK;
    if (!sli_pcs_trylock(pcs))
        return SL_EBUSY; /* local_lock() from inside the section: the kernel never does that */
    sli_sheaf *spare = pcs->spare, *rcu_free = pcs->rcu_free;
    pcs->spare = pcs->rcu_free = NULL;
    if (rcu_free)
        call_rcu_sheaf(pcs, rcu_free, true);
    sli_pcs_unlock(pcs);
    SH_EV(a, SLUB_PCS_FLUSH, NULL, pcs->main->size, spare ? spare->size : 0, rcu_free ? rcu_free->size : 0);
    if (spare) {
        sheaf_flush_unused(sh, a, spare);
        drop_sheaf(sh, a, spare, true);
    }
    sheaf_flush_main(sh, a);
    return SL_OK;
}

unsigned sli_pcs_cpu_dead(sli_sheaves *sh, sli_act *a)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    if (!sli_sheaves_active(sh))
        return 0;
    unsigned flushed = pcs->main->size + (pcs->spare ? pcs->spare->size : 0);
    SH_EV(a, SLUB_PCS_FLUSH, NULL, pcs->main->size, pcs->spare ? pcs->spare->size : 0,
          pcs->rcu_free ? pcs->rcu_free->size : 0);
    sheaf_flush_unused(sh, a, pcs->main);
    if (pcs->spare) {
        sheaf_flush_unused(sh, a, pcs->spare);
        drop_sheaf(sh, a, pcs->spare, true);
        pcs->spare = NULL;
    }
    if (pcs->rcu_free) {
        call_rcu_sheaf(pcs, pcs->rcu_free, true);
        pcs->rcu_free = NULL;
    }
    return flushed;
}

int sli_pcs_flush_rcu(sli_sheaves *sh, sli_act *a)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    if (!sli_pcs_trylock(pcs))
        return SL_EBUSY; /* local_lock() from inside the section */
    sli_sheaf *rcu_free = pcs->rcu_free;
    pcs->rcu_free = NULL;
    if (rcu_free)
        call_rcu_sheaf(pcs, rcu_free, true);
    sli_pcs_unlock(pcs);
    return SL_OK;
}

/* ---- allocation ----------------------------------------------------- */

/*
 * __pcs_replace_empty_main: main is empty; swap in a non-empty spare, or
 * trade main for a full barn sheaf, or refill a sheaf from slabs with the
 * lock dropped.  Returns pcs locked with a non-empty main, or NULL unlocked.
 */
static sli_pcs *pcs_replace_empty_main(sli_sheaves *sh, sli_act *a, sli_pcs *pcs)
{
    if (SL_UNLIKELY(!sli_sheaves_active(sh))) { /* bootstrap or debug cache: back off */
        sli_pcs_unlock(pcs);
        return NULL;
    }
    if (pcs->spare && pcs->spare->size > 0) {
        sli_sheaf *t = pcs->main;
        pcs->main = pcs->spare;
        pcs->spare = t;
        SH_EV(a, SLUB_SHEAF_SWAP, NULL, pcs->main->id, pcs->main->size, 0);
        return pcs;
    }
    sli_barn *barn = sli_get_barn(sh, a->cpu);
    if (SL_UNLIKELY(!barn)) { /* 7.1: no barn on this CPU's node: back off */
        sli_pcs_unlock(pcs);
        return NULL;
    }
    sli_sheaf *full = barn_replace_empty_sheaf(a, barn, pcs->main, sli_allow_spin(a));
    if (full) {
        sli_stat(a, SL_SLUB_BARN_GET, 1);
        SH_EV(a, SLUB_BARN_GET, NULL, full->id, pcs->main->id, barn_nr(&barn->nr_full));
        pcs->main = full;
        return pcs;
    }
    sli_stat(a, SL_SLUB_BARN_GET_FAIL, 1);
    SH_EV(a, SLUB_BARN_GET_FAIL, NULL, pcs->main->id, barn_nr(&barn->nr_full), 0);

    /*
     * Refill from slabs only where the context allows: 6.18 when blocking
     * is allowed (can_alloc = gfpflags_allow_blocking), 7.0 on whenever
     * spinning is (allow_spin, fb1091febd66); kmalloc_nolock never.
     */
    bool can_refill = sh->refill_nonblocking ? sli_allow_spin(a) : sli_allow_blocking(a);
    if (!can_refill) {
        uint32_t main_id = pcs->main->id;
        sli_pcs_unlock(pcs);
        SH_EV(a, SLUB_SHEAF_NO_REFILL, NULL, main_id, a->ctx, 0);
        (void)main_id; /* benchmark builds have no events */
        return NULL;
    }
    sli_sheaf *empty;
    if (pcs->spare) {
        empty = pcs->spare;
        pcs->spare = NULL;
    } else {
        empty = barn_get_empty_sheaf(a, barn, true);
    }
    sli_pcs_unlock(pcs);
#if !defined(SLABLAB_BENCH)
    sl_slub_pp_ctx ctx = {.cache = a->s, .op = a->op, .cpu = a->cpu, .cnt = empty ? empty->size : 0};
    SL_PREEMPT_POINT(a->s->trace, a->cpu, SL_SLUB_PP_SHEAF_REFILL, &ctx);
#endif
    if (empty) {
        if (refill_sheaf(sh, a, empty) == SL_OK) {
            full = empty;
        } else {
            sheaf_flush_unused(sh, a, empty); /* very low on memory: skip the barn */
            drop_sheaf(sh, a, empty, true);
        }
    } else {
        full = alloc_full_sheaf(sh, a);
    }
    if (!full)
        return NULL;
    bool locked = sli_pcs_trylock(pcs);
    if (!locked && sh->relock_trylock) {
        /* 7.1's local_trylock failed: keep the full sheaf in the barn, take the slab path. */
        barn_put_full_sheaf(barn, full);
        sli_stat(a, SL_SLUB_BARN_PUT, 1);
        SH_EV(a, SLUB_BARN_PUT, NULL, full->id, 0, barn_nr(&barn->nr_full));
        return NULL;
    }
    /*
     * 7.0's local_lock(): an interrupt that got here found the lock free on
     * entry, and any interrupt of the window above has returned.
     */
    sl_assert(locked);
    /*
     * Something (an interrupt, in the kernel also a migration) may have
     * changed pcs while it was unlocked; the limits of the barn are ignored
     * here as in the kernel.
     */
    if (pcs->main->size == 0) {
        if (sh->main_to_spare && !pcs->spare)
            pcs->spare = pcs->main;
        else
            barn_put_empty_sheaf(barn, pcs->main);
        pcs->main = full;
        pcs_sheaves_event(a, pcs);
        return pcs;
    }
    if (!pcs->spare) {
        pcs->spare = full;
        pcs_sheaves_event(a, pcs);
        return pcs;
    }
    if (pcs->spare->size == 0) {
        barn_put_empty_sheaf(barn, pcs->spare);
        pcs->spare = full;
        pcs_sheaves_event(a, pcs);
        return pcs;
    }
    barn_put_full_sheaf(barn, full);
    sli_stat(a, SL_SLUB_BARN_PUT, 1);
    SH_EV(a, SLUB_BARN_PUT, NULL, full->id, 0, barn_nr(&barn->nr_full));
    return pcs;
}

void *sli_alloc_from_pcs(sli_sheaves *sh, sli_act *a)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    if (SL_UNLIKELY(!sli_pcs_trylock(pcs))) {
        SH_EV(a, SLUB_SHEAF_TRYLOCK_FAIL, NULL, 0, 0, 0);
        return NULL;
    }
    if (SL_UNLIKELY(pcs->main->size == 0)) {
        pcs = pcs_replace_empty_main(sh, a, pcs);
        if (SL_UNLIKELY(!pcs))
            return NULL;
    }
    sli_sheaf *main = pcs->main;
    void *object = main->objects[main->size - 1];
#if !defined(SLABLAB_BENCH)
    sl_slub_pp_ctx ctx = {.cache = a->s, .op = a->op, .cpu = a->cpu, .freelist = object, .cnt = main->size};
    SL_PREEMPT_POINT(a->s->trace, a->cpu, SL_SLUB_PP_SHEAF_ALLOC, &ctx);
#endif
    main->size--;
    sli_pcs_unlock(pcs);
    sli_stat_fast(a, SL_SLUB_ALLOC_PCS, 1);
    SH_EV(a, SLUB_SHEAF_ALLOC, object, main->id, main->size, 0);
    return object;
}

unsigned sli_alloc_from_pcs_bulk(sli_sheaves *sh, sli_act *a, unsigned n, void **p)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    unsigned allocated = 0;
    while (allocated < n) {
        if (!sli_pcs_trylock(pcs))
            return allocated;
        if (SL_UNLIKELY(pcs->main->size == 0)) {
            if (SL_UNLIKELY(!sli_sheaves_active(sh))) {
                sli_pcs_unlock(pcs);
                return allocated;
            }
            if (pcs->spare && pcs->spare->size > 0) {
                sli_sheaf *t = pcs->main;
                pcs->main = pcs->spare;
                pcs->spare = t;
                SH_EV(a, SLUB_SHEAF_SWAP, NULL, pcs->main->id, pcs->main->size, 0);
            } else {
                sli_barn *barn = sli_get_barn(sh, a->cpu);
                if (!barn) { /* 7.1: no barn on this CPU's node */
                    sli_pcs_unlock(pcs);
                    return allocated;
                }
                sli_sheaf *full = barn_replace_empty_sheaf(a, barn, pcs->main, true);
                if (!full) {
                    sli_stat(a, SL_SLUB_BARN_GET_FAIL, 1);
                    SH_EV(a, SLUB_BARN_GET_FAIL, NULL, pcs->main->id, 0, 0);
                    sli_pcs_unlock(pcs);
                    /* The rest comes from slabs directly: no copying through a sheaf. */
                    return allocated;
                }
                sli_stat(a, SL_SLUB_BARN_GET, 1);
                SH_EV(a, SLUB_BARN_GET, NULL, full->id, pcs->main->id, barn_nr(&barn->nr_full));
                pcs->main = full;
            }
        }
        sli_sheaf *main = pcs->main;
        unsigned batch = n - allocated < main->size ? n - allocated : main->size;
        main->size -= batch;
        memcpy(p + allocated, main->objects + main->size, batch * sizeof(void *));
        sli_pcs_unlock(pcs);
        sli_stat_fast(a, SL_SLUB_ALLOC_PCS, batch);
        SH_EV(a, SLUB_SHEAF_ALLOC, p[allocated], main->id, main->size, batch);
        allocated += batch;
    }
    return allocated;
}

/* ---- freeing --------------------------------------------------------- */

/*
 * __pcs_install_empty_sheaf: pcs is locked again with an empty sheaf in
 * hand; main is expected full and the spare gone, but an interrupt may have
 * changed that while the lock was dropped.
 */
static void pcs_install_empty_sheaf(sli_sheaves *sh, sli_act *a, sli_barn *barn, sli_pcs *pcs, sli_sheaf *empty)
{
    if (SL_LIKELY(!pcs->spare)) {
        pcs->spare = pcs->main;
        pcs->main = empty;
        return;
    }
    if (pcs->main->size < sh->capacity) {
        barn_put_empty_sheaf(barn, empty);
        return;
    }
    if (pcs->spare->size < sh->capacity) {
        sli_sheaf *t = pcs->main;
        pcs->main = pcs->spare;
        pcs->spare = t;
        barn_put_empty_sheaf(barn, empty);
        return;
    }
    /* barn_replace_full_sheaf found no empty sheaf but one was allocated: finish the job. */
    barn_put_full_sheaf(barn, pcs->main);
    sli_stat(a, SL_SLUB_BARN_PUT, 1);
    SH_EV(a, SLUB_BARN_PUT, NULL, pcs->main->id, empty->id, barn_nr(&barn->nr_full));
    pcs->main = empty;
}

/*
 * __pcs_replace_full_main: main is full; swap in a spare with room, trade
 * main for an empty barn sheaf, flush the full spare when the barn holds
 * enough full sheaves, allocate an empty sheaf, or at last flush main.
 * Returns pcs locked with room on main, or NULL unlocked.
 */
static sli_pcs *pcs_replace_full_main(sli_sheaves *sh, sli_act *a, sli_pcs *pcs)
{
    sli_barn *barn = sli_get_barn(sh, a->cpu);
    sli_sheaf *empty = NULL;
    bool put_fail, allow_spin = sli_allow_spin(a);
restart:
    if (SL_UNLIKELY(!sli_sheaves_active(sh) || !barn)) { /* no sheaves, or (7.1) no barn: back off */
        sli_pcs_unlock(pcs);
        return NULL;
    }
    put_fail = false;
    if (!pcs->spare) {
        empty = barn_get_empty_sheaf(a, barn, allow_spin);
        if (empty) {
            pcs->spare = pcs->main;
            pcs->main = empty;
            SH_EV(a, SLUB_SHEAF_SWAP, NULL, empty->id, 0, 1);
            return pcs;
        }
        goto alloc_empty;
    }
    if (pcs->spare->size < sh->capacity) {
        sli_sheaf *t = pcs->main;
        pcs->main = pcs->spare;
        pcs->spare = t;
        SH_EV(a, SLUB_SHEAF_SWAP, NULL, pcs->main->id, pcs->main->size, 1);
        return pcs;
    }
    replace_full rc = barn_replace_full_sheaf(a, barn, pcs->main, &empty, allow_spin);
    if (rc == REPLACED) {
        sli_stat(a, SL_SLUB_BARN_PUT, 1);
        SH_EV(a, SLUB_BARN_PUT, NULL, pcs->main->id, empty->id, barn_nr(&barn->nr_full));
        pcs->main = empty;
        return pcs;
    }
    if (rc == BARN_TOO_FULL && allow_spin) { /* sheaf_flush_unused() does not support !allow_spin */
        /* The spare is full too: flush it to slabs and use it as the empty sheaf. */
        sli_sheaf *to_flush = pcs->spare;
        sli_stat(a, SL_SLUB_BARN_PUT_FAIL, 1);
        SH_EV(a, SLUB_BARN_PUT_FAIL, NULL, pcs->main->id, barn_nr(&barn->nr_full), 0);
        pcs->spare = NULL;
        sli_pcs_unlock(pcs);
        sheaf_flush_unused(sh, a, to_flush);
        empty = to_flush;
        goto got_empty;
    }
    /* No empty sheaf in the barn: allocate one, and count the failed put only if that fails too. */
    put_fail = true;
alloc_empty:
    sli_pcs_unlock(pcs);
    /* kfree_nolock: no sheaf allocation, no flush; the object is freed without sheaves. */
    if (!allow_spin)
        return NULL;
    empty = new_sheaf(sh, a, sh->capacity, true);
    if (empty)
        goto got_empty;
    if (put_fail) {
        sli_stat(a, SL_SLUB_BARN_PUT_FAIL, 1);
        SH_EV(a, SLUB_BARN_PUT_FAIL, NULL, pcs->main->id, barn_nr(&barn->nr_full), 1);
    }
    if (!sheaf_flush_main(sh, a))
        return NULL;
    if (!sli_pcs_trylock(pcs))
        return NULL;
    /* Flushed, so main should be empty; an interrupt may have filled it again. */
    if (pcs->main->size == sh->capacity)
        goto restart;
    return pcs;
got_empty:
    if (!sli_pcs_trylock(pcs)) {
        barn_put_empty_sheaf(barn, empty);
        return NULL;
    }
    pcs_install_empty_sheaf(sh, a, barn, pcs, empty);
    pcs_sheaves_event(a, pcs);
    return pcs;
}

bool sli_free_to_pcs(sli_sheaves *sh, sli_act *a, void *obj)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    if (SL_UNLIKELY(!sli_pcs_trylock(pcs))) {
        SH_EV(a, SLUB_SHEAF_TRYLOCK_FAIL, obj, 1, 0, 0);
        return false;
    }
    if (SL_UNLIKELY(pcs->main->size == sh->capacity)) {
        pcs = pcs_replace_full_main(sh, a, pcs);
        if (SL_UNLIKELY(!pcs))
            return false;
    }
#if !defined(SLABLAB_BENCH)
    sl_slub_pp_ctx ctx = {.cache = a->s, .op = a->op, .cpu = a->cpu, .freelist = obj, .cnt = pcs->main->size};
    SL_PREEMPT_POINT(a->s->trace, a->cpu, SL_SLUB_PP_SHEAF_FREE, &ctx);
#endif
    sli_sheaf *main = pcs->main;
    main->objects[main->size++] = obj;
    sli_pcs_unlock(pcs);
    sli_stat_fast(a, SL_SLUB_FREE_PCS, 1);
    SH_EV(a, SLUB_SHEAF_FREE, obj, main->id, main->size, 0);
    return true;
}

unsigned sli_free_to_pcs_bulk(sli_sheaves *sh, sli_act *a, unsigned n, void **p)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    sli_barn *barn = sli_get_barn(sh, a->cpu);
    while (n) {
        if (!sli_pcs_trylock(pcs))
            goto fallback;
        if (pcs->main->size >= sh->capacity) {
            sli_sheaf *empty = NULL;
            if (!barn)
                goto no_empty; /* 7.1: no barn on this CPU's node */
            if (!pcs->spare) {
                empty = barn_get_empty_sheaf(a, barn, true);
                if (!empty)
                    goto no_empty;
                pcs->spare = pcs->main;
                pcs->main = empty;
            } else if (pcs->spare->size < sh->capacity) {
                sli_sheaf *t = pcs->main;
                pcs->main = pcs->spare;
                pcs->spare = t;
            } else if (barn_replace_full_sheaf(a, barn, pcs->main, &empty, true) == REPLACED) {
                sli_stat(a, SL_SLUB_BARN_PUT, 1);
                SH_EV(a, SLUB_BARN_PUT, NULL, pcs->main->id, empty->id, barn_nr(&barn->nr_full));
                pcs->main = empty;
            } else {
                sli_stat(a, SL_SLUB_BARN_PUT_FAIL, 1);
                SH_EV(a, SLUB_BARN_PUT_FAIL, NULL, pcs->main->id, barn_nr(&barn->nr_full), 0);
                goto no_empty;
            }
        }
        sli_sheaf *main = pcs->main;
        unsigned batch = n < sh->capacity - main->size ? n : sh->capacity - main->size;
        memcpy(main->objects + main->size, p, batch * sizeof(void *));
        main->size += batch;
        sli_pcs_unlock(pcs);
        sli_stat_fast(a, SL_SLUB_FREE_PCS, batch);
        SH_EV(a, SLUB_SHEAF_FREE, p[0], main->id, main->size, batch);
        p += batch;
        n -= batch;
    }
    return 0;
no_empty:
    sli_pcs_unlock(pcs);
fallback:
    /* No empty sheaf left in the barn, or too many full ones: the rest to slabs. */
    sh->ops->free_bulk(a, p, n);
    return n;
}

/* ---- kfree_rcu ------------------------------------------------------- */

/*
 * An empty sheaf __kfree_rcu_sheaf allocated but cannot install (the relock
 * failed, or an interrupt installed one meanwhile): 7.3 frees it
 * (__free_empty_sheaf, kfree_nolock under SLAB_FREE_NOLOCK: SHEAF_FREE),
 * earlier kernels put it in the barn, which would spin.
 */
static void undo_rcu_sheaf(sli_sheaves *sh, sli_act *a, sli_barn *barn, sli_sheaf *empty)
{
    if (sh->rcu_undo_frees)
        drop_sheaf(sh, a, empty, true);
    else
        barn_put_empty_sheaf(barn, empty);
}

/* kernel: __kfree_rcu_sheaf (7.3: free_flags; allow_spin false for SLAB_FREE_NOLOCK) */
bool sli_kfree_rcu_sheaf(sli_sheaves *sh, sli_act *a, void *obj, bool irqs_off)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    sli_barn *barn;
    bool allow_spin = sli_allow_spin(a);
    if (!sli_pcs_trylock(pcs))
        goto fail;
    if (SL_UNLIKELY(!pcs->rcu_free)) {
        sli_sheaf *empty;
        if (SL_UNLIKELY(!sli_sheaves_active(sh))) {
            sli_pcs_unlock(pcs);
            goto fail;
        }
        if (pcs->spare && pcs->spare->size == 0) {
            pcs->rcu_free = pcs->spare;
            pcs->spare = NULL;
            goto do_free;
        }
        barn = sli_get_barn(sh, a->cpu);
        if (!barn) { /* 7.1: no barn on this CPU's node */
            sli_pcs_unlock(pcs);
            goto fail;
        }
        empty = barn_get_empty_sheaf(a, barn, allow_spin);
        if (empty) {
            pcs->rcu_free = empty;
            goto do_free;
        }
        sli_pcs_unlock(pcs);
        /* alloc_empty_sheaf(s, allow_spin ? GFP_NOWAIT : __GFP_NOWARN, ...): kmalloc_nolock without spinning */
        empty = new_sheaf(sh, a, sh->capacity, true);
        if (!empty)
            goto fail;
        if (!sli_pcs_trylock(pcs)) {
            undo_rcu_sheaf(sh, a, barn, empty);
            goto fail;
        }
        if (SL_UNLIKELY(pcs->rcu_free))
            undo_rcu_sheaf(sh, a, barn, empty);
        else
            pcs->rcu_free = empty;
    }
do_free:;
    sli_sheaf *rcu_sheaf = pcs->rcu_free;
    rcu_sheaf->objects[rcu_sheaf->size++] = obj;
    bool full = rcu_sheaf->size == sh->capacity;
    /* 7.3, !allow_spin with irqs off: call_rcu's own irq-off section may be what was interrupted */
    bool deferred = full && !allow_spin && irqs_off;
    SH_EV(a, SLUB_RCU_SHEAF_ADD, obj, rcu_sheaf->id, rcu_sheaf->size, full + deferred);
    if (full) {
        /* Handed on before the unlock, so a racing flush cannot miss it. */
        rcu_sheaf->node = sh->barn_nid[a->cpu];
        pcs->rcu_free = NULL;
        if (deferred) {
            rcu_sheaf->next = pcs->rcu_irq;
            pcs->rcu_irq = rcu_sheaf;
        } else {
            call_rcu_sheaf(pcs, rcu_sheaf, false);
        }
    }
    sli_pcs_unlock(pcs);
    sli_stat(a, SL_SLUB_FREE_RCU_SHEAF, 1);
    return true;
fail:
    sli_stat(a, SL_SLUB_FREE_RCU_SHEAF_FAIL, 1);
    return false;
}

/* kernel: deferred_percpu_work_fn's rcu_sheaves loop (llist_del_all, then call_rcu on each) */
unsigned sli_sheaves_submit_deferred(sli_sheaves *sh, sli_act *a)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    unsigned n = 0;
    while (pcs->rcu_irq) {
        sli_sheaf *sheaf = pcs->rcu_irq;
        pcs->rcu_irq = sheaf->next;
        call_rcu_sheaf(pcs, sheaf, false);
        n++;
    }
    return n;
}

/* rcu_free_sheaf: after the grace period a full rcu sheaf joins the barn, or is flushed. */
static void rcu_free_sheaf(sli_sheaves *sh, sli_act *a, sli_sheaf *sheaf)
{
    /* The barn of the node that filled it: sheaf->node, numa_mem_id() (6.18, 7.0) or numa_node_id() (7.1). */
    unsigned nid = sheaf->node;
    sli_barn *barn = (sh->barn_nodes >> nid) & 1u ? &sh->barn[nid] : NULL;
    unsigned outcome = 2;
    if (!barn) {
        SH_EV(a, SLUB_RCU_GRACE_PERIOD, NULL, sheaf->id, sheaf->size, 1);
        sheaf_flush_unused(sh, a, sheaf);
        drop_sheaf(sh, a, sheaf, true);
        return;
    }
    if (sheaf->size) {
        if (barn_nr(&barn->nr_full) < SLI_MAX_FULL_SHEAVES) {
            sli_stat(a, SL_SLUB_BARN_PUT, 1);
            SH_EV(a, SLUB_RCU_GRACE_PERIOD, NULL, sheaf->id, sheaf->size, 0);
            barn_put_full_sheaf(barn, sheaf);
            return;
        }
        sli_stat(a, SL_SLUB_BARN_PUT_FAIL, 1);
        outcome = 1;
    }
    SH_EV(a, SLUB_RCU_GRACE_PERIOD, NULL, sheaf->id, sheaf->size, outcome);
    sheaf_flush_unused(sh, a, sheaf);
    if (barn_nr(&barn->nr_empty) < SLI_MAX_EMPTY_SHEAVES)
        barn_put_empty_sheaf(barn, sheaf);
    else
        drop_sheaf(sh, a, sheaf, true);
}

/* kernel: none (the grace period is the model's explicit step; each sheaf then goes to rcu_free_sheaf) */
unsigned sli_sheaves_rcu_gp(sli_sheaves *sh, sli_act *a)
{
    sli_pcs *pcs = &sh->pcs[a->cpu];
    sli_sheaf *list = NULL;
    /* Callbacks run in the order call_rcu queued them: reverse the pushed list. */
    while (pcs->rcu_pending) {
        sli_sheaf *sheaf = pcs->rcu_pending;
        pcs->rcu_pending = sheaf->next;
        sheaf->next = list;
        list = sheaf;
    }
    unsigned objects = 0;
    while (list) {
        sli_sheaf *sheaf = list;
        list = sheaf->next;
        sheaf->next = NULL;
        objects += sheaf->size;
        if (sheaf->rcu_flush) { /* rcu_free_sheaf_nobarn */
            SH_EV(a, SLUB_RCU_GRACE_PERIOD, NULL, sheaf->id, sheaf->size, 1);
            sheaf_flush_unused(sh, a, sheaf);
            drop_sheaf(sh, a, sheaf, true);
        } else {
            rcu_free_sheaf(sh, a, sheaf);
        }
    }
    return objects;
}

/* ---- the prefill API ------------------------------------------------- */

static void prefilled_add(sli_sheaves *sh, sli_sheaf *sheaf)
{
    sl_spin_lock(&sh->prefilled_lock);
    sheaf->next = sh->prefilled;
    sh->prefilled = sheaf;
    sl_spin_unlock(&sh->prefilled_lock);
}

/* Takes sheaf off the prefilled list; false if it is not on it (not a prefilled sheaf of this cache). */
static bool prefilled_remove(sli_sheaves *sh, sli_sheaf *sheaf)
{
    bool found = false;
    sl_spin_lock(&sh->prefilled_lock);
    for (sli_sheaf **pp = &sh->prefilled; *pp; pp = &(*pp)->next) {
        if (*pp == sheaf) {
            *pp = sheaf->next;
            sheaf->next = NULL;
            found = true;
            break;
        }
    }
    sl_spin_unlock(&sh->prefilled_lock);
    return found;
}

/*
 * An oversize sheaf: allocated fresh (counted from 7.2, "use empty sheaf
 * helpers for oversized sheaves") and filled by __kmem_cache_alloc_bulk, all
 * or nothing; flushed and freed on return.
 */
static sli_sheaf *prefill_oversize(sli_sheaves *sh, sli_act *a, uint32_t size, int *err)
{
    sli_sheaf *sheaf = new_sheaf(sh, a, size, sh->oversize_counted);
    if (!sheaf) {
        *err = SL_ENOMEM;
        return NULL;
    }
    sli_stat(a, SL_SLUB_SHEAF_PREFILL_OVERSIZE, 1);
    if (sh->ops->alloc_bulk(a, size, sheaf->objects) != size) {
        drop_sheaf(sh, a, sheaf, sh->oversize_counted);
        *err = SL_ENOMEM;
        return NULL;
    }
    sheaf->size = size;
    return sheaf;
}

/* kernel: kmem_cache_prefill_sheaf */
sli_sheaf *sli_prefill_sheaf(sli_sheaves *sh, sli_act *a, uint32_t size, int *err)
{
    sli_sheaf *sheaf = NULL;
    unsigned how = 2;
    *err = SL_OK;
    if (!size) {
        *err = SL_EINVAL;
        return NULL;
    }
    if (size > sh->capacity) {
        sheaf = prefill_oversize(sh, a, size, err);
    } else {
        sli_pcs *pcs = &sh->pcs[a->cpu];
        if (!sli_pcs_trylock(pcs)) {
            *err = SL_EBUSY; /* local_lock() from inside the section */
            return NULL;
        }
        if (pcs->spare) {
            sheaf = pcs->spare;
            pcs->spare = NULL;
            sli_stat(a, SL_SLUB_SHEAF_PREFILL_FAST, 1);
            how = 0;
        } else {
            sli_stat(a, SL_SLUB_SHEAF_PREFILL_SLOW, 1);
            sli_barn *barn = sli_get_barn(sh, a->cpu);
            sheaf = barn ? barn_get_full_or_empty_sheaf(barn) : NULL;
            sli_stat(a, sheaf && sheaf->size ? SL_SLUB_BARN_GET : SL_SLUB_BARN_GET_FAIL, 1);
            how = 1;
        }
        sli_pcs_unlock(pcs);
        if (!sheaf)
            sheaf = new_sheaf(sh, a, sh->capacity, true);
        if (sheaf && sheaf->size < size && refill_sheaf(sh, a, sheaf) != SL_OK) {
            sheaf_flush_unused(sh, a, sheaf);
            drop_sheaf(sh, a, sheaf, true);
            sheaf = NULL;
        }
        if (!sheaf)
            *err = SL_ENOMEM;
    }
    if (sheaf) {
        prefilled_add(sh, sheaf);
        SH_EV(a, SLUB_SHEAF_PREFILL, NULL, sheaf->id, sheaf->size, how);
    }
    return sheaf;
}

bool sli_sheaf_is_prefilled(sli_sheaves *sh, const sli_sheaf *sheaf)
{
    bool found = false;
    sl_spin_lock(&sh->prefilled_lock);
    for (const sli_sheaf *s = sh->prefilled; s && !found; s = s->next)
        found = s == sheaf;
    sl_spin_unlock(&sh->prefilled_lock);
    return found;
}

/* kernel: kmem_cache_return_sheaf */
int sli_return_sheaf(sli_sheaves *sh, sli_act *a, sli_sheaf *sheaf)
{
    if (!sheaf || !prefilled_remove(sh, sheaf))
        return SL_EINVAL;
    if (sheaf->capacity != sh->capacity) {
        SH_EV(a, SLUB_SHEAF_RETURN, NULL, sheaf->id, sheaf->size, 2);
        sheaf_flush_unused(sh, a, sheaf);
        drop_sheaf(sh, a, sheaf, sh->oversize_counted);
        return SL_OK;
    }
    sli_pcs *pcs = &sh->pcs[a->cpu];
    if (sli_pcs_trylock(pcs)) {
        if (!pcs->spare) {
            pcs->spare = sheaf;
            sheaf = NULL;
            sli_stat(a, SL_SLUB_SHEAF_RETURN_FAST, 1);
        }
        sli_pcs_unlock(pcs);
    }
    if (!sheaf) {
        SH_EV(a, SLUB_SHEAF_RETURN, NULL, pcs->spare->id, pcs->spare->size, 0);
        return SL_OK;
    }
    sli_stat(a, SL_SLUB_SHEAF_RETURN_SLOW, 1);
    /* No barn (7.1), too many full sheaves, or the refill fails: flush and free it. */
    sli_barn *barn = sli_get_barn(sh, a->cpu);
    if (!barn || barn_nr(&barn->nr_full) >= SLI_MAX_FULL_SHEAVES || refill_sheaf(sh, a, sheaf) != SL_OK) {
        SH_EV(a, SLUB_SHEAF_RETURN, NULL, sheaf->id, sheaf->size, 2);
        sheaf_flush_unused(sh, a, sheaf);
        drop_sheaf(sh, a, sheaf, true);
        return SL_OK;
    }
    SH_EV(a, SLUB_SHEAF_RETURN, NULL, sheaf->id, sheaf->size, 1);
    barn_put_full_sheaf(barn, sheaf);
    sli_stat(a, SL_SLUB_BARN_PUT, 1);
    return SL_OK;
}

int sli_refill_sheaf(sli_sheaves *sh, sli_act *a, sli_sheaf **sheafp, uint32_t size)
{
    if (!sheafp || !*sheafp)
        return SL_EINVAL;
    sli_sheaf *sheaf = *sheafp;
    if (sheaf->size >= size)
        return SL_OK;
    if (sheaf->capacity >= size) {
        if (sheaf->capacity == sh->capacity)
            return refill_sheaf(sh, a, sheaf);
        /* An oversize sheaf: __kmem_cache_alloc_bulk, all or nothing. */
        uint32_t want = sheaf->capacity - sheaf->size;
        if (sh->ops->alloc_bulk(a, want, &sheaf->objects[sheaf->size]) != want)
            return SL_ENOMEM;
        sheaf->size = sheaf->capacity;
        return SL_OK;
    }
    /* A larger sheaf is needed: prefill one, then return the old one. */
    int err;
    sheaf = sli_prefill_sheaf(sh, a, size, &err);
    if (!sheaf)
        return err;
    sli_return_sheaf(sh, a, *sheafp);
    *sheafp = sheaf;
    return SL_OK;
}

/* kernel: kmem_cache_alloc_from_sheaf */
void *sli_alloc_from_sheaf(sli_sheaves *sh, sli_act *a, sli_sheaf *sheaf)
{
    (void)sh;
    if (!sheaf->size)
        return NULL;
    void *obj = sheaf->objects[--sheaf->size];
    SH_EV(a, SLUB_SHEAF_ALLOC, obj, sheaf->id, sheaf->size, 0);
    return obj;
}

/* ---- life cycle ------------------------------------------------------- */

int sli_sheaves_init(sli_sheaves *sh, sli_act *a, unsigned ncpus, uint32_t capacity, uint32_t max_sheaves,
                     const sli_slab_ops *ops)
{
    memset(sh, 0, sizeof *sh);
    sh->ncpus = ncpus;
    sh->barn_nodes = 1; /* one node until the cache's topology says otherwise (sli_slub_sheaves_create) */
    sh->max_sheaves = max_sheaves;
    sh->ops = ops;
    for (unsigned c = 0; c < ncpus; c++)
        sh->pcs[c].main = &sli_bootstrap_sheaf;
    if (!capacity)
        return SL_OK;
    for (unsigned c = 0; c < ncpus; c++) {
        sli_sheaf *main = calloc(1, sizeof *main + (size_t)capacity * sizeof(void *));
        if (!main) {
            for (unsigned k = 0; k < c; k++)
                free(sh->pcs[k].main);
            return SL_ENOMEM;
        }
        main->capacity = capacity;
        main->id = atomic_fetch_add_explicit(&sh->next_id, 1, memory_order_relaxed) + 1;
        sh->pcs[c].main = main;
        sli_stat(a, SL_SLUB_SHEAF_ALLOC, 1); /* init_percpu_sheaves, on the creating CPU */
    }
    atomic_store_explicit(&sh->nr_sheaves, ncpus, memory_order_relaxed);
    sh->capacity = capacity;
    return SL_OK;
}

int sli_sheaves_seed(sli_sheaves *sh, sli_act *a, unsigned n, const uint8_t *place, const uint8_t *cpu,
                     const uint32_t *size, const uint32_t *off, void *const *objs)
{
    sli_sheaf **made = calloc(n ? n : 1, sizeof *made);
    if (!made)
        return SL_ENOMEM;
    for (unsigned i = 0; i < n; i++) {
        if (place[i] == SLI_SHEAF_MAIN)
            continue;
        made[i] = new_sheaf(sh, a, sh->capacity, true);
        if (!made[i]) {
            for (unsigned k = 0; k < i; k++)
                if (made[k])
                    drop_sheaf(sh, a, made[k], true);
            free(made);
            return SL_ENOMEM;
        }
    }
    for (unsigned i = n; i-- > 0;) { /* backwards: the barn's list is pushed from its tail */
        sli_sheaf *sheaf = place[i] == SLI_SHEAF_MAIN ? sh->pcs[cpu[i]].main : made[i];
        memcpy(sheaf->objects, objs + off[i], (size_t)size[i] * sizeof(void *));
        sheaf->size = size[i];
        if (place[i] == SLI_SHEAF_SPARE)
            sh->pcs[cpu[i]].spare = sheaf;
        else if (place[i] == SLI_SHEAF_RCU_FREE)
            sh->pcs[cpu[i]].rcu_free = sheaf;
        else if (place[i] == SLI_SHEAF_BARN_FULL)
            barn_put_full_sheaf(&sh->barn[0], sheaf); /* seeds come from a one-node machine */
    }
    free(made);
    return SL_OK;
}

/* kernel: bootstrap_cache_sheaves */
int sli_sheaves_bootstrap(sli_sheaves *sh, sli_act *a, uint32_t capacity)
{
    if (sli_sheaves_active(sh) || !capacity)
        return SL_EINVAL;
    sli_sheaf *mains[SL_SLUB_MAX_CPUS];
    for (unsigned c = 0; c < sh->ncpus; c++) {
        mains[c] = new_sheaf(sh, a, capacity, true);
        if (!mains[c]) {
            while (c--)
                drop_sheaf(sh, a, mains[c], true);
            return SL_ENOMEM;
        }
    }
    for (unsigned c = 0; c < sh->ncpus; c++)
        sh->pcs[c].main = mains[c];
    sh->capacity = capacity;
    SH_EV(a, SLUB_SHEAVES_BOOTSTRAP, NULL, capacity, sh->ncpus, 0);
    return SL_OK;
}

void sli_sheaves_destroy(sli_sheaves *sh, sli_act *a)
{
    for (unsigned c = 0; c < sh->ncpus; c++) {
        sli_pcs *pcs = &sh->pcs[c];
        sli_act ca = *a;
        ca.cpu = (uint16_t)c;
        ca.c = &a->s->cpu[c];
        sli_sheaves_submit_deferred(sh, &ca);
        sli_sheaves_rcu_gp(sh, &ca);
        sli_sheaf *own[3] = {pcs->main, pcs->spare, pcs->rcu_free};
        pcs->spare = pcs->rcu_free = NULL;
        pcs->main = &sli_bootstrap_sheaf;
        for (unsigned k = 0; k < 3; k++) {
            if (own[k] && own[k] != &sli_bootstrap_sheaf) {
                sheaf_flush_unused(sh, &ca, own[k]);
                drop_sheaf(sh, &ca, own[k], true);
            }
        }
    }
    sli_barn_shrink(sh, a);
    while (sh->prefilled) {
        sli_sheaf *sheaf = sh->prefilled;
        sh->prefilled = sheaf->next;
        sheaf_flush_unused(sh, a, sheaf);
        drop_sheaf(sh, a, sheaf, sheaf->capacity == sh->capacity || sh->oversize_counted);
    }
    sh->capacity = 0;
}

/* ---- inspection -------------------------------------------------------- */

int sli_sheaves_walk(const sli_sheaves *sh, sli_sheaf_visit visit, void *ctx)
{
    int rc;
    for (unsigned c = 0; c < sh->ncpus; c++) {
        const sli_pcs *pcs = &sh->pcs[c];
        if ((rc = visit(ctx, pcs->main, SLI_SHEAF_MAIN, c)))
            return rc;
        if (pcs->spare && (rc = visit(ctx, pcs->spare, SLI_SHEAF_SPARE, c)))
            return rc;
        if (pcs->rcu_free && (rc = visit(ctx, pcs->rcu_free, SLI_SHEAF_RCU_FREE, c)))
            return rc;
        for (const sli_sheaf *s = pcs->rcu_pending; s; s = s->next)
            if ((rc = visit(ctx, s, SLI_SHEAF_RCU_PENDING, c)))
                return rc;
        /* full sheaves the irq_work has yet to hand to call_rcu: shown as waiting for RCU too */
        for (const sli_sheaf *s = pcs->rcu_irq; s; s = s->next)
            if ((rc = visit(ctx, s, SLI_SHEAF_RCU_PENDING, c)))
                return rc;
    }
    for (unsigned nid = 0; nid < SL_SLUB_MAX_NODES; nid++) {
        if (!((sh->barn_nodes >> nid) & 1u))
            continue;
        for (const sli_sheaf *s = sh->barn[nid].full; s; s = s->next)
            if ((rc = visit(ctx, s, SLI_SHEAF_BARN_FULL, 0xffff)))
                return rc;
        for (const sli_sheaf *s = sh->barn[nid].empty; s; s = s->next)
            if ((rc = visit(ctx, s, SLI_SHEAF_BARN_EMPTY, 0xffff)))
                return rc;
    }
    for (const sli_sheaf *s = sh->prefilled; s; s = s->next)
        if ((rc = visit(ctx, s, SLI_SHEAF_PREFILLED, 0xffff)))
            return rc;
    return 0;
}

typedef struct vcheck {
    const sli_sheaves *sh;
    char *msg;
    size_t len;
    const sli_sheaf **seen;
    unsigned nseen, cap, nfull, nempty;
} vcheck;

static int vfail(vcheck *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int vfail(vcheck *v, const char *fmt, ...)
{
    if (v->msg && v->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v->msg, v->len, fmt, ap);
        va_end(ap);
    }
    return SL_ECORRUPT;
}

static int check_sheaf(void *ctx, const sli_sheaf *s, unsigned place, unsigned cpu)
{
    vcheck *v = ctx;
    const sli_sheaves *sh = v->sh;
    if (s == &sli_bootstrap_sheaf) {
        if (place != SLI_SHEAF_MAIN || sli_sheaves_active(sh) || s->size || s->capacity)
            return vfail(v, "CPU %u: the bootstrap sheaf is in use with capacity %u", cpu, sh->capacity);
        return 0;
    }
    if (place == SLI_SHEAF_MAIN && !sli_sheaves_active(sh))
        return vfail(v, "CPU %u: a real main sheaf %u while the cache has no sheaves", cpu, s->id);
    if (s->size > s->capacity)
        return vfail(v, "sheaf %u holds %u objects, over its capacity %u", s->id, s->size, s->capacity);
    if (place != SLI_SHEAF_PREFILLED && s->capacity != sh->capacity)
        return vfail(v, "sheaf %u has capacity %u, the cache's is %u", s->id, s->capacity, sh->capacity);
    if (place == SLI_SHEAF_RCU_FREE && s->size >= s->capacity)
        return vfail(v, "CPU %u: its rcu_free sheaf %u is full (%u): it should be waiting for RCU", cpu, s->id,
                     s->size);
    if (place == SLI_SHEAF_BARN_FULL && s->size != s->capacity)
        return vfail(v, "sheaf %u is on the barn's full list with %u of %u objects", s->id, s->size, s->capacity);
    if (place == SLI_SHEAF_BARN_EMPTY && s->size)
        return vfail(v, "sheaf %u is on the barn's empty list with %u objects", s->id, s->size);
    v->nfull += place == SLI_SHEAF_BARN_FULL;
    v->nempty += place == SLI_SHEAF_BARN_EMPTY;
    for (unsigned i = 0; i < v->nseen; i++)
        if (v->seen[i] == s)
            return vfail(v, "sheaf %u is in two places", s->id);
    if (v->nseen == v->cap) {
        unsigned ncap = v->cap ? 2 * v->cap : 64;
        const sli_sheaf **n = realloc(v->seen, ncap * sizeof *n);
        if (!n)
            return SL_ENOMEM;
        v->seen = n;
        v->cap = ncap;
    }
    v->seen[v->nseen++] = s;
    return 0;
}

int sli_sheaves_validate(const sli_sheaves *sh, char *msg, size_t len)
{
    vcheck v = {.sh = sh, .msg = msg, .len = len};
    for (unsigned c = 0; c < sh->ncpus; c++) {
        if (!sh->pcs[c].main)
            return vfail(&v, "CPU %u has no main sheaf", c);
        if (atomic_load_explicit(&sh->pcs[c].lock, memory_order_relaxed))
            return vfail(&v, "CPU %u: its sheaves are locked with no operation running", c);
    }
    int rc = sli_sheaves_walk(sh, check_sheaf, &v);
    unsigned nr_full = 0, nr_empty = 0;
    for (unsigned nid = 0; nid < SL_SLUB_MAX_NODES; nid++) {
        const sli_barn *b = &sh->barn[nid];
        if ((sh->barn_nodes >> nid) & 1u) {
            nr_full += b->nr_full;
            nr_empty += b->nr_empty;
        } else if (!rc && (b->full || b->empty || b->nr_full || b->nr_empty)) {
            rc = vfail(&v, "node %u has no barn, yet sheaves sit in its barn", nid);
        }
    }
    if (!rc && (v.nfull != nr_full || v.nempty != nr_empty))
        rc = vfail(&v, "the barns count %u full and %u empty sheaves but list %u and %u", nr_full, nr_empty, v.nfull,
                   v.nempty);
    if (!rc && v.nseen != atomic_load_explicit(&sh->nr_sheaves, memory_order_relaxed))
        rc = vfail(&v, "%u sheaves are allocated but %u are in place", atomic_load(&sh->nr_sheaves), v.nseen);
    free(v.seen);
    return rc;
}
