/*
 * snapshot.c - the whole SLAB world as fixed-size little-endian records for
 * the UI (layout: docs/snapshot-format.md, "SLAB snapshot", version
 * SNAP_VERSION), decoded by web/slab/snapshot.ts.
 *
 * What a view of SLAB draws: per cache its geometry, tunables and node
 * (free_limit, colour_next, free_touched, next_reap, the counters); each
 * CPU's array_cache and the shared array with their entries bottom to top;
 * every slab, list by list in list order, with `active`, where its objects
 * start (the colour), where its freelist array lives and the array itself;
 * and the kmalloc_large blocks.  Objects are named by (slab pfn, index).
 *
 * Quiescent, like validate: it reads without locks.  It still follows no
 * pointer it has not checked -- a list walk stops at a slab of another
 * cache or after the arena's page count, an array entry or a freelist
 * pointer that names no object is written as CORRUPT -- so a state damaged
 * by a test (or a bug) is shown rather than crashed on.  Records are C
 * structs whose sizes and field offsets sl_slab_snapshot_layout reports, so
 * the TypeScript decoder is checked against this file.
 */
#include "slab_internal.h"

#include <stddef.h>
#include <string.h>

#define SNAP_MAGIC 0x42414c53u /* "SLAB" */
#define SNAP_VERSION 1u
#define CORRUPT32 0xfffffffeu
#define SHARED_OWNER 0xffffu

typedef struct snap_header {
    uint32_t magic, version, total, ncpus;
    uint32_t ncaches, narrays, nslabs, nentries, nlarge, freelist_bytes;
    uint32_t off_caches, off_arrays, off_slabs, off_entries, off_large, off_freelists;
    uint32_t kernel, rules, flags, reap_clock, npages, last_op, reserved[2];
} snap_header;
_Static_assert(sizeof(snap_header) == 96, "SLAB snapshot header");

typedef struct snap_cache {
    char name[SL_SLAB_NAME_MAX];
    uint32_t id, object_size, size, align, order, num, mgmt, colour, colour_off, freelist_size;
    uint32_t freelist_cache; /* OFF: id of the kmalloc cache holding the arrays, else NONE */
    uint32_t limit, batchcount, shared_limit, free_limit, colour_next, free_touched;
    uint32_t total_slabs, free_slabs, free_objects, next_reap;
    uint32_t first_slab, nslabs, first_array, grown, destroyed, flags, reserved;
} snap_cache;
_Static_assert(sizeof(snap_cache) == 176, "SLAB snapshot cache record");

typedef struct snap_array {
    uint32_t owner; /* the CPU, or SHARED_OWNER */
    uint32_t avail, limit, batchcount, touched, first_entry;
    uint32_t alloc_hit, alloc_miss, free_hit, free_miss;
} snap_array;
_Static_assert(sizeof(snap_array) == 40, "SLAB snapshot array record");

/* Where a slab's freelist array is (snap_slab.freelist_kind). */
enum { FL_IN_PAGE = 0, FL_IN_OBJECT = 1, FL_OFF_SLAB = 2, FL_NONE = 3, FL_CORRUPT = 4 };

typedef struct snap_slab {
    uint32_t pfn;
    uint16_t cache;
    uint8_t list, freelist_kind;
    uint16_t active, position;
    uint32_t s_mem_offset;
    uint16_t colour;
    uint8_t order, reserved;
    uint32_t freelist_a;          /* IN_PAGE: byte offset in the slab; IN_OBJECT: object index; OFF_SLAB: pfn */
    uint32_t freelist_b;          /* OFF_SLAB: object index; else NONE */
    uint32_t first_freelist_byte; /* offset of this slab's num array bytes in the freelist section */
} snap_slab;
_Static_assert(sizeof(snap_slab) == 32, "SLAB snapshot slab record");

typedef struct snap_ref {
    uint32_t pfn, index;
} snap_ref;

void sl_slab_snapshot_layout(uint32_t out[SL_SLAB_SNAPSHOT_LAYOUT_WORDS])
{
    const uint32_t v[SL_SLAB_SNAPSHOT_LAYOUT_WORDS] = {
        SNAP_VERSION,
        sizeof(snap_header),
        sizeof(snap_cache),
        sizeof(snap_array),
        sizeof(snap_slab),
        sizeof(snap_ref),
        offsetof(snap_header, kernel),
        offsetof(snap_cache, next_reap),
        offsetof(snap_cache, first_array),
        offsetof(snap_array, first_entry),
        offsetof(snap_slab, freelist_a),
        offsetof(snap_slab, first_freelist_byte),
    };
    memcpy(out, v, sizeof v);
}

/* The slab_page of a head page of cache c, or NULL. */
static slab_page *slab_of_cache(sl_slab *sl, sl_page *pg, const sl_slab_cache *c)
{
    return pg && pg >= sl->zone.pages && pg < sl->zone.pages + sl->zone.npages && pg->flags == SL_PG_HEAD &&
                   SLAB_OF(pg)->cache == c
               ? SLAB_OF(pg)
               : NULL;
}

/* (pfn, index) of obj as an object of cache c, or CORRUPT. */
static snap_ref obj_ref(sl_slab *sl, const sl_slab_cache *c, const void *obj)
{
    uint32_t pfn, index;
    sl_page *pg = sl_page_from_addr(&sl->zone, obj);
    if (slab_of_cache(sl, pg, c) && sl_slab_object_ref(sl, obj, &pfn, &index))
        return (snap_ref){pfn, index};
    return (snap_ref){CORRUPT32, CORRUPT32};
}

/* Slabs of a list, bounded by the arena's page count (a corrupt list cannot loop). */
static uint32_t list_len(sl_slab *sl, const sl_slab_cache *c, const slab_list *l)
{
    uint32_t n = 0;
    for (sl_page *pg = l->first; slab_of_cache(sl, pg, c) && n < sl->zone.npages; pg = SLAB_OF(pg)->next)
        n++;
    return n;
}

/* Array entries bounded by the array's limit. */
static uint32_t array_len(const sl_slab_array *ac) { return ac ? (ac->avail < ac->limit ? ac->avail : ac->limit) : 0; }

typedef struct snap_ctx {
    sl_slab *sl;
    unsigned char *b;
    snap_header h;
    uint32_t slab, entry, array, freelist_byte; /* next record of each kind */
} snap_ctx;

static void put_array(snap_ctx *x, uint32_t owner, const sl_slab_cache *c, const sl_slab_array *ac)
{
    snap_array r = {.owner = owner, .first_entry = x->entry};
    if (ac) {
        r.avail = array_len(ac);
        r.limit = ac->limit;
        r.batchcount = ac->batchcount;
        r.touched = ac->touched;
        r.alloc_hit = (uint32_t)ac->alloc_hit;
        r.alloc_miss = (uint32_t)ac->alloc_miss;
        r.free_hit = (uint32_t)ac->free_hit;
        r.free_miss = (uint32_t)ac->free_miss;
        for (uint32_t i = 0; i < r.avail; i++) {
            snap_ref e = obj_ref(x->sl, c, ac->entry[i]);
            memcpy(x->b + x->h.off_entries + sizeof e * x->entry++, &e, sizeof e);
        }
    }
    memcpy(x->b + x->h.off_arrays + sizeof r * x->array++, &r, sizeof r);
}

/* Where the freelist array of slab s (of cache c, at page address addr) lives, and whether it can be read. */
static bool locate_freelist(snap_ctx *x, const sl_slab_cache *c, const slab_page *s, const unsigned char *addr,
                            snap_slab *r)
{
    const unsigned char *fl = s->freelist;
    size_t slab_bytes = SL_PAGE_SIZE << c->order;
    r->freelist_b = SL_NONE32;
    if (!fl) {
        r->freelist_kind = c->mgmt == SL_SLAB_OBJFREELIST ? FL_NONE : FL_CORRUPT;
        r->freelist_a = SL_NONE32;
        return false;
    }
    if (c->mgmt == SL_SLAB_OFF) {
        snap_ref ref = obj_ref(x->sl, c->freelist_cache, fl);
        r->freelist_kind = ref.pfn == CORRUPT32 ? FL_CORRUPT : FL_OFF_SLAB;
        r->freelist_a = ref.pfn;
        r->freelist_b = ref.index;
        return ref.pfn != CORRUPT32;
    }
    if (fl < addr || (size_t)(fl - addr) + c->freelist_size > slab_bytes) {
        r->freelist_kind = FL_CORRUPT;
        r->freelist_a = SL_NONE32;
        return false;
    }
    if (c->mgmt == SL_SLAB_OBJFREELIST) {
        snap_ref ref = obj_ref(x->sl, c, fl);
        r->freelist_kind = ref.pfn == CORRUPT32 ? FL_CORRUPT : FL_IN_OBJECT;
        r->freelist_a = ref.index;
        return ref.pfn != CORRUPT32;
    }
    r->freelist_kind = FL_IN_PAGE;
    r->freelist_a = (uint32_t)(fl - addr);
    return true;
}

static void put_list(snap_ctx *x, const sl_slab_cache *c, const slab_list *l, unsigned which)
{
    uint32_t n = list_len(x->sl, c, l), pos = 0;
    for (sl_page *pg = l->first; pos < n; pg = SLAB_OF(pg)->next, pos++) {
        const slab_page *s = SLAB_OF(pg);
        const unsigned char *addr = sl_page_address(&x->sl->zone, pg);
        uint32_t off = (uint32_t)(s->s_mem - addr);
        snap_slab r = {.pfn = sl_page_pfn(&x->sl->zone, pg),
                       .cache = (uint16_t)c->id,
                       .list = (uint8_t)which,
                       .active = (uint16_t)s->active,
                       .position = (uint16_t)pos,
                       .s_mem_offset = off,
                       .colour = (uint16_t)(off / c->colour_off),
                       .order = (uint8_t)c->order,
                       .first_freelist_byte = x->freelist_byte};
        unsigned char *bytes = x->b + x->h.off_freelists + x->freelist_byte;
        if (locate_freelist(x, c, s, addr, &r))
            memcpy(bytes, s->freelist, c->num);
        else
            memset(bytes, 0xff, c->num);
        x->freelist_byte += c->num;
        memcpy(x->b + x->h.off_slabs + sizeof r * x->slab++, &r, sizeof r);
    }
}

static void put_cache(snap_ctx *x, uint32_t rec, const sl_slab_cache *c)
{
    const sl_slab_node *n = &c->node;
    snap_cache r = {
        .id = c->id,
        .object_size = c->object_size,
        .size = c->size,
        .align = c->g.align,
        .order = c->order,
        .num = c->num,
        .mgmt = (uint32_t)c->mgmt,
        .colour = c->colour,
        .colour_off = c->colour_off,
        .freelist_size = c->freelist_size,
        .freelist_cache = c->freelist_cache ? c->freelist_cache->id : SL_NONE32,
        .limit = c->limit,
        .batchcount = c->batchcount,
        .shared_limit = c->shared_limit,
        .free_limit = (uint32_t)n->free_limit,
        .colour_next = n->colour_next,
        .free_touched = n->free_touched,
        .total_slabs = (uint32_t)n->total_slabs,
        .free_slabs = (uint32_t)n->free_slabs,
        .free_objects = (uint32_t)n->free_objects,
        .next_reap = (uint32_t)n->next_reap,
        .first_slab = x->slab,
        .first_array = x->array,
        .grown = (uint32_t)c->stats.grown,
        .destroyed = (uint32_t)c->stats.destroyed,
        .flags = c->init_on_free ? 1u : 0u,
    };
    memcpy(r.name, c->name, sizeof r.name);
    put_list(x, c, &n->partial, SLAB_LIST_PARTIAL);
    put_list(x, c, &n->full, SLAB_LIST_FULL);
    put_list(x, c, &n->free, SLAB_LIST_FREE);
    r.nslabs = x->slab - r.first_slab;
    for (unsigned cpu = 0; cpu < x->sl->ncpus; cpu++)
        put_array(x, cpu, c, c->cpu[cpu]);
    put_array(x, SHARED_OWNER, c, n->shared);
    memcpy(x->b + x->h.off_caches + sizeof r * rec, &r, sizeof r);
}

static bool is_large_head(const sl_page *pg)
{
    return pg->flags == SL_PG_HEAD && !SLAB_OF(pg)->cache && SLAB_OF(pg)->list == SLAB_LIST_LARGE;
}

long sl_slab_snapshot(sl_slab *sl, void *buf, size_t cap)
{
    snap_ctx x = {.sl = sl, .b = buf};
    snap_header *h = &x.h;
    /* Count every record first. */
    for (unsigned id = 0; id < sl->ncaches; id++) {
        const sl_slab_cache *c = sl->caches[id];
        if (!c)
            continue;
        h->ncaches++;
        uint32_t slabs =
            list_len(sl, c, &c->node.partial) + list_len(sl, c, &c->node.full) + list_len(sl, c, &c->node.free);
        h->nslabs += slabs;
        h->freelist_bytes += slabs * c->num;
        for (unsigned cpu = 0; cpu < sl->ncpus; cpu++)
            h->nentries += array_len(c->cpu[cpu]);
        h->nentries += array_len(c->node.shared);
    }
    h->narrays = h->ncaches * (sl->ncpus + 1);
    for (uint32_t pfn = 0; pfn < sl->zone.npages; pfn++)
        h->nlarge += is_large_head(&sl->zone.pages[pfn]);
    h->off_caches = sizeof *h;
    h->off_arrays = h->off_caches + h->ncaches * (uint32_t)sizeof(snap_cache);
    h->off_slabs = h->off_arrays + h->narrays * (uint32_t)sizeof(snap_array);
    h->off_entries = h->off_slabs + h->nslabs * (uint32_t)sizeof(snap_slab);
    h->off_large = h->off_entries + h->nentries * (uint32_t)sizeof(snap_ref);
    h->off_freelists = h->off_large + h->nlarge * (uint32_t)sizeof(snap_ref);
    h->total = h->off_freelists + (h->freelist_bytes + 3) / 4 * 4;
    if (!buf || cap < h->total)
        return -(long)h->total;

    memset(buf, 0, h->total);
    h->magic = SNAP_MAGIC;
    h->version = SNAP_VERSION;
    h->ncpus = sl->ncpus;
    h->kernel = sl->kt.variant.kernel;
    h->rules = (uint32_t)sl->kt.variant.rules;
    h->flags = sl->kt.variant.init_on_free ? 1u : 0u;
    h->reap_clock = (uint32_t)RD(sl->reap_clock);
    h->npages = sl->zone.npages;
    h->last_op = sl->trace ? atomic_load(&sl->trace->next_op) - 1 : 0;
    uint32_t rec = 0;
    for (unsigned id = 0; id < sl->ncaches; id++)
        if (sl->caches[id])
            put_cache(&x, rec++, sl->caches[id]);
    uint32_t large = 0;
    for (uint32_t pfn = 0; pfn < sl->zone.npages; pfn++)
        if (is_large_head(&sl->zone.pages[pfn])) {
            snap_ref r = {pfn, sl->zone.pages[pfn].order};
            memcpy(x.b + h->off_large + sizeof r * large++, &r, sizeof r);
        }
    memcpy(buf, h, sizeof *h);
    return (long)h->total;
}
