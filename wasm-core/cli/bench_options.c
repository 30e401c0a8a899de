/*
 * bench_options.c - the options every experiment subcommand shares
 * (--format, --reps, --loops, --min-time-us, --cpu, --quick, --out,
 * --kernel) and their defaults.  --format time_bench prints
 * prototype-kernel's lines (bench_report.c) so that figures can be diffed
 * against a kernel module's.  --kernel X.Y gives the SLUB model caches an
 * experiment opens that kernel's rules (eras.h), so the seeds' tables can
 * be rerun on, say, 7.0's sheaves.  A command parses its own options first and hands the
 * rest here, so each command's usage line is its options plus
 * SL_BENCH_OPTS_USAGE.
 */
#include "bench.h"

#include <string.h>

#define DEFAULT_REPS 15
#define DEFAULT_MIN_TIME_US 2000
#define QUICK_REPS 2
#define QUICK_MIN_TIME_US 300

void sl_bench_opts_init(sl_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = SL_FMT_TABLE;
    unsigned cpus = sl_host_cpus();
    o->cpu = (int)(cpus ? cpus - 1 : 0);
}

/* The value of option argv[*i], advancing *i; NULL if it is missing. */
static const char *value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

int sl_bench_opts_parse(const sl_cli_command *cmd, int argc, char **argv, int *i, sl_bench_opts *o)
{
    const char *a = argv[*i];
    unsigned long v;
    if (!strcmp(a, "--format")) {
        const char *s = value(argc, argv, i);
        if (s && !strcmp(s, "time_bench"))
            o->format = SL_FMT_TIME_BENCH;
        else if (!sl_cli_parse_format(s, &o->format))
            return sl_cli_usage_error(cmd, "--format takes table, csv, json or time_bench");
    } else if (!strcmp(a, "--reps")) {
        if (!sl_cli_parse_ulong(value(argc, argv, i), 1, 1000, &v))
            return sl_cli_usage_error(cmd, "--reps takes 1 to 1000");
        o->reps = (unsigned)v;
    } else if (!strcmp(a, "--loops")) {
        if (!sl_cli_parse_ulong(value(argc, argv, i), 1, 4000000000ul, &v))
            return sl_cli_usage_error(cmd, "--loops takes 1 to 4000000000");
        o->loops = v;
    } else if (!strcmp(a, "--min-time-us")) {
        if (!sl_cli_parse_ulong(value(argc, argv, i), 1, 10000000, &v))
            return sl_cli_usage_error(cmd, "--min-time-us takes 1 to 10000000");
        o->min_time_us = (unsigned)v;
    } else if (!strcmp(a, "--cpu")) {
        const char *s = value(argc, argv, i);
        if (s && !strcmp(s, "none"))
            o->cpu = -1;
        else if (sl_cli_parse_ulong(s, 0, sl_host_cpus() - 1, &v))
            o->cpu = (int)v;
        else
            return sl_cli_usage_error(cmd, "--cpu takes a CPU number from 0 to %u, or none", sl_host_cpus() - 1);
    } else if (!strcmp(a, "--quick")) {
        o->quick = true;
    } else if (!strcmp(a, "--kernel")) {
        const char *why;
        if (sl_slub_kversion_parse(value(argc, argv, i), &o->kernel, &why) != SL_OK)
            return sl_cli_usage_error(cmd, "--kernel: %s", why);
    } else if (!strcmp(a, "--out")) {
        const char *s = value(argc, argv, i);
        if (!s || !*s)
            return sl_cli_usage_error(cmd, "--out takes a file name");
        o->out = s;
    } else {
        return 0;
    }
    return 1;
}

void sl_bench_opts_finish(sl_bench_opts *o, unsigned reps, unsigned min_time_us)
{
    if (!o->reps)
        o->reps = o->quick ? QUICK_REPS : reps ? reps : DEFAULT_REPS;
    if (!o->min_time_us)
        o->min_time_us = o->quick ? QUICK_MIN_TIME_US : min_time_us ? min_time_us : DEFAULT_MIN_TIME_US;
}

int sl_bench_command(const sl_cli_command *cmd, int argc, char **argv, sl_bench_own_opt own, sl_bench_runner run,
                     void *ctx, const sl_bench_defaults *defaults)
{
    sl_bench_report r;
    memset(&r, 0, sizeof r);
    sl_bench_opts_init(&r.opts);
    if (defaults)
        r.opts.format = defaults->format;
    for (int i = 1; i < argc; i++) {
        int rc = own ? own(cmd, argc, argv, &i, ctx) : 0;
        if (rc == 0)
            rc = sl_bench_opts_parse(cmd, argc, argv, &i, &r.opts);
        if (rc == 0)
            return sl_cli_usage_error(cmd, "unknown argument '%s'", argv[i]);
        if (rc != 1)
            return rc;
    }
    sl_bench_opts_finish(&r.opts, defaults ? defaults->reps : 0, defaults ? defaults->min_time_us : 0);
    sl_bench_machine_probe(&r.machine, r.opts.cpu, r.opts.quick ? 2 : 50);
    /* A failed row is in the report with its reason: write it either way. */
    int rc = run(&r, &r.opts, ctx);
    int wrc = sl_bench_report_finish(&r, cmd->name);
    return rc ? 1 : wrc;
}
