/*
 * cmd_replay.c - `slablab replay`: a kmem/percpu ftrace trace (text, gzip,
 * or a .slabcap from `slablab capture`) through the SLUB and percpu
 * models; per-cache and per-call-site tables, the percpu chunks, the parse
 * accounting; JSON; a Perfetto export.  The work is the replay layer's
 * (src/replay), which the browser runs too.
 */
#include "cli.h"
#include "input.h"
#include "outfile.h"

#include "../src/replay/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int run_replay(int argc, char **argv);
SL_CLI_COMMAND(replay, .name = "replay",
               .summary = "replay an ftrace kmem/percpu trace (.txt, .gz, .slabcap) through the models",
               .usage = "slablab replay (FILE | -) [--cache NAME] [--kernel X.Y[,X.Y]] [--format table|json]\n"
                        "                 [--perfetto OUT.json] [--cpus N] [--zone-mb N] [--pcpu-unit-size BYTES]\n"
                        "                 [--top N (table rows, default 25; 0 = all)] [--validate-each]",
               .run = run_replay)

typedef struct export_ctx {
    sl_replay *r;
    sl_perfetto *pf;
    FILE *out;
} export_ctx;

static const char *cache_name(void *user, unsigned cache)
{
    export_ctx *x = user;
    sl_replay_cache_info ci;
    return sl_replay_cache_info_get(x->r, cache, 0, &ci) == SL_OK ? ci.name : NULL;
}

static bool write_file(void *user, const void *data, size_t len)
{
    return fwrite(data, 1, len, ((export_ctx *)user)->out) == len;
}

static void on_op(void *user, const sl_replay_op *op) { sl_perfetto_op(((export_ctx *)user)->pf, op); }

/*
 * This process's peak resident set: VmHWM, which exec resets (getrusage's
 * ru_maxrss also keeps the high-water mark of the process that forked us).
 */
static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    if (kb < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kb = ru.ru_maxrss;
    }
    return kb;
}

static void human_bytes(char *buf, size_t len, uint64_t v)
{
    if (v >= 10ull << 30)
        snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
    else if (v >= 10ull << 20)
        snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
    else if (v >= 10ull << 10)
        snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
    else
        snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void human_time(char *buf, size_t len, uint64_t ns, uint64_t n)
{
    if (!n)
        snprintf(buf, len, "-");
    else if (ns >= 10000000000ull)
        snprintf(buf, len, "%.0fs", (double)ns / 1e9);
    else if (ns >= 10000000ull)
        snprintf(buf, len, "%.0fms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.0fus", (double)ns / 1e3);
}

static void print_caches(sl_replay *r, unsigned kernels, unsigned top)
{
    unsigned n = sl_replay_cache_count(r);
    unsigned *order = sl_replay_order(r, SL_REPLAY_ORDER_CACHES);
    if (!order)
        return;
    printf("\nCaches (by allocations%s)\n", kernels > 1 ? "; the model columns are the first kernel's, each kernel's below" : "");
    printf("%-24s %8s %8s %7s %8s %8s %5s %7s %6s %7s %7s | %5s %6s %6s %4s %5s\n", "cache", "allocs", "frees",
           "unknown", "req", "alloc", "frag%", "peak", "xcpu", "life50", "life99", "fast%", "slabs+", "slabs-",
           "part", "geom");
    for (unsigned i = 0; i < n && (!top || i < top); i++) {
        sl_replay_cache_info ci;
        sl_replay_cache_info_get(r, order[i], 0, &ci);
        char req[16], alloc[16], p50[16], p99[16];
        human_bytes(req, sizeof req, ci.bytes_req);
        human_bytes(alloc, sizeof alloc, ci.bytes_alloc);
        human_time(p50, sizeof p50, ci.lifetime_p50_ns, ci.lifetimes);
        human_time(p99, sizeof p99, ci.lifetime_p99_ns, ci.lifetimes);
        printf("%-24.24s %8llu %8llu %7llu %8s %8s %5.1f %7llu %6llu %7s %7s |", ci.name, (unsigned long long)ci.allocs,
               (unsigned long long)ci.frees, (unsigned long long)ci.freed_unknown, req, alloc,
               ci.bytes_alloc ? 100.0 * (double)(ci.bytes_alloc - ci.bytes_req) / (double)ci.bytes_alloc : 0.0,
               (unsigned long long)ci.peak_live, (unsigned long long)ci.cross_cpu_frees, p50, p99);
        if (!ci.modelled) {
            printf(" %5s %6s %6s %4s %5s\n", "-", "-", "-", "-", "-");
            continue;
        }
        uint64_t ops = ci.allocs + ci.frees, slow = ci.alloc_slowpath + ci.free_slowpath;
        printf(" %5.1f %6llu %6llu %4u %5s\n", ops ? 100.0 * (double)(ops - slow) / (double)ops : 0.0,
               (unsigned long long)ci.slabs_allocated, (unsigned long long)ci.slabs_freed, ci.max_partial,
               ci.geometry_matches == 1 ? "ok" : ci.geometry_matches == 0 ? "DIFF" : ci.geometry_from_sysfs ? "?" : "calc");
    }
    if (top && n > top)
        printf("(%u more caches; --top 0 shows all)\n", n - top);
    free(order);
}

/* The layout of `perf kmem stat --caller`. */
static void print_sites(sl_replay *r, unsigned top)
{
    unsigned n = sl_replay_site_count(r);
    if (!n)
        return;
    unsigned *order = sl_replay_order(r, SL_REPLAY_ORDER_SITES);
    if (!order)
        return;
    static const char rule[] = "-----------------------------------------------------------------------------------------"
                               "----------------";
    printf("\n%s\n %-34s | Total_alloc/Per | Total_req/Per   | Hit      | Ping-pong | Frag\n%s\n", rule, "Callsite",
           rule);
    for (unsigned i = 0; i < n && (!top || i < top); i++) {
        sl_replay_site_info s;
        sl_replay_site_info_get(r, order[i], &s);
        char a[32], q[32];
        snprintf(a, sizeof a, "%llu/%llu", (unsigned long long)s.bytes_alloc,
                 (unsigned long long)(s.allocs ? s.bytes_alloc / s.allocs : 0));
        snprintf(q, sizeof q, "%llu/%llu", (unsigned long long)s.bytes_req,
                 (unsigned long long)(s.allocs ? s.bytes_req / s.allocs : 0));
        printf(" %-34.34s | %15s | %15s | %8llu | %9llu | %7.3f%%\n", s.site, a, q, (unsigned long long)s.allocs,
               (unsigned long long)s.cross_cpu,
               s.bytes_alloc ? 100.0 * (double)(s.bytes_alloc - s.bytes_req) / (double)s.bytes_alloc : 0.0);
    }
    if (top && n > top)
        printf(" ... (%u more call sites; --top 0 shows all)\n", n - top);
    printf("%s\n", rule);
    free(order);
}

static void print_chunks(sl_replay *r)
{
    unsigned n = sl_replay_chunk_count(r);
    if (!n)
        return;
    printf("\npercpu chunks (model free/contig bytes count only the trace's areas)\n");
    printf("%-18s %-16s %7s %7s %7s %6s %10s %10s %6s\n", "base_addr", "seen", "allocs", "frees", "unknown", "live",
           "free B", "contig B", "pages");
    for (unsigned i = 0; i < n; i++) {
        sl_replay_chunk_info c;
        sl_replay_chunk_info_get(r, i, &c);
        printf("%016llx   %-16s %7llu %7llu %7llu %6u %10u %10u %6u%s\n", (unsigned long long)c.base,
               c.created_in_trace ? "created" : "before the trace", (unsigned long long)c.allocs,
               (unsigned long long)c.frees, (unsigned long long)c.freed_unknown, c.live, c.free_bytes,
               c.contig_bytes, c.nr_populated, c.destroyed ? "  destroyed" : "");
    }
}

/*
 * One section per kernel model: the SLUB rules its caches followed, its
 * sheaves counters, and per cache what the rules change (fast-path share,
 * slabs, the longest partial list, sheaf capacity), so two versions read
 * side by side on the same trace.
 */
static void print_models(sl_replay *r, unsigned top, bool rt)
{
    sl_replay_summary s;
    sl_replay_summary_get(r, &s);
    unsigned n = sl_replay_cache_count(r);
    unsigned *order = sl_replay_order(r, SL_REPLAY_ORDER_CACHES);
    if (!order)
        return;
    for (unsigned k = 0; k < s.nkernels; k++) {
        sl_replay_model_info mi;
        sl_replay_model_info_get(r, k, &mi);
        printf("\nmodel: kernel %s%s, SLUB rules of %s (%s), %u CPUs, %u caches (%u with sheaves), %llu errors%s\n",
               mi.kernel[0] ? mi.kernel : "unknown", rt ? " PREEMPT_RT (SLUB's rt paths)" : "", mi.slub_kernel,
               mi.slub_era, s.model_cpus, mi.caches_modelled, mi.caches_with_sheaves, (unsigned long long)mi.errors,
               mi.errors ? " (--format json lists them with their lines)" : "");
        if (mi.notice[0])
            printf("  notice: %s\n", mi.notice);
        if (mi.caches_with_sheaves)
            printf("  sheaves: %llu allocs and %llu frees on a CPU sheaf, %llu refills, %llu flushes, barn %llu/%llu "
                   "get/fail, %llu/%llu put/fail\n",
                   (unsigned long long)mi.alloc_cpu_sheaf, (unsigned long long)mi.free_cpu_sheaf,
                   (unsigned long long)mi.sheaf_refill, (unsigned long long)mi.sheaf_flush,
                   (unsigned long long)mi.barn_get, (unsigned long long)mi.barn_get_fail,
                   (unsigned long long)mi.barn_put, (unsigned long long)mi.barn_put_fail);
        printf("  %-24s %6s %7s %7s %7s %5s %6s %7s %7s\n", "cache", "fast%", "slabs+", "slabs-", "slabs", "part", "sheaf",
               "refills", "flushes");
        for (unsigned i = 0, shown = 0; i < n && (!top || shown < top); i++) {
            sl_replay_cache_info ci;
            sl_replay_cache_info_get(r, order[i], k, &ci);
            if (!ci.modelled)
                continue;
            shown++;
            uint64_t ops = ci.allocs + ci.frees, slow = ci.alloc_slowpath + ci.free_slowpath;
            printf("  %-24.24s %6.1f %7llu %7llu %7u %5u %6u %7llu %7llu\n", ci.name,
                   ops ? 100.0 * (double)(ops - slow) / (double)ops : 0.0, (unsigned long long)ci.slabs_allocated,
                   (unsigned long long)ci.slabs_freed, ci.slabs, ci.max_partial, ci.sheaf_capacity,
                   (unsigned long long)ci.sheaf_refills, (unsigned long long)ci.sheaf_flushes);
        }
    }
    free(order);
}

static void print_table(sl_replay *r, const char *file, unsigned top)
{
    sl_replay_summary s;
    sl_replay_summary_get(r, &s);
    printf("slablab replay %s\n", file);
    for (unsigned i = 0; i < s.nwarnings; i++)
        printf("warning: %s\n", s.warnings[i]);
    printf("events: %llu lines, %llu parsed, %llu skipped (%llu header, %llu other events, %llu bad), %llu lost by "
           "the kernel\n",
           (unsigned long long)s.lines, (unsigned long long)s.parsed, (unsigned long long)s.skipped,
           (unsigned long long)s.header_lines, (unsigned long long)s.other_events, (unsigned long long)s.bad_lines,
           (unsigned long long)s.lost_events);
    printf("pairs: %llu matched, %llu live at the end, %llu freed but allocated before the trace, %llu kfree(NULL), "
           "%llu frees without an event (allocated again while live)\n",
           (unsigned long long)s.matched, (unsigned long long)s.live_at_end, (unsigned long long)s.freed_unknown,
           (unsigned long long)s.null_frees, (unsigned long long)s.untraced_frees);
    print_caches(r, s.nkernels, top);
    print_sites(r, top);
    print_chunks(r);
    print_models(r, top, s.preempt_rt);
}



static int run_replay(int argc, char **argv)
{
    const char *file = NULL, *perfetto = NULL, *kernel = NULL, *cache = NULL;
    sl_cli_format fmt = SL_FMT_TABLE;
    unsigned long cpus = 0, zone_mb = 0, unit = 0, top = 25;
    bool validate_each = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--cache") && has_value) {
            cache = argv[++i];
        } else if (!strcmp(a, "--kernel") && has_value) {
            kernel = argv[++i];
            sl_kernel_version v[SL_REPLAY_MAX_KERNELS];
            char err[200];
            if (sl_kernel_versions_parse(kernel, v, err, sizeof err) < 0)
                return sl_cli_usage_error(&sl_cli_cmd_replay, "%s", err);
        } else if (!strcmp(a, "--format") && has_value) {
            if (!sl_cli_parse_format(argv[++i], &fmt) || fmt == SL_FMT_CSV)
                return sl_cli_usage_error(&sl_cli_cmd_replay, "--format takes table or json");
        } else if (!strcmp(a, "--perfetto") && has_value) {
            perfetto = argv[++i];
        } else if (!strcmp(a, "--cpus") && has_value) {
            if (!sl_cli_parse_ulong(argv[++i], 1, 4096, &cpus))
                return sl_cli_usage_error(&sl_cli_cmd_replay, "--cpus takes 1 to 4096");
        } else if (!strcmp(a, "--zone-mb") && has_value) {
            if (!sl_cli_parse_ulong(argv[++i], 4, 65536, &zone_mb))
                return sl_cli_usage_error(&sl_cli_cmd_replay, "--zone-mb takes 4 to 65536");
        } else if (!strcmp(a, "--pcpu-unit-size") && has_value) {
            if (!sl_cli_parse_ulong(argv[++i], 4096, 1ul << 28, &unit) || unit % 4096)
                return sl_cli_usage_error(&sl_cli_cmd_replay, "--pcpu-unit-size takes a multiple of 4096 up to 256 MiB");
        } else if (!strcmp(a, "--top") && has_value) {
            if (!sl_cli_parse_ulong(argv[++i], 0, 1000000, &top))
                return sl_cli_usage_error(&sl_cli_cmd_replay, "--top takes a number (0 = all)");
        } else if (!strcmp(a, "--validate-each")) {
            validate_each = true;
        } else if (a[0] == '-' && a[1] == '-') {
            return sl_cli_usage_error(&sl_cli_cmd_replay, "%s: unknown option, or it needs a value", a);
        } else if (!file) {
            file = a;
        } else {
            return sl_cli_usage_error(&sl_cli_cmd_replay, "one input file only ('%s' is a second)", a);
        }
    }
    if (!file)
        return sl_cli_usage_error(&sl_cli_cmd_replay, "give the trace file (or - for standard input)");
    char why[512];
    FILE *in = sl_cli_open_input(file, why, sizeof why);
    if (!in) {
        fprintf(stderr, "slablab replay: %s\n", why);
        return 1;
    }
    export_ctx x = {0};
    sl_replay_config cfg = {.kernel = kernel, .cache = cache, .cpus = (unsigned)cpus, .zone_bytes = zone_mb << 20,
                            .pcpu_unit_size = unit, .validate_each = validate_each};
    /* The Perfetto file is written beside its target and renamed only once the replay succeeded (outfile.h). */
    sl_outfile pf_out = {0};
    if (perfetto) {
        if (sl_outfile_open(&pf_out, perfetto, file, why, sizeof why) != 0) {
            fprintf(stderr, "slablab replay: --perfetto: %s\n", why);
            sl_cli_close_input(in);
            return 1;
        }
        x.out = pf_out.f;
        cfg.on_op = on_op;
        cfg.user = &x;
    }
    int rc = sl_replay_create(&cfg, &x.r);
    if (rc != SL_OK) {
        fprintf(stderr, "slablab replay: %s\n", sl_strerror(rc));
        if (perfetto)
            sl_outfile_abort(&pf_out);
        sl_cli_close_input(in);
        return 1;
    }
    if (perfetto) {
        sl_perfetto_config pc = {.sink = write_file, .user = &x, .cache_name = cache_name, .names_user = &x,
                                 .counter_interval_ns = 100000};
        x.pf = sl_perfetto_begin(&pc);
    }
    static uint8_t buf[1 << 20];
    size_t n;
    rc = SL_OK;
    while (rc == SL_OK && (n = fread(buf, 1, sizeof buf, in)) > 0)
        rc = sl_replay_feed(x.r, buf, n, NULL);
    int read_errno = ferror(in) ? errno : 0;
    sl_cli_close_input(in);
    if (rc == SL_OK && !read_errno)
        rc = sl_replay_finish(x.r);
    int status = 0;
    if (x.pf && sl_perfetto_end(x.pf) != SL_OK) {
        fprintf(stderr, "slablab replay: writing %s failed\n", perfetto);
        status = 1;
    }
    /* A failed replay leaves no complete-looking Perfetto file: the temporary goes, an old file stays. */
    if (perfetto && (status || rc != SL_OK || read_errno || sl_replay_error(x.r))) {
        sl_outfile_abort(&pf_out);
        if (!status)
            fprintf(stderr, "slablab replay: %s not written: the replay failed\n", perfetto);
        status = 1;
    } else if (perfetto && sl_outfile_commit(&pf_out, why, sizeof why) != 0) {
        fprintf(stderr, "slablab replay: --perfetto: %s\n", why);
        status = 1;
    }
    if (read_errno) {
        fprintf(stderr, "slablab replay: reading %s failed: %s\n", file, strerror(read_errno));
        sl_replay_destroy(x.r);
        return 1;
    }
    long peak_kb = peak_rss_kb();
    char extra[64];
    snprintf(extra, sizeof extra, "\"peak_rss_kb\": %ld", peak_kb);
    sl_strbuf json = {0};
    sl_replay_json(x.r, &json, extra);
    const char *err = sl_replay_error(x.r);
    if (err) {
        fprintf(stderr, "slablab replay: %s: %s\n", file, err);
        status = 1;
    }
    if (fmt == SL_FMT_JSON) {
        fputs(json.data ? json.data : "{}\n", stdout);
    } else if (!err) {
        print_table(x.r, file, (unsigned)top);
        sl_replay_progress p;
        sl_replay_progress_get(x.r, &p);
        printf("%.3f s, %.0f events/s (%.0f per CPU-second), peak RSS %ld KiB\n", p.elapsed_s, p.events_per_s,
               p.events_per_cpu_s, peak_kb);
        if (perfetto)
            printf("Perfetto trace: %s (open it at https://ui.perfetto.dev)\n", perfetto);
    }
    sl_strbuf_free(&json);
    sl_replay_destroy(x.r);
    return status;
}
