/*
 * test_capture_hardening.c - `slablab capture` leaves the machine as it
 * found it and never destroys a file (issue 22, section 2), each case run
 * by tests/cli/capture_hardening_test.mjs against the real kernel: a
 * command's leftover background process, -o naming a device node, an
 * existing file on failure, concurrent and SIGKILLed captures and the
 * mounts, the exit statuses, and `-h` after `--`.  Needs root, tracefs and
 * unshare(1); where any is missing each test skips and says which.
 */
#include "cli_test.h"

#if !SL_WASM
static const char *why_not(void)
{
    if (geteuid() != 0)
        return "capture needs root (tracefs and /sys/kernel/slab are root's)";
    if (system("grep -qw tracefs /proc/filesystems") != 0)
        return "the kernel has no tracefs (CONFIG_TRACING)";
    if (system("command -v unshare >/dev/null 2>&1") != 0)
        return "unshare(1) is missing: the test lists tracing instances in a private mount namespace";
    if (system("unshare -m --propagation private true 2>/dev/null") != 0)
        return "no mount namespaces here (unshare -m is not permitted)";
    return NULL;
}

static void run_case(const char *name)
{
    const char *skip = why_not();
    if (skip)
        SL_SKIP(skip);
    setenv("SLABLAB_CAPTURE_CASE", name, 1);
    int rc = sl_cli_script(__FILE__, "capture_hardening_test.mjs", "fixtures/replay", &skip);
    if (skip)
        SL_SKIP(skip);
    SL_CHECK_EQ(rc, 0);
}
#define CASE(name)                                                                                                     \
    static void test_capture_##name(void) { run_case(#name); }
#else
#define CASE(name)                                                                                                     \
    static void test_capture_##name(void) { SL_SKIP(SL_CLI_NATIVE_ONLY); }
#endif

CASE(background)
CASE(device)
CASE(keep)
CASE(concurrent)
CASE(exits)
CASE(dashdash)
CASE(ownwork)

int main(void)
{
    SL_RUN(test_capture_background);
    SL_RUN(test_capture_device);
    SL_RUN(test_capture_keep);
    SL_RUN(test_capture_concurrent);
    SL_RUN(test_capture_exits);
    SL_RUN(test_capture_dashdash);
    SL_RUN(test_capture_ownwork);
    return sl_check_summary();
}
