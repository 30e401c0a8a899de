/*
 * cli_test.h - what the tests of the native `slablab` binary share: the
 * binary built beside the test's own executable, one run of it with its
 * output captured, and a Node script from tests/cli/ run against it.  Paths
 * are cut with sl_test_dirname (check.h).  The CLI is native only: in
 * WebAssembly builds these tests skip with SL_CLI_NATIVE_ONLY.
 */
#ifndef SL_CLI_TEST_H
#define SL_CLI_TEST_H

#include "check.h"

#define SL_CLI_NATIVE_ONLY "the slablab CLI is native only"

#if !SL_WASM
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

/* The slablab binary beside this test's executable into bin[0..n); false when it is not there. */
static inline bool sl_cli_binary(char *bin, size_t n)
{
    char exe[PATH_MAX], dir[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return false;
    exe[len] = '\0';
    return sl_test_dirname(exe, dir, sizeof dir) && (size_t)snprintf(bin, n, "%s/slablab", dir) < n &&
           access(bin, X_OK) == 0;
}

/*
 * Runs `'BIN' ARGS` through the shell (ARGS may redirect: "2>&1",
 * "2>/dev/null"), its standard output into out (NUL-terminated, cut at
 * cap - 1 bytes).  Returns the exit status, or -1 when it could not run or
 * did not exit.
 */
static inline int sl_cli_run(const char *bin, const char *args, char *out, size_t cap)
{
    size_t len = strlen(bin) + strlen(args) + 4;
    char *cmd = malloc(len);
    if (!cmd)
        return -1;
    snprintf(cmd, len, "'%s' %s", bin, args);
    FILE *p = popen(cmd, "r");
    free(cmd);
    if (!p)
        return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * node tests/cli/SCRIPT BIN tests/EXTRA (source_file is the calling test's
 * __FILE__): the script checks the CLI's output, its exit status is the
 * result.  Returns that status, 1 when the binary or a path is missing, or
 * -1 with *skip saying why it cannot run here.
 */
static inline int sl_cli_script(const char *source_file, const char *script, const char *extra, const char **skip)
{
    if (system("command -v node >/dev/null 2>&1") != 0) {
        *skip = "node is not installed";
        return -1;
    }
    char bin[PATH_MAX + 16], srcdir[PATH_MAX];
    if (!sl_cli_binary(bin, sizeof bin) || !sl_test_dirname(source_file, srcdir, sizeof srcdir))
        return 1;
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "node '%s/cli/%s' '%s' '%s/%s'", srcdir, script, bin, srcdir, extra);
    return system(cmd);
}

/*
 * One check group of a script that takes `BIN GROUP` (tests/cli/SCRIPT;
 * source_file is the calling test's __FILE__), its output echoed.  Returns
 * the script's exit status (77: it cannot run here), with its last output
 * line in why (the reason of a skip).
 */
static inline int sl_cli_script_group(const char *source_file, const char *script, const char *group, char *why,
                                      size_t n)
{
    char bin[PATH_MAX + 16], srcdir[PATH_MAX], cmd[4 * PATH_MAX];
    why[0] = '\0';
    if (system("command -v node >/dev/null 2>&1") != 0) {
        snprintf(why, n, "node is not installed");
        return 77;
    }
    if (!sl_cli_binary(bin, sizeof bin) || !sl_test_dirname(source_file, srcdir, sizeof srcdir))
        return 1;
    snprintf(cmd, sizeof cmd, "node '%s/cli/%s' '%s' %s", srcdir, script, bin, group);
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

/* A test named test_PREFIX_GROUP that runs GROUP of tests/cli/SCRIPT (skipped where it says it cannot run, and in WebAssembly). */
#if SL_WASM
#define SL_CLI_SCRIPT_GROUP(prefix, script, group)                                                                     \
    static void test_##prefix##_##group(void) { SL_SKIP(SL_CLI_NATIVE_ONLY); }
#else
#define SL_CLI_SCRIPT_GROUP(prefix, script, group)                                                                     \
    static void test_##prefix##_##group(void)                                                                          \
    {                                                                                                                  \
        char why[1024];                                                                                                \
        int rc = sl_cli_script_group(__FILE__, script, #group, why, sizeof why);                                       \
        if (rc == 77)                                                                                                  \
            SL_SKIP(why);                                                                                              \
        SL_CHECK_EQ(rc, 0);                                                                                            \
    }
#endif

#endif /* SL_CLI_TEST_H */
