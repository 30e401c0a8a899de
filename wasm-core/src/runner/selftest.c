/*
 * selftest.c - proves the threading floor the models stand on: several CPU
 * threads racing double-word CASes on one shared pair.  If the CAS were not
 * atomic across threads, or the threads did not share memory, the final
 * count or the lo == hi invariant would break.
 */
#include "runner.h"

#include <string.h>

typedef struct selftest_cpu {
    unsigned cpu;
    unsigned iterations;
    sl_dword *shared;
    atomic_uint *start_gate;
    unsigned nthreads;
    uint64_t failures;
    uint64_t done;
    uint64_t thread_id;
} selftest_cpu;

static void *selftest_cpu_main(void *arg)
{
    selftest_cpu *c = arg;
    c->thread_id = sl_thread_self_id();
    /* Start together so the CASes really contend. */
    atomic_fetch_add(c->start_gate, 1);
    while (atomic_load(c->start_gate) < c->nthreads)
        sl_cpu_relax();
    for (unsigned i = 0; i < c->iterations; i++) {
        for (;;) {
            sl_dword old = sl_dw_read(c->shared);
            sl_dword new_ = {old.lo + 1, old.hi + 1};
            if (sl_dw_cas(c->shared, old, new_))
                break;
            c->failures++;
        }
        c->done++;
    }
    return NULL;
}

int sl_runner_selftest(unsigned threads, unsigned iterations, sl_selftest_result *out)
{
    if (threads == 0 || threads > SL_MAX_CPUS || !out)
        return SL_EINVAL;
    if (!SL_HAVE_THREADS)
        return SL_ENOTHREADS;
    memset(out, 0, sizeof *out);
    sl_dword shared;
    atomic_uint gate;
    selftest_cpu cpus[SL_MAX_CPUS];
    sl_thread th[SL_MAX_CPUS];
    unsigned started = 0;
    int rc = SL_OK;

    shared = (sl_dword){0, 0};
    atomic_init(&gate, 0);
    for (unsigned i = 0; i < threads; i++) {
        cpus[i] = (selftest_cpu){
            .cpu = i, .iterations = iterations, .shared = &shared, .start_gate = &gate, .nthreads = threads};
    }
    for (; started < threads; started++) {
        rc = sl_thread_start(&th[started], selftest_cpu_main, &cpus[started]);
        if (rc != SL_OK)
            break;
    }
    if (rc != SL_OK) {
        /* Let the started ones through the gate, then report. */
        atomic_store(&gate, threads);
    }
    for (unsigned i = 0; i < started; i++)
        sl_thread_join(th[i]);
    if (rc != SL_OK)
        return rc;

    sl_dword final = sl_dw_read(&shared);
    out->threads = threads;
    out->iterations = iterations;
    out->counter = final.lo;
    for (unsigned i = 0; i < threads; i++) {
        out->cas_failures += cpus[i].failures;
        out->thread_ids[i] = cpus[i].thread_id;
        out->per_cpu_done[i] = cpus[i].done;
    }
    if (final.lo != final.hi || final.lo != (uint64_t)threads * iterations)
        return SL_ECORRUPT;
    return SL_OK;
}
