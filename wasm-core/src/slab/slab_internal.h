/*
 * slab_internal.h - the SLAB model's data structures, shared by its files.
 *
 *   sl_slab           the world: a page zone, the variant's kmalloc table,
 *                     the caches (ids 0..19 the kmalloc indexes), and in
 *                     debug builds each CPU's current operation number and
 *                     a live-object bitmap.
 *   sl_slab_cache     struct kmem_cache: constant geometry; one
 *                     sl_slab_array (struct array_cache) per CPU; one node.
 *   sl_slab_node      struct kmem_cache_node: slabs_partial / slabs_full /
 *                     slabs_free, counters, the shared array, list_lock.
 *   slab_page         the SLAB fields of struct page, overlaid on the head
 *                     page's model-private area: slab_cache, s_mem,
 *                     freelist, active, lru.  A kmalloc_large block (6.1 on)
 *                     is a head page with no cache and list SLAB_LIST_LARGE.
 *
 * Who may touch what:
 *   - cache geometry, limits, ids: written at creation (quiescent), then
 *     read-only.
 *   - cpu[c] (avail, limit, batchcount, touched, entry[]): only the thread
 *     acting as CPU c.
 *   - node lists, total_slabs, free_slabs, free_objects, free_limit,
 *     colour_next, free_touched, next_reap (the kernel reads and writes
 *     next_reap and free_touched racily), the shared array and every slab_page field
 *     of a slab that is on a list: under node.list_lock.  free_objects and
 *     shared->avail are also read without the lock by cache_alloc_refill's
 *     early check (as in the kernel), so they are written with relaxed
 *     atomic stores and read with relaxed atomic loads there.
 *   - a slab between cache_grow_begin and cache_grow_end is on no list and
 *     belongs to the growing thread.
 *   - the freelist array: with its slab (OBJFREELIST: it lives inside a free
 *     object, which nobody else may touch while it is free in the slab).
 *   - stats: grown/destroyed are relaxed atomic counters (slow paths); the
 *     hit/miss counters sit in each CPU's array, written by its owner.
 *   - live bitmap (debug): one bit per 16-byte granule of the arena, set
 *     while the object starting there is held by a user (a kmalloc_large
 *     block: its first granule); atomic fetch-or / fetch-and, so two racing
 *     frees of one object cannot both succeed.
 *   - cur_op[c] (debug): the operation CPU c is in, for its events; only the
 *     thread acting as CPU c.  reap_clock: the latest reap time any CPU
 *     passed, a relaxed atomic maximum (read by cache creation, quiescent).
 *
 * Invariants (sl_slab_validate): an object is in exactly one of: a CPU
 * array, the shared array, its slab's free set (freelist positions
 * active..num-1), or held by a user; slabs_full holds slabs with active ==
 * num, slabs_partial 0 < active < num, slabs_free active == 0; free_objects
 * = sum of (num - active) over listed slabs.
 */
#ifndef SL_SLAB_INTERNAL_H
#define SL_SLAB_INTERNAL_H

#include "slab.h"

typedef uint8_t freelist_idx_t;
_Static_assert(sizeof(freelist_idx_t) == SL_SLAB_IDX_SIZE, "freelist_idx_t is one byte with 4 KiB pages");

#define RD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WR(x, v) sl_store_relaxed(&(x), (v))
#define STAT_INC(x) ((void)__atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED))

/*
 * struct array_cache.  The hit/miss counters (the kernel's STATS, there
 * global atomics under DEBUG) are per array here, written by the owning CPU
 * with relaxed stores, so counting costs the fast path no locked
 * instruction; sl_slab_cache_info_get sums them.
 */
typedef struct sl_slab_array {
    unsigned avail;
    unsigned limit;
    unsigned batchcount;
    unsigned touched;
    unsigned long alloc_hit, alloc_miss, free_hit, free_miss;
    void *entry[];
} sl_slab_array;
/* Counts an event of the owning CPU (relaxed: remote readers only sum). */
#define CPU_STAT_INC(x) WR(x, (x) + 1)

/* The SLAB fields of struct page (head page's priv area). */
typedef struct slab_page {
    sl_slab_cache *cache; /* page->slab_cache */
    unsigned char *s_mem; /* first object: page address + colour offset */
    void *freelist;       /* freelist_idx_t array; OBJFREELIST: inside a free object, NULL when full */
    uint32_t active;      /* objects taken from the freelist */
    uint32_t list;        /* SLAB_LIST_* the slab is on (what the kernel infers from lru) */
    sl_page *next, *prev; /* lru: node list links */
} slab_page;
SL_PAGE_PRIV_CHECK(slab_page);
#define SLAB_OF(pg) SL_PAGE_PRIV(pg, slab_page)

enum { SLAB_LIST_FREE = 0, SLAB_LIST_PARTIAL = 1, SLAB_LIST_FULL = 2, SLAB_LIST_NONE = 3, SLAB_LIST_LARGE = 4 };

typedef struct slab_list {
    sl_page *first, *last;
    unsigned long n;
} slab_list;

/* struct kmem_cache_node. */
typedef struct sl_slab_node {
    _Alignas(SL_CACHELINE) sl_spinlock list_lock;
    slab_list partial, full, free;
    unsigned long total_slabs;
    unsigned long free_slabs;
    unsigned long free_objects;
    unsigned long free_limit;
    unsigned colour_next;
    unsigned free_touched;
    uint64_t next_reap;    /* reap time (ms) at which cache_reap's node part is next due */
    sl_slab_array *shared; /* NULL without a shared array */
} sl_slab_node;

struct sl_slab_cache {
    sl_slab *sl;
    unsigned id;
    char name[SL_SLAB_NAME_MAX];
    uint32_t object_size;
    uint32_t size; /* buffer size */
    uint32_t num;
    uint32_t order;
    uint32_t colour, colour_off;
    uint32_t freelist_size;
    uint32_t reciprocal_m; /* reciprocal_value(size) */
    uint8_t reciprocal_sh1, reciprocal_sh2;
    sl_slab_mgmt mgmt;
    bool init_on_free; /* slab_want_init_on_free: the boot option, and no ctor or RCU */
    sl_slab_geometry g;
    sl_slab_cache *freelist_cache; /* OFF: the kmalloc cache holding freelist arrays */
    unsigned limit, batchcount, shared_limit;
    sl_slab_array **cpu; /* ncpus arrays, each cache-line aligned */
    sl_slab_node node;
    struct {
        unsigned long grown, destroyed;
    } stats;
};

struct sl_slab {
    sl_page_zone zone;
    unsigned ncpus;
    sl_trace *trace;
    sl_slab_kmalloc_table kt; /* kt.variant: the resolved variant */
    size_t kmalloc_max_cache; /* KMALLOC_MAX_CACHE_SIZE: above it kmalloc_large */
    uint64_t reap_clock;      /* latest now_ms passed to sl_slab_reap */
    unsigned ncaches;
    sl_slab_cache *caches[SL_SLAB_MAX_CACHES]; /* by id; ids 0..19 are the kmalloc indexes */
#if SL_DEBUG
    uint32_t cur_op[SL_SLAB_MAX_CPUS];
    uint64_t *live; /* one bit per 16-byte granule of the arena */
#endif
};

/* reciprocal_divide(a, reciprocal_value(size)) == a / size for 32-bit a. */
SL_INLINE uint32_t sli_slab_obj_to_index(const sl_slab_cache *c, const slab_page *s, const void *obj)
{
    uint32_t a = (uint32_t)((const unsigned char *)obj - s->s_mem);
    uint32_t t = (uint32_t)(((uint64_t)a * c->reciprocal_m) >> 32);
    return (t + ((a - t) >> c->reciprocal_sh1)) >> c->reciprocal_sh2;
}
SL_INLINE void *sli_slab_index_to_obj(const sl_slab_cache *c, const slab_page *s, unsigned idx)
{
    return s->s_mem + (size_t)c->size * idx;
}

/*
 * An event with every field given (SL_EVENT's defaults clash with
 * -Woverride-init), stamped with the acting CPU's current operation.
 * SLI_WEV is the same for the world (cache 0xffff).
 */
#if defined(SLABLAB_BENCH)
/* Unevaluated: nothing is computed, but the arguments count as used. */
#define SLI_EV(c, cpu, kind, slabpfn, objidx, a0, a1, a2)                                                              \
    ((void)sizeof(c), (void)sizeof(cpu), (void)sizeof(slabpfn), (void)sizeof(objidx), (void)sizeof(a0),                \
     (void)sizeof(a1), (void)sizeof(a2))
#define SLI_WEV(sl, cpu, kind, a0, a1, a2)                                                                             \
    ((void)sizeof(sl), (void)sizeof(cpu), (void)sizeof(a0), (void)sizeof(a1), (void)sizeof(a2))
#else
void sli_slab_event(const sl_slab *sl, unsigned cache, unsigned cpu, unsigned kind, uint32_t slab, uint32_t obj,
                    uint32_t a0, uint32_t a1, uint32_t a2);
#define SLI_EV(c, cpu, kind, slabpfn, objidx, a0, a1, a2)                                                              \
    sli_slab_event((c)->sl, (c)->id, (cpu), (kind), (slabpfn), (objidx), (a0), (a1), (a2))
#define SLI_WEV(sl, cpu, kind, a0, a1, a2)                                                                             \
    sli_slab_event((sl), 0xffff, (cpu), (kind), SL_NONE32, SL_NONE32, (a0), (a1), (a2))
#endif

/*
 * OP_BEGIN / OP_END of an API operation on `cpu` (cache 0xffff for the
 * world's): begin takes the next operation number and makes it the CPU's
 * current one; end clears it.  Nothing in SLABLAB_BENCH builds.
 */
uint32_t sli_slab_op_begin(sl_slab *sl, unsigned cpu, unsigned cache, uint32_t code, uint32_t arg);
void sli_slab_op_end(sl_slab *sl, unsigned cpu, unsigned cache, uint32_t op, uint32_t code, uint32_t result);

/* pfn of a slab's head page (for events). */
SL_INLINE uint32_t sli_slab_pfn(const sl_slab_cache *c, const sl_page *pg) { return sl_page_pfn(&c->sl->zone, pg); }

/* The slab pfn and object index of an object of cache c (for events); SL_NONE32 when not one. */
uint32_t sli_slab_obj_pfn(const sl_slab_cache *c, const void *obj);
uint32_t sli_slab_obj_index(const sl_slab_cache *c, const void *obj);
/* An off-slab freelist object as GROW and DESTROY events name it: pfn << 8 | index, or SL_NONE32. */
uint32_t sli_slab_freelist_ref(const sl_slab_cache *c, const void *freelist);

/* Node list helpers (list_lock held, or the slab is private to the caller). */
void sli_slab_list_add(slab_list *l, sl_page *pg, unsigned which);      /* list_add: at the head */
void sli_slab_list_add_tail(slab_list *l, sl_page *pg, unsigned which); /* list_add_tail */
void sli_slab_list_del(slab_list *l, sl_page *pg);

/* free_block(): list_lock held; slabs to destroy are chained on *destroy. */
void sli_slab_free_block(sl_slab_cache *c, unsigned cpu, void **objs, unsigned n, slab_list *destroy);
/* slabs_destroy(): outside the lock. */
void sli_slab_destroy_list(sl_slab_cache *c, unsigned cpu, slab_list *destroy);
/* drain_freelist(): destroys up to `tofree` free slabs; returns how many. */
unsigned sli_slab_drain_freelist(sl_slab_cache *c, unsigned cpu, unsigned tofree);
/* Frees to the cache on `cpu` without debug checks (internal frees: off-slab freelists). */
void sli_slab_cache_free_raw(sl_slab_cache *c, unsigned cpu, void *obj);

#if SL_DEBUG
SL_INLINE size_t sli_slab_granule(const sl_slab *sl, const void *p)
{
    return (size_t)((const unsigned char *)p - sl->zone.base) >> 4;
}
#endif

#endif /* SL_SLAB_INTERNAL_H */
