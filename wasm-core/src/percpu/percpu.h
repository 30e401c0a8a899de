/*
 * percpu.h - the kernel's percpu allocator (mm/percpu.c), three generations.
 *
 * A percpu allocation is one offset that is valid in every CPU's copy of a
 * chunk.  A chunk holds nr_units units (one per CPU), each unit_size bytes,
 * laid out back to back: unit u of a chunk starts at base + u * unit_size.
 * An allocation returns the unit-0 address (the kernel's __percpu pointer);
 * sl_pcpu_ptr() adds the unit offset of a CPU, as per_cpu_ptr() does.
 *
 * Which allocator hands out offsets inside a chunk is chosen per instance:
 *
 *   SL_PCPU_AREAMAP   before 2017: a sorted int map of area start offsets,
 *                     bit 0 = in use, split and merged with memmove
 *                     (pcpu_alloc_area / pcpu_free_area of v4.12).
 *   SL_PCPU_BITMAP    commit 40064aeca35c and its series (v4.14): alloc_map
 *                     and bound_map at 4-byte granularity, per-block
 *                     metadata (contig_hint, contig_hint_start, left_free,
 *                     right_free, first_free), chunk contig_bits that may lag
 *                     by up to a block after a free (deliberately).
 *   SL_PCPU_SCANHINT  the 2019 scan_hint series (v5.1+): block scan_hint,
 *                     chunk-level chunk_md of the same type, chunks slotted
 *                     by contig hint, bounded scans that remember the
 *                     largest hole they skipped, empty populated page count.
 *
 * Locking, as in the kernel: `lock` (pcpu_lock, a spin lock) protects every
 * chunk's map, hints, slot lists and the chunk index; `alloc_mutex`
 * (pcpu_alloc_mutex) serialises allocations that may create chunks or grow
 * maps, and chunk destruction.  Frees take only `lock`.  The memory the
 * units hold belongs to the caller: per-CPU reads and writes of it take no
 * lock (sl_pcpu_add is a single-writer relaxed add, like this_cpu_add).
 */
#ifndef SL_PERCPU_H
#define SL_PERCPU_H

#include "../trace/trace.h"

/* PCPU_MIN_ALLOC_SIZE: the bitmap allocators' granule (one bit). */
#define SL_PCPU_MIN_ALLOC_SIZE 4
/* PCPU_MIN_UNIT_SIZE: the largest allocation the kernel accepts. */
#define SL_PCPU_MAX_ALLOC_SIZE (32 * 1024)
/* A unit of 64 pages, about what x86-64 boots with ("Embedded 54 pages/cpu"). */
#define SL_PCPU_DEFAULT_UNIT_SIZE (64 * SL_PAGE_SIZE)
#define SL_PCPU_MAX_UNITS 64

typedef enum sl_pcpu_kind {
    SL_PCPU_AREAMAP = 0,
    SL_PCPU_BITMAP = 1,
    SL_PCPU_SCANHINT = 2,
} sl_pcpu_kind;
#define SL_PCPU_NKINDS 3

/* "areamap", "bitmap", "scanhint". */
const char *sl_pcpu_kind_name(sl_pcpu_kind k);
/* Returns true and sets *out when s names an allocator. */
bool sl_pcpu_parse_kind(const char *s, sl_pcpu_kind *out);

typedef struct sl_pcpu_config {
    sl_pcpu_kind kind;
    unsigned nr_units;  /* 1..SL_PCPU_MAX_UNITS, one per CPU */
    size_t unit_size;   /* a multiple of the page size; 0 = SL_PCPU_DEFAULT_UNIT_SIZE */
    sl_trace *trace;    /* optional event rings (ncpus >= nr_units) */
    bool placed;        /* chunks come and go only by sl_pcpu_chunk_add/remove (a replayed trace) */
} sl_pcpu_config;

typedef struct sl_pcpu_list {
    struct sl_pcpu_list *prev, *next;
} sl_pcpu_list;

struct sli_pcpu_ops;
struct sl_pcpu_chunk;

typedef struct sl_pcpu {
    sl_pcpu_config cfg;
    const struct sli_pcpu_ops *ops;
    int unit_size;
    int unit_pages;
    sl_spinlock lock;        /* pcpu_lock */
    sl_spinlock alloc_mutex; /* pcpu_alloc_mutex */
    int nr_slots;
    sl_pcpu_list *slots;     /* pcpu_slot[]: chunks by free size / contig hint */
    /* Chunk index sorted by base address, under `lock`: the model's page->index. */
    struct sl_pcpu_chunk **chunks;
    unsigned nr_chunks, chunks_cap;
    /* Statistics, under `lock`. */
    uint64_t nr_allocs, nr_frees;
    uint64_t chunks_created, chunks_destroyed, map_extends;
    int nr_populated;        /* pcpu_nr_populated: populated pages, counted once per unit */
    int nr_empty_pop_pages;  /* pcpu_nr_empty_pop_pages (kept by the scanhint allocator) */
} sl_pcpu;

/* Returns SL_OK, SL_EINVAL for a bad config, or SL_ENOMEM. */
int sl_pcpu_init(sl_pcpu *pc, const sl_pcpu_config *cfg);
/* Frees every chunk, allocated or not. */
void sl_pcpu_destroy(sl_pcpu *pc);

/*
 * __alloc_percpu: `size` bytes aligned to `align` (a power of two up to the
 * page size; 0 means the minimum) in every unit, zeroed in every unit.
 * `cpu` is the CPU acting (for the trace).  Returns SL_OK and the unit-0
 * address in *out, SL_EINVAL for a bad size or alignment, SL_ENOMEM when no
 * chunk can be created.
 */
int sl_pcpu_alloc(sl_pcpu *pc, unsigned cpu, size_t size, size_t align, void **out);
/*
 * free_percpu.  Returns SL_OK, SL_EFOREIGN (not inside any chunk),
 * SL_EMISALIGNED (inside a chunk but not the start of an allocation) or
 * SL_EDOUBLEFREE (the start of an area that is free).  NULL is a no-op.
 */
int sl_pcpu_free(sl_pcpu *pc, unsigned cpu, void *p);

/* per_cpu_ptr: the address of `cpu`'s copy of the allocation `p`. */
SL_INLINE void *sl_pcpu_ptr(const sl_pcpu *pc, void *p, unsigned cpu)
{
    return (char *)p + (size_t)cpu * (size_t)pc->unit_size;
}
/* this_cpu_add on a 64-bit counter: only `cpu`'s thread may call it for `cpu`. */
SL_INLINE void sl_pcpu_add(const sl_pcpu *pc, void *p, unsigned cpu, int64_t delta)
{
    int64_t *c = (int64_t *)sl_pcpu_ptr(pc, p, cpu);
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + delta, __ATOMIC_RELAXED);
}
/* percpu_counter_sum: the sum of every CPU's copy of a 64-bit counter. */
int64_t sl_pcpu_sum(const sl_pcpu *pc, void *p);

/*
 * Rebuilds every hint of every chunk from its map or bitmaps and compares:
 * slots, free bytes, allocation counts, populated pages, block and chunk
 * hints (exact where the kernel keeps them exact, bounded where it lets
 * them lag).  Takes `lock`.  Returns SL_OK or SL_ECORRUPT (and prints what
 * is wrong to stderr).
 */
int sl_pcpu_validate(sl_pcpu *pc);

typedef struct sl_pcpu_stats {
    uint32_t nr_chunks;
    uint32_t nr_empty_chunks;
    uint64_t nr_allocs, nr_frees, live_allocs;
    uint64_t free_bytes;         /* summed over chunks, one unit's worth */
    uint64_t chunks_created, chunks_destroyed, map_extends;
    uint32_t nr_populated;
    int32_t nr_empty_pop_pages;
} sl_pcpu_stats;
void sl_pcpu_get_stats(sl_pcpu *pc, sl_pcpu_stats *out);

/* What one chunk looks like, for tests and the UI (chunk index by base address). */
typedef struct sl_pcpu_chunk_info {
    uint32_t unit_size;
    uint32_t free_bytes;
    uint32_t contig_bytes;   /* the chunk's contig hint, in bytes */
    uint32_t nr_alloc;
    uint32_t slot;
    uint32_t map_used;       /* area map entries (areamap), else 0 */
    uint32_t nr_populated;
    uint32_t first_free;     /* areamap: map index; bitmap: bit */
} sl_pcpu_chunk_info;
/* Returns SL_OK, or SL_EINVAL when there is no chunk `index`. */
int sl_pcpu_chunk_info_get(sl_pcpu *pc, unsigned index, sl_pcpu_chunk_info *out);
/*
 * Writes one byte per 4-byte granule of chunk `index` into out[0..max):
 * 0 free, 1 allocated start, 2 allocated continuation.  Returns the number
 * of granules written, or SL_EINVAL.
 */
int sl_pcpu_chunk_granules(sl_pcpu *pc, unsigned index, uint8_t *out, unsigned max);

/* ------------------------------------------------------------------ */
/* Placement by a trace (src/replay)                                   */

/*
 * A replay rebuilds the kernel's chunks from percpu_create_chunk and the
 * (base_addr, off) of each percpu_alloc_percpu, so here the caller says
 * where.  Only the bitmap allocators (SL_PCPU_BITMAP, SL_PCPU_SCANHINT)
 * take placed areas; their hints are kept by the same code as for
 * sl_pcpu_alloc.  With cfg.placed a free never destroys a chunk (the
 * trace's percpu_destroy_chunk does).
 */
/* pcpu_create_chunk: an empty chunk; *base gets its unit-0 address.  SL_OK or SL_ENOMEM. */
int sl_pcpu_chunk_add(sl_pcpu *pc, void **base);
/*
 * Takes [off, off + size) of the chunk at `base` (size rounded up to 4
 * bytes), as pcpu_alloc_area does once it has found that place.  Returns
 * SL_OK, SL_EBUSY when part of it is allocated, or SL_EINVAL (no such
 * chunk, off not a multiple of 4, past the unit, or the area map).
 */
int sl_pcpu_alloc_at(sl_pcpu *pc, unsigned cpu, void *base, size_t off, size_t size);
/* pcpu_destroy_chunk.  Returns SL_OK, SL_EBUSY when it has live areas, or SL_EINVAL. */
int sl_pcpu_chunk_remove(sl_pcpu *pc, void *base);
/* The index sl_pcpu_chunk_info_get uses for the chunk at `base`, or SL_EINVAL. */
int sl_pcpu_chunk_index(sl_pcpu *pc, const void *base);

/* ------------------------------------------------------------------ */
/* The seed's workload (commit 40064aeca35c): allocate N objects, free them. */

typedef enum sl_pcpu_order {
    SL_PCPU_FREE_INORDER = 0,   /* in allocation order */
    SL_PCPU_FREE_ALTERNATE = 1, /* every other object (0, 2, 4, ...), then the rest (1, 3, ...) */
    SL_PCPU_FREE_REVERSE = 2,   /* last allocated first */
} sl_pcpu_order;
const char *sl_pcpu_order_name(sl_pcpu_order o);
bool sl_pcpu_parse_order(const char *s, sl_pcpu_order *out);

typedef struct sl_pcpu_workload {
    sl_pcpu_config cfg;
    size_t size, align;
    unsigned long objects;
    sl_pcpu_order order;
    bool prefill_second_half;   /* fill the second half of every chunk first (see pcpu_workload.c) */
    uint64_t budget_ns;         /* 0 = no budget */
} sl_pcpu_workload;

typedef struct sl_pcpu_workload_result {
    uint64_t alloc_ns, free_ns;
    unsigned long allocated;    /* objects allocated before the end or the budget */
    unsigned long freed;
    bool over_budget;
    bool alloc_failed;          /* an allocation returned an error (reported, not hidden) */
    uint32_t chunks;            /* chunks when all objects were live */
} sl_pcpu_workload_result;

/*
 * Runs the workload on a fresh instance.  Returns SL_OK (also when the
 * budget ran out: result->over_budget says so and how far it got), or
 * SL_EINVAL / SL_ENOMEM before any timing started.
 */
int sl_pcpu_run_workload(const sl_pcpu_workload *w, sl_pcpu_workload_result *out);

#endif /* SL_PERCPU_H */
