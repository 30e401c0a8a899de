/*
 * eras.h - which Linux a SLUB cache follows: a kernel version "X.Y" and the
 * rules in force in it.
 *
 * SLUB changed between the seeds (4.3 and 4.4, 2015) and 7.0 (2026) in ways
 * a user sees in the lab: which structure an allocation comes from, which
 * counters move, how big a slab is.  The model keeps one implementation per
 * era and picks it by version; sl_slub_rules_for() says what a version means.
 *
 * Eras of the allocation and free paths (docs/slub.md, "Kernel eras"):
 *
 *   4.3 .. 6.7   the per-CPU slab with frozen CPU partial slabs: a slab
 *                enters a CPU partial list frozen (get_partial_node's
 *                acquire_slab, or __slab_free freezing a full slab in its
 *                cmpxchg) and leaves it in unfreeze_partials.  4.3's
 *                kmem_cache_free_bulk frees object by object with interrupts
 *                off (seed 004); 4.4 builds detached freelists (seed 000),
 *                marking the entries it took NULL (until 5.19, which swaps
 *                them to the end instead).  Before 5.12 deactivate_slab
 *                gives the CPU freelist back one cmpxchg_double per object.
 *                Before 5.16 the CPU partial list is limited by the free
 *                objects it holds (page->pobjects > s->cpu_partial), from
 *                5.16 by slabs (cpu_partial_slabs).
 *   6.8 .. 6.17  CPU partial slabs are no longer frozen (the model's base).
 *   6.18         per-CPU sheaves for caches created with a sheaf_capacity
 *                (in 6.18 vm_area_struct and maple_node, 32), on top of the
 *                per-CPU slab, which refills and flushes them.
 *   7.0 .. 7.3   sheaves for every cache without debug flags (kmalloc caches
 *                start with a zero-capacity bootstrap sheaf), and no per-CPU
 *                slab: no kmem_cache_cpu, no tid, no CPU partial list;
 *                sheaves refill from node partial slabs under list_lock and
 *                every free that misses them goes to __slab_free.  Within
 *                it: 7.0 (from -rc3, fb1091febd66) refills an empty main in
 *                GFP_ATOMIC / GFP_NOWAIT context too (6.18: only when the
 *                caller may block); 7.1 relocks the CPU's sheaves with a
 *                trylock after a refill (a full sheaf goes to the barn if
 *                that fails); 7.2
 *                ("slab-for-7.2") returns a refill's surplus optimistically,
 *                puts the slabs it did not empty back at the list's tail and
 *                counts oversize sheaves in SHEAF_ALLOC / SHEAF_FREE; 7.3
 *                returns that surplus under list_lock.
 *   newer        a version after SL_SLUB_KVERSION_NEWEST is accepted and gets
 *                the newest version's rules, always with a notice saying so
 *                (sl_slub_kversion_notice): never silently.
 *
 * Geometry breakpoints (calculate_sizes, calculate_order, set_cpu_partial):
 *   < 4.6   no left red zone (red_left_pad came with "mm/slub: support left
 *           redzone")
 *   < 5.7   the free pointer at offset 0 of the object, not in its middle
 *   < 5.16  cpu_partial 30 / 13 / 6 / 2 objects (then 120 / 52 / 24 / 6)
 *   < 5.17  struct track keeps 16 return addresses (152 bytes; then a
 *           stack depot handle, 32)
 *   < 6.8   calculate_order lowers min_objects when no order up to
 *           slub_max_order wastes at most 1/4 (then: waste up to 1/2 at
 *           min_objects)
 *   7.0     sheaf_capacity from the object size (calculate_sheaf_capacity);
 *           sysfs cpu_partial reads 0
 * The CPU count calculate_order uses: nr_cpu_ids (possible CPUs) before
 * 5.11, then num_present_cpus() (nr_cpu_ids when that is 1); callers pass
 * the right one as nr_cpus.
 */
#ifndef SL_SLUB_ERAS_H
#define SL_SLUB_ERAS_H

#include "../platform/kversion.h"
#include "../platform/platform.h"

/* A kernel version, major.minor. */
typedef struct sl_slub_kversion {
    uint8_t major;
    uint8_t minor;
} sl_slub_kversion;

/* The oldest, the default and the newest version whose rules the model follows. */
#define SL_SLUB_KVERSION_MIN ((sl_slub_kversion){4, 3})
#define SL_SLUB_KVERSION_DEFAULT ((sl_slub_kversion){6, 17})
#define SL_SLUB_KVERSION_NEWEST ((sl_slub_kversion){7, 3})

typedef enum sl_slub_era {
    SL_SLUB_ERA_FROZEN_PARTIAL = 0, /* 4.3 .. 6.7 */
    SL_SLUB_ERA_CPU_SLAB = 1,       /* 6.8 .. 6.17 */
    SL_SLUB_ERA_OPT_IN_SHEAVES = 2, /* 6.18 */
    SL_SLUB_ERA_SHEAVES = 3,        /* 7.0 .. 7.3 (and newer, with a notice) */
} sl_slub_era;

/* How the caches of an era get sheaves. */
typedef enum sl_slub_sheaves_mode {
    SL_SLUB_SHEAVES_NONE = 0,   /* before 6.18 */
    SL_SLUB_SHEAVES_OPT_IN = 1, /* 6.18: only caches created with a sheaf_capacity */
    SL_SLUB_SHEAVES_ALL = 2,    /* 7.0: every cache without debug flags */
} sl_slub_sheaves_mode;

typedef struct sl_slub_rules {
    sl_slub_kversion version;      /* as asked */
    sl_slub_kversion follows;      /* whose rules: version, or SL_SLUB_KVERSION_NEWEST for a newer one */
    uint8_t era;                   /* sl_slub_era */
    uint8_t sheaves;               /* sl_slub_sheaves_mode */
    bool cpu_slab;                 /* kmem_cache_cpu exists: freelist + tid, CPU slab, CPU partial list */
    bool frozen_cpu_partial;       /* CPU partial slabs are frozen (before 6.8) */
    bool bulk_free_irq_off;        /* 4.3's kmem_cache_free_bulk: object by object, interrupts off */
    bool cpu_partial_by_objects;   /* the CPU partial list is limited by free objects (before 5.16) */
    bool order_lowers_min_objects; /* calculate_order's min_objects loop (before 6.8) */
    bool deactivate_per_object;    /* deactivate_slab returns the CPU freelist one CAS per object (before 5.12) */
    bool detached_marks_null;      /* build_detached_freelist NULLs the entries it took (4.4 to 5.18) */
    bool freeptr_at_zero;          /* the free pointer at offset 0 (before 5.7) */
    bool red_left_pad;             /* a left red zone (from 4.6) */
    uint8_t track_size;            /* sizeof(struct track) on x86-64 */
    bool sheaf_exemptions;         /* calculate_sheaf_capacity's 0 for the boot caches and kmemleak's (7.0) */
    bool relock_trylock;           /* __pcs_replace_empty_main relocks with local_trylock (7.1) */
    bool barn_per_node;            /* barns in s->per_node[nid] for every online node, get_barn by
                                   * numa_node_id() (7.1); before, in kmem_cache_node by numa_mem_id() */
    bool refill_return_tail;       /* __refill_objects_node: __slab_try_return_freelist, kept slabs to the tail (7.2) */
    bool oversize_counted;         /* oversize prefill sheaves count SHEAF_ALLOC and SHEAF_FREE (7.2) */
    bool try_return_locked;        /* __slab_try_return_freelist under n->list_lock (7.3) */
    bool nolock;                   /* kmalloc_nolock / kfree_nolock exist (6.18) */
    bool refill_nonblocking;       /* __pcs_replace_empty_main refills a sheaf whenever spinning is
                                   * allowed (7.0, fb1091febd66); 6.18 only when blocking is (GFP_KERNEL) */
    bool kfree_rcu_nolock;         /* kfree_rcu_nolock exists; __kfree_rcu_sheaf takes free_flags (7.3) */
} sl_slub_rules;

/*
 * Parses a version as kversion.h reads it (SL_KVERSION_STRICT: "7.3",
 * "6.8.12", "7.3-rc2", "v7.1").  Returns 0, or SL_EINVAL for anything else
 * or a version before 4.3 (the first kmem_cache_free_bulk); *why (may be
 * NULL) then gets a sentence saying which.  A version newer than
 * SL_SLUB_KVERSION_NEWEST is accepted: sl_slub_kversion_notice says what it
 * gets.
 */
int sl_slub_kversion_parse(const char *text, sl_slub_kversion *out, const char **why);
/*
 * For a version newer than the newest modelled, writes the notice every
 * output must carry ("Linux 7.5 is newer than the newest kernel the model
 * follows (7.3): it gets 7.3's rules") into buf and returns true; false
 * (buf untouched) for a version the model follows itself.
 */
bool sl_slub_kversion_notice(sl_slub_kversion v, char *buf, size_t len);
/* Writes "X.Y" into buf (at least 8 bytes); returns buf. */
char *sl_slub_kversion_format(sl_slub_kversion v, char *buf, size_t len);
/* -1, 0, 1 as a is older than, the same as, newer than b. */
int sl_slub_kversion_cmp(sl_slub_kversion a, sl_slub_kversion b);
/* True if the model takes v: SL_SLUB_KVERSION_MIN or later (newer than the newest: with a notice). */
bool sl_slub_kversion_known(sl_slub_kversion v);
/* The rules of a version the model takes (an older one gets the default's). */
void sl_slub_rules_for(sl_slub_kversion v, sl_slub_rules *out);
/* A short name of an era, e.g. "6.18: opt-in sheaves over the per-CPU slab". */
const char *sl_slub_era_name(unsigned era);

#endif /* SL_SLUB_ERAS_H */
