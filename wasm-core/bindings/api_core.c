/* api_core.c - build identity and the threading self-test, for the bridge. */
#include "export.h"

#include "../src/runner/runner.h"
#include "../src/trace/trace.h"

#define SLABLAB_ABI_VERSION 1

SL_EXPORT int sl_api_abi_version(void) { return SLABLAB_ABI_VERSION; }

/* 1 in the build with threads (each simulated CPU a web worker), else 0. */
SL_EXPORT int sl_api_has_threads(void) { return SL_HAVE_THREADS; }

SL_EXPORT int sl_api_event_size(void) { return (int)sizeof(sl_event); }

/* Runs sl_runner_selftest and writes an sl_selftest_result to `out`. */
SL_EXPORT int sl_api_selftest(unsigned threads, unsigned iterations, sl_selftest_result *out)
{
    return sl_runner_selftest(threads, iterations, out);
}

SL_EXPORT const char *sl_api_strerror(int err) { return sl_strerror(err); }
