/*
 * cmd_bench_all.c - `slablab all`: every experiment with short defaults
 * (11 repetitions of 2 ms; percpu with 65536 objects; under a minute on
 * two cores), written as one JSON document (--out FILE, or stdout)
 * for the web UI to load beside its in-browser figures.
 */
#include "bench.h"
#include "bench_allocators.h"

#define ALL_REPS 11
#define ALL_MIN_TIME_US 2000
#define ALL_PCPU_OBJECTS 65536
#define ALL_PCPU_BUDGET_S 10

static int run(sl_bench_report *r, const sl_bench_opts *o, void *ctx)
{
    (void)ctx;
    unsigned cpus = sl_host_cpus();
    /* each returns 0 or 1; one that fails leaves its failed rows in the report */
    int failures = sl_bench_fastpath_run(r, o);
    failures += sl_bench_bulk_run(r, o);
    failures += sl_bench_kmalloc_run(r, o);
    failures += sl_bench_percpu_run(r, o, o->quick ? 1024 : ALL_PCPU_OBJECTS, ALL_PCPU_BUDGET_S);
    failures += sl_bench_compare_run(r, o, o->quick ? 64 : 4096, true, true);
    failures += sl_bench_scale_run(r, o, cpus < 8 ? cpus : 8, 4, 1);
    return failures ? 1 : 0;
}

static int run_all(int argc, char **argv);
SL_CLI_COMMAND(all, .name = "all", .summary = "every experiment with short defaults, as one JSON document",
               .usage = "slablab all " SL_BENCH_OPTS_USAGE " (default --format json --reps 11 --min-time-us 2000)",
               .run = run_all)

static int run_all(int argc, char **argv)
{
    sl_bench_allocators_prepare();
    static const sl_bench_defaults defaults = {SL_FMT_JSON, ALL_REPS, ALL_MIN_TIME_US};
    return sl_bench_command(&sl_cli_cmd_all, argc, argv, NULL, run, NULL, &defaults);
}
