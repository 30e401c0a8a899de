/*
 * check.h - the C tests' harness.  A test file defines test functions and a
 * main() that calls SL_RUN() for each and returns sl_check_summary().  The
 * summary line "N passed, N failed" is what CI reads.
 *
 * SL_CHECK* record a failure and carry on, so one run reports every broken
 * expectation.  Tests needing threads call SL_SKIP_WITHOUT_THREADS().
 */
#ifndef SL_CHECK_H
#define SL_CHECK_H

#include "../src/platform/platform.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sl_check_failures_in_test;
static int sl_check_passed, sl_check_failed, sl_check_skipped;

#define SL_CHECK(cond)                                                                                                 \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                 \
            sl_check_failures_in_test++;                                                                               \
        }                                                                                                              \
    } while (0)

#define SL_CHECK_EQ(a, b)                                                                                              \
    do {                                                                                                               \
        long long sl_a_ = (long long)(a), sl_b_ = (long long)(b);                                                      \
        if (sl_a_ != sl_b_) {                                                                                          \
            fprintf(stderr, "  %s:%d: check failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, #b, sl_a_,     \
                    sl_b_);                                                                                            \
            sl_check_failures_in_test++;                                                                               \
        }                                                                                                              \
    } while (0)

/* Stops the current test (a later step would crash on the broken state). */
#define SL_REQUIRE(cond)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "  %s:%d: requirement failed: %s\n", __FILE__, __LINE__, #cond);                           \
            sl_check_failures_in_test++;                                                                               \
            return;                                                                                                    \
        }                                                                                                              \
    } while (0)

#define SL_SKIP(why)                                                                                                   \
    do {                                                                                                               \
        printf("  skipped: %s\n", why);                                                                                \
        sl_check_failures_in_test = -1;                                                                                \
        return;                                                                                                        \
    } while (0)

#if SL_HAVE_THREADS
#define SL_SKIP_WITHOUT_THREADS() ((void)0)
#else
#define SL_SKIP_WITHOUT_THREADS() SL_SKIP("this build has no threads")
#endif

#define SL_RUN(fn)                                                                                                     \
    do {                                                                                                               \
        sl_check_failures_in_test = 0;                                                                                 \
        printf("test %s\n", #fn);                                                                                      \
        fflush(stdout);                                                                                                \
        fn();                                                                                                          \
        if (sl_check_failures_in_test < 0) {                                                                           \
            sl_check_skipped++;                                                                                        \
        } else if (sl_check_failures_in_test) {                                                                        \
            printf("FAIL %s\n", #fn);                                                                                  \
            sl_check_failed++;                                                                                         \
        } else {                                                                                                       \
            sl_check_passed++;                                                                                         \
        }                                                                                                              \
    } while (0)

static inline int sl_check_summary(void)
{
    printf("%d passed, %d failed, %d skipped\n", sl_check_passed, sl_check_failed, sl_check_skipped);
    return sl_check_failed ? 1 : 0;
}

/* Test scale: SLABLAB_TEST_SCALE=N multiplies iteration counts (default 1). */
static inline unsigned long sl_test_scale(unsigned long base)
{
    const char *s = getenv("SLABLAB_TEST_SCALE");
    unsigned long k = s ? strtoul(s, NULL, 10) : 1;
    return base * (k ? k : 1);
}

/* A small deterministic PRNG (xorshift64*) for randomized tests. */
static inline uint64_t sl_test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* The directory part of `path` (up to its last '/') into out; false if there is none or it does not fit. */
static inline bool sl_test_dirname(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) + 1 > n)
        return false;
    memcpy(out, path, (size_t)(slash - path));
    out[slash - path] = '\0';
    return true;
}

#endif
