/*
 * pcpu_internal.h - what the files of the percpu model share: the chunk,
 * the allocator interface, and the bitmap helpers of lib/bitmap.c.
 *
 * A chunk's fields are all under sl_pcpu.lock (pcpu_lock), except id,
 * flags, base, start_offset and end_offset, which never change.  Only the
 * fields of the chunk's allocator are used; the others stay zero.
 *
 * Every chunk's maps cover its whole unit, so a chunk offset is a unit
 * offset.  The first and the reserved chunk serve only their region
 * [start_offset, unit_size - end_offset) of the first unit; the rest is
 * hidden as one allocated area at each end (the bitmaps mark it in
 * alloc_map and bound_map, the area map has it in map[0] and stops at the
 * sentinel), as pcpu_alloc_first_chunk does.  The kernel's first chunk
 * begins at the page holding the region start and hides only the part of
 * that page before it; here the pages before are hidden too (see
 * docs/percpu.md, "The first chunk").
 *
 * The allocator interface mirrors the kernel's call sequence in
 * pcpu_alloc(): for each chunk in the slots from the size's slot upward,
 * `find_fit` (pcpu_find_block_fit, or the area map's contig_hint and map
 * extension check) says where to start, then `alloc_area` takes the area or
 * reports that the chunk had nothing after all.
 */
#ifndef SLI_PCPU_INTERNAL_H
#define SLI_PCPU_INTERNAL_H

#include "percpu.h"

#include <stdio.h>

/* PCPU_BITMAP_BLOCK_SIZE = PAGE_SIZE: one metadata block per page. */
#define SLI_PCPU_BLOCK_BITS ((int)(SL_PAGE_SIZE / SL_PCPU_MIN_ALLOC_SIZE))
/* PCPU_SLOT_BASE_SHIFT */
#define SLI_PCPU_SLOT_BASE_SHIFT 5
/* Area map: PCPU_DFL_MAP_ALLOC, PCPU_ATOMIC_MAP_MARGIN_HIGH, and the first chunk's static map (PERCPU_DYNAMIC_EARLY_SLOTS). */
#define SLI_PCPU_DFL_MAP_ALLOC 16
#define SLI_PCPU_MAP_MARGIN_HIGH 64
#define SLI_PCPU_EARLY_MAP_SLOTS 128

/* sl_pcpu_chunk.flags */
#define SLI_PCPU_CHUNK_FIRST 1u    /* pcpu_first_chunk */
#define SLI_PCPU_CHUNK_RESERVED 2u /* pcpu_reserved_chunk */

/* How a PCPU_SLOT_MOVE event moved a chunk (its arg2). */
enum { SLI_PCPU_MOVE_HEAD = 0, SLI_PCPU_MOVE_TAIL = 1, SLI_PCPU_MOVE_RELEGATE = 2 };
/* Which hint a PCPU_HINT_REFRESH event rebuilt (its arg0). */
enum {
    SLI_PCPU_REFRESH_BLOCK = 0,
    SLI_PCPU_REFRESH_BLOCK_FORWARD = 1,
    SLI_PCPU_REFRESH_CHUNK = 2,
    SLI_PCPU_REFRESH_CHUNK_FORWARD = 3
};
/* Who created a chunk or populated pages (arg1 of PCPU_CHUNK_CREATE, arg2 of PCPU_POPULATE). */
enum { SLI_PCPU_BY_BOOT = 0, SLI_PCPU_BY_ALLOC = 1, SLI_PCPU_BY_BALANCE = 2, SLI_PCPU_BY_TRACE = 3 };

/* struct pcpu_block_md (scan_hint and nr_bits are the 2019 additions). */
typedef struct sli_pcpu_block_md {
    int scan_hint;
    int scan_hint_start;
    int contig_hint;
    int contig_hint_start;
    int left_free;
    int right_free;
    int first_free;
    int nr_bits;
} sli_pcpu_block_md;

typedef struct sl_pcpu_chunk {
    sl_pcpu_list list; /* in pc->slots[slot]; the reserved chunk is on none */
    uint32_t id;       /* never changes, never reused */
    uint32_t flags;    /* SLI_PCPU_CHUNK_* */
    char *base;        /* unit 0; unit u at base + u * unit_size */
    int start_offset;  /* bytes hidden at the start of the unit (first and reserved chunk) */
    int end_offset;    /* bytes hidden at its end */
    int free_bytes;    /* area map: free_size */
    int nr_alloc;      /* live allocations */
    int nr_pages;
    uint64_t *populated; /* one bit per page of a unit */
    int nr_populated;
    int nr_empty_pop_pages; /* populated pages wholly free (v4.14: as of the last chunk hint refresh) */

    /* area map (before 2017) */
    int contig_hint;         /* bytes; an upper bound of the largest free area */
    int map_used, map_alloc; /* entries in use (sentinel excluded), entries allocated */
    int *map;
    int first_free; /* map index: no free area before it */

    /* bitmaps (2017 and 2019) */
    uint64_t *alloc_map; /* nr_bits bits */
    uint64_t *bound_map; /* nr_bits + 1 bits */
    sli_pcpu_block_md *md_blocks;
    int contig_bits, contig_bits_start, first_bit; /* 2017 chunk hints */
    sli_pcpu_block_md chunk_md;                    /* 2019 chunk hints */
} sl_pcpu_chunk;

/*
 * Bitmap geometry shared by the 2017 and 2019 bitmap allocators, as
 * mm/percpu.c's pcpu_chunk_map_bits, pcpu_chunk_nr_blocks, pcpu_index_alloc_map,
 * pcpu_off_to_block_index/_off and pcpu_block_off_to_off: one metadata block
 * per page of SLI_PCPU_BLOCK_BITS bits.
 */
static inline int sli_pcpu_map_bits(const sl_pcpu_chunk *c) { return c->nr_pages * SLI_PCPU_BLOCK_BITS; }
static inline int sli_pcpu_nr_blocks(const sl_pcpu_chunk *c) { return c->nr_pages; }
static inline uint64_t *sli_pcpu_index_alloc_map(const sl_pcpu_chunk *c, int index)
{
    return c->alloc_map + index * (SLI_PCPU_BLOCK_BITS / 64);
}
static inline int sli_pcpu_off_to_block_index(int off) { return off / SLI_PCPU_BLOCK_BITS; }
static inline int sli_pcpu_off_to_block_off(int off) { return off & (SLI_PCPU_BLOCK_BITS - 1); }
static inline int sli_pcpu_block_off_to_off(int index, int off) { return index * SLI_PCPU_BLOCK_BITS + off; }

typedef struct sli_pcpu_ops {
    const char *name;
    /* Sets up an empty chunk's metadata.  Returns SL_OK or SL_ENOMEM. */
    int (*chunk_init)(sl_pcpu *pc, sl_pcpu_chunk *c);
    /*
     * pcpu_alloc_first_chunk's second half: a fresh, fully populated chunk
     * serves only [c->start_offset, unit_size - c->end_offset).
     */
    void (*init_region)(sl_pcpu *pc, sl_pcpu_chunk *c);
    void (*chunk_fini)(sl_pcpu_chunk *c);
    /* pcpu_chunk_slot */
    int (*chunk_slot)(const sl_pcpu *pc, const sl_pcpu_chunk *c);
    /*
     * Called under lock.  Returns where alloc_area should start, -1 when the
     * chunk cannot hold the request, or -2 - n when the area map must grow
     * to n entries first (the caller drops the lock to allocate).
     */
    int (*find_fit)(sl_pcpu *pc, sl_pcpu_chunk *c, int size, int align);
    /* Returns the byte offset taken, or -1. */
    int (*alloc_area)(sl_pcpu *pc, sl_pcpu_chunk *c, int size, int align, int start);
    /* Returns the bytes freed, or SL_EDOUBLEFREE / SL_EMISALIGNED. */
    int (*free_area)(sl_pcpu *pc, sl_pcpu_chunk *c, int off);
    /* Returns SL_OK or SL_ECORRUPT after printing the broken invariant. */
    int (*validate)(sl_pcpu *pc, const sl_pcpu_chunk *c);
    /* Writes granule states (see sl_pcpu_chunk_granules); returns the count. */
    int (*granules)(const sl_pcpu *pc, const sl_pcpu_chunk *c, uint8_t *out, unsigned max);
    /* The chunk's contig hint in bytes, for the info call. */
    int (*contig_bytes)(const sl_pcpu_chunk *c);
} sli_pcpu_ops;

extern const sli_pcpu_ops sli_pcpu_areamap_ops;
extern const sli_pcpu_ops sli_pcpu_bitmap_ops;
extern const sli_pcpu_ops sli_pcpu_scanhint_ops;

/* pcpu_size_to_slot: by highest bit of the size; a whole unit is the last slot. */
int sli_pcpu_size_to_slot(const sl_pcpu *pc, int size);
/*
 * pcpu_chunk_relocate: moves c from slot oslot to nslot, the slot its state
 * now calls for (the reserved chunk stays on none).  The allocator's own
 * code passes nslot from its chunk_slot called directly, as the kernel's
 * pcpu_chunk_relocate calls its one pcpu_chunk_slot (through the ops table
 * it is an indirect call on every alloc and free, which WebAssembly pays
 * for).
 */
void sli_pcpu_chunk_relocate(sl_pcpu *pc, sl_pcpu_chunk *c, int oslot, int nslot);
/* pcpu_update_empty_pages: adds nr to the chunk's count, and to the global one unless c is the reserved chunk. */
void sli_pcpu_update_empty_pages(sl_pcpu *pc, sl_pcpu_chunk *c, int nr);
/*
 * Records "percpu validate: <what>" (printed to stderr, kept in
 * pc->validate_msg); returns SL_ECORRUPT.  Called under pc->lock.
 */
int sli_pcpu_corrupt(sl_pcpu *pc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * An event of chunk c on behalf of the operation holding pc->lock (slab =
 * the chunk id).  Nothing in SLABLAB_BENCH builds, as every SL_EVENT: there
 * the record is built under sizeof only (compiled, never evaluated), so the
 * variables and parameters that serve events alone stay used.
 */
#if defined(SLABLAB_BENCH)
#define SLI_PCPU_EVENT(pc, c, KIND, ...)                                                                               \
    ((void)sizeof(                                                                                                     \
        (sl_event){.op = (pc)->ev_op, .cpu = (pc)->ev_cpu, .kind = SL_EV_##KIND, .slab = (c)->id, __VA_ARGS__}))
#else
#define SLI_PCPU_EVENT(pc, c, KIND, ...)                                                                               \
    SL_EVENT((pc)->cfg.trace, .op = (pc)->ev_op, .cpu = (pc)->ev_cpu, .kind = SL_EV_##KIND, .slab = (c)->id,           \
             __VA_ARGS__)
#endif
/*
 * Counts scan work for the PCPU_ALLOC_SCAN event and for sl_pcpu_work (the
 * allocation adds its scan to pc->work when it ends).  In every build,
 * benchmark builds included: the deterministic counts the Benchmarks page
 * and `sl_pcpu_run_workload` report are these, at one add per block visited.
 */
#define SLI_PCPU_TALLY(pc, field, n) ((pc)->scan.field += (uint32_t)(n))
/* An area map memmove of `n` entries, counted in pc->work (every build). */
#define SLI_PCPU_MEMMOVED(pc, n) ((pc)->work.memmoves++, (pc)->work.entries_moved += (uint64_t)(n))

/* Shared by the two bitmap allocators (pcpu_bitmap.c). */
/* Returns SL_OK when off starts a live allocation, else SL_EDOUBLEFREE or SL_EMISALIGNED. */
int sli_pcpu_bitmap_check_free(const sl_pcpu *pc, const sl_pcpu_chunk *c, int off);
/* Every allocated run is delimited in bound_map.  Returns SL_OK or SL_ECORRUPT. */
int sli_pcpu_bitmap_validate_maps(sl_pcpu *pc, const sl_pcpu_chunk *c);
/* Marks [bit_off, bit_off + bits) allocated in alloc_map and delimits it in bound_map. */
void sli_pcpu_bitmap_mark(sl_pcpu_chunk *c, int bit_off, int bits);
/* pcpu_next_md_free_region (pcpu_bitmap.c), shared by both bitmap allocators. */
void sli_pcpu_next_md_free_region(const sl_pcpu_chunk *c, int *bit_off, int *bits);
/*
 * The free run that freeing [bit_off, bit_off + bits) completes, as block
 * offsets: *start in the first block, *end in the last, extended over the
 * free bits around it, cheaply where a block's contig hint touches the freed
 * area (the first half of pcpu_block_update_hint_free, both versions).
 */
void sli_pcpu_freed_run(const sl_pcpu_chunk *c, int bit_off, int bits, int *start, int *end);
/*
 * pcpu_next_hint: where a fit in `block` starts: past its scan hint when that
 * is too small for the request (v5.4), else first_free.  The 2017 allocator
 * keeps no scan hint (always 0), so there it is first_free, as in v4.14.
 */
int sli_pcpu_next_hint(const sli_pcpu_block_md *block, int alloc_bits);
/*
 * pcpu_next_fit_region, both versions: the next place at or after *bit_off
 * where the block hints promise alloc_bits aligned bits (*bits of them from
 * there); *bit_off = map bits when none.  Tallies the blocks it visits.
 */
void sli_pcpu_next_fit_region(sl_pcpu *pc, const sl_pcpu_chunk *c, int alloc_bits, int align, int *bit_off, int *bits);
/* The alloc_map bits pcpu_alloc_area searched from start for a fit that ended at found (or failed at end). */
SL_INLINE int sli_pcpu_bits_searched(int start, int found, int alloc_bits, int end)
{
    return (found + alloc_bits < end ? found + alloc_bits : end) - start;
}
/* The exact left_free, right_free, largest run and first free bit of block i. */
void sli_pcpu_block_truth(const sl_pcpu_chunk *c, int i, int *left, int *right, int *largest, int *first);
int sli_pcpu_bitmap_granules(const sl_pcpu *pc, const sl_pcpu_chunk *c, uint8_t *out, unsigned max);
/* The granule state of an allocated granule outside the chunk's region (see sl_pcpu_chunk_granules). */
#define SLI_PCPU_GRANULE_HIDDEN 3
/* True when byte offset off of the unit lies outside c's region. */
SL_INLINE bool sli_pcpu_hidden(const sl_pcpu *pc, const sl_pcpu_chunk *c, int off)
{
    return off < c->start_offset || off >= pc->unit_size - c->end_offset;
}

/* pcpu_addr_in_chunk: p lies in c's units, in its region; *unit gets the unit. */
SL_INLINE bool sli_pcpu_in_region(const sl_pcpu *pc, const sl_pcpu_chunk *c, const char *p, unsigned *unit)
{
    size_t d = (size_t)(p - c->base);
    if (p < c->base || d >= (size_t)pc->unit_size * pc->cfg.nr_units)
        return false;
    *unit = (unsigned)(d / (size_t)pc->unit_size);
    return !sli_pcpu_hidden(pc, c, (int)(d % (size_t)pc->unit_size));
}

/*
 * pcpu_chunk_addr_search with pcpu_addr_in_chunk: the chunk whose units
 * contain p and the unit, or NULL; under lock.  The reserved chunk's region
 * first, then the chunk whose units hold p.  An address outside the first
 * chunk's region (its static variables, the unit's tail) is in no chunk.
 * Inline: it is on every free (a call there is a V8 frame in WebAssembly).
 */
SL_INLINE sl_pcpu_chunk *sli_pcpu_chunk_lookup(const sl_pcpu *pc, const void *vp, unsigned *unit)
{
    const char *p = vp;
    if (pc->reserved_chunk && sli_pcpu_in_region(pc, pc->reserved_chunk, p, unit))
        return pc->reserved_chunk;
    unsigned lo = 0, hi = pc->nr_chunks;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (pc->chunks[mid]->base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && sli_pcpu_in_region(pc, pc->chunks[lo - 1], p, unit) ? pc->chunks[lo - 1] : NULL;
}

/* ------------------------------------------------------------------ */
/* Bitmaps of 64-bit words, bit i in word i / 64 (lib/bitmap.c, lib/find_bit.c). */

SL_INLINE bool sli_test_bit(const uint64_t *map, int i) { return (map[i >> 6] >> (i & 63)) & 1; }
SL_INLINE void sli_set_bit(uint64_t *map, int i) { map[i >> 6] |= 1ull << (i & 63); }
SL_INLINE void sli_clear_bit(uint64_t *map, int i) { map[i >> 6] &= ~(1ull << (i & 63)); }
SL_INLINE int sli_bitmap_words(int bits) { return (bits + 63) / 64; }

/* First set (or clear) bit in [start, size), or size. */
int sli_find_next_bit(const uint64_t *map, int size, int start);
int sli_find_next_zero_bit(const uint64_t *map, int size, int start);
/* Last set bit in [0, size), or size when there is none. */
int sli_find_last_bit(const uint64_t *map, int size);
/*
 * __bitmap_set / __bitmap_clear: bits [start, start + n) set (cleared) a
 * word at a time, the first and last words through masks.  Inline: every
 * percpu alloc and free marks a few bits, and a call there costs more than
 * the marking (a V8 frame in WebAssembly).
 */
SL_INLINE uint64_t sli_first_word_mask(int start) { return ~0ull << (start & 63); }
SL_INLINE uint64_t sli_last_word_mask(int end) { return ~0ull >> (-end & 63); }
SL_INLINE void sli_bitmap_set(uint64_t *map, int start, int n)
{
    uint64_t *p = map + (start >> 6), mask = sli_first_word_mask(start);
    int end = start + n, bits = 64 - (start & 63);
    for (; n >= bits; n -= bits, bits = 64, mask = ~0ull)
        *p++ |= mask;
    if (n > 0)
        *p |= mask & sli_last_word_mask(end);
}
SL_INLINE void sli_bitmap_clear(uint64_t *map, int start, int n)
{
    uint64_t *p = map + (start >> 6), mask = sli_first_word_mask(start);
    int end = start + n, bits = 64 - (start & 63);
    for (; n >= bits; n -= bits, bits = 64, mask = ~0ull)
        *p++ &= ~mask;
    if (n > 0)
        *p &= ~(mask & sli_last_word_mask(end));
}
/* Set bits in [0, size). */
int sli_bitmap_weight(const uint64_t *map, int size);
/*
 * bitmap_find_next_zero_area: the first run of n zero bits at or after
 * start whose start satisfies align_mask, within [0, size).  Returns its
 * start, or a value > size - n when there is none.
 */
int sli_bitmap_find_next_zero_area(const uint64_t *map, int size, int start, int n, int align_mask);

SL_INLINE int sli_ffs0(int x) { return __builtin_ctz((unsigned)x); } /* __ffs, x != 0 */
SL_INLINE int sli_align_up(int x, int a) { return (x + a - 1) & ~(a - 1); }
SL_INLINE int sli_align_down(int x, int a) { return x & ~(a - 1); }
SL_INLINE int sli_min(int a, int b) { return a < b ? a : b; }
SL_INLINE int sli_max(int a, int b) { return a > b ? a : b; }

/* Largest zero run in [start, end) of map, and where (lowest start wins). */
int sli_largest_zero_run(const uint64_t *map, int start, int end, int *run_start);

#endif /* SLI_PCPU_INTERNAL_H */
