/*
 * pcpu_core.c - chunks, slots, the first chunk, the global lock,
 * pcpu_alloc / free_percpu and the balance work.
 *
 * Data structures.  pc->slots[] are the kernel's pcpu_slot lists: a chunk
 * sits in the slot its allocator computes (by free bytes for the area map
 * and the 2017 bitmap, by contig hint since 2019); slot 0 holds chunks that
 * cannot serve anything (and, with scan hints, chunks relegated there after
 * failing a small fit), the last slot holds empty chunks.  pc->chunks[] is
 * every chunk but the reserved one, sorted by base address: the model's
 * stand-in for the page->index lookup that free_percpu() does
 * (pcpu_chunk_addr_search).  pc->first_chunk is pcpu_first_chunk, built at
 * init from the config's static / reserved / dynamic sizes as
 * pcpu_setup_first_chunk builds it; pc->reserved_chunk (optional) covers
 * the reserved region of the same memory, serves only reserved
 * allocations, and is on no slot list.
 *
 * Locking.  pc->lock (pcpu_lock) guards all of the above and every chunk's
 * metadata.  pc->alloc_mutex (pcpu_alloc_mutex) is held across a whole
 * allocation, as the kernel holds it for non-atomic allocations: it makes
 * chunk creation and area map growth single-threaded, and the balance step
 * takes it too.  The lock order is alloc_mutex, then lock.  Chunk memory
 * (sl_os_alloc_aligned) is allocated and freed with only the mutex held, as
 * pcpu_create_chunk and pcpu_destroy_chunk run outside pcpu_lock.  Events
 * emitted under pc->lock take their operation and CPU from pc->ev_op /
 * pc->ev_cpu, which whoever takes the lock sets (lock_as).
 *
 * Population.  The kernel maps a chunk's pages on first use; here the
 * memory exists from the start and `populated` records which pages an
 * allocation or the balance step has populated (pcpu_populate_chunk /
 * pcpu_chunk_populated), so the counts match the kernel's.  Pages are
 * depopulated only with their chunk.
 *
 * The balance step (pcpu_balance_workfn) runs synchronously where the
 * kernel schedules it: after an allocation that leaves fewer than
 * PCPU_EMPTY_POP_PAGES_LOW empty populated pages, and after a free that
 * leaves an empty chunk while another empty chunk exists.  It destroys
 * every empty chunk but one, then populates unpopulated pages, from the
 * lowest slot that can hold a page upwards, until PCPU_EMPTY_POP_PAGES_HIGH
 * pages are empty and populated, creating a chunk when no chunk has
 * unpopulated pages left.  The model has no atomic allocations, so the
 * kernel's pcpu_atomic_alloc_failed case never arises.
 *
 * Placement (cfg.placed, for src/replay).  A replayed trace says where
 * every area goes and when chunks come and go: sl_pcpu_alloc_at hands a
 * fixed (chunk, offset) to the allocator's own alloc_area, which keeps the
 * hints as after a search, and sl_pcpu_chunk_add / _remove create and
 * destroy chunks under alloc_mutex as pcpu_create_chunk and the balance
 * step do.  So no balance step runs and sl_pcpu_alloc is refused; the
 * first chunk is booted as always and the invariants below hold unchanged.
 *
 * Invariants (checked by sl_pcpu_validate): each chunk is on exactly the
 * list of its slot (or slot 0 when relegated) and in the index; every
 * allocated byte lies in populated pages; allocation counts, free bytes and
 * empty populated pages add up; the first and the reserved chunk are fully
 * populated and hide exactly what lies outside their region.  Once a free
 * has returned, at most one empty chunk remains unless the balance step
 * created more to keep empty pages populated; validate cannot check that
 * while another thread is between its free and its balance step, so the
 * tests do.
 */
#include "pcpu_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const sli_pcpu_ops *const kind_ops[SL_PCPU_NKINDS] = {
    [SL_PCPU_AREAMAP] = &sli_pcpu_areamap_ops,
    [SL_PCPU_BITMAP] = &sli_pcpu_bitmap_ops,
    [SL_PCPU_SCANHINT] = &sli_pcpu_scanhint_ops,
};

/* OP_BEGIN / OP_END operation codes (arg0), and OP_BEGIN's flag for an area placed by a trace. */
enum { OP_ALLOC = 1, OP_FREE = 2 };
enum { OP_PLACED = 2 };

const char *sl_pcpu_kind_name(sl_pcpu_kind k) { return (unsigned)k < SL_PCPU_NKINDS ? kind_ops[k]->name : "?"; }

bool sl_pcpu_parse_kind(const char *s, sl_pcpu_kind *out)
{
    for (unsigned k = 0; k < SL_PCPU_NKINDS; k++) {
        if (s && !strcmp(s, kind_ops[k]->name)) {
            *out = (sl_pcpu_kind)k;
            return true;
        }
    }
    return false;
}

int sli_pcpu_corrupt(sl_pcpu *pc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pc->validate_msg, sizeof pc->validate_msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "percpu validate: %s\n", pc->validate_msg);
    return SL_ECORRUPT;
}

const char *sl_pcpu_validate_message(const sl_pcpu *pc) { return pc->validate_msg; }

/* Takes pcpu_lock on behalf of operation op on cpu (the events emitted under it are theirs). */
static void lock_as(sl_pcpu *pc, uint32_t op, unsigned cpu)
{
    sl_spin_lock(&pc->lock);
    pc->ev_op = op;
    pc->ev_cpu = (uint16_t)cpu;
}

/* ------------------------------------------------------------------ */
/* Slot lists                                                          */

static void list_init(sl_pcpu_list *l) { l->prev = l->next = l; }
static bool list_empty(const sl_pcpu_list *l) { return l->next == l; }
static void list_del(sl_pcpu_list *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    list_init(e);
}
static void list_add_between(sl_pcpu_list *e, sl_pcpu_list *prev, sl_pcpu_list *next)
{
    e->prev = prev;
    e->next = next;
    prev->next = e;
    next->prev = e;
}
static sl_pcpu_chunk *chunk_of(sl_pcpu_list *l) { return (sl_pcpu_chunk *)((char *)l - offsetof(sl_pcpu_chunk, list)); }

static int fls_int(int x) { return x ? 32 - __builtin_clz((unsigned)x) : 0; }

int sli_pcpu_size_to_slot(const sl_pcpu *pc, int size)
{
    if (size == pc->unit_size)
        return pc->nr_slots - 1;
    return sli_max(fls_int(size) - SLI_PCPU_SLOT_BASE_SHIFT + 2, 1);
}

/* __pcpu_chunk_move: list_move to the head of slot nslot, or list_move_tail; oslot is for the event. */
static void chunk_move(sl_pcpu *pc, sl_pcpu_chunk *c, int oslot, int nslot, unsigned how)
{
    if (c->flags & SLI_PCPU_CHUNK_RESERVED)
        return;
    list_del(&c->list);
    sl_pcpu_list *head = &pc->slots[nslot];
    if (how == SLI_PCPU_MOVE_TAIL)
        list_add_between(&c->list, head->prev, head);
    else
        list_add_between(&c->list, head, head->next);
    SLI_PCPU_EVENT(pc, c, PCPU_SLOT_MOVE, .arg0 = oslot < 0 ? SL_NONE32 : (uint32_t)oslot, .arg1 = (uint32_t)nslot,
                   .arg2 = how);
}

/* list_move to the head when the chunk got freer, list_move_tail when fuller. */
void sli_pcpu_chunk_relocate(sl_pcpu *pc, sl_pcpu_chunk *c, int oslot, int nslot)
{
    if (oslot != nslot)
        chunk_move(pc, c, oslot, nslot, oslot < nslot ? SLI_PCPU_MOVE_HEAD : SLI_PCPU_MOVE_TAIL);
}

void sli_pcpu_update_empty_pages(sl_pcpu *pc, sl_pcpu_chunk *c, int nr)
{
    c->nr_empty_pop_pages += nr;
    if (!(c->flags & SLI_PCPU_CHUNK_RESERVED))
        pc->nr_empty_pop_pages += nr;
}

/*
 * pcpu_chunk_populated: pages [rs, re) of c are now populated; under lock.
 * Whether they count as empty differs by generation: v4.13 counts them and
 * subtracts what its allocation occupies (pcpu_count_occupied_pages); v4.14
 * counts them only for the balance step (for_alloc = false) and recounts
 * on a chunk hint refresh; v5.2 counts them and lets the block hints
 * subtract the pages an allocation breaks.
 */
static void chunk_populated(sl_pcpu *pc, sl_pcpu_chunk *c, int rs, int re, unsigned by)
{
    int nr = re - rs;
    sli_bitmap_set(c->populated, rs, nr);
    c->nr_populated += nr;
    pc->nr_populated += nr;
    if (pc->cfg.kind != SL_PCPU_BITMAP || by == SLI_PCPU_BY_BALANCE)
        sli_pcpu_update_empty_pages(pc, c, nr);
    SLI_PCPU_EVENT(pc, c, PCPU_POPULATE, .arg0 = (uint32_t)nr, .arg1 = (uint32_t)rs, .arg2 = by);
}

/* ------------------------------------------------------------------ */
/* Chunks                                                              */

static void chunk_free_memory(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    pc->ops->chunk_fini(c);
    free(c->populated);
    if (!(c->flags & SLI_PCPU_CHUNK_RESERVED)) /* its memory is the first chunk's */
        sl_os_free(c->base);
    free(c);
}

/*
 * pcpu_alloc_chunk: the metadata of an empty chunk over base (allocated
 * when NULL), with the next id; alloc_mutex held (it guards next_chunk_id),
 * pcpu_lock not needed.
 */
static sl_pcpu_chunk *chunk_alloc(sl_pcpu *pc, char *base)
{
    sl_pcpu_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->id = __atomic_fetch_add(&pc->next_chunk_id, 1, __ATOMIC_RELAXED);
    c->nr_pages = pc->unit_pages;
    c->populated = calloc((size_t)sli_bitmap_words(c->nr_pages), sizeof(uint64_t));
    c->base = base ? base : sl_os_alloc_aligned((size_t)pc->unit_size * pc->cfg.nr_units, SL_PAGE_SIZE);
    list_init(&c->list);
    if (!c->populated || !c->base || pc->ops->chunk_init(pc, c) != SL_OK) {
        free(c->populated);
        if (!base)
            sl_os_free(c->base);
        free(c);
        return NULL;
    }
    return c;
}

/* Inserts c into the address index; under lock.  Returns SL_OK or SL_ENOMEM. */
static int index_insert(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    if (pc->nr_chunks == pc->chunks_cap) {
        unsigned cap = pc->chunks_cap ? pc->chunks_cap * 2 : 16;
        sl_pcpu_chunk **n = realloc(pc->chunks, sizeof(*n) * cap);
        if (!n)
            return SL_ENOMEM;
        pc->chunks = n;
        pc->chunks_cap = cap;
    }
    unsigned i = pc->nr_chunks;
    while (i > 0 && pc->chunks[i - 1]->base > c->base) {
        pc->chunks[i] = pc->chunks[i - 1];
        i--;
    }
    pc->chunks[i] = c;
    pc->nr_chunks++;
    return SL_OK;
}

static void index_remove(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    unsigned i = 0;
    while (pc->chunks[i] != c)
        i++;
    memmove(&pc->chunks[i], &pc->chunks[i + 1], sizeof(pc->chunks[0]) * (pc->nr_chunks - i - 1));
    pc->nr_chunks--;
}

/*
 * Puts a new chunk into circulation: the index, then its slot (an empty
 * chunk: the last one); under lock.  Returns SL_OK or SL_ENOMEM.
 * kernel: pcpu_chunk_relocate.
 */
static int chunk_link(sl_pcpu *pc, sl_pcpu_chunk *c, unsigned by)
{
    if (index_insert(pc, c) != SL_OK)
        return SL_ENOMEM;
    pc->chunks_created++;
    SLI_PCPU_EVENT(pc, c, PCPU_CHUNK_CREATE, .arg0 = pc->nr_chunks, .arg1 = by);
    sli_pcpu_chunk_relocate(pc, c, -1, pc->ops->chunk_slot(pc, c));
    return SL_OK;
}

/*
 * pcpu_create_chunk: called with alloc_mutex held and pcpu_lock taken on
 * behalf of (op, cpu); drops the lock around the memory allocation, as the
 * kernel does.  Returns the linked chunk, or NULL for no memory.
 */
static sl_pcpu_chunk *chunk_create(sl_pcpu *pc, uint32_t op, unsigned cpu, unsigned by)
{
    sl_spin_unlock(&pc->lock);
    sl_pcpu_chunk *c = chunk_alloc(pc, NULL);
    lock_as(pc, op, cpu);
    if (c && chunk_link(pc, c, by) != SL_OK) {
        chunk_free_memory(pc, c);
        c = NULL;
    }
    return c;
}

/*
 * Takes an empty chunk out of circulation: pcpu_chunk_depopulated over
 * every populated page, then off its slot and out of the index, as
 * pcpu_balance_workfn does before pcpu_destroy_chunk; under lock.  The
 * caller frees its memory after dropping the lock.
 * kernel: pcpu_balance_workfn.
 */
static void chunk_unlink(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    list_del(&c->list);
    index_remove(pc, c);
    pc->chunks_destroyed++;
    pc->nr_populated -= c->nr_populated;
    sli_pcpu_update_empty_pages(pc, c, -c->nr_populated);
    SLI_PCPU_EVENT(pc, c, PCPU_CHUNK_DESTROY, .arg0 = (uint32_t)c->nr_populated);
}

/* The chunk with this id, or NULL; under lock. */
static sl_pcpu_chunk *chunk_by_id(const sl_pcpu *pc, uint32_t id)
{
    if (pc->reserved_chunk && pc->reserved_chunk->id == id)
        return pc->reserved_chunk;
    for (unsigned i = 0; i < pc->nr_chunks; i++)
        if (pc->chunks[i]->id == id)
            return pc->chunks[i];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Instance and the first chunk                                        */

/*
 * pcpu_alloc_first_chunk: a chunk over the first unit's memory serving
 * [start, end), fully populated and never destroyed.  Under lock.
 */
static sl_pcpu_chunk *first_chunk_alloc(sl_pcpu *pc, char *base, int start, int end, uint32_t flags)
{
    sl_pcpu_chunk *c = chunk_alloc(pc, base);
    if (!c)
        return NULL;
    c->flags = flags;
    c->start_offset = start;
    c->end_offset = pc->unit_size - end;
    sli_bitmap_set(c->populated, 0, c->nr_pages);
    c->nr_populated = c->nr_pages;
    pc->ops->init_region(pc, c);
    return c;
}

/*
 * pcpu_setup_first_chunk: the reserved chunk (if any), then the first
 * chunk, which serves the dynamic region and goes on its slot.
 */
static int setup_first_chunk(sl_pcpu *pc)
{
    int stat = (int)pc->cfg.static_size, res = (int)pc->cfg.reserved_size, dyn = (int)pc->cfg.dyn_size;
    char *base = sl_os_alloc_aligned((size_t)pc->unit_size * pc->cfg.nr_units, SL_PAGE_SIZE);
    if (!base)
        return SL_ENOMEM;
    lock_as(pc, 0, 0);
    sl_pcpu_chunk *first = first_chunk_alloc(pc, base, stat + res, stat + res + dyn, SLI_PCPU_CHUNK_FIRST);
    int rc = first && chunk_link(pc, first, SLI_PCPU_BY_BOOT) == SL_OK ? SL_OK : SL_ENOMEM;
    if (rc != SL_OK) {
        if (first)
            chunk_free_memory(pc, first);
        else
            sl_os_free(base);
    } else {
        pc->first_chunk = first;
        pc->nr_populated += first->nr_populated;
        if (res) {
            pc->reserved_chunk = first_chunk_alloc(pc, base, stat, stat + res, SLI_PCPU_CHUNK_RESERVED);
            if (pc->reserved_chunk) {
                SLI_PCPU_EVENT(pc, pc->reserved_chunk, PCPU_CHUNK_CREATE, .arg0 = pc->nr_chunks,
                               .arg1 = SLI_PCPU_BY_BOOT);
            } else {
                rc = SL_ENOMEM;
            }
        }
        /* "pcpu_nr_empty_pop_pages = pcpu_first_chunk->nr_empty_pop_pages" */
        pc->nr_empty_pop_pages = first->nr_empty_pop_pages;
    }
    sl_spin_unlock(&pc->lock);
    return rc;
}

int sl_pcpu_init(sl_pcpu *pc, const sl_pcpu_config *cfg)
{
    memset(pc, 0, sizeof *pc);
    size_t unit = cfg->unit_size ? cfg->unit_size : SL_PCPU_DEFAULT_UNIT_SIZE;
    if ((unsigned)cfg->kind >= SL_PCPU_NKINDS || cfg->nr_units < 1 || cfg->nr_units > SL_PCPU_MAX_UNITS ||
        unit % SL_PAGE_SIZE || unit > (1u << 30) / cfg->nr_units)
        return SL_EINVAL;
    if ((cfg->trace && cfg->trace->ncpus < cfg->nr_units) || (cfg->placed && cfg->kind == SL_PCPU_AREAMAP))
        return SL_EINVAL;
    /* The first chunk: sizes in granules, and a dynamic region that exists. */
    size_t head = cfg->static_size + cfg->reserved_size;
    if ((cfg->static_size | cfg->reserved_size | cfg->dyn_size) % SL_PCPU_MIN_ALLOC_SIZE || head >= unit ||
        cfg->dyn_size > unit - head)
        return SL_EINVAL;
    pc->cfg = *cfg;
    pc->cfg.unit_size = unit;
    pc->cfg.dyn_size = cfg->dyn_size ? cfg->dyn_size : unit - head;
    pc->ops = kind_ops[cfg->kind];
    pc->unit_size = (int)unit;
    pc->unit_pages = (int)(unit / SL_PAGE_SIZE);
    /* pcpu_nr_slots = __pcpu_size_to_slot(pcpu_unit_size) + 2 */
    pc->nr_slots = sli_max(fls_int(pc->unit_size) - SLI_PCPU_SLOT_BASE_SHIFT + 2, 1) + 2;
    pc->slots = malloc(sizeof(*pc->slots) * (size_t)pc->nr_slots);
    if (!pc->slots)
        return SL_ENOMEM;
    for (int i = 0; i < pc->nr_slots; i++)
        list_init(&pc->slots[i]);
    pc->lock = (sl_spinlock)SL_SPINLOCK_INIT;
    pc->alloc_mutex = (sl_spinlock)SL_SPINLOCK_INIT;
    int rc = setup_first_chunk(pc);
    if (rc != SL_OK)
        sl_pcpu_destroy(pc);
    return rc;
}

void sl_pcpu_destroy(sl_pcpu *pc)
{
    if (pc->reserved_chunk)
        chunk_free_memory(pc, pc->reserved_chunk);
    for (unsigned i = 0; i < pc->nr_chunks; i++)
        chunk_free_memory(pc, pc->chunks[i]);
    free(pc->chunks);
    free(pc->slots);
    memset(pc, 0, sizeof *pc);
}

/* ------------------------------------------------------------------ */
/* pcpu_alloc / free_percpu                                            */

/* Populates the pages under [off, off + size) that are not yet; under lock. */
static void populate_for_alloc(sl_pcpu *pc, sl_pcpu_chunk *c, int off, int size)
{
    int ps = off / (int)SL_PAGE_SIZE, pe = (off + size + (int)SL_PAGE_SIZE - 1) / (int)SL_PAGE_SIZE;
    for (int rs = sli_find_next_zero_bit(c->populated, pe, ps); rs < pe;
         rs = sli_find_next_zero_bit(c->populated, pe, rs)) {
        int re = sli_find_next_bit(c->populated, pe, rs + 1);
        chunk_populated(pc, c, rs, re, SLI_PCPU_BY_ALLOC);
        rs = re;
    }
}

/* The allocator took [off, off + size) of c: populate its pages and count it; under lock.; kernel: pcpu_alloc. */
static void area_taken(sl_pcpu *pc, sl_pcpu_chunk *c, int off, int size, int align)
{
    populate_for_alloc(pc, c, off, size);
    c->nr_alloc++;
    pc->nr_allocs++;
    SLI_PCPU_EVENT(pc, c, PCPU_ALLOC, .flags = c == pc->reserved_chunk, .arg0 = (uint32_t)off, .arg1 = (uint32_t)size,
                   .arg2 = (uint32_t)align);
}

/*
 * pcpu_extend_area_map: grows c's map to new_alloc entries, allocating
 * outside pcpu_lock (held on entry and on return).  Returns SL_OK or
 * SL_ENOMEM.
 */
static int extend_area_map(sl_pcpu *pc, sl_pcpu_chunk *c, int new_alloc, uint32_t op, unsigned cpu)
{
    sl_spin_unlock(&pc->lock);
    int *map = malloc(sizeof(int) * (size_t)new_alloc);
    lock_as(pc, op, cpu);
    if (!map)
        return SL_ENOMEM;
    if (new_alloc > c->map_alloc) {
        memcpy(map, c->map, sizeof(int) * (size_t)c->map_alloc);
        int *old = c->map;
        SLI_PCPU_EVENT(pc, c, PCPU_MAP_EXTEND, .arg0 = (uint32_t)new_alloc, .arg1 = (uint32_t)c->map_alloc);
        c->map = map;
        c->map_alloc = new_alloc;
        map = old;
        pc->map_extends++;
    }
    sl_spin_unlock(&pc->lock);
    free(map);
    lock_as(pc, op, cpu);
    return SL_OK;
}

/* The reserved chunk's branch of pcpu_alloc: the area's offset, or SL_ENOMEM. */
static int alloc_reserved(sl_pcpu *pc, int size, int align, uint32_t op, unsigned cpu)
{
    sl_pcpu_chunk *c = pc->reserved_chunk;
    int start;
    SLI_PCPU_TALLY(pc, chunks, 1);
    while ((start = pc->ops->find_fit(pc, c, size, align)) < -1)
        if (extend_area_map(pc, c, -2 - start, op, cpu) != SL_OK)
            return SL_ENOMEM;
    int off = start < 0 ? -1 : pc->ops->alloc_area(pc, c, size, align, start);
    return off < 0 ? SL_ENOMEM : off;
}

/*
 * The normal branch: walk the slots from the size's slot upwards, growing
 * area maps and creating a chunk when nothing fits.  *chunk and the
 * offset, or SL_ENOMEM.  Chunks are walked with their successor taken
 * first, since a failed fit may move them (the area map's hint, the scan
 * hints' relegation).
 */
static int alloc_dynamic(sl_pcpu *pc, int size, int align, uint32_t op, unsigned cpu, sl_pcpu_chunk **chunk)
{
    bool walked_past_empty = false;
    for (;;) {
    restart:
        for (int slot = sli_pcpu_size_to_slot(pc, size); slot < pc->nr_slots; slot++) {
            sl_pcpu_list *head = &pc->slots[slot];
            for (sl_pcpu_list *l = head->next, *next; l != head; l = next) {
                next = l->next;
                sl_pcpu_chunk *c = chunk_of(l);
                SLI_PCPU_TALLY(pc, chunks, 1);
                int start = pc->ops->find_fit(pc, c, size, align);
                if (start == -1) {
                    /* "percpu: relegate chunks unusable when failing small allocations" (v5.2) */
                    if (pc->cfg.kind == SL_PCPU_SCANHINT && slot < SL_PCPU_SLOT_FAIL_THRESHOLD)
                        chunk_move(pc, c, slot, 0, SLI_PCPU_MOVE_RELEGATE);
                    continue;
                }
                if (start < -1) {
                    if (extend_area_map(pc, c, -2 - start, op, cpu) != SL_OK)
                        return SL_ENOMEM;
                    goto restart; /* pcpu_lock was dropped: walk again */
                }
                int off = pc->ops->alloc_area(pc, c, size, align, start);
                if (off >= 0) {
                    *chunk = c;
                    return off;
                }
            }
        }
        /* No space left: create a chunk unless an empty one already exists. */
        if (!list_empty(&pc->slots[pc->nr_slots - 1])) {
            if (walked_past_empty)
                return SL_ENOMEM; /* cannot happen: an empty chunk fits any valid request */
            walked_past_empty = true;
        } else if (!chunk_create(pc, op, cpu, SLI_PCPU_BY_ALLOC)) {
            return SL_ENOMEM;
        }
    }
}

static void balance(sl_pcpu *pc, uint32_t op, unsigned cpu);

static int pcpu_alloc(sl_pcpu *pc, unsigned cpu, size_t size, size_t align, bool reserved, void **out)
{
    *out = NULL;
    if (cpu >= pc->cfg.nr_units)
        return SL_EINVAL; /* no CPU to report it on */
    uint32_t op = SL_OP_BEGIN(pc->cfg.trace);
    (void)op;
    SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_OP_BEGIN, .flags = reserved, .arg0 = OP_ALLOC,
             .arg1 = (uint32_t)size, .arg2 = (uint32_t)align);
    /* The area map wants bit 0 of offsets free (align >= 2, even sizes); the bitmaps work in 4-byte bits. */
    size_t min = pc->cfg.kind == SL_PCPU_AREAMAP ? 2 : SL_PCPU_MIN_ALLOC_SIZE;
    if (align < min)
        align = min;
    size = (size + min - 1) & ~(min - 1);
    int rc = SL_OK, off = 0;
    sl_pcpu_chunk *c = NULL;
    if (pc->cfg.placed || !size || size > SL_PCPU_MAX_ALLOC_SIZE || size > (size_t)pc->unit_size ||
        align > SL_PAGE_SIZE || (align & (align - 1))) {
        rc = SL_EINVAL;
    } else {
        int isize = (int)size, ialign = (int)align;
        sl_spin_lock(&pc->alloc_mutex);
        lock_as(pc, op, cpu);
        memset(&pc->scan, 0, sizeof pc->scan);
        if (reserved && pc->reserved_chunk) {
            c = pc->reserved_chunk;
            rc = off = alloc_reserved(pc, isize, ialign, op, cpu);
        } else {
            rc = off = alloc_dynamic(pc, isize, ialign, op, cpu, &c);
        }
        SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_PCPU_ALLOC_SCAN, .arg0 = pc->scan.chunks,
                 .arg1 = pc->scan.blocks, .arg2 = pc->scan.bits);
        pc->work.chunks += pc->scan.chunks;
        pc->work.blocks += pc->scan.blocks;
        pc->work.bits += pc->scan.bits;
        bool need_balance = false;
        if (rc >= 0) {
            rc = SL_OK;
            area_taken(pc, c, off, isize, ialign);
            need_balance = pc->nr_empty_pop_pages < SL_PCPU_EMPTY_POP_PAGES_LOW;
        }
        sl_spin_unlock(&pc->lock);
        if (need_balance)
            balance(pc, op, cpu);
        sl_spin_unlock(&pc->alloc_mutex);
    }
    if (rc == SL_OK) {
        for (unsigned u = 0; u < pc->cfg.nr_units; u++)
            memset(c->base + (size_t)u * (size_t)pc->unit_size + off, 0, size);
        *out = c->base + off;
    } else {
        SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_ERROR, .arg0 = (uint32_t)rc);
    }
    SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_OP_END, .arg0 = OP_ALLOC,
             .arg1 = (uint32_t)rc, .slab = c && rc == SL_OK ? c->id : SL_NONE32,
             .obj = rc == SL_OK ? (uint32_t)off : SL_NONE32);
    return rc;
}

int sl_pcpu_alloc(sl_pcpu *pc, unsigned cpu, size_t size, size_t align, void **out)
{
    return pcpu_alloc(pc, cpu, size, align, false, out);
}

int sl_pcpu_alloc_reserved(sl_pcpu *pc, unsigned cpu, size_t size, size_t align, void **out)
{
    return pcpu_alloc(pc, cpu, size, align, true, out);
}

/* Populates up to nr_to_pop of c's unpopulated pages, lowest first, for the balance step; under lock. */
static int populate_unpopulated(sl_pcpu *pc, sl_pcpu_chunk *c, int nr_to_pop)
{
    int done = 0;
    for (int rs = sli_find_next_zero_bit(c->populated, c->nr_pages, 0); rs < c->nr_pages && done < nr_to_pop;
         rs = sli_find_next_zero_bit(c->populated, c->nr_pages, rs)) {
        int nr = sli_min(sli_find_next_bit(c->populated, c->nr_pages, rs + 1) - rs, nr_to_pop - done);
        chunk_populated(pc, c, rs, rs + nr, SLI_PCPU_BY_BALANCE);
        done += nr;
    }
    return done;
}

/* The empty chunk the balance step spares: the first chunk if it is empty, else the free slot's head. */
static sl_pcpu_chunk *spared_empty_chunk(sl_pcpu *pc)
{
    sl_pcpu_list *head = &pc->slots[pc->nr_slots - 1];
    for (sl_pcpu_list *l = head->next; l != head; l = l->next)
        if (chunk_of(l) == pc->first_chunk)
            return pc->first_chunk;
    return list_empty(head) ? NULL : chunk_of(head->next);
}

/*
 * pcpu_balance_workfn; alloc_mutex held, lock not.  The kernel's first
 * chunk is never empty (its static region is never freed); with no static
 * region here it can be, and it is the one empty chunk spared.
 */
static void balance(sl_pcpu *pc, uint32_t op, unsigned cpu)
{
    sl_pcpu_chunk *doomed[64];
    unsigned n, destroyed = 0;
    int populated = 0;
    do {
        n = 0;
        lock_as(pc, op, cpu);
        sl_pcpu_list *head = &pc->slots[pc->nr_slots - 1];
        sl_pcpu_chunk *spared = spared_empty_chunk(pc);
        for (sl_pcpu_list *l = head->next; l != head && n < 64;) {
            sl_pcpu_chunk *c = chunk_of(l);
            l = l->next;
            if (c == spared)
                continue;
            chunk_unlink(pc, c);
            doomed[n++] = c;
        }
        sl_spin_unlock(&pc->lock);
        for (unsigned i = 0; i < n; i++)
            chunk_free_memory(pc, doomed[i]);
        destroyed += n;
    } while (n == 64);

    /* Keep PCPU_EMPTY_POP_PAGES_HIGH empty pages populated, filling the most packed chunks first. */
    lock_as(pc, op, cpu);
    for (;;) {
        int nr_to_pop =
            sli_max(0, sli_min(SL_PCPU_EMPTY_POP_PAGES_HIGH - pc->nr_empty_pop_pages, SL_PCPU_EMPTY_POP_PAGES_HIGH));
        for (int slot = sli_pcpu_size_to_slot(pc, (int)SL_PAGE_SIZE); slot < pc->nr_slots && nr_to_pop; slot++) {
            for (sl_pcpu_list *l = pc->slots[slot].next; l != &pc->slots[slot]; l = l->next) {
                if (chunk_of(l)->nr_populated < chunk_of(l)->nr_pages) {
                    int nr = populate_unpopulated(pc, chunk_of(l), nr_to_pop);
                    nr_to_pop -= nr;
                    populated += nr;
                    break;
                }
            }
        }
        /* Ran out of chunks to populate: create one and retry. */
        if (!nr_to_pop || !chunk_create(pc, op, cpu, SLI_PCPU_BY_BALANCE))
            break;
    }
    SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_PCPU_BALANCE, .arg0 = destroyed,
             .arg1 = (uint32_t)populated, .arg2 = (uint32_t)pc->nr_empty_pop_pages);
    sl_spin_unlock(&pc->lock);
}

int sl_pcpu_free(sl_pcpu *pc, unsigned cpu, void *p)
{
    if (!p)
        return SL_OK;
    if (cpu >= pc->cfg.nr_units)
        return SL_EINVAL; /* no CPU to report it on */
    uint32_t op = SL_OP_BEGIN(pc->cfg.trace);
    unsigned unit = 0;
    lock_as(pc, op, cpu);
    sl_pcpu_chunk *c = sli_pcpu_chunk_lookup(pc, p, &unit);
    int off = c ? (int)((char *)p - c->base) : 0;
    SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_OP_BEGIN, .arg0 = OP_FREE,
             .slab = c ? c->id : SL_NONE32, .obj = c ? (uint32_t)off : SL_NONE32);
    int rc;
    if (!c) {
        rc = SL_EFOREIGN;
    } else if (unit != 0) {
        rc = SL_EMISALIGNED; /* another CPU's copy, not the percpu pointer */
    } else {
        rc = pc->ops->free_area(pc, c, off);
        if (rc > 0) {
            c->nr_alloc--;
            pc->nr_frees++;
            SLI_PCPU_EVENT(pc, c, PCPU_FREE, .arg0 = (uint32_t)off, .arg1 = (uint32_t)rc);
            rc = SL_OK;
        }
    }
    /* Like free_percpu: if there are more than one fully free chunks, wake up the grim reaper. */
    bool need_balance = false;
    if (rc == SL_OK && !pc->cfg.placed && c->free_bytes == pc->unit_size) {
        sl_pcpu_list *head = &pc->slots[pc->nr_slots - 1];
        for (sl_pcpu_list *l = head->next; l != head; l = l->next)
            need_balance |= chunk_of(l) != c;
    }
    sl_spin_unlock(&pc->lock);
    if (rc != SL_OK)
        SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_ERROR, .arg0 = (uint32_t)rc);
    if (need_balance) {
        sl_spin_lock(&pc->alloc_mutex);
        balance(pc, op, cpu);
        sl_spin_unlock(&pc->alloc_mutex);
    }
    SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_OP_END, .arg0 = OP_FREE,
             .arg1 = (uint32_t)rc);
    (void)op;
    return rc;
}

int64_t sl_pcpu_sum(const sl_pcpu *pc, void *p)
{
    int64_t sum = 0;
    for (unsigned u = 0; u < pc->cfg.nr_units; u++)
        sum += __atomic_load_n((int64_t *)sl_pcpu_ptr(pc, p, u), __ATOMIC_RELAXED);
    return sum;
}

bool sl_pcpu_locate(sl_pcpu *pc, const void *p, uint32_t *chunk_id, uint32_t *offset)
{
    unsigned unit = 0;
    sl_spin_lock(&pc->lock);
    sl_pcpu_chunk *c = sli_pcpu_chunk_lookup(pc, p, &unit);
    bool found = c && unit == 0;
    if (found) {
        *chunk_id = c->id;
        *offset = (uint32_t)((const char *)p - c->base);
    }
    sl_spin_unlock(&pc->lock);
    return found;
}

void *sl_pcpu_address(sl_pcpu *pc, uint32_t chunk_id, uint32_t offset)
{
    sl_spin_lock(&pc->lock);
    sl_pcpu_chunk *c = chunk_by_id(pc, chunk_id);
    void *p = c && offset < (uint32_t)pc->unit_size ? c->base + offset : NULL;
    sl_spin_unlock(&pc->lock);
    return p;
}

/* ------------------------------------------------------------------ */
/* Placement by a trace                                                */

int sl_pcpu_chunk_add(sl_pcpu *pc, uint32_t *chunk_id)
{
    if (!pc->cfg.placed)
        return SL_EINVAL;
    sl_spin_lock(&pc->alloc_mutex);
    lock_as(pc, 0, 0);
    sl_pcpu_chunk *c = chunk_create(pc, 0, 0, SLI_PCPU_BY_TRACE);
    if (c)
        *chunk_id = c->id;
    sl_spin_unlock(&pc->lock);
    sl_spin_unlock(&pc->alloc_mutex);
    return c ? SL_OK : SL_ENOMEM;
}

/*
 * Takes [off, off + size) of chunk chunk_id through pcpu_alloc_area; under
 * lock.  SL_OK, SL_EBUSY, SL_EINVAL, or SL_ECORRUPT if the allocator would
 * not take a free run (a model bug).
 */
static int place_area(sl_pcpu *pc, uint32_t chunk_id, int off, int size, sl_pcpu_chunk **chunk)
{
    sl_pcpu_chunk *c = *chunk = chunk_by_id(pc, chunk_id);
    if (!c || sli_pcpu_hidden(pc, c, off) || sli_pcpu_hidden(pc, c, off + size - 1))
        return SL_EINVAL;
    int bit = off / SL_PCPU_MIN_ALLOC_SIZE, bits = size / SL_PCPU_MIN_ALLOC_SIZE;
    if (sli_find_next_bit(c->alloc_map, bit + bits, bit) < bit + bits)
        return SL_EBUSY;
    /* The run is free and 4-byte aligned, so pcpu_alloc_area's search from its start takes exactly it. */
    if (pc->ops->alloc_area(pc, c, size, SL_PCPU_MIN_ALLOC_SIZE, bit) != off)
        return SL_ECORRUPT;
    area_taken(pc, c, off, size, SL_PCPU_MIN_ALLOC_SIZE);
    return SL_OK;
}

int sl_pcpu_alloc_at(sl_pcpu *pc, unsigned cpu, uint32_t chunk_id, size_t off, size_t size)
{
    if (cpu >= pc->cfg.nr_units)
        return SL_EINVAL; /* no CPU to report it on */
    size = (size + SL_PCPU_MIN_ALLOC_SIZE - 1) & ~(size_t)(SL_PCPU_MIN_ALLOC_SIZE - 1);
    uint32_t op = SL_OP_BEGIN(pc->cfg.trace);
    SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_OP_BEGIN, .flags = OP_PLACED,
             .arg0 = OP_ALLOC, .arg1 = (uint32_t)size, .arg2 = SL_PCPU_MIN_ALLOC_SIZE);
    sl_pcpu_chunk *c = NULL;
    int rc = SL_EINVAL;
    if (pc->cfg.placed && size && size <= (size_t)pc->unit_size && off <= (size_t)pc->unit_size - size &&
        off % SL_PCPU_MIN_ALLOC_SIZE == 0) {
        sl_spin_lock(&pc->alloc_mutex);
        lock_as(pc, op, cpu);
        rc = place_area(pc, chunk_id, (int)off, (int)size, &c);
        sl_spin_unlock(&pc->lock);
        sl_spin_unlock(&pc->alloc_mutex);
    }
    if (rc != SL_OK)
        SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_ERROR, .arg0 = (uint32_t)rc);
    SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_OP_END, .arg0 = OP_ALLOC,
             .arg1 = (uint32_t)rc, .slab = rc == SL_OK ? c->id : SL_NONE32,
             .obj = rc == SL_OK ? (uint32_t)off : SL_NONE32);
    (void)op;
    return rc;
}

int sl_pcpu_chunk_remove(sl_pcpu *pc, uint32_t chunk_id)
{
    if (!pc->cfg.placed)
        return SL_EINVAL;
    sl_spin_lock(&pc->alloc_mutex);
    lock_as(pc, 0, 0);
    sl_pcpu_chunk *c = chunk_by_id(pc, chunk_id);
    int rc = !c || (c->flags & (SLI_PCPU_CHUNK_FIRST | SLI_PCPU_CHUNK_RESERVED)) ? SL_EINVAL
             : c->nr_alloc                                                       ? SL_EBUSY
                                                                                 : SL_OK;
    if (rc == SL_OK)
        chunk_unlink(pc, c);
    sl_spin_unlock(&pc->lock);
    if (rc == SL_OK)
        chunk_free_memory(pc, c);
    sl_spin_unlock(&pc->alloc_mutex);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Validation and introspection                                        */

/* Granule states of c, checked against its population and region; the page counts the hints must match. */
static int validate_granules(sl_pcpu *pc, const sl_pcpu_chunk *c)
{
    unsigned ng = (unsigned)pc->unit_size / SL_PCPU_MIN_ALLOC_SIZE;
    uint8_t *g = malloc(ng);
    if (!g)
        return SL_ENOMEM;
    pc->ops->granules(pc, c, g, ng);
    int rc = SL_OK, starts = 0, free_granules = 0, empty_pop = 0;
    unsigned per_page = (unsigned)SL_PAGE_SIZE / SL_PCPU_MIN_ALLOC_SIZE;
    unsigned region_start = (unsigned)c->start_offset / SL_PCPU_MIN_ALLOC_SIZE;
    unsigned region_end = (unsigned)(pc->unit_size - c->end_offset) / SL_PCPU_MIN_ALLOC_SIZE;
    for (unsigned pg = 0; pg < (unsigned)c->nr_pages && rc == SL_OK; pg++) {
        bool populated = sli_test_bit(c->populated, (int)pg), empty = true;
        if (pg * per_page >= region_start && (pg + 1) * per_page <= region_end) {
            uint64_t any = 0, w;
            for (unsigned i = pg * per_page; i < (pg + 1) * per_page; i += 8, any |= w)
                memcpy(&w, g + i, 8);
            if (!any) { /* a free page inside the region: the common case, a word at a time */
                free_granules += (int)per_page;
                empty_pop += populated;
                continue;
            }
        }
        for (unsigned i = pg * per_page; i < (pg + 1) * per_page; i++) {
            bool hidden = i < region_start || i >= region_end;
            starts += g[i] == 1;
            free_granules += g[i] == 0;
            empty &= g[i] == 0;
            if ((g[i] == SLI_PCPU_GRANULE_HIDDEN) != hidden) {
                rc = sli_pcpu_corrupt(pc, "chunk %u: granule %u is %s, the region says otherwise", c->id, i,
                                      hidden ? "not hidden" : "hidden");
                break;
            }
        }
        if (rc == SL_OK && !empty && !populated)
            rc = sli_pcpu_corrupt(pc, "chunk %u: page %u holds allocated granules but is not populated", c->id, pg);
        empty_pop += empty && populated;
    }
    free(g);
    if (rc != SL_OK)
        return rc;
    /* The area map counts its own allocations (two may start in one granule) and its free bytes. */
    if (pc->cfg.kind != SL_PCPU_AREAMAP && starts != c->nr_alloc)
        return sli_pcpu_corrupt(pc, "chunk %u: nr_alloc %d, map holds %d allocations", c->id, c->nr_alloc, starts);
    if (pc->cfg.kind != SL_PCPU_AREAMAP && free_granules * SL_PCPU_MIN_ALLOC_SIZE != c->free_bytes)
        return sli_pcpu_corrupt(pc, "chunk %u: free_bytes %d, bitmap says %d", c->id, c->free_bytes,
                                free_granules * SL_PCPU_MIN_ALLOC_SIZE);
    /* v4.14 recounts empty pages only on a chunk hint refresh; the others keep the count exact. */
    if (pc->cfg.kind == SL_PCPU_BITMAP ? c->nr_empty_pop_pages < 0 || c->nr_empty_pop_pages > c->nr_populated
                                       : c->nr_empty_pop_pages != empty_pop)
        return sli_pcpu_corrupt(pc, "chunk %u: nr_empty_pop_pages %d, pages say %d (%d populated)", c->id,
                                c->nr_empty_pop_pages, empty_pop, c->nr_populated);
    return SL_OK;
}

static int validate_chunk(sl_pcpu *pc, const sl_pcpu_chunk *c, int slot)
{
    int want = pc->ops->chunk_slot(pc, c);
    bool relegated = pc->cfg.kind == SL_PCPU_SCANHINT && slot == 0 && want < SL_PCPU_SLOT_FAIL_THRESHOLD;
    if (slot >= 0 && want != slot && !relegated)
        return sli_pcpu_corrupt(pc, "chunk %u is in slot %d, its state says slot %d", c->id, slot, want);
    int rc = pc->ops->validate(pc, c);
    if (rc != SL_OK)
        return rc;
    if (sli_bitmap_weight(c->populated, c->nr_pages) != c->nr_populated)
        return sli_pcpu_corrupt(pc, "chunk %u: nr_populated %d, bitmap says %d", c->id, c->nr_populated,
                                sli_bitmap_weight(c->populated, c->nr_pages));
    if ((c->flags & (SLI_PCPU_CHUNK_FIRST | SLI_PCPU_CHUNK_RESERVED)) && c->nr_populated != c->nr_pages)
        return sli_pcpu_corrupt(pc, "chunk %u: the first chunks stay fully populated, %d of %d pages are", c->id,
                                c->nr_populated, c->nr_pages);
    return validate_granules(pc, c);
}

int sl_pcpu_validate(sl_pcpu *pc)
{
    int rc = SL_OK;
    sl_spin_lock(&pc->lock);
    pc->validate_msg[0] = '\0';
    unsigned seen = 0;
    int populated = 0, empty_pop = 0;
    uint64_t live = 0;
    bool first_seen = false;
    for (int slot = 0; slot < pc->nr_slots && rc == SL_OK; slot++) {
        for (sl_pcpu_list *l = pc->slots[slot].next; l != &pc->slots[slot] && rc == SL_OK; l = l->next) {
            sl_pcpu_chunk *c = chunk_of(l);
            if (seen++ > pc->nr_chunks || chunk_by_id(pc, c->id) != c || c == pc->reserved_chunk) {
                rc = sli_pcpu_corrupt(pc, "slot %d holds a chunk missing from the index", slot);
                break;
            }
            first_seen |= c == pc->first_chunk;
            rc = validate_chunk(pc, c, slot);
            populated += c->nr_populated;
            empty_pop += c->nr_empty_pop_pages;
            live += (uint64_t)c->nr_alloc;
        }
    }
    if (rc == SL_OK && pc->reserved_chunk) {
        if (!list_empty(&pc->reserved_chunk->list))
            rc = sli_pcpu_corrupt(pc, "the reserved chunk is on a slot list");
        else
            rc = validate_chunk(pc, pc->reserved_chunk, -1);
        live += (uint64_t)pc->reserved_chunk->nr_alloc;
    }
    for (unsigned i = 1; i < pc->nr_chunks && rc == SL_OK; i++)
        if (pc->chunks[i - 1]->base >= pc->chunks[i]->base)
            rc = sli_pcpu_corrupt(pc, "chunk index out of order at %u", i);
    if (rc == SL_OK && !first_seen)
        rc = sli_pcpu_corrupt(pc, "the first chunk is on no slot list");
    if (rc == SL_OK && seen != pc->nr_chunks)
        rc = sli_pcpu_corrupt(pc, "%u chunks on slots, %u in the index", seen, pc->nr_chunks);
    if (rc == SL_OK && populated != pc->nr_populated)
        rc = sli_pcpu_corrupt(pc, "pcpu_nr_populated %d, chunks hold %d", pc->nr_populated, populated);
    if (rc == SL_OK && empty_pop != pc->nr_empty_pop_pages)
        rc = sli_pcpu_corrupt(pc, "pcpu_nr_empty_pop_pages %d, chunks hold %d", pc->nr_empty_pop_pages, empty_pop);
    if (rc == SL_OK && live != pc->nr_allocs - pc->nr_frees)
        rc = sli_pcpu_corrupt(pc, "%llu live allocations in chunks, %llu allocs - %llu frees", (unsigned long long)live,
                              (unsigned long long)pc->nr_allocs, (unsigned long long)pc->nr_frees);
    sl_spin_unlock(&pc->lock);
    return rc;
}

void sl_pcpu_get_stats(sl_pcpu *pc, sl_pcpu_stats *out)
{
    memset(out, 0, sizeof *out);
    sl_spin_lock(&pc->lock);
    out->nr_chunks = pc->nr_chunks;
    for (unsigned i = 0; i < pc->nr_chunks; i++) {
        out->nr_empty_chunks += pc->chunks[i]->nr_alloc == 0;
        out->free_bytes += (uint64_t)pc->chunks[i]->free_bytes;
    }
    out->nr_allocs = pc->nr_allocs;
    out->nr_frees = pc->nr_frees;
    out->live_allocs = pc->nr_allocs - pc->nr_frees;
    out->chunks_created = pc->chunks_created;
    out->chunks_destroyed = pc->chunks_destroyed;
    out->map_extends = pc->map_extends;
    out->nr_populated = (uint32_t)pc->nr_populated;
    out->nr_empty_pop_pages = pc->nr_empty_pop_pages;
    sl_spin_unlock(&pc->lock);
}

int sl_pcpu_chunk_info_get(sl_pcpu *pc, uint32_t chunk_id, sl_pcpu_chunk_info *out)
{
    int rc = SL_EINVAL;
    sl_spin_lock(&pc->lock);
    const sl_pcpu_chunk *c = chunk_by_id(pc, chunk_id);
    if (c) {
        *out = (sl_pcpu_chunk_info){
            .unit_size = (uint32_t)pc->unit_size,
            .free_bytes = (uint32_t)c->free_bytes,
            .contig_bytes = (uint32_t)pc->ops->contig_bytes(c),
            .nr_alloc = (uint32_t)c->nr_alloc,
            .slot = (uint32_t)pc->ops->chunk_slot(pc, c),
            .map_used = (uint32_t)c->map_used,
            .nr_populated = (uint32_t)c->nr_populated,
            .first_free = (uint32_t)(pc->cfg.kind == SL_PCPU_AREAMAP  ? c->first_free
                                     : pc->cfg.kind == SL_PCPU_BITMAP ? c->first_bit
                                                                      : c->chunk_md.first_free),
            .nr_empty_pop_pages = c->nr_empty_pop_pages,
        };
        rc = SL_OK;
    }
    sl_spin_unlock(&pc->lock);
    return rc;
}

int sl_pcpu_chunk_granules(sl_pcpu *pc, uint32_t chunk_id, uint8_t *out, unsigned max)
{
    int rc = SL_EINVAL;
    sl_spin_lock(&pc->lock);
    const sl_pcpu_chunk *c = chunk_by_id(pc, chunk_id);
    if (c)
        rc = pc->ops->granules(pc, c, out, max);
    sl_spin_unlock(&pc->lock);
    return rc;
}
