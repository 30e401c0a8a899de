/*
 * slab.h - the SLAB allocator model (mm/slab.c, v4.6 .. v6.7): public API.
 *
 * Two halves.
 *
 * Geometry (no memory needed): what __kmem_cache_create() decides for a
 * cache -- buffer size, page order, objects per slab, where the freelist
 * array lives (the slab management type) and the colouring -- under the
 * rules after commit b03a017bebc4 ("introduce new slab management type,
 * OBJFREELIST_SLAB", v4.6) or the rules of its parent (no OBJFREELIST).
 * `slablab slab-types` prints it for a list of caches.
 *
 * Runtime: caches built on that geometry over the page allocator, with the
 * kernel's per-CPU array_cache, the per-node shared array and slab lists,
 * and kmalloc caches from 32 B to 4 MiB.  Each simulated CPU is one thread
 * that passes its CPU number to every call; see the runtime section below.
 */
#ifndef SL_SLAB_H
#define SL_SLAB_H

#include "../page/page.h"

/* ------------------------------------------------------------------ */
/* Geometry                                                            */

/* Which version of the management-type choice to apply. */
typedef enum sl_slab_rules {
    SL_SLAB_RULES_BEFORE = 0, /* parent of b03a017bebc4: OFF_SLAB or NORMAL only */
    SL_SLAB_RULES_AFTER = 1,  /* b03a017bebc4 and later: OBJFREELIST first */
} sl_slab_rules;

/* Where a slab's freelist array (one freelist_idx_t per object) lives. */
typedef enum sl_slab_mgmt {
    SL_SLAB_OBJFREELIST = 0,     /* inside one free object of the slab */
    SL_SLAB_NORMAL_LEFTOVER = 1, /* at the slab end, in bytes that were left over anyway */
    SL_SLAB_NORMAL = 2,          /* at the slab end, costing space objects could have used */
    SL_SLAB_OFF = 3,             /* in an object of a kmalloc cache */
} sl_slab_mgmt;
#define SL_SLAB_NMGMT 4
/* "OBJFREELIST", "NORMAL(leftover)", "NORMAL", "OFF". */
const char *sl_slab_mgmt_name(sl_slab_mgmt m);

/* Cache flags the geometry depends on (the kernel's SLAB_* of the same meaning). */
#define SL_SLAB_HWCACHE_ALIGN 0x1u  /* SLAB_HWCACHE_ALIGN */
#define SL_SLAB_TYPESAFE_RCU 0x2u   /* SLAB_TYPESAFE_BY_RCU (DESTROY_BY_RCU before 4.12) */
#define SL_SLAB_CTOR 0x4u           /* the cache has a constructor */
#define SL_SLAB_RECLAIM 0x8u        /* SLAB_RECLAIM_ACCOUNT */
#define SL_SLAB_NOLEAKTRACE 0x10u   /* SLAB_NOLEAKTRACE */
#define SL_SLAB_FLAGS_ALL 0x1fu

/* A cache as kmem_cache_create() receives it. */
#define SL_SLAB_NAME_MAX 64
typedef struct sl_slab_spec {
    char name[SL_SLAB_NAME_MAX];
    uint32_t object_size; /* 1 .. 4 MiB */
    uint32_t align;       /* requested alignment, 0 or a power of two <= 4 MiB */
    uint32_t flags;       /* SL_SLAB_* above */
} sl_slab_spec;

/* What __kmem_cache_create() decided. */
typedef struct sl_slab_geometry {
    sl_slab_mgmt mgmt;
    uint32_t size;          /* buffer size: object_size aligned, at least 16 */
    uint32_t align;         /* final alignment */
    uint32_t order;         /* a slab is PAGE_SIZE << order bytes */
    uint32_t num;           /* objects per slab */
    uint32_t left;          /* bytes neither objects nor on-slab freelist (colour space) */
    uint32_t freelist_size; /* num * sizeof(freelist_idx_t) */
    uint32_t off_cache_size;/* OFF: buffer size of the kmalloc cache holding the array, else 0 */
    uint32_t colour_off;    /* max(cache_line_size, align) */
    uint32_t colour;        /* left / colour_off: number of distinct colours */
    uint32_t waste;         /* per slab: bytes not holding objects, plus off_cache_size */
} sl_slab_geometry;

/* The kernel's constants on x86-64 with 4 KiB pages. */
#define SL_SLAB_IDX_SIZE 1u          /* sizeof(freelist_idx_t): (PAGE_SIZE >> 8) <= 16 */
#define SL_SLAB_OBJ_MAX_NUM 255u     /* (1 << 8*sizeof(freelist_idx_t)) - 1 */
#define SL_SLAB_OBJ_MIN_SIZE 16u
#define SL_SLAB_MAX_ORDER 1u         /* slab_max_order on machines with > 32 MB */
#define SL_SLAB_KMALLOC_MAX_ORDER 10u
#define SL_SLAB_CACHE_LINE 64u
#define SL_SLAB_KMALLOC_MIN 32u
#define SL_SLAB_KMALLOC_MAX ((size_t)4 << 20)
/* kmalloc caches: 32 64 96 128 192 256 512 1K ... 4M: 6 + 14. */
#define SL_SLAB_NKMALLOC 20u

/*
 * The kmalloc caches' geometry under `rules`, in kmalloc index order (index
 * 0 = kmalloc-32 ... 19 = kmalloc-4M; see sl_slab_kmalloc_size).  They are
 * computed in the kernel's creation order (ascending, 96 after 64, 192 after
 * 128), each OFF_SLAB check seeing only the caches created before it.
 */
typedef struct sl_slab_kmalloc_table {
    sl_slab_rules rules;
    unsigned created; /* entries 0 .. created-1 exist (all, once initialised) */
    sl_slab_geometry g[SL_SLAB_NKMALLOC];
} sl_slab_kmalloc_table;
void sl_slab_kmalloc_table_init(sl_slab_kmalloc_table *t, sl_slab_rules rules);
/* Object size of kmalloc index i (0 .. SL_SLAB_NKMALLOC-1). */
uint32_t sl_slab_kmalloc_size(unsigned i);
/* "kmalloc-32" .. "kmalloc-4M", as the kernel names them. */
void sl_slab_kmalloc_name(unsigned i, char *buf, size_t len);
/* The kmalloc index serving `size` bytes (kmalloc_slab), or -1 for 0 or > 4 MiB. */
int sl_slab_kmalloc_index(size_t size);

/*
 * Runs __kmem_cache_create()'s geometry for `spec` under the table's rules
 * (the table supplies kmalloc_slab() for the OFF_SLAB checks).  Returns 0,
 * SL_EINVAL for a size of 0 or above 4 MiB, a bad alignment or unknown flags,
 * or SL_ENOMEM when no order fits (the kernel's -E2BIG).
 */
int sl_slab_geometry_compute(const sl_slab_spec *spec, const sl_slab_kmalloc_table *kt,
                             sl_slab_geometry *out);

/* cache_estimate(): objects in PAGE_SIZE << order bytes; *left gets the remainder. */
unsigned sl_slab_cache_estimate(unsigned order, size_t size, bool array_outside, size_t *left);

/* ------------------------------------------------------------------ */
/* Cache lists (input of slab-types)                                  */

/*
 * A growable list of specs.  The parsers never crash on bad input: they
 * return SL_EINVAL and write "line N: what is wrong" to `err`.
 */
typedef struct sl_slab_spec_list {
    sl_slab_spec *v;
    unsigned n, cap;
} sl_slab_spec_list;
void sl_slab_spec_list_free(sl_slab_spec_list *l);
/* Appends a copy; returns 0 or SL_ENOMEM. */
int sl_slab_spec_list_add(sl_slab_spec_list *l, const sl_slab_spec *s);

/*
 * The --caches text format (docs/slab.md): one cache per line,
 *   NAME OBJECT_SIZE [align=N] [hwcache] [rcu] [ctor] [reclaim] [noleaktrace]
 * '#' starts a comment; blank lines are ignored.  Returns 0 or SL_EINVAL /
 * SL_ENOMEM.
 */
int sl_slab_caches_parse(const char *text, size_t len, sl_slab_spec_list *out, char *err, size_t errlen);

/*
 * Reads a /sys/kernel/slab-like directory: one folder per cache holding at
 * least object_size; align, ctor, destroy_by_rcu, hwcache_align and
 * reclaim_account are used when present.  Symbolic links (SLUB's aliases of
 * merged caches) are skipped.  Entries are sorted by name.  Returns 0,
 * SL_EINVAL (unreadable directory, or a cache without a readable
 * object_size) or SL_ENOMEM.
 */
int sl_slab_caches_read_sysfs(const char *dir, sl_slab_spec_list *out, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Runtime                                                             */

/*
 * Threads and CPUs.  Every call that acts takes the acting CPU; each CPU
 * number must be used by one thread at a time (that thread owns the CPU's
 * array_cache in every cache, as the kernel's code owns it with interrupts
 * off).  Objects may be freed on any CPU (a remote free goes into the
 * freeing CPU's array).  Node lists and the shared array are shared under
 * the node's list_lock.  One memory node (no alien caches).
 *
 * Calls marked "quiescent" need every CPU idle (no call in flight), like
 * the kernel's slab_mutex sections that IPI every CPU.
 */
#define SL_SLAB_MAX_CPUS 64
#define SL_SLAB_MAX_CACHES 64

typedef struct sl_slab sl_slab;
typedef struct sl_slab_cache sl_slab_cache;

typedef struct sl_slab_config {
    unsigned ncpus;       /* 1 .. SL_SLAB_MAX_CPUS */
    size_t arena_bytes;   /* page allocator arena; at least 8 MiB (room for kmalloc-4M) */
    sl_slab_rules rules;  /* before/after OBJFREELIST_SLAB, for every cache */
    sl_trace *trace;      /* event rings (may be NULL); needs ncpus rings */
} sl_slab_config;

/* Operation codes in OP_BEGIN/OP_END events of this model. */
enum {
    SL_SLAB_OP_ALLOC = 201,
    SL_SLAB_OP_FREE = 202,
    SL_SLAB_OP_KMALLOC = 203,
    SL_SLAB_OP_KFREE = 204,
    SL_SLAB_OP_SHRINK = 205,
    SL_SLAB_OP_DRAIN = 206,
};

/*
 * Creates the page allocator and the kmalloc caches (32 B .. 4 MiB).
 * Returns 0, SL_EINVAL for a bad config, or SL_ENOMEM.
 */
int sl_slab_create(const sl_slab_config *cfg, sl_slab **out);
/* Frees everything, objects still allocated included.  Quiescent. */
void sl_slab_destroy(sl_slab *sl);
sl_page_zone *sl_slab_zone(sl_slab *sl);

/*
 * kmem_cache_create: geometry by sl_slab_geometry_compute, array caches by
 * enable_cpucache (limit 120/54/24/8/1 by size, batchcount (limit+1)/2,
 * a shared array of 8 batches when size <= PAGE_SIZE and ncpus > 1).
 * The CTOR flag only affects geometry: no constructor runs.  Returns 0,
 * SL_EINVAL (bad spec, too many caches) or SL_ENOMEM.  Quiescent.
 */
int sl_slab_cache_create(sl_slab *sl, const sl_slab_spec *spec, sl_slab_cache **out);
/*
 * kmem_cache_destroy: drains and frees the cache.  Returns 0, or SL_EBUSY
 * (cache kept) when objects are still allocated.  Quiescent.
 */
int sl_slab_cache_destroy(sl_slab_cache *c);

/* kmem_cache_alloc on `cpu`: an object, or NULL when the arena is exhausted (or cpu is out of range). */
void *sl_slab_cache_alloc(sl_slab_cache *c, unsigned cpu);
/*
 * kmem_cache_free on `cpu`.  Returns 0, or (debug builds) SL_EFOREIGN (not
 * an object of this cache), SL_EMISALIGNED (inside one of its slabs but not
 * at an object start), SL_EDOUBLEFREE (not allocated), SL_EINVAL (bad cpu).
 * A rejected free changes nothing.
 */
int sl_slab_cache_free(sl_slab_cache *c, unsigned cpu, void *obj);

/* kmalloc on `cpu`: NULL for size 0, size > 4 MiB, or an exhausted arena. */
void *sl_slab_kmalloc(sl_slab *sl, unsigned cpu, size_t size);
/* kfree on `cpu`: NULL is a no-op (0); otherwise as sl_slab_cache_free for the object's cache. */
int sl_slab_kfree(sl_slab *sl, unsigned cpu, const void *ptr);
/* The kmalloc cache serving `size` (kmalloc_slab), or NULL. */
sl_slab_cache *sl_slab_kmalloc_cache(sl_slab *sl, size_t size);

/* do_drain for every cache on `cpu`, by the thread acting as `cpu`: empties its array_caches. */
void sl_slab_drain_cpu(sl_slab *sl, unsigned cpu);
/*
 * One cache_reap run on `cpu` (by its thread) with the node's reap timer
 * expired, for every cache: this CPU's array loses (limit + 4) / 5 objects
 * unless it was touched since the last run (then it is only marked
 * untouched); the shared array likewise; then, unless a free slab was used
 * since the last run, (free_limit + 5 * num - 1) / (5 * num) free slabs go
 * back to the page allocator.  The kernel runs this every 2 s per CPU.
 */
void sl_slab_reap(sl_slab *sl, unsigned cpu);
/*
 * __kmem_cache_shrink for every cache: drains all CPU and shared arrays and
 * destroys every free slab.  Returns the number of slabs destroyed.  Quiescent.
 */
unsigned sl_slab_shrink(sl_slab *sl);

/* A cache's geometry and counters (counters read without locks: a snapshot). */
typedef struct sl_slab_cache_info {
    char name[SL_SLAB_NAME_MAX];
    unsigned id;
    uint32_t object_size;
    sl_slab_geometry g;
    unsigned limit, batchcount, shared_limit; /* shared_limit 0: no shared array */
    unsigned long total_slabs, free_slabs, free_objects; /* node counters */
    unsigned long active_objs; /* total_slabs * num - free_objects (includes array caches) */
    unsigned long cpu_avail;   /* objects in all CPU arrays */
    unsigned long shared_avail;/* objects in the shared array */
    unsigned long grown, destroyed, alloc_hit, alloc_miss, free_hit, free_miss;
} sl_slab_cache_info;
void sl_slab_cache_info_get(const sl_slab_cache *c, sl_slab_cache_info *out);
/* Caches by id: 0 .. count-1 (kmalloc caches first); NULL past the end. */
unsigned sl_slab_cache_count(sl_slab *sl);
sl_slab_cache *sl_slab_cache_by_id(sl_slab *sl, unsigned id);

/*
 * Checks every invariant: each object is in exactly one place (a CPU array,
 * the shared array, its slab's freelist, or allocated); freelist arrays hold
 * distinct in-range indexes where the management type puts them (OBJFREELIST:
 * in the free object at the array's last position, NULL when full); list
 * membership matches fullness; node counters equal the walk; in debug
 * builds the allocated set equals the live-object bitmap; and the page
 * allocator's own sl_page_validate.  Returns 0 or SL_ECORRUPT (and a
 * description in `why` when given).  Quiescent.
 */
int sl_slab_validate(sl_slab *sl, char *why, size_t whylen);

#endif /* SL_SLAB_H */
