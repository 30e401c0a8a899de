/*
 * test_bench_stats.c - the benchmark harness's arithmetic: median (odd and
 * even counts, unsorted input), min, max, ratios, the seeds' "improved X%",
 * and per-operation division.  The CLI's sources are not in the core
 * library, so the file under test is compiled in here.
 */
#include "check.h"

#include "../cli/bench_stats.c"

#include <math.h>

static bool near(double a, double b) { return fabs(a - b) < 1e-9; }

static void test_median_odd_unsorted(void)
{
    double v[] = {9, 1, 5, 7, 3};
    sl_bench_stat s = sl_bench_stat_of(v, 5);
    SL_CHECK(near(s.median, 5));
    SL_CHECK(near(s.min, 1));
    SL_CHECK(near(s.max, 9));
}

static void test_median_even_is_mean_of_middle(void)
{
    double v[] = {40, 10, 30, 20};
    sl_bench_stat s = sl_bench_stat_of(v, 4);
    SL_CHECK(near(s.median, 25));
    SL_CHECK(near(s.min, 10));
    SL_CHECK(near(s.max, 40));
}

static void test_median_ignores_outlier(void)
{
    /* one preempted repetition must not move the median */
    double v[] = {47, 48, 46, 9000, 47};
    sl_bench_stat s = sl_bench_stat_of(v, 5);
    SL_CHECK(near(s.median, 47));
    SL_CHECK(near(s.max, 9000));
}

static void test_single_and_empty(void)
{
    double v[] = {3.5};
    sl_bench_stat s = sl_bench_stat_of(v, 1);
    SL_CHECK(near(s.median, 3.5) && near(s.min, 3.5) && near(s.max, 3.5));
    s = sl_bench_stat_of(v, 0);
    SL_CHECK(near(s.median, 0) && near(s.min, 0) && near(s.max, 0));
}

static void test_ratio_and_improvement(void)
{
    SL_CHECK(near(sl_bench_ratio_of(29, 47), 29.0 / 47.0));
    SL_CHECK(near(sl_bench_ratio_of(5, 0), 0));
    /* seed 000, bulk 8: fallback 50 cycles, detached 18 -> improved 64.0% */
    SL_CHECK(near(sl_bench_improvement_pct(50, 18), 64.0));
    /* seed 000's second table, bulk 1: 46 -> 49 is "-6.5%" */
    SL_CHECK(fabs(sl_bench_improvement_pct(46, 49) - -6.52) < 0.01);
    SL_CHECK(near(sl_bench_improvement_pct(0, 5), 0));
    /* the harness takes improvement from a ratio: before = 1 */
    SL_CHECK(near(sl_bench_improvement_pct(1.0, 0.25), 75.0));
}

static void test_per_op(void)
{
    SL_CHECK(near(sl_bench_per_op(470, 10), 47.0));
    SL_CHECK(near(sl_bench_per_op(10, 4), 2.5));
    SL_CHECK(near(sl_bench_per_op(123, 0), 0));
    /* loops * bulk objects: 10,000,000 alloc+free pairs of 18 cycles */
    SL_CHECK(near(sl_bench_per_op(180000000ull, 10000000ull), 18.0));
}

int main(void)
{
    SL_RUN(test_median_odd_unsorted);
    SL_RUN(test_median_even_is_mean_of_middle);
    SL_RUN(test_median_ignores_outlier);
    SL_RUN(test_single_and_empty);
    SL_RUN(test_ratio_and_improvement);
    SL_RUN(test_per_op);
    return sl_check_summary();
}
