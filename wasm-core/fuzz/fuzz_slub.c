/*
 * fuzz_slub.c - libFuzzer target: random operation sequences against a SLUB
 * cache with every debug check on (double-free detection, poison, red
 * zones, optionally hardened and randomised freelists), including the bad
 * inputs those checks exist for: double frees, foreign and misaligned
 * pointers, writes after free, overflows into the red zone; and the
 * tunables (min_partial, cpu_partial, shrink), boot parameters
 * (slub_min_order) and page-allocator pressure that forces the order
 * fallback.  Each operation must return exactly the code the model
 * promises, and validate() must pass after every step.  A discrepancy
 * aborts (libFuzzer reports it).
 *
 * A write after free disables its slab when a later allocation takes the
 * object (6.12+): its other objects can then no longer be freed
 * (SL_ECORRUPT), which the target expects exactly for the slabs it wrote
 * into.
 *
 * Input: byte 0 object size, byte 1 options, byte 2 CPUs and slub_min_order;
 * then 3-byte ops {kind, cpu/arg, index}.
 */
#include "../src/slub/slub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXH 512
#define ZONE_PAGES 256

static void require(bool ok, const char *what, int got)
{
    if (!ok) {
        fprintf(stderr, "fuzz_slub: %s (got %d: %s)\n", what, got, sl_strerror(got));
        abort();
    }
}

typedef struct state {
    sl_slub_cache *s;
    uint32_t osize;
    void *held[MAXH];
    unsigned nheld;
    void *freed[MAXH]; /* freed by us and not handed out since */
    unsigned nfreed;
    uint32_t scribbled[MAXH]; /* pfns of slabs with a write after free: they may be disabled */
    unsigned nscribbled;
    sl_page *pinned[ZONE_PAGES]; /* pages taken from the zone to make it run short */
    unsigned npinned;
} state;

/* True if obj's slab had a write after free (its frees may then be refused as SL_ECORRUPT). */
static bool maybe_disabled(const state *st, const void *obj)
{
    uint32_t pfn, idx;
    if (!sl_slub_object_index(st->s, obj, &pfn, &idx))
        return false;
    for (unsigned i = 0; i < st->nscribbled; i++)
        if (st->scribbled[i] == pfn)
            return true;
    return false;
}

static void forget_freed(state *st, void *p)
{
    for (unsigned i = 0; i < st->nfreed; i++)
        if (st->freed[i] == p) {
            st->freed[i] = st->freed[--st->nfreed];
            return;
        }
}

static void note_freed(state *st, void *p)
{
    if (st->nfreed < MAXH)
        st->freed[st->nfreed++] = p;
    else
        st->freed[p == st->freed[0] ? 1 : 0] = p;
}

static void got_object(state *st, void *p)
{
    for (unsigned i = 0; i < st->nheld; i++)
        require(st->held[i] != p, "an object was handed out twice", 0);
    forget_freed(st, p);
    memset(p, 0x42, st->osize);
    st->held[st->nheld++] = p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    state st;
    memset(&st, 0, sizeof st);
    st.osize = 8 + (uint32_t)data[0] * 4;
    uint32_t flags = SL_SLUB_CONSISTENCY_CHECKS | SL_SLUB_POISON | SL_SLUB_RED_ZONE;
    if (data[1] & 1)
        flags |= SL_SLUB_FREELIST_HARDENED;
    if (data[1] & 2)
        flags |= SL_SLUB_FREELIST_RANDOM;
    if (data[1] & 4)
        flags |= SL_SLUB_HWCACHE_ALIGN;
    unsigned ncpus = 1 + data[2] % 4;
    sl_page_zone zone;
    if (sl_page_zone_init(&zone, ZONE_PAGES * SL_PAGE_SIZE, NULL) != SL_OK)
        return 0;
    sl_slub_config cfg = {.object_size = st.osize, .flags = flags, .track = 1,
                          .fastpath = (uint8_t)((data[1] >> 3) & 3), .bulk_free = (uint8_t)((data[1] >> 5) & 1),
                          .seed = data[1]};
    cfg.kernel.boot.min_order = (uint8_t)((data[2] >> 2) % 3);
    require(sl_slub_cache_create(&zone, NULL, ncpus, &cfg, &st.s) == SL_OK, "create", 0);
    const sl_slub_geometry *g = sl_slub_cache_geometry(st.s);
    char msg[256];
    for (size_t i = 3; i + 3 <= size; i += 3) {
        uint8_t kind = data[i] % 14, arg = data[i + 1], idx = data[i + 2];
        unsigned cpu = arg % ncpus;
        int rc;
        switch (kind) {
        case 0:
        case 1: { /* alloc */
            if (st.nheld == MAXH)
                break;
            void *p;
            rc = sl_slub_alloc(st.s, cpu, &p);
            require(rc == SL_OK || rc == SL_ENOMEM, "alloc", rc);
            if (rc == SL_OK)
                got_object(&st, p);
            break;
        }
        case 2:
        case 3: { /* free a held object, from any CPU */
            if (!st.nheld)
                break;
            unsigned k = idx % st.nheld;
            void *p = st.held[k];
            st.held[k] = st.held[--st.nheld];
            bool disabled = maybe_disabled(&st, p);
            rc = sl_slub_free(st.s, cpu, p);
            require(rc == SL_OK || (rc == SL_ECORRUPT && disabled), "free of a held object", rc);
            note_freed(&st, p);
            break;
        }
        case 4: { /* double free */
            if (!st.nfreed)
                break;
            /* SL_EFOREIGN when its slab was discarded meanwhile (the page is no slab now). */
            void *p = st.freed[idx % st.nfreed];
            bool disabled = maybe_disabled(&st, p);
            rc = sl_slub_free(st.s, cpu, p);
            require(rc == SL_EDOUBLEFREE || rc == SL_EFOREIGN || (rc == SL_ECORRUPT && disabled),
                    "double free detected", rc);
            break;
        }
        case 5: { /* foreign or misaligned pointer */
            uint8_t local[16];
            void *p = st.nheld && (idx & 1) ? (uint8_t *)st.held[idx % st.nheld] + 1 + idx % 7 : (void *)local;
            rc = sl_slub_free(st.s, cpu, p);
            require(rc == ((idx & 1) && st.nheld ? SL_EMISALIGNED : SL_EFOREIGN), "bad pointer detected", rc);
            break;
        }
        case 6: { /* write after free (inside the object; the free pointer lives after it) */
            if (!st.nfreed)
                break;
            unsigned k = idx % st.nfreed;
            uint32_t pfn, oi;
            if (!sl_slub_object_index(st.s, st.freed[k], &pfn, &oi) || st.nscribbled == MAXH)
                break; /* its slab is gone: the page may belong to anything now */
            ((uint8_t *)st.freed[k])[arg % st.osize] ^= 0x5a;
            st.freed[k] = st.freed[--st.nfreed];
            st.scribbled[st.nscribbled++] = pfn;
            break;
        }
        case 7: { /* overflow into the red zone, then free: refused and quarantined */
            if (!st.nheld)
                break;
            unsigned k = idx % st.nheld;
            uint8_t *p = st.held[k];
            if (arg & 1)
                p[st.osize + arg % (g->inuse - st.osize)] ^= 0x11;
            else
                p[-1 - (int)(arg % g->red_left_pad)] ^= 0x11;
            st.held[k] = st.held[--st.nheld];
            bool disabled = maybe_disabled(&st, p);
            rc = sl_slub_free(st.s, cpu, p);
            require(rc == SL_EREDZONE || (rc == SL_ECORRUPT && disabled), "red zone overwrite detected", rc);
            rc = sl_slub_free(st.s, cpu, p);
            require(rc == SL_EDOUBLEFREE || (rc == SL_ECORRUPT && disabled), "quarantined object cannot be freed",
                    rc);
            break;
        }
        case 8: { /* bulk alloc, then bulk free of a mix */
            void *p[64];
            unsigned n = 1 + idx % 64;
            if (st.nheld + n > MAXH)
                break;
            rc = sl_slub_alloc_bulk(st.s, cpu, n, p);
            require(rc == (int)n || rc == 0, "bulk alloc is all or nothing", rc);
            for (int j = 0; j < rc; j++)
                got_object(&st, p[j]);
            unsigned m = st.nheld < (unsigned)(arg % 64) ? st.nheld : (unsigned)(arg % 64);
            bool disabled = false;
            for (unsigned j = 0; j < m; j++) {
                p[j] = st.held[--st.nheld];
                disabled |= maybe_disabled(&st, p[j]);
                note_freed(&st, p[j]);
            }
            rc = sl_slub_free_bulk(st.s, cpu, m, p, NULL);
            require(rc >= 0 || (rc == SL_ECORRUPT && disabled), "bulk free of held objects", rc);
            break;
        }
        case 9:
            require(sl_slub_flush_cpu(st.s, cpu) == SL_OK, "flush", 0);
            break;
        case 10: /* sysfs min_partial */
            require(sl_slub_set_min_partial(st.s, arg % 12) == SL_OK, "min_partial", 0);
            break;
        case 11: /* sysfs cpu_partial: a debug cache has no CPU partial lists, so only 0 is taken */
            rc = sl_slub_set_cpu_partial(st.s, arg % 4 ? arg : 0);
            require(rc == (arg % 4 ? SL_EINVAL : SL_OK), "cpu_partial of a debug cache", rc);
            break;
        case 12: { /* sysfs shrink */
            int remaining = -1;
            require(sl_slub_shrink(st.s, &remaining) == SL_OK && (remaining == 0 || remaining == 1), "shrink", 0);
            break;
        }
        default: /* page pressure: take an order-0 page from the zone, or give one back */
            if (arg & 1 && st.npinned < ZONE_PAGES) {
                sl_page *pg = sl_page_alloc(&zone, 0, cpu);
                if (pg)
                    st.pinned[st.npinned++] = pg;
            } else if (st.npinned) {
                require(sl_page_free(&zone, st.pinned[--st.npinned], cpu) == SL_OK, "page free", 0);
            }
        }
        rc = sl_slub_validate(st.s, msg, sizeof msg);
        if (rc != SL_OK)
            fprintf(stderr, "validate: %s\n", msg);
        require(rc == SL_OK, "validate after every step", rc);
    }
    for (unsigned i = 0; i < st.nheld; i++) {
        bool disabled = maybe_disabled(&st, st.held[i]);
        int rc = sl_slub_free(st.s, 0, st.held[i]);
        require(rc == SL_OK || (rc == SL_ECORRUPT && disabled), "final free", rc);
    }
    require(sl_slub_validate(st.s, msg, sizeof msg) == SL_OK, "final validate", 0);
    sl_slub_cache_destroy(st.s);
    while (st.npinned)
        sl_page_free(&zone, st.pinned[--st.npinned], 0);
    sl_page_zone_destroy(&zone);
    return 0;
}
