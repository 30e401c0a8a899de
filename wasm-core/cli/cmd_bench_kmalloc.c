/*
 * cmd_bench_kmalloc.c - `slablab kmalloc`: seed 002's table, from the
 * slab_test module's "Kmalloc: Repeatedly allocate then free test": 10000
 * kmalloc(size) then 10000 kfree, sizes 32 to 4096, cycles per kmalloc and
 * per kfree, timed as two phases of one round.  Variants, interleaved:
 *   slab-before  the SLAB model with the management-type rules before
 *                OBJFREELIST_SLAB (commit b03a017bebc4's parent), on the
 *                kernel version --kernel names (default 6.7);
 *   slab-after   the same with OBJFREELIST_SLAB;
 *   slub         a SLUB model cache of that size (kmalloc-style, word
 *                aligned), cmpxchg fast path.
 * Each round starts from the state the previous one left (free slabs the
 * allocator kept), as consecutive slab_test runs would.  The arenas are
 * touched beforehand (sl_page_zone_prefault): slab_test ran on resident
 * kernel memory.
 */
#include "bench.h"
#include "bench_slub.h"

#include "../src/slab/slab.h"

#include <stdlib.h>
#include <string.h>

#define ROUND 10000

typedef struct km_arg {
    sl_slab *slab;       /* SLAB variants */
    sl_slub_cache *slub; /* SLUB variant */
    size_t size;
    void **v; /* ROUND slots */
} km_arg;

/* Adds one timed phase of a round to rec's phase `p`. */
static void add_phase(sl_bench_rec *rec, unsigned p, uint64_t tsc, uint64_t ns, uint64_t ops)
{
    rec->tsc[p] += tsc;
    rec->ns[p] += ns;
    rec->ops[p] += ops;
    rec->nphases = 2;
}

static int time_slab(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const km_arg *a = arg;
    for (uint64_t l = 0; l < loops; l++) {
        uint64_t n0 = sl_time_ns(), t0 = sl_tsc_start();
        for (unsigned i = 0; i < ROUND; i++)
            if (SL_UNLIKELY(!(a->v[i] = sl_slab_kmalloc(a->slab, 0, a->size))))
                return SL_ENOMEM;
        uint64_t t1 = sl_tsc_stop(), n1 = sl_time_ns();
        add_phase(rec, 0, t1 - t0, n1 - n0, ROUND);
        n0 = sl_time_ns();
        t0 = sl_tsc_start();
        for (unsigned i = 0; i < ROUND; i++)
            (void)sl_slab_kfree(a->slab, 0, a->v[i]);
        t1 = sl_tsc_stop();
        n1 = sl_time_ns();
        add_phase(rec, 1, t1 - t0, n1 - n0, ROUND);
    }
    return SL_OK;
}

static int time_slub(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const km_arg *a = arg;
    for (uint64_t l = 0; l < loops; l++) {
        uint64_t n0 = sl_time_ns(), t0 = sl_tsc_start();
        for (unsigned i = 0; i < ROUND; i++)
            if (SL_UNLIKELY(sl_slub_alloc(a->slub, 0, &a->v[i]) != SL_OK))
                return SL_ENOMEM;
        uint64_t t1 = sl_tsc_stop(), n1 = sl_time_ns();
        add_phase(rec, 0, t1 - t0, n1 - n0, ROUND);
        n0 = sl_time_ns();
        t0 = sl_tsc_start();
        for (unsigned i = 0; i < ROUND; i++)
            (void)sl_slub_free(a->slub, 0, a->v[i]);
        t1 = sl_tsc_stop();
        n1 = sl_time_ns();
        add_phase(rec, 1, t1 - t0, n1 - n0, ROUND);
    }
    return SL_OK;
}

static const unsigned sizes[] = {32, 64, 128, 256, 512, 1024, 2048, 4096};

static int kmalloc_run(sl_bench_report *r, const sl_bench_opts *o, unsigned kernel)
{
    sl_bench_exp *e = sl_bench_exp_new(r, "kmalloc", "slab_test: 10000 x kmalloc(size) then 10000 x kfree", "002",
                                       "kmalloc or kfree call", "improvement");
    sl_bench_param_num(e, "round", ROUND);
    static char version[16]; /* the report keeps the pointer */
    sl_slab_kernel_name(kernel, version, sizeof version);
    sl_bench_param_str(e, "kernel", version);
    sl_bench_note(e, "improvement: of each variant over slab-before (SLAB without OBJFREELIST_SLAB), per phase");
    void **slots = calloc(ROUND, sizeof *slots);
    sl_slab *slab[2] = {NULL, NULL};
    int rc = slots ? SL_OK : SL_ENOMEM;
    for (unsigned k = 0; k < 2 && rc == SL_OK; k++) {
        sl_slab_config cfg = {.ncpus = 1,
                              .arena_bytes = (size_t)128 << 20,
                              .variant = {.rules = k ? SL_SLAB_RULES_AFTER : SL_SLAB_RULES_BEFORE, .kernel = kernel},
                              .trace = NULL};
        rc = sl_slab_create(&cfg, &slab[k]);
        if (rc == SL_OK)
            sl_page_zone_prefault(sl_slab_zone(slab[k]));
    }
    static const char *const phases[] = {"alloc", "free"};
    for (unsigned s = 0; rc == SL_OK && s < sizeof sizes / sizeof sizes[0]; s++) {
        if (o->quick && sizes[s] != 32 && sizes[s] != 4096)
            continue;
        sl_bench_slub c;
        /* kmalloc's --kernel is SLAB's version: its SLUB rows keep the model's default */
        rc = sl_bench_slub_open(&c, 1, sizes[s], SL_SLUB_KMALLOC, (sl_slub_kversion){0, 0}, 0, SL_SLUB_FP_CMPXCHG,
                                SL_SLUB_BULK_DETACHED, 128);
        if (rc != SL_OK)
            break;
        km_arg a[3] = {
            {slab[0], NULL, sizes[s], slots}, {slab[1], NULL, sizes[s], slots}, {NULL, c.cache, sizes[s], slots}};
        sl_bench_variant v[3] = {{.name = "slab-before", .fn = time_slab, .arg = &a[0], .available = true},
                                 {.name = "slab-after", .fn = time_slab, .arg = &a[1], .available = true},
                                 {.name = "slub", .fn = time_slub, .arg = &a[2], .available = true}};
        char row[16];
        snprintf(row, sizeof row, "%u", sizes[s]);
        rc = sl_bench_row(e, o, "kmalloc", row, v, 3, phases, NULL, 0);
        sl_bench_slub_close(&c);
    }
    for (unsigned k = 0; k < 2; k++)
        if (slab[k])
            sl_slab_destroy(slab[k]);
    free(slots);
    if (rc != SL_OK) {
        fprintf(stderr, "slablab kmalloc: %s\n", sl_strerror(rc));
        return 1;
    }
    return 0;
}

int sl_bench_kmalloc_run(sl_bench_report *r, const sl_bench_opts *o) { return kmalloc_run(r, o, SL_SLAB_KERNEL_LAST); }

/* --kernel X.Y: the SLAB kernel version the two SLAB variants follow. */
static int own_opt(const sl_cli_command *cmd, int argc, char **argv, int *i, void *ctx)
{
    if (strcmp(argv[*i], "--kernel"))
        return 0;
    if (*i + 1 >= argc || sl_slab_kernel_parse(argv[++*i], ctx) != SL_OK)
        return sl_cli_usage_error(cmd, "--kernel takes a version from 4.10 to 6.7 such as 5.4");
    return 1;
}

static int run(sl_bench_report *r, const sl_bench_opts *o, void *ctx)
{
    return kmalloc_run(r, o, *(const unsigned *)ctx);
}

static int run_kmalloc(int argc, char **argv);
SL_CLI_COMMAND(kmalloc, .name = "kmalloc",
               .summary = "seed 002: 10000 x kmalloc then kfree, SLAB before/after OBJFREELIST and SLUB",
               .usage = "slablab kmalloc [--kernel X.Y (4.10 .. 6.7, default 6.7)] " SL_BENCH_OPTS_USAGE,
               .run = run_kmalloc)

static int run_kmalloc(int argc, char **argv)
{
    unsigned kernel = SL_SLAB_KERNEL_LAST;
    return sl_bench_command(&sl_cli_cmd_kmalloc, argc, argv, own_opt, run, &kernel, NULL);
}
