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
 *                     (pcpu_alloc_area / pcpu_free_area of v4.13).
 *   SL_PCPU_BITMAP    commit 40064aeca35c and its series (v4.14): alloc_map
 *                     and bound_map at 4-byte granularity, per-block
 *                     metadata (contig_hint, contig_hint_start, left_free,
 *                     right_free, first_free), chunk contig_bits that may lag
 *                     by up to a block after a free (deliberately).
 *   SL_PCPU_SCANHINT  the 2019 scan_hint series (first released in v5.2;
 *                     modelled on v5.4): block scan_hint, chunk-level
 *                     chunk_md of the same type, chunks slotted by contig
 *                     hint and relegated to slot 0 when they fail a small
 *                     allocation, bounded scans that remember the largest
 *                     hole they skipped, empty populated pages counted by
 *                     the block hints.
 *
 * Every instance starts as the kernel boots: with the first chunk, whose
 * unit holds the static region, an optional reserved region and the
 * dynamic region (pcpu_setup_first_chunk).  The first chunk serves dynamic
 * allocations from its dynamic region, is fully populated and is never
 * destroyed; a separate reserved chunk over the reserved region serves
 * sl_pcpu_alloc_reserved() (module static variables in the kernel) and sits
 * on no slot list.  After an allocation that leaves fewer than
 * PCPU_EMPTY_POP_PAGES_LOW empty populated pages, and after a free that
 * leaves a second empty chunk, the balance step (pcpu_balance_workfn, run
 * synchronously here) destroys surplus empty chunks and populates pages
 * (creating a chunk if it must) up to PCPU_EMPTY_POP_PAGES_HIGH.
 *
 * Chunks carry ids that never change and are never reused (0 the first
 * chunk, 1 the reserved chunk when there is one, then in creation order);
 * an allocation is named across runs by (chunk id, offset in the unit).
 *
 * Locking, as in the kernel: `lock` (pcpu_lock, a spin lock) protects every
 * chunk's map, hints, slot lists and the chunk index; `alloc_mutex`
 * (pcpu_alloc_mutex) serialises allocations that may create chunks or grow
 * maps, and the balance step.  Frees take only `lock` (and `alloc_mutex`
 * for the balance they trigger).  The memory the units hold belongs to the
 * caller: per-CPU reads and writes of it take no lock (sl_pcpu_add is a
 * single-writer relaxed add, like this_cpu_add).
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
/* PCPU_EMPTY_POP_PAGES_LOW / _HIGH: the balance step keeps this many empty populated pages. */
#define SL_PCPU_EMPTY_POP_PAGES_LOW 2
#define SL_PCPU_EMPTY_POP_PAGES_HIGH 4
/* PCPU_SLOT_FAIL_THRESHOLD (scan-hint series): chunks below this slot are relegated on a failed fit. */
#define SL_PCPU_SLOT_FAIL_THRESHOLD 3

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
    unsigned nr_units; /* 1..SL_PCPU_MAX_UNITS, one per CPU */
    size_t unit_size;  /* a multiple of the page size; 0 = SL_PCPU_DEFAULT_UNIT_SIZE */
    /*
     * The first chunk's unit (pcpu_alloc_info): static_size bytes of static
     * variables, then reserved_size bytes for the reserved chunk (0: none),
     * then dyn_size bytes of dynamic region (0: the rest of the unit); the
     * unit's tail after them is not allocatable.  Multiples of 4.  A real
     * x86-64 boot: "Embedded 54 pages/cpu s183296 r8192 d28672 u262144".
     */
    size_t static_size, reserved_size, dyn_size;
    sl_trace *trace; /* optional event rings (ncpus >= nr_units) */
    bool placed;     /* areas and chunks only as a replayed trace places them (sl_pcpu_alloc_at) */
} sl_pcpu_config;

typedef struct sl_pcpu_list {
    struct sl_pcpu_list *prev, *next;
} sl_pcpu_list;

struct sli_pcpu_ops;
struct sl_pcpu_chunk;

/* What the current allocation scanned (for the PCPU_ALLOC_SCAN event); under `lock` and `alloc_mutex`. */
typedef struct sl_pcpu_scan {
    uint32_t chunks; /* chunks tried (pcpu_find_block_fit, or the area map's contig_hint test) */
    uint32_t blocks; /* metadata blocks visited by pcpu_next_fit_region; area map: map entries visited */
    uint32_t bits;   /* alloc_map bits searched by pcpu_alloc_area (bitmaps) */
} sl_pcpu_scan;

/*
 * The allocator's work since sl_pcpu_init, summed over every allocation's
 * sl_pcpu_scan and every area map memmove; under `lock`.  Counts, not
 * times: the same on every run and machine, so they compare allocators where
 * a time varies (the Benchmarks page leads with them; sl_pcpu_run_workload
 * reports them).  Counted in every build, benchmark builds included.
 */
typedef struct sl_pcpu_work {
    uint64_t chunks, blocks, bits;
    uint64_t memmoves;      /* area map memmoves (splits and merges) */
    uint64_t entries_moved; /* map entries those memmoves moved */
} sl_pcpu_work;

typedef struct sl_pcpu {
    sl_pcpu_config cfg;
    const struct sli_pcpu_ops *ops;
    int unit_size;
    int unit_pages;
    sl_spinlock lock;        /* pcpu_lock */
    sl_spinlock alloc_mutex; /* pcpu_alloc_mutex */
    int nr_slots;
    sl_pcpu_list *slots; /* pcpu_slot[]: chunks by free size / contig hint */
    /* Chunk index sorted by base address, under `lock`: the model's page->index. */
    struct sl_pcpu_chunk **chunks;
    unsigned nr_chunks, chunks_cap;
    struct sl_pcpu_chunk *first_chunk;    /* pcpu_first_chunk: in the index and on a slot */
    struct sl_pcpu_chunk *reserved_chunk; /* pcpu_reserved_chunk, or NULL: on no slot, not in the index */
    uint32_t next_chunk_id; /* written under alloc_mutex; read by snapshots without it (relaxed atomics) */
    /* Statistics, under `lock`. */
    uint64_t nr_allocs, nr_frees;
    uint64_t chunks_created, chunks_destroyed, map_extends;
    int nr_populated;       /* pcpu_nr_populated: populated pages, counted once per unit */
    int nr_empty_pop_pages; /* pcpu_nr_empty_pop_pages: the reserved chunk's do not count */
    /* The operation and CPU the events emitted under `lock` belong to (set with the lock taken). */
    uint32_t ev_op;
    uint16_t ev_cpu;
    sl_pcpu_scan scan;
    sl_pcpu_work work;
    char validate_msg[256]; /* the last problem validate() found */
} sl_pcpu;

/* Returns SL_OK, SL_EINVAL for a bad config, or SL_ENOMEM. */
int sl_pcpu_init(sl_pcpu *pc, const sl_pcpu_config *cfg);
/* Frees every chunk, allocated or not. */
void sl_pcpu_destroy(sl_pcpu *pc);

/*
 * __alloc_percpu: `size` bytes aligned to `align` (a power of two up to the
 * page size; 0 means the minimum) in every unit, zeroed in every unit.
 * `cpu` is the CPU acting (for the trace).  Returns SL_OK and the unit-0
 * address in *out, SL_EINVAL for a bad size, alignment or CPU (a CPU past
 * nr_units emits no event), SL_ENOMEM when no chunk can be created.
 */
int sl_pcpu_alloc(sl_pcpu *pc, unsigned cpu, size_t size, size_t align, void **out);
/*
 * __alloc_reserved_percpu: the same from the reserved chunk, which never
 * grows: SL_ENOMEM when it has no room.  Without a reserved region this is
 * sl_pcpu_alloc, as in the kernel.
 */
int sl_pcpu_alloc_reserved(sl_pcpu *pc, unsigned cpu, size_t size, size_t align, void **out);
/*
 * free_percpu.  Returns SL_OK, SL_EFOREIGN (not inside any chunk),
 * SL_EMISALIGNED (inside a chunk but not the start of an allocation),
 * SL_EDOUBLEFREE (the start of an area that is free) or SL_EINVAL (a CPU
 * past nr_units; no event).  NULL is a no-op.
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
    sl_store_relaxed(c, sl_load_relaxed(c) + delta);
}
/* percpu_counter_sum: the sum of every CPU's copy of a 64-bit counter. */
int64_t sl_pcpu_sum(const sl_pcpu *pc, void *p);

/*
 * Names an address of unit 0 by chunk id and offset in the unit (a name
 * that survives a replay on a fresh instance, unlike the address).  Returns
 * false when no chunk holds p in unit 0.
 */
bool sl_pcpu_locate(sl_pcpu *pc, const void *p, uint32_t *chunk_id, uint32_t *offset);
/* The unit-0 address of (chunk id, offset), or NULL when there is no such chunk or offset. */
void *sl_pcpu_address(sl_pcpu *pc, uint32_t chunk_id, uint32_t offset);

/*
 * Rebuilds every hint of every chunk from its map or bitmaps and compares:
 * slots, free bytes, allocation counts, populated and empty populated
 * pages, block and chunk hints (exact where the kernel keeps them exact,
 * bounded where it lets them lag).  Takes `lock`.  Returns SL_OK or
 * SL_ECORRUPT (and prints what is wrong to stderr, and keeps it for
 * sl_pcpu_validate_message).
 */
int sl_pcpu_validate(sl_pcpu *pc);
/* The sentence naming the first problem the last sl_pcpu_validate found ("" if none). */
const char *sl_pcpu_validate_message(const sl_pcpu *pc);

/*
 * The whole state as little-endian records for the UI (docs/snapshot-format.md,
 * "percpu snapshot").  Returns the bytes written, or, when cap is too small
 * (or buf NULL), minus the bytes needed.  Takes `lock`.
 */
long sl_pcpu_snapshot(sl_pcpu *pc, void *buf, size_t cap);
/*
 * The snapshot's fixed sizes and identity, for decoders to check against:
 * out[0..6] = header bytes, chunk record bytes, block record bytes, magic,
 * version, bits per block, NONE.  Returns 7.
 */
unsigned sl_pcpu_snapshot_layout(uint32_t *out);

typedef struct sl_pcpu_stats {
    uint32_t nr_chunks;
    uint32_t nr_empty_chunks;
    uint64_t nr_allocs, nr_frees, live_allocs;
    uint64_t free_bytes; /* summed over chunks, one unit's worth */
    uint64_t chunks_created, chunks_destroyed, map_extends;
    uint32_t nr_populated;
    int32_t nr_empty_pop_pages;
} sl_pcpu_stats;
void sl_pcpu_get_stats(sl_pcpu *pc, sl_pcpu_stats *out);

/* What one chunk looks like, for tests (chunks named by id). */
typedef struct sl_pcpu_chunk_info {
    uint32_t unit_size;
    uint32_t free_bytes;
    uint32_t contig_bytes; /* the chunk's contig hint, in bytes */
    uint32_t nr_alloc;
    uint32_t slot;
    uint32_t map_used; /* area map entries (areamap), else 0 */
    uint32_t nr_populated;
    uint32_t first_free; /* areamap: map index; bitmap: bit */
    int32_t nr_empty_pop_pages;
} sl_pcpu_chunk_info;
/* Returns SL_OK, or SL_EINVAL when there is no chunk with that id. */
int sl_pcpu_chunk_info_get(sl_pcpu *pc, uint32_t chunk_id, sl_pcpu_chunk_info *out);
/*
 * Writes one byte per 4-byte granule of the chunk with id chunk_id into out[0..max):
 * 0 free, 1 allocated start, 2 allocated continuation, 3 outside the
 * chunk's region (the first chunk's static and reserved regions and the
 * unit's tail).  Returns the number of granules written, or SL_EINVAL.
 */
int sl_pcpu_chunk_granules(sl_pcpu *pc, uint32_t chunk_id, uint8_t *out, unsigned max);

/* ------------------------------------------------------------------ */
/* Placement by a trace (src/replay)                                   */

/*
 * A replay rebuilds the kernel's chunks from percpu_create_chunk and the
 * (base_addr, off) of each percpu_alloc_percpu, so the caller says where.
 * An instance with cfg.placed takes only these and sl_pcpu_free (its
 * sl_pcpu_alloc says SL_EINVAL): chunks come and go only as the caller
 * says, no balance step runs, and the first chunk (id 0, booted as for any
 * instance) is never placed into by src/replay (docs/replay.md says why).
 * Only the bitmap allocators (SL_PCPU_BITMAP, SL_PCPU_SCANHINT) take
 * placed areas (sl_pcpu_init refuses a placed area map); their hints are
 * kept by the same code as for sl_pcpu_alloc, so a placed instance passes
 * sl_pcpu_validate.  Every call returns SL_EINVAL on an instance without
 * cfg.placed.
 */
/* pcpu_create_chunk: an empty, unpopulated chunk; *chunk_id gets its id.  SL_OK or SL_ENOMEM. */
int sl_pcpu_chunk_add(sl_pcpu *pc, uint32_t *chunk_id);
/*
 * Takes [off, off + size) of chunk chunk_id (size rounded up to 4 bytes)
 * through pcpu_alloc_area, populating its pages.  The units' memory is not
 * touched (not zeroed).  Returns SL_OK, SL_EBUSY when part of it is
 * allocated, or SL_EINVAL (no such chunk or cpu, off not a multiple of 4,
 * outside the chunk's region).
 */
int sl_pcpu_alloc_at(sl_pcpu *pc, unsigned cpu, uint32_t chunk_id, size_t off, size_t size);
/*
 * pcpu_destroy_chunk.  Returns SL_OK, SL_EBUSY when it has live areas, or
 * SL_EINVAL (no such chunk, or the first or reserved chunk).
 */
int sl_pcpu_chunk_remove(sl_pcpu *pc, uint32_t chunk_id);

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
    bool prefill_second_half; /* fill the second half of every chunk first (see pcpu_workload.c) */
    uint64_t budget_ns;       /* 0 = no budget */
} sl_pcpu_workload;

typedef struct sl_pcpu_workload_result {
    uint64_t alloc_ns, free_ns;
    unsigned long allocated; /* objects allocated before the end or the budget */
    unsigned long freed;
    bool over_budget;
    bool alloc_failed; /* an allocation returned an error (reported, not hidden) */
    uint32_t chunks;   /* chunks when all objects were live */
    /* The timed phases' work (alloc and free; the prefill's is not counted): deterministic. */
    sl_pcpu_work work;
} sl_pcpu_workload_result;

/*
 * Runs the workload on a fresh instance.  Returns SL_OK (also when the
 * budget ran out: result->over_budget says so and how far it got), or
 * SL_EINVAL / SL_ENOMEM before any timing started.
 */
int sl_pcpu_run_workload(const sl_pcpu_workload *w, sl_pcpu_workload_result *out);

#endif /* SL_PERCPU_H */
