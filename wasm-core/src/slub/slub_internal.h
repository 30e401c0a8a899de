/*
 * slub_internal.h - the SLUB model's data structures, shared by its files.
 *
 * struct slab (sli_slub_slab) overlays the head page's private area, as the
 * kernel's struct slab overlays struct page:
 *   fc.lo  freelist: first free object on the slab's own freelist, or 0
 *   fc.hi  counters: inuse (bits 0-15), objects (16-30), frozen (bit 31)
 *          The pair is changed only by sl_dw_cas (cmpxchg_double_slab), from
 *          any CPU, lock-free.  A slab nobody else can see yet (new_slab) is
 *          written plainly.
 *   next, slabs, pobjects   the per-CPU partial chain (slab->next,
 *          slab->slabs, and before 5.16 page->pobjects): only the CPU whose
 *          chain it is touches them.
 *   lprev, lnext, on_node_partial   the node partial list: node list_lock.
 *   cpu    model-only: the CPU that froze the slab or holds it in its
 *          partial chain (for snapshots), written by that CPU.
 *   limit  objects * size (check_valid_pointer's bound): written before the
 *          slab is published, constant after.  Slabs differ: one made at the
 *          fallback order (allocate_slab's s->min) holds fewer objects, so
 *          objects and limit are per slab, never s->g.objects.
 *
 * Before 6.8 a slab on a CPU partial list is frozen too (acquire_slab, or
 * __slab_free freezing a full slab in its CAS), and unfrozen when the list
 * goes to the node (unfreeze_partials).
 *
 * A debug cache never freezes a slab, so there frozen = 1 marks a slab a
 * failed consistency check took out of use (6.12+: alloc_debug_processing
 * leaves it with inuse = objects and no freelist, on no list; its free
 * objects leak and frees into it are refused).
 *
 * kmem_cache_cpu (sli_slub_cpu) belongs to the thread acting as that CPU:
 *   fl_tid.lo freelist (a raw object pointer), fl_tid.hi tid.  Changed only
 *          by a double-word CAS (or, in the `plain` variant's fast path, by
 *          the RFC's plain writes).  tid starts at the CPU number and steps by
 *          TID_STEP, so tid % TID_STEP is always the CPU.
 *   slab, partial  plain fields (the kernel changes them with irqs off;
 *          here no preemption point sits in those sections).
 *   lock   PREEMPT_RT's local_lock (the `rt` variant takes it around its
 *          freelist+tid updates; only the thread acting as the CPU does).
 *   rcu_wait  objects kfree_rcu() made wait for a grace period on their own
 *          (no sheaf took them), linked through the free pointer slot; the
 *          CPU's thread only.
 *   defer_free  objects kfree_nolock() could not free without a lock
 *          (6.18+ defer_free's per-CPU llist), linked through the free
 *          pointer slot as the kernel links them (head + s->offset); they
 *          wait for the CPU's irq_work (sl_slub_irq_work).  The CPU's
 *          thread only.
 *   rcu_defer  objects kfree_rcu_nolock (7.3) could not batch in an rcu
 *          sheaf (defer_kfree_rcu's objects_by_rcu), linked alike; the
 *          irq_work hands them to kvfree_call_rcu.  The CPU's thread only.
 * A 7.0 cache has no kmem_cache_cpu: its fl_tid, slab and partial stay
 * empty and unused (the struct holds only its counters, as 7.0's
 * s->cpu_stats does, and rcu_wait).
 *   stat[]  the kernel's CONFIG_SLUB_STATS this_cpu_inc: single-writer
 *          counters (relaxed atomic loads and stores, plain MOVs, so other
 *          threads may sum them); benchmark builds drop the two fast-path
 *          ones as a kernel without CONFIG_SLUB_STATS drops every stat().
 *
 * s->leaf, s->alloc_fn, s->free_fn (which fast path sl_slub_alloc/free
 * take) are written at creation and by sl_slub_set_fastpath, with no
 * operation running, and only read by operations.
 *
 * NUMA nodes (docs/slub.md, "NUMA nodes"): s->per_node[nid] is node nid's
 * kmem_cache_node, reached only through sli_get_node / sli_slab_node; each
 * node's list_lock guards its own partial list and nr_partial, nr_slabs and
 * total_objects are per node.  A slab's nid (slab_nid) is set when the slab
 * is made, from the acting CPU's numa_mem_id(), and never changes; it is
 * always a node with memory, and a slab is only ever on its own node's
 * list.  The topology (cpu_nid, cpu_mem_nid, zonelist, mem_nodes; each
 * CPU's mem_nid copy) is constant; online_cpus changes only with no
 * operation running (CPU hotplug).  With one node (the default) every
 * slab's nid is 0 and the paths are the one-node model's.
 *
 * Object index: obj_to_index's reciprocal_divide (lib/math/reciprocal_div.c)
 * of the offset from the slab's first object by s->size, exact for every
 * 32-bit offset; a slab is at most 4 MiB.  Whether an offset is an object
 * start (the model checks every free; the kernel only with debugging) needs
 * no index: offset < objects * size and offset % size == 0, the latter as
 * Lemire, Kaser and Kurz's divisibility test ("Faster remainder by direct
 * computation", 2019): n % d == 0 iff n * c <= c - 1 (mod 2^64) for
 * c = 2^64 / d rounded up, every 32-bit n.  One multiply and two compares.
 *
 * Object tracking (cache->info, one sli_slub_objinfo per object slot,
 * indexed by pfn * info_stride + index, info_stride = DIV_ROUND_UP(PAGE_SIZE,
 * size): a slab of any order at pfn p holds fewer than 2^order * info_stride
 * objects, so slabs of the cache's order and of its fallback order never
 * share an entry) records each object's state and its last alloc/free
 * operation and CPU; the state moves by atomic exchange so a double free or
 * a double hand-out is seen even when two CPUs race.
 */
#ifndef SL_SLUB_INTERNAL_H
#define SL_SLUB_INTERNAL_H

#include "slub.h"

#define SLI_INUSE_MASK 0xffffu
#define SLI_OBJECTS_SHIFT 16
#define SLI_OBJECTS_MASK 0x7fffu
#define SLI_FROZEN_BIT 31

SL_INLINE uintptr_t sli_counters(uint32_t inuse, uint32_t objects, uint32_t frozen)
{
    return (uintptr_t)(inuse | (objects << SLI_OBJECTS_SHIFT) | (frozen << SLI_FROZEN_BIT));
}
SL_INLINE uint32_t sli_inuse(uintptr_t c) { return (uint32_t)c & SLI_INUSE_MASK; }
SL_INLINE uint32_t sli_objects(uintptr_t c) { return ((uint32_t)c >> SLI_OBJECTS_SHIFT) & SLI_OBJECTS_MASK; }
SL_INLINE uint32_t sli_frozen(uintptr_t c) { return ((uint32_t)c >> SLI_FROZEN_BIT) & 1u; }

typedef struct sli_slub_slab {
    sl_dword fc;
    sl_slub_cache *cache;
    struct sli_slub_slab *next;
    struct sli_slub_slab *lprev, *lnext;
    uint32_t slabs;
    uint16_t cpu;
    uint8_t on_node_partial;
    uint8_t nid;       /* slab_nid: the node whose memory holds it (constant for its life) */
    uint32_t limit;    /* objects * size, relaxed atomic */
    uint32_t pobjects; /* before 5.16: free objects on the CPU partial chain from here (page->pobjects) */
} sli_slub_slab;
SL_PAGE_PRIV_CHECK(sli_slub_slab);

typedef struct sli_slub_cpu {
    union {
        struct {
            sl_dword fl_tid;
            sli_slub_slab *slab;
            sli_slub_slab *partial;
            sl_spinlock lock; /* local_lock (rt) */
            uint8_t mem_nid;  /* numa_mem_id() of this CPU (constant): in the padding after lock, the
                               * slow paths' first line */
            void *rcu_wait;   /* objects kfree_rcu() queued alone, linked through their free pointer slot */
            void *defer_free; /* objects kfree_nolock() deferred to the CPU's irq_work (defer_free), linked alike */
            void *rcu_defer;  /* objects kfree_rcu_nolock() deferred to the irq_work (defer_kfree_rcu), linked alike */
            uint64_t rng;     /* freelist shuffles of slabs this CPU creates */
            uint64_t stat[SL_SLUB_NR_STATS];
            uint64_t defrag_rng; /* get_any_partial's draw against remote_node_defrag_ratio (get_cycles);
                                  * after stat[], so the hot words keep their places */
        };
        /* A stride of 512 bytes, a power of two: &s->cpu[cpu] is one shift. */
        unsigned char stride_[512];
    };
} __attribute__((aligned(SL_CACHELINE))) sli_slub_cpu;
_Static_assert(sizeof(sli_slub_cpu) == 512, "sli_slub_cpu outgrew its 512-byte stride");

/*
 * Where the per-CPU structs sit in their page: the cache is page-aligned and
 * cpu[] starts SLI_CPU_LEAD bytes in, so CPU k's hot words (freelist, tid,
 * slab) are at page offsets 448 + 512k ... + 23.  A free stores into the
 * object's free pointer and the next allocation loads c->freelist: when the
 * two addresses share bits 11:0 the core's store-to-load disambiguation
 * stalls the load (4K aliasing).  With cpu[] at a page offset that is a
 * multiple of 512 that happened systematically for the first object of
 * power-of-two caches (free pointer at size / 2: 512, 1024, 2048), half a
 * cycle per alloc+free in `compare`.  No kmalloc size puts a free pointer
 * of an object near a page start at 448 + 512k.
 */
#define SLI_CPU_LEAD 448

typedef struct sli_slub_node {
    sl_spinlock list_lock;
    uint32_t nr_partial;         /* list_lock */
    sli_slub_slab *partial_head; /* list_lock */
    sli_slub_slab *partial_tail;
    atomic_uint nr_slabs; /* inc_slabs_node / dec_slabs_node */
    atomic_uint total_objects;
} __attribute__((aligned(SL_CACHELINE))) sli_slub_node;

/* Object states in the tracking table (also the snapshot's object states). */
enum {
    SLI_OBJ_FREE = 0, /* on a freelist (never allocated counts as free; also leaked in a disabled slab) */
    SLI_OBJ_ALLOCATED = 1,
    SLI_OBJ_POISON_BAD = 2,  /* quarantined: poison found overwritten */
    SLI_OBJ_REDZONE_BAD = 3, /* quarantined: red zone found overwritten */
    SLI_OBJ_DUP = 4,         /* handed out twice (a corrupt CPU freelist) */
};

typedef struct sli_slub_objinfo {
    uint8_t state; /* SLI_OBJ_*, atomic */
    uint8_t alloc_cpu;
    uint8_t free_cpu;
    uint8_t pad_;
    uint32_t alloc_op; /* 0 = never */
    uint32_t free_op;
} sli_slub_objinfo;

/* struct reciprocal_value: a / d as (t + ((a - t) >> sh1)) >> sh2, t = a * m >> 32. */
typedef struct sli_recip {
    uint32_t m;
    uint8_t sh1, sh2;
} sli_recip;

/* reciprocal_value(d) for 1 <= d < 2^31, as lib/math/reciprocal_div.c. */
SL_INLINE sli_recip sli_reciprocal_value(uint32_t d)
{
    int l = d > 1 ? 32 - __builtin_clz(d - 1) : 0; /* fls(d - 1) */
    uint64_t m = ((1ull << 32) * ((1ull << l) - d)) / d + 1;
    return (sli_recip){(uint32_t)m, (uint8_t)(l < 1 ? l : 1), (uint8_t)(l > 1 ? l - 1 : 0)};
}
/* reciprocal_divide(a, r): a / d for every 32-bit a. */
SL_INLINE uint32_t sli_reciprocal_divide(uint32_t a, sli_recip r)
{
    uint32_t t = (uint32_t)(((uint64_t)a * r.m) >> 32);
    return (t + ((a - t) >> r.sh1)) >> r.sh2;
}

struct sl_slub_cache {
    unsigned char lead_[SLI_CPU_LEAD];
    sli_slub_cpu cpu[SL_SLUB_MAX_CPUS]; /* &s->cpu[cpu] is s + SLI_CPU_LEAD + (cpu << 9) */
    sl_slub_geometry g;
    uint16_t id;
    uint8_t fastpath;
    uint8_t bulk_free;
    uint32_t flags;
    unsigned ncpus;
    uint8_t debug_hooks;   /* tracking, POISON or RED_ZONE: run the alloc/free hooks */
    uint8_t object_poison; /* __OBJECT_POISON: POISON without TYPESAFE_BY_RCU or a constructor */
    uint8_t leaf;          /* SLI_LEAF_*: which leaf fast path sl_slub_alloc/free take */
    uint8_t nr_nodes;      /* nr_node_ids: nodes 0 .. nr_nodes-1 (NUMA topology, constant) */
    /* The leaf fast paths for `leaf` (alloc.c, free.c), or the complete operations. */
    int (*alloc_fn)(sl_slub_cache *s, unsigned cpu, void **obj);
    int (*free_fn)(sl_slub_cache *s, unsigned cpu, void *obj);
    sli_recip recip;      /* s->reciprocal_size = reciprocal_value(size) */
    uint32_t info_stride; /* info entries per page: DIV_ROUND_UP(PAGE_SIZE, size) */
    uint64_t size_divc;   /* c = 2^64 / size rounded up (divisibility test) */
    uintptr_t tid_step;   /* TID_STEP: roundup_pow_of_two(CONFIG_NR_CPUS), 1 without CONFIG_PREEMPTION */
    uintptr_t random;     /* s->random for FREELIST_HARDENED */
    uint32_t *random_seq; /* FREELIST_RANDOM: a shuffled 0..objects-1 */
    sl_page_zone *zone;
    sl_trace *trace;
    sli_slub_objinfo *info; /* NULL without tracking */
    size_t info_len;
    sl_slub_rules rules;                       /* the kernel version's (eras.h); constant */
    struct sli_sheaves *sheaves;               /* s->cpu_sheaves and the barn (sheaves.h), NULL without */
    sli_slub_node per_node[SL_SLUB_MAX_NODES]; /* kmem_cache_node of each node: through sli_get_node */
    /*
     * The NUMA topology (constant but online_cpus, which changes with no
     * operation running): see sl_slub_config and docs/slub.md.
     */
    uint8_t cpu_nid[SL_SLUB_MAX_CPUS];     /* cpu_to_node: numa_node_id() */
    uint8_t cpu_mem_nid[SL_SLUB_MAX_CPUS]; /* cpu_to_mem: numa_mem_id(), the nearest node with memory */
    uint8_t zonelist[SL_SLUB_MAX_NODES][SL_SLUB_MAX_NODES]; /* node_zonelist: memory nodes by distance */
    uint8_t mem_nodes;                                      /* N_MEMORY (slab_nodes): nodes with a kmem_cache_node */
    uint8_t nr_mem_nodes;                                   /* entries in each zonelist */
    uint8_t online_cpus;                                    /* cpu_online_mask */
    uint16_t remote_node_defrag_ratio;                      /* 0 .. 1000, default 1000 */
};
_Static_assert(offsetof(struct sl_slub_cache, cpu) == SLI_CPU_LEAD, "cpu[] must start SLI_CPU_LEAD into the page");

/* What one API operation carries through the paths. */
typedef struct sli_act {
    sl_slub_cache *s;
    sli_slub_cpu *c;
    uint32_t op;
    uint16_t cpu;
    uint8_t ctx;  /* sli_ctx: what the operation's caller allows (its GFP context) */
    unsigned cas; /* double-word CASes executed (bulk free reports it) */
} sli_act;

/*
 * The context an operation runs in, as its gfp flags (or kmalloc_nolock)
 * tell the kernel: gfpflags_allow_blocking (__GFP_DIRECT_RECLAIM) and
 * gfpflags_allow_spinning (any __GFP_RECLAIM bit; kmalloc_nolock's flags
 * have none).  SLI_CTX_BLOCK is GFP_KERNEL, SLI_CTX_NONBLOCK GFP_ATOMIC and
 * GFP_NOWAIT (both keep __GFP_KSWAPD_RECLAIM, so they may spin),
 * SLI_CTX_NOLOCK kmalloc_nolock / kfree_nolock (trylocks only).
 */
enum { SLI_CTX_BLOCK = 0, SLI_CTX_NONBLOCK = 1, SLI_CTX_NOLOCK = 2 };
SL_INLINE bool sli_allow_blocking(const sli_act *a) { return a->ctx == SLI_CTX_BLOCK; }
SL_INLINE bool sli_allow_spin(const sli_act *a) { return a->ctx != SLI_CTX_NOLOCK; }
/* The sli_ctx of a caller's sl_slub_gfp: SLI_CTX_BLOCK or SLI_CTX_NONBLOCK, or -1 for no such gfp. */
SL_INLINE int sli_ctx_of_gfp(sl_slub_gfp gfp)
{
    return gfp == SL_SLUB_GFP_KERNEL                                ? SLI_CTX_BLOCK
           : gfp == SL_SLUB_GFP_ATOMIC || gfp == SL_SLUB_GFP_NOWAIT ? SLI_CTX_NONBLOCK
                                                                    : -1;
}

/* ---- events ------------------------------------------------------ */
#if defined(SLABLAB_BENCH)
#define SLI_EV(a, kind, slab, obj, a0, a1, a2) ((void)0)
#else
void sli_slub_event(const sli_act *a, unsigned kind, const sli_slub_slab *slab, const void *obj, uint32_t a0,
                    uint32_t a1, uint32_t a2);
#define SLI_EV(a, kind, slab, obj, a0, a1, a2) sli_slub_event((a), SL_EV_##kind, (slab), (obj), (a0), (a1), (a2))
#endif

/* Operation codes in OP_BEGIN/OP_END events (arg0). */
enum { SLI_OPC_ALLOC = 1, SLI_OPC_FREE = 2, SLI_OPC_ALLOC_BULK = 3, SLI_OPC_FREE_BULK = 4, SLI_OPC_FLUSH = 5 };
/*
 * OP_BEGIN / OP_END (kind) of operation a; arg1 = size or count, or the
 * result; obj (may be NULL) names the object allocated (OP_END of an alloc)
 * or to be freed (OP_BEGIN of a free) in the event's slab/obj fields.
 */
#if defined(SLABLAB_BENCH)
#define sli_slub_op_event(a, kind, opcode, arg1, obj) ((void)0)
#else
void sli_slub_op_event(const sli_act *a, unsigned kind, unsigned opcode, int32_t arg1, const void *obj);
#endif

/* stat(): this CPU's counter, written only by the thread acting as the CPU. */
SL_INLINE void sli_cstat(sli_slub_cpu *c, unsigned item, uint64_t n)
{
    uint64_t *p = &c->stat[item];
    sl_store_relaxed(p, sl_load_relaxed(p) + n);
}
SL_INLINE void sli_stat(sli_act *a, unsigned item, uint64_t n) { sli_cstat(a->c, item, n); }
/* get_node(s, nid): node nid's kmem_cache_node. */
SL_INLINE sli_slub_node *sli_get_node(const sl_slub_cache *s, unsigned nid)
{
    return (sli_slub_node *)&s->per_node[nid];
}
/* get_node(s, slab_nid(slab)): the node list a slab belongs on. */
SL_INLINE sli_slub_node *sli_slab_node(const sl_slub_cache *s, const sli_slub_slab *slab)
{
    return sli_get_node(s, slab->nid);
}
/* numa_mem_id() of the acting CPU: the node its new slabs come from and whose partial list it tries first. */
SL_INLINE unsigned sli_mem_nid(const sli_act *a) { return a->c->mem_nid; }
/* True if node nid has memory (get_node(s, nid) != NULL in the kernel). */
SL_INLINE bool sli_node_has_mem(const sl_slub_cache *s, unsigned nid) { return (s->mem_nodes >> nid) & 1u; }
/*
 * The slab is on another node than the acting CPU's memory node
 * (slab_nid(slab) != numa_mem_id()): 6.18+ slab_free, free_to_pcs_bulk and
 * kfree_rcu_sheaf keep such an object off the sheaves.
 */
SL_INLINE bool sli_slab_remote(const sli_act *a, const sli_slub_slab *slab) { return slab->nid != sli_mem_nid(a); }
/*
 * get_any_partial's gate: !remote_node_defrag_ratio || get_cycles() % 1024
 * > ratio means no remote node is tried.  The model draws from the acting
 * CPU's seeded generator instead of the cycle counter (deterministic).
 * True if remote nodes may be searched.
 */
bool sli_remote_defrag_allowed(sli_act *a);
/* The slabs of every node (node_nr_slabs summed), read racily. */
SL_INLINE uint32_t sli_nr_slabs_all(const sl_slub_cache *s)
{
    uint32_t sum = 0;
    for (unsigned nid = 0; nid < s->nr_nodes; nid++)
        sum += atomic_load_explicit(&sli_get_node(s, nid)->nr_slabs, memory_order_relaxed);
    return sum;
}
/* spin_lock(&n->list_lock), counted (the model's MODEL_LIST_LOCK). */
SL_INLINE void sli_list_lock(sli_act *a, sli_slub_node *n)
{
    sli_stat(a, SL_SLUB_MODEL_LIST_LOCK, 1);
    sl_spin_lock(&n->list_lock);
}
/*
 * Node n's list_lock as an operation may take it: spin_lock_irqsave, or,
 * where spinning is not allowed (kmalloc_nolock), spin_trylock_irqsave.
 * Returns false (nothing held) when the trylock fails.
 */
bool sli_list_lock_ctx(sli_act *a, sli_slub_node *n, unsigned site);
/*
 * ALLOC_FASTPATH / FREE_FASTPATH: compiled out of benchmark builds, as every
 * stat() is without CONFIG_SLUB_STATS; the slow-path and failure counters
 * stay (they are off the fast path), so a benchmark derives the fast-path
 * share from the operations it ran.
 */
#if defined(SLABLAB_BENCH)
#define sli_stat_fast(a, item, n) ((void)0)
#define sli_cstat_fast(c, item, n) ((void)0)
#else
#define sli_stat_fast(a, item, n) sli_stat((a), (item), (n))
#define sli_cstat_fast(c, item, n) sli_cstat((c), (item), (n))
#endif

/*
 * The kernel's OPTIMIZER_HIDE_VAR: the compiler forgets how v was computed.
 * The leaf fast paths use it on their kmem_cache_cpu pointer, which gcc
 * otherwise recomputes from the CPU number for each field (in the free path
 * three shifts and a callee-saved register more).  Nothing to hide on wasm.
 */
#if SL_X86_64
#define SLI_HIDE_VAR(v) __asm__("" : "+r"(v))
#else
#define SLI_HIDE_VAR(v) ((void)0)
#endif

/*
 * Slow and debug paths are out of line so that the fast paths stay small.
 * Only error and debug paths are also `cold` (optimised for size, placed
 * apart): the slow paths are the kernel's everyday work in some workloads
 * (remote frees, frees into an older slab), and `cold` made them slower.
 */
#define SLI_SLOW SL_NOINLINE
#define SLI_COLD __attribute__((noinline, cold))

/* ---- slab and object geometry ------------------------------------- */
SL_INLINE sl_page *sli_slab_page(const sli_slub_slab *slab) { return (sl_page *)(void *)slab; }
SL_INLINE unsigned char *sli_slab_base(const sl_slub_cache *s, const sli_slub_slab *slab)
{
    return sl_page_address(s->zone, sli_slab_page(slab));
}
SL_INLINE uint32_t sli_slab_pfn(const sl_slub_cache *s, const sli_slub_slab *slab)
{
    return sl_page_pfn(s->zone, sli_slab_page(slab));
}
SL_INLINE void *sli_obj_at(const sl_slub_cache *s, const sli_slub_slab *slab, uint32_t i)
{
    return sli_slab_base(s, slab) + (size_t)i * s->g.size + s->g.red_left_pad;
}
/* Offset of obj from the slab's first object (wraps below it; a slab is at most 4 MiB). */
SL_INLINE uint32_t sli_obj_offset(const sl_slub_cache *s, const sli_slub_slab *slab, const void *obj)
{
    return (uint32_t)((uintptr_t)obj - (uintptr_t)sli_slab_base(s, slab)) - s->g.red_left_pad;
}
/* obj_to_index: the index of an object of slab (any byte of its slot gives the slot). */
SL_INLINE uint32_t sli_obj_index(const sl_slub_cache *s, const sli_slub_slab *slab, const void *obj)
{
    return sli_reciprocal_divide(sli_obj_offset(s, slab, obj), s->recip);
}
/* c = 2^64 / d rounded up, for sli_divisible (d >= 2, so c >= 1). */
SL_INLINE uint64_t sli_divisible_c(uint32_t d) { return UINT64_MAX / d + 1; }
/* n % d == 0, with c = sli_divisible_c(d): n * c <= c - 1, that is n * c < c. */
SL_INLINE bool sli_divisible(uint32_t n, uint64_t c) { return (uint64_t)n * c < c; }
/* True if `off` (from the first object of slab) is an object start. */
SL_INLINE bool sli_off_is_obj(const sl_slub_cache *s, const sli_slub_slab *slab, uint32_t off)
{
    return off < sl_load_relaxed(&slab->limit) && sli_divisible(off, s->size_divc);
}
/* True if obj, a pointer into slab, is an object start; *index gets its index (obj_to_index). */
SL_INLINE bool sli_obj_start(const sl_slub_cache *s, const sli_slub_slab *slab, const void *obj, uint32_t *index)
{
    uint32_t off = sli_obj_offset(s, slab, obj);
    *index = sli_reciprocal_divide(off, s->recip);
    return sli_off_is_obj(s, slab, off);
}
/* virt_to_slab: the slab overlay of the block holding obj, whatever owns it, or NULL. */
SL_INLINE sli_slub_slab *sli_slab_lookup(const sl_slub_cache *s, const void *obj)
{
    sl_page *pg = sl_page_from_addr(s->zone, obj);
    return pg ? SL_PAGE_PRIV(pg, sli_slub_slab) : NULL;
}
/* The slab of this cache holding obj, or NULL (foreign, or a slab of another cache). */
SL_INLINE sli_slub_slab *sli_slab_of(const sl_slub_cache *s, const void *obj)
{
    sli_slub_slab *slab = sli_slab_lookup(s, obj);
    return slab && sl_load_relaxed(&slab->cache) == s ? slab : NULL;
}
SL_INLINE sli_slub_objinfo *sli_info(const sl_slub_cache *s, const sli_slub_slab *slab, uint32_t i)
{
    return &s->info[(size_t)sli_slab_pfn(s, slab) * s->info_stride + i];
}
/* The slab's order (its compound page's) and object count (constant for its life). */
SL_INLINE uint32_t sli_slab_order(const sli_slub_slab *slab) { return sli_slab_page(slab)->order; }
SL_INLINE uint32_t sli_slab_objects(const sli_slub_slab *slab) { return sli_objects(sl_dw_read(&slab->fc).hi); }

/* The slab of this cache whose head page is at pfn, or NULL (quiescent use: snapshots, validate). */
SL_INLINE sli_slub_slab *sli_slab_at(const sl_slub_cache *s, uint32_t pfn)
{
    sl_page *pg = sl_page_from_pfn(s->zone, pfn);
    if (!pg || sl_load_relaxed(&pg->flags) != SL_PG_HEAD)
        return NULL;
    sli_slub_slab *slab = SL_PAGE_PRIV(pg, sli_slub_slab);
    return sl_load_relaxed(&slab->cache) == s ? slab : NULL;
}
/* True if `slab` points at a slab of this cache (a pointer read from a list may be garbage). */
SL_INLINE bool sli_is_our_slab(const sl_slub_cache *s, const sli_slub_slab *slab)
{
    const sl_page *pg = (const sl_page *)(const void *)slab;
    if (pg < s->zone->pages || pg >= s->zone->pages + s->zone->npages)
        return false;
    return sli_slab_at(s, sl_page_pfn(s->zone, pg)) == slab;
}
/* Index of obj in slab, or -1 if it is not an object start of that slab. */
SL_INLINE long sli_obj_index_checked(const sl_slub_cache *s, const sli_slub_slab *slab, const void *obj)
{
    uintptr_t base = (uintptr_t)sli_slab_base(s, slab), o = (uintptr_t)obj;
    uint32_t i;
    if (o < base || o - base >= ((uintptr_t)SL_PAGE_SIZE << sli_slab_order(slab)) || !sli_obj_start(s, slab, obj, &i))
        return -1;
    return (long)i;
}

/* ---- free pointers (get_freepointer / set_freepointer) ------------- */
SL_INLINE uintptr_t sli_swab(uintptr_t x)
{
#if UINTPTR_MAX > 0xffffffffu
    return (uintptr_t)__builtin_bswap64((uint64_t)x);
#else
    return (uintptr_t)__builtin_bswap32((uint32_t)x);
#endif
}
/* freelist_ptr_encode/decode: ptr ^ s->random ^ swab(address of the stored pointer). */
SL_INLINE uintptr_t sli_fp_code(const sl_slub_cache *s, uintptr_t v, uintptr_t where)
{
    return (s->flags & SL_SLUB_FREELIST_HARDENED) ? v ^ s->random ^ sli_swab(where) : v;
}
/* get_freepointer / set_freepointer of a cache without FREELIST_HARDENED (the leaf fast paths). */
SL_INLINE void *sli_get_fp_raw(const sl_slub_cache *s, const void *obj)
{
    return (void *)sl_load_relaxed((uintptr_t *)(void *)((unsigned char *)obj + s->g.offset));
}
SL_INLINE void sli_set_fp_raw(const sl_slub_cache *s, void *obj, const void *fp)
{
    sl_store_relaxed((uintptr_t *)(void *)((unsigned char *)obj + s->g.offset), (uintptr_t)fp);
}
SL_INLINE void *sli_get_fp(const sl_slub_cache *s, const void *obj)
{
    uintptr_t *p = (uintptr_t *)(void *)((unsigned char *)obj + s->g.offset);
    return (void *)sli_fp_code(s, sl_load_relaxed(p), (uintptr_t)p);
}
SL_INLINE void sli_set_fp(const sl_slub_cache *s, void *obj, const void *fp)
{
    uintptr_t *p = (uintptr_t *)(void *)((unsigned char *)obj + s->g.offset);
    sl_store_relaxed(p, sli_fp_code(s, (uintptr_t)fp, (uintptr_t)p));
}

SL_INLINE uintptr_t sli_next_tid(const sl_slub_cache *s, uintptr_t tid) { return tid + s->tid_step; }

/*
 * __update_cpu_freelist_fast in variant fp (SL_SLUB_FP_*): replaces CPU c's
 * (old_fl, tid) with (new_fl, next tid).  Returns true if it did (always, for
 * plain writes).
 */
SL_INLINE bool sli_cpu_freelist_update(const sl_slub_cache *s, sli_slub_cpu *c, unsigned fp, void *old_fl,
                                       uintptr_t tid, void *new_fl)
{
    sl_dword old = {(uintptr_t)old_fl, tid}, new_ = {(uintptr_t)new_fl, sli_next_tid(s, tid)};
    switch (fp) {
    case SL_SLUB_FP_CMPXCHG:
        return sl_dw_cas_local(&c->fl_tid, old, new_);
    case SL_SLUB_FP_LOCKED:
        return sl_dw_cas(&c->fl_tid, old, new_);
    default:
        /* The RFC: c->freelist = next; c->tid = next_tid(tid); with no check at all. */
        sl_dw_write_plain(&c->fl_tid, new_);
        return true;
    }
}
/*
 * s->leaf: which leaf fast path sl_slub_alloc / sl_slub_free take (none: the
 * complete operation; sheaf: a pop from or push onto the CPU's main sheaf).
 */
enum {
    SLI_LEAF_NONE = 0,
    SLI_LEAF_CMPXCHG = 1 + SL_SLUB_FP_CMPXCHG,
    SLI_LEAF_LOCKED = 1 + SL_SLUB_FP_LOCKED,
    SLI_LEAF_PLAIN = 1 + SL_SLUB_FP_PLAIN,
    SLI_LEAF_RT = 1 + SL_SLUB_FP_RT,
    SLI_LEAF_SHEAF = 5
};
typedef int (*sli_alloc_fn)(sl_slub_cache *s, unsigned cpu, void **obj);
typedef int (*sli_free_fn)(sl_slub_cache *s, unsigned cpu, void *obj);
/* Sets s->leaf, s->alloc_fn and s->free_fn for the cache as it is now (cache.c). */
void sli_slub_set_leaf(sl_slub_cache *s);
/* The alloc and free functions for leaf mode `leaf` (alloc.c, free.c). */
sli_alloc_fn sli_slub_alloc_fn(unsigned leaf);
sli_free_fn sli_slub_free_fn(unsigned leaf);
/* The same within operation a, in the cache's variant; a->cas counts the CASes run. */
SL_INLINE bool sli_update_cpu_freelist(sli_act *a, void *old_fl, uintptr_t tid, void *new_fl)
{
    a->cas += a->s->fastpath != SL_SLUB_FP_PLAIN;
    return sli_cpu_freelist_update(a->s, a->c, a->s->fastpath, old_fl, tid, new_fl);
}

/*
 * kmem_cache_debug: a cache with a debug flag never uses per-CPU slabs (Linux
 * 6.2+): every allocation takes one object from a slab under the node's
 * list_lock (alloc_single_from_partial / _new_slab) and every free goes
 * back under it (free_to_partial_list), so the debug checks see each object
 * pass.  The model's object tracking alone (cfg.track) does not count.
 */
SL_INLINE bool sli_kmem_cache_debug(const sl_slub_cache *s) { return (s->flags & SL_SLUB_DEBUG_FLAGS) != 0; }

/*
 * barrier() between reading the tid and reading anything else of the CPU
 * (slab_alloc_node, do_slab_free): a CPU slab or freelist read after the tid
 * belongs to that tid or a later one, so if it changed in between the CAS
 * on the old tid fails.  Read the other way round, an interrupt could
 * replace c->slab between the two reads, and a free would push its object
 * onto the new slab's CPU freelist with a tid that still matches.  A
 * compiler barrier only: the kernel's is, and both reads are of this CPU's
 * own state.
 */
#define SLI_BARRIER() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* ---- shared between the files ------------------------------------- */
/* slub_set_cpu_partial: cpu_partial objects, cpu_partial_slabs = DIV_ROUND_UP(2 * objects, objects per slab). */
void sli_slub_set_cpu_partial(sl_slub_geometry *g, uint32_t objects);
/* allocate_slab: a new slab (at the fallback order if the cache's cannot be had), or NULL. */
sli_slub_slab *sli_slub_new_slab(sli_act *a);
void sli_slub_discard_slab(sli_act *a, sli_slub_slab *slab);
void sli_slub_add_partial(sli_act *a, sli_slub_slab *slab, bool tail);
void sli_slub_remove_partial(sli_act *a, sli_slub_slab *slab);
void sli_slub_deactivate_slab(sli_act *a, sli_slub_slab *slab, void *freelist);
void sli_slub_put_cpu_partial(sli_act *a, sli_slub_slab *slab, bool drain);
void sli_slub_put_partials(sli_act *a, sli_slub_slab *chain);
/* __flush_cpu_slab: a's CPU slab deactivated (flush_slab) and its partial list to the node lists. */
void sli_slub_flush_cpu_slab(sli_act *a);
/* The rules of kernel k's version (the default for {0, 0}); false for an unknown version. */
bool sli_slub_kernel_rules(const sl_slub_kernel *k, sl_slub_rules *out);
/*
 * Gives a new cache the sheaves its era and config call for (sheaf_cache.c):
 * none before 6.18 or without the 6.18 opt-in.  0 or SL_ENOMEM.
 */
int sli_slub_sheaves_create(sl_slub_cache *s, const sl_slub_config *cfg);
/* Flushes and frees the sheaves and barn, with no operation running (the cache's destroy). */
void sli_slub_sheaves_destroy(sl_slub_cache *s, sli_act *a);
/* ___slab_alloc: returns an object or NULL when no page is left. */
void *sli_slub_slab_alloc_slow(sli_act *a);
/*
 * __kmem_cache_alloc_bulk over the per-CPU slab (4.x to 6.18): n objects
 * into p with "interrupts off", no hooks run.  Returns n, or 0 with nothing
 * taken (no memory).
 */
unsigned sli_slub_alloc_bulk_cpu(sli_act *a, unsigned n, void **p);
/* __kmem_cache_alloc_bulk: n objects from slabs (7.0 refill_objects, a debug cache per object), or none; n or 0. */
unsigned sli_slub_alloc_bulk_slabs(sli_act *a, unsigned n, void **p);
/*
 * __kmem_cache_free_bulk: p[0..n-1], objects of this cache known valid
 * (taken from slabs by the model itself, or checked when they were freed),
 * back to their slabs as detached freelists, no hooks run.  p[] is
 * reordered.
 */
void sli_slub_free_bulk_slabs(sli_act *a, void **p, unsigned n);
/* __slab_free of a chain head..tail (cnt objects) of slab; 0 or SL_EDOUBLEFREE. */
int sli_slub_slab_free(sli_act *a, sli_slub_slab *slab, void *head, void *tail, uint32_t cnt);
/* ___slab_alloc of 7.0 (no per-CPU slab), a cache without debug flags: one object, or NULL. */
void *sli_slub_alloc_nocpu(sli_act *a);
/*
 * The CPU's irq_work (free_deferred_objects; 7.3 deferred_percpu_work_fn):
 * the objects kfree_nolock deferred, each to __slab_free; then (7.3) those
 * kfree_rcu_nolock deferred, each to kvfree_call_rcu, and the full rcu
 * sheaves it deferred, each to call_rcu.  Returns the objects handled.
 */
unsigned sli_slub_free_deferred(sli_act *a);
/* kvfree_call_rcu of an object already checked (sheaf_cache.c): the rcu_free sheaf, else the wait alone. */
void sli_slub_kvfree_call_rcu(sli_act *a, sli_slub_slab *slab, void *obj);
/*
 * refill_objects (7.0): between min and max objects from node partial slabs
 * (get_partial_node_bulk, get_freelist_nofreeze), then from new slabs.
 * Returns how many; fewer than min only when no page is left.
 */
unsigned sli_slub_refill_objects(sli_act *a, void **p, unsigned min, unsigned max);
/*
 * alloc_debug_processing, for a debug cache's object just taken from slab
 * under the node's list_lock: with CONSISTENCY_CHECKS, check_object (poison,
 * red zones); then init_object (red zones active, poison written again).
 * False when a check failed: the object is quarantined and the slab
 * disabled (sli_slub_disable_slab); the caller takes it off the list.
 */
bool sli_slub_alloc_debug(sli_act *a, sli_slub_slab *slab, void *obj);
/* Post-allocation bookkeeping of a tracked object; returns 0 or SL_EFREELIST (handed out twice). */
int sli_slub_alloc_hook(sli_act *a, void *obj);
/*
 * The free hook (debug_hooks): a disabled slab refused, double-free
 * detection by the tracked state, the red-zone check (CONSISTENCY_CHECKS),
 * re-poisoning.  obj is an object start of slab.  Returns 0 or the error
 * (the object is then not freed; quarantined for red-zone damage).
 */
int sli_slub_free_hook(sli_act *a, sli_slub_slab *slab, void *obj);
/* True if slab is a debug cache's slab a failed consistency check took out of use. */
SL_INLINE bool sli_slab_disabled(const sl_slub_cache *s, const sli_slub_slab *slab)
{
    return (s->flags & SL_SLUB_DEBUG_FLAGS) && sli_frozen(sl_dw_read(&slab->fc).hi);
}
void sli_slub_error(sli_act *a, int err, const sli_slub_slab *slab, const void *obj);
/* Where sli_fp_self_link caught a self link (event SLUB_HARDENED_DOUBLE_FREE arg0). */
enum {
    SLI_LINK_DO_SLAB_FREE = 0,
    SLI_LINK_SLAB_FREE = 1,
    SLI_LINK_DEACTIVATE = 2,
    SLI_LINK_DETACHED = 3,
    SLI_LINK_FREE_TO_PARTIAL = 4
};
/* Reports what sli_fp_self_link found. */
void sli_slub_hardened_bug(sli_act *a, unsigned site, const sli_slub_slab *slab, const void *obj);
/*
 * set_freepointer's BUG_ON(object == fp) of FREELIST_HARDENED, on every path
 * that links an object to a freelist head: true (after reporting
 * SL_EDOUBLEFREE and a SLUB_HARDENED_DOUBLE_FREE event) if linking obj to fp
 * would make it point to itself.  The kernel BUG()s there; the model
 * refuses the link and stays consistent.
 */
SL_INLINE bool sli_fp_self_link(sli_act *a, unsigned site, const sli_slub_slab *slab, const void *obj, const void *fp)
{
    if (SL_LIKELY(obj != fp || !(a->s->flags & SL_SLUB_FREELIST_HARDENED)))
        return false;
    sli_slub_hardened_bug(a, site, slab, obj);
    return true;
}

/* Starts an operation as CPU cpu; false for a bad cache or CPU. */
SL_INLINE bool sli_slub_begin(sl_slub_cache *s, unsigned cpu, sli_act *a)
{
    if (SL_UNLIKELY(!s || cpu >= s->ncpus))
        return false;
    a->s = s;
    a->c = &s->cpu[cpu];
    a->cpu = (uint16_t)cpu;
    a->op = SL_OP_BEGIN(s->trace);
    a->ctx = SLI_CTX_BLOCK;
    a->cas = 0;
    return true;
}

/* Reports err (event, ERRORS counter) for obj (may be NULL) of slab (may be NULL); returns err. */
SLI_COLD int sli_slub_bad_free(sli_act *a, int err, const sli_slub_slab *slab, const void *obj);
/*
 * The checks every free outside the leaf fast path runs before do_slab_free:
 * the lookup (virt_to_slab, which also rejects a pointer outside the zone or
 * in a slab of another cache: the kernel's cache_from_obj), the object-start
 * check (see sli_off_is_obj), and a debug cache's hook.  sli_slub_free_check
 * returns the slab, or NULL with *err set; sli_slub_free_checks (the slab
 * known) returns 0 or the error.
 */
SL_INLINE int sli_slub_free_checks(sli_act *a, sli_slub_slab *slab, void *obj)
{
    if (SL_UNLIKELY(!sli_off_is_obj(a->s, slab, sli_obj_offset(a->s, slab, obj))))
        return sli_slub_bad_free(a, SL_EMISALIGNED, slab, NULL);
    if (SL_UNLIKELY(a->s->debug_hooks))
        return sli_slub_free_hook(a, slab, obj);
    return SL_OK;
}
SL_INLINE sli_slub_slab *sli_slub_free_check(sli_act *a, void *obj, int *err)
{
    sli_slub_slab *slab = sli_slab_of(a->s, obj);
    if (SL_UNLIKELY(!slab)) {
        *err = sli_slub_bad_free(a, SL_EFOREIGN, NULL, NULL);
        return NULL;
    }
    *err = sli_slub_free_checks(a, slab, obj);
    return *err == SL_OK ? slab : NULL;
}

#endif /* SL_SLUB_INTERNAL_H */
