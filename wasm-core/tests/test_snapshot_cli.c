/*
 * test_snapshot_cli.c - `slablab snapshot` against the real kernel of this
 * machine, through tests/cli/snapshot_cli_test.mjs, one named test per check
 * group: the counters agree with /proc/slabinfo and /sys/kernel/slab, the
 * decoded freelists stay in their slabs, tids fit their CPUs, holding files
 * open moves filp, --max-slabs and --cache, the snapshots a capture stores, a
 * ring buffer overflow, the other kernels' layouts (their BTF made from
 * this kernel's), bad arguments, and the refusal
 * without BPF permission.  Each group also checks that no snapshot program
 * is left loaded.  Where the machine cannot take a snapshot (not root, no
 * BPF, a kernel before 6.13, a build without libbpf) the group skips and
 * says why.
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
    snprintf(cmd, sizeof cmd, "node '%s/cli/snapshot_cli_test.mjs' '%s' %s", srcdir, bin, group);
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
#define SNAPSHOT_GROUP(name) \
    static void test_snapshot_##name(void) { SL_SKIP(SL_CLI_NATIVE_ONLY); }
#else
#define SNAPSHOT_GROUP(name)                                                                       \
    static void test_snapshot_##name(void)                                                         \
    {                                                                                              \
        char why[1024];                                                                            \
        int rc = run_group(#name, why, sizeof why);                                                \
        if (rc == 77)                                                                              \
            SL_SKIP(why);                                                                          \
        SL_CHECK_EQ(rc, 0);                                                                        \
    }
#endif

SNAPSHOT_GROUP(counters)
SNAPSHOT_GROUP(freelists)
SNAPSHOT_GROUP(tids)
SNAPSHOT_GROUP(filp)
SNAPSHOT_GROUP(limits)
SNAPSHOT_GROUP(capture)
SNAPSHOT_GROUP(overflow)
SNAPSHOT_GROUP(kernels)
SNAPSHOT_GROUP(args)
SNAPSHOT_GROUP(permission)

int main(void)
{
    SL_RUN(test_snapshot_counters);
    SL_RUN(test_snapshot_freelists);
    SL_RUN(test_snapshot_tids);
    SL_RUN(test_snapshot_filp);
    SL_RUN(test_snapshot_limits);
    SL_RUN(test_snapshot_capture);
    SL_RUN(test_snapshot_overflow);
    SL_RUN(test_snapshot_kernels);
    SL_RUN(test_snapshot_args);
    SL_RUN(test_snapshot_permission);
    return sl_check_summary();
}
