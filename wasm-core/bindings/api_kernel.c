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
 *   ncpu_free indices of the CPU freelist in order.
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

/* Reads the words into d (slabs malloc'd, indices pointing into `words`); false with seed_msg for a cut list. */
static bool read_desc(const uint32_t *p, uint32_t n, sl_slub_seed_desc *d, sl_slub_seed_slab **slabs)
{
    *slabs = NULL;
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
        s[i] = (sl_slub_seed_slab){.list = (uint8_t)h[0], .cpu = (uint8_t)h[1], .objects = h[2], .inuse = h[3],
                                   .nfree = h[4], .ncpu_free = h[5]};
        at += 6;
        if (h[4] > n - at || h[5] > n - at - h[4]) {
            snprintf(seed_msg, sizeof seed_msg, "slab %u: its %u + %u free objects run past the description's end",
                     i, h[4], h[5]);
            free(s);
            return false;
        }
        s[i].free = p + at;
        s[i].cpu_free = p + at + h[4];
        at += h[4] + h[5];
    }
    d->slabs = s;
    *slabs = s;
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
    if (!read_desc(words, n, &d, &slabs))
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
    return rc;
}
