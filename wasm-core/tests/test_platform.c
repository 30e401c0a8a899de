/* test_platform.c - the double-word CAS, spin lock, clocks, threads and trace rings. */
#include "check.h"

#include "../src/runner/runner.h"
#include "../src/trace/trace.h"

static void test_dw_cas_semantics(void)
{
    sl_dword w = {1, 2};
    SL_CHECK(!sl_dw_cas(&w, (sl_dword){1, 3}, (sl_dword){9, 9}));
    SL_CHECK_EQ(w.lo, 1);
    SL_CHECK(sl_dw_cas(&w, (sl_dword){1, 2}, (sl_dword){5, 6}));
    SL_CHECK_EQ(w.lo, 5);
    SL_CHECK_EQ(w.hi, 6);
    SL_CHECK(!sl_dw_cas_local(&w, (sl_dword){5, 7}, (sl_dword){0, 0}));
    SL_CHECK(sl_dw_cas_local(&w, (sl_dword){5, 6}, (sl_dword){7, 8}));
    sl_dword r = sl_dw_read(&w);
    SL_CHECK_EQ(r.lo, 7);
    SL_CHECK_EQ(r.hi, 8);
    sl_dw_write_plain(&w, (sl_dword){3, 4});
    SL_CHECK_EQ(w.lo, 3);
    SL_CHECK_EQ(w.hi, 4);
}

static void test_threads_race_dw_cas(void)
{
    SL_SKIP_WITHOUT_THREADS();
    sl_selftest_result r;
    unsigned iters = (unsigned)sl_test_scale(200000);
    SL_CHECK_EQ(sl_runner_selftest(4, iters, &r), SL_OK);
    SL_CHECK_EQ(r.counter, 4ull * iters);
    unsigned distinct = 0;
    for (unsigned i = 0; i < 4; i++) {
        bool seen = false;
        for (unsigned j = 0; j < i; j++)
            seen |= r.thread_ids[j] == r.thread_ids[i];
        distinct += !seen;
        SL_CHECK_EQ(r.per_cpu_done[i], iters);
    }
    SL_CHECK_EQ(distinct, 4);
}

static void test_selftest_rejects_bad_counts(void)
{
    sl_selftest_result r;
    SL_CHECK_EQ(sl_runner_selftest(0, 10, &r), SL_EINVAL);
    SL_CHECK_EQ(sl_runner_selftest(SL_MAX_CPUS + 1, 10, &r), SL_EINVAL);
}

static void test_clock_advances(void)
{
    uint64_t a = sl_time_ns();
    volatile unsigned sink = 0;
    for (unsigned i = 0; i < 1000000; i++)
        sink += i;
    SL_CHECK(sl_time_ns() > a);
    SL_CHECK(sink > 0);
    uint64_t t0 = sl_tsc_start();
    uint64_t t1 = sl_tsc_stop();
    SL_CHECK(t1 >= t0);
}

static void test_trace_ring_order_and_overflow(void)
{
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 2, 5) == SL_OK); /* rounds to 8 */
    for (unsigned i = 0; i < 10; i++)
        sl_trace_emit(&tr, &(sl_event){.op = i, .cpu = 1, .kind = SL_EV_OP_BEGIN});
    sl_event out[16];
    SL_CHECK_EQ(sl_trace_drain(&tr, 0, out, 16), 0);
    unsigned n = sl_trace_drain(&tr, 1, out, 16);
    SL_CHECK_EQ(n, 8);
    for (unsigned i = 0; i < n; i++)
        SL_CHECK_EQ(out[i].op, i);
    SL_CHECK_EQ(atomic_load(&tr.rings[1].dropped), 2);
    sl_trace_emit(&tr, &(sl_event){.op = 42, .cpu = 1, .kind = SL_EV_OP_END});
    SL_CHECK_EQ(sl_trace_drain(&tr, 1, out, 16), 1);
    SL_CHECK_EQ(out[0].op, 42);
    SL_CHECK_EQ(sl_trace_drain(&tr, 7, out, 16), 0);
    sl_trace_destroy(&tr);
}

static void test_strerror_names_every_code(void)
{
    for (int e = SL_OK; e >= SL_EBUDGET; e--)
        SL_CHECK(strcmp(sl_strerror(e), "unknown error") != 0);
    SL_CHECK(!strcmp(sl_strerror(-999), "unknown error"));
}

int main(void)
{
    SL_RUN(test_dw_cas_semantics);
    SL_RUN(test_threads_race_dw_cas);
    SL_RUN(test_selftest_rejects_bad_counts);
    SL_RUN(test_clock_advances);
    SL_RUN(test_trace_ring_order_and_overflow);
    SL_RUN(test_strerror_names_every_code);
    return sl_check_summary();
}
