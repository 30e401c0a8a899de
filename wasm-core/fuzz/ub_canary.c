/*
 * ub_canary.c - proof that the fuzz build stops on undefined behaviour.
 * Built with exactly the fuzz targets' flags (CMakeLists.txt, SLABLAB_FUZZ)
 * but not a target itself: the fuzz suite (scripts/test.mjs) runs it on the
 * input "UB" and requires it to fail with UBSan's "runtime error".  Without
 * -fno-sanitize-recover=all the signed overflow below is reported and the
 * run goes on and succeeds, which is how UB once passed the fuzz suite.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    volatile int big = INT_MAX;
    if (size == 2 && data[0] == 'U' && data[1] == 'B')
        big += data[1]; /* signed overflow: undefined */
    return big == 0;
}
