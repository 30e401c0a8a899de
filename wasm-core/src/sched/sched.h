/*
 * sched.h - a deterministic driver for the SLUB model: runs a list of
 * operations one after another on the calling thread, can inject
 * "interrupts" (another operation on the same CPU) at a named preemption
 * point of a chosen operation, and can capture a snapshot at global
 * micro-step k (the k-th preemption point reached, counting those inside
 * handlers).
 *
 * The browser's Step / Micro-step / Back are built on it: the same script
 * run against a freshly created world gives the same states, operation
 * numbers and events every time (the model has no other source of
 * nondeterminism: its randomness is seeded per cache and CPU), so going back
 * is replaying from the start to an earlier step.
 *
 * Objects are named by (slab pfn, object index): in a replay the same pair
 * denotes the same object, which a pointer from an earlier run would not.
 */
#ifndef SL_SCHED_H
#define SL_SCHED_H

#include "../slub/slub.h"

typedef enum sl_sched_kind {
    SL_SCHED_ALLOC = 1,            /* sl_slub_alloc on cpu */
    SL_SCHED_FREE = 2,             /* sl_slub_free of refs[first] */
    SL_SCHED_ALLOC_BULK = 3,       /* sl_slub_alloc_bulk_gfp of count objects in context `first` (sl_slub_gfp) */
    SL_SCHED_FREE_BULK = 4,        /* sl_slub_free_bulk of refs[first .. first+count-1] */
    SL_SCHED_FLUSH = 5,            /* sl_slub_flush_cpu (sheaves included) */
    SL_SCHED_KFREE_RCU = 6,        /* sl_slub_kfree_rcu of refs[first] */
    SL_SCHED_RCU_GP = 7,           /* sl_slub_rcu_grace_period: the grace period ends for what cpu queued */
    SL_SCHED_PREFILL = 8,          /* sl_slub_prefill_sheaf_gfp of count objects into a slot (SL_SCHED_SLOT, _GFP) */
    SL_SCHED_ALLOC_FROM_SHEAF = 9, /* sl_slub_alloc_from_sheaf of slot `first` */
    SL_SCHED_REFILL_SHEAF = 10,    /* sl_slub_refill_sheaf_gfp of a slot to count objects (SL_SCHED_SLOT, _GFP) */
    SL_SCHED_RETURN_SHEAF = 11,    /* sl_slub_return_sheaf of slot `first` (the slot empties) */
    SL_SCHED_SHRINK = 12,          /* sl_slub_shrink (flushes every CPU; not as a handler) */
    SL_SCHED_BOOTSTRAP = 13,       /* sl_slub_bootstrap_sheaves (not as a handler) */
    /* 14-16 are the web adapter's tuning operations (web/slub/script.ts TUNE_OPCODE), never the driver's */
    SL_SCHED_IRQ_WORK = 17,         /* sl_slub_irq_work: the objects kfree_nolock deferred on cpu are freed */
    SL_SCHED_ALLOC_GFP = 18,        /* sl_slub_alloc_gfp in context count (sl_slub_gfp: 1 GFP_ATOMIC, 2 GFP_NOWAIT) */
    SL_SCHED_KMALLOC_NOLOCK = 19,   /* sl_slub_kmalloc_nolock (6.18+) */
    SL_SCHED_KFREE_NOLOCK = 20,     /* sl_slub_kfree_nolock of refs[first] (6.18+) */
    SL_SCHED_CPU_DEAD = 21,         /* sl_slub_cpu_dead: cpu goes offline (not as a handler) */
    SL_SCHED_CPU_ONLINE = 22,       /* sl_slub_cpu_online: cpu comes online, 7.1 its node's barn (not as a handler) */
    SL_SCHED_KFREE_RCU_NOLOCK = 23, /* sl_slub_kfree_rcu_nolock of refs[first] (7.3); interrupts off when count
                                     * is 1 or it runs as an interrupt's handler */
} sl_sched_kind;
#define SL_SCHED_SHEAF_SLOTS 8
/*
 * A prefill's or refill's `first`: the sheaf slot in bits 0-7, its context
 * (sl_slub_gfp; 0, GFP_KERNEL, in scripts written before contexts) in bits
 * 8-15.  A bulk allocation's context is its whole `first`.
 */
#define SL_SCHED_SLOT(op) ((op)->first & 0xffu)
#define SL_SCHED_GFP(op) (((op)->first >> 8) & 0xffu)

/* 8 bytes; the bridge writes arrays of these. */
typedef struct sl_sched_op {
    uint8_t kind; /* sl_sched_kind */
    uint8_t cpu;
    uint16_t count; /* bulk: objects; prefill, refill: the size; alloc in a context: its sl_slub_gfp */
    uint32_t first; /* free, bulk free, kfree_rcu, kfree_nolock: first entry in the run's refs; sheaf ops: the slot
                     * (prefill, refill: and the context, SL_SCHED_SLOT/_GFP); bulk alloc: the context */
} sl_sched_op;

/* An object by place; 8 bytes. */
typedef struct sl_sched_ref {
    uint32_t pfn;
    uint32_t index;
} sl_sched_ref;

/* 16 bytes: run `handler` on the interrupted operation's CPU when operation `at_op` reaches `point`. */
typedef struct sl_sched_irq {
    uint32_t at_op;      /* index into ops */
    uint16_t point;      /* SL_SLUB_PP_* */
    uint16_t nth;        /* at the nth arrival of that op at that point (0 = first) */
    sl_sched_op handler; /* its cpu field is ignored */
} sl_sched_irq;

#define SL_SCHED_NO_STOP UINT64_MAX

typedef struct sl_sched_run {
    /* in */
    sl_slub_cache *cache;
    sl_trace *trace; /* the cache's trace (its preemption hook is borrowed for the run) */
    const sl_sched_op *ops;
    uint32_t nops;
    const sl_sched_ref *refs;
    uint32_t nrefs;
    const sl_sched_irq *irqs;
    uint32_t nirqs;
    uint64_t stop_at_microstep; /* 1-based; SL_SCHED_NO_STOP to run every op */
    void *snap_buf;             /* where the stop snapshot goes (sl_slub_snapshot layout) */
    size_t snap_cap;
    int32_t *results;            /* nops entries, may be NULL: each op's return value */
    sl_slub_sheaf **sheaf_slots; /* SL_SCHED_SHEAF_SLOTS sheaves out with the script (prefill), kept by
                                  * the caller across runs; NULL: the sheaf ops fail with SL_EINVAL */
    /* out */
    uint32_t ops_done;   /* operations completed */
    uint64_t microsteps; /* preemption points reached */
    long snap_len;       /* sl_slub_snapshot's result at the stop, 0 if none was taken */
    uint32_t stop_op;    /* index of the op during which the stop snapshot was taken */
    uint32_t irqs_fired;
    int32_t irq_results[8]; /* results of the first 8 handlers fired */
} sl_sched_run;

/*
 * Runs r->ops in order.  With a stop micro-step, the operation during which
 * it is reached completes and the run ends there.  Returns 0, or SL_EINVAL
 * for a bad op (unknown kind, cpu out of range, refs out of range, bulk count
 * over 1024); a failing operation is not an error of the run: its result is
 * in results[].  Installs its own preemption hook on r->trace for the run.
 */
int sl_sched_execute(sl_sched_run *r);

#endif /* SL_SCHED_H */
