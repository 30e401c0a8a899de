/*
 * pcpu_areamap.c - the area map allocator percpu used until 2017 (v4.13
 * mm/percpu.c: pcpu_alloc_area, pcpu_free_area, pcpu_need_to_extend,
 * pcpu_count_occupied_pages, and the first chunk's map from
 * pcpu_setup_first_chunk).
 *
 * Data structure, as the kernel stores it.  chunk->map[0..map_used] is a
 * sorted array of int area start offsets in bytes; bit 0 of an entry says
 * the area is in use (offsets are even: sizes and alignments are rounded to
 * 2, so the map's granularity is 2 bytes, not the bitmaps' 4).  Area i
 * spans [map[i] & ~1, map[i + 1] & ~1).  map[map_used] is the sentinel, the
 * end of the chunk's region | 1: unit_size | 1, or for the first chunk the
 * end of its dynamic region (and of its reserved region for the reserved
 * chunk).  The first chunk's static region (and the reserved chunk's) is
 * map[0] = 0 | 1, an area in use that is never freed.  first_free is a map
 * index with no free area before it; contig_hint (bytes) is never smaller
 * than the largest free area, but may be larger until an allocation scans
 * the whole map; free_size counts free bytes.  The empty populated pages an
 * allocation breaks or a free restores are counted by
 * pcpu_count_occupied_pages (v4.13 keeps only the global count; the model
 * keeps the same deltas per chunk as well).
 *
 * Cost.  An allocation scans from first_free and, when it splits an area,
 * memmoves the rest of the map up by one or two entries; a free binary
 * searches and, when it merges with a neighbour, memmoves the rest of the
 * map down.  With 4-byte objects a 256 KiB unit holds 65536 entries, so a
 * free in the middle of a full chunk moves up to 256 KiB: the seed's 4.7 s.
 * A chunk whose only holes are too small or wrongly aligned keeps a
 * contig_hint that admits the request, so every allocation rescans its
 * whole map and fails: the seed's 52-minute 8-byte-aligned run.
 *
 * All functions run under pcpu_lock.
 */
#include "pcpu_internal.h"

#include <stdlib.h>
#include <string.h>

static int am_chunk_init(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    c->map = malloc(sizeof(int) * SLI_PCPU_DFL_MAP_ALLOC);
    if (!c->map)
        return SL_ENOMEM;
    c->map_alloc = SLI_PCPU_DFL_MAP_ALLOC;
    c->map[0] = 0;
    c->map[1] = pc->unit_size | 1;
    c->map_used = 1;
    c->contig_hint = c->free_bytes = pc->unit_size;
    c->first_free = 0;
    return SL_OK;
}

static void am_chunk_fini(sl_pcpu_chunk *c) { free(c->map); }

/*
 * pcpu_count_occupied_pages: the pages area i occupies, a page it straddles
 * included iff the rest of that page is free.
 */
static int count_occupied_pages(const sl_pcpu_chunk *c, int i)
{
    int page = (int)SL_PAGE_SIZE;
    int off = c->map[i] & ~1;
    int end = c->map[i + 1] & ~1;

    if (off % page && i > 0) {
        int prev = c->map[i - 1];
        if (!(prev & 1) && prev <= sli_align_down(off, page))
            off = sli_align_down(off, page);
    }
    if (end % page && i + 1 < c->map_used) {
        int next = c->map[i + 1];
        int nend = c->map[i + 2] & ~1;
        if (!(next & 1) && nend >= sli_align_up(end, page))
            end = sli_align_up(end, page);
    }
    return sli_max(end / page - (off + page - 1) / page, 0);
}

/*
 * The first chunk's map (pcpu_setup_first_chunk, v4.13): map[0] = 1 hides
 * [0, start) as an area in use, then one free area up to the sentinel; the
 * map is the static one of PERCPU_DYNAMIC_EARLY_SLOTS entries.
 */
static void am_init_region(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    int start = c->start_offset, end = pc->unit_size - c->end_offset;
    int *map = realloc(c->map, sizeof(int) * SLI_PCPU_EARLY_MAP_SLOTS);
    if (map) {
        c->map = map;
        c->map_alloc = SLI_PCPU_EARLY_MAP_SLOTS;
    }
    c->map_used = 0;
    if (start)
        c->map[c->map_used++] = 0 | 1;
    c->first_free = c->map_used;
    c->map[c->map_used++] = start;
    c->map[c->map_used] = end | 1;
    c->contig_hint = c->free_bytes = end - start;
    c->nr_empty_pop_pages = count_occupied_pages(c, c->first_free);
}

static int am_chunk_slot(const sl_pcpu *pc, const sl_pcpu_chunk *c)
{
    if (c->free_bytes < (int)sizeof(int) || c->contig_hint < (int)sizeof(int))
        return 0;
    return sli_pcpu_size_to_slot(pc, c->free_bytes);
}

/* The contig_hint test of pcpu_alloc's walk, then pcpu_need_to_extend (non-atomic margin). */
static int am_find_fit(sl_pcpu *pc, sl_pcpu_chunk *c, int size, int align)
{
    (void)pc;
    (void)align;
    if (size > c->contig_hint)
        return -1;
    if (c->map_alloc >= c->map_used + SLI_PCPU_MAP_MARGIN_HIGH)
        return 0;
    int new_alloc = SLI_PCPU_DFL_MAP_ALLOC;
    while (new_alloc < c->map_used + SLI_PCPU_MAP_MARGIN_HIGH)
        new_alloc *= 2;
    return -2 - new_alloc;
}

/* kernel: pcpu_alloc_area */
static int am_alloc_area(sl_pcpu *pc, sl_pcpu_chunk *c, int size, int align, int start)
{
    (void)start;
    int oslot = am_chunk_slot(pc, c);
    int scanned_from = c->first_free;
    int max_contig = 0;
    int i, off;
    bool seen_free = false;
    int *p;

    for (i = c->first_free, p = c->map + i; i < c->map_used; i++, p++) {
        int head, tail, this_size;

        off = *p;
        if (off & 1)
            continue;
        this_size = (p[1] & ~1) - off;

        head = sli_align_up(off, align) - off; /* pcpu_fit_in_area without pop_only */
        if (this_size < head + size) {
            if (!seen_free) {
                c->first_free = i;
                seen_free = true;
            }
            max_contig = sli_max(this_size, max_contig);
            continue;
        }

        /* A head smaller than an int, or one after a free area, merges backwards. */
        if (head && (head < (int)sizeof(int) || !(p[-1] & 1))) {
            *p = off += head;
            if (p[-1] & 1)
                c->free_bytes -= head;
            else
                max_contig = sli_max(*p - p[-1], max_contig);
            this_size -= head;
            head = 0;
        }

        /* A tail smaller than an int stays with the allocation. */
        tail = this_size - head - size;
        if (tail < (int)sizeof(int)) {
            tail = 0;
            size = this_size - head;
        }

        if (head || tail) {
            int nr_extra = !!head + !!tail;
            SLI_PCPU_EVENT(pc, c, PCPU_MAP_MEMMOVE, .arg0 = (uint32_t)(c->map_used - i), .arg1 = (uint32_t)nr_extra,
                           .arg2 = (uint32_t)(i + 1));
            SLI_PCPU_MEMMOVED(pc, c->map_used - i);
            memmove(p + nr_extra + 1, p + 1, sizeof(c->map[0]) * (size_t)(c->map_used - i));
            c->map_used += nr_extra;
            if (head) {
                if (!seen_free) {
                    c->first_free = i;
                    seen_free = true;
                }
                *++p = off += head;
                ++i;
                max_contig = sli_max(head, max_contig);
            }
            if (tail) {
                p[1] = off + size;
                max_contig = sli_max(tail, max_contig);
            }
        }

        if (!seen_free)
            c->first_free = i + 1;

        if (i + 1 == c->map_used)
            c->contig_hint = max_contig; /* fully scanned */
        else
            c->contig_hint = sli_max(c->contig_hint, max_contig);

        c->free_bytes -= size;
        *p |= 1;

        SLI_PCPU_TALLY(pc, blocks, i + 1 - scanned_from);
        sli_pcpu_update_empty_pages(pc, c, -count_occupied_pages(c, i));
        sli_pcpu_chunk_relocate(pc, c, oslot, am_chunk_slot(pc, c));
        return off;
    }

    SLI_PCPU_TALLY(pc, blocks, c->map_used - scanned_from);
    c->contig_hint = max_contig; /* fully scanned */
    sli_pcpu_chunk_relocate(pc, c, oslot, am_chunk_slot(pc, c));
    return -1;
}

/* kernel: pcpu_free_area */
static int am_free_area(sl_pcpu *pc, sl_pcpu_chunk *c, int freeme)
{
    int oslot = am_chunk_slot(pc, c);
    int off = 0, to_free = 0, freed;
    unsigned i = 0, j = (unsigned)c->map_used;
    int *p;

    if (freeme < 0 || freeme >= pc->unit_size)
        return SL_EMISALIGNED;
    freeme |= 1; /* we search for the <offset, in use> pair */
    while (i != j) {
        unsigned k = (i + j) / 2;
        off = c->map[k];
        if (off < freeme)
            i = k + 1;
        else if (off > freeme)
            j = k;
        else
            i = j = k;
    }
    if (off != freeme) /* the kernel BUG()s here */
        return i > 0 && c->map[i - 1] == (freeme & ~1) ? SL_EDOUBLEFREE : SL_EMISALIGNED;

    if ((int)i < c->first_free)
        c->first_free = (int)i;

    p = c->map + i;
    *p = off &= ~1;
    freed = (p[1] & ~1) - off;
    c->free_bytes += freed;
    sli_pcpu_update_empty_pages(pc, c, count_occupied_pages(c, (int)i));

    if (!(p[1] & 1)) /* merge with next? */
        to_free++;
    if (i > 0 && !(p[-1] & 1)) { /* merge with previous? */
        to_free++;
        i--;
        p--;
    }
    if (to_free) {
        c->map_used -= to_free;
        SLI_PCPU_EVENT(pc, c, PCPU_MAP_MEMMOVE, .arg0 = (uint32_t)(c->map_used - (int)i), .arg1 = (uint32_t)-to_free,
                       .arg2 = i + 1 + (uint32_t)to_free);
        SLI_PCPU_MEMMOVED(pc, c->map_used - (int)i);
        memmove(p + 1, p + 1 + to_free, (size_t)(c->map_used - (int)i) * sizeof(c->map[0]));
    }

    c->contig_hint = sli_max(c->map[i + 1] - c->map[i] - 1, c->contig_hint);
    sli_pcpu_chunk_relocate(pc, c, oslot, am_chunk_slot(pc, c));
    return freed;
}

static int am_validate(sl_pcpu *pc, const sl_pcpu_chunk *c)
{
    const int *m = c->map;
    int end = pc->unit_size - c->end_offset, hidden_head = c->start_offset ? 1 : 0;
    if (c->map_used < 1 + hidden_head || c->map_used + 1 > c->map_alloc)
        return sli_pcpu_corrupt(pc, "area map %u: map_used %d, map_alloc %d", c->id, c->map_used, c->map_alloc);
    if ((m[0] & ~1) != 0 || m[c->map_used] != (end | 1))
        return sli_pcpu_corrupt(pc, "area map %u: first entry %d or sentinel %d wrong", c->id, m[0], m[c->map_used]);
    if (hidden_head && (m[0] != 1 || (m[1] & ~1) != c->start_offset))
        return sli_pcpu_corrupt(pc, "area map %u: map[0] %d, map[1] %d do not hide [0, %d)", c->id, m[0], m[1],
                                c->start_offset);
    int free_size = 0, largest = 0, first_free_idx = c->map_used, in_use = 0;
    for (int i = 0; i < c->map_used; i++) {
        int size = (m[i + 1] & ~1) - (m[i] & ~1);
        if (size <= 0)
            return sli_pcpu_corrupt(pc, "area map %u: entry %d (%d) not below entry %d (%d)", c->id, i, m[i], i + 1,
                                    m[i + 1]);
        if (m[i] & 1) {
            in_use++;
            continue;
        }
        if (i > 0 && !(m[i - 1] & 1))
            return sli_pcpu_corrupt(pc, "area map %u: free areas %d and %d were not merged", c->id, i - 1, i);
        if (first_free_idx == c->map_used)
            first_free_idx = i;
        free_size += size;
        largest = sli_max(largest, size);
    }
    if (free_size != c->free_bytes)
        return sli_pcpu_corrupt(pc, "area map %u: free_size %d, map says %d", c->id, c->free_bytes, free_size);
    if (in_use - hidden_head != c->nr_alloc)
        return sli_pcpu_corrupt(pc, "area map %u: nr_alloc %d, map holds %d", c->id, c->nr_alloc, in_use - hidden_head);
    if (c->contig_hint < largest || c->contig_hint > pc->unit_size)
        return sli_pcpu_corrupt(pc, "area map %u: contig_hint %d, largest free area %d", c->id, c->contig_hint,
                                largest);
    if (c->first_free < 0 || c->first_free > first_free_idx)
        return sli_pcpu_corrupt(pc, "area map %u: first_free %d after the first free area %d", c->id, c->first_free,
                                first_free_idx);
    return SL_OK;
}

static int am_granules(const sl_pcpu *pc, const sl_pcpu_chunk *c, uint8_t *out, unsigned max)
{
    unsigned n = (unsigned)pc->unit_size / SL_PCPU_MIN_ALLOC_SIZE;
    if (n > max)
        n = max;
    for (unsigned g = 0; g < n; g++)
        out[g] = sli_pcpu_hidden(pc, c, (int)g * SL_PCPU_MIN_ALLOC_SIZE) ? SLI_PCPU_GRANULE_HIDDEN : 0;
    for (int i = c->start_offset ? 1 : 0; i < c->map_used; i++) {
        if (!(c->map[i] & 1))
            continue;
        unsigned s = (unsigned)(c->map[i] & ~1), e = (unsigned)(c->map[i + 1] & ~1);
        for (unsigned g = s / SL_PCPU_MIN_ALLOC_SIZE; g <= (e - 1) / SL_PCPU_MIN_ALLOC_SIZE && g < n; g++)
            if (!out[g])
                out[g] = g == s / SL_PCPU_MIN_ALLOC_SIZE ? 1 : 2;
    }
    return (int)n;
}

static int am_contig_bytes(const sl_pcpu_chunk *c) { return c->contig_hint; }

const sli_pcpu_ops sli_pcpu_areamap_ops = {
    .name = "areamap",
    .chunk_init = am_chunk_init,
    .init_region = am_init_region,
    .chunk_fini = am_chunk_fini,
    .chunk_slot = am_chunk_slot,
    .find_fit = am_find_fit,
    .alloc_area = am_alloc_area,
    .free_area = am_free_area,
    .validate = am_validate,
    .granules = am_granules,
    .contig_bytes = am_contig_bytes,
};
