/*
 * slub.h - a model of the Linux kernel's SLUB allocator (mm/slub.c, 6.8 to 6.17).
 *
 * What is modelled (docs/slub.md says how faithfully):
 *   - cache geometry exactly as calculate_alignment / calculate_sizes /
 *     calculate_order / set_min_partial / set_cpu_partial compute it, with
 *     the boot parameters slub_min_order, slub_max_order, slub_min_objects;
 *   - kmem_cache_cpu per simulated CPU: freelist and tid in one double word
 *     changed only by a double-word CAS, the CPU slab, the per-CPU partial
 *     list;
 *   - the lockless fast paths (slab_alloc_node, do_slab_free) in three
 *     variants and PREEMPT_RT's local_lock paths (SL_SLUB_FP_*), the slow
 *     paths (___slab_alloc with its four refill sources, __slab_free for
 *     remote frees, put_cpu_partial, deactivate_slab, discard beyond
 *     min_partial), allocate_slab's order fallback, the node partial list
 *     under its list_lock, kmem_cache_alloc_bulk and kmem_cache_free_bulk
 *     (detached-freelist form, and slab_common.c's generic per-object loop);
 *   - the sysfs tunables min_partial, cpu_partial and shrink;
 *   - debug checks and hardening per cache (off by default).
 *
 * Concurrency.  Every operation names the CPU it acts as.  The thread that
 * acts as CPU k owns CPU k's per-CPU state for its whole life (it never
 * migrates), as a kernel thread pinned to k would, or a web worker in the
 * browser.  Any CPU may free any object (a remote free is lock-free, as in
 * the kernel); the node partial list is guarded by its spin lock.
 * Two threads must never act as the same CPU at once.  Snapshots and
 * validate() read everything and are exact only while no operation runs.
 *
 * Interrupts.  SL_PREEMPT_POINT()s (ids SL_SLUB_PP_*, context
 * sl_slub_pp_ctx) sit inside the fast paths where the kernel could take an
 * interrupt.  A hook may run another operation on the same CPU there (an
 * "interrupt handler").  With cmpxchg/locked the changed tid makes the
 * interrupted operation retry; with plain the same interleaving corrupts the
 * CPU freelist and validate() (and, with tracking, the next allocation)
 * reports SL_EFREELIST; with rt the points sit just before local_lock is
 * taken, and everything read before it is read again under the lock.
 * Benchmark builds (SLABLAB_BENCH) compile the points and all events out.
 */
#ifndef SL_SLUB_H
#define SL_SLUB_H

#include "../page/page.h"
#include "eras.h"

/* ------------------------------------------------------------------ */
/* Geometry                                                            */

/* Cache flags: the kernel's SLAB_* values where it has one. */
enum {
    SL_SLUB_CONSISTENCY_CHECKS =
        0x00000100u,                       /* "F": run the checks (double free, poison, red zones; forces tracking) */
    SL_SLUB_RED_ZONE = 0x00000400u,        /* red zones around each object (checked only with F) */
    SL_SLUB_POISON = 0x00000800u,          /* poison free objects (checked only with F; not RCU or ctor caches) */
    SL_SLUB_KMALLOC = 0x00001000u,         /* a kmalloc cache (orig_size with STORE_USER/RED_ZONE) */
    SL_SLUB_HWCACHE_ALIGN = 0x00002000u,   /* align objects to the cache line */
    SL_SLUB_CACHE_DMA = 0x00004000u,       /* geometry only */
    SL_SLUB_STORE_USER = 0x00010000u,      /* room for two struct track after the object */
    SL_SLUB_RECLAIM_ACCOUNT = 0x00020000u, /* geometry only */
    SL_SLUB_TYPESAFE_BY_RCU = 0x00080000u, /* free pointer after the object */
    SL_SLUB_CTOR = 0x40000000u,            /* the cache has a constructor (free pointer after) */
    SL_SLUB_NO_SHEAVES = 0x00800000u,      /* no sheaves from 7.0 (calculate_sheaf_capacity): the boot caches
                                               * (SLAB_NO_OBJ_EXT, later SLAB_NO_SHEAVES) and kmemleak's
                                               * (SLAB_NOLEAKTRACE, the kernel's bit); geometry unchanged */
    /* Model-only hardening (the kernel's are config options, per cache here). */
    SL_SLUB_FREELIST_HARDENED = 0x01000000u, /* free pointers stored as ptr ^ random ^ swab(&ptr) */
    SL_SLUB_FREELIST_RANDOM = 0x02000000u,   /* new slabs' freelists in a shuffled order */
};
/* Flags that make kmem_cache_debug() true in the kernel (no CPU partial lists then). */
#define SL_SLUB_DEBUG_FLAGS (SL_SLUB_CONSISTENCY_CHECKS | SL_SLUB_RED_ZONE | SL_SLUB_POISON | SL_SLUB_STORE_USER)

#define SL_SLUB_CACHE_LINE 64 /* cache_line_size() on x86-64 */
#define SL_SLUB_MAX_ORDER 3   /* slub_max_order's default, PAGE_ALLOC_COSTLY_ORDER */
#define SL_SLUB_WORD 8        /* sizeof(void *) of the modelled kernel (x86-64) */

typedef struct sl_slub_geometry {
    uint32_t object_size;       /* what the user asked for */
    uint32_t align;             /* calculate_alignment() */
    uint32_t inuse;             /* bytes used by the object and its right red zone */
    uint32_t offset;            /* free pointer offset within the object slot */
    uint32_t red_left_pad;      /* left red zone; user pointer = slot + red_left_pad */
    uint32_t size;              /* slot size (sysfs slab_size) */
    uint32_t order;             /* slab order (sysfs order) */
    uint32_t objects;           /* objects per slab (sysfs objs_per_slab) */
    uint32_t min_partial;       /* sysfs min_partial */
    uint32_t cpu_partial;       /* sysfs cpu_partial (objects) */
    uint32_t cpu_partial_slabs; /* slabs a CPU partial list holds */
    uint32_t flags;             /* flags as given */
    uint32_t fallback_order;    /* s->min: allocate_slab's order when `order` cannot be had, get_order(size) */
    uint32_t fallback_objects;  /* objects in a slab of fallback_order */
} sl_slub_geometry;

/*
 * The boot parameters that shape geometry (mm/slub.c setup_slub_min_order,
 * setup_slub_max_order, setup_slub_min_objects).  All zero: none given.
 * When both orders are given they apply as `slub_min_order=` then
 * `slub_max_order=`: a min_order above the max order raises it, then a
 * max_order below min_order lowers min_order.
 */
typedef struct sl_slub_boot {
    uint8_t min_order; /* slub_min_order= (default 0) */
    uint8_t max_order; /* slub_max_order=, when max_order_set (default PAGE_ALLOC_COSTLY_ORDER, 3) */
    uint8_t max_order_set;
    uint8_t pad_;
    uint32_t min_objects; /* slub_min_objects= (0: 4 * (fls(CPUs) + 1)) */
} sl_slub_boot;

/*
 * The kernel a cache lives in: its version, build options and boot
 * parameters.  All zero: the model's defaults (6.17).
 */
typedef struct sl_slub_kernel {
    sl_slub_boot boot;
    uint16_t nr_cpus;   /* CONFIG_NR_CPUS, at least the cache's CPUs, at most 8192 (0: the cache's
                          * CPU count); TID_STEP = roundup_pow_of_two(nr_cpus) */
    uint8_t no_preempt; /* 1: a kernel without CONFIG_PREEMPTION, where TID_STEP is 1 */
    uint8_t pad_;
    sl_slub_kversion version; /* {0, 0}: SL_SLUB_KVERSION_DEFAULT; the rules of eras.h */
    uint16_t pad2_;
} sl_slub_kernel;

/*
 * Computes a cache's geometry as the kernel `k` (NULL: the default version,
 * 6.17, with no boot parameters) does for `nr_cpus` CPUs (present CPUs from
 * 5.11, possible CPUs, nr_cpu_ids, before: eras.h) from object_size, align
 * and flags as kmem_cache_create gets them (for sysfs input pass its
 * `align`, which calculate_alignment leaves unchanged), under k's version
 * rules (eras.h: calculate_order, the free pointer's place, the left red
 * zone, struct track, cpu_partial) and boot parameters.  Pointer-size
 * quantities are those of x86-64 (8-byte words), in every build, so the
 * figures match a 64-bit kernel.  Returns 0, or SL_EINVAL when object_size
 * is 0 or over 8 MiB, align is not a power of two, nr_cpus is 0, a boot
 * order is over 10, the version is unknown, or no order up to 10 fits one
 * object.
 */
int sl_slub_calculate_geometry(uint32_t object_size, uint32_t align, uint32_t flags, unsigned nr_cpus,
                               const sl_slub_kernel *k, sl_slub_geometry *out);
/*
 * calculate_sheaf_capacity (7.0): the per-CPU sheaf size a cache of slot
 * `size` gets, or `requested` (kmem_cache_args.sheaf_capacity) if larger; 0
 * for a cache with debug flags.  In 6.18 a cache has `requested` only.
 */
uint32_t sl_slub_sheaf_capacity(sl_slub_kversion v, uint32_t size, uint32_t flags, uint32_t requested);

/* The figures a kernel shows for a cache, in the order of sl_slub_kcache.kernel[]. */
enum {
    SL_SLUB_KFIG_SLAB_SIZE,
    SL_SLUB_KFIG_ORDER,
    SL_SLUB_KFIG_OBJS_PER_SLAB,
    SL_SLUB_KFIG_MIN_PARTIAL,
    SL_SLUB_KFIG_CPU_PARTIAL,
    SL_SLUB_KFIG_SHEAF_CAPACITY,
    SL_SLUB_NR_KFIGS
};

/* A cache as a kernel describes it (sysfs or slabinfo), for checking the geometry. */
typedef struct sl_slub_kcache {
    char name[64];
    uint32_t object_size, align, flags; /* model inputs */
    uint32_t sheaf_request;             /* model input: the sheaf_capacity its creator asks for (known by name) */
    uint32_t kernel[SL_SLUB_NR_KFIGS];  /* the kernel's slab_size, order, objs_per_slab, min_partial,
                                        * cpu_partial, sheaf_capacity */
    bool has[SL_SLUB_NR_KFIGS];         /* which of them the source gave */
} sl_slub_kcache;

/*
 * Reads every cache folder of a /sys/kernel/slab-like directory (symlinked
 * aliases and plain files skipped), sorted by name, into a malloc'd array.
 * Returns the count, or SL_EINVAL (cannot open) or SL_ENOMEM.
 */
int sl_slub_sysfs_read(const char *dir, sl_slub_kcache **out);
/*
 * A cache named `name` with nothing known yet (align 8; a "kmalloc-" name
 * sets SL_SLUB_KMALLOC; sheaf_request from sl_slub_sheaf_request).
 */
void sl_slub_kcache_init(sl_slub_kcache *k, const char *name);
/*
 * Takes one sysfs attribute file's content into k (object_size, align, the
 * flag files, the kernel figures SL_SLUB_KFIG_*).  Returns false for an attribute the
 * model does not use or a value that does not parse.  The directory reader
 * and the .slabcap archive reader (src/replay) share it.
 */
bool sl_slub_kcache_attr(sl_slub_kcache *k, const char *attr, const char *value);
/* The same for a /proc/slabinfo file (order and objs_per_slab known; align taken as 8). */
int sl_slub_slabinfo_read(const char *file, sl_slub_kcache **out);
/* The sheaf_capacity the kernel's code asks for when it creates the cache `name` (0: none). */
uint32_t sl_slub_sheaf_request(const char *name);
/*
 * The creation flags the kernel's code gives the cache `name` that sysfs and
 * slabinfo do not show and the model needs: SL_SLUB_NO_SHEAVES for
 * "kmem_cache" and "kmem_cache_node" (create_boot_cache's SLAB_NO_OBJ_EXT /
 * SLAB_NO_SHEAVES) and "kmemleak_object" / "kmemleak_scan_area"
 * (mm/kmemleak.c's SLAB_NOLEAKTRACE); 0 for any other name.
 */
uint32_t sl_slub_known_flags(const char *name);
/*
 * Computes k's geometry for nr_cpus in kernel `kern` (may be NULL) into *g
 * and model[] (the figures in the order of kernel[]; sysfs cpu_partial reads
 * 0 in 7.0, and sheaf_capacity is 0 before 6.18, where a kernel's
 * sheaf_capacity is not compared).  Returns 1 if every figure the kernel gave
 * matches, 0 if one differs, 2 if the kernel gave none, or a negative error.
 */
int sl_slub_kcache_compare(const sl_slub_kcache *k, unsigned nr_cpus, const sl_slub_kernel *kern, sl_slub_geometry *g,
                           uint32_t model[SL_SLUB_NR_KFIGS]);

/* ------------------------------------------------------------------ */
/* Caches                                                              */

#define SL_SLUB_MAX_CPUS 8
#define SL_SLUB_MAX_NODES 4 /* NUMA nodes a cache may span */

typedef enum sl_slub_fastpath {
    SL_SLUB_FP_CMPXCHG = 0, /* this_cpu_cmpxchg_double: sl_dw_cas_local (unlocked CMPXCHG16B) */
    SL_SLUB_FP_LOCKED = 1,  /* a full atomic CAS: sl_dw_cas (LOCK CMPXCHG16B) */
    SL_SLUB_FP_PLAIN = 2,   /* seed 001's RFC: plain writes, unsafe against interrupts */
    SL_SLUB_FP_RT = 3,      /* PREEMPT_RT: every alloc is ___slab_alloc and every free into the CPU
                             * slab writes freelist and tid, both under the CPU's local_lock */
} sl_slub_fastpath;
#define SL_SLUB_NR_FASTPATHS 4

typedef enum sl_slub_bulk_free {
    SL_SLUB_BULK_DETACHED = 0, /* build_detached_freelist: one do_slab_free (one CAS) per group */
    SL_SLUB_BULK_GENERIC = 1,  /* slab_common.c's generic loop of 2015 (4.3 to 6.7), the seeds'
                                * "fallback": one kmem_cache_free per object */
} sl_slub_bulk_free;

typedef struct sl_slub_config {
    uint32_t object_size;
    uint32_t align;    /* 0 for the default (word) alignment */
    uint32_t flags;    /* SL_SLUB_* cache flags */
    uint8_t fastpath;  /* sl_slub_fastpath */
    uint8_t bulk_free; /* sl_slub_bulk_free */
    uint8_t track;     /* 1: keep per-object state and last alloc/free (snapshots, validate) */
    uint8_t pad_;
    uint32_t seed; /* seeds s->random and the freelist shuffles (deterministic) */
    uint16_t id;   /* cache id in events */
    sl_slub_kernel kernel;
    uint16_t sheaf_capacity;      /* kmem_cache_args.sheaf_capacity: 6.18's opt-in to sheaves; in 7.0 a
                              * floor over calculate_sheaf_capacity; ignored before 6.18 */
    uint16_t max_sheaves;         /* model: sheaves that may exist at once (0: no limit); past it a sheaf
                              * allocation fails, as the kernel's GFP_NOWAIT kmalloc may */
    uint8_t early_boot;           /* 7.0: created before bootstrap_cache_sheaves, as the kmalloc caches
                              * are: the zero-capacity bootstrap sheaf until sl_slub_bootstrap_sheaves */
    uint8_t sheaf_capacity_exact; /* model: in 7.0 too the sheaves get sheaf_capacity as given, not
                                   * calculate_sheaf_capacity's (small sheaves, to watch them fill) */
    /*
     * NUMA topology (docs/slub.md, "NUMA nodes"): nr_nodes nodes (0 or 1: one
     * node, the default), cpu_node[c] the node of CPU c (cpu_to_node),
     * memoryless a mask of nodes that have CPUs but no memory (no
     * kmem_cache_node; their CPUs allocate from the nearest node with
     * memory, numa_mem_id), offline_cpus a mask of CPUs that start offline
     * (sl_slub_cpu_online brings one up).  Distances: 10 to the node itself,
     * 10 more per step of node number (nodes in a line).
     */
    uint8_t nr_nodes;
    uint8_t memoryless;
    uint8_t offline_cpus;
    uint8_t cpu_node[SL_SLUB_MAX_CPUS];
} sl_slub_config;

typedef struct sl_slub_cache sl_slub_cache;

/*
 * Creates a cache for `ncpus` (1..SL_SLUB_MAX_CPUS) CPUs taking slabs from
 * `zone`, reporting to `trace` (may be NULL; then no preemption points run
 * either).  Geometry as sl_slub_calculate_geometry for ncpus and
 * cfg->kernel.  The version's era (eras.h) picks the paths: 6.18 gives
 * sheaves to a cache created with a sheaf_capacity and no debug flags, 7.0
 * to every cache (a debug cache's stay the zero-capacity bootstrap sheaf),
 * and a 7.0 cache has no per-CPU slab (its fast-path variant is ignored).
 * Returns 0, SL_EINVAL for a bad config (an unknown version, a fast-path
 * variant other than cmpxchg for 7.0) or SL_ENOMEM.
 */
int sl_slub_cache_create(sl_page_zone *zone, sl_trace *trace, unsigned ncpus, const sl_slub_config *cfg,
                         sl_slub_cache **out);
/*
 * Flushes every CPU's slabs and discards every empty slab, then frees the
 * cache.  Call with no operation running.  Returns 0, or SL_EBUSY if objects
 * were still allocated (their slabs go back to the zone all the same).
 */
int sl_slub_cache_destroy(sl_slub_cache *s);

/* The cache's geometry; min_partial, cpu_partial and cpu_partial_slabs as last tuned. */
const sl_slub_geometry *sl_slub_cache_geometry(const sl_slub_cache *s);
/* The rules of the cache's kernel version (eras.h). */
const sl_slub_rules *sl_slub_cache_rules(const sl_slub_cache *s);
/* s->sheaf_capacity: 0 for a cache without sheaves (or with the bootstrap sheaf only). */
uint32_t sl_slub_cache_sheaf_capacity(const sl_slub_cache *s);
unsigned sl_slub_cache_ncpus(const sl_slub_cache *s);
/* TID_STEP: tids of CPU k are k, k + TID_STEP, ... */
unsigned long sl_slub_cache_tid_step(const sl_slub_cache *s);
/* Changes the fast-path variant (not for a 7.0 cache) or bulk-free form; call with no operation running. */
void sl_slub_set_fastpath(sl_slub_cache *s, sl_slub_fastpath fp);
void sl_slub_set_bulk_free(sl_slub_cache *s, sl_slub_bulk_free form);

/*
 * The sysfs tunables (/sys/kernel/slab/<cache>/...), each called with no
 * operation running (the writes that flush act as every CPU in turn, as
 * flush_all's work items do).  Each returns 0 or SL_EINVAL.
 *
 * min_partial_store: how many slabs the node partial list keeps before
 * empty ones are discarded.
 */
int sl_slub_set_min_partial(sl_slub_cache *s, uint32_t min_partial);
/*
 * cpu_partial_store: slub_set_cpu_partial (cpu_partial objects, hence
 * cpu_partial_slabs = DIV_ROUND_UP(2 * objects, objs_per_slab)) then
 * flush_all.  Non-zero is refused for a debug cache and in 7.0 (no CPU
 * partial lists).
 */
int sl_slub_set_cpu_partial(sl_slub_cache *s, uint32_t objects);
/*
 * shrink_store (__kmem_cache_shrink): flush_all (sheaves too), then
 * __kmem_cache_do_shrink: the barn's sheaves flushed and freed (6.18+),
 * every empty node partial slab is discarded (min_partial does not apply)
 * and the slabs with 1..32 free objects move to the head of the list, the
 * fullest first; the rest follow in their order.  *remaining (may be NULL)
 * gets 1 if the cache still has slabs (the kernel's return value).
 */
int sl_slub_shrink(sl_slub_cache *s, int *remaining);

/* ------------------------------------------------------------------ */
/* Operations: each acts as CPU `cpu` and is called by that CPU's thread */

/*
 * kmem_cache_alloc.  Returns 0 with *obj set, SL_ENOMEM when the zone has no
 * page for a new slab (at the cache's order nor at its fallback order),
 * SL_EINVAL for a bad cpu, or SL_EFREELIST when the CPU freelist handed out
 * an object that is already allocated (only possible after a `plain` fast
 * path was interrupted).  With CONSISTENCY_CHECKS an object found
 * overwritten while free (poison, red zone) is reported (ERROR event,
 * ERRORS counter), its whole slab is taken out of use as the kernel does
 * (inuse = objects, no freelist: its free objects leak) and the allocation
 * goes on with the next slab.
 */
int sl_slub_alloc(sl_slub_cache *s, unsigned cpu, void **obj);
/*
 * kmem_cache_free.  A free into a slab other than the CPU's current slab is
 * a remote free (__slab_free).  Returns 0, SL_EFOREIGN (not in a slab of this
 * cache; also a pointer into a slab since discarded), SL_EMISALIGNED (not
 * at an object start), SL_EDOUBLEFREE (with CONSISTENCY_CHECKS; with
 * FREELIST_HARDENED when the object is the head of the freelist it would be
 * linked to, set_freepointer's BUG_ON(object == fp), on every path; or when
 * the slab's in-use count would go below zero), SL_EREDZONE (with
 * CONSISTENCY_CHECKS, red zone overwritten: the object is quarantined, not
 * freed), SL_ECORRUPT (its slab was taken out of use by a failed
 * consistency check), SL_EINVAL.  After an error nothing changed except the
 * quarantine.  Without those checks a double free is otherwise accepted, as
 * in the kernel, and validate() reports the corruption.
 *
 * Minimal use (one CPU, no tracing):
 *     sl_page_zone z; sl_page_zone_init(&z, 64 << 20, NULL);
 *     sl_slub_config cfg = {.object_size = 256, .flags = SL_SLUB_HWCACHE_ALIGN};
 *     sl_slub_cache *s; sl_slub_cache_create(&z, NULL, 1, &cfg, &s);
 *     void *o; sl_slub_alloc(s, 0, &o); sl_slub_free(s, 0, o);
 *     sl_slub_cache_destroy(s); sl_page_zone_destroy(&z);
 */
int sl_slub_free(sl_slub_cache *s, unsigned cpu, void *obj);
/*
 * kmem_cache_alloc_bulk: fills p[0..n-1].  Returns n, or 0 when it could not
 * (then nothing stays allocated, as in the kernel), or SL_EINVAL.
 */
int sl_slub_alloc_bulk(sl_slub_cache *s, unsigned cpu, size_t n, void **p);
/*
 * kmem_cache_free_bulk in the cache's form, as its kernel version has it:
 * 4.3's object-by-object loop with interrupts off, detached freelists from
 * 4.4, free_to_pcs_bulk for a cache with sheaves (6.18+).  p[] is reordered
 * (5.19+ detached freelists swap matched objects to the tail; 4.4 to 5.18
 * set them NULL).  Returns the number
 * of double-word CASes the call executed (>= 0), or the first error found
 * for an object (that object is skipped, the others are freed; with
 * FREELIST_HARDENED an object listed twice in a row is such an error).
 * *cas_out (may be NULL) receives the CAS count in either case.
 */
int sl_slub_free_bulk(sl_slub_cache *s, unsigned cpu, size_t n, void **p, unsigned *cas_out);
/*
 * flush_cpu_slab for `cpu`: its sheaves, if any, are flushed (pcs_flush_all:
 * the spare and main to slabs, rcu_free handed to RCU), its CPU slab, if
 * any, is deactivated (flush_slab) and its partial list moved to the node
 * (put_partials).  Called by the thread acting as cpu (or with no operation
 * running).  Returns 0, SL_EINVAL, or SL_EBUSY (nothing done) when called
 * from inside the CPU's sheaf section (an interrupt hook).
 */
int sl_slub_flush_cpu(sl_slub_cache *s, unsigned cpu);

/*
 * The allocation's context, as its gfp flags tell the kernel.  GFP_KERNEL
 * may block (gfpflags_allow_blocking); GFP_ATOMIC and GFP_NOWAIT may not,
 * but may spin (gfpflags_allow_spinning: both keep __GFP_KSWAPD_RECLAIM).
 * What differs by era (docs/slub.md, "The allocation's context"): in 6.18
 * __pcs_replace_empty_main refills an empty main sheaf only when blocking
 * is allowed, so a non-blocking allocation that finds no full sheaf in
 * spare or barn takes the CPU slab's path; from 7.0 (-rc3's fb1091febd66)
 * it refills whenever spinning is allowed.  The model's page allocator neither
 * reclaims nor keeps reserves, so a new slab is had or not alike in every
 * context.
 */
typedef enum sl_slub_gfp {
    SL_SLUB_GFP_KERNEL = 0,
    SL_SLUB_GFP_ATOMIC = 1,
    SL_SLUB_GFP_NOWAIT = 2,
} sl_slub_gfp;
/* kmem_cache_alloc(s, gfp): as sl_slub_alloc, in context gfp.  SL_EINVAL also for an unknown gfp. */
int sl_slub_alloc_gfp(sl_slub_cache *s, unsigned cpu, sl_slub_gfp gfp, void **obj);
/*
 * kmem_cache_alloc_bulk(s, gfp, n, p): as sl_slub_alloc_bulk (which is
 * GFP_KERNEL), in context gfp; SL_EINVAL also for an unknown gfp.  No era
 * takes another path for GFP_ATOMIC or GFP_NOWAIT (docs/slub.md, the eras
 * table's "bulk, prefill and refill in a context"): 6.18's
 * alloc_from_pcs_bulk takes no gfp, 7.0 to
 * 7.2 trylock the barn only for flags that may not spin (which these may),
 * 7.3 never; alloc_from_pcs_bulk never refills a sheaf in any context;
 * the rest comes from slabs, where the context decides only whether the
 * page allocator may reclaim, which the model's cannot.
 */
int sl_slub_alloc_bulk_gfp(sl_slub_cache *s, unsigned cpu, sl_slub_gfp gfp, size_t n, void **p);
/*
 * kmalloc_nolock (6.18+) on this cache, as the kmalloc bucket its size
 * picks: no lock is waited for.  6.18: the CPU-slab paths without the
 * sheaves, list_lock trylocked; SL_EBUSY when the CPU slab's local_lock is
 * held (PREEMPT_RT; the kernel then tries the next kmalloc bucket once).
 * 7.x: alloc_from_pcs with the barn trylocked and no refill, then
 * ___slab_alloc with list_lock trylocked (a new slab whose add_partial
 * finds it taken is given back).  Returns 0, SL_ENOMEM (nothing could be
 * had without waiting, or no page; the 7.x kernel would try the next
 * bucket once), SL_EBUSY, or SL_EINVAL (before 6.18, bad cpu).
 */
int sl_slub_kmalloc_nolock(sl_slub_cache *s, unsigned cpu, void **obj);
/*
 * kfree_nolock (6.18+): an object freed where no lock may be waited for.
 * 6.18 do_slab_free(cnt = 0): into this CPU's slab by the fast path,
 * anything else deferred (defer_free); 7.x free_to_pcs with the barn
 * trylocked and no sheaf allocated or flushed, else deferred.  Deferred
 * objects wait on the CPU's list until sl_slub_irq_work.  Returns 0, a
 * free's errors (the checks run now), or SL_EINVAL (before 6.18).
 */
int sl_slub_kfree_nolock(sl_slub_cache *s, unsigned cpu, void *obj);
/*
 * The CPU's irq_work (free_deferred_objects): every object kfree_nolock
 * deferred on cpu is freed with __slab_free; 7.3 (deferred_percpu_work_fn)
 * then hands what kfree_rcu_nolock deferred to kfree_rcu's path and its
 * deferred full rcu sheaves to call_rcu.  The kernel runs it as soon
 * as the CPU takes interrupts again (a kthread on PREEMPT_RT); the model
 * makes it an explicit step, as it does the RCU grace period (cache
 * destroy runs it first, as kmem_cache_destroy's defer_free_barrier).
 * Acts as cpu.  Returns the objects freed or handed to kfree_rcu, or SL_EINVAL.
 */
int sl_slub_irq_work(sl_slub_cache *s, unsigned cpu);

/* ------------------------------------------------------------------ */
/* RCU, sheaves and their prefill API (6.18+)                          */

/*
 * kfree_rcu(obj): the object is freed after an RCU grace period.  With
 * sheaves it joins the CPU's rcu_free sheaf (__kfree_rcu_sheaf), which goes
 * to call_rcu when full; otherwise, or when that fails, it waits alone
 * (kvfree_call_rcu).  The model's grace period is an explicit step,
 * sl_slub_rcu_grace_period.  Returns 0 or a free's errors (the object is
 * checked now, as its free would check it).
 */
int sl_slub_kfree_rcu(sl_slub_cache *s, unsigned cpu, void *obj);
/*
 * kfree_rcu_nolock (7.3: kfree_call_rcu_nolock), kfree_rcu where no lock
 * may be waited for: the rcu_free sheaf with the CPU's sheaves and the barn
 * trylocked (__kfree_rcu_sheaf with SLAB_FREE_NOLOCK; a missing rcu sheaf
 * may still be allocated); a sheaf it fills goes to call_rcu, or, when
 * irqs_off (the caller may have interrupted call_rcu), waits for the CPU's
 * irq_work.  An object no sheaf takes is deferred (defer_kfree_rcu) to the
 * irq_work, which hands it to kfree_rcu's path.  Returns 0, a free's errors
 * (checked now), or SL_EINVAL (before 7.3, bad cpu).
 */
int sl_slub_kfree_rcu_nolock(sl_slub_cache *s, unsigned cpu, void *obj, bool irqs_off);
/*
 * A grace period ends for what `cpu` queued: full rcu sheaves go to the barn
 * (or are flushed when it is full), flushed ones and single objects are
 * freed.  Acts as cpu.  Returns the objects that left the wait, or SL_EINVAL.
 */
int sl_slub_rcu_grace_period(sl_slub_cache *s, unsigned cpu);
/*
 * kvfree_rcu_barrier: flush_all_rcu_sheaves (7.3: every CPU's irq_work
 * first, deferred_work_barrier; every CPU's rcu_free sheaf handed to
 * call_rcu, to be flushed, not barned) and then rcu_barrier (a grace period
 * for every CPU).  With no operation running.  Returns the
 * objects freed, SL_EINVAL, or SL_EBUSY (nothing waited) from inside a
 * CPU's sheaf section.
 */
int sl_slub_rcu_barrier(sl_slub_cache *s);
/*
 * slub_cpu_dead: `cpu` went offline (sl_slub_cpu_is_online turns false).
 * With sheaves (6.18+) __pcs_flush_all_cpu flushes its main sheaf, flushes
 * and frees its spare, hands its rcu_free sheaf to call_rcu; before 7.0
 * __flush_cpu_slab also deactivates its CPU slab and moves its CPU partial
 * list to the node lists.  With no operation running on cpu.  Returns the
 * objects the sheaves flushed (0 without sheaves), SL_EINVAL, or SL_EBUSY.
 * An operation like the others: OP_BEGIN/OP_END with code SL_SCHED_CPU_DEAD,
 * the flushes' preemption points inside.
 */
int sl_slub_cpu_dead(sl_slub_cache *s, unsigned cpu);
/*
 * CPU hotplug, the other way (cpuhp's slub_cpu_setup at CPUHP_SLUB_PREPARE):
 * `cpu` comes online.  7.1+: if its node has no barn yet (not in
 * slab_barn_nodes: a memoryless node whose CPUs were all offline), every
 * cache with sheaves gets one for it; before 7.1 barns live in the
 * kmem_cache_node of nodes with memory and nothing is created.  With no
 * operation running.  Returns 1 if a barn was created, 0 if not, or
 * SL_EINVAL.  OP_BEGIN/OP_END with code SL_SCHED_CPU_ONLINE.
 * (sl_slub_cpu_dead takes a CPU offline; neither stops an offline CPU from
 * acting in the model.)
 */
int sl_slub_cpu_online(sl_slub_cache *s, unsigned cpu);
/* True if `cpu` is online (sl_slub_cpu_dead / sl_slub_cpu_online; the config's offline_cpus at creation). */
bool sl_slub_cpu_is_online(const sl_slub_cache *s, unsigned cpu);

/* The cache's NUMA topology as created (sl_slub_config), and the nodes derived from it. */
typedef struct sl_slub_topology {
    unsigned nr_nodes;
    uint8_t mem_nodes;                       /* N_MEMORY: nodes with a kmem_cache_node */
    uint8_t barn_nodes;                      /* nodes with a barn now (0 without sheaves) */
    uint8_t online_cpus;                     /* CPUs online now */
    uint8_t cpu_node[SL_SLUB_MAX_CPUS];      /* numa_node_id() of each CPU */
    uint8_t cpu_mem_node[SL_SLUB_MAX_CPUS];  /* numa_mem_id(): the nearest node with memory */
    uint8_t cpu_barn_node[SL_SLUB_MAX_CPUS]; /* get_barn's node: numa_mem_id() before 7.1, numa_node_id() from 7.1 */
    unsigned remote_node_defrag_ratio;       /* s->remote_node_defrag_ratio, 0 .. 1000 (sysfs shows a tenth) */
} sl_slub_topology;
void sl_slub_topology_get(const sl_slub_cache *s, sl_slub_topology *out);
/*
 * sysfs remote_node_defrag_ratio: `percent` 0 .. 100 (the kernel stores ten
 * times that).  Returns 0 or SL_EINVAL.
 */
int sl_slub_set_remote_node_defrag_ratio(sl_slub_cache *s, unsigned percent);
/*
 * show_slab_objects's text for a count per node (sysfs partial, slabs,
 * objects...): the total, then " N<nid>=<count>" for each node with a
 * non-zero count when the cache has more than one node.  count[] has
 * nr_nodes entries.  Writes into buf; returns buf.
 */
char *sl_slub_format_per_node(const sl_slub_cache *s, const uint32_t *count, char *buf, size_t len);

/*
 * bootstrap_cache_sheaves (7.0): gives a cache created with early_boot its
 * real sheaves.  With no operation running.  0, SL_EINVAL (not such a cache,
 * or done already) or SL_ENOMEM.
 */
int sl_slub_bootstrap_sheaves(sl_slub_cache *s);

/* struct slab_sheaf, as the prefill API hands it out. */
typedef struct sl_slub_sheaf sl_slub_sheaf;
/*
 * kmem_cache_prefill_sheaf: a sheaf holding at least `size` objects, for a
 * caller that must not fail to allocate later; above the sheaf capacity an
 * "oversize" sheaf of exactly `size` (a 7.x cache whose sheaves are off,
 * capacity 0, gets one for every size).  Returns 0 with *out set, SL_EINVAL
 * (no sheaves: before 6.18, or a 6.18 cache without them; size 0), SL_EBUSY
 * (called from inside the CPU's sheaf section) or SL_ENOMEM.
 */
int sl_slub_prefill_sheaf(sl_slub_cache *s, unsigned cpu, uint32_t size, sl_slub_sheaf **out);
/* kmem_cache_refill_sheaf: at least `size` objects in *sheaf (it may be replaced by a larger one). */
int sl_slub_refill_sheaf(sl_slub_cache *s, unsigned cpu, sl_slub_sheaf **sheaf, uint32_t size);
/*
 * kmem_cache_prefill_sheaf(s, gfp, size) and kmem_cache_refill_sheaf(s,
 * gfp, ...) in context gfp (the functions above are GFP_KERNEL); SL_EINVAL
 * also for an unknown gfp.  In 6.18 to 7.3 the gfp of both goes only to the
 * allocations beneath them (the sheaf's kzalloc / alloc_empty_sheaf,
 * refill_sheaf's and __kmem_cache_alloc_bulk's new slabs): no branch on it,
 * so the model, whose page allocator neither reclaims nor keeps reserves,
 * takes the same path in every context.
 */
int sl_slub_prefill_sheaf_gfp(sl_slub_cache *s, unsigned cpu, sl_slub_gfp gfp, uint32_t size, sl_slub_sheaf **out);
int sl_slub_refill_sheaf_gfp(sl_slub_cache *s, unsigned cpu, sl_slub_gfp gfp, sl_slub_sheaf **sheaf, uint32_t size);
/*
 * kmem_cache_alloc_from_sheaf: an object from the sheaf, never from slabs.
 * SL_ENOMEM once it is empty, SL_EINVAL for a sheaf not out from this cache.
 */
int sl_slub_alloc_from_sheaf(sl_slub_cache *s, unsigned cpu, sl_slub_sheaf *sheaf, void **obj);
/* kmem_cache_return_sheaf: back to the CPU (spare), the barn, or flushed.  SL_EINVAL for a stranger. */
int sl_slub_return_sheaf(sl_slub_cache *s, unsigned cpu, sl_slub_sheaf *sheaf);
/* kmem_cache_sheaf_size: the objects the sheaf holds. */
uint32_t sl_slub_sheaf_size(const sl_slub_sheaf *sheaf);

/* The sheaves' figures (exact with no operation running). */
typedef struct sl_slub_sheaves_info {
    uint32_t capacity;    /* s->sheaf_capacity (0: none, or the bootstrap sheaf) */
    uint32_t barn_full;   /* full sheaves in the barns (every node's) */
    uint32_t barn_empty;  /* empty sheaves in the barns */
    uint32_t sheaves;     /* sheaves allocated */
    uint32_t objects;     /* objects held by every sheaf (CPU, barn, RCU, prefilled) */
    uint32_t rcu_waiting; /* objects waiting for a grace period (rcu sheaves and single objects) */
} sl_slub_sheaves_info;
void sl_slub_sheaves_info_get(sl_slub_cache *s, sl_slub_sheaves_info *out);
/* Node nid's barn (exact with no operation running): whether it exists, and its sheaves. */
typedef struct sl_slub_barn_info {
    uint32_t present; /* 1: the node has a barn (sl_slub_topology's barn_nodes) */
    uint32_t nr_full;
    uint32_t nr_empty;
} sl_slub_barn_info;
/* False for a bad node; a cache without sheaves has no barn. */
bool sl_slub_barn_info_get(sl_slub_cache *s, unsigned nid, sl_slub_barn_info *out);
/*
 * The pfns of node nid's partial slabs, head first, into pfns[0 .. cap-1]
 * (with no operation running).  Returns how many the list holds (0 for a
 * bad node or a node without memory).
 */
uint32_t sl_slub_node_partial_pfns(const sl_slub_cache *s, unsigned nid, uint32_t *pfns, uint32_t cap);

/* ------------------------------------------------------------------ */
/* Preemption points                                                   */

enum {
    /* slab_alloc_node: tid, freelist and next object read; the CAS comes next.
     * rt: tid and freelist read; local_lock in ___slab_alloc comes next. */
    SL_SLUB_PP_ALLOC_BEFORE_CAS = 1,
    /* do_slab_free: tid and freelist read, tail's free pointer set; the CAS comes next.
     * rt: tid read, slab == c->slab seen; local_lock comes next (then the slab is checked again). */
    SL_SLUB_PP_FREE_BEFORE_CAS = 2,
    /* __slab_free: about to read the slab's freelist+counters (no lock held). */
    SL_SLUB_PP_SLAB_FREE = 3,
    /* kmem_cache_free_bulk: a detached freelist is built; its free comes next. */
    SL_SLUB_PP_BULK_GROUP = 4,
    /* alloc_from_pcs: the sheaves' local trylock is held, main's top object is next (freelist). */
    SL_SLUB_PP_SHEAF_ALLOC = 5,
    /* free_to_pcs: the lock is held, the object (freelist) goes onto main next. */
    SL_SLUB_PP_SHEAF_FREE = 6,
    /* __pcs_replace_empty_main: the lock is dropped, a sheaf of cnt objects is refilled from slabs next. */
    SL_SLUB_PP_SHEAF_REFILL = 7,
};

/* What a preemption point passes as `ctx`.  Pointers are objects (user addresses). */
typedef struct sl_slub_pp_ctx {
    const sl_slub_cache *cache;
    uint32_t op; /* operation number */
    uint32_t cpu;
    uintptr_t tid;  /* the tid read (points 1, 2) */
    void *freelist; /* the CPU freelist head read (1, 2); slab freelist (3); group head (4);
                         * the object (5, 6) */
    void *next;     /* 1: the next object the CAS installs (NULL with rt); 2: the new head (the object freed) */
    void *tail;     /* 2, 3, 4: the last object of the chain being freed */
    uint32_t cnt;   /* 2, 3, 4: objects in the chain; 5: main's size; 6: main's size; 7: the sheaf's */
} sl_slub_pp_ctx;

/* ------------------------------------------------------------------ */
/* Counters                                                            */

/*
 * The kernel's enum stat_item (CONFIG_SLUB_STATS) of 6.8 to 6.17, in its
 * order, then the 17 that 6.18 added for sheaves (its sysfs names), then the
 * model's own counters.  ALLOC_NODE_MISMATCH stays 0 (one node).  Which of
 * them a version has, in which order and under which names, is
 * sl_slub_kstats'.  The model counts each event once, by what happened: an
 * allocation from a sheaf is ALLOC_PCS, which 6.18 shows as
 * alloc_cpu_sheaf and 7.0 as alloc_fastpath.
 */
/* The counter lists keep their hand-made lines (clang-format would fold them into a staircase). */
/* clang-format off */
#define SL_SLUB_KERNEL_STATS(X)                                                                    \
    X(ALLOC_FASTPATH, alloc_fastpath) X(ALLOC_SLOWPATH, alloc_slowpath)                             \
    X(FREE_FASTPATH, free_fastpath) X(FREE_SLOWPATH, free_slowpath) X(FREE_FROZEN, free_frozen)      \
    X(FREE_ADD_PARTIAL, free_add_partial) X(FREE_REMOVE_PARTIAL, free_remove_partial)                \
    X(ALLOC_FROM_PARTIAL, alloc_from_partial) X(ALLOC_SLAB, alloc_slab) X(ALLOC_REFILL, alloc_refill) \
    X(ALLOC_NODE_MISMATCH, alloc_node_mismatch) X(FREE_SLAB, free_slab) X(CPUSLAB_FLUSH, cpuslab_flush) \
    X(DEACTIVATE_FULL, deactivate_full) X(DEACTIVATE_EMPTY, deactivate_empty)                        \
    X(DEACTIVATE_TO_HEAD, deactivate_to_head) X(DEACTIVATE_TO_TAIL, deactivate_to_tail)              \
    X(DEACTIVATE_REMOTE_FREES, deactivate_remote_frees) X(DEACTIVATE_BYPASS, deactivate_bypass)      \
    X(ORDER_FALLBACK, order_fallback) X(CMPXCHG_DOUBLE_CPU_FAIL, cmpxchg_double_cpu_fail)            \
    X(CMPXCHG_DOUBLE_FAIL, cmpxchg_double_fail) X(CPU_PARTIAL_ALLOC, cpu_partial_alloc)              \
    X(CPU_PARTIAL_FREE, cpu_partial_free) X(CPU_PARTIAL_NODE, cpu_partial_node)                      \
    X(CPU_PARTIAL_DRAIN, cpu_partial_drain)
#define SL_SLUB_SHEAF_STATS(X)                                                                     \
    X(ALLOC_PCS, alloc_cpu_sheaf) X(FREE_PCS, free_cpu_sheaf) X(FREE_RCU_SHEAF, free_rcu_sheaf)     \
    X(FREE_RCU_SHEAF_FAIL, free_rcu_sheaf_fail) X(SHEAF_FLUSH, sheaf_flush)                         \
    X(SHEAF_REFILL, sheaf_refill) X(SHEAF_ALLOC, sheaf_alloc) X(SHEAF_FREE, sheaf_free)             \
    X(BARN_GET, barn_get) X(BARN_GET_FAIL, barn_get_fail) X(BARN_PUT, barn_put)                     \
    X(BARN_PUT_FAIL, barn_put_fail) X(SHEAF_PREFILL_FAST, sheaf_prefill_fast)                       \
    X(SHEAF_PREFILL_SLOW, sheaf_prefill_slow) X(SHEAF_PREFILL_OVERSIZE, sheaf_prefill_oversize)     \
    X(SHEAF_RETURN_FAST, sheaf_return_fast) X(SHEAF_RETURN_SLOW, sheaf_return_slow)
/*
 * Model-only: bulk calls, the double-word CASes and groups of bulk frees, errors reported, and
 * the node's list_lock taken by operations (the kernel counts no lock; the lock_stat of
 * CONFIG_LOCK_STAT would).
 */
#define SL_SLUB_MODEL_STATS(X)                                                                     \
    X(BULK_ALLOC_CALLS, bulk_alloc_calls) X(BULK_FREE_CALLS, bulk_free_calls)                       \
    X(BULK_FREE_CAS, bulk_free_cas) X(BULK_FREE_GROUPS, bulk_free_groups) X(ERRORS, errors)         \
    X(MODEL_LIST_LOCK, model_list_lock)
/* X(ENUM, sysfs_name), as the kernel's STAT_ATTR(ALLOC_FASTPATH, alloc_fastpath). */
#define SL_SLUB_STATS(X) SL_SLUB_KERNEL_STATS(X) SL_SLUB_SHEAF_STATS(X) SL_SLUB_MODEL_STATS(X)
/* clang-format on */

typedef enum sl_slub_stat {
#define SL_SLUB_STAT_ENUM(n, name) SL_SLUB_##n,
    SL_SLUB_STATS(SL_SLUB_STAT_ENUM)
#undef SL_SLUB_STAT_ENUM
        SL_SLUB_NR_STATS
} sl_slub_stat;
/* Counters below this index are the kernel's; from it on, the model's. */
#define SL_SLUB_NR_KERNEL_STATS SL_SLUB_BULK_ALLOC_CALLS

/* The counter's sysfs name (the kernel's, e.g. "alloc_fastpath"; the model's in the same style), or NULL past the end. */
const char *sl_slub_stat_name(unsigned stat);
/* Copies counter `stat` of every CPU summed (cpu = -1) or of one CPU; 0 for bad arguments. */
uint64_t sl_slub_stat_get(const sl_slub_cache *s, int cpu, unsigned stat);

/* One counter of a kernel version's CONFIG_SLUB_STATS: its sysfs name and the model's counter. */
typedef struct sl_slub_kstat {
    const char *name;
    uint16_t stat; /* sl_slub_stat */
} sl_slub_kstat;
/*
 * The counters kernel v has, in its enum stat_item order, under its sysfs
 * names: the 26 of 4.3 to 6.17, 6.18's 43 (alloc_cpu_sheaf first), 7.0's 26
 * (the CPU-slab ones gone; alloc_fastpath and free_fastpath count the
 * sheaves).  *table gets the array; returns its length.
 */
unsigned sl_slub_kstats(sl_slub_kversion v, const sl_slub_kstat **table);

/* The cache's figures as sysfs shows them (cpu_slabs exact only with no operation running). */
typedef struct sl_slub_node_info {
    uint32_t nr_partial;    /* slabs on the node partial list (sysfs partial) */
    uint32_t nr_slabs;      /* slabs of this cache (slabs) */
    uint32_t total_objects; /* (total_objects) */
    uint32_t partial_free;  /* free objects on node partial slabs: objects = total_objects - partial_free */
    uint32_t cpu_slabs;     /* CPU slabs plus the slabs on CPU partial lists (cpu_slabs) */
} sl_slub_node_info;
void sl_slub_node_info_get(sl_slub_cache *s, sl_slub_node_info *out);
/* Node nid's kmem_cache_node figures (cpu_slabs 0; zeros for a node without memory); false for a bad node. */
bool sl_slub_node_info_node(sl_slub_cache *s, unsigned nid, sl_slub_node_info *out);
/* Two of those alone, without the lock or a walk of the lists: nr_partial, nr_slabs. */
uint32_t sl_slub_nr_partial(const sl_slub_cache *s);
uint32_t sl_slub_nr_slabs(const sl_slub_cache *s);

/* ------------------------------------------------------------------ */
/* Checking and inspection (with no operation running)                 */

/*
 * Walks every slab and per-CPU structure: each slab has the cache's order
 * or its fallback order and that order's object count, each object is in
 * exactly one place (allocated, a CPU freelist, its slab's freelist), no
 * freelist has a cycle or leaves its slab, inuse agrees with the free
 * counts, frozen slabs are exactly the CPU slabs (and a debug cache's
 * disabled slabs, on no list with no freelist), list membership matches the
 * slab's state, the node counters agree, and (with tracking) each object's
 * state agrees.
 * Returns 0, SL_EFREELIST or SL_ECORRUPT; `msg` (may be NULL) gets a
 * sentence naming the first problem.
 */
int sl_slub_validate(sl_slub_cache *s, char *msg, size_t msg_len);

/*
 * Writes the snapshot described in docs/snapshot-format.md into buf.
 * Returns the bytes written, or, when `cap` is too small, the negative of the
 * bytes needed (so a caller can allocate and call again).
 */
long sl_slub_snapshot(sl_slub_cache *s, void *buf, size_t cap);
/*
 * The same, taken at a preemption point inside a free (points 2, 3, 4): the
 * chain being freed (ctx->next .. ctx->tail, ctx->cnt objects) is marked in
 * flight with its links, so a detached freelist shows as its own chain.
 */
long sl_slub_snapshot_inflight(sl_slub_cache *s, void *buf, size_t cap, const sl_slub_pp_ctx *inflight);
/*
 * The same while other threads may be operating on the cache (free-running
 * mode): the sheaves and RCU waits, which their CPUs allocate and free, are
 * left out (the header's flags say so); the rest may mix moments.
 */
long sl_slub_snapshot_running(sl_slub_cache *s, void *buf, size_t cap);

/* The object's place: pfn of its slab and index there; false for a non-object. */
bool sl_slub_object_index(const sl_slub_cache *s, const void *obj, uint32_t *pfn, uint32_t *index);
/* The object at (pfn, index), or NULL if there is no such object of this cache. */
void *sl_slub_object_at(const sl_slub_cache *s, uint32_t pfn, uint32_t index);

/* ------------------------------------------------------------------ */
/* Seeding from a real cache (seed.c)                                  */

/* Where a described slab is (sl_slub_seed_slab.list). */
enum { SL_SLUB_SEED_CPU_SLAB = 0, SL_SLUB_SEED_CPU_PARTIAL = 1, SL_SLUB_SEED_NODE_PARTIAL = 2, SL_SLUB_SEED_FULL = 3 };

/* One slab as a snapshot describes it; objects by index in the slab. */
typedef struct sl_slub_seed_slab {
    uint8_t list; /* SL_SLUB_SEED_* */
    uint8_t cpu;  /* the CPU of a CPU slab or CPU partial slab */
    uint16_t pad_;
    uint32_t objects; /* objects in the slab: must be the cache's objects per slab */
    uint32_t inuse;   /* the slab's counter: objects - nfree */
    uint32_t nfree;   /* the slab's own freelist, in order */
    const uint32_t *free;
    uint32_t ncpu_free; /* a CPU slab's CPU freelist (c->freelist), in order */
    const uint32_t *cpu_free;
} sl_slub_seed_slab;

/* Where a described sheaf is (sl_slub_seed_sheaf.place). */
enum { SL_SLUB_SEED_MAIN = 0, SL_SLUB_SEED_SPARE = 1, SL_SLUB_SEED_RCU_FREE = 2, SL_SLUB_SEED_BARN_FULL = 3 };

/*
 * One sheaf as a snapshot describes it: its objects bottom first (objects
 * [size - 1] is handed out next), each as a pair (described slab, object
 * index in it): objects[2k] is an index into sl_slub_seed_desc.slabs,
 * objects[2k + 1] the object's index in that slab.
 */
typedef struct sl_slub_seed_sheaf {
    uint8_t place; /* SL_SLUB_SEED_MAIN .. SL_SLUB_SEED_BARN_FULL */
    uint8_t cpu;   /* the CPU of a main, spare or rcu_free sheaf */
    uint16_t pad_;
    uint32_t size;
    const uint32_t *objects; /* 2 * size words */
} sl_slub_seed_sheaf;

/* A cache's slabs: each list's slabs in its order (a CPU partial list head first). */
typedef struct sl_slub_seed_desc {
    uint32_t nslabs;
    const sl_slub_seed_slab *slabs;
    uint32_t full_slabs; /* full slabs the kernel had (listed nowhere) */
    uint32_t max_full;   /* at most this many of them are made */
    uint32_t nsheaves;   /* sheaves to fill (a cache with sheaves only); the barn's full ones head first */
    const sl_slub_seed_sheaf *sheaves;
} sl_slub_seed_desc;

/*
 * Builds d's slabs into s, a cache just created (no slab) without debug
 * flags, on their lists with their freelists in the described order, and
 * min(full_slabs, max_full) full slabs as far as the zone holds them
 * (seed.c's essay: what is built and simplified).  validate() passes after
 * it.  Returns the full slabs made (>= 0); SL_EINVAL for a bad description
 * or a debug cache, SL_EBUSY when s has slabs already, SL_ENOMEM when the
 * zone cannot hold the listed slabs; then s is unchanged and `msg` (may be
 * NULL) gets a sentence naming the problem.
 */
int sl_slub_seed(sl_slub_cache *s, const sl_slub_seed_desc *d, char *msg, size_t msg_len);

/* ------------------------------------------------------------------ */
/* Steering a seeded cache after a real kernel (steer.c)               */
/*
 * Corrections, not kernel paths: the replay layer's check (check.c) uses
 * them to put a model it compares with a real kernel back in step when the
 * model predicted another object than the kernel's.  Each needs a cache
 * created with tracking, and no operation running.
 */

/* Where a slab is (sl_slub_steer_slab_info.list). */
enum {
    SL_SLUB_STEER_CPU_SLAB = 0,
    SL_SLUB_STEER_CPU_PARTIAL = 1,
    SL_SLUB_STEER_NODE_PARTIAL = 2,
    SL_SLUB_STEER_NONE = 3
};

typedef struct sl_slub_steer_slab_info {
    uint8_t list; /* SL_SLUB_STEER_* */
    uint8_t cpu;  /* the CPU of a CPU slab or CPU partial slab */
    uint8_t frozen;
    uint8_t pad_;
    uint32_t objects;
    uint32_t inuse; /* the slab's counter (a CPU freelist's objects count as in use) */
} sl_slub_steer_slab_info;

/* 1 if obj is free in the model (any freelist or sheaf), 0 if allocated; SL_EFOREIGN, SL_EMISALIGNED, or SL_EINVAL (no tracking). */
int sl_slub_steer_object_state(const sl_slub_cache *s, const void *obj);
/*
 * Takes the free object obj, which the kernel allocated on `cpu`, out of
 * wherever the model holds it (a CPU freelist, its slab's freelist, a CPU's
 * or the barn's sheaf) and marks it allocated, keeping inuse, frozen, the
 * lists and the sheaves consistent (steer.c's essay).  Returns 0; SL_EINVAL
 * (not free, in no place searched, or no tracking), SL_EFOREIGN or
 * SL_EMISALIGNED.
 */
int sl_slub_steer_take(sl_slub_cache *s, unsigned cpu, void *obj);
/*
 * A new slab of the cache's order: `full` (every object allocated, on no
 * list) or empty (at the tail of the node partial list).  *pfn gets its
 * pfn.  Returns 0, SL_EINVAL or SL_ENOMEM (no page at the cache's order).
 */
int sl_slub_steer_new_slab(sl_slub_cache *s, bool full, uint32_t *pfn);
/*
 * The slab at pfn: its list, CPU, counters, and (free_map, may be NULL,
 * objects bytes) 1 for each free object.  Returns 0, SL_EFOREIGN (no slab
 * of this cache there) or SL_EINVAL.
 */
int sl_slub_steer_slab(const sl_slub_cache *s, uint32_t pfn, sl_slub_steer_slab_info *out, uint8_t *free_map);

/*
 * The pfns of the slabs on lists, in the order sl_slub_seed takes a
 * description: each CPU's CPU slab then its partial chain (head first), CPU
 * by CPU, then the node partial list.  Writes at most cap; returns how many
 * there are.
 */
uint32_t sl_slub_steer_listed(const sl_slub_cache *s, uint32_t *pfns, uint32_t cap);

/*
 * Makes the slab at pfn CPU cpu's CPU slab, as ___slab_alloc leaves a slab
 * it took: off its list (another CPU's CPU slab gives its CPU freelist back
 * to the slab first), frozen, its whole freelist now the CPU freelist; the
 * CPU's previous CPU slab goes through deactivate_slab as flush_slab sends
 * it.  For a cache with per-CPU slabs (before 7.0).  Returns 0, SL_EINVAL
 * or SL_EFOREIGN.
 */
int sl_slub_steer_cpu_slab(sl_slub_cache *s, unsigned cpu, uint32_t pfn);

/*
 * The objects of one sheaf, bottom first, into objs (at most cap): CPU
 * cpu's main, spare or rcu_free sheaf, or the barn's nth full sheaf from
 * the list's head (place: SL_SLUB_SEED_MAIN .. SL_SLUB_SEED_BARN_FULL).
 * Returns the sheaf's size (0: no such sheaf, or no sheaves).
 */
uint32_t sl_slub_steer_sheaf(const sl_slub_cache *s, unsigned place, unsigned cpu, unsigned nth, void **objs,
                             uint32_t cap);

#endif /* SL_SLUB_H */
