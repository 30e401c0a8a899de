/*
 * slab.h - the SLAB allocator model (mm/slab.c, v4.10 .. v6.7): public API.
 *
 * Three parts.
 *
 * Geometry (no memory needed): what __kmem_cache_create() decides for a
 * cache -- buffer size, page order, objects per slab, where the freelist
 * array lives (the slab management type) and the colouring -- under the
 * rules after commit b03a017bebc4 ("introduce new slab management type,
 * OBJFREELIST_SLAB", v4.6) or the rules of its parent (no OBJFREELIST), for
 * a kernel version from 4.10 to 6.7 (the last with SLAB).  The version
 * decides which kmalloc caches exist and how they are aligned, and whether
 * init_on_free can be on.
 *
 * Kernels' caches (input of `slablab slab-types`): lists of caches from a
 * --caches text, a /sys/kernel/slab tree or a /proc/slabinfo file, and the
 * prediction for each of its management type under both rules and of the
 * array-cache tunables, beside what a SLAB kernel's slabinfo reports.
 *
 * Runtime: caches built on that geometry over the page allocator, with the
 * kernel's per-CPU array_cache, the per-node shared array and slab lists,
 * and the version's kmalloc caches.  Each simulated CPU is one thread that
 * passes its CPU number to every call; see the runtime section below.
 */
#ifndef SL_SLAB_H
#define SL_SLAB_H

#include "../page/page.h"

/* ------------------------------------------------------------------ */
/* Kernel versions and the model variant                               */

/* A kernel version as a number: SL_SLAB_KERNEL(6, 7) == 607. */
#define SL_SLAB_KERNEL(major, minor) ((major)*100u + (minor))
#define SL_SLAB_KERNEL_FIRST SL_SLAB_KERNEL(4, 10) /* grow_begin/grow_end, total/free slab counters */
#define SL_SLAB_KERNEL_LAST SL_SLAB_KERNEL(6, 7)   /* SLAB was removed in 6.8 */
/* The version rules (docs/slab.md, "Kernel versions"). */
#define SL_SLAB_KERNEL_INIT_ON_FREE SL_SLAB_KERNEL(5, 3) /* init_on_free refuses OBJFREELIST */
#define SL_SLAB_KERNEL_POW2_ALIGN SL_SLAB_KERNEL(5, 4)   /* kmalloc-2^n aligned to 2^n */
#define SL_SLAB_KERNEL_KMALLOC_8K SL_SLAB_KERNEL(6, 1)   /* kmalloc caches end at 8 KiB */

/* Whether v names a released kernel from 4.10 to 6.7 (4.10-4.20, 5.0-5.19, 6.0-6.7). */
bool sl_slab_kernel_valid(unsigned v);
/* Parses "X.Y" (e.g. "5.4"); returns SL_OK, or SL_EINVAL for anything else or a version out of range. */
int sl_slab_kernel_parse(const char *s, unsigned *out);
/* Writes "X.Y". */
void sl_slab_kernel_name(unsigned v, char *buf, size_t len);

/* Which version of the management-type choice to apply. */
typedef enum sl_slab_rules {
    SL_SLAB_RULES_BEFORE = 0, /* parent of b03a017bebc4: OFF_SLAB or NORMAL only */
    SL_SLAB_RULES_AFTER = 1,  /* b03a017bebc4 and later: OBJFREELIST first */
} sl_slab_rules;

/* What a model instance follows: the rules, the kernel version, the boot options. */
typedef struct sl_slab_variant {
    sl_slab_rules rules;
    unsigned kernel;   /* SL_SLAB_KERNEL(x, y), 4.10 .. 6.7; 0 means SL_SLAB_KERNEL_LAST */
    bool init_on_free; /* booted with init_on_free=1 (5.3 and later): no OBJFREELIST, objects zeroed on free */
} sl_slab_variant;
/*
 * Resolves kernel 0 to SL_SLAB_KERNEL_LAST and checks the rest: SL_OK, or
 * SL_EINVAL for bad rules, a kernel out of range, or init_on_free before 5.3.
 */
int sl_slab_variant_resolve(sl_slab_variant *v);

/* ------------------------------------------------------------------ */
/* Geometry                                                            */

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
#define SL_SLAB_HWCACHE_ALIGN 0x1u /* SLAB_HWCACHE_ALIGN */
#define SL_SLAB_TYPESAFE_RCU 0x2u  /* SLAB_TYPESAFE_BY_RCU (DESTROY_BY_RCU before 4.12) */
#define SL_SLAB_CTOR 0x4u          /* the cache has a constructor */
#define SL_SLAB_RECLAIM 0x8u       /* SLAB_RECLAIM_ACCOUNT */
#define SL_SLAB_NOLEAKTRACE 0x10u  /* SLAB_NOLEAKTRACE */
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
    uint32_t size;           /* buffer size: object_size aligned, at least 16 */
    uint32_t align;          /* final alignment */
    uint32_t order;          /* a slab is PAGE_SIZE << order bytes */
    uint32_t num;            /* objects per slab */
    uint32_t left;           /* bytes neither objects nor on-slab freelist (colour space) */
    uint32_t freelist_size;  /* num * sizeof(freelist_idx_t) */
    uint32_t off_cache_size; /* OFF: buffer size of the kmalloc cache holding the array, else 0 */
    uint32_t colour_off;     /* max(cache_line_size, align) */
    uint32_t colour;         /* left / colour_off: number of distinct colours */
    uint32_t waste;          /* per slab: bytes not holding objects, plus off_cache_size */
} sl_slab_geometry;

/* The kernel's constants on x86-64 with 4 KiB pages. */
#define SL_SLAB_IDX_SIZE 1u      /* sizeof(freelist_idx_t): (PAGE_SIZE >> 8) <= 16 */
#define SL_SLAB_OBJ_MAX_NUM 255u /* (1 << 8*sizeof(freelist_idx_t)) - 1 */
#define SL_SLAB_OBJ_MIN_SIZE 16u
#define SL_SLAB_MAX_ORDER 1u /* slab_max_order on machines with > 32 MB */
#define SL_SLAB_KMALLOC_MAX_ORDER 10u
#define SL_SLAB_CACHE_LINE 64u
#define SL_SLAB_KMALLOC_MIN 32u
#define SL_SLAB_KMALLOC_MAX ((size_t)4 << 20) /* KMALLOC_MAX_SIZE: the largest kmalloc, and the largest object */
/* kmalloc caches: 32 64 96 128 192 256 512 1K ... 4M: 6 + 14 (before 6.1); up to 8K: 11 (6.1 on). */
#define SL_SLAB_NKMALLOC 20u
#define SL_SLAB_NKMALLOC_8K 11u
/* kmalloc index of the cache kmem_cache_init creates first (INDEX_NODE: kmalloc-128 on x86-64). */
#define SL_SLAB_KMALLOC_INDEX_NODE 3u

/*
 * The kmalloc caches' geometry for a variant, in kmalloc index order (index
 * 0 = kmalloc-32 ... see sl_slab_kmalloc_size).  They are computed in the
 * kernel's creation order -- kmalloc-128 first (kmem_cache_init creates the
 * cache for struct kmem_cache_node before any other), then ascending with
 * 96 after 64 and 192 after 128 -- each OFF_SLAB check seeing only the
 * caches created before it, as at boot.  From 5.4 a power-of-two cache is
 * aligned to its size; from 6.1 the last one is kmalloc-8k.
 */
typedef struct sl_slab_kmalloc_table {
    sl_slab_variant variant; /* resolved */
    unsigned nkmalloc;       /* kmalloc caches of this kernel: indexes 0 .. nkmalloc-1 */
    uint32_t created;        /* bit i: kmalloc index i exists (all nkmalloc once initialised) */
    sl_slab_geometry g[SL_SLAB_NKMALLOC];
} sl_slab_kmalloc_table;
/* Returns SL_OK, or SL_EINVAL for a variant sl_slab_variant_resolve refuses. */
int sl_slab_kmalloc_table_init(sl_slab_kmalloc_table *t, const sl_slab_variant *v);
/* KMALLOC_MAX_CACHE_SIZE: the largest kmalloc served by a cache (above it, the page allocator). */
size_t sl_slab_kmalloc_max_cache(const sl_slab_kmalloc_table *t);
/* The kmalloc index kmem_cache_init creates at `step` (0 .. nkmalloc-1): INDEX_NODE, then the others ascending. */
unsigned sl_slab_kmalloc_boot_index(unsigned step);
/* The spec kmalloc index i is created with under the table's kernel (name, size, alignment, HWCACHE_ALIGN). */
sl_slab_spec sl_slab_kmalloc_spec(const sl_slab_kmalloc_table *t, unsigned i);
/* Object size of kmalloc index i (0 .. SL_SLAB_NKMALLOC-1). */
uint32_t sl_slab_kmalloc_size(unsigned i);
/* "kmalloc-32" .. "kmalloc-4M", as the kernel names them. */
void sl_slab_kmalloc_name(unsigned i, char *buf, size_t len);
/* The kmalloc index of a cache named "kmalloc-96", "kmalloc-1k", ... (not the -cg/-rcl/dma- families), or -1. */
int sl_slab_kmalloc_index_of_name(const char *name);
/* The kmalloc index serving `size` bytes (kmalloc_slab), or -1 for 0 or > 4 MiB. */
int sl_slab_kmalloc_index(size_t size);

/*
 * Runs __kmem_cache_create()'s geometry for `spec` under the table's variant
 * (the table supplies kmalloc_slab() for the OFF_SLAB checks).  Returns 0,
 * SL_EINVAL for a size of 0 or above 4 MiB, a bad alignment or unknown flags,
 * or SL_ENOMEM when no order fits (the kernel's -E2BIG).
 */
int sl_slab_geometry_compute(const sl_slab_spec *spec, const sl_slab_kmalloc_table *kt, sl_slab_geometry *out);

/* cache_estimate(): objects in PAGE_SIZE << order bytes; *left gets the remainder. */
unsigned sl_slab_cache_estimate(unsigned order, size_t size, bool array_outside, size_t *left);

/* enable_cpucache()'s choice for a buffer size on `ncpus` CPUs, as /proc/slabinfo prints it. */
typedef struct sl_slab_tunables {
    uint32_t limit;      /* 120 up to 256 B, 54 up to 1 KiB, 24 up to 4 KiB, 8 up to 128 KiB, then 1 */
    uint32_t batchcount; /* (limit + 1) / 2 */
    uint32_t shared;     /* sharedfactor: 8 for buffers up to a page with more than one CPU, else 0 */
} sl_slab_tunables;
sl_slab_tunables sl_slab_tunables_for(uint32_t size, unsigned ncpus);

/* ------------------------------------------------------------------ */
/* Kernels' caches (input of slab-types)                              */

/* What a SLAB kernel's /proc/slabinfo says about a cache. */
typedef struct sl_slab_reported {
    uint32_t order; /* log2 of <pagesperslab> */
    uint32_t num;   /* <objperslab> */
    uint32_t limit, batchcount, shared;
} sl_slab_reported;

/*
 * A growable list of specs.  `reported` is NULL, or (a /proc/slabinfo file
 * of a SLAB kernel) one entry per spec.  The parsers never crash on bad
 * input: they return SL_EINVAL and write "line N: what is wrong" to `err`.
 */
typedef struct sl_slab_spec_list {
    sl_slab_spec *v;
    sl_slab_reported *reported;
    unsigned n, cap;
} sl_slab_spec_list;
void sl_slab_spec_list_free(sl_slab_spec_list *l);
/* Appends a copy (and, when `rep` is given, what the kernel reported); returns 0 or SL_ENOMEM. */
int sl_slab_spec_list_add(sl_slab_spec_list *l, const sl_slab_spec *s, const sl_slab_reported *rep);

/*
 * The --caches text format (docs/slab.md): one cache per line,
 *   NAME OBJECT_SIZE [align=N] [hwcache] [rcu] [ctor] [reclaim] [noleaktrace]
 * '#' starts a comment; blank lines are ignored.  Returns 0 or SL_EINVAL /
 * SL_ENOMEM.
 */
int sl_slab_caches_parse(const char *text, size_t len, sl_slab_spec_list *out, char *err, size_t errlen);

/*
 * A /proc/slabinfo file, version 2.1: the "slabinfo - version: 2.1" line,
 * '#' comment lines, then per cache
 *   name active_objs num_objs objsize objperslab pagesperslab
 *     : tunables limit batchcount sharedfactor : slabdata active_slabs num_slabs sharedavail
 * (further " : ..." groups, such as CONFIG_DEBUG_SLAB's statistics, are
 * ignored).  objsize is the kernel's buffer size; it becomes the spec's
 * object size, with no alignment and no flags, which slabinfo does not
 * show.  When any cache has non-zero tunables the file is a SLAB kernel's
 * and `reported` is filled.  Returns 0, or SL_EINVAL with "line N: ..."
 * in `err`, or SL_ENOMEM.
 */
int sl_slab_slabinfo_parse(const char *text, size_t len, sl_slab_spec_list *out, char *err, size_t errlen);
/*
 * The creation flags the kernel's source gives the well-known cache `name`
 * that a slabinfo line cannot show (a constructor, TYPESAFE_BY_RCU,
 * RECLAIM_ACCOUNT, HWCACHE_ALIGN), as kmem_cache_create() calls in 5.4
 * read them: anon_vma (mm/rmap.c: TYPESAFE_BY_RCU, anon_vma_ctor),
 * bdev_cache (fs/block_dev.c: HWCACHE_ALIGN|RECLAIM_ACCOUNT, init_once),
 * ext4_inode_cache (fs/ext4/super.c: RECLAIM_ACCOUNT, init_once),
 * nfs_inode_cache (fs/nfs/inode.c: RECLAIM_ACCOUNT, init_once); 0 for any
 * other name.  sl_slab_slabinfo_parse gives them to those caches, and the
 * outputs say the flags were known by name.
 */
uint32_t sl_slab_known_flags(const char *name);

/*
 * Reads a /sys/kernel/slab-like directory: one folder per cache holding at
 * least object_size; align, ctor, destroy_by_rcu, hwcache_align and
 * reclaim_account are used when present.  Symbolic links (SLUB's aliases of
 * merged caches) are skipped.  Entries are sorted by name.  Returns 0,
 * SL_EINVAL (unreadable directory, or a cache without a readable
 * object_size) or SL_ENOMEM.
 */
int sl_slab_caches_read_sysfs(const char *dir, sl_slab_spec_list *out, char *err, size_t errlen);

/*
 * The prediction for a list: each cache's geometry under both rules for one
 * kernel (a cache named like one of the kernel's kmalloc caches gets that
 * cache's geometry from boot, when fewer kmalloc caches existed), the
 * tunables, and, where the list says what a SLAB kernel chose,
 * whether the model agrees on order, objects per slab and the three
 * tunables (compared with the rules after OBJFREELIST, which every kernel
 * from 4.10 has).
 */
typedef struct sl_slab_types {
    unsigned kernel; /* resolved */
    bool init_on_free;
    unsigned ncpus;
    unsigned n;
    sl_slab_geometry *g[2]; /* [rules][cache] */
    sl_slab_tunables *tun;  /* [cache] */
    signed char *match;     /* [cache]: 1 agrees, 0 differs, -1 nothing reported */
    unsigned totals[2][SL_SLAB_NMGMT];
    unsigned compared, matched;
} sl_slab_types;
/*
 * Computes the prediction for `l` under `v` (its rules are ignored: both are
 * computed) on `ncpus` CPUs (1 .. 8192).  Returns SL_OK, SL_EINVAL (a bad
 * variant or CPU count, or a cache the model refuses, named in `err`) or
 * SL_ENOMEM.
 */
int sl_slab_types_compute(const sl_slab_spec_list *l, const sl_slab_variant *v, unsigned ncpus, sl_slab_types *out,
                          char *err, size_t errlen);
void sl_slab_types_free(sl_slab_types *t);
/*
 * The JSON document of `slablab slab-types --format json` (docs/slab.md):
 * a malloc'd NUL-terminated string, or NULL when out of memory.  rules_mask
 * bit r prints the geometry under rules r (1 before, 2 after, 3 both).
 */
char *sl_slab_types_json(const sl_slab_spec_list *l, const sl_slab_types *t, const char *source, unsigned rules_mask);

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
/* cache_reap runs every REAPTIMEOUT_AC per CPU; its node part at most every REAPTIMEOUT_NODE. */
#define SL_SLAB_REAP_CPU_MS 2000u
#define SL_SLAB_REAP_NODE_MS 4000u

typedef struct sl_slab sl_slab;
typedef struct sl_slab_cache sl_slab_cache;

typedef struct sl_slab_config {
    unsigned ncpus;          /* 1 .. SL_SLAB_MAX_CPUS */
    size_t arena_bytes;      /* page allocator arena; 8 MiB (room for one 4 MiB block) to 64 GiB */
    sl_slab_variant variant; /* rules, kernel version and init_on_free, for every cache */
    sl_trace *trace;         /* event rings (may be NULL); needs ncpus rings */
} sl_slab_config;

/* Operation codes in OP_BEGIN/OP_END events of this model. */
enum {
    SL_SLAB_OP_ALLOC = 201,
    SL_SLAB_OP_FREE = 202,
    SL_SLAB_OP_KMALLOC = 203,
    SL_SLAB_OP_KFREE = 204,
    SL_SLAB_OP_SHRINK = 205,
    SL_SLAB_OP_DRAIN = 206,
    SL_SLAB_OP_REAP = 207,
};

/*
 * Creates the page allocator and the variant's kmalloc caches.  Returns 0,
 * SL_EINVAL for a bad config, or SL_ENOMEM.
 */
int sl_slab_create(const sl_slab_config *cfg, sl_slab **out);
/* Frees everything, objects still allocated included.  Quiescent. */
void sl_slab_destroy(sl_slab *sl);
sl_page_zone *sl_slab_zone(sl_slab *sl);
/* The resolved variant and the kmalloc table the world was built with. */
const sl_slab_kmalloc_table *sl_slab_kmalloc_table_of(const sl_slab *sl);

/*
 * kmem_cache_create: geometry by sl_slab_geometry_compute, array caches by
 * enable_cpucache (sl_slab_tunables_for; a shared array of sharedfactor
 * batches).  The CTOR flag only affects geometry: no constructor runs.
 * Returns 0, SL_EINVAL (bad spec, too many caches) or SL_ENOMEM.  Quiescent.
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
 * A rejected free changes nothing.  With init_on_free the object is zeroed.
 */
int sl_slab_cache_free(sl_slab_cache *c, unsigned cpu, void *obj);

/*
 * kmalloc on `cpu`: NULL for size 0, size > 4 MiB, or an exhausted arena.
 * From 6.1, sizes above 8 KiB are whole pages from the page allocator
 * (kmalloc_large), freed by kfree.
 */
void *sl_slab_kmalloc(sl_slab *sl, unsigned cpu, size_t size);
/*
 * kfree on `cpu`: NULL is a no-op (0); otherwise as sl_slab_cache_free for
 * the object's cache.  A kmalloc_large block must be freed at its start
 * (SL_EMISALIGNED otherwise); freeing one twice finds its pages free, which
 * is SL_EFOREIGN like any pointer into free pages.
 */
int sl_slab_kfree(sl_slab *sl, unsigned cpu, const void *ptr);
/* The kmalloc cache serving `size` (kmalloc_slab), or NULL (0, or above the largest kmalloc cache). */
sl_slab_cache *sl_slab_kmalloc_cache(sl_slab *sl, size_t size);

/* do_drain for every cache on `cpu`, by the thread acting as `cpu`: empties its array_caches. */
void sl_slab_drain_cpu(sl_slab *sl, unsigned cpu);
/*
 * One cache_reap run on `cpu` (by its thread) at time `now_ms` (simulated
 * milliseconds; the caller runs it every SL_SLAB_REAP_CPU_MS per CPU), for
 * every cache: this CPU's array loses (limit + 4) / 5 objects unless it was
 * touched since the last run (then it is only marked untouched).  The
 * node part runs only when the node's timer (next_reap) has expired, and
 * then sets it SL_SLAB_REAP_NODE_MS ahead: the shared array is drained
 * likewise, and unless a free slab was used since the last node run,
 * (free_limit + 5 * num - 1) / (5 * num) free slabs go back to the page
 * allocator.  A cache's first node run is due SL_SLAB_REAP_NODE_MS after
 * the latest reap time seen when it was created, plus (id % 4) seconds
 * (the kernel staggers caches by their address).
 */
void sl_slab_reap(sl_slab *sl, unsigned cpu, uint64_t now_ms);
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
    unsigned limit, batchcount, shared_limit;            /* shared_limit 0: no shared array */
    unsigned long total_slabs, free_slabs, free_objects; /* node counters */
    unsigned long active_objs;                           /* total_slabs * num - free_objects (includes array caches) */
    unsigned long cpu_avail;                             /* objects in all CPU arrays */
    unsigned long shared_avail;                          /* objects in the shared array */
    unsigned long grown, destroyed, alloc_hit, alloc_miss, free_hit, free_miss;
} sl_slab_cache_info;
void sl_slab_cache_info_get(const sl_slab_cache *c, sl_slab_cache_info *out);
/*
 * Caches by id: 0 .. count-1.  Ids 0 .. SL_SLAB_NKMALLOC-1 are the kmalloc
 * indexes (NULL for the sizes the kernel version has no cache for), created
 * caches follow.  NULL past the end and for destroyed caches.
 */
unsigned sl_slab_cache_count(sl_slab *sl);
sl_slab_cache *sl_slab_cache_by_id(sl_slab *sl, unsigned id);
/* The slab pfn and object index of `obj` in its cache; false when it is not an object start of a slab. */
bool sl_slab_object_ref(sl_slab *sl, const void *obj, uint32_t *pfn, uint32_t *index);
/* The object at (pfn, index) of a slab of cache `c`, or NULL. */
void *sl_slab_object_at(sl_slab_cache *c, uint32_t pfn, uint32_t index);

/*
 * The whole state as fixed-size little-endian records for the UI (layout:
 * docs/snapshot-format.md, "SLAB snapshot").  Returns the bytes written, or,
 * when `cap` is too small (or buf NULL), minus the bytes needed.  Quiescent;
 * it still checks every pointer it follows (an array entry or freelist
 * naming no object of its cache is written as CORRUPT), so a corrupted
 * state is shown, not crashed on.
 */
long sl_slab_snapshot(sl_slab *sl, void *buf, size_t cap);
/*
 * The snapshot's version, the sizes of its header and of its cache, array,
 * slab and reference records, then the offsets of header.kernel,
 * cache.next_reap, cache.first_array, array.first_entry, slab.freelist_a
 * and slab.first_freelist_byte: what web/slab/snapshot.ts is checked against.
 */
#define SL_SLAB_SNAPSHOT_LAYOUT_WORDS 12
void sl_slab_snapshot_layout(uint32_t out[SL_SLAB_SNAPSHOT_LAYOUT_WORDS]);

/*
 * Checks every invariant: each object is in exactly one place (a CPU array,
 * the shared array, its slab's freelist, or allocated); freelist arrays hold
 * distinct in-range indexes where the management type puts them (OBJFREELIST:
 * in the free object at the array's last position, NULL when full); list
 * membership matches fullness; node counters equal the walk; in debug
 * builds the allocated set equals the live-object bitmap; the page
 * allocator's own sl_page_validate, and every page in use belongs to a slab
 * or a kmalloc_large block.  Returns 0 or SL_ECORRUPT (and a description
 * in `why` when given).  Quiescent.
 */
int sl_slab_validate(sl_slab *sl, char *why, size_t whylen);

#endif /* SL_SLAB_H */
