/*
 * api_core.c - build identity, binary layouts and the threading self-test,
 * for the bridge (web/core/bridge.worker.ts) and its tests.
 *
 * Layouts.  The bridge copies C structs (sl_event, sl_selftest_result) out
 * of the module's memory and decodes them in TypeScript
 * (web/core/events.generated.ts, web/core/layouts.ts).  sl_api_*_layout()
 * write the size and every field offset the decoders rely on, so a vitest
 * test catches a struct that changed shape on one side only.
 *
 * The interleaved self-test.  In the single-threaded build there are no
 * CPU threads: all simulated CPUs run in the one bridge worker, and a
 * deterministic scheduler decides which CPU takes the next step.  Each CPU
 * is a two-state machine over the shared double word: READ (take a
 * snapshot) then CAS (try to install snapshot + 1).  A CPU whose snapshot
 * went stale because another CPU's CAS landed in between loses its CAS,
 * exactly as a preempted fast path does in the kernel, and retries.  The
 * schedule comes from a fixed-seed xorshift, so the same arguments always
 * give the same interleaving and the same retry count.
 */
#include "export.h"

#include <stddef.h>
#include <string.h>

#include "../src/runner/runner.h"
#include "../src/trace/trace.h"

#define SLABLAB_ABI_VERSION 2

SL_EXPORT int sl_api_abi_version(void) { return SLABLAB_ABI_VERSION; }

/* 1 in the build with threads (each simulated CPU a web worker), else 0. */
SL_EXPORT int sl_api_has_threads(void) { return SL_HAVE_THREADS; }
/* 1 in a benchmark build (SLABLAB_BENCH: no tracing, no preemption hooks, no asserts), else 0. */
#if defined(SLABLAB_BENCH)
SL_EXPORT int sl_api_bench_build(void) { return 1; }
#else
SL_EXPORT int sl_api_bench_build(void) { return 0; }
#endif

SL_EXPORT int sl_api_event_size(void) { return (int)sizeof(sl_event); }

SL_EXPORT int sl_api_max_cpus(void) { return SL_MAX_CPUS; }

/*
 * Writes sizeof(sl_event) then the offsets of op, cpu, kind, cache, flags,
 * slab, obj, arg0, arg1, arg2, seq to out[0..11]; returns the count written (12).
 */
SL_EXPORT int sl_api_event_layout(uint32_t *out)
{
    const uint32_t v[] = {
        sizeof(sl_event),          offsetof(sl_event, op),    offsetof(sl_event, cpu),  offsetof(sl_event, kind),
        offsetof(sl_event, cache), offsetof(sl_event, flags), offsetof(sl_event, slab), offsetof(sl_event, obj),
        offsetof(sl_event, arg0),  offsetof(sl_event, arg1),  offsetof(sl_event, arg2), offsetof(sl_event, seq),
    };
    memcpy(out, v, sizeof v);
    return (int)(sizeof v / sizeof v[0]);
}

/*
 * Writes sizeof(sl_selftest_result) then the offsets of threads, iterations,
 * counter, cas_failures, thread_ids, per_cpu_done, then SL_MAX_CPUS, to
 * out[0..7]; returns the count written (8).
 */
SL_EXPORT int sl_api_selftest_layout(uint32_t *out)
{
    const uint32_t v[] = {
        sizeof(sl_selftest_result),
        offsetof(sl_selftest_result, threads),
        offsetof(sl_selftest_result, iterations),
        offsetof(sl_selftest_result, counter),
        offsetof(sl_selftest_result, cas_failures),
        offsetof(sl_selftest_result, thread_ids),
        offsetof(sl_selftest_result, per_cpu_done),
        SL_MAX_CPUS,
    };
    memcpy(out, v, sizeof v);
    return (int)(sizeof v / sizeof v[0]);
}

/* Runs sl_runner_selftest (CPU threads) and writes an sl_selftest_result to `out`. */
SL_EXPORT int sl_api_selftest(unsigned threads, unsigned iterations, sl_selftest_result *out)
{
    return sl_runner_selftest(threads, iterations, out);
}

static uint32_t xorshift32(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/*
 * The self-test with `cpus` simulated CPUs interleaved on the calling thread
 * (see the essay above).  thread_ids[] all hold the calling thread's id: one
 * worker ran every CPU.  Returns 0 when every increment landed and the two
 * words agree, SL_ECORRUPT if not, SL_EINVAL for bad counts or a null `out`.
 */
SL_EXPORT int sl_api_selftest_interleaved(unsigned cpus, unsigned iterations, uint32_t seed, sl_selftest_result *out)
{
    if (cpus == 0 || cpus > SL_MAX_CPUS || !out)
        return SL_EINVAL;
    memset(out, 0, sizeof *out);
    sl_dword shared = {0, 0};
    sl_dword snapshot[SL_MAX_CPUS];
    bool has_snapshot[SL_MAX_CPUS] = {false};
    unsigned remaining = cpus;
    uint32_t rng = seed ? seed : 0x9e3779b9u;
    uint64_t self = sl_thread_self_id();

    for (unsigned c = 0; c < cpus; c++) {
        out->thread_ids[c] = self;
        if (iterations == 0)
            remaining--;
    }
    while (remaining) {
        unsigned c = xorshift32(&rng) % cpus;
        if (out->per_cpu_done[c] == iterations)
            continue;
        if (!has_snapshot[c]) {
            snapshot[c] = sl_dw_read(&shared);
            has_snapshot[c] = true;
            continue;
        }
        sl_dword new_ = {snapshot[c].lo + 1, snapshot[c].hi + 1};
        has_snapshot[c] = false;
        if (!sl_dw_cas(&shared, snapshot[c], new_)) {
            out->cas_failures++;
            continue;
        }
        if (++out->per_cpu_done[c] == iterations)
            remaining--;
    }
    sl_dword final = sl_dw_read(&shared);
    out->threads = cpus;
    out->iterations = iterations;
    out->counter = final.lo;
    if (final.lo != final.hi || final.lo != (uint64_t)cpus * iterations)
        return SL_ECORRUPT;
    return SL_OK;
}

SL_EXPORT const char *sl_api_strerror(int err) { return sl_strerror(err); }
