/*
 * cmd_bench_bulk.c - `slablab bulk`: seed 000's and seed 004's tables, from
 * prototype-kernel's slab_bulk_test01.  A 256-byte SLAB_HWCACHE_ALIGN cache;
 * for each bulk size, `loops` iterations of alloc_bulk + free_bulk, cycles
 * per object (an alloc+free pair).  Three variants, interleaved, each on a
 * cache of its own (slab_bulk_test01 creates one per test):
 *   generic   slab_common.c's generic __kmem_cache_alloc_bulk /
 *             __kmem_cache_free_bulk of 4.3 to 6.7 (the seeds call them the
 *             "fallback"): noinline loops of one kmem_cache_alloc /
 *             kmem_cache_free per object, copied into the test module as
 *             slab_bulk_test01 did (6.8+ gave the free name to SLUB's own
 *             hook-less detached-freelist bulk free);
 *   detached  kmem_cache_alloc_bulk + kmem_cache_free_bulk building
 *             detached freelists (seed 000: one CAS per group of objects
 *             of the same slab);
 *   irqoff    seed 004's first SLUB bulk free: objects go one by one onto
 *             the CPU freelist inside an interrupts-off section.  User
 *             space has no interrupts to disable; the model's `plain` fast
 *             path (no CAS, as with interrupts off) with per-object bulk
 *             free is the same work minus local_irq_{disable,enable}
 *             (7 cycles per call in seed 004).
 * Improvements are of each variant over generic, as the seeds print them
 * over their fallback.
 */
#include "bench.h"
#include "bench_slub.h"

#include <string.h>

#define MAX_BULK 250
/*
 * The caches are created for the seed machine's 8 CPUs (an i7-4790K, 4 cores
 * with hyper-threading): SLUB sizes slabs by CPU count, and with 8 CPUs a
 * 256-byte cache gets order-1 slabs of 32 objects, as the seed's kernel had
 * (the knee at bulk 32/34).  Only CPU 0 runs.
 */
#define SEED_CPUS 8

typedef struct bulk_arg {
    sl_slub_cache *s;
    unsigned n;
} bulk_arg;

static SL_NOINLINE void generic_free_bulk(sl_slub_cache *s, size_t n, void **p)
{
    for (size_t i = 0; i < n; i++)
        (void)sl_slub_free(s, 0, p[i]);
}

static SL_NOINLINE bool generic_alloc_bulk(sl_slub_cache *s, size_t n, void **p)
{
    for (size_t i = 0; i < n; i++) {
        if (sl_slub_alloc(s, 0, &p[i]) != SL_OK) {
            generic_free_bulk(s, i, p);
            return false;
        }
    }
    return true;
}

static int time_generic(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const bulk_arg *a = arg;
    void *objs[MAX_BULK];
    uint64_t cnt = 0;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++) {
        if (!generic_alloc_bulk(a->s, a->n, objs))
            return SL_ENOMEM;
        __asm__ __volatile__("" ::: "memory");
        generic_free_bulk(a->s, a->n, objs);
        cnt += a->n;
    }
    sl_bench_stop(rec, cnt);
    return SL_OK;
}

/* The model's kmem_cache_alloc_bulk + kmem_cache_free_bulk, in the cache's form. */
static int time_bulk(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const bulk_arg *a = arg;
    void *objs[MAX_BULK];
    uint64_t cnt = 0;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++) {
        if (sl_slub_alloc_bulk(a->s, 0, a->n, objs) != (int)a->n)
            return SL_ENOMEM;
        __asm__ __volatile__("" ::: "memory");
        int rc = sl_slub_free_bulk(a->s, 0, a->n, objs, NULL);
        if (rc < 0)
            return rc;
        cnt += a->n;
    }
    sl_bench_stop(rec, cnt);
    return SL_OK;
}

static int run(sl_bench_report *r, const sl_bench_opts *o, void *ctx)
{
    (void)ctx;
    sl_bench_exp *e =
        sl_bench_exp_new(r, "bulk", "SLUB alloc_bulk + free_bulk: generic loop vs detached freelist vs irq-off section",
                         "000, 004", "object (an alloc+free pair)", "improvement");
    sl_bench_param_num(e, "object_size", 256);
    sl_bench_param_str(e, "flags", "HWCACHE_ALIGN");
    sl_bench_param_num(e, "cache_cpus", SEED_CPUS);
    sl_bench_note(e, "irqoff models seed 004 (per-object pushes with interrupts off) by the plain fast path; "
                     "the kernel adds local_irq_{disable,enable} (7 cycles(tsc) per bulk call in seed 004)");
    static const struct {
        const char *name;
        sl_slub_fastpath fp;
        sl_slub_bulk_free bf;
        sl_bench_fn fn;
    } kinds[3] = {
        {"generic", SL_SLUB_FP_CMPXCHG, SL_SLUB_BULK_GENERIC, time_generic},
        {"detached", SL_SLUB_FP_CMPXCHG, SL_SLUB_BULK_DETACHED, time_bulk},
        {"irqoff", SL_SLUB_FP_PLAIN, SL_SLUB_BULK_GENERIC, time_bulk},
    };
    sl_bench_slub caches[3];
    bulk_arg args[3];
    sl_bench_variant v[3];
    int rc = SL_OK;
    unsigned opened = 0;
    sl_bench_param_kernel(e, o);
    for (; opened < 3; opened++) {
        caches[opened] = (sl_bench_slub){0};
        args[opened] = (bulk_arg){NULL, 1};
        v[opened] = (sl_bench_variant){.name = kinds[opened].name,
                                       .fn = kinds[opened].fn,
                                       .arg = &args[opened],
                                       .available = sl_bench_slub_has_fastpath(o->kernel, kinds[opened].fp),
                                       .reason = "7.0 has no per-CPU slab to free into with interrupts off"};
        if (!v[opened].available)
            continue;
        rc = sl_bench_slub_open(&caches[opened], SEED_CPUS, 256, SL_SLUB_HWCACHE_ALIGN, o->kernel, 0, kinds[opened].fp,
                                kinds[opened].bf, 32);
        if (rc != SL_OK)
            break;
        args[opened].s = caches[opened].cache;
    }
    for (unsigned b = 0; rc == SL_OK && b < 14; b++) {
        if (o->quick && b % 6)
            continue; /* quick: 1, 30, 158 */
        for (unsigned k = 0; k < 3; k++)
            args[k].n = sl_bench_bulk_sizes[b];
        char row[16];
        snprintf(row, sizeof row, "%u", sl_bench_bulk_sizes[b]);
        rc = sl_bench_row(e, o, "bulk", row, v, 3, NULL, NULL, 0);
    }
    while (opened)
        if (caches[--opened].cache)
            sl_bench_slub_close(&caches[opened]);
    if (rc != SL_OK) {
        fprintf(stderr, "slablab bulk: %s\n", sl_strerror(rc));
        return 1;
    }
    return 0;
}

int sl_bench_bulk_run(sl_bench_report *r, const sl_bench_opts *o) { return run(r, o, NULL); }

static int run_bulk(int argc, char **argv);
SL_CLI_COMMAND(bulk, .name = "bulk",
               .summary = "seed 000/004: SLUB bulk alloc+free per object, generic loop vs detached freelist vs irq-off",
               .usage = "slablab bulk " SL_BENCH_OPTS_USAGE, .run = run_bulk)

static int run_bulk(int argc, char **argv)
{
    return sl_bench_command(&sl_cli_cmd_bulk, argc, argv, NULL, run, NULL, NULL);
}
