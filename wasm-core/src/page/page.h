/*
 * page.h - the page allocator every slab model takes its slabs from.
 *
 * A binary buddy allocator over one arena, like the kernel's zone: orders 0
 * to SL_PAGE_MAX_ORDER (4 KiB to 4 MiB blocks), one free list per order, a
 * zone spin lock around every change to the free lists.  The arena is taken
 * once from sl_os_alloc_aligned, aligned to its largest block so that a block
 * of order k is naturally aligned (a slab of order k is, in the kernel too).
 *
 * Page metadata.  As in the kernel, every 4 KiB page has a descriptor, here
 * an sl_page in an array indexed by page frame number (pfn = page index in
 * the arena).  A block handed out by sl_page_alloc is a compound page: its
 * first page is the head (SL_PG_HEAD, order), the others are tails
 * (SL_PG_TAIL) that point at the head, so sl_page_from_addr() (the kernel's
 * virt_to_page + compound_head) finds the head from any byte of the block.
 *
 * Model-private area.  The kernel's struct slab overlays struct page; here a
 * model overlays its own slab struct on the head page's `priv` area: a fixed
 * SL_PAGE_PRIV_SIZE bytes, 16-byte aligned (room for a double word).  A model
 * checks its struct fits with SL_PAGE_PRIV_CHECK(type) and gets it with
 * SL_PAGE_PRIV(page, type).  The page allocator zeroes the area when it
 * hands out a block and never reads it.
 *
 * Locking.  The zone lock protects the free lists, the free-block fields of
 * free pages (buddy links, order) and the counters.  `flags` and `head` of a
 * page are written under the zone lock but read without it by
 * sl_page_from_addr (a remote free looking up its slab), so they are relaxed
 * atomics: a page a thread legitimately holds an object of cannot change
 * under it.  `priv` belongs to the model that allocated the block.
 */
#ifndef SL_PAGE_H
#define SL_PAGE_H

#include "../trace/trace.h"

#define SL_PAGE_MAX_ORDER 10
#define SL_PAGE_NR_ORDERS (SL_PAGE_MAX_ORDER + 1)
#define SL_PAGE_PRIV_SIZE 64
#define SL_PFN_NONE UINT32_MAX

/* sl_page.flags bits. */
enum {
    SL_PG_FREE = 1u << 0, /* first page of a free buddy block (order valid) */
    SL_PG_HEAD = 1u << 1, /* first page of an allocated block (order valid) */
    SL_PG_TAIL = 1u << 2, /* any other page of an allocated block (head valid) */
};

typedef struct sl_page {
    _Alignas(16) unsigned char priv[SL_PAGE_PRIV_SIZE]; /* the model's struct slab */
    uint32_t flags;                                     /* SL_PG_*, relaxed atomic */
    uint32_t head;                                      /* pfn of the head page (tails and heads), relaxed atomic */
    uint32_t buddy_next;                                /* free list links (free block heads only), zone lock */
    uint32_t buddy_prev;
    uint8_t order; /* block order (free and head pages) */
    uint8_t pad_[15];
} sl_page;

#define SL_PAGE_PRIV_CHECK(type)                                                                                       \
    _Static_assert(sizeof(type) <= SL_PAGE_PRIV_SIZE && _Alignof(type) <= 16,                                          \
                   #type " must fit the page's model-private area")
#define SL_PAGE_PRIV(pg, type) ((type *)(void *)(pg)->priv)

typedef struct sl_page_stats {
    uint64_t pages_total;                    /* pages in the arena */
    uint64_t pages_free;                     /* pages on the free lists */
    uint64_t alloc_calls;                    /* successful sl_page_alloc calls */
    uint64_t free_calls;                     /* sl_page_free calls */
    uint64_t alloc_failed;                   /* sl_page_alloc calls that found no block */
    uint64_t free_blocks[SL_PAGE_NR_ORDERS]; /* free blocks per order */
} sl_page_stats;

typedef struct sl_page_zone {
    sl_spinlock lock;
    unsigned char *base;                   /* arena start */
    uint32_t npages;                       /* pages in the arena */
    sl_page *pages;                        /* npages descriptors */
    uint32_t free_head[SL_PAGE_NR_ORDERS]; /* first free block of each order, or SL_PFN_NONE */
    sl_page_stats stats;                   /* zone lock */
    sl_trace *trace;                       /* may be NULL */
} sl_page_zone;

/*
 * Sets up a zone over a new arena of `bytes` (rounded down to whole pages,
 * at least one page).  Events go to `trace` (may be NULL).  Returns 0,
 * SL_EINVAL for a zero-page arena, or SL_ENOMEM.
 */
int sl_page_zone_init(sl_page_zone *z, size_t bytes, sl_trace *trace);
void sl_page_zone_destroy(sl_page_zone *z);
/*
 * Touches every page of the arena once, for benchmarks (the CLI's and the
 * Benchmarks page's): kernel memory is always resident, and a model whose
 * slabs write into their pages (OBJFREELIST_SLAB's array, SLUB's free
 * pointers) would otherwise pay, inside the timed loop, thousands of cycles
 * per first-touched page that the kernel never does.
 */
void sl_page_zone_prefault(sl_page_zone *z);

/*
 * Takes a block of 2^order pages for the acting `cpu` (for events) and
 * returns its head page with the priv area zeroed, or NULL when no block of
 * that order is free or order > SL_PAGE_MAX_ORDER.
 */
sl_page *sl_page_alloc(sl_page_zone *z, unsigned order, unsigned cpu);
/*
 * Returns a block to the free lists, merging buddies.  Returns 0, or
 * SL_EINVAL if `head` is not the head page of an allocated block.
 */
int sl_page_free(sl_page_zone *z, sl_page *head, unsigned cpu);

/*
 * pg - z->pages, computed as the exact division it is (as gcc compiles the
 * subtraction): the byte distance shifted right by sizeof(sl_page)'s power
 * of two, times the inverse of its odd factor modulo 2^32 (four Newton
 * steps from the factor itself, folded at compile time).  clang leaves the
 * subtraction an i32.div_s on wasm32, which V8 compiles to a multiply-high
 * sequence: one on every free's object check (its slab's base address).
 */
#define SLI_PAGE_TZ ((uint32_t)__builtin_ctz(sizeof(sl_page)))
#define SLI_PAGE_ODD ((uint32_t)(sizeof(sl_page) >> SLI_PAGE_TZ))
#define SLI_PAGE_NEWTON(x) ((x) * (2u - SLI_PAGE_ODD * (x)))
#define SLI_PAGE_ODD_INVERSE SLI_PAGE_NEWTON(SLI_PAGE_NEWTON(SLI_PAGE_NEWTON(SLI_PAGE_NEWTON(SLI_PAGE_ODD))))
_Static_assert(SLI_PAGE_ODD *SLI_PAGE_ODD_INVERSE == 1u, "the inverse of sizeof(sl_page)'s odd factor");
SL_INLINE uint32_t sl_page_pfn(const sl_page_zone *z, const sl_page *pg)
{
    return (uint32_t)(((uintptr_t)pg - (uintptr_t)z->pages) >> SLI_PAGE_TZ) * SLI_PAGE_ODD_INVERSE;
}
/* The page with this pfn, or NULL past the arena. */
SL_INLINE sl_page *sl_page_from_pfn(const sl_page_zone *z, uint32_t pfn)
{
    return pfn < z->npages ? &z->pages[pfn] : NULL;
}
SL_INLINE void *sl_page_address(const sl_page_zone *z, const sl_page *pg)
{
    return z->base + ((size_t)sl_page_pfn(z, pg) << SL_PAGE_SHIFT);
}
/*
 * The pfn of the head page of the allocated block holding `addr`, or
 * SL_PFN_NONE outside the arena or in a free block.  Inline: it is the
 * kernel's virt_to_page + compound_head, on every free's fast path (one
 * bounds check, one or two descriptor loads).
 */
SL_INLINE uint32_t sl_page_head_pfn(const sl_page_zone *z, const void *addr)
{
    uintptr_t idx = ((uintptr_t)addr - (uintptr_t)z->base) >> SL_PAGE_SHIFT; /* wraps for addr < base */
    if (idx >= z->npages)
        return SL_PFN_NONE;
    uint32_t pfn = (uint32_t)idx;
    uint32_t f = sl_load_relaxed(&z->pages[pfn].flags);
    if (SL_UNLIKELY(f != SL_PG_HEAD)) { /* a tail (or a free page, which is no block's) */
        if (!(f & SL_PG_TAIL))
            return SL_PFN_NONE;
        pfn = sl_load_relaxed(&z->pages[pfn].head);
        if (sl_load_relaxed(&z->pages[pfn].flags) != SL_PG_HEAD)
            return SL_PFN_NONE;
    }
    return pfn;
}
/* The head page of the allocated block holding `addr`; NULL outside the arena or in a free block. */
SL_INLINE sl_page *sl_page_from_addr(const sl_page_zone *z, const void *addr)
{
    uint32_t pfn = sl_page_head_pfn(z, addr);
    return pfn != SL_PFN_NONE ? &z->pages[pfn] : NULL;
}
/* Order of an allocated block's head page. */
SL_INLINE unsigned sl_page_order(const sl_page *head) { return head->order; }

/* Copies the counters (under the zone lock). */
void sl_page_stats_get(sl_page_zone *z, sl_page_stats *out);

/*
 * Checks the zone: free lists well linked with no cycles, each free block
 * aligned to its order and not overlapping another, no two free buddies left
 * unmerged, every page either in a free block or in an allocated compound
 * block with consistent head/tail marks, and the counters equal to what the
 * walk found.  Returns 0 or SL_ECORRUPT.  Takes the zone lock.
 */
int sl_page_validate(sl_page_zone *z);

#endif /* SL_PAGE_H */
