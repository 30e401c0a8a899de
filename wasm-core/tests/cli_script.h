/*
 * cli_script.h - runs a Node script from tests/cli/ against the native
 * `slablab` binary built beside the calling test's executable, with one
 * more argument (a path relative to tests/).  The script checks the CLI's
 * output; its exit status is the result.  Skipped in WebAssembly builds
 * (the CLI is native only) and where node is not installed.
 */
#ifndef SL_CLI_SCRIPT_H
#define SL_CLI_SCRIPT_H

#include "check.h"

#if !SL_WASM
#include <limits.h>
#include <unistd.h>

/* dir of path into out (path up to its last '/'); returns false if none. */
static inline bool sl_dirname_of(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) + 1 > n)
        return false;
    memcpy(out, path, (size_t)(slash - path));
    out[slash - path] = '\0';
    return true;
}
#endif

/*
 * node tests/cli/SCRIPT SLABLAB_BINARY tests/EXTRA.  Returns the script's
 * exit status, or -1 with *skip set to why it cannot run here.
 */
static inline int sl_run_cli_script(const char *source_file, const char *script, const char *extra, const char **skip)
{
#if SL_WASM
    (void)source_file, (void)script, (void)extra;
    *skip = "the slablab CLI is native only";
    return -1;
#else
    if (system("command -v node >/dev/null 2>&1") != 0) {
        *skip = "node is not installed";
        return -1;
    }
    char exe[PATH_MAX], bindir[PATH_MAX], srcdir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 1;
    exe[n] = '\0';
    if (!sl_dirname_of(exe, bindir, sizeof bindir) || !sl_dirname_of(source_file, srcdir, sizeof srcdir))
        return 1;
    char bin[PATH_MAX + 16];
    snprintf(bin, sizeof bin, "%s/slablab", bindir);
    if (access(bin, X_OK) != 0)
        return 1;
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "node '%s/cli/%s' '%s' '%s/%s'", srcdir, script, bin, srcdir, extra);
    return system(cmd);
#endif
}

#endif /* SL_CLI_SCRIPT_H */
