/*
 * test_bench_harness.c - sl_bench_row, the part of the benchmark harness
 * that decides what gets run and what gets reported: interleaving order,
 * loop-count choice (automatic, --loops, fixed_loops, min_loops),
 * per-repetition ratios to a base or to the best variant, two-phase rows,
 * variants that are unavailable or fail, and the report's lookup.
 *
 * The timed functions here do not time anything: they write the intervals
 * into the record themselves, so every figure the harness derives is known
 * exactly.  The CLI's sources are not in the core library, so the files
 * under test are compiled in; sl_cli_json_string (the dispatcher's, in
 * cli/main.c) is given here because bench_report.c's JSON writer names it.
 */
#include "check.h"

#include "../cli/bench_harness.c"
#include "../cli/bench_report.c"
#include "../cli/bench_stats.c"
#include "../cli/outfile.c"

#include <math.h>

void sl_cli_json_string(FILE *f, const char *s) { fprintf(f, "\"%s\"", s); }

static bool near(double a, double b) { return fabs(a - b) < 1e-9; }

/* A fake variant: each loop "costs" cost_per_loop cycles and ns, ops per loop `per_loop`. */
typedef struct fake {
    double cost_per_loop;
    unsigned per_loop;
    unsigned phases;
    int fail_on_call; /* 0: never; n: return SL_ECORRUPT on the n-th call */
    unsigned calls;
    uint64_t last_loops;
    char id;
} fake;

static char order_log[256];
static unsigned order_len;

static int fake_fn(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    fake *f = arg;
    f->calls++;
    f->last_loops = loops;
    if (order_len < sizeof order_log - 1)
        order_log[order_len++] = f->id;
    if (f->fail_on_call && f->calls == (unsigned)f->fail_on_call)
        return SL_ECORRUPT;
    for (unsigned p = 0; p < f->phases; p++) {
        double cost = f->cost_per_loop * (p + 1); /* phase 2 costs twice phase 1 */
        rec->tsc[p] = (uint64_t)(cost * (double)loops);
        rec->ns[p] = (uint64_t)(cost * (double)loops);
        rec->ops[p] = loops * f->per_loop;
    }
    rec->nphases = f->phases;
    rec->extra[0] = 7;
    return SL_OK;
}

static sl_bench_opts opts(unsigned reps, uint64_t loops)
{
    sl_bench_opts o;
    memset(&o, 0, sizeof o);
    o.cpu = -1;
    o.reps = reps;
    o.loops = loops;
    o.min_time_us = 100;
    return o;
}

static void test_interleaves_alternating_order(void)
{
    sl_bench_report r;
    memset(&r, 0, sizeof r);
    sl_bench_exp *e = sl_bench_exp_new(&r, "bulk", "t", NULL, "op", "ratio");
    fake a = {10, 1, 1, 0, 0, 0, 'A'}, b = {20, 1, 1, 0, 0, 0, 'B'}, c = {40, 1, 1, 0, 0, 0, 'C'};
    sl_bench_variant v[3] = {{.name = "a", .fn = fake_fn, .arg = &a, .available = true},
                             {.name = "b", .fn = fake_fn, .arg = &b, .available = true},
                             {.name = "c", .fn = fake_fn, .arg = &c, .available = true}};
    sl_bench_opts o = opts(4, 1000);
    order_len = 0;
    SL_CHECK_EQ(sl_bench_row(e, &o, "g", "1", v, 3, NULL, NULL, 0), SL_OK);
    order_log[order_len] = '\0';
    /* one warm-up each, then A B C, C B A, A B C, C B A */
    SL_CHECK(!strcmp(order_log, "ABCABCCBAABCCBA"));
    const sl_bench_meas *m = sl_bench_find(e, "g", "1", "b", "");
    SL_REQUIRE(m && m->available);
    SL_CHECK(near(m->cycles.median, 20) && near(m->cycles.min, 20) && near(m->cycles.max, 20));
    SL_CHECK(near(m->ns.median, 20));
    SL_CHECK_EQ(m->ops, 1000);
    SL_CHECK_EQ(m->reps, 4);
    SL_CHECK(near(m->period_ms, 20000.0 / 1e6));
    /* ratios of b and c to the base a, as the seeds' "improved" */
    SL_CHECK_EQ(e->nratios, 2);
    SL_CHECK(!strcmp(e->ratios[0].a, "b") && !strcmp(e->ratios[0].b, "a"));
    SL_CHECK(near(e->ratios[0].ratio.median, 2.0));
    SL_CHECK(near(e->ratios[0].improvement_pct, -100.0));
    SL_CHECK(near(e->ratios[1].ratio.median, 4.0));
    sl_bench_report_free(&r);
}

static void test_ratio_to_best_and_per_object(void)
{
    sl_bench_report r;
    memset(&r, 0, sizeof r);
    sl_bench_exp *e = sl_bench_exp_new(&r, "compare", "t", NULL, "op", "best");
    /* b does 8 objects per loop at 40 per loop: 5 per object, the cheapest */
    fake a = {30, 1, 1, 0, 0, 0, 'A'}, b = {40, 8, 1, 0, 0, 0, 'B'}, c = {10, 1, 1, 0, 0, 0, 'C'};
    sl_bench_variant v[4] = {
        {.name = "a", .fn = fake_fn, .arg = &a, .available = true},
        {.name = "b", .fn = fake_fn, .arg = &b, .available = true},
        {.name = "c", .fn = fake_fn, .arg = &c, .available = true},
        {.name = "gone", .fn = fake_fn, .arg = NULL, .available = false, .reason = "not installed (libgone.so)"}};
    sl_bench_opts o = opts(3, 100);
    SL_CHECK_EQ(sl_bench_row(e, &o, "pair", "16", v, 4, NULL, NULL, SL_BENCH_BASE_BEST), SL_OK);
    const sl_bench_meas *mb = sl_bench_find(e, "pair", "16", "b", "");
    SL_REQUIRE(mb);
    SL_CHECK(near(mb->cycles.median, 5.0));
    SL_CHECK_EQ(mb->ops, 800);
    SL_CHECK_EQ(e->nratios, 2);
    for (size_t i = 0; i < e->nratios; i++)
        SL_CHECK(!strcmp(e->ratios[i].b, "b"));
    SL_CHECK(near(e->ratios[0].ratio.median, 6.0)); /* a: 30 / 5 */
    SL_CHECK(near(e->ratios[1].ratio.median, 2.0)); /* c: 10 / 5 */
    const sl_bench_meas *g = sl_bench_find(e, "pair", "16", "gone", "");
    SL_REQUIRE(g);
    SL_CHECK(!g->available);
    SL_CHECK(!strcmp(g->reason, "not installed (libgone.so)"));
    sl_bench_report_free(&r);
}

static void test_failing_variant_is_reported_not_fatal(void)
{
    sl_bench_report r;
    memset(&r, 0, sizeof r);
    sl_bench_exp *e = sl_bench_exp_new(&r, "bulk", "t", NULL, "op", "improvement");
    fake a = {10, 1, 1, 0, 0, 0, 'A'}, b = {5, 1, 1, 3, 0, 0, 'B'}; /* b fails on its 3rd call */
    sl_bench_variant v[2] = {{.name = "a", .fn = fake_fn, .arg = &a, .available = true},
                             {.name = "b", .fn = fake_fn, .arg = &b, .available = true}};
    sl_bench_opts o = opts(5, 10);
    SL_CHECK_EQ(sl_bench_row(e, &o, "g", "1", v, 2, NULL, NULL, 0), SL_ECORRUPT);
    SL_CHECK_EQ(b.calls, 3); /* never called again after failing */
    SL_CHECK_EQ(a.calls, 6);
    const sl_bench_meas *mb = sl_bench_find(e, "g", "1", "b", "");
    SL_REQUIRE(mb);
    SL_CHECK(!mb->available);
    SL_CHECK(strstr(mb->reason, "failed") != NULL);
    SL_CHECK_EQ(e->nratios, 0);
    sl_bench_report_free(&r);
}

/* A report whose every row failed: written (each row says why), and the exit status is 1, not 0. */
static void test_all_rows_failed_exits_nonzero(void)
{
    char dir[] = "/tmp/slablab-bench-XXXXXX", path[64];
    if (!mkdtemp(dir))
        SL_SKIP("no temporary directory");
    snprintf(path, sizeof path, "%s/report.json", dir);
    for (int one_ok = 0; one_ok < 2; one_ok++) {
        sl_bench_report r;
        memset(&r, 0, sizeof r);
        r.opts.format = SL_FMT_JSON;
        r.opts.out = path;
        sl_bench_exp *e = sl_bench_exp_new(&r, "bulk", "t", NULL, "op", "improvement");
        fake a = {10, 1, 1, one_ok ? 0 : 1, 0, 0, 'A'}, b = {5, 1, 1, 1, 0, 0, 'B'};
        sl_bench_variant v[3] = {{.name = "a", .fn = fake_fn, .arg = &a, .available = true},
                                 {.name = "b", .fn = fake_fn, .arg = &b, .available = true},
                                 {.name = "c", .reason = "not built here", .available = false}};
        sl_bench_opts o = opts(3, 10);
        sl_bench_row(e, &o, "g", "1", v, 3, NULL, NULL, 0);
        SL_CHECK_EQ(sl_bench_report_finish(&r, "bulk"), one_ok ? 0 : 1);
        FILE *f = fopen(path, "r");
        char text[8192] = {0};
        size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f)
            fclose(f);
        SL_CHECK(n > 0 && strstr(text, "\"bulk\"") != NULL);
        SL_CHECK(one_ok || strstr(text, "failed") != NULL);
    }
    unlink(path);
    rmdir(dir);
}

static void test_two_phases_and_extras(void)
{
    sl_bench_report r;
    memset(&r, 0, sizeof r);
    sl_bench_exp *e = sl_bench_exp_new(&r, "kmalloc", "t", "002", "call", "improvement");
    fake a = {100, 1, 2, 0, 0, 0, 'A'}, b = {50, 1, 2, 0, 0, 0, 'B'};
    sl_bench_variant v[2] = {{.name = "before", .fn = fake_fn, .arg = &a, .available = true},
                             {.name = "after", .fn = fake_fn, .arg = &b, .available = true}};
    static const char *const phases[] = {"alloc", "free"};
    static const char *const extras[] = {"seven", NULL};
    sl_bench_opts o = opts(3, 10);
    SL_CHECK_EQ(sl_bench_row(e, &o, "kmalloc", "32", v, 2, phases, extras, 0), SL_OK);
    const sl_bench_meas *f = sl_bench_find(e, "kmalloc", "32", "before", "free");
    SL_REQUIRE(f);
    SL_CHECK(near(f->cycles.median, 200));
    SL_CHECK_EQ(f->nextra, 1);
    SL_CHECK(near(f->extra[0], 7) && !strcmp(f->extra_name[0], "seven"));
    SL_CHECK_EQ(e->nratios, 2);
    for (size_t i = 0; i < e->nratios; i++) {
        SL_CHECK(near(e->ratios[i].ratio.median, 0.5));
        SL_CHECK(near(e->ratios[i].improvement_pct, 50.0));
    }
    SL_CHECK(!strcmp(e->ratios[1].phase, "free"));
    sl_bench_report_free(&r);
}

static void test_loop_count_choice(void)
{
    sl_bench_report r;
    memset(&r, 0, sizeof r);
    sl_bench_exp *e = sl_bench_exp_new(&r, "scale", "t", NULL, "op", "ratio");
    /* automatic: 1000 ns per loop, target 100 us -> 100 loops */
    fake a = {1000, 1, 1, 0, 0, 0, 'A'};
    sl_bench_variant v = {.name = "a", .fn = fake_fn, .arg = &a, .available = true};
    sl_bench_opts o = opts(1, 0);
    SL_CHECK_EQ(sl_bench_row(e, &o, "g", "auto", &v, 1, NULL, NULL, 0), SL_OK);
    SL_CHECK_EQ(a.last_loops, 100);
    /* min_loops wins over the automatic choice */
    v.min_loops = 5000;
    SL_CHECK_EQ(sl_bench_row(e, &o, "g", "min", &v, 1, NULL, NULL, 0), SL_OK);
    SL_CHECK_EQ(a.last_loops, 5000);
    /* fixed_loops wins over everything, --loops included */
    v.fixed_loops = 1;
    o.loops = 777;
    SL_CHECK_EQ(sl_bench_row(e, &o, "g", "fixed", &v, 1, NULL, NULL, 0), SL_OK);
    SL_CHECK_EQ(a.last_loops, 1);
    /* --loops otherwise */
    v.fixed_loops = 0;
    v.min_loops = 0;
    SL_CHECK_EQ(sl_bench_row(e, &o, "g", "given", &v, 1, NULL, NULL, 0), SL_OK);
    SL_CHECK_EQ(a.last_loops, 777);
    sl_bench_report_free(&r);
}

int main(void)
{
    SL_RUN(test_interleaves_alternating_order);
    SL_RUN(test_ratio_to_best_and_per_object);
    SL_RUN(test_failing_variant_is_reported_not_fatal);
    SL_RUN(test_all_rows_failed_exits_nonzero);
    SL_RUN(test_two_phases_and_extras);
    SL_RUN(test_loop_count_choice);
    return sl_check_summary();
}
