/* cmd_selftest.c - `slablab selftest`: CPU threads racing double-word CASes. */
#include "cli.h"

#include "../src/runner/runner.h"

#include <string.h>

static int run_selftest(int argc, char **argv);
SL_CLI_COMMAND(selftest, .name = "selftest",
               .summary = "check that CPU threads share memory and the double-word CAS is atomic",
               .usage = "slablab selftest [--threads N (1-8, default 2)] [--iterations N]", .run = run_selftest)

static int run_selftest(int argc, char **argv)
{
    unsigned long threads = 2, iterations = 100000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            if (!sl_cli_parse_ulong(argv[++i], 1, SL_MAX_CPUS, &threads))
                return sl_cli_usage_error(&sl_cli_cmd_selftest, "--threads takes 1 to %d", SL_MAX_CPUS);
        } else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
            if (!sl_cli_parse_ulong(argv[++i], 1, 100000000, &iterations))
                return sl_cli_usage_error(&sl_cli_cmd_selftest, "--iterations takes 1 to 100000000");
        } else {
            return sl_cli_usage_error(&sl_cli_cmd_selftest, "unknown argument '%s'", argv[i]);
        }
    }
    sl_selftest_result r;
    int rc = sl_runner_selftest((unsigned)threads, (unsigned)iterations, &r);
    if (rc != SL_OK) {
        fprintf(stderr, "slablab selftest: %s\n", sl_strerror(rc));
        return 1;
    }
    printf("%u threads x %u increments = %llu (CAS retries: %llu)\n", r.threads, r.iterations,
           (unsigned long long)r.counter, (unsigned long long)r.cas_failures);
    return 0;
}
