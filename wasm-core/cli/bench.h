/*
 * bench.h - the benchmark harness shared by the `slablab` experiment
 * subcommands (fastpath, bulk, kmalloc, percpu, compare, scale, all).
 *
 * The method is prototype-kernel's time_bench, which produced the seed
 * tables: a timed function runs a tight loop of `loops` iterations between
 * sl_bench_start() (CPUID;RDTSC) and sl_bench_stop() (RDTSCP;CPUID), also
 * reading the wall clock, and says how many operations it did; the harness
 * divides.  Around that it adds what the seeds did by hand: a warm-up run,
 * an automatic loop count that makes one repetition last long enough for
 * the timer's own cost to vanish, several repetitions reported as median,
 * min and max, and interleaving.  Every row of an experiment compares
 * variants (fallback vs detached, glibc vs jemalloc, ...): the harness runs
 * them A B C, C B A, A B C ... within one process, so slow drift of a
 * shared, noisy machine hits all variants alike, and reports each ratio as
 * the median of the per-repetition ratios.
 *
 * Data.  A run builds one sl_bench_report: the machine (sl_bench_machine)
 * and a list of experiments, each a list of measurements keyed by
 * (group, row, variant) plus ratios between variants of one row.  The
 * three output formats (bench_report.c) print that same structure;
 * docs/bench-schema.json describes the JSON.
 *
 * Threads.  The harness is single-threaded: measurements that need
 * several threads (producer/consumer, scale) start and join them inside
 * their timed function.  Nothing here is shared between threads.
 */
#ifndef SL_BENCH_H
#define SL_BENCH_H

#include "cli.h"

#include "../src/platform/platform.h"
#include "../src/slub/eras.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ */
/* Arithmetic (bench_stats.c; pure, unit-tested)                       */

typedef struct sl_bench_stat {
    double median, min, max;
} sl_bench_stat;

/* Median, min and max of v[0..n-1] (n >= 1); sorts v in place.  The median of
 * an even count is the mean of the two middle values. */
sl_bench_stat sl_bench_stat_of(double *v, size_t n);
/* a / b, or 0 when b is 0 (an empty measurement has no ratio). */
double sl_bench_ratio_of(double a, double b);
/* The seeds' "improved X%": how much less `now` costs than `before`, in
 * percent of `before` (negative when it got slower); 0 when before is 0. */
double sl_bench_improvement_pct(double before, double now);
/* Per-operation figure of an interval: interval / ops (0 when ops is 0). */
double sl_bench_per_op(uint64_t interval, uint64_t ops);

/* ------------------------------------------------------------------ */
/* Machine and timing (bench_harness.c)                                */

typedef struct sl_bench_machine {
    char cpu_model[128];
    char kernel[160];
    char compiler[64];
    unsigned cores;
    double tsc_hz;     /* calibrated against CLOCK_MONOTONIC */
    bool constant_tsc; /* the TSC ticks at a fixed rate whatever the core clock */
    bool nonstop_tsc;
    bool hypervisor;
    bool bench_build; /* built with -DSLABLAB_BENCH (no tracing, no asserts) */
    int pinned_cpu;   /* -1: not pinned */
} sl_bench_machine;

/* Fills *m: reads /proc/cpuinfo and uname, calibrates the TSC for about
 * calib_ms milliseconds (median of three), pins the calling thread to `cpu`
 * (-1: leave it).  Returns SL_OK. */
int sl_bench_machine_probe(sl_bench_machine *m, int cpu, unsigned calib_ms);

/*
 * One timed run.  A phase is one timed interval; kmalloc's slab_test loop
 * times its alloc and free halves as two phases of one run, everything else
 * uses one.
 */
#define SL_BENCH_MAX_PHASES 2
typedef struct sl_bench_rec {
    uint64_t tsc_start, ns_start;
    uint64_t tsc[SL_BENCH_MAX_PHASES]; /* TSC interval of each phase */
    uint64_t ns[SL_BENCH_MAX_PHASES];  /* wall-clock interval of each phase */
    uint64_t ops[SL_BENCH_MAX_PHASES]; /* operations (objects) done in each phase */
    unsigned nphases;
    double extra[4]; /* experiment-specific counters (retries, fast-path share...) */
} sl_bench_rec;

SL_INLINE void sl_bench_start(sl_bench_rec *r)
{
    r->ns_start = sl_time_ns();
    r->tsc_start = sl_tsc_start();
}
/* Closes the current phase: `ops` operations since sl_bench_start(). */
SL_INLINE void sl_bench_stop(sl_bench_rec *r, uint64_t ops)
{
    uint64_t tsc = sl_tsc_stop();
    uint64_t ns = sl_time_ns();
    if (r->nphases < SL_BENCH_MAX_PHASES) {
        r->tsc[r->nphases] = tsc - r->tsc_start;
        r->ns[r->nphases] = ns - r->ns_start;
        r->ops[r->nphases] = ops;
        r->nphases++;
    }
}

/*
 * A variant of one row: `fn` runs `loops` iterations, timing them with
 * sl_bench_start/stop, and returns SL_OK or an sl_err (the row then reports
 * the variant as failed).  `loops` counts iterations of fn's loop, whatever an
 * iteration does; ops are what fn reports.  available=false marks a variant
 * that cannot run here (an allocator that is not installed): it is reported
 * with `reason` and never called.  fixed_loops, when not 0, is the loop count
 * (a workload that is one long run, like percpu's million objects), else the
 * harness chooses it (or takes --loops), never below min_loops: a variant
 * with a fixed cost per run (starting threads) sets min_loops so that cost
 * cannot pass for the cost of its operations while the count is chosen.
 */
typedef int (*sl_bench_fn)(void *arg, uint64_t loops, sl_bench_rec *rec);
typedef struct sl_bench_variant {
    const char *name;
    sl_bench_fn fn;
    void *arg;
    bool available;
    const char *reason;
    uint64_t fixed_loops;
    uint64_t min_loops;
} sl_bench_variant;

/* ------------------------------------------------------------------ */
/* Options every experiment takes (bench_options.c)                    */

typedef struct sl_bench_opts {
    sl_cli_format format;
    unsigned reps;           /* timed repetitions per variant */
    uint64_t loops;          /* 0: choose so one repetition lasts min_time_us */
    unsigned min_time_us;    /* target length of one repetition */
    int cpu;                 /* CPU to pin to; -1 none */
    bool quick;              /* tiny parameters (tests) */
    const char *out;         /* file for the output, NULL: stdout */
    sl_slub_kversion kernel; /* the SLUB model caches' kernel version ({0, 0}: the default, 6.17) */
} sl_bench_opts;

#define SL_BENCH_OPTS_USAGE                                                                                            \
    "[--format table|csv|json|time_bench] [--reps N] [--loops N] [--min-time-us N] [--cpu N|none] "                    \
    "[--quick] [--out FILE] [--kernel X.Y (the SLUB model's version)]"

/* Defaults: table, 15 repetitions, automatic loops of 2 ms, pinned to the
 * last CPU.  Many short repetitions suit a shared machine: the scheduler
 * slices a busy CPU every few ms, and the median then comes from the
 * repetitions no other task interrupted.  `quick` lowers them
 * (sl_bench_opts_finish). */
void sl_bench_opts_init(sl_bench_opts *o);
/*
 * Tries argv[*i] as a common option, consuming its value.  Returns 1 if it
 * was one, 0 if not (the command should try its own options), or
 * SL_CLI_USAGE after printing the usage error.
 */
int sl_bench_opts_parse(const sl_cli_command *cmd, int argc, char **argv, int *i, sl_bench_opts *o);
/* Fills what the user did not set: reps and min_time_us from `reps` and
 * `min_time_us` (0: the standard 15 and 2 ms), or tiny ones under --quick. */
void sl_bench_opts_finish(sl_bench_opts *o, unsigned reps, unsigned min_time_us);

/* A command's own option parser: like sl_bench_opts_parse (1 taken, 0 not
 * its option, SL_CLI_USAGE after a usage error). */
struct sl_bench_report;
typedef int (*sl_bench_own_opt)(const sl_cli_command *cmd, int argc, char **argv, int *i, void *ctx);
typedef int (*sl_bench_runner)(struct sl_bench_report *r, const struct sl_bench_opts *o, void *ctx);
/* A command's defaults where they differ from the standard ones (`all`). */
typedef struct sl_bench_defaults {
    sl_cli_format format;
    unsigned reps, min_time_us;
} sl_bench_defaults;
/*
 * The body of every experiment command: parses its own and the common
 * options over the defaults (NULL: standard), names the machine, calls run,
 * and writes the report (also when run failed: failed rows say why).
 * Returns the exit status (0, 1 when run or the writing failed,
 * SL_CLI_USAGE on a bad argument).
 */
int sl_bench_command(const sl_cli_command *cmd, int argc, char **argv, sl_bench_own_opt own, sl_bench_runner run,
                     void *ctx, const sl_bench_defaults *defaults);

/* ------------------------------------------------------------------ */
/* Report (bench_report.c)                                             */

#define SL_BENCH_NAME 40
#define SL_BENCH_MAX_EXTRA 4
#define SL_BENCH_MAX_PARAMS 12
#define SL_BENCH_MAX_NOTES 8

typedef struct sl_bench_meas {
    char group[SL_BENCH_NAME], row[SL_BENCH_NAME], variant[SL_BENCH_NAME];
    char phase[16]; /* "" or the phase name (alloc, free) */
    bool available;
    char reason[96]; /* why not available / why it failed */
    uint64_t ops;    /* operations per repetition (the divisor) */
    unsigned reps;
    sl_bench_stat cycles; /* TSC cycles per operation */
    sl_bench_stat ns;     /* wall-clock ns per operation */
    double period_ms;     /* median wall-clock length of one repetition */
    unsigned nextra;
    const char *extra_name[SL_BENCH_MAX_EXTRA];
    double extra[SL_BENCH_MAX_EXTRA];
} sl_bench_meas;

typedef struct sl_bench_ratio {
    char group[SL_BENCH_NAME], row[SL_BENCH_NAME], phase[16];
    char a[SL_BENCH_NAME], b[SL_BENCH_NAME]; /* ratio = cost(a) / cost(b) */
    sl_bench_stat ratio;                     /* over the interleaved repetitions */
    double improvement_pct;                  /* from the median ratio: how much cheaper a is than b */
} sl_bench_ratio;

typedef struct sl_bench_param {
    const char *name;
    const char *str; /* NULL: numeric */
    double num;
} sl_bench_param;

typedef struct sl_bench_exp {
    const char *name, *title, *seed; /* seed: the seed file's number, or NULL */
    const char *unit;                /* what one operation is */
    const char *ratio_style;         /* "improvement" (seed 000/004), "ratio" or "best" */
    sl_bench_param params[SL_BENCH_MAX_PARAMS];
    unsigned nparams;
    const char *notes[SL_BENCH_MAX_NOTES];
    unsigned nnotes;
    sl_bench_meas *meas;
    size_t nmeas, capmeas;
    sl_bench_ratio *ratios;
    size_t nratios, capratios;
    char kernel[8]; /* the "kernel" parameter's text (sl_bench_param_kernel) */
} sl_bench_exp;

struct sl_bench_report {
    sl_bench_machine machine;
    sl_bench_opts opts;
    sl_bench_exp *exps[8];
    unsigned nexps;
};
typedef struct sl_bench_report sl_bench_report;

/* Adds an experiment to the report; returns it (never NULL: aborts on OOM). */
sl_bench_exp *sl_bench_exp_new(sl_bench_report *r, const char *name, const char *title, const char *seed,
                               const char *unit, const char *ratio_style);
void sl_bench_param_num(sl_bench_exp *e, const char *name, double v);
void sl_bench_param_str(sl_bench_exp *e, const char *name, const char *v);
/* The parameter "kernel": the SLUB model's version (X.Y) and era, as o->kernel gives it. */
void sl_bench_param_kernel(sl_bench_exp *e, const sl_bench_opts *o);
void sl_bench_note(sl_bench_exp *e, const char *note);
/* Appends a measurement (copied); returns the stored one. */
sl_bench_meas *sl_bench_add_meas(sl_bench_exp *e, const sl_bench_meas *m);
sl_bench_ratio *sl_bench_add_ratio(sl_bench_exp *e, const sl_bench_ratio *q);
/* The stored measurement for (group, row, variant, phase), or NULL. */
const sl_bench_meas *sl_bench_find(const sl_bench_exp *e, const char *group, const char *row, const char *variant,
                                   const char *phase);
void sl_bench_report_free(sl_bench_report *r);

/* Writes the report in opts.format to f.  Returns 0 or -1 on a write error. */
int sl_bench_report_write(const sl_bench_report *r, FILE *f);
/* Writes to opts.out (or stdout) and frees the report; returns the CLI exit
 * status (0, or 1 when the file cannot be written). */
int sl_bench_report_finish(sl_bench_report *r, const char *cmd);

/* ------------------------------------------------------------------ */
/* Running a row (bench_harness.c)                                     */

/*
 * Runs the variants of one row interleaved: one warm-up run each (which also
 * picks the loop count when opts->loops is 0), then opts->reps repetitions in
 * alternating order.  Adds one measurement per variant and phase (named by
 * phase_names, or "" for single-phase rows) and, for every other variant,
 * its ratio to the base variant v[base] (per phase, the median of the
 * per-repetition ratios); base SL_BENCH_BASE_BEST takes the cheapest
 * variant by median cycles ("ratio to best").  extra_names (NULL-ended)
 * names the rec.extra[] counters to report as medians, or is NULL.  Returns
 * SL_OK, or the first error a variant returned (its measurement then says
 * why).
 */
#define SL_BENCH_BASE_BEST (-1)
int sl_bench_row(sl_bench_exp *e, const sl_bench_opts *o, const char *group, const char *row, const sl_bench_variant *v,
                 unsigned nv, const char *const *phase_names, const char *const *extra_names, int base);

/* The bulk sizes of seed 000 (slab_bulk_test01): 1 2 3 4 8 16 30 32 34 48 64 128 158 250. */
extern const unsigned sl_bench_bulk_sizes[14];

/* ------------------------------------------------------------------ */
/* Experiments, callable from `all` (cmd_bench_*.c)                    */

/* Each adds its experiment to r and returns 0, or 1 when a row failed (it is in the report with the reason). */
int sl_bench_fastpath_run(sl_bench_report *r, const sl_bench_opts *o);
int sl_bench_bulk_run(sl_bench_report *r, const sl_bench_opts *o);
int sl_bench_kmalloc_run(sl_bench_report *r, const sl_bench_opts *o);
/* objects per run; budget_s bounds one run (a run over it is reported as failed) */
int sl_bench_percpu_run(sl_bench_report *r, const sl_bench_opts *o, unsigned long objects, unsigned budget_s);
int sl_bench_compare_run(sl_bench_report *r, const sl_bench_opts *o, unsigned max_size, bool want_burst,
                         bool want_prodcons);
/* 1..max_threads threads; every remote_every-th object is freed by the next CPU */
int sl_bench_scale_run(sl_bench_report *r, const sl_bench_opts *o, unsigned max_threads, unsigned remote_every,
                       unsigned nodes);
/* batch sizes up to max_batch; sheaf_capacity of the sheaves variant */
int sl_bench_sheaves_run(sl_bench_report *r, const sl_bench_opts *o, unsigned max_batch, unsigned sheaf_capacity,
                         uint32_t size);

#endif
