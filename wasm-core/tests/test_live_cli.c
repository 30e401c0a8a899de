/*
 * test_live_cli.c - `slablab serve` against the real kernel of this machine,
 * through tests/cli/live_cli_test.mjs, one named test per check group: the
 * security refusals (token, Origin, Host, method, paths outside the site),
 * a non-loopback --bind without the flag, the filp events of a workload,
 * snapshots of a watched cache, and every BPF program detached when the
 * page leaves, on SIGTERM and after SIGKILL.  Groups that need root and BPF
 * skip and say why where the machine lacks them.  Every server listens on
 * 127.0.0.1 on a kernel-picked port and stops by itself (--exit-after).
 */
#include "cli_test.h"

#if !SL_WASM
/* Runs one group; returns its exit status, with the script's last output line in why (for a skip). */
static int run_group(const char *group, char *why, size_t n)
{
    char bin[PATH_MAX + 16], srcdir[PATH_MAX], cmd[4 * PATH_MAX];
    why[0] = '\0';
    if (system("command -v node >/dev/null 2>&1") != 0) {
        snprintf(why, n, "node is not installed");
        return 77;
    }
    if (!sl_cli_binary(bin, n) || !sl_test_dirname(__FILE__, srcdir, sizeof srcdir))
        return 1;
    snprintf(cmd, sizeof cmd, "node '%s/cli/live_cli_test.mjs' '%s' %s", srcdir, bin, group);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 1;
    char line[1024];
    while (fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        snprintf(why, n, "%s", line);
    }
    size_t len = strlen(why);
    if (len && why[len - 1] == '\n')
        why[len - 1] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
#endif

#if SL_WASM
#define LIVE_GROUP(name) \
    static void test_live_##name(void) { SL_SKIP(SL_CLI_NATIVE_ONLY); }
#else
#define LIVE_GROUP(name)                                                                       \
    static void test_live_##name(void)                                                         \
    {                                                                                              \
        char why[1024];                                                                            \
        int rc = run_group(#name, why, sizeof why);                                                \
        if (rc == 77)                                                                              \
            SL_SKIP(why);                                                                          \
        SL_CHECK_EQ(rc, 0);                                                                        \
    }
#endif

LIVE_GROUP(security)
LIVE_GROUP(bind)
LIVE_GROUP(stream)
LIVE_GROUP(snapshot)
LIVE_GROUP(detach)

int main(void)
{
    SL_RUN(test_live_security);
    SL_RUN(test_live_bind);
    SL_RUN(test_live_stream);
    SL_RUN(test_live_snapshot);
    SL_RUN(test_live_detach);
    return sl_check_summary();
}
