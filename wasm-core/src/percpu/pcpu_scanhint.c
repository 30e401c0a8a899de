/*
 * pcpu_scanhint.c - the bitmap allocator after Dennis Zhou's 2019 scan_hint
 * series ("introduce percpu block scan_hint", 12 patches, pulled for
 * v5.2-rc1: first released in v5.2), as in v5.4 mm/percpu.c.
 *
 * Same alloc_map / bound_map / per-page blocks as pcpu_bitmap.c, plus:
 *   - scan_hint / scan_hint_start in every block: the largest free run known
 *     before the contig hint (if equal in size, after it).  An allocation
 *     larger than scan_hint starts scanning after it (pcpu_next_hint), and
 *     a broken contig hint is rebuilt by promoting the scan hint and
 *     scanning forward only (pcpu_block_refresh_hint).
 *   - chunk_md: the chunk's hints as one more pcpu_block_md covering
 *     nr_bits = the whole map, maintained by the same block_update.
 *   - chunks slotted by contig hint instead of free bytes, and a chunk that
 *     fails to fit an allocation while in a slot below
 *     PCPU_SLOT_FAIL_THRESHOLD relegated to slot 0 (pcpu_core.c), where it
 *     stays until a free changes the slot its hint calls for.
 *   - pcpu_alloc_area scans at most alloc_bits + one block and remembers
 *     the largest hole it skipped (pcpu_find_zero_area), offering it back
 *     as a scan hint (pcpu_block_update_scan).
 *   - nr_empty_pop_pages kept incrementally: a block whose contig hint is
 *     the whole block is an empty page.
 *
 * Accuracy: block left_free is exact; right_free may read 0 while the
 * block ends in a free run (pcpu_block_refresh_hint zeroes it and, when it
 * promotes a scan hint that reaches the block's end, scans only after it,
 * so nothing sets it again; runs across blocks are then missed, never
 * invented); a scan hint is a free
 * run no larger than the contig hint and, when smaller, does not start
 * after it.  (v5.4's block_update can leave a stale scan hint that starts
 * exactly where a new, larger contig hint starts: freeing a run that grows
 * leftwards onto the scan hint's start when old contig == scan size.  It
 * is harmless, since pcpu_next_hint then falls back to first_free, and
 * the randomized test met it, so validate allows it.) block and chunk contig
 * hints never exceed the real largest run and always describe a free run;
 * first_free values are lower bounds.  The free path offers a small freed
 * run to chunk_md as pcpu_block_update(chunk_md, chunk_off(start), end)
 * with `end` still block-relative, exactly as v5.4 does; outside block 0
 * that offer is a no-op, so chunk_md lags until a page-sized free or an
 * allocation rescans it.
 *
 * The first chunk (pcpu_alloc_first_chunk, v5.4): every page counts as
 * empty and populated, then the bits before and after the region are
 * marked allocated through pcpu_block_update_hint_alloc, which takes the
 * pages it breaks off the count.
 *
 * All functions run under pcpu_lock.
 */
#include "pcpu_internal.h"

#include <stdlib.h>

#define BB SLI_PCPU_BLOCK_BITS

/* pcpu_init_md_block */
static void init_md_block(sli_pcpu_block_md *b, int nr_bits)
{
    b->scan_hint = 0;
    b->scan_hint_start = 0;
    b->contig_hint = nr_bits;
    b->contig_hint_start = 0;
    b->left_free = nr_bits;
    b->right_free = nr_bits;
    b->first_free = 0;
    b->nr_bits = nr_bits;
}

static int sh_chunk_init(sl_pcpu *pc, sl_pcpu_chunk *c)
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
    init_md_block(&c->chunk_md, bits);
    for (int i = 0; i < sli_pcpu_nr_blocks(c); i++)
        init_md_block(&c->md_blocks[i], BB);
    c->free_bytes = pc->unit_size;
    return SL_OK;
}

static void sh_chunk_fini(sl_pcpu_chunk *c)
{
    free(c->alloc_map);
    free(c->bound_map);
    free(c->md_blocks);
}

static int sh_chunk_slot(const sl_pcpu *pc, const sl_pcpu_chunk *c)
{
    if (c->free_bytes < SL_PCPU_MIN_ALLOC_SIZE || c->chunk_md.contig_hint == 0)
        return 0;
    return sli_pcpu_size_to_slot(pc, c->chunk_md.contig_hint * SL_PCPU_MIN_ALLOC_SIZE);
}

/* pcpu_region_overlap: [a, b) and [x, y) intersect. */
static bool region_overlap(int a, int b, int x, int y) { return a < y && x < b; }

/* pcpu_block_update with scan hint upkeep; [start, end) is a whole free run. */
SL_INLINE void block_update(sli_pcpu_block_md *block, int start, int end)
{
    int contig = end - start;

    block->first_free = sli_min(block->first_free, start);
    if (start == 0)
        block->left_free = contig;
    if (end == block->nr_bits)
        block->right_free = contig;

    if (contig > block->contig_hint) {
        /* promote the old contig_hint to be the new scan_hint */
        if (start > block->contig_hint_start) {
            if (block->contig_hint > block->scan_hint) {
                block->scan_hint_start = block->contig_hint_start;
                block->scan_hint = block->contig_hint;
            } else if (start < block->scan_hint_start) {
                /* old contig == scan_hint, but the new run is larger: keep scan before contig */
                block->scan_hint = 0;
            }
        } else {
            block->scan_hint = 0;
        }
        block->contig_hint_start = start;
        block->contig_hint = contig;
    } else if (contig == block->contig_hint) {
        if (block->contig_hint_start && (!start || sli_ffs0(start) > sli_ffs0(block->contig_hint_start))) {
            block->contig_hint_start = start;
            if (start < block->scan_hint_start && block->contig_hint > block->scan_hint)
                block->scan_hint = 0;
        } else if (start > block->scan_hint_start || block->contig_hint > block->scan_hint) {
            block->scan_hint_start = start;
            block->scan_hint = contig;
        }
    } else {
        /* smaller than contig: keep it as scan hint if larger, or as large and farther */
        if (start < block->contig_hint_start &&
            (contig > block->scan_hint || (contig == block->scan_hint && start > block->scan_hint_start))) {
            block->scan_hint_start = start;
            block->scan_hint = contig;
        }
    }
}

/* pcpu_block_update_scan: offer a hole the scan skipped, extended backwards over alignment gaps. */
static void block_update_scan(sl_pcpu_chunk *c, int bit_off, int bits)
{
    int s_off = sli_pcpu_off_to_block_off(bit_off);
    int e_off = s_off + bits;
    if (e_off > BB)
        return;
    int s_index = sli_pcpu_off_to_block_index(bit_off);
    int l_bit = sli_find_last_bit(sli_pcpu_index_alloc_map(c, s_index), s_off);
    s_off = (s_off == l_bit) ? 0 : l_bit + 1;
    block_update(c->md_blocks + s_index, s_off, e_off);
}

/* pcpu_chunk_refresh_hint: without full_scan, promote the scan hint and scan forward only. */
static void chunk_refresh_hint(sl_pcpu *pc, sl_pcpu_chunk *c, bool full_scan)
{
    sli_pcpu_block_md *chunk_md = &c->chunk_md;
    int bit_off, bits = 0;
    bool forward = !full_scan && chunk_md->scan_hint;

    if (forward) {
        bit_off = chunk_md->scan_hint_start + chunk_md->scan_hint;
        chunk_md->contig_hint_start = chunk_md->scan_hint_start;
        chunk_md->contig_hint = chunk_md->scan_hint;
        chunk_md->scan_hint = 0;
    } else {
        bit_off = chunk_md->first_free;
        chunk_md->contig_hint = 0;
    }
    SLI_PCPU_EVENT(pc, c, PCPU_HINT_REFRESH, .arg0 = forward ? SLI_PCPU_REFRESH_CHUNK_FORWARD : SLI_PCPU_REFRESH_CHUNK,
                   .arg1 = (uint32_t)bit_off,
                   .arg2 = (uint32_t)(sli_pcpu_nr_blocks(c) - sli_pcpu_off_to_block_index(bit_off)));
    for (sli_pcpu_next_md_free_region(c, &bit_off, &bits); bit_off < sli_pcpu_map_bits(c);
         bit_off += bits + 1, sli_pcpu_next_md_free_region(c, &bit_off, &bits))
        block_update(chunk_md, bit_off, bit_off + bits);
}

/* pcpu_block_refresh_hint */
static void block_refresh_hint(sl_pcpu *pc, sl_pcpu_chunk *c, int index)
{
    sli_pcpu_block_md *block = c->md_blocks + index;
    const uint64_t *map = sli_pcpu_index_alloc_map(c, index);
    int start;
    bool forward = block->scan_hint != 0;

    if (forward) {
        start = block->scan_hint_start + block->scan_hint;
        block->contig_hint_start = block->scan_hint_start;
        block->contig_hint = block->scan_hint;
        block->scan_hint = 0;
    } else {
        start = block->first_free;
        block->contig_hint = 0;
    }
    SLI_PCPU_EVENT(pc, c, PCPU_HINT_REFRESH, .arg0 = forward ? SLI_PCPU_REFRESH_BLOCK_FORWARD : SLI_PCPU_REFRESH_BLOCK,
                   .arg1 = (uint32_t)index, .arg2 = (uint32_t)(BB - start));
    block->right_free = 0;
    for (int rs = sli_find_next_zero_bit(map, BB, start), re; rs < BB; rs = sli_find_next_zero_bit(map, BB, re + 1)) {
        re = sli_find_next_bit(map, BB, rs + 1);
        block_update(block, rs, re);
    }
}

/* pcpu_block_update_hint_alloc */
static void block_update_hint_alloc(sl_pcpu *pc, sl_pcpu_chunk *c, int bit_off, int bits)
{
    sli_pcpu_block_md *chunk_md = &c->chunk_md;
    int nr_empty_pages = 0;
    int s_index = sli_pcpu_off_to_block_index(bit_off);
    int e_index = sli_pcpu_off_to_block_index(bit_off + bits - 1);
    int s_off = sli_pcpu_off_to_block_off(bit_off);
    int e_off = sli_pcpu_off_to_block_off(bit_off + bits - 1) + 1;
    sli_pcpu_block_md *s_block = c->md_blocks + s_index, *e_block = c->md_blocks + e_index, *block;

    if (s_block->contig_hint == BB)
        nr_empty_pages++;
    if (s_off == s_block->first_free)
        s_block->first_free = sli_find_next_zero_bit(sli_pcpu_index_alloc_map(c, s_index), BB, s_off + bits);
    if (region_overlap(s_block->scan_hint_start, s_block->scan_hint_start + s_block->scan_hint, s_off, s_off + bits))
        s_block->scan_hint = 0;
    if (region_overlap(s_block->contig_hint_start, s_block->contig_hint_start + s_block->contig_hint, s_off,
                       s_off + bits)) {
        if (!s_off)
            s_block->left_free = 0;
        block_refresh_hint(pc, c, s_index);
    } else {
        s_block->left_free = sli_min(s_block->left_free, s_off);
        if (s_index == e_index)
            s_block->right_free = sli_min(s_block->right_free, BB - e_off);
        else
            s_block->right_free = 0;
    }

    if (s_index != e_index) {
        if (e_block->contig_hint == BB)
            nr_empty_pages++;
        e_block->first_free = sli_find_next_zero_bit(sli_pcpu_index_alloc_map(c, e_index), BB, e_off);
        if (e_off == BB) {
            e_block++;
        } else {
            if (e_off > e_block->scan_hint_start)
                e_block->scan_hint = 0;
            e_block->left_free = 0;
            if (e_off > e_block->contig_hint_start)
                block_refresh_hint(pc, c, e_index);
            else
                e_block->right_free = sli_min(e_block->right_free, BB - e_off);
        }
        nr_empty_pages += e_index - s_index - 1;
        for (block = s_block + 1; block < e_block; block++) {
            block->scan_hint = 0;
            block->contig_hint = 0;
            block->left_free = 0;
            block->right_free = 0;
        }
    }

    if (nr_empty_pages)
        sli_pcpu_update_empty_pages(pc, c, -nr_empty_pages);

    if (region_overlap(chunk_md->scan_hint_start, chunk_md->scan_hint_start + chunk_md->scan_hint, bit_off,
                       bit_off + bits))
        chunk_md->scan_hint = 0;
    /* Only a broken chunk contig hint needs a chunk scan, and a forward one at that. */
    if (region_overlap(chunk_md->contig_hint_start, chunk_md->contig_hint_start + chunk_md->contig_hint, bit_off,
                       bit_off + bits))
        chunk_refresh_hint(pc, c, false);
}

/* pcpu_block_update_hint_free */
static void block_update_hint_free(sl_pcpu *pc, sl_pcpu_chunk *c, int bit_off, int bits)
{
    int nr_empty_pages = 0;
    int s_index = sli_pcpu_off_to_block_index(bit_off);
    int e_index = sli_pcpu_off_to_block_index(bit_off + bits - 1);
    sli_pcpu_block_md *s_block = c->md_blocks + s_index, *e_block = c->md_blocks + e_index, *block;
    int start, end;
    sli_pcpu_freed_run(c, bit_off, bits, &start, &end);

    int e_off = (s_index == e_index) ? end : BB;
    if (!start && e_off == BB)
        nr_empty_pages++;
    block_update(s_block, start, e_off);

    if (s_index != e_index) {
        if (end == BB)
            nr_empty_pages++;
        block_update(e_block, 0, end);
        nr_empty_pages += e_index - s_index - 1;
        for (block = s_block + 1; block < e_block; block++) {
            block->first_free = 0;
            block->scan_hint = 0;
            block->contig_hint_start = 0;
            block->contig_hint = BB;
            block->left_free = BB;
            block->right_free = BB;
        }
    }

    if (nr_empty_pages)
        sli_pcpu_update_empty_pages(pc, c, nr_empty_pages);

    if ((end - start) >= BB || s_index != e_index)
        chunk_refresh_hint(pc, c, true);
    else
        block_update(&c->chunk_md, sli_pcpu_block_off_to_off(s_index, start), end); /* `end` block-relative, as v5.4 */
}

/* pcpu_alloc_first_chunk (v5.4) */
static void sh_init_region(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    int start_bits = c->start_offset / SL_PCPU_MIN_ALLOC_SIZE, end_bits = c->end_offset / SL_PCPU_MIN_ALLOC_SIZE;
    c->nr_empty_pop_pages = c->nr_pages;
    c->free_bytes = pc->unit_size - c->start_offset - c->end_offset;
    if (start_bits) {
        sli_pcpu_bitmap_mark(c, 0, start_bits);
        c->chunk_md.first_free = start_bits;
        block_update_hint_alloc(pc, c, 0, start_bits);
    }
    if (end_bits) {
        sli_pcpu_bitmap_mark(c, sli_pcpu_map_bits(c) - end_bits, end_bits);
        block_update_hint_alloc(pc, c, sli_pcpu_map_bits(c) - end_bits, end_bits);
    }
}

/* pcpu_find_block_fit (pop_only = false) */
static int sh_find_fit(sl_pcpu *pc, sl_pcpu_chunk *c, int size, int align)
{
    const sli_pcpu_block_md *chunk_md = &c->chunk_md;
    int alloc_bits = size / SL_PCPU_MIN_ALLOC_SIZE, bit_align = align / SL_PCPU_MIN_ALLOC_SIZE;
    int bit_off, bits;

    bit_off = sli_align_up(chunk_md->contig_hint_start, bit_align) - chunk_md->contig_hint_start;
    if (bit_off + alloc_bits > chunk_md->contig_hint)
        return -1;
    bit_off = sli_pcpu_next_hint(chunk_md, alloc_bits);
    sli_pcpu_next_fit_region(pc, c, alloc_bits, bit_align, &bit_off, &bits);
    return bit_off >= sli_pcpu_map_bits(c) ? -1 : bit_off;
}

/*
 * pcpu_find_zero_area: bitmap_find_next_zero_area that also remembers the
 * largest (best aligned on ties) run it rejected.
 */
static int find_zero_area(const uint64_t *map, int size, int start, int nr, int align_mask, int *largest_off,
                          int *largest_bits)
{
    for (;;) {
        int index = sli_find_next_zero_bit(map, size, start);
        index = (index + align_mask) & ~align_mask;
        int area_off = index;
        int end = index + nr;
        if (end > size)
            return end;
        int i = sli_find_next_bit(map, end, index);
        if (i >= end)
            return index;
        int area_bits = i - area_off;
        if (area_bits > *largest_bits || (area_bits == *largest_bits && *largest_off &&
                                          (!area_off || sli_ffs0(area_off) > sli_ffs0(*largest_off)))) {
            *largest_off = area_off;
            *largest_bits = area_bits;
        }
        start = i + 1;
    }
}

/* pcpu_alloc_area */
static int sh_alloc_area(sl_pcpu *pc, sl_pcpu_chunk *c, int size, int align, int start)
{
    sli_pcpu_block_md *chunk_md = &c->chunk_md;
    int alloc_bits = size / SL_PCPU_MIN_ALLOC_SIZE, align_mask = align / SL_PCPU_MIN_ALLOC_SIZE - 1;
    int area_off = 0, area_bits = 0;
    int oslot = sh_chunk_slot(pc, c);

    int end = sli_min(start + alloc_bits + BB, sli_pcpu_map_bits(c));
    int bit_off = find_zero_area(c->alloc_map, end, start, alloc_bits, align_mask, &area_off, &area_bits);
    SLI_PCPU_TALLY(pc, bits, sli_pcpu_bits_searched(start, bit_off, alloc_bits, end));
    if (bit_off >= end)
        return -1;
    if (area_bits)
        block_update_scan(c, area_off, area_bits);

    sli_pcpu_bitmap_mark(c, bit_off, alloc_bits);
    c->free_bytes -= alloc_bits * SL_PCPU_MIN_ALLOC_SIZE;

    if (bit_off == chunk_md->first_free)
        chunk_md->first_free = sli_find_next_zero_bit(c->alloc_map, sli_pcpu_map_bits(c), bit_off + alloc_bits);

    block_update_hint_alloc(pc, c, bit_off, alloc_bits);
    sli_pcpu_chunk_relocate(pc, c, oslot, sh_chunk_slot(pc, c));
    return bit_off * SL_PCPU_MIN_ALLOC_SIZE;
}

/* pcpu_free_area */
static int sh_free_area(sl_pcpu *pc, sl_pcpu_chunk *c, int off)
{
    int rc = sli_pcpu_bitmap_check_free(pc, c, off);
    if (rc != SL_OK)
        return rc;
    int oslot = sh_chunk_slot(pc, c);
    int bit_off = off / SL_PCPU_MIN_ALLOC_SIZE;
    int end = sli_find_next_bit(c->bound_map, sli_pcpu_map_bits(c), bit_off + 1);
    int bits = end - bit_off;
    sli_bitmap_clear(c->alloc_map, bit_off, bits);
    c->free_bytes += bits * SL_PCPU_MIN_ALLOC_SIZE;
    c->chunk_md.first_free = sli_min(c->chunk_md.first_free, bit_off);
    block_update_hint_free(pc, c, bit_off, bits);
    sli_pcpu_chunk_relocate(pc, c, oslot, sh_chunk_slot(pc, c));
    return bits * SL_PCPU_MIN_ALLOC_SIZE;
}

static bool run_is_free(const sl_pcpu_chunk *c, int start, int bits)
{
    return start >= 0 && start + bits <= sli_pcpu_map_bits(c) &&
           (bits == 0 || sli_find_next_bit(c->alloc_map, start + bits, start) >= start + bits);
}

/* Hints of one md block (base = its first bit in the chunk) against the truth. */
static int check_md(sl_pcpu *pc, const sl_pcpu_chunk *c, const char *what, int idx, const sli_pcpu_block_md *b,
                    int base, int largest, int first)
{
    if (b->contig_hint > largest || !run_is_free(c, base + b->contig_hint_start, b->contig_hint) ||
        b->contig_hint_start + b->contig_hint > b->nr_bits)
        return sli_pcpu_corrupt(pc, "scanhint %u %s %d: contig_hint %d at %d (largest free run %d)", c->id, what, idx,
                                b->contig_hint, b->contig_hint_start, largest);
    if (b->scan_hint && (b->scan_hint > b->contig_hint || !run_is_free(c, base + b->scan_hint_start, b->scan_hint) ||
                         (b->scan_hint < b->contig_hint && b->scan_hint_start > b->contig_hint_start)))
        return sli_pcpu_corrupt(pc, "scanhint %u %s %d: scan_hint %d at %d vs contig_hint %d at %d", c->id, what, idx,
                                b->scan_hint, b->scan_hint_start, b->contig_hint, b->contig_hint_start);
    if (b->first_free > first)
        return sli_pcpu_corrupt(pc, "scanhint %u %s %d: first_free %d after the first free bit %d", c->id, what, idx,
                                b->first_free, first);
    return SL_OK;
}

static int sh_validate(sl_pcpu *pc, const sl_pcpu_chunk *c)
{
    int rc = sli_pcpu_bitmap_validate_maps(pc, c);
    for (int i = 0; i < sli_pcpu_nr_blocks(c) && rc == SL_OK; i++) {
        const sli_pcpu_block_md *b = &c->md_blocks[i];
        int left, right, largest, first;
        sli_pcpu_block_truth(c, i, &left, &right, &largest, &first);
        /* Promoting a scan hint that touches the block's end leaves right_free 0 (v5.4 and later). */
        if (b->left_free != left || b->right_free > right)
            return sli_pcpu_corrupt(pc, "scanhint %u block %d: left/right_free %d/%d, map says %d/%d", c->id, i,
                                    b->left_free, b->right_free, left, right);
        /* A wholly free block is an empty page: its contig hint must say so (nr_empty_pop_pages counts on it). */
        if ((largest == BB) != (b->contig_hint == BB))
            return sli_pcpu_corrupt(pc, "scanhint %u block %d: contig_hint %d, largest free run %d", c->id, i,
                                    b->contig_hint, largest);
        rc = check_md(pc, c, "block", i, b, i * BB, largest, first);
    }
    if (rc != SL_OK)
        return rc;
    int largest = sli_largest_zero_run(c->alloc_map, 0, sli_pcpu_map_bits(c), NULL);
    return check_md(pc, c, "chunk", 0, &c->chunk_md, 0, largest,
                    sli_find_next_zero_bit(c->alloc_map, sli_pcpu_map_bits(c), 0));
}

static int sh_contig_bytes(const sl_pcpu_chunk *c) { return c->chunk_md.contig_hint * SL_PCPU_MIN_ALLOC_SIZE; }

const sli_pcpu_ops sli_pcpu_scanhint_ops = {
    .name = "scanhint",
    .chunk_init = sh_chunk_init,
    .init_region = sh_init_region,
    .chunk_fini = sh_chunk_fini,
    .chunk_slot = sh_chunk_slot,
    .find_fit = sh_find_fit,
    .alloc_area = sh_alloc_area,
    .free_area = sh_free_area,
    .validate = sh_validate,
    .granules = sli_pcpu_bitmap_granules,
    .contig_bytes = sh_contig_bytes,
};
