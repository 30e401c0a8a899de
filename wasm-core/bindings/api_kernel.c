/*
 * api_kernel.c - the bindings of the kernel view (`?mode=kernel`): a SLUB
 * world seeded from a real cache's slabs (sl_slub_seed, src/slub/seed.c), so
 * the lab steps the model on from a snapshot of a kernel.
 *
 * The description crosses the bridge as u32 words (web/kernel/seed.ts
 * writes them):
 *   nslabs, full_slabs, max_full,
 *   then per slab: list (SL_SLUB_SEED_*), cpu, objects, inuse, nfree,
 *   ncpu_free, the nfree indices of the slab's freelist in order, the
 *   ncpu_free indices of the CPU freelist in order,
 *   then, optionally (a cache with sheaves): nsheaves, and per sheaf place
 *   (SL_SLUB_SEED_MAIN .. _BARN_FULL), cpu, size, and size pairs (described
 *   slab, object index), bottom first.  Words ending after the slabs mean no
 *   sheaves, so a description written before sheaves were seeded still reads.
 */
#include "export.h"

#include "../src/slub/slub.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct sl_api_slub_world sl_api_slub_world;
/* api_slub.c's: the world's cache, and claiming a CPU as the calling thread. */
sl_slub_cache *sl_api_slub_world_cache(sl_api_slub_world *w);
int sl_api_slub_cpu_claim(sl_api_slub_world *w, uint32_t cpu);
void sl_api_slub_cpu_release(sl_api_slub_world *w, uint32_t cpu);

static char seed_msg[256];

/* The sentence naming why the last sl_api_kernel_seed failed ("" after a success). */
SL_EXPORT const char *sl_api_kernel_seed_message(void) { return seed_msg; }

/* Reads the sheaves after the slabs at p[at..n-1] into d (malloc'd in *out); false with seed_msg. */
static bool read_sheaves(const uint32_t *p, uint32_t n, uint32_t at, sl_slub_seed_desc *d, sl_slub_seed_sheaf **out)
{
    *out = NULL;
    if (at == n)
        return true;
    uint32_t ns = p[at++];
    if (ns > (n - at) / 3) {
        snprintf(seed_msg, sizeof seed_msg, "the description lists %u sheaves in its last %u words", ns, n - at);
        return false;
    }
    sl_slub_seed_sheaf *sv = calloc(ns ? ns : 1, sizeof *sv);
    if (!sv) {
        snprintf(seed_msg, sizeof seed_msg, "no memory for the description");
        return false;
    }
    for (uint32_t i = 0; i < ns; i++) {
        const uint32_t *h = p + at;
        if (n - at < 3 || h[0] > 255 || h[1] > 255) {
            snprintf(seed_msg, sizeof seed_msg, "sheaf %u: cut, or place or CPU out of range", i);
            free(sv);
            return false;
        }
        at += 3;
        if (h[2] > (n - at) / 2) {
            snprintf(seed_msg, sizeof seed_msg, "sheaf %u: its %u objects run past the description's end", i, h[2]);
            free(sv);
            return false;
        }
        sv[i] = (sl_slub_seed_sheaf){.place = (uint8_t)h[0], .cpu = (uint8_t)h[1], .size = h[2], .objects = p + at};
        at += 2 * h[2];
    }
    if (at != n) {
        snprintf(seed_msg, sizeof seed_msg, "%u words after the description's last sheaf", n - at);
        free(sv);
        return false;
    }
    d->nsheaves = ns;
    d->sheaves = sv;
    *out = sv;
    return true;
}

/*
 * Reads the words into d (slabs and sheaves malloc'd, indices pointing into
 * `words`); false with seed_msg for a cut list.
 */
static bool read_desc(const uint32_t *p, uint32_t n, sl_slub_seed_desc *d, sl_slub_seed_slab **slabs,
                      sl_slub_seed_sheaf **sheaves)
{
    *slabs = NULL;
    *sheaves = NULL;
    *d = (sl_slub_seed_desc){0};
    if (n < 3) {
        snprintf(seed_msg, sizeof seed_msg, "the description has %u words, fewer than its 3-word header", n);
        return false;
    }
    d->nslabs = p[0], d->full_slabs = p[1], d->max_full = p[2];
    if (d->nslabs > (n - 3) / 6) {
        snprintf(seed_msg, sizeof seed_msg, "the description lists %u slabs in %u words", d->nslabs, n);
        return false;
    }
    sl_slub_seed_slab *s = calloc(d->nslabs ? d->nslabs : 1, sizeof *s);
    if (!s) {
        snprintf(seed_msg, sizeof seed_msg, "no memory for the description");
        return false;
    }
    uint32_t at = 3;
    for (uint32_t i = 0; i < d->nslabs; i++) {
        if (n - at < 6) {
            snprintf(seed_msg, sizeof seed_msg, "the description ends inside slab %u's header", i);
            free(s);
            return false;
        }
        const uint32_t *h = p + at;
        if (h[0] > 255 || h[1] > 255) {
            snprintf(seed_msg, sizeof seed_msg, "slab %u: list %u or CPU %u out of range", i, h[0], h[1]);
            free(s);
            return false;
        }
        s[i] = (sl_slub_seed_slab){.list = (uint8_t)h[0],
                                   .cpu = (uint8_t)h[1],
                                   .objects = h[2],
                                   .inuse = h[3],
                                   .nfree = h[4],
                                   .ncpu_free = h[5]};
        at += 6;
        if (h[4] > n - at || h[5] > n - at - h[4]) {
            snprintf(seed_msg, sizeof seed_msg, "slab %u: its %u + %u free objects run past the description's end", i,
                     h[4], h[5]);
            free(s);
            return false;
        }
        s[i].free = p + at;
        s[i].cpu_free = p + at + h[4];
        at += h[4] + h[5];
    }
    d->slabs = s;
    *slabs = s;
    if (!read_sheaves(p, n, at, d, sheaves)) {
        free(s);
        *slabs = NULL;
        return false;
    }
    return true;
}

/*
 * Seeds the world's cache (just created, no slab yet) from the `n` words at
 * `words`, with every CPU claimed.  Returns the full slabs made (>= 0), or
 * SL_EINVAL (a bad or cut description), SL_EBUSY (the cache has slabs, or a
 * CPU is in use), SL_ENOMEM; sl_api_kernel_seed_message() says which.
 */
SL_EXPORT int sl_api_kernel_seed(sl_api_slub_world *w, const uint32_t *words, uint32_t n)
{
    seed_msg[0] = 0;
    sl_slub_cache *cache = sl_api_slub_world_cache(w);
    if (!cache || (!words && n)) {
        snprintf(seed_msg, sizeof seed_msg, "no world or no description");
        return SL_EINVAL;
    }
    sl_slub_seed_desc d;
    sl_slub_seed_slab *slabs;
    sl_slub_seed_sheaf *sheaves;
    if (!read_desc(words, n, &d, &slabs, &sheaves))
        return SL_EINVAL;
    unsigned ncpus = sl_slub_cache_ncpus(cache), k = 0;
    int rc = SL_OK;
    for (; k < ncpus && rc == SL_OK; k++)
        rc = sl_api_slub_cpu_claim(w, k);
    if (rc != SL_OK) {
        k--;
        snprintf(seed_msg, sizeof seed_msg, "CPU %u is in use by another thread: seeding needs every CPU quiet", k);
    } else {
        rc = sl_slub_seed(cache, &d, seed_msg, sizeof seed_msg);
    }
    while (k--)
        sl_api_slub_cpu_release(w, k);
    free(slabs);
    free(sheaves);
    return rc;
}
