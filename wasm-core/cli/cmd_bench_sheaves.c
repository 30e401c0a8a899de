/*
 * cmd_bench_sheaves.c - `slablab sheaves`: the measurement of the sheaves
 * series' cover letter ("SLUB percpu sheaves", Vlastimil Babka; merged as
 * 6.18's opt-in layer) on the SLUB model.  One CPU allocates a batch of N
 * objects, then frees them, in allocation order (fifo) or in a shuffled
 * order (shuffled: a fixed random permutation per row), N = 1, 10, 100,
 * 1000; reported per object (one alloc and one free), cycles(tsc) and ns,
 * with the seeds' method (bench.h).  Variants, interleaved:
 *
 *   cpu-slab  a 6.18 cache created without a sheaf_capacity: the per-CPU
 *             slab's lockless fast path and its slow paths;
 *   sheaves   the same cache created with sheaf_capacity (default 32, as
 *             the cover letter's test and 6.18's vm_area_struct use), or
 *             with --kernel 7.x a 7.0 cache (sheaves over 7.0's slab
 *             layer, capacity as --sheaf-capacity or calculate_sheaf_capacity).
 *
 * Ratios are sheaves over cpu-slab (improvement: how much cheaper sheaves
 * are); the cover letter's published figures are printed beside them.
 */
#include "bench.h"
#include "bench_slub.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BATCH 1000

typedef struct batch_arg {
    sl_slub_cache *s;
    unsigned n;
    const unsigned *order; /* free order (a permutation of 0..n-1), NULL: FIFO */
    void **objs;
} batch_arg;

/* One iteration: n allocations, then n frees in the row's order. */
static int time_batch(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    batch_arg *b = arg;
    sl_bench_start(rec);
    for (uint64_t l = 0; l < loops; l++) {
        for (unsigned i = 0; i < b->n; i++) {
            int rc = sl_slub_alloc(b->s, 0, &b->objs[i]);
            if (SL_UNLIKELY(rc != SL_OK))
                return rc;
        }
        for (unsigned i = 0; i < b->n; i++) {
            int rc = sl_slub_free(b->s, 0, b->objs[b->order ? b->order[i] : i]);
            if (SL_UNLIKELY(rc != SL_OK))
                return rc;
        }
    }
    sl_bench_stop(rec, loops * b->n);
    return SL_OK;
}

/* A Fisher-Yates shuffle of 0..n-1 from a fixed seed. */
static void shuffle(unsigned *order, unsigned n, uint64_t seed)
{
    for (unsigned i = 0; i < n; i++)
        order[i] = i;
    for (unsigned i = n; i > 1; i--) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        unsigned j = (unsigned)(seed % i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

int sl_bench_sheaves_run(sl_bench_report *r, const sl_bench_opts *o, unsigned max_batch, unsigned sheaf_capacity,
                         uint32_t size)
{
    sl_slub_rules rules;
    sl_slub_rules_for(o->kernel.major ? o->kernel : (sl_slub_kversion){6, 18}, &rules);
    bool v70 = rules.era == SL_SLUB_ERA_SHEAVES;
    sl_slub_kversion base = {6, 18}, with_sheaves = v70 ? rules.version : base;
    sl_bench_exp *e =
        sl_bench_exp_new(r, "sheaves", "SLUB sheaves against the per-CPU slab: a batch of N allocs, then N frees", NULL,
                         "object (an alloc and a free)", "improvement");
    sl_bench_param_num(e, "object_size", size);
    uint16_t capacity = (uint16_t)(sheaf_capacity ? sheaf_capacity : v70 ? 0 : 32); /* 0: calculate_sheaf_capacity */
    sl_bench_param_num(e, "sheaf_capacity", capacity ? capacity : sl_slub_sheaf_capacity(with_sheaves, size, 0, 0));
    sl_bench_opts vo = *o;
    vo.kernel = with_sheaves;
    sl_bench_param_kernel(e, &vo);
    sl_bench_note(e, "cpu-slab: a 6.18 cache without sheaf_capacity (the per-CPU slab); sheaves: the same with "
                     "sheaf_capacity (with --kernel 7.x: a 7.0 cache, sheaves over 7.0's slab layer)");
    sl_bench_note(e, "cover letter (Ryzen 7 5700, capacity 32): sheaves faster by about 17 / 15 / 31 / 30% at "
                     "batch 1 / 10 / 100 / 1000 (fifo) and 13 / 29 / 6% at 10 / 100 / 1000 (shuffled)");
    sl_bench_note(e, "improvement: how much less an object costs with sheaves than with the per-CPU slab");

    sl_bench_slub c[2];
    void **objs = calloc(2 * (size_t)MAX_BATCH, sizeof *objs);
    unsigned *order = calloc(MAX_BATCH, sizeof *order);
    int rc = objs && order ? SL_OK : SL_ENOMEM;
    unsigned opened = 0;
    if (rc == SL_OK)
        rc = sl_bench_slub_open(&c[0], 1, size, 0, base, 0, SL_SLUB_FP_CMPXCHG, SL_SLUB_BULK_DETACHED, 64);
    opened += rc == SL_OK;
    if (rc == SL_OK)
        rc = sl_bench_slub_open(&c[1], 1, size, 0, with_sheaves, capacity, SL_SLUB_FP_CMPXCHG, SL_SLUB_BULK_DETACHED,
                                64);
    opened += rc == SL_OK;
    static const unsigned batches[] = {1, 10, 100, 1000};
    static const char *const groups[] = {"fifo", "shuffled"};
    for (unsigned g = 0; rc == SL_OK && g < 2; g++) {
        for (unsigned k = 0; rc == SL_OK && k < sizeof batches / sizeof batches[0]; k++) {
            unsigned n = batches[k];
            if (n > max_batch || (g == 1 && n == 1))
                continue; /* a batch of one has one order */
            if (g == 1)
                shuffle(order, n, 0x5eed0000ull + n);
            batch_arg a[2] = {{c[0].cache, n, g ? order : NULL, objs},
                              {c[1].cache, n, g ? order : NULL, objs + MAX_BATCH}};
            sl_bench_variant v[2] = {{.name = "cpu-slab", .fn = time_batch, .arg = &a[0], .available = true},
                                     {.name = "sheaves", .fn = time_batch, .arg = &a[1], .available = true}};
            char row[16];
            snprintf(row, sizeof row, "%u", n);
            rc = sl_bench_row(e, o, groups[g], row, v, 2, NULL, NULL, 0); /* ratio: sheaves over cpu-slab */
        }
    }
    while (opened)
        sl_bench_slub_close(&c[--opened]);
    free(objs);
    free(order);
    if (rc != SL_OK) {
        fprintf(stderr, "slablab sheaves: %s\n", sl_strerror(rc));
        return 1;
    }
    return 0;
}

typedef struct sheaves_opts {
    unsigned long max_batch, capacity, size;
} sheaves_opts;

static int own_opt(const sl_cli_command *cmd, int argc, char **argv, int *i, void *ctx)
{
    sheaves_opts *s = ctx;
    if (!strcmp(argv[*i], "--max-batch")) {
        if (*i + 1 >= argc || !sl_cli_parse_ulong(argv[++*i], 1, MAX_BATCH, &s->max_batch))
            return sl_cli_usage_error(cmd, "--max-batch takes 1 to %d", MAX_BATCH);
    } else if (!strcmp(argv[*i], "--sheaf-capacity")) {
        if (*i + 1 >= argc || !sl_cli_parse_ulong(argv[++*i], 1, 1024, &s->capacity))
            return sl_cli_usage_error(cmd, "--sheaf-capacity takes 1 to 1024");
    } else if (!strcmp(argv[*i], "--size")) {
        if (*i + 1 >= argc || !sl_cli_parse_ulong(argv[++*i], 8, 8192, &s->size))
            return sl_cli_usage_error(cmd, "--size takes 8 to 8192");
    } else {
        return 0;
    }
    return 1;
}

static int run(sl_bench_report *r, const sl_bench_opts *o, void *ctx)
{
    sheaves_opts *s = ctx;
    if (o->kernel.major && sl_slub_kversion_cmp(o->kernel, (sl_slub_kversion){6, 18}) < 0) {
        fprintf(stderr, "slablab sheaves: sheaves came with 6.18: --kernel takes 6.18 or later\n");
        return 1;
    }
    return sl_bench_sheaves_run(r, o, (unsigned)s->max_batch, (unsigned)s->capacity, (uint32_t)s->size);
}

static int run_sheaves(int argc, char **argv);
SL_CLI_COMMAND(sheaves, .name = "sheaves",
               .summary = "SLUB sheaves vs the per-CPU slab: batches of N allocs then N frees, FIFO or shuffled",
               .usage = "slablab sheaves [--max-batch N (default 1000)] [--sheaf-capacity N (default 32; 7.x: "
                        "calculate_sheaf_capacity)] [--size BYTES (default 256)] " SL_BENCH_OPTS_USAGE,
               .run = run_sheaves)

static int run_sheaves(int argc, char **argv)
{
    sheaves_opts s = {MAX_BATCH, 0, 256};
    return sl_bench_command(&sl_cli_cmd_sheaves, argc, argv, own_opt, run, &s, NULL);
}
