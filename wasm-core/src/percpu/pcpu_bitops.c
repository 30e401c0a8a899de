/*
 * pcpu_bitops.c - the bitmap primitives the bitmap allocators are built
 * from, after lib/find_bit.c and lib/bitmap.c: a word at a time with
 * count-trailing-zeros, so a scan costs what the kernel's costs.
 *
 * Maps are arrays of uint64_t; bits past `size` in the last word may hold
 * anything and are masked off.  No state, no locking: callers hold
 * pcpu_lock.
 */
#include "pcpu_internal.h"

/* One function for both polarities: invert = ~0 finds zero bits. */
static int find_next(const uint64_t *map, int size, int start, uint64_t invert)
{
    if (start >= size)
        return size;
    int w = start >> 6;
    uint64_t word = (map[w] ^ invert) & (~0ull << (start & 63));
    for (;;) {
        if (word) {
            int bit = (w << 6) + __builtin_ctzll(word);
            return bit < size ? bit : size;
        }
        if (++w >= sli_bitmap_words(size))
            return size;
        word = map[w] ^ invert;
    }
}

int sli_find_next_bit(const uint64_t *map, int size, int start) { return find_next(map, size, start, 0); }

int sli_find_next_zero_bit(const uint64_t *map, int size, int start) { return find_next(map, size, start, ~0ull); }

int sli_find_last_bit(const uint64_t *map, int size)
{
    if (size <= 0)
        return size;
    int w = (size - 1) >> 6;
    uint64_t word = map[w];
    if ((size & 63) != 0)
        word &= (1ull << (size & 63)) - 1;
    for (;;) {
        if (word)
            return (w << 6) + 63 - __builtin_clzll(word);
        if (w-- == 0)
            return size;
        word = map[w];
    }
}

int sli_bitmap_weight(const uint64_t *map, int size)
{
    int n = 0, w;
    for (w = 0; w < size >> 6; w++)
        n += __builtin_popcountll(map[w]);
    if (size & 63)
        n += __builtin_popcountll(map[w] & ((1ull << (size & 63)) - 1));
    return n;
}

int sli_bitmap_find_next_zero_area(const uint64_t *map, int size, int start, int n, int align_mask)
{
    for (;;) {
        int index = sli_find_next_zero_bit(map, size, start);
        index = (index + align_mask) & ~align_mask;
        int end = index + n;
        if (end > size)
            return end;
        int i = sli_find_next_bit(map, end, index);
        if (i >= end)
            return index;
        start = i + 1;
    }
}

int sli_largest_zero_run(const uint64_t *map, int start, int end, int *run_start)
{
    int best = 0, best_start = start;
    int rs = sli_find_next_zero_bit(map, end, start);
    while (rs < end) {
        int re = sli_find_next_bit(map, end, rs + 1);
        if (re - rs > best) {
            best = re - rs;
            best_start = rs;
        }
        rs = sli_find_next_zero_bit(map, end, re + 1);
    }
    if (run_start)
        *run_start = best_start;
    return best;
}
