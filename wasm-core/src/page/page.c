/*
 * page.c - the buddy allocator (see page.h for the data structures and who
 * may touch which field).
 *
 * Free lists are doubly linked through the free block's first page
 * (buddy_next/buddy_prev hold pfns).  The buddy of the block at pfn p of
 * order k is p ^ (1 << k), as in the kernel's __find_buddy_pfn; pfns count
 * from the arena start, which is aligned to the largest block, so that
 * arithmetic matches the addresses.
 *
 * Invariant (checked by sl_page_validate): every page belongs to exactly one
 * block; a free block's first page has SL_PG_FREE and its order, its other
 * pages have no flags; an allocated block's first page has SL_PG_HEAD and
 * its order, the others SL_PG_TAIL with head = the first page's pfn.
 */
#include "page.h"

#include <string.h>

static uint32_t load32(const uint32_t *p) { return sl_load_relaxed(p); }
static void store32(uint32_t *p, uint32_t v) { sl_store_relaxed(p, v); }

/*
 * SL_EVENT's designated-initialiser defaults trip -Woverride-init when .slab
 * is given, so the record is built here in full.
 */
static void page_event(sl_page_zone *z, unsigned cpu, unsigned kind, uint32_t pfn, unsigned order)
{
#if defined(SLABLAB_BENCH)
    (void)z, (void)cpu, (void)kind, (void)pfn, (void)order;
#else
    if (z->trace && z->trace->enabled && cpu < z->trace->ncpus) {
        sl_event ev = {.op = 0,
                       .cpu = (uint16_t)cpu,
                       .kind = (uint16_t)kind,
                       .cache = 0xffff,
                       .slab = pfn,
                       .obj = SL_NONE32,
                       .arg0 = order};
        sl_trace_emit(z->trace, &ev);
    }
#endif
}

static void list_add(sl_page_zone *z, uint32_t pfn, unsigned order)
{
    sl_page *pg = &z->pages[pfn];
    store32(&pg->flags, SL_PG_FREE);
    store32(&pg->head, pfn);
    pg->order = (uint8_t)order;
    pg->buddy_prev = SL_PFN_NONE;
    pg->buddy_next = z->free_head[order];
    if (pg->buddy_next != SL_PFN_NONE)
        z->pages[pg->buddy_next].buddy_prev = pfn;
    z->free_head[order] = pfn;
    z->stats.free_blocks[order]++;
    z->stats.pages_free += 1u << order;
}

static void list_del(sl_page_zone *z, uint32_t pfn, unsigned order)
{
    sl_page *pg = &z->pages[pfn];
    if (pg->buddy_prev != SL_PFN_NONE)
        z->pages[pg->buddy_prev].buddy_next = pg->buddy_next;
    else
        z->free_head[order] = pg->buddy_next;
    if (pg->buddy_next != SL_PFN_NONE)
        z->pages[pg->buddy_next].buddy_prev = pg->buddy_prev;
    store32(&pg->flags, 0);
    pg->buddy_next = pg->buddy_prev = SL_PFN_NONE;
    z->stats.free_blocks[order]--;
    z->stats.pages_free -= 1u << order;
}

int sl_page_zone_init(sl_page_zone *z, size_t bytes, sl_trace *trace)
{
    memset(z, 0, sizeof *z);
    size_t npages = bytes >> SL_PAGE_SHIFT;
    if (npages == 0 || npages > UINT32_MAX / 2)
        return SL_EINVAL;
    size_t align = SL_PAGE_SIZE;
    while (align < (SL_PAGE_SIZE << SL_PAGE_MAX_ORDER) && align < (npages << SL_PAGE_SHIFT))
        align <<= 1;
    z->base = sl_os_alloc_aligned(npages << SL_PAGE_SHIFT, align);
    z->pages = sl_os_alloc_aligned(npages * sizeof(sl_page), 64);
    if (!z->base || !z->pages) {
        sl_page_zone_destroy(z);
        return SL_ENOMEM;
    }
    memset(z->pages, 0, npages * sizeof(sl_page));
    z->npages = (uint32_t)npages;
    z->trace = trace;
    z->stats.pages_total = npages;
    for (unsigned o = 0; o < SL_PAGE_NR_ORDERS; o++)
        z->free_head[o] = SL_PFN_NONE;
    /* Carve the arena into the largest naturally aligned blocks that fit. */
    uint32_t pfn = 0;
    while (pfn < npages) {
        unsigned order = SL_PAGE_MAX_ORDER;
        while (order > 0 && ((pfn & ((1u << order) - 1)) || pfn + (1u << order) > npages))
            order--;
        list_add(z, pfn, order);
        pfn += 1u << order;
    }
    return SL_OK;
}

void sl_page_zone_destroy(sl_page_zone *z)
{
    if (z->base)
        sl_os_free(z->base);
    if (z->pages)
        sl_os_free(z->pages);
    memset(z, 0, sizeof *z);
}

void sl_page_zone_prefault(sl_page_zone *z)
{
    volatile unsigned char *p = z->base;
    for (size_t off = 0; off < (size_t)z->npages << SL_PAGE_SHIFT; off += SL_PAGE_SIZE)
        p[off] = p[off];
}

sl_page *sl_page_alloc(sl_page_zone *z, unsigned order, unsigned cpu)
{
    if (order > SL_PAGE_MAX_ORDER)
        return NULL;
    sl_spin_lock(&z->lock);
    unsigned o = order;
    while (o < SL_PAGE_NR_ORDERS && z->free_head[o] == SL_PFN_NONE)
        o++;
    if (o == SL_PAGE_NR_ORDERS) {
        z->stats.alloc_failed++;
        sl_spin_unlock(&z->lock);
        return NULL;
    }
    uint32_t pfn = z->free_head[o];
    list_del(z, pfn, o);
    /* expand(): hand the upper halves back until the block has the order asked for. */
    while (o > order) {
        o--;
        list_add(z, pfn + (1u << o), o);
    }
    sl_page *head = &z->pages[pfn];
    memset(head->priv, 0, sizeof head->priv);
    head->order = (uint8_t)order;
    store32(&head->head, pfn);
    for (uint32_t i = 1; i < (1u << order); i++) {
        store32(&z->pages[pfn + i].head, pfn);
        store32(&z->pages[pfn + i].flags, SL_PG_TAIL);
    }
    store32(&head->flags, SL_PG_HEAD);
    z->stats.alloc_calls++;
    sl_spin_unlock(&z->lock);
    page_event(z, cpu, SL_EV_PAGE_ALLOC, pfn, order);
    return head;
}

int sl_page_free(sl_page_zone *z, sl_page *head, unsigned cpu)
{
    if (head < z->pages || head >= z->pages + z->npages)
        return SL_EINVAL;
    uint32_t pfn = sl_page_pfn(z, head);
    sl_spin_lock(&z->lock);
    if (load32(&head->flags) != SL_PG_HEAD) {
        sl_spin_unlock(&z->lock);
        return SL_EINVAL;
    }
    unsigned order = head->order;
    for (uint32_t i = 1; i < (1u << order); i++) {
        store32(&z->pages[pfn + i].flags, 0);
        store32(&z->pages[pfn + i].head, pfn + i);
    }
    store32(&head->flags, 0);
    z->stats.free_calls++;
    /* __free_one_page(): merge with the buddy while it is free and of the same order. */
    uint32_t p = pfn;
    unsigned o = order;
    while (o < SL_PAGE_MAX_ORDER) {
        uint32_t buddy = p ^ (1u << o);
        if (buddy + (1u << o) > z->npages)
            break;
        sl_page *b = &z->pages[buddy];
        if (load32(&b->flags) != SL_PG_FREE || b->order != o)
            break;
        list_del(z, buddy, o);
        p &= buddy;
        o++;
    }
    list_add(z, p, o);
    sl_spin_unlock(&z->lock);
    page_event(z, cpu, SL_EV_PAGE_FREE, pfn, order);
    return SL_OK;
}

void sl_page_stats_get(sl_page_zone *z, sl_page_stats *out)
{
    sl_spin_lock(&z->lock);
    *out = z->stats;
    sl_spin_unlock(&z->lock);
}

int sl_page_validate(sl_page_zone *z)
{
    int rc = SL_OK;
    sl_spin_lock(&z->lock);
    uint64_t free_pages = 0, blocks[SL_PAGE_NR_ORDERS] = {0};
    /* Free lists: links agree both ways, the walk ends within npages steps, blocks are aligned. */
    for (unsigned o = 0; o < SL_PAGE_NR_ORDERS && rc == SL_OK; o++) {
        uint32_t prev = SL_PFN_NONE, steps = 0;
        for (uint32_t p = z->free_head[o]; p != SL_PFN_NONE; p = z->pages[p].buddy_next) {
            if (p >= z->npages || ++steps > z->npages || (p & ((1u << o) - 1)) || p + (1u << o) > z->npages ||
                z->pages[p].buddy_prev != prev || load32(&z->pages[p].flags) != SL_PG_FREE || z->pages[p].order != o) {
                rc = SL_ECORRUPT;
                break;
            }
            blocks[o]++;
            free_pages += 1u << o;
            prev = p;
        }
    }
    /* Pages: walk block by block; each block's pages are marked as its kind requires. */
    for (uint32_t p = 0; p < z->npages && rc == SL_OK;) {
        sl_page *pg = &z->pages[p];
        uint32_t f = load32(&pg->flags);
        unsigned o = pg->order;
        if ((f != SL_PG_FREE && f != SL_PG_HEAD) || o > SL_PAGE_MAX_ORDER || p + (1u << o) > z->npages) {
            rc = SL_ECORRUPT;
            break;
        }
        for (uint32_t i = 1; i < (1u << o); i++) {
            uint32_t tf = load32(&z->pages[p + i].flags);
            if (f == SL_PG_HEAD ? (tf != SL_PG_TAIL || load32(&z->pages[p + i].head) != p) : tf != 0)
                rc = SL_ECORRUPT;
        }
        if (f == SL_PG_FREE && o < SL_PAGE_MAX_ORDER) {
            uint32_t buddy = p ^ (1u << o);
            if (buddy < z->npages && load32(&z->pages[buddy].flags) == SL_PG_FREE && z->pages[buddy].order == o)
                rc = SL_ECORRUPT; /* two free buddies left unmerged */
        }
        p += 1u << o;
    }
    if (rc == SL_OK && free_pages != z->stats.pages_free)
        rc = SL_ECORRUPT;
    for (unsigned o = 0; o < SL_PAGE_NR_ORDERS && rc == SL_OK; o++)
        if (blocks[o] != z->stats.free_blocks[o])
            rc = SL_ECORRUPT;
    sl_spin_unlock(&z->lock);
    return rc;
}
