/*
 * fuzz_slub_eras.c - libFuzzer target: random operation sequences against a
 * SLUB cache of one kernel era (eras.h) - 4.3's irq-off bulk free, 4.4's
 * frozen CPU partial slabs, 5.15, 6.17's per-CPU slab, 6.18 with opted-in
 * sheaves, 7.0 (sheaves, no per-CPU slab), 7.0 created before
 * bootstrap_cache_sheaves, 7.1, 7.2, 7.3 (a PREEMPT_RT one too) and a
 * version newer than the newest modelled - with tracking on and the debug checks off, as
 * a production cache runs: allocations (in GFP_KERNEL, GFP_ATOMIC and
 * GFP_NOWAIT context, and kmalloc_nolock), frees from any CPU (kfree_nolock
 * too, and the irq_work that frees what it deferred; 7.3's
 * kfree_rcu_nolock, refused before), bulk
 * operations, kfree_rcu and grace periods, flushes, shrinks, the prefill
 * API in each context (an oversize sheaf where the sheaves are off), bootstrap, CPU
 * hotplug (slub_cpu_dead, slub_cpu_setup), kvfree_rcu_barrier, a sheaf budget and
 * page-allocator pressure; plus the bad
 * inputs every free checks (foreign and misaligned pointers, strangers as
 * sheaf handles).  Each operation must return exactly the code the model
 * promises, and validate() (slabs, sheaves, barn, RCU waits) must pass after
 * every step.  A discrepancy aborts.
 *
 * Input: byte 0 era and object size, byte 1 options (bits 5, 6: a memoryless
 * node, an offline CPU), byte 2 CPUs, sheaf capacity and (bits 6-7) NUMA
 * nodes; then 3-byte ops {kind, cpu/arg, index}.
 */
#include "fuzz_slub_ops.h"

#define ZONE_PAGES 512
#define SLOTS 4

static const struct {
    sl_slub_kversion v;
    bool early, rt;
} eras[] = {{{4, 3}, false, false},  {{4, 4}, false, false}, {{5, 15}, false, false}, {{6, 17}, false, false},
            {{6, 18}, false, false}, {{7, 0}, false, false}, {{7, 0}, true, false},   {{6, 7}, false, false},
            {{7, 1}, false, false},  {{7, 2}, false, false}, {{7, 3}, false, false},  {{7, 3}, false, true},
            {{7, 3}, true, false},   {{8, 1}, false, false}};
#define NR_ERAS (sizeof eras / sizeof eras[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    fz_slub run = {.target = "fuzz_slub_eras"};
    fz_slub *f = &run;
    sl_slub_sheaf *out[SLOTS] = {NULL};
    unsigned era = data[0] % NR_ERAS;
    f->osize = 16 + (uint32_t)(data[0] / NR_ERAS % 32) * 24;
    unsigned ncpus = 1 + data[2] % 4;
    sl_page_zone zone;
    if (sl_page_zone_init(&zone, ZONE_PAGES * SL_PAGE_SIZE, NULL) != SL_OK)
        return 0;
    f->zone = &zone;
    sl_slub_config cfg = {.object_size = f->osize,
                          .track = 1,
                          .seed = data[1],
                          .sheaf_capacity = (uint16_t)(1 + (data[2] >> 2) % 16),
                          .sheaf_capacity_exact = 1,
                          .max_sheaves = (uint16_t)(data[1] & 8 ? 3 * ncpus : 0),
                          .early_boot = eras[era].early,
                          .bulk_free = (uint8_t)((data[1] >> 4) & 1)};
    if (data[1] & 1)
        cfg.flags |= SL_SLUB_FREELIST_HARDENED;
    if (data[1] & 2)
        cfg.flags |= SL_SLUB_FREELIST_RANDOM;
    if (data[1] & 4)
        cfg.flags |= SL_SLUB_HWCACHE_ALIGN;
    /* NUMA: 1 + data[2] >> 6 nodes, CPU c on node c % nodes; data[1] bit 5 makes the last node
     * memoryless, bit 6 starts the last CPU offline (7.1: its memoryless node without a barn). */
    cfg.nr_nodes = (uint8_t)(1 + (data[2] >> 6));
    for (unsigned c = 0; c < ncpus; c++)
        cfg.cpu_node[c] = (uint8_t)(c % cfg.nr_nodes);
    if ((data[1] & 32) && cfg.nr_nodes > 1)
        cfg.memoryless = (uint8_t)(1u << (cfg.nr_nodes - 1));
    if (data[1] & 64)
        cfg.offline_cpus = (uint8_t)(1u << (ncpus - 1));
    cfg.kernel.version = eras[era].v;
    if (eras[era].rt)
        cfg.fastpath = SL_SLUB_FP_RT;
    /* 7.x: every cache has sheaves, on (capacity > 0) or off; prefill gives an oversize sheaf then */
    bool sheaf_api = eras[era].v.major >= 7;
    fz_require(f, sl_slub_cache_create(&zone, NULL, ncpus, &cfg, &f->s) == SL_OK, "create", 0);
    bool has_sheaves = sl_slub_cache_sheaf_capacity(f->s) != 0;
    bool nolock = sl_slub_cache_rules(f->s)->nolock;               /* kmalloc_nolock / kfree_nolock: 6.18+ */
    bool rcu_nolock = sl_slub_cache_rules(f->s)->kfree_rcu_nolock; /* kfree_rcu_nolock: 7.3 */
    sheaf_api = sheaf_api || has_sheaves;
    for (size_t i = 3; i + 3 <= size; i += 3) {
        uint8_t kind = data[i] % 16, arg = data[i + 1], idx = data[i + 2];
        unsigned cpu = arg % ncpus;
        int rc;
        switch (kind) {
        case 0: /* alloc */
            fz_alloc(f, cpu);
            break;
        case 1: { /* alloc in a context: GFP_KERNEL, GFP_ATOMIC, GFP_NOWAIT, or kmalloc_nolock */
            if (f->nheld == FZ_MAXH)
                break;
            void *p = NULL;
            unsigned ctx = idx % 4;
            rc = ctx < 3 ? sl_slub_alloc_gfp(f->s, cpu, (sl_slub_gfp)ctx, &p) : sl_slub_kmalloc_nolock(f->s, cpu, &p);
            if (ctx == 3 && !nolock)
                fz_require(f, rc == SL_EINVAL && !p, "kmalloc_nolock before 6.18", rc);
            else
                fz_require(f, rc == SL_OK || rc == SL_ENOMEM, "alloc in a context", rc);
            if (rc == SL_OK)
                fz_got_object(f, p);
            break;
        }
        case 2:
        case 3: /* free a held object, from any CPU (kfree_nolock for odd idx) */
            if (!f->nheld)
                break;
            if (kind == 3 && (idx & 1) && nolock) {
                rc = sl_slub_kfree_nolock(f->s, cpu, fz_take_held(f, idx));
                fz_require(f, rc == SL_OK, "kfree_nolock", rc);
                break;
            }
            rc = sl_slub_free(f->s, cpu, fz_take_held(f, idx));
            fz_require(f, rc == SL_OK, "free", rc);
            break;
        case 4: { /* bulk alloc, then bulk free of a mix */
            void *p[64];
            fz_alloc_bulk(f, cpu, 1 + idx % 64, p);
            unsigned m = f->nheld < (unsigned)(arg % 64) ? f->nheld : (unsigned)(arg % 64);
            for (unsigned j = 0; j < m; j++)
                p[j] = fz_take_held(f, idx + j);
            rc = sl_slub_free_bulk(f->s, cpu, m, p, NULL);
            fz_require(f, rc >= 0, "bulk free", rc);
            break;
        }
        case 5: { /* foreign or misaligned pointers, alone and in a bulk free */
            uint8_t local[16];
            bool mis = f->nheld && (idx & 1);
            void *p = mis ? (uint8_t *)f->held[idx % f->nheld] + 1 + idx % 7 : (void *)local;
            int want = mis ? SL_EMISALIGNED : SL_EFOREIGN;
            rc = sl_slub_free(f->s, cpu, p);
            fz_require(f, rc == want, "bad pointer detected", rc);
            rc = sl_slub_kfree_rcu(f->s, cpu, p);
            fz_require(f, rc == want, "bad pointer to kfree_rcu", rc);
            rc = sl_slub_free_bulk(f->s, cpu, 1, &p, NULL);
            fz_require(f, rc == want, "bad pointer in a bulk free", rc);
            rc = sl_slub_kfree_nolock(f->s, cpu, p);
            fz_require(f, rc == (nolock ? want : SL_EINVAL), "bad pointer to kfree_nolock", rc);
            rc = sl_slub_kfree_rcu_nolock(f->s, cpu, p, idx & 2);
            fz_require(f, rc == (rcu_nolock ? want : SL_EINVAL), "bad pointer to kfree_rcu_nolock", rc);
            break;
        }
        case 6: /* kfree_rcu, or kfree_rcu_nolock (interrupts on or off) for odd idx */
            if (!f->nheld)
                break;
            if (idx & 1) {
                void *p = f->held[idx % f->nheld];
                rc = sl_slub_kfree_rcu_nolock(f->s, cpu, p, arg & 8);
                fz_require(f, rc == (rcu_nolock ? SL_OK : SL_EINVAL), "kfree_rcu_nolock", rc);
                if (rc == SL_OK)
                    (void)fz_take_held(f, idx);
                break;
            }
            rc = sl_slub_kfree_rcu(f->s, cpu, fz_take_held(f, idx));
            fz_require(f, rc == SL_OK, "kfree_rcu", rc);
            break;
        case 7: /* a grace period, or the CPU's irq_work (kfree_nolock's deferred objects) */
            rc = arg & 4 ? sl_slub_irq_work(f->s, cpu) : sl_slub_rcu_grace_period(f->s, cpu);
            fz_require(f, rc >= 0, "grace period or irq_work", rc);
            break;
        case 8:
            rc = sl_slub_flush_cpu(f->s, cpu);
            fz_require(f, rc == SL_OK, "flush", rc);
            break;
        case 9: {
            int remaining = -1;
            fz_require(f, sl_slub_shrink(f->s, &remaining) == SL_OK && (remaining == 0 || remaining == 1), "shrink", 0);
            break;
        }
        case 10: { /* prefill into a slot, or return it */
            sl_slub_sheaf **slot = &out[idx % SLOTS];
            if (*slot) {
                rc = sl_slub_return_sheaf(f->s, cpu, *slot);
                fz_require(f, rc == SL_OK, "return sheaf", rc);
                *slot = NULL;
            } else {
                rc = sl_slub_prefill_sheaf_gfp(f->s, cpu, (sl_slub_gfp)(idx / SLOTS % 3), 1 + arg % 40, slot);
                fz_require(f, sheaf_api ? rc == SL_OK || rc == SL_ENOMEM : rc == SL_EINVAL, "prefill", rc);
            }
            break;
        }
        case 11: { /* allocate from a slot, or refill it */
            sl_slub_sheaf **slot = &out[idx % SLOTS];
            if (!*slot || f->nheld == FZ_MAXH)
                break;
            if (arg & 1) {
                rc = sl_slub_refill_sheaf_gfp(f->s, cpu, (sl_slub_gfp)(idx / SLOTS % 3), slot, 1 + arg % 40);
                fz_require(f, rc == SL_OK || rc == SL_ENOMEM, "refill sheaf", rc);
            } else {
                void *p;
                bool empty = sl_slub_sheaf_size(*slot) == 0;
                rc = sl_slub_alloc_from_sheaf(f->s, cpu, *slot, &p);
                fz_require(f, rc == (empty ? SL_ENOMEM : SL_OK), "alloc from sheaf", rc);
                if (rc == SL_OK)
                    fz_got_object(f, p);
            }
            break;
        }
        case 12: {                                                      /* a stranger as a sheaf handle */
            sl_slub_sheaf *stranger = (sl_slub_sheaf *)(void *)f->held; /* never a sheaf */
            void *p;
            fz_require(f, sl_slub_return_sheaf(f->s, cpu, stranger) == SL_EINVAL, "return a stranger", 0);
            fz_require(f, sl_slub_alloc_from_sheaf(f->s, cpu, stranger, &p) == SL_EINVAL, "alloc from a stranger", 0);
            break;
        }
        case 13: /* bootstrap_cache_sheaves: once, for a cache created early */
            rc = sl_slub_bootstrap_sheaves(f->s);
            fz_require(f, rc == (eras[era].early && !has_sheaves ? SL_OK : SL_EINVAL), "bootstrap", rc);
            has_sheaves = sl_slub_cache_sheaf_capacity(f->s) != 0;
            break;
        case 14: /* CPU hotplug (down, up), or kvfree_rcu_barrier */
            if (arg & 1) {
                rc = sl_slub_cpu_dead(f->s, cpu);
                fz_require(f, rc >= 0, "cpu dead", rc);
            } else if (arg & 2) {
                rc = sl_slub_cpu_online(f->s, cpu);
                fz_require(f, rc == 0 || rc == 1, "cpu online", rc);
            } else {
                rc = sl_slub_rcu_barrier(f->s);
                fz_require(f, rc >= 0, "rcu barrier", rc);
            }
            break;
        default:
            fz_page_pressure(f, arg, cpu);
        }
        fz_validate(f, "validate after every step");
    }
    for (unsigned k = 0; k < SLOTS; k++)
        if (out[k])
            fz_require(f, sl_slub_return_sheaf(f->s, 0, out[k]) == SL_OK, "final return", 0);
    for (unsigned k = 0; k < f->nheld; k++)
        fz_require(f, sl_slub_free(f->s, k % ncpus, f->held[k]) == SL_OK, "final free", 0);
    fz_validate(f, "final validate");
    fz_require(f, sl_slub_cache_destroy(f->s) == SL_OK, "destroy: nothing left allocated", 0);
    fz_release_zone(f);
    return 0;
}
