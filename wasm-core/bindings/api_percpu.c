/*
 * api_percpu.c - the percpu model for the browser bridge: create an
 * instance, allocate and free, and read chunk state to draw bitmaps.
 *
 * Handles are the instance's address.  Binary layouts (little endian):
 *   sl_pcpu_stats, 72 bytes: u32 nr_chunks @0, u32 nr_empty_chunks @4,
 *     u64 nr_allocs @8, nr_frees @16, live_allocs @24, free_bytes @32,
 *     chunks_created @40, chunks_destroyed @48, map_extends @56,
 *     u32 nr_populated @64, i32 nr_empty_pop_pages @68.
 *   sl_pcpu_chunk_info, 32 bytes: u32 unit_size, free_bytes, contig_bytes,
 *     nr_alloc, slot, map_used, nr_populated, first_free.
 *   granules: one byte per 4 bytes of a unit: 0 free, 1 allocation start,
 *     2 allocation continuation.
 */
#include "export.h"

#include "../src/percpu/percpu.h"

#include <stddef.h>
#include <stdlib.h>

_Static_assert(sizeof(sl_pcpu_stats) == 72 && offsetof(sl_pcpu_stats, nr_populated) == 64, "stats layout");
_Static_assert(sizeof(sl_pcpu_chunk_info) == 32, "chunk info layout");

/* Returns a handle, or 0 for a bad configuration or no memory.  kind: 0 areamap, 1 bitmap, 2 scanhint. */
SL_EXPORT sl_pcpu *sl_api_pcpu_create(int kind, unsigned units, unsigned unit_size)
{
    sl_pcpu *pc = malloc(sizeof *pc);
    sl_pcpu_config cfg = {.kind = (sl_pcpu_kind)kind, .nr_units = units, .unit_size = unit_size};
    if (pc && sl_pcpu_init(pc, &cfg) != SL_OK) {
        free(pc);
        pc = NULL;
    }
    return pc;
}

SL_EXPORT void sl_api_pcpu_destroy(sl_pcpu *pc)
{
    if (pc) {
        sl_pcpu_destroy(pc);
        free(pc);
    }
}

/* Returns the allocation's unit-0 address (> 0), or a negative sl_err. */
SL_EXPORT int sl_api_pcpu_alloc(sl_pcpu *pc, unsigned cpu, unsigned size, unsigned align)
{
    void *p;
    int rc = sl_pcpu_alloc(pc, cpu, size, align, &p);
    return rc == SL_OK ? (int)(uintptr_t)p : rc;
}

/* Returns SL_OK or the free's error (double free, misaligned, foreign). */
SL_EXPORT int sl_api_pcpu_free(sl_pcpu *pc, unsigned cpu, unsigned addr)
{
    return sl_pcpu_free(pc, cpu, (void *)(uintptr_t)addr);
}

/* this_cpu_add on a 64-bit counter at addr, and the sum over CPUs (as a double for JS). */
SL_EXPORT void sl_api_pcpu_add(sl_pcpu *pc, unsigned addr, unsigned cpu, int delta)
{
    sl_pcpu_add(pc, (void *)(uintptr_t)addr, cpu, delta);
}
SL_EXPORT double sl_api_pcpu_sum(sl_pcpu *pc, unsigned addr) { return (double)sl_pcpu_sum(pc, (void *)(uintptr_t)addr); }

SL_EXPORT int sl_api_pcpu_validate(sl_pcpu *pc) { return sl_pcpu_validate(pc); }

SL_EXPORT void sl_api_pcpu_stats(sl_pcpu *pc, sl_pcpu_stats *out) { sl_pcpu_get_stats(pc, out); }

/* Chunks are numbered by base address; the count changes as chunks come and go. */
SL_EXPORT int sl_api_pcpu_chunk_count(sl_pcpu *pc)
{
    sl_pcpu_stats st;
    sl_pcpu_get_stats(pc, &st);
    return (int)st.nr_chunks;
}

SL_EXPORT int sl_api_pcpu_chunk_info(sl_pcpu *pc, unsigned index, sl_pcpu_chunk_info *out)
{
    return sl_pcpu_chunk_info_get(pc, index, out);
}

/* Returns the number of granules written to out (at most max), or SL_EINVAL. */
SL_EXPORT int sl_api_pcpu_chunk_granules(sl_pcpu *pc, unsigned index, uint8_t *out, unsigned max)
{
    return sl_pcpu_chunk_granules(pc, index, out, max);
}
