/*
 * fuzz_slab.c - libFuzzer target for the SLAB model.
 *
 * The first byte picks the kernel version (one of 4.10, 5.3, 5.4, 6.0, 6.1,
 * 6.7), init_on_free (from 5.3) and the rules.  Its low bit 0: the rest is
 * a --caches text or (next bit) a /proc/slabinfo file; every parsed cache
 * gets slab-types' prediction, whose geometry must add up and whose JSON
 * must be produced.  Low bit 1: the rest is a program of operations on a
 * 3-CPU SLAB world: kmalloc (kmalloc_large above the kernel's largest
 * cache), kfree, cache create/alloc/free, double, misaligned and foreign
 * frees (each must be refused with its error code), drains, reaps at an
 * advancing clock, shrinks and snapshots, with sl_slab_validate() every few
 * steps and at the end.  Any broken expectation traps.
 */
#include "../src/slab/slab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                                       \
    do {                                                                                                               \
        if (!(x))                                                                                                      \
            __builtin_trap();                                                                                          \
    } while (0)

enum { NCPU = 3, MAXH = 512, MAXC = 3 };

typedef struct held {
    unsigned char *p;
    int cache; /* -1: kmalloc */
    uint32_t size;
} held;

static void fuzz_parse(const sl_slab_variant *v, bool slabinfo, const uint8_t *data, size_t size)
{
    sl_slab_spec_list l = {0};
    char err[128];
    int rc = slabinfo ? sl_slab_slabinfo_parse((const char *)data, size, &l, err, sizeof err)
                      : sl_slab_caches_parse((const char *)data, size, &l, err, sizeof err);
    CHECK(rc == SL_OK || (rc == SL_EINVAL && !strncmp(err, "line ", 5)));
    sl_slab_types t;
    if (rc == SL_OK && sl_slab_types_compute(&l, v, 1 + size % 8, &t, err, sizeof err) == SL_OK) {
        for (unsigned r = 0; r < 2; r++)
            for (unsigned i = 0; i < l.n; i++) {
                const sl_slab_geometry *g = &t.g[r][i];
                bool on_slab = g->mgmt == SL_SLAB_NORMAL || g->mgmt == SL_SLAB_NORMAL_LEFTOVER;
                CHECK((size_t)g->num * g->size + (on_slab ? g->num : 0) + g->left == SL_PAGE_SIZE << g->order);
                CHECK(r == 1 || g->mgmt != SL_SLAB_OBJFREELIST);
                CHECK(!v->init_on_free || g->mgmt != SL_SLAB_OBJFREELIST);
            }
        CHECK(t.compared == (l.reported ? l.n : 0));
        char *json = sl_slab_types_json(&l, &t, "fuzz", 3);
        CHECK(json && json[0] == '{');
        free(json);
        sl_slab_types_free(&t);
    }
    sl_slab_spec_list_free(&l);
}

static void validate(sl_slab *sl) { CHECK(sl_slab_validate(sl, NULL, 0) == SL_OK); }

/* The snapshot's size query and its write agree, and a short buffer is refused. */
static void snapshot(sl_slab *sl)
{
    long need = sl_slab_snapshot(sl, NULL, 0);
    CHECK(need < 0);
    unsigned char *b = malloc((size_t)-need);
    CHECK(b);
    CHECK(sl_slab_snapshot(sl, b, (size_t)-need - 4) == need);
    CHECK(sl_slab_snapshot(sl, b, (size_t)-need) == -need);
    uint32_t total;
    memcpy(&total, b + 8, 4);
    CHECK(total == (uint32_t)-need);
    free(b);
}

static void fuzz_ops(const sl_slab_variant *v, const uint8_t *data, size_t size)
{
    sl_slab *sl;
    sl_slab_config cfg = {.ncpus = NCPU, .arena_bytes = (size_t)8 << 20, .variant = *v};
    CHECK(sl_slab_create(&cfg, &sl) == SL_OK);
    uint64_t now = 0;
    static held h[MAXH];
    unsigned nh = 0;
    sl_slab_cache *caches[MAXC];
    uint32_t csize[MAXC];
    unsigned nc = 0;
    size_t i = 0;
    unsigned step = 0;
    while (i + 3 <= size) {
        unsigned cpu = data[i] % NCPU;
        unsigned op = data[i] / NCPU % 10;
        uint32_t arg = (uint32_t)data[i + 1] | (uint32_t)data[i + 2] << 8;
        i += 3;
        switch (op) {
        case 0:
        case 1: { /* kmalloc: mostly small, sometimes up to 64 KiB (kmalloc_large from 6.1) */
            uint32_t sz = op ? arg % 700 : arg;
            void *p = sl_slab_kmalloc(sl, cpu, sz); /* NULL for 0, or when the arena is full */
            if (p && nh < MAXH) {
                memset(p, 0xab, sz);
                h[nh++] = (held){p, -1, sz};
            } else if (p) {
                CHECK(sl_slab_kfree(sl, cpu, p) == SL_OK);
            }
            break;
        }
        case 2: { /* free a held object, on any CPU */
            if (!nh)
                break;
            unsigned k = arg % nh;
            int rc =
                h[k].cache < 0 ? sl_slab_kfree(sl, cpu, h[k].p) : sl_slab_cache_free(caches[h[k].cache], cpu, h[k].p);
            CHECK(rc == SL_OK);
            if (arg & 0x8000) { /* then again: a kmalloc_large block's pages are free, so a foreign pointer */
                bool large = h[k].cache < 0 && !sl_slab_kmalloc_cache(sl, h[k].size);
                CHECK(sl_slab_kfree(sl, (cpu + 1) % NCPU, h[k].p) == (large ? SL_EFOREIGN : SL_EDOUBLEFREE));
            }
            h[k] = h[--nh];
            break;
        }
        case 3: { /* misaligned and foreign frees change nothing */
            if (nh) {
                held *x = &h[arg % nh];
                /* bytes of the object the caller may touch: no other object starts inside */
                uint32_t bufsz = x->cache < 0 ? x->size : csize[x->cache];
                if (bufsz > 1)
                    CHECK(sl_slab_kfree(sl, cpu, x->p + 1 + arg % (bufsz - 1)) == SL_EMISALIGNED);
                unsigned other = x->cache < 0 ? 0 : ((unsigned)x->cache + 1) % nc;
                if (x->cache >= 0 && other != (unsigned)x->cache)
                    CHECK(sl_slab_cache_free(caches[other], cpu, x->p) == SL_EFOREIGN);
            }
            int local = 0;
            CHECK(sl_slab_kfree(sl, cpu, &local) == SL_EFOREIGN);
            break;
        }
        case 4: /* create a cache */
            if (nc < MAXC) {
                sl_slab_spec spec = {.object_size = 1 + arg % 5000,
                                     .align = (arg >> 13) ? 1u << (arg >> 13) : 0,
                                     .flags = data[i - 3] & SL_SLAB_FLAGS_ALL};
                snprintf(spec.name, sizeof spec.name, "fuzz-%u", nc);
                CHECK(sl_slab_cache_create(sl, &spec, &caches[nc]) == SL_OK);
                sl_slab_cache_info ci;
                sl_slab_cache_info_get(caches[nc], &ci);
                csize[nc++] = ci.g.size;
            }
            break;
        case 5:
        case 6: /* cache alloc */
            if (nc) {
                unsigned k = arg % nc;
                unsigned char *p = sl_slab_cache_alloc(caches[k], cpu);
                if (p && nh < MAXH) {
                    memset(p, 0xcd, csize[k]);
                    h[nh++] = (held){p, (int)k, csize[k]};
                } else if (p) {
                    CHECK(sl_slab_cache_free(caches[k], cpu, p) == SL_OK);
                }
            }
            break;
        case 7:
            if (arg & 1) {
                now += arg >> 4; /* up to 4 s a step: the node timer expires now and then */
                sl_slab_reap(sl, cpu, now);
            } else {
                sl_slab_drain_cpu(sl, cpu);
            }
            break;
        case 8:
            if (arg & 1)
                snapshot(sl);
            else
                sl_slab_shrink(sl);
            break;
        case 9:
            validate(sl);
            break;
        }
        if (++step % 16 == 0)
            validate(sl);
    }
    validate(sl);
    for (unsigned k = 0; k < nh; k++)
        CHECK(sl_slab_kfree(sl, k % NCPU, h[k].p) == SL_OK);
    sl_slab_shrink(sl);
    validate(sl);
    sl_page_stats ps;
    sl_page_stats_get(sl_slab_zone(sl), &ps);
    CHECK(ps.pages_free == ps.pages_total);
    sl_slab_destroy(sl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const unsigned kernels[6] = {SL_SLAB_KERNEL(4, 10), SL_SLAB_KERNEL(5, 3), SL_SLAB_KERNEL(5, 4),
                                        SL_SLAB_KERNEL(6, 0),  SL_SLAB_KERNEL(6, 1), SL_SLAB_KERNEL(6, 7)};
    sl_slab_variant v = {.rules = data[0] & 4 ? SL_SLAB_RULES_BEFORE : SL_SLAB_RULES_AFTER,
                         .kernel = kernels[(data[0] >> 3) % 6]};
    v.init_on_free = (data[0] & 0x80) && v.kernel >= SL_SLAB_KERNEL_INIT_ON_FREE;
    if (data[0] % 2 == 0)
        fuzz_parse(&v, data[0] & 2, data + 1, size - 1);
    else
        fuzz_ops(&v, data + 1, size - 1);
    return 0;
}
