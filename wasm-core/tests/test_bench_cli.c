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
#include "check.h"

#if !SL_WASM
#include <limits.h>
#include <unistd.h>
#endif

static void test_bench_cli(void)
{
#if SL_WASM
    SL_SKIP("the slablab CLI is native only");
#else
    if (access("/usr/bin/node", X_OK) != 0 && system("command -v node >/dev/null 2>&1") != 0)
        SL_SKIP("node is not installed");
    char exe[PATH_MAX], bindir[PATH_MAX], srcdir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    SL_REQUIRE(n > 0);
    exe[n] = '\0';
    SL_REQUIRE(sl_test_dirname(exe, bindir, sizeof bindir));
    SL_REQUIRE(sl_test_dirname(__FILE__, srcdir, sizeof srcdir));
    char bin[PATH_MAX + 16];
    snprintf(bin, sizeof bin, "%s/slablab", bindir);
    SL_REQUIRE(access(bin, X_OK) == 0);
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "node '%s/cli/bench_cli_test.mjs' '%s' '%s/../../docs/bench-schema.json'",
             srcdir, bin, srcdir);
    int rc = system(cmd);
    SL_CHECK_EQ(rc, 0);
#endif
}

int main(void)
{
    SL_RUN(test_bench_cli);
    return sl_check_summary();
}
