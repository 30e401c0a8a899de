/*
 * fuzz_slub_eras.c - libFuzzer target: random operation sequences against a
 * SLUB cache of one kernel era (eras.h) - 4.3's irq-off bulk free, 4.4's
 * frozen CPU partial slabs, 5.15, 6.17's per-CPU slab, 6.18 with opted-in
 * sheaves, 7.0 (sheaves, no per-CPU slab), 7.0 created before
 * bootstrap_cache_sheaves - with tracking on and the debug checks off, as
 * a production cache runs: allocations, frees from any CPU, bulk
 * operations, kfree_rcu and grace periods, flushes, shrinks, the prefill
 * API, bootstrap, a sheaf budget and page-allocator pressure; plus the bad
 * inputs every free checks (foreign and misaligned pointers, strangers as
 * sheaf handles).  Each operation must return exactly the code the model
 * promises, and validate() (slabs, sheaves, barn, RCU waits) must pass after
 * every step.  A discrepancy aborts.
 *
 * Input: byte 0 era and object size, byte 1 options, byte 2 CPUs and sheaf
 * capacity; then 3-byte ops {kind, cpu/arg, index}.
 */
#include "../src/slub/slub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXH 512
#define ZONE_PAGES 512
#define SLOTS 4

static void require(bool ok, const char *what, int got)
{
    if (!ok) {
        fprintf(stderr, "fuzz_slub_eras: %s (got %d: %s)\n", what, got, sl_strerror(got));
        abort();
    }
}

typedef struct state {
    sl_slub_cache *s;
    uint32_t osize;
    void *held[MAXH];
    unsigned nheld;
    sl_slub_sheaf *out[SLOTS];
    sl_page *pinned[ZONE_PAGES];
    unsigned npinned;
} state;

static void got_object(state *st, void *p)
{
    for (unsigned i = 0; i < st->nheld; i++)
        require(st->held[i] != p, "an object was handed out twice", 0);
    memset(p, 0x42, st->osize);
    st->held[st->nheld++] = p;
}

static void *take_held(state *st, unsigned idx)
{
    unsigned k = idx % st->nheld;
    void *p = st->held[k];
    st->held[k] = st->held[--st->nheld];
    return p;
}

static const struct {
    sl_slub_kversion v;
    bool early;
} eras[] = {{{4, 3}, false}, {{4, 4}, false}, {{5, 15}, false}, {{6, 17}, false},
            {{6, 18}, false}, {{7, 0}, false}, {{7, 0}, true}, {{6, 7}, false}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    state st;
    memset(&st, 0, sizeof st);
    unsigned era = data[0] % 8;
    st.osize = 16 + (uint32_t)(data[0] >> 3) * 24;
    unsigned ncpus = 1 + data[2] % 4;
    sl_page_zone zone;
    if (sl_page_zone_init(&zone, ZONE_PAGES * SL_PAGE_SIZE, NULL) != SL_OK)
        return 0;
    sl_slub_config cfg = {.object_size = st.osize, .track = 1, .seed = data[1],
                          .sheaf_capacity = (uint16_t)(1 + (data[2] >> 2) % 16), .sheaf_capacity_exact = 1,
                          .max_sheaves = (uint16_t)(data[1] & 8 ? 3 * ncpus : 0), .early_boot = eras[era].early,
                          .bulk_free = (uint8_t)((data[1] >> 4) & 1)};
    if (data[1] & 1)
        cfg.flags |= SL_SLUB_FREELIST_HARDENED;
    if (data[1] & 2)
        cfg.flags |= SL_SLUB_FREELIST_RANDOM;
    if (data[1] & 4)
        cfg.flags |= SL_SLUB_HWCACHE_ALIGN;
    cfg.kernel.version = eras[era].v;
    require(sl_slub_cache_create(&zone, NULL, ncpus, &cfg, &st.s) == SL_OK, "create", 0);
    bool has_sheaves = sl_slub_cache_sheaf_capacity(st.s) != 0;
    char msg[256];
    for (size_t i = 3; i + 3 <= size; i += 3) {
        uint8_t kind = data[i] % 16, arg = data[i + 1], idx = data[i + 2];
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
        case 3: /* free a held object, from any CPU */
            if (!st.nheld)
                break;
            rc = sl_slub_free(st.s, cpu, take_held(&st, idx));
            require(rc == SL_OK, "free", rc);
            break;
        case 4: { /* bulk alloc, then bulk free of a mix */
            void *p[64];
            unsigned n = 1 + idx % 64;
            if (st.nheld + n > MAXH)
                break;
            rc = sl_slub_alloc_bulk(st.s, cpu, n, p);
            require(rc == (int)n || rc == 0, "bulk alloc is all or nothing", rc);
            for (int j = 0; j < rc; j++)
                got_object(&st, p[j]);
            unsigned m = st.nheld < (unsigned)(arg % 64) ? st.nheld : (unsigned)(arg % 64);
            for (unsigned j = 0; j < m; j++)
                p[j] = take_held(&st, idx + j);
            rc = sl_slub_free_bulk(st.s, cpu, m, p, NULL);
            require(rc >= 0, "bulk free", rc);
            break;
        }
        case 5: { /* foreign or misaligned pointers, alone and in a bulk free */
            uint8_t local[16];
            bool mis = st.nheld && (idx & 1);
            void *p = mis ? (uint8_t *)st.held[idx % st.nheld] + 1 + idx % 7 : (void *)local;
            int want = mis ? SL_EMISALIGNED : SL_EFOREIGN;
            rc = sl_slub_free(st.s, cpu, p);
            require(rc == want, "bad pointer detected", rc);
            rc = sl_slub_kfree_rcu(st.s, cpu, p);
            require(rc == want, "bad pointer to kfree_rcu", rc);
            rc = sl_slub_free_bulk(st.s, cpu, 1, &p, NULL);
            require(rc == want, "bad pointer in a bulk free", rc);
            break;
        }
        case 6: /* kfree_rcu */
            if (!st.nheld)
                break;
            rc = sl_slub_kfree_rcu(st.s, cpu, take_held(&st, idx));
            require(rc == SL_OK, "kfree_rcu", rc);
            break;
        case 7:
            rc = sl_slub_rcu_grace_period(st.s, cpu);
            require(rc >= 0, "grace period", rc);
            break;
        case 8:
            rc = sl_slub_flush_cpu(st.s, cpu);
            require(rc == SL_OK, "flush", rc);
            break;
        case 9: {
            int remaining = -1;
            require(sl_slub_shrink(st.s, &remaining) == SL_OK && (remaining == 0 || remaining == 1), "shrink", 0);
            break;
        }
        case 10: { /* prefill into a slot, or return it */
            sl_slub_sheaf **slot = &st.out[idx % SLOTS];
            if (*slot) {
                rc = sl_slub_return_sheaf(st.s, cpu, *slot);
                require(rc == SL_OK, "return sheaf", rc);
                *slot = NULL;
            } else {
                rc = sl_slub_prefill_sheaf(st.s, cpu, 1 + arg % 40, slot);
                require(has_sheaves ? rc == SL_OK || rc == SL_ENOMEM : rc == SL_EINVAL, "prefill", rc);
            }
            break;
        }
        case 11: { /* allocate from a slot, or refill it */
            sl_slub_sheaf **slot = &st.out[idx % SLOTS];
            if (!*slot || st.nheld == MAXH)
                break;
            if (arg & 1) {
                rc = sl_slub_refill_sheaf(st.s, cpu, slot, 1 + arg % 40);
                require(rc == SL_OK || rc == SL_ENOMEM, "refill sheaf", rc);
            } else {
                void *p;
                bool empty = sl_slub_sheaf_size(*slot) == 0;
                rc = sl_slub_alloc_from_sheaf(st.s, cpu, *slot, &p);
                require(rc == (empty ? SL_ENOMEM : SL_OK), "alloc from sheaf", rc);
                if (rc == SL_OK)
                    got_object(&st, p);
            }
            break;
        }
        case 12: { /* a stranger as a sheaf handle */
            sl_slub_sheaf *stranger = (sl_slub_sheaf *)(void *)st.held; /* never a sheaf */
            void *p;
            require(sl_slub_return_sheaf(st.s, cpu, stranger) == SL_EINVAL, "return a stranger", 0);
            require(sl_slub_alloc_from_sheaf(st.s, cpu, stranger, &p) == SL_EINVAL, "alloc from a stranger", 0);
            break;
        }
        case 13: /* bootstrap_cache_sheaves: once, for a cache created early */
            rc = sl_slub_bootstrap_sheaves(st.s);
            require(rc == (eras[era].early && !has_sheaves ? SL_OK : SL_EINVAL), "bootstrap", rc);
            has_sheaves = sl_slub_cache_sheaf_capacity(st.s) != 0;
            break;
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
    for (unsigned k = 0; k < SLOTS; k++)
        if (st.out[k])
            require(sl_slub_return_sheaf(st.s, 0, st.out[k]) == SL_OK, "final return", 0);
    for (unsigned k = 0; k < st.nheld; k++)
        require(sl_slub_free(st.s, k % ncpus, st.held[k]) == SL_OK, "final free", 0);
    require(sl_slub_validate(st.s, msg, sizeof msg) == SL_OK, "final validate", 0);
    require(sl_slub_cache_destroy(st.s) == SL_OK, "destroy: nothing left allocated", 0);
    while (st.npinned)
        sl_page_free(&zone, st.pinned[--st.npinned], 0);
    sl_page_zone_destroy(&zone);
    return 0;
}
