/*
 * sheaves.h - per-CPU sheaves and the node barn (Linux 6.18 opt-in, 7.0 for
 * every cache): the layer of object arrays above the slabs.  sheaves.c
 * opens with what guards what; this header holds the structures the rest of
 * the SLUB model (validate, snapshot, the cache) reads.
 */
#ifndef SL_SLUB_SHEAVES_H
#define SL_SLUB_SHEAVES_H

#include "slub_internal.h"

#define SLI_MAX_FULL_SHEAVES 10  /* MAX_FULL_SHEAVES */
#define SLI_MAX_EMPTY_SHEAVES 10 /* MAX_EMPTY_SHEAVES */
#define SLI_PCS_BATCH_MAX 32u    /* PCS_BATCH_MAX: objects per batch when main is flushed */

/* struct slab_sheaf: a LIFO array of object pointers. */
typedef struct sli_sheaf {
    struct sli_sheaf *next; /* barn_list, the rcu callback list, the prefilled list */
    uint32_t size;          /* objects[0 .. size-1] hold objects */
    uint32_t capacity;      /* the cache's sheaf_capacity, or a prefill's size (oversize) */
    uint32_t id;            /* model: names the sheaf in events and snapshots (0: bootstrap) */
    uint8_t rcu_flush;      /* queued for RCU by a flush (rcu_free_sheaf_nobarn), not by a full sheaf */
    uint8_t node;           /* 7.1: the node whose barn a full rcu_free sheaf goes to (sheaf->node) */
    uint8_t pad_[2];
    void *objects[];
} sli_sheaf;

/* bootstrap_sheaf: the zero-capacity main of every CPU of a cache without sheaves; never written. */
extern sli_sheaf sli_bootstrap_sheaf;

/* struct slub_percpu_sheaves, one per CPU, touched only by the thread acting as that CPU. */
typedef struct sli_pcs {
    atomic_uint lock;       /* local_trylock_t: 1 while the CPU is inside a sheaf section */
    sli_sheaf *main;        /* never NULL when unlocked (the bootstrap sheaf when capacity is 0) */
    sli_sheaf *spare;       /* NULL, empty or full; partly full after kmem_cache_return_sheaf (6.18+) */
    sli_sheaf *rcu_free;    /* NULL or a sheaf kfree_rcu() is filling (size < capacity) */
    sli_sheaf *rcu_pending; /* model: sheaves handed to call_rcu, waiting for a grace period */
    sli_sheaf *rcu_irq;     /* full rcu sheaves waiting for the CPU's irq_work to call_rcu them (7.3:
                             * deferred_percpu_work's rcu_sheaves), newest first */
} __attribute__((aligned(SL_CACHELINE))) sli_pcs;

/*
 * local_trylock / local_unlock (!PREEMPT_RT): a flag only this CPU's thread
 * reads and writes, so a plain load and store, as the kernel's READ_ONCE /
 * WRITE_ONCE of tl->acquired with preemption off; the signal fences keep the
 * compiler from moving the sheaf accesses out of the section, where an
 * "interrupt" (a hook at a preemption point) could see them.
 */
SL_INLINE bool sli_pcs_trylock(sli_pcs *pcs)
{
    if (atomic_load_explicit(&pcs->lock, memory_order_relaxed))
        return false;
    atomic_store_explicit(&pcs->lock, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    return true;
}
SL_INLINE void sli_pcs_unlock(sli_pcs *pcs)
{
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&pcs->lock, 0, memory_order_relaxed);
}

/* struct node_barn: a node's stock of full and empty sheaves for the CPUs that use it (get_barn). */
typedef struct sli_barn {
    sl_spinlock lock;
    sli_sheaf *full;  /* sheaves_full, newest first (list_add / list_first_entry) */
    sli_sheaf *empty; /* sheaves_empty, newest first */
    uint32_t nr_full; /* written under lock, read without it as the kernel's data_race() */
    uint32_t nr_empty;
} sli_barn;

/*
 * The slab layer under the sheaves, per era: 6.18 refills with
 * __kmem_cache_alloc_bulk over the per-CPU slab and flushes with
 * __kmem_cache_free_bulk's do_slab_free; 7.0 refills with refill_objects
 * (node partial slabs under list_lock, then new slabs) and flushes to
 * __slab_free.  Both act as the operation's CPU.
 */
typedef struct sli_slab_ops {
    /* Puts between min and max objects from slabs into p; returns how many (< min only without memory). */
    unsigned (*refill)(sli_act *a, void **p, unsigned min, unsigned max);
    /* Frees p[0 .. n-1], objects of this cache, to their slabs. */
    void (*free_bulk)(sli_act *a, void **p, unsigned n);
    /* __kmem_cache_alloc_bulk (oversize sheaves): n objects from slabs into p, or none; returns n or 0. */
    unsigned (*alloc_bulk)(sli_act *a, unsigned n, void **p);
} sli_slab_ops;

typedef struct sli_sheaves {
    uint32_t capacity;      /* s->sheaf_capacity; 0 until bootstrap_cache_sheaves */
    uint32_t boot_capacity; /* the capacity bootstrap_cache_sheaves will give (7.0 early_boot) */
    unsigned ncpus;
    bool main_to_spare;      /* 7.0: a refill that finds main empty keeps it as the spare */
    bool relock_trylock;     /* 7.1: after a refill, local_trylock; if it fails the full sheaf goes to the barn */
    bool oversize_counted;   /* 7.2: oversize prefill sheaves count SHEAF_ALLOC / SHEAF_FREE */
    bool refill_nonblocking; /* 7.0: an empty main is refilled whenever spinning is allowed (GFP_ATOMIC
                               * too); 6.18 refills only when blocking is (GFP_KERNEL) */
    bool rcu_undo_frees;     /* 7.3: __kfree_rcu_sheaf's undo path frees the new sheaf (__free_empty_sheaf,
                              * SHEAF_FREE); before, barn_put_empty_sheaf */
    uint32_t max_sheaves;    /* model: sheaves that may exist at once (0: no limit); past it a
                               * sheaf allocation fails, as a GFP_NOWAIT kmalloc can */
    atomic_uint nr_sheaves;  /* sheaves allocated and not yet freed (bootstrap not counted) */
    atomic_uint next_id;
    const sli_slab_ops *ops;
    sl_spinlock prefilled_lock;
    sli_sheaf *prefilled; /* model: sheaves kmem_cache_prefill_sheaf handed out, not yet returned */
    /*
     * The barns: barn[nid] exists while bit nid of barn_nodes is set.  6.18
     * and 7.0 keep a barn in each kmem_cache_node (nodes with memory) and
     * get_barn finds it by numa_mem_id(); 7.1 keeps them in
     * s->per_node[nid].barn for every node in slab_barn_nodes (online nodes,
     * memoryless ones with CPUs too) and get_barn finds it by numa_node_id(),
     * NULL for a node without one.  barn_nid[cpu] is get_barn's node for
     * each CPU.  barn_nodes changes only with no operation running (CPU
     * hotplug, sl_slub_cpu_online).
     */
    sli_barn barn[SL_SLUB_MAX_NODES];
    uint8_t barn_nodes;
    bool barn_per_node; /* 7.1: barns in per_node[], get_barn by numa_node_id(); rcu sheaves remember their node */
    uint8_t barn_nid[SL_SLUB_MAX_CPUS];
    sli_pcs pcs[SL_SLUB_MAX_CPUS];
} sli_sheaves;

/* get_barn(s) as CPU cpu: its node's barn, or NULL (7.1: a node not in slab_barn_nodes). */
SL_INLINE sli_barn *sli_get_barn(sli_sheaves *sh, unsigned cpu)
{
    unsigned nid = sh->barn_nid[cpu];
    return (sh->barn_nodes >> nid) & 1u ? &sh->barn[nid] : NULL;
}

/*
 * Sets up sheaves of `capacity` (0: every CPU's main is the bootstrap
 * sheaf) for ncpus CPUs over the slab layer `ops`, acting as a's CPU (its
 * SHEAF_ALLOC counts the main sheaves).  Returns 0 or SL_ENOMEM.
 */
int sli_sheaves_init(sli_sheaves *sh, sli_act *a, unsigned ncpus, uint32_t capacity, uint32_t max_sheaves,
                     const sli_slab_ops *ops);
/*
 * Flushes every sheaf to the slabs (rcu sheaves as after a grace period),
 * returns the prefilled sheaves still out and frees every sheaf; acting as
 * CPU 0 with no operation running.
 */
void sli_sheaves_destroy(sli_sheaves *sh, sli_act *a);
/* cache_has_sheaves(): false while only the bootstrap sheaf exists. */
SL_INLINE bool sli_sheaves_active(const sli_sheaves *sh) { return sh->capacity != 0; }
/* bootstrap_cache_sheaves: gives every CPU a real main sheaf of `capacity`.  0 or SL_ENOMEM/SL_EINVAL. */
int sli_sheaves_bootstrap(sli_sheaves *sh, sli_act *a, uint32_t capacity);

/*
 * alloc_from_pcs: an object, or NULL (trylock failed, or no sheaf could be
 * filled, or a's context may not refill one): take the slab path.  In
 * a's SLI_CTX_NOLOCK context (kmalloc_nolock, 7.x) the barn is trylocked.
 */
void *sli_alloc_from_pcs(sli_sheaves *sh, sli_act *a);
/* alloc_from_pcs_bulk: objects from main and spare and full barn sheaves, at most n; returns how many. */
unsigned sli_alloc_from_pcs_bulk(sli_sheaves *sh, sli_act *a, unsigned n, void **p);
/*
 * free_to_pcs: true if obj went onto a sheaf; false: the caller frees it to
 * its slab.  In a's SLI_CTX_NOLOCK context (kfree_nolock, 7.x) the barn is
 * trylocked and no sheaf is allocated or flushed.
 */
bool sli_free_to_pcs(sli_sheaves *sh, sli_act *a, void *obj);
/*
 * free_to_pcs_bulk: p[0 .. n-1] onto sheaves while full-sheaf room can be
 * found, the rest to slabs (ops->free_bulk).  p[] is clobbered.  Returns how
 * many went to slabs.
 */
unsigned sli_free_to_pcs_bulk(sli_sheaves *sh, sli_act *a, unsigned n, void **p);
/*
 * __kfree_rcu_sheaf: true if obj was batched in the rcu_free sheaf; false:
 * the caller defers it alone.  a->ctx SLI_CTX_NOLOCK is 7.3's
 * SLAB_FREE_NOLOCK (barn trylocked); then a sheaf it fills while irqs_off
 * waits on the CPU's rcu_irq list for the irq_work instead of call_rcu.
 */
bool sli_kfree_rcu_sheaf(sli_sheaves *sh, sli_act *a, void *obj, bool irqs_off);
/*
 * The irq_work's last step (deferred_percpu_work_fn, 7.3): each sheaf on the
 * acting CPU's rcu_irq list, newest first, to call_rcu.  Returns the sheaves.
 */
unsigned sli_sheaves_submit_deferred(sli_sheaves *sh, sli_act *a);
/*
 * A grace period ends for the acting CPU: each sheaf its call_rcu queued
 * runs rcu_free_sheaf (to the barn as a full sheaf, or flushed).  Returns
 * the objects that left the RCU wait.
 */
unsigned sli_sheaves_rcu_gp(sli_sheaves *sh, sli_act *a);
/*
 * pcs_flush_all for the acting CPU: spare flushed and freed, rcu_free handed
 * to call_rcu, main flushed in batches.  SL_EBUSY if the CPU is inside a
 * sheaf section (the kernel never flushes from an interrupt).
 */
int sli_pcs_flush_all(sli_sheaves *sh, sli_act *a);
/*
 * __pcs_flush_all_cpu (slub_cpu_dead, 7.x): the CPU went offline; its main
 * sheaf is flushed (and stays, empty), its spare flushed and freed, its
 * rcu_free sheaf handed to call_rcu to be flushed.  Acting as that CPU with
 * no operation running on it (the kernel runs it on another CPU without the
 * lock: the dead CPU runs nothing).  Returns the objects flushed.
 */
unsigned sli_pcs_cpu_dead(sli_sheaves *sh, sli_act *a);
/* flush_rcu_sheaf (flush_all_rcu_sheaves' per-CPU work): rcu_free to call_rcu.  SL_EBUSY inside a section. */
int sli_pcs_flush_rcu(sli_sheaves *sh, sli_act *a);
/* barn_shrink of every barn: full sheaves flushed and freed, empty ones freed.  Returns the objects flushed. */
unsigned sli_barn_shrink(sli_sheaves *sh, sli_act *a);

/* The prefill API (kmem_cache_prefill_sheaf & co).  NULL / an error when memory runs out. */
sli_sheaf *sli_prefill_sheaf(sli_sheaves *sh, sli_act *a, uint32_t size, int *err);
int sli_refill_sheaf(sli_sheaves *sh, sli_act *a, sli_sheaf **sheafp, uint32_t size);
/* kmem_cache_return_sheaf; SL_EINVAL (nothing done) for a sheaf that is not out prefilled from here. */
int sli_return_sheaf(sli_sheaves *sh, sli_act *a, sli_sheaf *sheaf);
/* True if sheaf is out prefilled from these sheaves (a handle the caller may still use). */
bool sli_sheaf_is_prefilled(sli_sheaves *sh, const sli_sheaf *sheaf);
/* kmem_cache_alloc_from_sheaf: never touches the slabs; NULL once the sheaf is empty. */
void *sli_alloc_from_sheaf(sli_sheaves *sh, sli_act *a, sli_sheaf *sheaf);

/*
 * The seed (seed.c): fills the sheaves of a cache just created.  For each
 * of the n sheaves, place[i] (SLI_SHEAF_MAIN, _SPARE, _RCU_FREE or
 * _BARN_FULL), cpu[i] and the size[i] objects at objs + off[i], bottom
 * first; a main sheaf is the CPU's own, the others are new sheaves; barn
 * sheaves are given head first.  The caller has checked places, CPUs and
 * sizes.  Returns 0, or SL_ENOMEM (no sheaf could be had; nothing changed).
 */
int sli_sheaves_seed(sli_sheaves *sh, sli_act *a, unsigned n, const uint8_t *place, const uint8_t *cpu,
                     const uint32_t *size, const uint32_t *off, void *const *objs);

/* Where a sheaf sits, for validate() and snapshots. */
typedef enum sli_sheaf_place {
    SLI_SHEAF_MAIN = 0,
    SLI_SHEAF_SPARE = 1,
    SLI_SHEAF_RCU_FREE = 2,
    SLI_SHEAF_RCU_PENDING = 3,
    SLI_SHEAF_BARN_FULL = 4,
    SLI_SHEAF_BARN_EMPTY = 5,
    SLI_SHEAF_PREFILLED = 6,
} sli_sheaf_place;
/* Called for every sheaf (cpu is 0xffff for barn and prefilled sheaves); a non-zero return stops the walk. */
typedef int (*sli_sheaf_visit)(void *ctx, const sli_sheaf *sheaf, unsigned place, unsigned cpu);
/* Walks every sheaf with no operation running; returns the first non-zero visit result. */
int sli_sheaves_walk(const sli_sheaves *sh, sli_sheaf_visit visit, void *ctx);
/*
 * The sheaves' own invariants (with no operation running): main never NULL,
 * sizes within capacity, rcu_free not full, barn counts
 * equal to its lists and full/empty as listed, every sheaf in one place, the
 * live sheaf count.  Returns 0 or SL_ECORRUPT with a sentence in msg.
 */
int sli_sheaves_validate(const sli_sheaves *sh, char *msg, size_t len);
#endif /* SL_SLUB_SHEAVES_H */
