/*
 * runner.h - runs work on simulated CPUs.
 *
 * With threads, each simulated CPU is one thread (natively a pthread, in the
 * browser a web worker sharing the module's memory) that acts as that CPU
 * for its whole life, the way a kernel thread pinned to a CPU does.  Without
 * threads (the single-threaded WebAssembly build) sl_runner_selftest reports
 * SL_ENOTHREADS and the caller interleaves CPUs itself.
 */
#ifndef SL_RUNNER_H
#define SL_RUNNER_H

#include "../platform/platform.h"

#define SL_MAX_CPUS 8

/* What sl_runner_selftest measured; laid out for the bridge (web/core/bridge-protocol.ts). */
typedef struct sl_selftest_result {
    uint32_t threads;                 /* CPU threads that ran */
    uint32_t iterations;              /* per thread */
    uint64_t counter;                 /* final value of the shared counter */
    uint64_t cas_failures;            /* double-word CAS attempts that lost a race */
    uint64_t thread_ids[SL_MAX_CPUS]; /* OS thread / worker id of each CPU thread */
    uint64_t per_cpu_done[SL_MAX_CPUS];
} sl_selftest_result;

/*
 * Starts `threads` CPU threads that each increment one shared double word
 * `iterations` times with sl_dw_cas (low word: count, high word: a version
 * that must stay equal to it).  Returns 0 when every increment landed and the
 * two words agree, SL_ECORRUPT if they do not, SL_EINVAL for bad counts,
 * SL_ENOTHREADS in a build without threads.
 */
int sl_runner_selftest(unsigned threads, unsigned iterations, sl_selftest_result *out);

#endif
