/*
 * test_cli_hardening.c - the `slablab` commands on hostile input (issue 22,
 * sections 1 and 3): no crash, no hang, no unbounded read, no destroyed
 * input, a specific message.  Each command runs under `timeout`, so a hang
 * fails the test instead of stalling it; the ASan/UBSan build runs the same
 * binary under the sanitizers (a report fails the command).  Native only
 * (the CLI is).
 */
#include "cli_test.h"

#if !SL_WASM
#include "../src/replay/replay.h"

#include <dirent.h>
#include <sys/stat.h>

static char bin[PATH_MAX + 16];
static char dir[] = "/tmp/slablab-cli-hardening-XXXXXX";
static char out[1 << 16];

/* Runs `timeout 20 BIN ARGS` in the temp dir (stderr into the output); its exit status, 124 on a hang. */
static int run(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && timeout 20 '%s' %s 2>&1", dir, bin, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool has(const char *s) { return strstr(out, s) != NULL; }

static void write_file(const char *name, const void *data, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

static void write_text(const char *name, const char *text) { write_file(name, text, strlen(text)); }

static void shell(const char *fmt, const char *arg)
{
    char cmd[4096], inner[2048];
    snprintf(inner, sizeof inner, fmt, arg);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s", dir, inner);
    if (system(cmd) != 0)
        fprintf(stderr, "  (setup step failed: %s)\n", inner);
}

static void test_tracegen_line_longer_than_its_buffer(void)
{
    /* A 3 MiB line (once past the 1 MiB static buffer: a segfault or silent corruption). */
    sl_strbuf t = {0};
    sl_strbuf_printf(&t, "bash-1 [000] ..... 1.000001: kfree: call_site=a ptr=0000000000001000 ");
    for (int i = 0; i < 3 << 20; i++)
        sl_strbuf_append(&t, "y", 1);
    sl_strbuf_append(&t, "\n", 1);
    SL_REQUIRE(!t.failed);
    write_file("long.txt", t.data, t.len);
    sl_strbuf_free(&t);
    SL_CHECK_EQ(run("trace-gen long.txt --bytes 8M > gen.txt"), 0);
    struct stat st;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/gen.txt", dir);
    SL_CHECK(stat(path, &st) == 0 && st.st_size >= 8 << 20 && st.st_size < (8 << 20) + (4 << 20));
}

static void test_tracegen_bounds(void)
{
    write_text("t.txt", "bash-1 [000] ..... 1.000001: kfree: call_site=a ptr=ffff888100001000\n");
    SL_CHECK_EQ(run("trace-gen t.txt --bytes -1"), 2);
    SL_CHECK(has("--bytes takes a size"));
    SL_CHECK_EQ(run("trace-gen t.txt --bytes 99999999999G"), 2);
    SL_CHECK_EQ(run("trace-gen /dev/zero --bytes 1K"), 1);
    SL_CHECK(has("device"));
    SL_CHECK_EQ(run("trace-gen - --bytes 1K < t.txt | wc -c"), 0);
    SL_CHECK(atoi(out) >= 1024);
}

static void test_fifo_and_device_inputs_refused(void)
{
    shell("mkfifo %s", "fifo");
    shell("mkdir -p %s && mkfifo tree/kmalloc-64/object_size", "tree/kmalloc-64");
    SL_CHECK_EQ(run("geometry --slabinfo /dev/zero"), 1);
    SL_CHECK(has("device"));
    SL_CHECK_EQ(run("geometry --slabinfo fifo"), 1);
    SL_CHECK(has("FIFO"));
    SL_CHECK_EQ(run("geometry --sysfs tree"), 1);
    SL_CHECK(has("FIFO"));
    SL_CHECK_EQ(run("slab-types --caches fifo"), 1);
    SL_CHECK(has("FIFO"));
    SL_CHECK_EQ(run("slab-types --slabinfo /dev/zero"), 1);
    SL_CHECK_EQ(run("slab-types --sysfs tree"), 1);
    SL_CHECK(has("FIFO"));
    SL_CHECK_EQ(run("slabinfo fifo"), 1);
    SL_CHECK(has("regular file"));
    SL_CHECK_EQ(run("slabinfo /dev/zero"), 1);
    /* A tree whose attribute is a FIFO: that attribute is skipped, the read does not block. */
    shell("mkdir -p %s && echo 64 > tree2/c/object_size && mkfifo tree2/c/slab_size", "tree2/c");
    SL_CHECK_EQ(run("slabinfo tree2 -z"), 0);
    SL_CHECK(has("c "));
    SL_CHECK_EQ(run("replay fifo"), 1);
    SL_CHECK(has("FIFO"));
}

static void test_geometry_slabinfo_header(void)
{
    write_text("v1.slabinfo", "slabinfo - version: 1.1\nkmalloc-64 10 10 64 64 1 : tunables 0 0 0 : slabdata 1 1 0\n");
    SL_CHECK_EQ(run("geometry --slabinfo v1.slabinfo"), 1);
    SL_CHECK(has("version: 2"));
    write_text("any.txt", "hello\nkmalloc-64 10 10 64 64 1 : tunables 0 0 0 : slabdata 1 1 0\n");
    SL_CHECK_EQ(run("geometry --slabinfo any.txt"), 1);
    write_text("v2.slabinfo", "slabinfo - version: 2.1\nkmalloc-64 10 10 64 64 1 : tunables 0 0 0 : slabdata 1 1 0\n");
    SL_CHECK_EQ(run("geometry --slabinfo v2.slabinfo --cpus 2"), 0);
    SL_CHECK(has("kmalloc-64"));
}

static void test_slabinfo_header_with_nul_bytes(void)
{
    write_file("nul.slabinfo", "slabinfo\0\0 - version: 2.1\nkmalloc-64 1 1 64 64 1\n", 45);
    SL_CHECK_EQ(run("slabinfo nul.slabinfo"), 1);
    SL_CHECK(has("NUL byte"));
}

/* A ustar member into b. */
static void member(sl_strbuf *b, const char *name, const char *text)
{
    uint8_t h[SL_USTAR_BLOCK], pad[SL_USTAR_BLOCK] = {0};
    size_t n = strlen(text);
    sl_ustar_header(h, name, '0', n, NULL, 0);
    sl_strbuf_append(b, h, sizeof h);
    sl_strbuf_append(b, text, n);
    sl_strbuf_append(b, pad, sl_ustar_padding(n));
}

/* A capture whose sysfs has no alias links (once a NULL memcpy) and a cache without slab_size (once an underflowed Loss). */
static void test_slabinfo_capture_without_links_or_slab_size(void)
{
    sl_strbuf b = {0};
    uint8_t end[2 * SL_USTAR_BLOCK] = {0};
    member(&b, "slabcap.meta", "format=slabcap/1\nkernel_release=6.18.0\n");
    member(&b, "sys/kernel/slab/odd/object_size", "64\n");
    member(&b, "sys/kernel/slab/odd/objects", "100\n");
    member(&b, "sys/kernel/slab/odd/slabs", "2\n");
    member(&b, "sys/kernel/slab/odd/order", "0\n");
    member(&b, "sys/kernel/slab/odd/objs_per_slab", "64\n");
    member(&b, "sys/kernel/slab/huge/object_size", "64\n");
    member(&b, "sys/kernel/slab/huge/objects", "1\n");
    member(&b, "sys/kernel/slab/huge/slabs", "1\n");
    member(&b, "sys/kernel/slab/huge/order", "200\n");
    member(&b, "trace.txt", "");
    sl_strbuf_append(&b, end, sizeof end);
    SL_REQUIRE(!b.failed);
    write_file("nolinks.slabcap", b.data, b.len);
    sl_strbuf_free(&b);
    SL_CHECK_EQ(run("slabinfo nolinks.slabcap -r odd"), 0);
    SL_CHECK(has("Loss   :       0"));
    SL_CHECK(!has("4294967"));
    SL_CHECK_EQ(run("slabinfo nolinks.slabcap -T"), 0);
    SL_CHECK(!has("4294967"));
    SL_CHECK_EQ(run("slabinfo nolinks.slabcap -a"), 0);
    SL_CHECK_EQ(run("slabinfo nolinks.slabcap -z"), 0);
    SL_CHECK(has("huge"));
}

static void test_replay_directory_and_own_input(void)
{
    shell("mkdir -p %s", "adir");
    SL_CHECK_EQ(run("replay adir"), 1);
    SL_CHECK(has("directory"));
    const char *trace = "bash-1 [000] ..... 1.000001: kfree: call_site=a ptr=ffff888100001000\n";
    write_text("in.txt", trace);
    SL_CHECK_EQ(run("replay in.txt --perfetto in.txt"), 1);
    SL_CHECK(has("input"));
    char path[PATH_MAX], buf[256] = {0};
    snprintf(path, sizeof path, "%s/in.txt", dir);
    FILE *f = fopen(path, "r");
    SL_REQUIRE(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    SL_CHECK(n == strlen(trace) && !strcmp(buf, trace));
}

static void test_failed_replay_leaves_no_perfetto_file(void)
{
    write_text("old.json", "previous");
    /* Not a trace at all (a gzip header with a broken body): the replay fails. */
    write_file("broken.gz", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-garbage", 26);
    SL_CHECK_EQ(run("replay broken.gz --perfetto new.json"), 1);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/new.json", dir);
    SL_CHECK(access(path, F_OK) != 0);
    SL_CHECK_EQ(run("replay broken.gz --perfetto old.json"), 1);
    snprintf(path, sizeof path, "%s/old.json", dir);
    char buf[64] = {0};
    FILE *f = fopen(path, "r");
    SL_REQUIRE(f);
    SL_CHECK(fread(buf, 1, sizeof buf - 1, f) == 8 && !strcmp(buf, "previous"));
    fclose(f);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        SL_CHECK(strstr(e->d_name, ".tmp-") == NULL); /* no temporary left */
    if (d)
        closedir(d);
}

/* Cache names and call sites with bytes that are not UTF-8: the JSON and the Perfetto file still are. */
static void test_json_and_perfetto_utf8(void)
{
    write_text("bad.txt", "bash-1 [000] ..... 1.000001: kmem_cache_alloc: call_site=f\xff\xc0\xaf+0x1/0x2 "
                          "ptr=ffff888100001000 bytes_req=8 bytes_alloc=8 gfp_flags=GFP_KERNEL node=-1 "
                          "accounted=false name=ca\xe9\xed\xa0\x80he\n"
                          "bash-1 [001] ..... 1.000002: kmem_cache_free: call_site=g\xfe+0x1/0x2 "
                          "ptr=ffff888100001000 name=ca\xe9\xed\xa0\x80he\n");
    SL_CHECK_EQ(run("replay bad.txt --format json --perfetto bad.json > bad.out.json"), 0);
    const char *py = "python3 -c \"import json,sys; [json.loads(open(f,'rb').read().decode('utf-8')) for f in "
                     "sys.argv[1:]]; print('valid')\" bad.out.json bad.json";
    if (system("command -v python3 >/dev/null 2>&1") != 0)
        SL_SKIP("python3 checks the UTF-8 and JSON here, and it is not installed");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s 2>&1", dir, py);
    FILE *p = popen(cmd, "r");
    SL_REQUIRE(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    SL_CHECK_EQ(pclose(p), 0);
    SL_CHECK(has("valid"));
}

static void test_percpu_options_bounded_by_memory(void)
{
    SL_CHECK_EQ(run("percpu --objects 67108864 --sizes 1024 --units 64 --unit-size 16777216"), 2);
    SL_CHECK(has("MiB") && has("half of this machine"));
}

static void test_help_stops_at_dashdash(void)
{
    SL_CHECK_EQ(run("replay -h"), 0);
    SL_CHECK(has("usage: slablab replay"));
    /* After --, -h is the wrapped command's: the tool goes on to its own checks (here: no -o), no help page. */
    SL_CHECK_EQ(run("capture -- ls -h /"), 2);
    SL_CHECK(has("give the output file"));
}
#endif

int main(void)
{
#if SL_WASM
    printf("skipped: %s\n", SL_CLI_NATIVE_ONLY);
    return sl_check_summary();
#else
    if (!sl_cli_binary(bin, sizeof bin) || !mkdtemp(dir)) {
        printf("FAIL: the slablab binary or a temporary directory is missing\n");
        return 1;
    }
    SL_RUN(test_tracegen_line_longer_than_its_buffer);
    SL_RUN(test_tracegen_bounds);
    SL_RUN(test_fifo_and_device_inputs_refused);
    SL_RUN(test_geometry_slabinfo_header);
    SL_RUN(test_slabinfo_header_with_nul_bytes);
    SL_RUN(test_slabinfo_capture_without_links_or_slab_size);
    SL_RUN(test_replay_directory_and_own_input);
    SL_RUN(test_failed_replay_leaves_no_perfetto_file);
    SL_RUN(test_json_and_perfetto_utf8);
    SL_RUN(test_percpu_options_bounded_by_memory);
    SL_RUN(test_help_stops_at_dashdash);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return sl_check_summary();
#endif
}
