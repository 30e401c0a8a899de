/*
 * pcpu_snapshot.c - the whole percpu state as little-endian records for the
 * UI (layout: docs/snapshot-format.md, "percpu snapshot", version
 * SNAP_VERSION): a header, one fixed-size record per chunk in id order, the
 * slot lists in list order, then each chunk's raw maps as the allocator
 * keeps them (populated bitmap; alloc_map, bound_map and md_blocks for the
 * bitmaps; the int map entries with their in-use bit, sentinel included,
 * for the area map).
 *
 * Taken under pcpu_lock, so it is exact even while other CPUs allocate.
 * Nothing in it is an address: two instances that ran the same operations
 * give the same bytes.
 */
#include "pcpu_internal.h"

#include <stdlib.h>
#include <string.h>

#define SNAP_MAGIC 0x55504350u /* "PCPU" */
#define SNAP_VERSION 1u
#define NONE32 0xffffffffu

enum { HDR_SIZE = 128, CHUNK_SIZE = 112, BLOCK_SIZE = 32 };

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); } /* wasm32 and x86-64 are little-endian */
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static size_t pad4(size_t n) { return (n + 3) & ~(size_t)3; }
static size_t bitmap_bytes(int bits) { return pad4(((size_t)bits + 7) / 8); }

/* The chunk's data after the records: its maps, each padded to 4 bytes. */
static size_t chunk_data_size(const sl_pcpu *pc, const sl_pcpu_chunk *c)
{
    size_t n = bitmap_bytes(c->nr_pages);
    if (pc->cfg.kind == SL_PCPU_AREAMAP)
        return n + 4 * ((size_t)c->map_used + 1);
    int bits = sli_pcpu_map_bits(c);
    return n + bitmap_bytes(bits) + bitmap_bytes(bits + 1) + (size_t)BLOCK_SIZE * (size_t)sli_pcpu_nr_blocks(c);
}

/* Copies a bitmap of `bits` bits as bytes (bit i in byte i / 8, bit i % 8); returns the bytes taken. */
static size_t put_bitmap(unsigned char *p, const uint64_t *map, int bits)
{
    size_t n = bitmap_bytes(bits);
    memset(p, 0, n);
    memcpy(p, map, ((size_t)bits + 7) / 8); /* little-endian words are bytes in bit order */
    if (bits % 8)
        p[bits / 8] &= (unsigned char)((1u << (bits % 8)) - 1);
    return n;
}

static void put_md(unsigned char *p, const sli_pcpu_block_md *b)
{
    const int v[8] = {b->scan_hint, b->scan_hint_start, b->contig_hint, b->contig_hint_start,
                      b->left_free, b->right_free,      b->first_free,  b->nr_bits};
    for (unsigned i = 0; i < 8; i++)
        put32(p + 4 * i, (uint32_t)v[i]);
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = (*(sl_pcpu_chunk *const *)a)->id, y = (*(sl_pcpu_chunk *const *)b)->id;
    return x < y ? -1 : x > y;
}

/* The index of the chunk with this id in all[0..n), sorted by id. */
static unsigned index_of(sl_pcpu_chunk *const *all, unsigned n, uint32_t id)
{
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (all[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The chunk record at r (its slot and position left NONE: the slot walk sets them), its data at b + *data. */
static void put_chunk(const sl_pcpu *pc, const sl_pcpu_chunk *c, unsigned char *r, unsigned char *b, size_t *data)
{
    bool areamap = pc->cfg.kind == SL_PCPU_AREAMAP, bitmap = pc->cfg.kind == SL_PCPU_BITMAP;
    const sli_pcpu_block_md *md = &c->chunk_md;
    const uint32_t v[22] = {
        c->id,
        c->flags,
        NONE32,
        (uint32_t)pc->ops->chunk_slot(pc, c),
        NONE32,
        (uint32_t)c->nr_pages,
        (uint32_t)c->nr_populated,
        (uint32_t)c->nr_empty_pop_pages,
        (uint32_t)c->free_bytes,
        (uint32_t)c->nr_alloc,
        (uint32_t)c->start_offset,
        (uint32_t)c->end_offset,
        (uint32_t)(areamap  ? c->contig_hint
                   : bitmap ? c->contig_bits
                            : md->contig_hint),
        areamap ? NONE32 : (uint32_t)(bitmap ? c->contig_bits_start : md->contig_hint_start),
        (uint32_t)md->scan_hint,
        (uint32_t)md->scan_hint_start,
        (uint32_t)(areamap  ? c->first_free
                   : bitmap ? c->first_bit
                            : md->first_free),
        (uint32_t)md->left_free,
        (uint32_t)md->right_free,
        areamap ? 0 : (uint32_t)sli_pcpu_map_bits(c),
        (uint32_t)c->map_used,
        (uint32_t)c->map_alloc,
    };
    for (unsigned i = 0; i < 22; i++)
        put32(r + 4 * i, v[i]);
    put32(r + 88, (uint32_t)*data);
    *data += put_bitmap(b + *data, c->populated, c->nr_pages);
    if (areamap) {
        put32(r + 104, (uint32_t)*data);
        for (int i = 0; i <= c->map_used; i++, *data += 4)
            put32(b + *data, (uint32_t)c->map[i]);
        return;
    }
    int bits = sli_pcpu_map_bits(c);
    put32(r + 92, (uint32_t)*data);
    *data += put_bitmap(b + *data, c->alloc_map, bits);
    put32(r + 96, (uint32_t)*data);
    *data += put_bitmap(b + *data, c->bound_map, bits + 1);
    put32(r + 100, (uint32_t)*data);
    for (int i = 0; i < sli_pcpu_nr_blocks(c); i++, *data += BLOCK_SIZE)
        put_md(b + *data, &c->md_blocks[i]);
}

long sl_pcpu_snapshot(sl_pcpu *pc, void *buf, size_t cap)
{
    sl_spin_lock(&pc->lock);
    unsigned n = pc->nr_chunks + (pc->reserved_chunk ? 1 : 0);
    sl_pcpu_chunk **all = malloc(sizeof(*all) * (n ? n : 1));
    if (!all) {
        sl_spin_unlock(&pc->lock);
        return SL_ENOMEM;
    }
    memcpy(all, pc->chunks, sizeof(*all) * pc->nr_chunks);
    if (pc->reserved_chunk)
        all[n - 1] = pc->reserved_chunk;
    qsort(all, n, sizeof(*all), by_id);

    size_t off_lists = HDR_SIZE + (size_t)CHUNK_SIZE * n;
    size_t data = off_lists + 4 * ((size_t)pc->nr_slots + pc->nr_chunks), total = data;
    for (unsigned i = 0; i < n; i++)
        total += chunk_data_size(pc, all[i]);
    if (!buf || cap < total) {
        sl_spin_unlock(&pc->lock);
        free(all);
        return -(long)total;
    }
    unsigned char *b = buf;
    memset(b, 0, data);
    const uint32_t h[18] = {
        SNAP_MAGIC,
        SNAP_VERSION,
        (uint32_t)total,
        (uint32_t)pc->cfg.kind,
        pc->cfg.nr_units,
        (uint32_t)pc->unit_size,
        (uint32_t)pc->unit_pages,
        (uint32_t)pc->nr_slots,
        n,
        (uint32_t)pc->cfg.static_size,
        (uint32_t)pc->cfg.reserved_size,
        (uint32_t)pc->cfg.dyn_size,
        pc->first_chunk->id,
        pc->reserved_chunk ? pc->reserved_chunk->id : NONE32,
        (uint32_t)pc->nr_empty_pop_pages,
        (uint32_t)pc->nr_populated,
        pc->cfg.trace ? atomic_load(&pc->cfg.trace->next_op) - 1 : 0,
        __atomic_load_n(&pc->next_chunk_id, __ATOMIC_RELAXED), /* its writers hold alloc_mutex, not lock */
    };
    for (unsigned i = 0; i < 18; i++)
        put32(b + 4 * i, h[i]);
    put32(b + 72, HDR_SIZE);
    put32(b + 76, (uint32_t)off_lists);
    put64(b + 80, pc->nr_allocs);
    put64(b + 88, pc->nr_frees);
    put64(b + 96, pc->chunks_created);
    put64(b + 104, pc->chunks_destroyed);
    put64(b + 112, pc->map_extends);
    put32(b + 120, SLI_PCPU_BLOCK_BITS);

    for (unsigned i = 0; i < n; i++)
        put_chunk(pc, all[i], b + HDR_SIZE + (size_t)CHUNK_SIZE * i, b, &data);
    size_t at = off_lists + 4 * (size_t)pc->nr_slots;
    for (int s = 0; s < pc->nr_slots; s++) {
        uint32_t count = 0;
        for (sl_pcpu_list *l = pc->slots[s].next; l != &pc->slots[s]; l = l->next, count++, at += 4) {
            uint32_t id = ((const sl_pcpu_chunk *)((char *)l - offsetof(sl_pcpu_chunk, list)))->id;
            unsigned char *r = b + HDR_SIZE + (size_t)CHUNK_SIZE * index_of(all, n, id);
            put32(b + at, id);
            put32(r + 8, (uint32_t)s);
            put32(r + 16, count);
        }
        put32(b + off_lists + 4 * (size_t)s, count);
    }
    sl_spin_unlock(&pc->lock);
    free(all);
    return (long)total;
}

unsigned sl_pcpu_snapshot_layout(uint32_t *out)
{
    const uint32_t v[] = {HDR_SIZE, CHUNK_SIZE, BLOCK_SIZE, SNAP_MAGIC, SNAP_VERSION, SLI_PCPU_BLOCK_BITS, NONE32};
    memcpy(out, v, sizeof v);
    return (unsigned)(sizeof v / sizeof v[0]);
}
