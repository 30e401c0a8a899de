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
#include "fuzz_slub_ops.h"

#define ZONE_PAGES 256

typedef struct state {
    fz_slub f;
    void *freed[FZ_MAXH]; /* freed by us and not handed out since */
    unsigned nfreed;
    uint32_t scribbled[FZ_MAXH]; /* pfns of slabs with a write after free: they may be disabled */
    unsigned nscribbled;
} state;

/* True if obj's slab had a write after free (its frees may then be refused as SL_ECORRUPT). */
static bool maybe_disabled(const state *st, const void *obj)
{
    uint32_t pfn, idx;
    if (!sl_slub_object_index(st->f.s, obj, &pfn, &idx))
        return false;
    for (unsigned i = 0; i < st->nscribbled; i++)
        if (st->scribbled[i] == pfn)
            return true;
    return false;
}

/* An object handed out again is no longer one we freed. */
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
    if (st->nfreed < FZ_MAXH)
        st->freed[st->nfreed++] = p;
    else
        st->freed[p == st->freed[0] ? 1 : 0] = p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    state st;
    memset(&st, 0, sizeof st);
    fz_slub *f = &st.f;
    f->target = "fuzz_slub";
    f->osize = 8 + (uint32_t)data[0] * 4;
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
    f->zone = &zone;
    sl_slub_config cfg = {.object_size = f->osize,
                          .flags = flags,
                          .track = 1,
                          .fastpath = (uint8_t)((data[1] >> 3) & 3),
                          .bulk_free = (uint8_t)((data[1] >> 5) & 1),
                          .seed = data[1]};
    cfg.kernel.boot.min_order = (uint8_t)((data[2] >> 2) % 3);
    fz_require(f, sl_slub_cache_create(&zone, NULL, ncpus, &cfg, &f->s) == SL_OK, "create", 0);
    const sl_slub_geometry *g = sl_slub_cache_geometry(f->s);
    for (size_t i = 3; i + 3 <= size; i += 3) {
        uint8_t kind = data[i] % 14, arg = data[i + 1], idx = data[i + 2];
        unsigned cpu = arg % ncpus;
        int rc;
        switch (kind) {
        case 0:
        case 1: { /* alloc */
            void *p = fz_alloc(f, cpu);
            if (p)
                forget_freed(&st, p);
            break;
        }
        case 2:
        case 3: { /* free a held object, from any CPU */
            if (!f->nheld)
                break;
            void *p = fz_take_held(f, idx);
            bool disabled = maybe_disabled(&st, p);
            rc = sl_slub_free(f->s, cpu, p);
            fz_require(f, rc == SL_OK || (rc == SL_ECORRUPT && disabled), "free of a held object", rc);
            note_freed(&st, p);
            break;
        }
        case 4: { /* double free */
            if (!st.nfreed)
                break;
            /* SL_EFOREIGN when its slab was discarded meanwhile (the page is no slab now). */
            void *p = st.freed[idx % st.nfreed];
            bool disabled = maybe_disabled(&st, p);
            rc = sl_slub_free(f->s, cpu, p);
            fz_require(f, rc == SL_EDOUBLEFREE || rc == SL_EFOREIGN || (rc == SL_ECORRUPT && disabled),
                       "double free detected", rc);
            break;
        }
        case 5: { /* foreign or misaligned pointer */
            uint8_t local[16];
            void *p = f->nheld && (idx & 1) ? (uint8_t *)f->held[idx % f->nheld] + 1 + idx % 7 : (void *)local;
            rc = sl_slub_free(f->s, cpu, p);
            fz_require(f, rc == ((idx & 1) && f->nheld ? SL_EMISALIGNED : SL_EFOREIGN), "bad pointer detected", rc);
            break;
        }
        case 6: { /* write after free (inside the object; the free pointer lives after it) */
            if (!st.nfreed)
                break;
            unsigned k = idx % st.nfreed;
            uint32_t pfn, oi;
            if (!sl_slub_object_index(f->s, st.freed[k], &pfn, &oi) || st.nscribbled == FZ_MAXH)
                break; /* its slab is gone: the page may belong to anything now */
            ((uint8_t *)st.freed[k])[arg % f->osize] ^= 0x5a;
            st.freed[k] = st.freed[--st.nfreed];
            st.scribbled[st.nscribbled++] = pfn;
            break;
        }
        case 7: { /* overflow into the red zone, then free: refused and quarantined */
            if (!f->nheld)
                break;
            uint8_t *p = fz_take_held(f, idx);
            if (arg & 1)
                p[f->osize + arg % (g->inuse - f->osize)] ^= 0x11;
            else
                p[-1 - (int)(arg % g->red_left_pad)] ^= 0x11;
            bool disabled = maybe_disabled(&st, p);
            rc = sl_slub_free(f->s, cpu, p);
            fz_require(f, rc == SL_EREDZONE || (rc == SL_ECORRUPT && disabled), "red zone overwrite detected", rc);
            rc = sl_slub_free(f->s, cpu, p);
            fz_require(f, rc == SL_EDOUBLEFREE || (rc == SL_ECORRUPT && disabled), "quarantined object cannot be freed",
                       rc);
            break;
        }
        case 8: { /* bulk alloc, then bulk free of a mix */
            void *p[64];
            unsigned got = fz_alloc_bulk(f, cpu, 1 + idx % 64, p);
            for (unsigned j = 0; j < got; j++)
                forget_freed(&st, p[j]);
            unsigned m = f->nheld < (unsigned)(arg % 64) ? f->nheld : (unsigned)(arg % 64);
            bool disabled = false;
            for (unsigned j = 0; j < m; j++) {
                p[j] = f->held[--f->nheld];
                disabled |= maybe_disabled(&st, p[j]);
                note_freed(&st, p[j]);
            }
            rc = sl_slub_free_bulk(f->s, cpu, m, p, NULL);
            fz_require(f, rc >= 0 || (rc == SL_ECORRUPT && disabled), "bulk free of held objects", rc);
            break;
        }
        case 9:
            fz_require(f, sl_slub_flush_cpu(f->s, cpu) == SL_OK, "flush", 0);
            break;
        case 10: /* sysfs min_partial */
            fz_require(f, sl_slub_set_min_partial(f->s, arg % 12) == SL_OK, "min_partial", 0);
            break;
        case 11: /* sysfs cpu_partial: a debug cache has no CPU partial lists, so only 0 is taken */
            rc = sl_slub_set_cpu_partial(f->s, arg % 4 ? arg : 0);
            fz_require(f, rc == (arg % 4 ? SL_EINVAL : SL_OK), "cpu_partial of a debug cache", rc);
            break;
        case 12: { /* sysfs shrink */
            int remaining = -1;
            fz_require(f, sl_slub_shrink(f->s, &remaining) == SL_OK && (remaining == 0 || remaining == 1), "shrink", 0);
            break;
        }
        default:
            fz_page_pressure(f, arg, cpu);
        }
        fz_validate(f, "validate after every step");
    }
    for (unsigned i = 0; i < f->nheld; i++) {
        bool disabled = maybe_disabled(&st, f->held[i]);
        int rc = sl_slub_free(f->s, 0, f->held[i]);
        fz_require(f, rc == SL_OK || (rc == SL_ECORRUPT && disabled), "final free", rc);
    }
    fz_validate(f, "final validate");
    sl_slub_cache_destroy(f->s);
    fz_release_zone(f);
    return 0;
}
