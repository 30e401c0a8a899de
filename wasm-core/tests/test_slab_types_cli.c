/*
 * test_slab_types_cli.c - runs `slablab slab-types` (the binary beside this
 * test's executable) on the fixtures and on bad input: a SLAB kernel's
 * slabinfo with the match column and its JSON, this machine's sysfs tree
 * (the totals of docs/slab.md), a malformed file (exit status 1, a message
 * naming the line) and bad arguments (exit status 2).  Skipped where there
 * is no native CLI (WebAssembly builds).
 */
#include "cli_test.h"

#if !SL_WASM
enum { USAGE_STATUS = 2 }; /* SL_CLI_USAGE: a bad argument */

static char bin[PATH_MAX + 16], fixtures[PATH_MAX + 64], out[1 << 20];

/* Runs `slablab slab-types ARGS 2>&1`; returns the exit status, the output in out. */
static int slab_types(const char *args)
{
    char cmd[3 * PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "slab-types %s 2>&1", args);
    return sl_cli_run(bin, cmd, out, sizeof out);
}
#endif

static void test_slab_types_cli(void)
{
#if SL_WASM
    SL_SKIP(SL_CLI_NATIVE_ONLY);
#else
    SL_REQUIRE(sl_cli_binary(bin, sizeof bin));
    char dir[PATH_MAX];
    SL_REQUIRE(sl_test_dirname(__FILE__, dir, sizeof dir));
    snprintf(fixtures, sizeof fixtures, "%s/../../tests/fixtures/slab", dir);

    char args[3 * PATH_MAX];
    snprintf(args, sizeof args, "--slabinfo '%s/slabinfo-5.4.54-slab.txt' --kernel 5.4 --cpus 2", fixtures);
    SL_CHECK_EQ(slab_types(args), 0);
    SL_CHECK(strstr(out, "175 caches compared with the kernel (order, objects per slab, limit, batchcount, shared): "
                         "173 match, 2 differ") != NULL);
    SL_CHECK(strstr(out, "creation flags known by name (slabinfo does not show them; the kernel's kmem_cache_create "
                         "calls do): nfs_inode_cache ext4_inode_cache bdev_cache anon_vma") != NULL);
    SL_CHECK(strstr(out, "| match") != NULL);
    SL_CHECK(strstr(out, "| NO") != NULL);
    snprintf(args, sizeof args, "--slabinfo '%s/slabinfo-5.4.54-slab.txt' --kernel 5.4 --cpus 2 --format json",
             fixtures);
    SL_CHECK_EQ(slab_types(args), 0);
    SL_CHECK(strstr(out, "\"compared\":175,\"matched\":173}") != NULL);
    SL_CHECK(strstr(out, "\"kernel\":\"5.4\"") != NULL);
    snprintf(args, sizeof args, "--sysfs '%s/sysfs-6.18' --rules both --cpus 2", fixtures);
    SL_CHECK_EQ(slab_types(args), 0);
    SL_CHECK(strstr(out, "/Before/ 235 = 0 + 119 + 50 + 66\n/After/ 235 = 155 + 39 + 35 + 6\n") != NULL);

    /* A malformed file: exit status 1 and the line named. */
    char bad[] = "/tmp/slablab-slabinfo-XXXXXX";
    int fd = mkstemp(bad);
    SL_REQUIRE(fd >= 0);
    static const char text[] = "slabinfo - version: 2.1\n# name ...\ndentry 1 2 192 21 1 : tunables 120 60 8 : "
                               "slabdata 1 1 0\nkmalloc-64 1 2 sixty-four 64 1 : tunables 120 60 8 : slabdata 1 1 0\n";
    SL_REQUIRE(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
    close(fd);
    snprintf(args, sizeof args, "--slabinfo '%s'", bad);
    SL_CHECK_EQ(slab_types(args), 1);
    SL_CHECK(strstr(out, ": line 4: objsize 'sixty-four' is not a number") != NULL);
    unlink(bad);

    /* Bad arguments: usage errors. */
    static const char *const usage[] = {
        "--kernel 6.8",           "--kernel 4.9", "--cpus 0", "--rules sideways", "--init-on-free --kernel 5.2",
        "--slabinfo a --sysfs b", "--kernel"};
    for (unsigned i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        SL_CHECK_EQ(slab_types(usage[i]), USAGE_STATUS);
        SL_CHECK(strstr(out, "usage: slablab slab-types") != NULL);
    }
#endif
}

int main(void)
{
    SL_RUN(test_slab_types_cli);
    return sl_check_summary();
}
