/*
 * fuzz_slub_ops.h - what the SLUB fuzz targets (fuzz_slub.c, the debug
 * checks; fuzz_slub_eras.c, the kernel eras) share: the objects a run holds,
 * the operations both decode the same way (alloc, bulk alloc, page-allocator
 * pressure), and the checks after every step (an exact return code,
 * validate()).  A target keeps its own state beside an fz_slub and its own
 * operations in its switch.
 */
#ifndef SL_FUZZ_SLUB_OPS_H
#define SL_FUZZ_SLUB_OPS_H

#include "../src/slub/slub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FZ_MAXH 512
#define FZ_MAX_PINNED 512

typedef struct fz_slub {
    const char *target; /* the fuzz target's name, for its abort messages */
    sl_slub_cache *s;
    sl_page_zone *zone;
    uint32_t osize;
    void *held[FZ_MAXH]; /* allocated and not freed, each filled with 0x42 */
    unsigned nheld;
    sl_page *pinned[FZ_MAX_PINNED]; /* pages taken from the zone to make it run short */
    unsigned npinned;
} fz_slub;

static void fz_require(const fz_slub *f, bool ok, const char *what, int got)
{
    if (!ok) {
        fprintf(stderr, "%s: %s (got %d: %s)\n", f->target, what, got, sl_strerror(got));
        abort();
    }
}

/* A fresh object: never one already held; filled so that a write-after-free check sees it used. */
static void fz_got_object(fz_slub *f, void *p)
{
    for (unsigned i = 0; i < f->nheld; i++)
        fz_require(f, f->held[i] != p, "an object was handed out twice", 0);
    memset(p, 0x42, f->osize);
    f->held[f->nheld++] = p;
}

/* Held object idx (mod the count), no longer held. */
static void *fz_take_held(fz_slub *f, unsigned idx)
{
    unsigned k = idx % f->nheld;
    void *p = f->held[k];
    f->held[k] = f->held[--f->nheld];
    return p;
}

/* One sl_slub_alloc on cpu (SL_OK or SL_ENOMEM): the object, or NULL. */
static void *fz_alloc(fz_slub *f, unsigned cpu)
{
    if (f->nheld == FZ_MAXH)
        return NULL;
    void *p = NULL;
    int rc = sl_slub_alloc(f->s, cpu, &p);
    fz_require(f, rc == SL_OK || rc == SL_ENOMEM, "alloc", rc);
    if (rc != SL_OK)
        return NULL;
    fz_got_object(f, p);
    return p;
}

/* sl_slub_alloc_bulk of n objects into p, all or nothing; returns how many it took (0 when they would not fit). */
static unsigned fz_alloc_bulk(fz_slub *f, unsigned cpu, unsigned n, void **p)
{
    if (f->nheld + n > FZ_MAXH)
        return 0;
    int rc = sl_slub_alloc_bulk(f->s, cpu, n, p);
    fz_require(f, rc == (int)n || rc == 0, "bulk alloc is all or nothing", rc);
    for (int j = 0; j < rc; j++)
        fz_got_object(f, p[j]);
    return (unsigned)rc;
}

/* Page pressure: take an order-0 page from the zone (arg odd), or give one back. */
static void fz_page_pressure(fz_slub *f, uint8_t arg, unsigned cpu)
{
    if (arg & 1 && f->npinned < FZ_MAX_PINNED) {
        sl_page *pg = sl_page_alloc(f->zone, 0, cpu);
        if (pg)
            f->pinned[f->npinned++] = pg;
    } else if (f->npinned) {
        fz_require(f, sl_page_free(f->zone, f->pinned[--f->npinned], cpu) == SL_OK, "page free", 0);
    }
}

/* validate() after a step (`what` names it in the abort message). */
static void fz_validate(const fz_slub *f, const char *what)
{
    char msg[256];
    int rc = sl_slub_validate(f->s, msg, sizeof msg);
    if (rc != SL_OK)
        fprintf(stderr, "validate: %s\n", msg);
    fz_require(f, rc == SL_OK, what, rc);
}

/* Gives the pinned pages back and destroys the zone (after the cache). */
static void fz_release_zone(fz_slub *f)
{
    while (f->npinned)
        sl_page_free(f->zone, f->pinned[--f->npinned], 0);
    sl_page_zone_destroy(f->zone);
}

#endif
