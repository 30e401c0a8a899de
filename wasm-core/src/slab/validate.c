/*
 * validate.c - sl_slab_validate: rebuilds, from the slab lists, freelist
 * arrays and array caches, where every object is, and compares with the
 * counters, the management type's rules and (debug) the live bitmap;
 * kmalloc_large blocks are found by walking the page descriptors.
 *
 * Quiescent: it reads everything without locks.  It allocates two bitmaps
 * per page of the arena (objects free in their slab, objects in an
 * array_cache), indexed by the slab's head pfn.
 */
#include "slab_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct objmap {
    uint64_t free[4];   /* free in the slab (freelist positions active..num-1) */
    uint64_t cached[4]; /* in a CPU or shared array */
} objmap;

typedef struct vctx {
    sl_slab *sl;
    objmap *maps; /* by head pfn */
    char *why;
    size_t whylen;
    unsigned long live_expected;
} vctx;

static int fail(vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(vctx *v, const char *fmt, ...)
{
    if (v->why && v->whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v->why, v->whylen, fmt, ap);
        va_end(ap);
    }
    return SL_ECORRUPT;
}

static bool bit(const uint64_t *m, unsigned i) { return m[i >> 6] >> (i & 63) & 1; }
static void set(uint64_t *m, unsigned i) { m[i >> 6] |= 1ull << (i & 63); }

#if SL_DEBUG
static bool live(const sl_slab *sl, const void *obj)
{
    size_t g = sli_slab_granule(sl, obj);
    return sl->live[g >> 6] >> (g & 63) & 1;
}
#endif

static int check_slab(vctx *v, sl_slab_cache *c, sl_page *pg, unsigned which)
{
    sl_slab *sl = v->sl;
    slab_page *s = SLAB_OF(pg);
    uint32_t pfn = sl_page_pfn(&sl->zone, pg);
    unsigned char *addr = sl_page_address(&sl->zone, pg);
    size_t slab_bytes = SL_PAGE_SIZE << c->order;
    if (!(pg->flags & SL_PG_HEAD) || pg->order != c->order)
        return fail(v, "%s: slab %u is not a head page of order %u", c->name, pfn, c->order);
    if (s->cache != c || s->list != which)
        return fail(v, "%s: slab %u has cache/list %p/%u, expected list %u", c->name, pfn, (void *)s->cache, s->list,
                    which);
    bool ok = which == SLAB_LIST_FREE   ? s->active == 0
              : which == SLAB_LIST_FULL ? s->active == c->num
                                        : s->active > 0 && s->active < c->num;
    if (!ok)
        return fail(v, "%s: slab %u with %u of %u active is on list %u", c->name, pfn, s->active, c->num, which);
    size_t off = (size_t)(s->s_mem - addr);
    if (off % c->colour_off || off / c->colour_off >= (c->colour ? c->colour : 1))
        return fail(v, "%s: slab %u colour offset %zu is not one of its %u colours", c->name, pfn, off, c->colour);
    size_t end = off + (size_t)c->num * c->size;
    bool on_slab = c->mgmt == SL_SLAB_NORMAL || c->mgmt == SL_SLAB_NORMAL_LEFTOVER;
    if (end + (on_slab ? c->freelist_size : 0) > slab_bytes)
        return fail(v, "%s: slab %u objects overrun the slab", c->name, pfn);

    /* Where the freelist array must be. */
    switch (c->mgmt) {
    case SL_SLAB_OBJFREELIST:
        if (s->active == c->num) {
            if (s->freelist)
                return fail(v, "%s: full OBJFREELIST slab %u still has a freelist", c->name, pfn);
        } else {
            unsigned home = ((freelist_idx_t *)s->freelist)[c->num - 1];
            if (!s->freelist || s->freelist != sli_slab_index_to_obj(c, s, home))
                return fail(v, "%s: OBJFREELIST slab %u array is not in the free object at its last position", c->name,
                            pfn);
        }
        break;
    case SL_SLAB_NORMAL:
    case SL_SLAB_NORMAL_LEFTOVER:
        if (s->freelist != addr + slab_bytes - c->freelist_size)
            return fail(v, "%s: slab %u freelist is not at the slab end", c->name, pfn);
        break;
    case SL_SLAB_OFF: {
        sl_page *fp = sl_page_from_addr(&sl->zone, s->freelist);
        if (!fp || SLAB_OF(fp)->cache != c->freelist_cache)
            return fail(v, "%s: off-slab freelist of slab %u is not a %s object", c->name, pfn,
                        c->freelist_cache->name);
#if SL_DEBUG
        if (!live(sl, s->freelist))
            return fail(v, "%s: off-slab freelist of slab %u is not allocated", c->name, pfn);
#endif
        break;
    }
    }

    objmap *m = &v->maps[pfn];
    if (s->freelist)
        for (unsigned pos = s->active; pos < c->num; pos++) {
            unsigned idx = ((freelist_idx_t *)s->freelist)[pos];
            if (idx >= c->num || bit(m->free, idx))
                return fail(v, "%s: slab %u freelist position %u holds bad or repeated index %u", c->name, pfn, pos,
                            idx);
            set(m->free, idx);
        }
    return SL_OK;
}

static int check_list(vctx *v, sl_slab_cache *c, slab_list *l, unsigned which, unsigned long *nslabs,
                      unsigned long *nfree_objs)
{
    unsigned long n = 0;
    sl_page *prev = NULL;
    for (sl_page *pg = l->first; pg; pg = SLAB_OF(pg)->next) {
        if (++n > v->sl->zone.npages || SLAB_OF(pg)->prev != prev)
            return fail(v, "%s: list %u is badly linked", c->name, which);
        int rc = check_slab(v, c, pg, which);
        if (rc != SL_OK)
            return rc;
        *nfree_objs += c->num - SLAB_OF(pg)->active;
        prev = pg;
    }
    if (l->last != prev || l->n != n)
        return fail(v, "%s: list %u counts %lu slabs, walk found %lu", c->name, which, l->n, n);
    *nslabs += n;
    return SL_OK;
}

static int check_array(vctx *v, sl_slab_cache *c, const sl_slab_array *ac, const char *what)
{
    if (ac->avail > ac->limit)
        return fail(v, "%s: %s array holds %u > limit %u", c->name, what, ac->avail, ac->limit);
    for (unsigned i = 0; i < ac->avail; i++) {
        void *obj = ac->entry[i];
        sl_page *pg = sl_page_from_addr(&v->sl->zone, obj);
        if (!pg || SLAB_OF(pg)->cache != c || SLAB_OF(pg)->list == SLAB_LIST_NONE)
            return fail(v, "%s: %s array entry %u is not an object of a listed slab", c->name, what, i);
        slab_page *s = SLAB_OF(pg);
        size_t off = (size_t)((unsigned char *)obj - s->s_mem);
        if ((unsigned char *)obj < s->s_mem || off % c->size || off / c->size >= c->num)
            return fail(v, "%s: %s array entry %u is not at an object start", c->name, what, i);
        unsigned idx = (unsigned)(off / c->size);
        objmap *m = &v->maps[sl_page_pfn(&v->sl->zone, pg)];
        if (bit(m->free, idx))
            return fail(v, "%s: %s array entry %u is also free in its slab", c->name, what, i);
        if (bit(m->cached, idx))
            return fail(v, "%s: object %u of a slab is in two array slots", c->name, idx);
        set(m->cached, idx);
#if SL_DEBUG
        if (live(v->sl, obj))
            return fail(v, "%s: %s array entry %u is marked as held by a user", c->name, what, i);
#endif
    }
    return SL_OK;
}

/* Every object of every listed slab: free, cached, or held (and then live). */
static int check_held(vctx *v, sl_slab_cache *c, slab_list *l, unsigned long *held)
{
    for (sl_page *pg = l->first; pg; pg = SLAB_OF(pg)->next) {
        slab_page *s = SLAB_OF(pg);
        objmap *m = &v->maps[sl_page_pfn(&v->sl->zone, pg)];
        unsigned nfree = 0, ncached = 0;
        for (unsigned i = 0; i < c->num; i++) {
            nfree += bit(m->free, i);
            ncached += bit(m->cached, i);
#if SL_DEBUG
            bool is_held = !bit(m->free, i) && !bit(m->cached, i);
            if (live(v->sl, sli_slab_index_to_obj(c, s, i)) != is_held)
                return fail(v, "%s: object %u of slab %u is %s but its live bit says otherwise", c->name, i,
                            sl_page_pfn(&v->sl->zone, pg), is_held ? "held" : "free or cached");
#endif
        }
        if (nfree != c->num - s->active)
            return fail(v, "%s: slab has %u free objects but active = %u", c->name, nfree, s->active);
        *held += c->num - nfree - ncached;
    }
    return SL_OK;
}

static int check_cache(vctx *v, sl_slab_cache *c, unsigned long *pages)
{
    sl_slab_node *n = &c->node;
    unsigned long nslabs = 0, nfree_objs = 0;
    int rc = check_list(v, c, &n->free, SLAB_LIST_FREE, &nslabs, &nfree_objs);
    if (rc == SL_OK)
        rc = check_list(v, c, &n->partial, SLAB_LIST_PARTIAL, &nslabs, &nfree_objs);
    if (rc == SL_OK)
        rc = check_list(v, c, &n->full, SLAB_LIST_FULL, &nslabs, &nfree_objs);
    if (rc != SL_OK)
        return rc;
    if (nslabs != n->total_slabs || n->free.n != n->free_slabs || nfree_objs != n->free_objects)
        return fail(v, "%s: counters total/free slabs %lu/%lu free objects %lu, walk found %lu/%lu/%lu", c->name,
                    n->total_slabs, n->free_slabs, n->free_objects, nslabs, n->free.n, nfree_objs);
    *pages += nslabs << c->order;
    char what[32];
    for (unsigned cpu = 0; cpu < v->sl->ncpus; cpu++) {
        snprintf(what, sizeof what, "cpu %u", cpu);
        if ((rc = check_array(v, c, c->cpu[cpu], what)) != SL_OK)
            return rc;
    }
    if (n->shared && (rc = check_array(v, c, n->shared, "shared")) != SL_OK)
        return rc;
    unsigned long held = 0;
    if ((rc = check_held(v, c, &n->partial, &held)) != SL_OK || (rc = check_held(v, c, &n->full, &held)) != SL_OK ||
        (rc = check_held(v, c, &n->free, &held)) != SL_OK)
        return rc;
    v->live_expected += held;
    return SL_OK;
}

int sl_slab_validate(sl_slab *sl, char *why, size_t whylen)
{
    vctx v = {.sl = sl, .why = why, .whylen = whylen};
    if (why && whylen)
        why[0] = 0;
    v.maps = calloc(sl->zone.npages, sizeof *v.maps);
    if (!v.maps)
        return SL_ENOMEM;
    int rc = SL_OK;
    unsigned long pages = 0;
    for (unsigned id = 0; id < sl->ncaches && rc == SL_OK; id++)
        if (sl->caches[id])
            rc = check_cache(&v, sl->caches[id], &pages);
    free(v.maps);
    if (rc != SL_OK)
        return rc;
    /* kmalloc_large blocks: head pages of no cache marked SLAB_LIST_LARGE, each one live object. */
    for (uint32_t pfn = 0; pfn < sl->zone.npages; pfn++) {
        sl_page *pg = &sl->zone.pages[pfn];
        if (pg->flags != SL_PG_HEAD || SLAB_OF(pg)->cache || SLAB_OF(pg)->list != SLAB_LIST_LARGE)
            continue;
        if (sl->kt.nkmalloc == SL_SLAB_NKMALLOC)
            return fail(&v, "page %u is a kmalloc_large block, but this kernel has kmalloc caches up to 4 MiB", pfn);
#if SL_DEBUG
        if (!live(sl, sl_page_address(&sl->zone, pg)))
            return fail(&v, "kmalloc_large block at page %u is not marked live", pfn);
#endif
        pages += 1ul << pg->order;
        v.live_expected++;
    }
    sl_page_stats ps;
    sl_page_stats_get(&sl->zone, &ps);
    if (pages != ps.pages_total - ps.pages_free)
        return fail(&v, "slabs and kmalloc_large blocks hold %lu pages, the page allocator has %llu in use", pages,
                    (unsigned long long)(ps.pages_total - ps.pages_free));
#if SL_DEBUG
    size_t words = ((((size_t)sl->zone.npages << SL_PAGE_SHIFT) >> 4) + 63) / 64;
    unsigned long nlive = 0;
    for (size_t i = 0; i < words; i++)
        nlive += (unsigned long)__builtin_popcountll(sl->live[i]);
    if (nlive != v.live_expected)
        return fail(&v, "%lu objects marked live, %lu held by users", nlive, v.live_expected);
#endif
    if (sl_page_validate(&sl->zone) != SL_OK)
        return fail(&v, "the page allocator is inconsistent");
    return SL_OK;
}
