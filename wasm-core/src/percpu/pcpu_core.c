/*
 * pcpu_core.c - chunks, slots, the global lock, and pcpu_alloc/free_percpu.
 *
 * Data structures.  pc->slots[] are the kernel's pcpu_slot lists: a chunk
 * sits in the slot its allocator computes (by free bytes for the area map
 * and the 2017 bitmap, by contig hint since 2019); slot 0 holds chunks that
 * cannot serve anything, the last slot holds empty chunks.  pc->chunks[] is
 * every chunk sorted by base address, the model's stand-in for the
 * page->index lookup that free_percpu() does (pcpu_chunk_addr_search).
 *
 * Locking.  pc->lock (pcpu_lock) guards all of the above and every chunk's
 * metadata.  pc->alloc_mutex (pcpu_alloc_mutex) is held across a whole
 * allocation, as the kernel holds it for non-atomic allocations: it makes
 * chunk creation and area map growth single-threaded, and the balance step
 * that destroys surplus empty chunks takes it too.  The lock order is
 * alloc_mutex, then lock.  Chunk memory (sl_os_alloc_aligned) is allocated
 * and freed with only the mutex held, as pcpu_create_chunk and
 * pcpu_destroy_chunk run outside pcpu_lock.
 *
 * Population.  The kernel maps a chunk's pages on first use; here the
 * memory exists from the start and `populated` records which pages an
 * allocation has touched (pcpu_populate_chunk / pcpu_chunk_populated), so
 * the counts match the kernel's.  Pages are never depopulated: the model
 * has no balance work for that.
 *
 * Invariants (checked by sl_pcpu_validate): each chunk is on exactly the
 * list of its slot and in the index; every allocated byte lies in populated
 * pages; allocation counts and free bytes add up.  Once a free has returned,
 * at most one empty chunk remains (the kernel's balance work keeps the
 * first chunk of the empty slot); validate cannot check that while another
 * thread is between its free and its balance step, so the tests do.
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

const char *sl_pcpu_kind_name(sl_pcpu_kind k)
{
    return (unsigned)k < SL_PCPU_NKINDS ? kind_ops[k]->name : "?";
}

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

int sli_pcpu_corrupt(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "percpu validate: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return SL_ECORRUPT;
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
static sl_pcpu_chunk *chunk_of(sl_pcpu_list *l)
{
    return (sl_pcpu_chunk *)((char *)l - offsetof(sl_pcpu_chunk, list));
}

static int fls_int(int x) { return x ? 32 - __builtin_clz((unsigned)x) : 0; }

int sli_pcpu_size_to_slot(const sl_pcpu *pc, int size)
{
    if (size == pc->unit_size)
        return pc->nr_slots - 1;
    return sli_max(fls_int(size) - SLI_PCPU_SLOT_BASE_SHIFT + 2, 1);
}

/* list_move to the head when the chunk got freer, list_move_tail when fuller. */
void sli_pcpu_chunk_relocate(sl_pcpu *pc, sl_pcpu_chunk *c, int oslot)
{
    int nslot = pc->ops->chunk_slot(pc, c);
    if (oslot == nslot)
        return;
    list_del(&c->list);
    sl_pcpu_list *head = &pc->slots[nslot];
    if (oslot < nslot)
        list_add_between(&c->list, head, head->next);
    else
        list_add_between(&c->list, head->prev, head);
}

void sli_pcpu_update_empty_pages(sl_pcpu *pc, sl_pcpu_chunk *c, int nr)
{
    c->nr_empty_pop_pages += nr;
    pc->nr_empty_pop_pages += nr;
}

/* ------------------------------------------------------------------ */
/* Instance                                                            */

int sl_pcpu_init(sl_pcpu *pc, const sl_pcpu_config *cfg)
{
    memset(pc, 0, sizeof *pc);
    size_t unit = cfg->unit_size ? cfg->unit_size : SL_PCPU_DEFAULT_UNIT_SIZE;
    if ((unsigned)cfg->kind >= SL_PCPU_NKINDS || cfg->nr_units < 1 || cfg->nr_units > SL_PCPU_MAX_UNITS ||
        unit % SL_PAGE_SIZE || unit > (1u << 30) / cfg->nr_units)
        return SL_EINVAL;
    if (cfg->trace && cfg->trace->ncpus < cfg->nr_units)
        return SL_EINVAL;
    pc->cfg = *cfg;
    pc->cfg.unit_size = unit;
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
    return SL_OK;
}

static void chunk_free_memory(sl_pcpu *pc, sl_pcpu_chunk *c)
{
    pc->ops->chunk_fini(c);
    free(c->populated);
    sl_os_free(c->base);
    free(c);
}

void sl_pcpu_destroy(sl_pcpu *pc)
{
    for (unsigned i = 0; i < pc->nr_chunks; i++)
        chunk_free_memory(pc, pc->chunks[i]);
    free(pc->chunks);
    free(pc->slots);
    memset(pc, 0, sizeof *pc);
}

/* pcpu_create_chunk: called with alloc_mutex held, lock not held. */
static sl_pcpu_chunk *chunk_create(sl_pcpu *pc)
{
    sl_pcpu_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->nr_pages = pc->unit_pages;
    c->populated = calloc((size_t)sli_bitmap_words(c->nr_pages), sizeof(uint64_t));
    c->base = sl_os_alloc_aligned((size_t)pc->unit_size * pc->cfg.nr_units, SL_PAGE_SIZE);
    list_init(&c->list);
    if (!c->populated || !c->base || pc->ops->chunk_init(pc, c) != SL_OK) {
        free(c->populated);
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

sl_pcpu_chunk *sli_pcpu_chunk_lookup(const sl_pcpu *pc, const void *vp, unsigned *unit)
{
    const char *p = vp;
    unsigned lo = 0, hi = pc->nr_chunks;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (pc->chunks[mid]->base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    sl_pcpu_chunk *c = pc->chunks[lo - 1];
    size_t d = (size_t)(p - c->base);
    if (d >= (size_t)pc->unit_size * pc->cfg.nr_units)
        return NULL;
    *unit = (unsigned)(d / (size_t)pc->unit_size);
    return c;
}

/* ------------------------------------------------------------------ */
/* pcpu_alloc / free_percpu                                            */

/* Marks the pages under [off, off + size) populated; under lock. */
static void populate(sl_pcpu *pc, sl_pcpu_chunk *c, int off, int size)
{
    int ps = off / (int)SL_PAGE_SIZE, pe = (off + size + (int)SL_PAGE_SIZE - 1) / (int)SL_PAGE_SIZE;
    for (int rs = sli_find_next_zero_bit(c->populated, pe, ps); rs < pe;
         rs = sli_find_next_zero_bit(c->populated, pe, rs)) {
        int re = sli_find_next_bit(c->populated, pe, rs + 1);
        sli_bitmap_set(c->populated, rs, re - rs);
        c->nr_populated += re - rs;
        pc->nr_populated += re - rs;
        if (pc->cfg.kind == SL_PCPU_SCANHINT)
            sli_pcpu_update_empty_pages(pc, c, re - rs);
        SL_EVENT(pc->cfg.trace, .kind = SL_EV_PCPU_POPULATE, .arg0 = (uint32_t)(re - rs), .arg1 = (uint32_t)rs);
        rs = re;
    }
}

int sl_pcpu_alloc(sl_pcpu *pc, unsigned cpu, size_t size, size_t align, void **out)
{
    *out = NULL;
    /* The area map wants bit 0 of offsets free (align >= 2, even sizes); the bitmaps work in 4-byte bits. */
    size_t min = pc->cfg.kind == SL_PCPU_AREAMAP ? 2 : SL_PCPU_MIN_ALLOC_SIZE;
    if (align < min)
        align = min;
    size = (size + min - 1) & ~(min - 1);
    if (!size || size > SL_PCPU_MAX_ALLOC_SIZE || size > (size_t)pc->unit_size || align > SL_PAGE_SIZE ||
        (align & (align - 1)) || cpu >= pc->cfg.nr_units)
        return SL_EINVAL;
    uint32_t op = SL_OP_BEGIN(pc->cfg.trace);
    (void)op;
    int isize = (int)size, ialign = (int)align, off = -1;
    sl_pcpu_chunk *c = NULL;
    bool created = false;

    sl_spin_lock(&pc->alloc_mutex);
    sl_spin_lock(&pc->lock);
restart:
    for (int slot = sli_pcpu_size_to_slot(pc, isize); slot < pc->nr_slots; slot++) {
        for (sl_pcpu_list *l = pc->slots[slot].next; l != &pc->slots[slot]; l = l->next) {
            c = chunk_of(l);
            int start = pc->ops->find_fit(pc, c, isize, ialign);
            if (start == -1)
                continue;
            if (start < -1) {
                /* pcpu_extend_area_map: allocate outside pcpu_lock, then retry the walk. */
                int new_alloc = -2 - start;
                sl_spin_unlock(&pc->lock);
                int *map = malloc(sizeof(int) * (size_t)new_alloc);
                sl_spin_lock(&pc->lock);
                if (!map)
                    goto fail;
                if (new_alloc > c->map_alloc) {
                    memcpy(map, c->map, sizeof(int) * (size_t)c->map_alloc);
                    int *old = c->map;
                    c->map = map;
                    c->map_alloc = new_alloc;
                    map = old;
                    pc->map_extends++;
                    SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_PCPU_MAP_EXTEND,
                             .arg0 = (uint32_t)new_alloc);
                }
                sl_spin_unlock(&pc->lock);
                free(map);
                sl_spin_lock(&pc->lock);
                goto restart;
            }
            off = pc->ops->alloc_area(pc, c, isize, ialign, start);
            if (off >= 0)
                goto found;
        }
    }
    /* No space left: create a chunk unless an empty one already exists. */
    if (list_empty(&pc->slots[pc->nr_slots - 1])) {
        sl_spin_unlock(&pc->lock);
        c = chunk_create(pc);
        sl_spin_lock(&pc->lock);
        if (!c || index_insert(pc, c) != SL_OK) {
            if (c)
                chunk_free_memory(pc, c);
            goto fail;
        }
        created = true;
        pc->chunks_created++;
        sli_pcpu_chunk_relocate(pc, c, -1);
        SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_PCPU_CHUNK_CREATE,
                 .arg0 = (uint32_t)(pc->nr_chunks - 1));
    } else if (created) {
        goto fail; /* cannot happen: an empty chunk fits any valid request */
    }
    goto restart;

found:
    populate(pc, c, off, isize);
    c->nr_alloc++;
    pc->nr_allocs++;
    sl_spin_unlock(&pc->lock);
    sl_spin_unlock(&pc->alloc_mutex);
    for (unsigned u = 0; u < pc->cfg.nr_units; u++)
        memset(c->base + (size_t)u * (size_t)pc->unit_size + off, 0, size);
    *out = c->base + off;
    SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_PCPU_ALLOC, .arg0 = (uint32_t)off,
             .arg1 = (uint32_t)size, .arg2 = (uint32_t)align);
    return SL_OK;

fail:
    sl_spin_unlock(&pc->lock);
    sl_spin_unlock(&pc->alloc_mutex);
    return SL_ENOMEM;
}

/* pcpu_balance_workfn's first part: destroy every empty chunk but the first; alloc_mutex held. */
static void balance(sl_pcpu *pc)
{
    sl_pcpu_chunk *doomed[64];
    unsigned n;
    do {
        n = 0;
        sl_spin_lock(&pc->lock);
        sl_pcpu_list *head = &pc->slots[pc->nr_slots - 1];
        for (sl_pcpu_list *l = head->next->next; l != head && n < 64;) {
            sl_pcpu_chunk *c = chunk_of(l);
            l = l->next;
            list_del(&c->list);
            index_remove(pc, c);
            pc->chunks_destroyed++;
            pc->nr_populated -= c->nr_populated;
            pc->nr_empty_pop_pages -= c->nr_empty_pop_pages;
            doomed[n++] = c;
        }
        sl_spin_unlock(&pc->lock);
        for (unsigned i = 0; i < n; i++) {
            SL_EVENT(pc->cfg.trace, .kind = SL_EV_PCPU_CHUNK_DESTROY, .arg0 = (uint32_t)doomed[i]->nr_populated);
            chunk_free_memory(pc, doomed[i]);
        }
    } while (n == 64);
}

int sl_pcpu_free(sl_pcpu *pc, unsigned cpu, void *p)
{
    if (!p)
        return SL_OK;
    uint32_t op = SL_OP_BEGIN(pc->cfg.trace);
    (void)op;
    (void)cpu; /* only the trace uses it */
    unsigned unit = 0;
    sl_spin_lock(&pc->lock);
    sl_pcpu_chunk *c = sli_pcpu_chunk_lookup(pc, p, &unit);
    int rc;
    if (!c) {
        rc = SL_EFOREIGN;
    } else if (unit != 0) {
        rc = SL_EMISALIGNED; /* another CPU's copy, not the percpu pointer */
    } else {
        int off = (int)((char *)p - c->base);
        rc = pc->ops->free_area(pc, c, off);
        if (rc > 0) {
            c->nr_alloc--;
            pc->nr_frees++;
            SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_PCPU_FREE, .arg0 = (uint32_t)off,
                     .arg1 = (uint32_t)rc);
            rc = SL_OK;
        }
    }
    /* Like free_percpu: schedule balance work if another empty chunk exists. */
    bool need_balance = false;
    if (rc == SL_OK && c->nr_alloc == 0 && !pc->cfg.placed) {
        sl_pcpu_list *head = &pc->slots[pc->nr_slots - 1];
        for (sl_pcpu_list *l = head->next; l != head; l = l->next)
            need_balance |= chunk_of(l) != c;
    }
    sl_spin_unlock(&pc->lock);
    if (rc != SL_OK) {
        SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_ERROR, .arg0 = (uint32_t)rc);
        return rc;
    }
    if (need_balance) {
        sl_spin_lock(&pc->alloc_mutex);
        balance(pc);
        sl_spin_unlock(&pc->alloc_mutex);
    }
    return SL_OK;
}

int64_t sl_pcpu_sum(const sl_pcpu *pc, void *p)
{
    int64_t sum = 0;
    for (unsigned u = 0; u < pc->cfg.nr_units; u++)
        sum += __atomic_load_n((int64_t *)sl_pcpu_ptr(pc, p, u), __ATOMIC_RELAXED);
    return sum;
}

/* ------------------------------------------------------------------ */
/* Placement by a trace                                                */

int sl_pcpu_chunk_add(sl_pcpu *pc, void **base)
{
    sl_spin_lock(&pc->alloc_mutex);
    sl_pcpu_chunk *c = chunk_create(pc);
    int rc = c ? SL_OK : SL_ENOMEM;
    if (c) {
        sl_spin_lock(&pc->lock);
        rc = index_insert(pc, c);
        if (rc == SL_OK) {
            pc->chunks_created++;
            sli_pcpu_chunk_relocate(pc, c, -1);
            *base = c->base;
            SL_EVENT(pc->cfg.trace, .kind = SL_EV_PCPU_CHUNK_CREATE, .arg0 = (uint32_t)(pc->nr_chunks - 1));
        }
        sl_spin_unlock(&pc->lock);
        if (rc != SL_OK)
            chunk_free_memory(pc, c);
    }
    sl_spin_unlock(&pc->alloc_mutex);
    return rc;
}

/* The chunk whose unit 0 starts at base; under lock. */
static sl_pcpu_chunk *chunk_at(const sl_pcpu *pc, const void *base)
{
    unsigned unit;
    sl_pcpu_chunk *c = sli_pcpu_chunk_lookup(pc, base, &unit);
    return c && c->base == base ? c : NULL;
}

int sl_pcpu_alloc_at(sl_pcpu *pc, unsigned cpu, void *base, size_t off, size_t size)
{
    size = (size + SL_PCPU_MIN_ALLOC_SIZE - 1) & ~(size_t)(SL_PCPU_MIN_ALLOC_SIZE - 1);
    if (pc->cfg.kind == SL_PCPU_AREAMAP || off % SL_PCPU_MIN_ALLOC_SIZE || !size ||
        off + size > (size_t)pc->unit_size || cpu >= pc->cfg.nr_units)
        return SL_EINVAL;
    uint32_t op = SL_OP_BEGIN(pc->cfg.trace);
    (void)op;
    sl_spin_lock(&pc->lock);
    sl_pcpu_chunk *c = chunk_at(pc, base);
    int rc = SL_EINVAL;
    if (c) {
        int bit = (int)off / SL_PCPU_MIN_ALLOC_SIZE, bits = (int)size / SL_PCPU_MIN_ALLOC_SIZE;
        if (sli_find_next_bit(c->alloc_map, bit + bits, bit) < bit + bits) {
            rc = SL_EBUSY;
        } else if (pc->ops->alloc_area(pc, c, (int)size, SL_PCPU_MIN_ALLOC_SIZE, bit) != (int)off) {
            rc = SL_EBUSY; /* cannot happen: the run is free and the minimum alignment fits anywhere */
        } else {
            populate(pc, c, (int)off, (int)size);
            c->nr_alloc++;
            pc->nr_allocs++;
            rc = SL_OK;
        }
    }
    sl_spin_unlock(&pc->lock);
    if (rc == SL_OK)
        SL_EVENT(pc->cfg.trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_PCPU_ALLOC, .arg0 = (uint32_t)off,
                 .arg1 = (uint32_t)size, .arg2 = SL_PCPU_MIN_ALLOC_SIZE);
    return rc;
}

int sl_pcpu_chunk_remove(sl_pcpu *pc, void *base)
{
    sl_spin_lock(&pc->alloc_mutex);
    sl_spin_lock(&pc->lock);
    sl_pcpu_chunk *c = chunk_at(pc, base);
    int rc = !c ? SL_EINVAL : c->nr_alloc ? SL_EBUSY : SL_OK;
    if (rc == SL_OK) {
        list_del(&c->list);
        index_remove(pc, c);
        pc->chunks_destroyed++;
        pc->nr_populated -= c->nr_populated;
        pc->nr_empty_pop_pages -= c->nr_empty_pop_pages;
    }
    sl_spin_unlock(&pc->lock);
    if (rc == SL_OK) {
        SL_EVENT(pc->cfg.trace, .kind = SL_EV_PCPU_CHUNK_DESTROY, .arg0 = (uint32_t)c->nr_populated);
        chunk_free_memory(pc, c);
    }
    sl_spin_unlock(&pc->alloc_mutex);
    return rc;
}

int sl_pcpu_chunk_index(sl_pcpu *pc, const void *base)
{
    int rc = SL_EINVAL;
    sl_spin_lock(&pc->lock);
    for (unsigned i = 0; i < pc->nr_chunks; i++)
        if (pc->chunks[i]->base == base)
            rc = (int)i;
    sl_spin_unlock(&pc->lock);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Validation and introspection                                        */

static int validate_chunk(const sl_pcpu *pc, const sl_pcpu_chunk *c, int slot)
{
    int want = pc->ops->chunk_slot(pc, c);
    if (want != slot)
        return sli_pcpu_corrupt("chunk %p is in slot %d, its state says slot %d", (void *)c, slot, want);
    int rc = pc->ops->validate(pc, c);
    if (rc != SL_OK)
        return rc;
    if (sli_bitmap_weight(c->populated, c->nr_pages) != c->nr_populated)
        return sli_pcpu_corrupt("chunk %p: nr_populated %d, bitmap says %d", (void *)c, c->nr_populated,
                                sli_bitmap_weight(c->populated, c->nr_pages));
    /* Every allocated granule lies in a populated page. */
    uint8_t *g = malloc((size_t)pc->unit_size / SL_PCPU_MIN_ALLOC_SIZE);
    if (!g)
        return SL_ENOMEM;
    int n = pc->ops->granules(pc, c, g, (unsigned)pc->unit_size / SL_PCPU_MIN_ALLOC_SIZE);
    int starts = 0, free_granules = 0, empty_pop = 0;
    for (int i = 0; i < n; i++) {
        starts += g[i] == 1;
        free_granules += g[i] == 0;
        if (g[i] && !sli_test_bit(c->populated, i * SL_PCPU_MIN_ALLOC_SIZE / (int)SL_PAGE_SIZE)) {
            free(g);
            return sli_pcpu_corrupt("chunk %p: granule %d allocated in an unpopulated page", (void *)c, i);
        }
    }
    int per_page = (int)SL_PAGE_SIZE / SL_PCPU_MIN_ALLOC_SIZE;
    for (int pg = 0; pg < c->nr_pages; pg++) {
        bool empty = true;
        for (int i = pg * per_page; i < (pg + 1) * per_page && empty; i++)
            empty = g[i] == 0;
        empty_pop += empty && sli_test_bit(c->populated, pg);
    }
    free(g);
    /* The area map counts its own allocations (two may start in one granule). */
    if (pc->cfg.kind != SL_PCPU_AREAMAP && starts != c->nr_alloc)
        return sli_pcpu_corrupt("chunk %p: nr_alloc %d, map holds %d allocations", (void *)c, c->nr_alloc, starts);
    /* The area map keeps sub-granule tails inside allocations; count free bytes only for the bitmaps. */
    if (pc->cfg.kind != SL_PCPU_AREAMAP && free_granules * SL_PCPU_MIN_ALLOC_SIZE != c->free_bytes)
        return sli_pcpu_corrupt("chunk %p: free_bytes %d, bitmap says %d", (void *)c, c->free_bytes,
                                free_granules * SL_PCPU_MIN_ALLOC_SIZE);
    if (pc->cfg.kind == SL_PCPU_SCANHINT && empty_pop != c->nr_empty_pop_pages)
        return sli_pcpu_corrupt("chunk %p: nr_empty_pop_pages %d, pages say %d", (void *)c, c->nr_empty_pop_pages,
                                empty_pop);
    return SL_OK;
}

int sl_pcpu_validate(sl_pcpu *pc)
{
    int rc = SL_OK;
    sl_spin_lock(&pc->lock);
    unsigned seen = 0;
    int populated = 0, empty_pop = 0;
    uint64_t live = 0;
    for (int slot = 0; slot < pc->nr_slots && rc == SL_OK; slot++) {
        for (sl_pcpu_list *l = pc->slots[slot].next; l != &pc->slots[slot] && rc == SL_OK; l = l->next) {
            sl_pcpu_chunk *c = chunk_of(l);
            unsigned unit;
            if (seen++ > pc->nr_chunks || sli_pcpu_chunk_lookup(pc, c->base, &unit) != c) {
                rc = sli_pcpu_corrupt("slot %d holds a chunk missing from the index", slot);
                break;
            }
            rc = validate_chunk(pc, c, slot);
            populated += c->nr_populated;
            empty_pop += c->nr_empty_pop_pages;
            live += (uint64_t)c->nr_alloc;
        }
    }
    for (unsigned i = 1; i < pc->nr_chunks && rc == SL_OK; i++)
        if (pc->chunks[i - 1]->base >= pc->chunks[i]->base)
            rc = sli_pcpu_corrupt("chunk index out of order at %u", i);
    if (rc == SL_OK && seen != pc->nr_chunks)
        rc = sli_pcpu_corrupt("%u chunks on slots, %u in the index", seen, pc->nr_chunks);
    if (rc == SL_OK && populated != pc->nr_populated)
        rc = sli_pcpu_corrupt("pcpu_nr_populated %d, chunks hold %d", pc->nr_populated, populated);
    if (rc == SL_OK && empty_pop != pc->nr_empty_pop_pages)
        rc = sli_pcpu_corrupt("pcpu_nr_empty_pop_pages %d, chunks hold %d", pc->nr_empty_pop_pages, empty_pop);
    if (rc == SL_OK && live != pc->nr_allocs - pc->nr_frees)
        rc = sli_pcpu_corrupt("%llu live allocations in chunks, %llu allocs - %llu frees", (unsigned long long)live,
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

int sl_pcpu_chunk_info_get(sl_pcpu *pc, unsigned index, sl_pcpu_chunk_info *out)
{
    int rc = SL_EINVAL;
    sl_spin_lock(&pc->lock);
    if (index < pc->nr_chunks) {
        const sl_pcpu_chunk *c = pc->chunks[index];
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
        };
        rc = SL_OK;
    }
    sl_spin_unlock(&pc->lock);
    return rc;
}

int sl_pcpu_chunk_granules(sl_pcpu *pc, unsigned index, uint8_t *out, unsigned max)
{
    int rc = SL_EINVAL;
    sl_spin_lock(&pc->lock);
    if (index < pc->nr_chunks)
        rc = pc->ops->granules(pc, pc->chunks[index], out, max);
    sl_spin_unlock(&pc->lock);
    return rc;
}
