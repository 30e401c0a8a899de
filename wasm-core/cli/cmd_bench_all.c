/*
 * cmd_bench_all.c - `slablab all`: every experiment with short defaults
 * (3 repetitions of 5 ms, about a minute on two cores), written as one
 * JSON document (--out FILE, or stdout) for the web UI to load beside its
 * in-browser figures.
 */
#include "bench.h"
#include "bench_allocators.h"

#define ALL_REPS 3
#define ALL_MIN_TIME_US 5000

static int run(sl_bench_report *r, const sl_bench_opts *o, void *ctx)
{
    (void)ctx;
    int rc = 0;
    rc |= sl_bench_fastpath_run(r, o);
    rc |= sl_bench_compare_run(r, o, o->quick ? 64 : 4096, true, true);
    return rc;
}

static int run_all(int argc, char **argv);
SL_CLI_COMMAND(all, .name = "all",
               .summary = "every experiment with short defaults, as one JSON document",
               .usage = "slablab all " SL_BENCH_OPTS_USAGE " (default --format json --reps 3 --min-time-us 5000)",
               .run = run_all)

static int run_all(int argc, char **argv)
{
    sl_bench_allocators_prepare();
    static const sl_bench_defaults defaults = {SL_FMT_JSON, ALL_REPS, ALL_MIN_TIME_US};
    return sl_bench_command(&sl_cli_cmd_all, argc, argv, NULL, run, NULL, &defaults);
}
