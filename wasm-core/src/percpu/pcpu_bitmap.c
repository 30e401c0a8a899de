/*
 * pcpu_bitmap.c - the bitmap allocator of 2017 (commit 40064aeca35c and
 * the rest of Dennis Zhou's series, as released in v4.14 mm/percpu.c).
 *
 * Data structures.  One bit per 4-byte granule (PCPU_MIN_ALLOC_SIZE):
 * alloc_map has a bit set for every allocated granule; bound_map
 * (nr_bits + 1 bits) has the start of every allocation and the bit after
 * its end set, so a free finds the size with one find_next_bit.  Bits of
 * bound_map left behind by frees stay set: only bits inside a live
 * allocation are guaranteed clear.
 *
 * Each page of a unit is a metadata block (PCPU_BITMAP_BLOCK_SIZE =
 * PAGE_SIZE, 1024 bits) with contig_hint / contig_hint_start (the largest
 * free run inside the block), left_free / right_free (free bits touching
 * the block's edges, so runs can be joined across blocks) and first_free.
 * The chunk keeps contig_bits / contig_bits_start and first_bit.
 *
 * Accuracy.  Block hints are exact after every operation (validate checks
 * that).  The commit message promises a chunk hint that may lag by up to a
 * page after a free but is never larger than what is free: a free only
 * rescans the chunk when it frees a whole page or spans blocks, otherwise
 * it offers the block's contig hint at the freed start (v4.14's
 * pcpu_chunk_update(chunk, start, s_block->contig_hint)), whose start need
 * not begin a run that long.  The code does not keep the second half of
 * that promise: the allocation path rescans only when an allocation
 * *starts* inside [contig_bits_start, +contig_bits), so an allocation that
 * starts just before a misplaced hint and runs over it leaves contig_bits
 * larger than any free run (the randomized test found 5597 hinted bits in a
 * chunk with 4466 free).  Allocation stays correct, because the bitmap
 * decides; the cost is scans of chunks that cannot fit.  The freed-start
 * pairing can also produce a hint that runs past the end of the map.  The 2019 series
 * replaced the test with pcpu_region_overlap (pcpu_scanhint.c).
 * first_free and first_bit are lower bounds of the first free bit.
 *
 * Empty populated pages.  v4.14 recounts a chunk's nr_empty_pop_pages only
 * when it rebuilds the chunk hint (pcpu_chunk_refresh_hint adds
 * pcpu_cnt_pop_pages over every free region the block hints know), and
 * pages populated for an allocation are not counted (for_alloc), so the
 * count is exact right after a refresh and lags in between.
 *
 * The first chunk (pcpu_alloc_first_chunk): its region's hint and free
 * bytes are set, then the bits before and after the region are marked
 * allocated and delimited in bound_map, each through
 * pcpu_block_update_hint_alloc, as if allocated.
 *
 * All functions run under pcpu_lock.
 */
#include "pcpu_internal.h"

#include <stdlib.h>
#include <string.h>

#define BB SLI_PCPU_BLOCK_BITS

static int bm_chunk_init(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    int bits = sli_pcpu_map_bits(c);
    c->alloc_map = calloc((size_t)sli_bitmap_words(bits), sizeof(uint64_t));
    c->bound_map = calloc((size_t)sli_bitmap_words(bits + 1), sizeof(uint64_t));
    c->md_blocks = calloc((size_t)sli_pcpu_nr_blocks(c), sizeof(*c->md_blocks));
    if (!c->alloc_map || !c->bound_map || !c->md_blocks) {
        free(c->alloc_map);
        free(c->bound_map);
        free(c->md_blocks);
        return SL_ENOMEM;
    }
    for (int i = 0; i < sli_pcpu_nr_blocks(c); i++) {
        sli_pcpu_block_md *b = &c->md_blocks[i];
        b->contig_hint = b->left_free = b->right_free = b->nr_bits = BB;
    }
    c->contig_bits = bits;
    c->free_bytes = pc->unit_size;
    return SL_OK;
}

static void bm_chunk_fini(sl_pcpu_chunk *c)
{
    free(c->alloc_map);
    free(c->bound_map);
    free(c->md_blocks);
}

static int bm_chunk_slot(const sl_pcpu *pc, const sl_pcpu_chunk *c)
{
    if (c->free_bytes < SL_PCPU_MIN_ALLOC_SIZE || c->contig_bits == 0)
        return 0;
    return sli_pcpu_size_to_slot(pc, c->free_bytes);
}

/*
 * pcpu_next_md_free_region: the next free run the block hints know of at or
 * after *bit_off, joining right_free and left_free across blocks.  Unchanged
 * by the 2019 series, so the scan-hint allocator uses this one too.
 */
void sli_pcpu_next_md_free_region(const sl_pcpu_chunk *c, int *bit_off, int *bits)
{
    int i = sli_pcpu_off_to_block_index(*bit_off);
    int block_off = sli_pcpu_off_to_block_off(*bit_off);
    const sli_pcpu_block_md *block;

    *bits = 0;
    for (block = c->md_blocks + i; i < sli_pcpu_nr_blocks(c); block++, i++) {
        if (*bits) {
            *bits += block->left_free;
            if (block->left_free == BB)
                continue;
            return;
        }
        *bits = block->contig_hint;
        if (*bits && block->contig_hint_start >= block_off && *bits + block->contig_hint_start < BB) {
            *bit_off = sli_pcpu_block_off_to_off(i, block->contig_hint_start);
            return;
        }
        block_off = 0;
        *bits = block->right_free;
        *bit_off = (i + 1) * BB - block->right_free;
    }
}

int sli_pcpu_next_hint(const sli_pcpu_block_md *block, int alloc_bits)
{
    if (block->scan_hint && block->contig_hint_start > block->scan_hint_start && alloc_bits > block->scan_hint)
        return block->scan_hint_start + block->scan_hint;
    return block->first_free;
}

void sli_pcpu_next_fit_region(sl_pcpu *pc, const sl_pcpu_chunk *c, int alloc_bits, int align, int *bit_off, int *bits)
{
    int i = sli_pcpu_off_to_block_index(*bit_off);
    int block_off = sli_pcpu_off_to_block_off(*bit_off);
    const sli_pcpu_block_md *block;

    *bits = 0;
    for (block = c->md_blocks + i; i < sli_pcpu_nr_blocks(c); block++, i++) {
        SLI_PCPU_TALLY(pc, blocks, 1);
        if (*bits) {
            *bits += block->left_free;
            if (*bits >= alloc_bits)
                return;
            if (block->left_free == BB)
                continue;
        }
        *bits = sli_align_up(block->contig_hint_start, align) - block->contig_hint_start;
        if (block->contig_hint && block->contig_hint_start >= block_off && block->contig_hint >= *bits + alloc_bits) {
            int start = sli_pcpu_next_hint(block, alloc_bits);
            *bits += alloc_bits + block->contig_hint_start - start;
            *bit_off = sli_pcpu_block_off_to_off(i, start);
            return;
        }
        block_off = 0;
        *bit_off = sli_align_up(BB - block->right_free, align);
        *bits = BB - *bit_off;
        *bit_off = sli_pcpu_block_off_to_off(i, *bit_off);
        if (*bits >= alloc_bits)
            return;
    }
    *bit_off = sli_pcpu_map_bits(c);
}

/* pcpu_chunk_update: offer a free run to the chunk hint (best alignment wins ties). */
static void chunk_update(sl_pcpu_chunk *c, int bit_off, int bits)
{
    if (bits > c->contig_bits) {
        c->contig_bits_start = bit_off;
        c->contig_bits = bits;
    } else if (bits == c->contig_bits && c->contig_bits_start &&
               (!bit_off || sli_ffs0(bit_off) > sli_ffs0(c->contig_bits_start))) {
        c->contig_bits_start = bit_off;
    }
}

/* pcpu_cnt_pop_pages: the populated pages wholly inside [bit_off, bit_off + bits). */
static int cnt_pop_pages(const sl_pcpu_chunk *c, int bit_off, int bits)
{
    int page_start = sli_align_up(bit_off * SL_PCPU_MIN_ALLOC_SIZE, (int)SL_PAGE_SIZE) / (int)SL_PAGE_SIZE;
    int page_end = (bit_off + bits) * SL_PCPU_MIN_ALLOC_SIZE / (int)SL_PAGE_SIZE;
    if (page_start >= page_end)
        return 0;
    return sli_bitmap_weight(c->populated, page_end) - sli_bitmap_weight(c->populated, page_start);
}

/* pcpu_chunk_refresh_hint: rebuild the chunk hint, and the empty page count, from the block hints. */
static void chunk_refresh_hint(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    int bit_off = c->first_bit, bits = 0, nr_empty_pop_pages = 0;
    SLI_PCPU_EVENT(pc, c, PCPU_HINT_REFRESH, .arg0 = SLI_PCPU_REFRESH_CHUNK, .arg1 = (uint32_t)bit_off,
                   .arg2 = (uint32_t)(sli_pcpu_nr_blocks(c) - sli_pcpu_off_to_block_index(bit_off)));
    c->contig_bits = 0;
    for (sli_pcpu_next_md_free_region(c, &bit_off, &bits); bit_off < sli_pcpu_map_bits(c);
         bit_off += bits + 1, sli_pcpu_next_md_free_region(c, &bit_off, &bits)) {
        chunk_update(c, bit_off, bits);
        nr_empty_pop_pages += cnt_pop_pages(c, bit_off, bits);
    }
    sli_pcpu_update_empty_pages(pc, c, nr_empty_pop_pages - c->nr_empty_pop_pages);
}

/* pcpu_block_update: [start, end) is a whole free run of the block. */
static void block_update(sli_pcpu_block_md *block, int start, int end)
{
    int contig = end - start;

    block->first_free = sli_min(block->first_free, start);
    if (start == 0)
        block->left_free = contig;
    if (end == BB)
        block->right_free = contig;
    if (contig > block->contig_hint) {
        block->contig_hint_start = start;
        block->contig_hint = contig;
    } else if (block->contig_hint_start && contig == block->contig_hint &&
               (!start || sli_ffs0(start) > sli_ffs0(block->contig_hint_start))) {
        block->contig_hint_start = start;
    }
}

/* pcpu_block_refresh_hint: rescan a block's free runs from first_free. */
static void block_refresh_hint(sl_pcpu *pc, sl_pcpu_chunk *c, int index)
{
    sli_pcpu_block_md *block = c->md_blocks + index;
    const uint64_t *map = sli_pcpu_index_alloc_map(c, index);
    SLI_PCPU_EVENT(pc, c, PCPU_HINT_REFRESH, .arg0 = SLI_PCPU_REFRESH_BLOCK, .arg1 = (uint32_t)index,
                   .arg2 = (uint32_t)(BB - block->first_free));

    block->contig_hint = 0;
    block->left_free = block->right_free = 0;
    for (int rs = sli_find_next_zero_bit(map, BB, block->first_free), re; rs < BB;
         rs = sli_find_next_zero_bit(map, BB, re + 1)) {
        re = sli_find_next_bit(map, BB, rs + 1);
        block_update(block, rs, re);
    }
}

/* pcpu_block_update_hint_alloc */
static void block_update_hint_alloc(sl_pcpu *pc, sl_pcpu_chunk *c, int bit_off, int bits)
{
    int s_index = sli_pcpu_off_to_block_index(bit_off);
    int e_index = sli_pcpu_off_to_block_index(bit_off + bits - 1);
    int s_off = sli_pcpu_off_to_block_off(bit_off);
    int e_off = sli_pcpu_off_to_block_off(bit_off + bits - 1) + 1;
    sli_pcpu_block_md *s_block = c->md_blocks + s_index, *e_block = c->md_blocks + e_index, *block;

    if (s_off == s_block->first_free)
        s_block->first_free = sli_find_next_zero_bit(sli_pcpu_index_alloc_map(c, s_index), BB, s_off + bits);

    if (s_off >= s_block->contig_hint_start && s_off < s_block->contig_hint_start + s_block->contig_hint) {
        block_refresh_hint(pc, c, s_index); /* block contig hint is broken */
    } else {
        s_block->left_free = sli_min(s_block->left_free, s_off);
        if (s_index == e_index)
            s_block->right_free = sli_min(s_block->right_free, BB - e_off);
        else
            s_block->right_free = 0;
    }

    if (s_index != e_index) {
        e_block->first_free = sli_find_next_zero_bit(sli_pcpu_index_alloc_map(c, e_index), BB, e_off);
        if (e_off == BB) {
            e_block++; /* the whole e_block is taken: reset it with the middle ones */
        } else if (e_off > e_block->contig_hint_start) {
            block_refresh_hint(pc, c, e_index);
        } else {
            e_block->left_free = 0;
            e_block->right_free = sli_min(e_block->right_free, BB - e_off);
        }
        for (block = s_block + 1; block < e_block; block++) {
            block->contig_hint = 0;
            block->left_free = 0;
            block->right_free = 0;
        }
    }

    /* A full chunk scan only when the allocation broke the chunk's contig hint. */
    if (bit_off >= c->contig_bits_start && bit_off < c->contig_bits_start + c->contig_bits)
        chunk_refresh_hint(pc, c);
}

void sli_pcpu_freed_run(const sl_pcpu_chunk *c, int bit_off, int bits, int *start, int *end)
{
    int s_index = sli_pcpu_off_to_block_index(bit_off);
    int e_index = sli_pcpu_off_to_block_index(bit_off + bits - 1);
    int s_off = sli_pcpu_off_to_block_off(bit_off);
    int e_off = sli_pcpu_off_to_block_off(bit_off + bits - 1) + 1;
    const sli_pcpu_block_md *s_block = c->md_blocks + s_index, *e_block = c->md_blocks + e_index;

    *start = s_off;
    if (s_off == s_block->contig_hint + s_block->contig_hint_start) {
        *start = s_block->contig_hint_start;
    } else {
        int l_bit = sli_find_last_bit(sli_pcpu_index_alloc_map(c, s_index), s_off);
        *start = (s_off == l_bit) ? 0 : l_bit + 1;
    }

    if (e_off == e_block->contig_hint_start)
        *end = e_block->contig_hint_start + e_block->contig_hint;
    else
        *end = sli_find_next_bit(sli_pcpu_index_alloc_map(c, e_index), BB, e_off);
}

/* pcpu_block_update_hint_free: find the whole freed run, cheaply when it meets a contig hint. */
static void block_update_hint_free(sl_pcpu *pc, sl_pcpu_chunk *c, int bit_off, int bits)
{
    int s_index = sli_pcpu_off_to_block_index(bit_off);
    int e_index = sli_pcpu_off_to_block_index(bit_off + bits - 1);
    sli_pcpu_block_md *s_block = c->md_blocks + s_index, *e_block = c->md_blocks + e_index, *block;
    int start, end;
    sli_pcpu_freed_run(c, bit_off, bits, &start, &end);

    int e_off = (s_index == e_index) ? end : BB;
    block_update(s_block, start, e_off);

    if (s_index != e_index) {
        block_update(e_block, 0, end);
        for (block = s_block + 1; block < e_block; block++) {
            block->first_free = 0;
            block->contig_hint_start = 0;
            block->contig_hint = BB;
            block->left_free = BB;
            block->right_free = BB;
        }
    }

    /* Rescan the chunk only when a page or block became free or the free spans blocks. */
    if (sli_align_down(end, BB) > sli_align_up(start, BB) || s_index != e_index)
        chunk_refresh_hint(pc, c);
    else
        chunk_update(c, sli_pcpu_block_off_to_off(s_index, start), s_block->contig_hint);
}

/* pcpu_alloc_first_chunk (v4.14) */
static void bm_init_region(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    int start_bits = c->start_offset / SL_PCPU_MIN_ALLOC_SIZE, end_bits = c->end_offset / SL_PCPU_MIN_ALLOC_SIZE;
    int region_bits = sli_pcpu_map_bits(c) - start_bits - end_bits;
    c->nr_empty_pop_pages = cnt_pop_pages(c, start_bits, region_bits);
    c->contig_bits = region_bits;
    c->free_bytes = region_bits * SL_PCPU_MIN_ALLOC_SIZE;
    if (start_bits) {
        sli_pcpu_bitmap_mark(c, 0, start_bits);
        c->first_bit = start_bits;
        block_update_hint_alloc(pc, c, 0, start_bits);
    }
    if (end_bits) {
        sli_pcpu_bitmap_mark(c, sli_pcpu_map_bits(c) - end_bits, end_bits);
        block_update_hint_alloc(pc, c, sli_pcpu_map_bits(c) - end_bits, end_bits);
    }
}

/* pcpu_find_block_fit (pop_only = false): where to start scanning, or -1. */
static int bm_find_fit(sl_pcpu *pc, sl_pcpu_chunk *c, int size, int align)
{
    int alloc_bits = size / SL_PCPU_MIN_ALLOC_SIZE, bit_align = align / SL_PCPU_MIN_ALLOC_SIZE;
    int bit_off, bits;

    /* Too big for the chunk hint: assume pressure, a new chunk comes soon. */
    bit_off = sli_align_up(c->contig_bits_start, bit_align) - c->contig_bits_start;
    if (bit_off + alloc_bits > c->contig_bits)
        return -1;

    bit_off = c->first_bit;
    sli_pcpu_next_fit_region(pc, c, alloc_bits, bit_align, &bit_off, &bits);
    return bit_off >= sli_pcpu_map_bits(c) ? -1 : bit_off;
}

/* pcpu_alloc_area: scan at most one block past the request from start. */
static int bm_alloc_area(sl_pcpu *pc, sl_pcpu_chunk *c, int size, int align, int start)
{
    int alloc_bits = size / SL_PCPU_MIN_ALLOC_SIZE, align_mask = align / SL_PCPU_MIN_ALLOC_SIZE - 1;
    int oslot = bm_chunk_slot(pc, c);
    /* v4.14 does not clamp end to the map; later kernels do (reading past it is a bug). */
    int end = sli_min(start + alloc_bits + BB, sli_pcpu_map_bits(c));
    int bit_off = sli_bitmap_find_next_zero_area(c->alloc_map, end, start, alloc_bits, align_mask);
    SLI_PCPU_TALLY(pc, bits, sli_pcpu_bits_searched(start, bit_off, alloc_bits, end));
    if (bit_off + alloc_bits > end)
        return -1;

    sli_pcpu_bitmap_mark(c, bit_off, alloc_bits);
    c->free_bytes -= alloc_bits * SL_PCPU_MIN_ALLOC_SIZE;

    if (bit_off == c->first_bit)
        c->first_bit = sli_find_next_zero_bit(c->alloc_map, sli_pcpu_map_bits(c), bit_off + alloc_bits);

    block_update_hint_alloc(pc, c, bit_off, alloc_bits);
    sli_pcpu_chunk_relocate(pc, c, oslot, bm_chunk_slot(pc, c));
    return bit_off * SL_PCPU_MIN_ALLOC_SIZE;
}

/*
 * The test free_percpu lacks: an allocation starts where both alloc_map and
 * bound_map are set (inside a live allocation bound_map is clear; a stale
 * bound bit on a free granule means the area was freed).  Returns SL_OK,
 * SL_EDOUBLEFREE or SL_EMISALIGNED.
 */
int sli_pcpu_bitmap_check_free(const sl_pcpu *pc, const sl_pcpu_chunk *c, int off)
{
    if (off < 0 || off >= pc->unit_size || off % SL_PCPU_MIN_ALLOC_SIZE)
        return SL_EMISALIGNED;
    int bit = off / SL_PCPU_MIN_ALLOC_SIZE;
    if (!sli_test_bit(c->alloc_map, bit))
        return sli_test_bit(c->bound_map, bit) ? SL_EDOUBLEFREE : SL_EMISALIGNED;
    return sli_test_bit(c->bound_map, bit) ? SL_OK : SL_EMISALIGNED;
}

/* pcpu_free_area */
static int bm_free_area(sl_pcpu *pc, sl_pcpu_chunk *c, int off)
{
    int rc = sli_pcpu_bitmap_check_free(pc, c, off);
    if (rc != SL_OK)
        return rc;
    int oslot = bm_chunk_slot(pc, c);
    int bit_off = off / SL_PCPU_MIN_ALLOC_SIZE;
    int end = sli_find_next_bit(c->bound_map, sli_pcpu_map_bits(c), bit_off + 1);
    int bits = end - bit_off;
    sli_bitmap_clear(c->alloc_map, bit_off, bits);
    c->free_bytes += bits * SL_PCPU_MIN_ALLOC_SIZE;
    c->first_bit = sli_min(c->first_bit, bit_off);
    block_update_hint_free(pc, c, bit_off, bits);
    sli_pcpu_chunk_relocate(pc, c, oslot, bm_chunk_slot(pc, c));
    return bits * SL_PCPU_MIN_ALLOC_SIZE;
}

void sli_pcpu_bitmap_mark(sl_pcpu_chunk *c, int bit_off, int bits)
{
    sli_bitmap_set(c->alloc_map, bit_off, bits);
    sli_set_bit(c->bound_map, bit_off);
    sli_bitmap_clear(c->bound_map, bit_off + 1, bits - 1);
    sli_set_bit(c->bound_map, bit_off + bits);
}

int sli_pcpu_bitmap_validate_maps(sl_pcpu *pc, const sl_pcpu_chunk *c)
{
    int n = sli_pcpu_map_bits(c);
    for (int rs = sli_find_next_bit(c->alloc_map, n, 0), re; rs < n; rs = sli_find_next_bit(c->alloc_map, n, re)) {
        re = sli_find_next_zero_bit(c->alloc_map, n, rs + 1);
        if (!sli_test_bit(c->bound_map, rs))
            return sli_pcpu_corrupt(pc, "bitmap %u: allocated run at bit %d has no start in bound_map", c->id, rs);
        if (!sli_test_bit(c->bound_map, re))
            return sli_pcpu_corrupt(pc, "bitmap %u: allocated run ending at bit %d has no end in bound_map", c->id,
                                    re - 1);
    }
    return SL_OK;
}

/* Exact left_free / right_free and largest run of block i; first free bit in *first. */
void sli_pcpu_block_truth(const sl_pcpu_chunk *c, int i, int *left, int *right, int *largest, int *first)
{
    const uint64_t *map = sli_pcpu_index_alloc_map(c, i);
    int f = sli_find_next_bit(map, BB, 0);
    *left = f;
    int l = sli_find_last_bit(map, BB);
    *right = l == BB ? BB : BB - 1 - l;
    *largest = sli_largest_zero_run(map, 0, BB, NULL);
    *first = sli_find_next_zero_bit(map, BB, 0);
}

static bool run_is_free(const sl_pcpu_chunk *c, int start, int bits)
{
    return start >= 0 && start + bits <= sli_pcpu_map_bits(c) &&
           (bits == 0 || sli_find_next_bit(c->alloc_map, start + bits, start) >= start + bits);
}

static int bm_validate(sl_pcpu *pc, const sl_pcpu_chunk *c)
{
    int rc = sli_pcpu_bitmap_validate_maps(pc, c);
    if (rc != SL_OK)
        return rc;
    for (int i = 0; i < sli_pcpu_nr_blocks(c); i++) {
        const sli_pcpu_block_md *b = &c->md_blocks[i];
        int left, right, largest, first;
        sli_pcpu_block_truth(c, i, &left, &right, &largest, &first);
        if (b->left_free != left || b->right_free != right)
            return sli_pcpu_corrupt(pc, "bitmap %u block %d: left/right_free %d/%d, map says %d/%d", c->id, i,
                                    b->left_free, b->right_free, left, right);
        if (b->contig_hint != largest)
            return sli_pcpu_corrupt(pc, "bitmap %u block %d: contig_hint %d, largest run %d", c->id, i, b->contig_hint,
                                    largest);
        if (!run_is_free(c, sli_pcpu_block_off_to_off(i, b->contig_hint_start), b->contig_hint) ||
            b->contig_hint_start + b->contig_hint > BB)
            return sli_pcpu_corrupt(pc, "bitmap %u block %d: contig_hint_start %d is not a free run of %d", c->id, i,
                                    b->contig_hint_start, b->contig_hint);
        if (b->first_free > first)
            return sli_pcpu_corrupt(pc, "bitmap %u block %d: first_free %d after the first free bit %d", c->id, i,
                                    b->first_free, first);
    }
    /*
     * No bound on contig_bits but the map's size: v4.14 rescans the chunk
     * only when an allocation *starts* inside the hinted run, and a small
     * free pairs the freed start with the block's contig hint, which can
     * even run past the map's end (see the file comment).
     */
    if (c->contig_bits < 0 || c->contig_bits > sli_pcpu_map_bits(c) || c->contig_bits_start < 0 ||
        c->contig_bits_start >= sli_pcpu_map_bits(c))
        return sli_pcpu_corrupt(pc, "bitmap chunk %u: contig_bits %d at %d outside the map", c->id, c->contig_bits,
                                c->contig_bits_start);
    if (c->first_bit > sli_find_next_zero_bit(c->alloc_map, sli_pcpu_map_bits(c), 0))
        return sli_pcpu_corrupt(pc, "bitmap chunk %u: first_bit %d after the first free bit", c->id, c->first_bit);
    return SL_OK;
}

int sli_pcpu_bitmap_granules(const sl_pcpu *pc, const sl_pcpu_chunk *c, uint8_t *out, unsigned max)
{
    unsigned n = (unsigned)sli_pcpu_map_bits(c);
    if (n > max)
        n = max;
    for (unsigned b = 0; b < n; b++) {
        if (b % 64 == 0 && !c->alloc_map[b / 64] && b + 64 <= n) {
            memset(out + b, 0, 64); /* a free word */
            b += 63;
        } else if (!sli_test_bit(c->alloc_map, (int)b)) {
            out[b] = 0;
        } else if (sli_pcpu_hidden(pc, c, (int)b * SL_PCPU_MIN_ALLOC_SIZE)) {
            out[b] = SLI_PCPU_GRANULE_HIDDEN;
        } else {
            out[b] = sli_test_bit(c->bound_map, (int)b) ? 1 : 2;
        }
    }
    return (int)n;
}

static int bm_contig_bytes(const sl_pcpu_chunk *c) { return c->contig_bits * SL_PCPU_MIN_ALLOC_SIZE; }

const sli_pcpu_ops sli_pcpu_bitmap_ops = {
    .name = "bitmap",
    .chunk_init = bm_chunk_init,
    .init_region = bm_init_region,
    .chunk_fini = bm_chunk_fini,
    .chunk_slot = bm_chunk_slot,
    .find_fit = bm_find_fit,
    .alloc_area = bm_alloc_area,
    .free_area = bm_free_area,
    .validate = bm_validate,
    .granules = sli_pcpu_bitmap_granules,
    .contig_bytes = bm_contig_bytes,
};
