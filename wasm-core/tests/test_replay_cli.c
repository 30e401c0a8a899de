/*
 * test_replay_cli.c - `slablab replay`, `slablab slabinfo` and
 * `slablab capture` as commands, through tests/cli/replay_cli_test.mjs:
 * tables, JSON, the Perfetto file, standard input, refusals and usage
 * errors with their exit statuses, and (as root with tracefs) real
 * captures, one stopped by SIGINT, leaving the tracing state as found.
 */
#include "cli_test.h"

static void test_replay_cli(void)
{
#if SL_WASM
    SL_SKIP(SL_CLI_NATIVE_ONLY);
#else
    const char *skip = NULL;
    int rc = sl_cli_script(__FILE__, "replay_cli_test.mjs", "fixtures/replay", &skip);
    if (skip)
        SL_SKIP(skip);
    SL_CHECK_EQ(rc, 0);
#endif
}

int main(void)
{
    SL_RUN(test_replay_cli);
    return sl_check_summary();
}
