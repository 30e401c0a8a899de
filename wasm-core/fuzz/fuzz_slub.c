/*
 * fuzz_slub.c - libFuzzer target: random operation sequences against a SLUB
 * cache with every debug check on (double-free detection, poison, red
 * zones, optionally hardened and randomised freelists), including the bad
 * inputs those checks exist for: double frees, foreign and misaligned
 * pointers, writes after free, overflows into the red zone.  Each operation
 * must return exactly the code the model promises, and validate() must pass
 * after every step.  A discrepancy aborts (libFuzzer reports it).
 *
 * Input: byte 0 object size, byte 1 options, byte 2 CPUs; then 3-byte ops
 * {kind, cpu/arg, index}.
 */
#include "../src/slub/slub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXH 512

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
    bool scribbled;   /* a write-after-free may make an allocation report SL_EPOISON */
} state;

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
    if (sl_page_zone_init(&zone, 256 * SL_PAGE_SIZE, NULL) != SL_OK)
        return 0;
    sl_slub_config cfg = {.object_size = st.osize, .flags = flags, .track = 1,
                          .fastpath = (uint8_t)((data[1] >> 3) % 3), .bulk_free = (uint8_t)((data[1] >> 5) & 1),
                          .seed = data[1]};
    require(sl_slub_cache_create(&zone, NULL, ncpus, &cfg, &st.s) == SL_OK, "create", 0);
    const sl_slub_geometry *g = sl_slub_cache_geometry(st.s);
    char msg[256];
    for (size_t i = 3; i + 3 <= size; i += 3) {
        uint8_t kind = data[i] % 10, arg = data[i + 1], idx = data[i + 2];
        unsigned cpu = arg % ncpus;
        int rc;
        switch (kind) {
        case 0:
        case 1: { /* alloc */
            if (st.nheld == MAXH)
                break;
            void *p;
            rc = sl_slub_alloc(st.s, cpu, &p);
            require(rc == SL_OK || rc == SL_ENOMEM || (rc == SL_EPOISON && st.scribbled), "alloc", rc);
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
            rc = sl_slub_free(st.s, cpu, p);
            require(rc == SL_OK, "free of a held object", rc);
            note_freed(&st, p);
            break;
        }
        case 4: { /* double free */
            if (!st.nfreed)
                break;
            /* SL_EFOREIGN when its slab was discarded meanwhile (the page is no slab now). */
            rc = sl_slub_free(st.s, cpu, st.freed[idx % st.nfreed]);
            require(rc == SL_EDOUBLEFREE || rc == SL_EFOREIGN, "double free detected", rc);
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
            ((uint8_t *)st.freed[k])[arg % st.osize] ^= 0x5a;
            st.freed[k] = st.freed[--st.nfreed];
            st.scribbled = true;
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
            rc = sl_slub_free(st.s, cpu, p);
            require(rc == SL_EREDZONE, "red zone overwrite detected", rc);
            rc = sl_slub_free(st.s, cpu, p);
            require(rc == SL_EDOUBLEFREE, "quarantined object cannot be freed", rc);
            break;
        }
        case 8: { /* bulk alloc, then bulk free of a mix */
            void *p[64];
            unsigned n = 1 + idx % 64;
            if (st.nheld + n > MAXH)
                break;
            rc = sl_slub_alloc_bulk(st.s, cpu, n, p);
            require(rc == (int)n || rc == 0, "bulk alloc is all or nothing", rc);
            if (rc == 0 && st.scribbled)
                break;
            for (int j = 0; j < rc; j++)
                got_object(&st, p[j]);
            unsigned m = st.nheld < (unsigned)(arg % 64) ? st.nheld : (unsigned)(arg % 64);
            for (unsigned j = 0; j < m; j++) {
                p[j] = st.held[--st.nheld];
                note_freed(&st, p[j]);
            }
            rc = sl_slub_free_bulk(st.s, cpu, m, p, NULL);
            require(rc >= 0, "bulk free of held objects", rc);
            break;
        }
        default:
            require(sl_slub_flush_cpu(st.s, cpu) == SL_OK, "flush", 0);
        }
        rc = sl_slub_validate(st.s, msg, sizeof msg);
        if (rc != SL_OK)
            fprintf(stderr, "validate: %s\n", msg);
        require(rc == SL_OK, "validate after every step", rc);
    }
    for (unsigned i = 0; i < st.nheld; i++)
        require(sl_slub_free(st.s, 0, st.held[i]) == SL_OK, "final free", 0);
    require(sl_slub_validate(st.s, msg, sizeof msg) == SL_OK, "final validate", 0);
    sl_slub_cache_destroy(st.s);
    sl_page_zone_destroy(&zone);
    return 0;
}
