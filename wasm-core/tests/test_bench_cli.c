/*
 * test_bench_cli.c - runs the `slablab` binary's experiment subcommands
 * with tiny parameters through tests/cli/bench_cli_test.mjs, which checks
 * their JSON against docs/bench-schema.json, their CSV and table output,
 * and the usage errors (exit status 2) for bad arguments.
 *
 * The binary is found beside this test's own executable (both are built
 * into the build directory); the script and schema relative to this
 * source file.  Skipped where there is no native CLI (WebAssembly builds)
 * or no node.
 */
#include "cli_test.h"

static void test_bench_cli(void)
{
#if SL_WASM
    SL_SKIP(SL_CLI_NATIVE_ONLY);
#else
    const char *skip = NULL;
    int rc = sl_cli_script(__FILE__, "bench_cli_test.mjs", "../../docs/bench-schema.json", &skip);
    if (skip)
        SL_SKIP(skip);
    SL_CHECK_EQ(rc, 0);
#endif
}

int main(void)
{
    SL_RUN(test_bench_cli);
    return sl_check_summary();
}
