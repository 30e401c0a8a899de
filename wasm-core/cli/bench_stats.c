/*
 * bench_stats.c - the harness's arithmetic: median, min, max, ratios and the
 * seeds' "improved X%".  Pure functions with no state, so the unit test
 * (tests/test_bench_stats.c) checks them exactly.
 */
#include "bench.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

sl_bench_stat sl_bench_stat_of(double *v, size_t n)
{
    sl_bench_stat s = {0, 0, 0};
    if (n == 0)
        return s;
    qsort(v, n, sizeof v[0], cmp_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = (n & 1) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

double sl_bench_ratio_of(double a, double b) { return b == 0 ? 0 : a / b; }

double sl_bench_improvement_pct(double before, double now) { return before == 0 ? 0 : (before - now) / before * 100.0; }

double sl_bench_per_op(uint64_t interval, uint64_t ops) { return ops == 0 ? 0 : (double)interval / (double)ops; }
