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
 *   next, slabs   the per-CPU partial chain (slab->next, slab->slabs): only
 *          the CPU whose chain it is touches them.
 *   lprev, lnext, on_node_partial   the node partial list: node list_lock.
 *   cpu    model-only: the CPU that froze the slab or holds it in its
 *          partial chain (for snapshots), written by that CPU.
 *
 * kmem_cache_cpu (sli_slub_cpu) belongs to the thread acting as that CPU:
 *   fl_tid.lo freelist (a raw object pointer), fl_tid.hi tid.  Changed only
 *          by a double-word CAS (or, in the `plain` variant's fast path, by
 *          the RFC's plain writes).  tid starts at the CPU number and steps by
 *          TID_STEP, so tid % TID_STEP is always the CPU.
 *   slab, partial  plain fields (the kernel changes them with irqs off;
 *          here no preemption point sits in those sections).
 *   stat[]  single-writer counters, relaxed atomics so other threads may sum.
 *
 * Object tracking (cache->info, one sli_slub_objinfo per object slot,
 * indexed by (pfn >> order) * objects + index) records each object's state
 * and its last alloc/free operation and CPU; the state moves by atomic
 * exchange so a double free or a double hand-out is seen even when two CPUs
 * race.
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
} sli_slub_slab;
SL_PAGE_PRIV_CHECK(sli_slub_slab);

typedef struct sli_slub_cpu {
    sl_dword fl_tid;
    sli_slub_slab *slab;
    sli_slub_slab *partial;
    uint64_t rng;       /* freelist shuffles of slabs this CPU creates */
    uint64_t stat[SL_SLUB_NR_STATS];
} __attribute__((aligned(SL_CACHELINE))) sli_slub_cpu;

typedef struct sli_slub_node {
    sl_spinlock list_lock;
    uint32_t nr_partial;           /* list_lock */
    sli_slub_slab *partial_head;   /* list_lock */
    sli_slub_slab *partial_tail;
    atomic_uint nr_slabs;          /* inc_slabs_node / dec_slabs_node */
    atomic_uint total_objects;
} __attribute__((aligned(SL_CACHELINE))) sli_slub_node;

/* Object states in the tracking table (also the snapshot's object states). */
enum {
    SLI_OBJ_FREE = 0,      /* on a freelist (never allocated counts as free) */
    SLI_OBJ_ALLOCATED = 1,
    SLI_OBJ_POISON_BAD = 2, /* quarantined: poison found overwritten */
    SLI_OBJ_REDZONE_BAD = 3, /* quarantined: red zone found overwritten */
    SLI_OBJ_DUP = 4,        /* handed out twice (a corrupt CPU freelist) */
};

typedef struct sli_slub_objinfo {
    uint8_t state;     /* SLI_OBJ_*, atomic */
    uint8_t alloc_cpu;
    uint8_t free_cpu;
    uint8_t pad_;
    uint32_t alloc_op; /* 0 = never */
    uint32_t free_op;
} sli_slub_objinfo;

struct sl_slub_cache {
    sl_slub_geometry g;
    uint16_t id;
    uint8_t fastpath;
    uint8_t bulk_free;
    uint32_t flags;
    unsigned ncpus;
    uint32_t slab_limit;       /* objects * size: offsets past it are no object */
    uint32_t size_mask;        /* size - 1 for a power-of-two size, else 0 */
    uintptr_t tid_step;        /* TID_STEP = roundup_pow_of_two(NR_CPUS) (CONFIG_PREEMPTION) */
    uintptr_t random;          /* s->random for FREELIST_HARDENED */
    uint32_t *random_seq;      /* FREELIST_RANDOM: a shuffled 0..objects-1 */
    sl_page_zone *zone;
    sl_trace *trace;
    sli_slub_objinfo *info;    /* NULL without tracking */
    size_t info_len;
    sli_slub_node node;
    sli_slub_cpu cpu[SL_SLUB_MAX_CPUS];
};

/* What one API operation carries through the paths. */
typedef struct sli_act {
    sl_slub_cache *s;
    sli_slub_cpu *c;
    uint32_t op;
    uint16_t cpu;
    unsigned cas;   /* double-word CASes executed (bulk free reports it) */
} sli_act;

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

SL_INLINE void sli_stat(sli_act *a, unsigned item, uint64_t n)
{
    uint64_t *p = &a->c->stat[item];
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

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
SL_INLINE uint32_t sli_obj_index(const sl_slub_cache *s, const sli_slub_slab *slab, const void *obj)
{
    return (uint32_t)(((const unsigned char *)obj - s->g.red_left_pad - sli_slab_base(s, slab)) / s->g.size);
}
/* The slab of this cache holding obj, or NULL (foreign, or a slab of another cache). */
SL_INLINE sli_slub_slab *sli_slab_of(const sl_slub_cache *s, const void *obj)
{
    sl_page *pg = sl_page_from_addr(s->zone, obj);
    if (!pg)
        return NULL;
    sli_slub_slab *slab = SL_PAGE_PRIV(pg, sli_slub_slab);
    return __atomic_load_n(&slab->cache, __ATOMIC_RELAXED) == s ? slab : NULL;
}
SL_INLINE sli_slub_objinfo *sli_info(const sl_slub_cache *s, const sli_slub_slab *slab, uint32_t i)
{
    return &s->info[(size_t)(sli_slab_pfn(s, slab) >> s->g.order) * s->g.objects + i];
}

/* The slab of this cache whose head page is at pfn, or NULL (quiescent use: snapshots, validate). */
SL_INLINE sli_slub_slab *sli_slab_at(const sl_slub_cache *s, uint32_t pfn)
{
    sl_page *pg = sl_page_from_pfn(s->zone, pfn);
    if (!pg || __atomic_load_n(&pg->flags, __ATOMIC_RELAXED) != SL_PG_HEAD)
        return NULL;
    sli_slub_slab *slab = SL_PAGE_PRIV(pg, sli_slub_slab);
    return __atomic_load_n(&slab->cache, __ATOMIC_RELAXED) == s ? slab : NULL;
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
    if (o < base + s->g.red_left_pad)
        return -1;
    uintptr_t off = o - base - s->g.red_left_pad;
    if (off % s->g.size || off / s->g.size >= s->g.objects)
        return -1;
    return (long)(off / s->g.size);
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
SL_INLINE void *sli_get_fp(const sl_slub_cache *s, const void *obj)
{
    uintptr_t *p = (uintptr_t *)(void *)((unsigned char *)obj + s->g.offset);
    return (void *)sli_fp_code(s, __atomic_load_n(p, __ATOMIC_RELAXED), (uintptr_t)p);
}
SL_INLINE void sli_set_fp(const sl_slub_cache *s, void *obj, const void *fp)
{
    uintptr_t *p = (uintptr_t *)(void *)((unsigned char *)obj + s->g.offset);
    __atomic_store_n(p, sli_fp_code(s, (uintptr_t)fp, (uintptr_t)p), __ATOMIC_RELAXED);
}

SL_INLINE uintptr_t sli_next_tid(const sl_slub_cache *s, uintptr_t tid) { return tid + s->tid_step; }

/* ---- shared between the files ------------------------------------- */
sli_slub_slab *sli_slub_new_slab(sli_act *a);
void sli_slub_discard_slab(sli_act *a, sli_slub_slab *slab);
void sli_slub_add_partial(sli_act *a, sli_slub_slab *slab, bool tail);
void sli_slub_remove_partial(sli_act *a, sli_slub_slab *slab);
void sli_slub_deactivate_slab(sli_act *a, sli_slub_slab *slab, void *freelist);
void sli_slub_put_cpu_partial(sli_act *a, sli_slub_slab *slab, bool drain);
void sli_slub_put_partials(sli_act *a, sli_slub_slab *chain);
/* ___slab_alloc: returns an object or NULL when no page is left. */
void *sli_slub_slab_alloc_slow(sli_act *a);
/* do_slab_free of a chain head..tail of cnt objects of `slab`: 0 or SL_EDOUBLEFREE (nothing freed). */
int sli_slub_do_slab_free(sli_act *a, sli_slub_slab *slab, void *head, void *tail, uint32_t cnt);
/* Post-allocation bookkeeping and debug checks; returns 0 or an error (object then quarantined). */
int sli_slub_alloc_hook(sli_act *a, void *obj);
/* Pre-free checks: returns the slab, or NULL with *err set (object quarantined for red zone errors). */
sli_slub_slab *sli_slub_free_check(sli_act *a, void *obj, int *err);
void sli_slub_error(sli_act *a, int err, const sli_slub_slab *slab, const void *obj);
bool sli_slub_begin(sl_slub_cache *s, unsigned cpu, sli_act *a);

#endif /* SL_SLUB_INTERNAL_H */
