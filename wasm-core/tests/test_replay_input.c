/*
 * test_replay_input.c - the input stages: the gzip decoder (stored, fixed
 * and dynamic blocks, header fields, several members, every truncation,
 * each corruption with its message), the ustar reader (a .slabcap built
 * here: metadata, sysfs with an alias, the trace; bad checksum, truncation,
 * no trace, a trace.dat inside), the refusal of what is not a trace (a
 * real trace.dat head, other binary formats, noise, empty, text without
 * events), and that neither the chunking of the input nor pausing and
 * resuming at any event changes the result.
 */
#include "replay_util.h"

#include "gzip_write.h"

/* ---- building gzip streams -------------------------------------------- */

typedef struct bits {
    sl_strbuf b;
    uint32_t acc;
    unsigned n;
} bits;

static void put_bits(bits *w, uint32_t v, unsigned n) /* LSB first */
{
    for (unsigned i = 0; i < n; i++) {
        w->acc |= ((v >> i) & 1) << w->n;
        if (++w->n == 8) {
            uint8_t c = (uint8_t)w->acc;
            sl_strbuf_append(&w->b, &c, 1);
            w->acc = 0;
            w->n = 0;
        }
    }
}
static void put_code(bits *w, uint32_t code, unsigned n) /* Huffman codes: MSB first */
{
    for (unsigned i = n; i-- > 0;)
        put_bits(w, (code >> i) & 1, 1);
}
static void flush_bits(bits *w)
{
    if (w->n)
        put_bits(w, 0, 8 - w->n);
}

static void fixed_literal(bits *w, uint8_t c)
{
    if (c < 144)
        put_code(w, 0x30 + c, 8);
    else
        put_code(w, 0x190 + (c - 144), 9);
}

/*
 * One member in a fixed-Huffman block: the literals of `data`, except that
 * each run of 11 equal bytes is written as the byte and a match of length
 * 10 at distance 1 (an overlapping copy).
 */
static void gz_fixed(sl_strbuf *o, const char *data, size_t len)
{
    gz_header(o, 0);
    bits w = {0};
    put_bits(&w, 1, 1); /* BFINAL */
    put_bits(&w, 1, 2); /* BTYPE 01 */
    for (size_t i = 0; i < len;) {
        bool run = i + 11 <= len;
        for (size_t k = 1; run && k < 11; k++)
            run = data[i + k] == data[i];
        fixed_literal(&w, (uint8_t)data[i]);
        if (run) {
            put_code(&w, 264 - 256, 7); /* length 10 */
            put_code(&w, 0, 5);         /* distance 1 */
            i += 11;
        } else {
            i++;
        }
    }
    put_code(&w, 0, 7); /* end of block */
    flush_bits(&w);
    sl_strbuf_append(o, w.b.data, w.b.len);
    sl_strbuf_free(&w.b);
    gz_trailer(o, data, len);
}

static const char *trace_text =
    "# tracer: nop\n"
    "#P:2\n"
    "a-1 [000] ..... 1.000001: kmalloc: call_site=f+0x1/0x2 ptr=100 bytes_req=60 bytes_alloc=64 gfp_flags=GFP_KERNEL\n"
    "a-1 [001] ..... 1.000002: kmem_cache_alloc: call_site=g ptr=200 name=dentry bytes_req=192 bytes_alloc=192 "
    "gfp_flags=GFP_KERNEL\n"
    "a-1 [001] ..... 1.000003: kfree: call_site=h ptr=100\n"
    "a-1 [000] ..... 1.000004: percpu_alloc_percpu: call_site=mm_init+0x2bf/0x4d0 reserved=0 is_atomic=0 size=16 "
    "align=8 base_addr=00000000dbbbee13 off=40 ptr=00000000ce33218c bytes_alloc=64 gfp_flags=GFP_KERNEL\n"
    "a-1 [000] ..... 1.000005: kmem_cache_free: call_site=h ptr=200 name=dentry\n"
    "a-1 [000] ..... 1.000006: kfree: call_site=h ptr=0000000000000000\n";

/* The JSON without the timing members at its end. */
static char *json_without_timing(sl_replay *r)
{
    sl_strbuf b = {0};
    sl_replay_json(r, &b, NULL);
    char *cut = b.data ? strstr(b.data, "\"elapsed_s\"") : NULL;
    if (cut)
        *cut = 0;
    return b.data;
}

static void expect_refusal(const void *data, size_t len, const char *needle)
{
    sl_replay_config cfg = {0};
    int rc;
    sl_replay *r = replay_chunks(data, len, &cfg, 0, &rc);
    SL_CHECK_EQ(rc, SL_EINVAL);
    const char *err = r ? sl_replay_error(r) : NULL;
    if (!err || !strstr(err, needle))
        fprintf(stderr, "  wanted a refusal with '%s', got '%s'\n", needle, err ? err : "(none)");
    SL_CHECK(err && strstr(err, needle));
    if (r) {
        jl *j = replay_tree(r);
        SL_CHECK(j && jl_str(j, "status") && !strcmp(jl_str(j, "status"), "refused"));
        SL_CHECK(j && jl_str(j, "error") && strstr(jl_str(j, "error"), needle));
        jl_free(j);
    }
    sl_replay_destroy(r);
}

/* ---- gzip -------------------------------------------------------------- */

static void test_gzip_blocks_and_headers(void)
{
    char *plain = NULL;
    {
        sl_replay_config cfg = {0};
        int rc;
        sl_replay *r = replay_text(trace_text, &cfg, &rc);
        SL_REQUIRE(rc == SL_OK);
        plain = json_without_timing(r);
        sl_replay_destroy(r);
    }
    SL_REQUIRE(plain);
    /* Input sizes differ ("bytes", "gzip"), so compare from the "events" member on. */
    const char *plain_events = strstr(plain, "\"events\"");
    for (int variant = 0; variant < 5; variant++) {
        sl_strbuf gz = {0};
        size_t len = strlen(trace_text);
        if (variant == 0)
            gz_stored(&gz, trace_text, len, 0, 1000);
        else if (variant == 1)
            gz_stored(&gz, trace_text, len, 2 | 4 | 8 | 16, 1000); /* FHCRC FEXTRA FNAME FCOMMENT */
        else if (variant == 2)
            gz_fixed(&gz, trace_text, len);
        else if (variant == 3) { /* two members and tar-style zero padding */
            gz_fixed(&gz, trace_text, 100);
            gz_stored(&gz, trace_text + 100, len - 100, 8, 1000);
            sl_strbuf_append(&gz, "\0\0\0\0\0\0\0\0", 8);
        } else { /* every block boundary: stored in 1000-byte blocks over the text three times */
            sl_strbuf three = {0};
            sl_strbuf_printf(&three, "%s%s%s", trace_text, trace_text + 20, trace_text + 20);
            gz_stored(&gz, three.data, three.len, 0, 1000);
            sl_strbuf_free(&three);
            sl_replay_config cfg = {0};
            int rc;
            sl_replay *r = replay_chunks(gz.data, gz.len, &cfg, 3, &rc);
            SL_CHECK_EQ(rc, SL_OK);
            sl_replay_summary s;
            sl_replay_summary_get(r, &s);
            SL_CHECK_EQ(s.parsed, 18);
            sl_replay_destroy(r);
            sl_strbuf_free(&gz);
            continue;
        }
        for (size_t chunk = 0; chunk < 20; chunk += 7) {
            sl_replay_config cfg = {0};
            int rc;
            sl_replay *r = replay_chunks(gz.data, gz.len, &cfg, chunk, &rc);
            SL_CHECK_EQ(rc, SL_OK);
            char *j = json_without_timing(r);
            const char *ev = j ? strstr(j, "\"events\"") : NULL;
            SL_CHECK(ev && plain_events && !strcmp(ev, plain_events));
            SL_CHECK(j && strstr(j, "\"gzip\": true"));
            free(j);
            sl_replay_destroy(r);
        }
        sl_strbuf_free(&gz);
    }
    free(plain);
}

static void test_gzip_truncations_and_corruptions(void)
{
    sl_strbuf gz = {0};
    gz_fixed(&gz, trace_text, strlen(trace_text));
    /* Every proper prefix of at least the magic is a truncated gzip stream. */
    for (size_t n = 2; n < gz.len; n++)
        expect_refusal(gz.data, n, n < 16 ? "truncated gzip" : "truncated gzip: the compressed stream ends");
    /* Flip the CRC, the length, the block type, the method. */
    sl_strbuf bad = {0};
    sl_strbuf_append(&bad, gz.data, gz.len);
    bad.data[bad.len - 8] ^= 1;
    expect_refusal(bad.data, bad.len, "CRC-32 does not match");
    bad.data[bad.len - 8] ^= 1;
    bad.data[bad.len - 4] ^= 1;
    expect_refusal(bad.data, bad.len, "length does not match");
    bad.data[bad.len - 4] ^= 1;
    bad.data[10] |= 6; /* BTYPE 11 */
    expect_refusal(bad.data, bad.len, "reserved type 3");
    bad.data[10] = gz.data[10];
    bad.data[2] = 9;
    expect_refusal(bad.data, bad.len, "compression method other than deflate");
    sl_strbuf_free(&bad);
    /* Garbage after the stream. */
    sl_strbuf_append(&gz, "junk", 4);
    expect_refusal(gz.data, gz.len, "not another gzip member");
    sl_strbuf_free(&gz);
    /* A stored block whose length check fails; a match before any output. */
    uint8_t stored[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 5, 0, 0, 0};
    expect_refusal(stored, sizeof stored, "stored block whose length check fails");
    bits w = {0};
    sl_strbuf head = {0};
    gz_header(&head, 0);
    put_bits(&w, 1, 1);
    put_bits(&w, 1, 2);
    put_code(&w, 264 - 256, 7);
    put_code(&w, 0, 5);
    put_code(&w, 0, 7);
    flush_bits(&w);
    sl_strbuf_append(&head, w.b.data, w.b.len);
    expect_refusal(head.data, head.len, "a distance too far back");
    sl_strbuf_free(&w.b);
    sl_strbuf_free(&head);
}

/* The real gzip -9 fixture (dynamic blocks): its CRC-32 checks the decoder's output. */
static void test_gzip_dynamic_fixture_any_chunking(void)
{
    size_t len;
    uint8_t *data = read_fixture("trace-cmd-report-6.18.txt.gz", &len);
    SL_REQUIRE(data);
    char *first = NULL;
    static const size_t chunks[] = {0, 1, 13, 4096, 65537};
    for (unsigned i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        sl_replay_config cfg = {0};
        int rc;
        sl_replay *r = replay_chunks(data, len, &cfg, chunks[i], &rc);
        SL_CHECK_EQ(rc, SL_OK);
        char *j = json_without_timing(r);
        if (!first)
            first = j;
        else {
            SL_CHECK(j && !strcmp(j, first));
            free(j);
        }
        sl_replay_destroy(r);
    }
    free(first);
    /* Truncated in the middle: refused, nothing replayed is reported as ok. */
    expect_refusal(data, len / 2, "truncated gzip");
    free(data);
}

/* ---- ustar ------------------------------------------------------------- */

static void tar_file(sl_strbuf *o, const char *name, const char *data)
{
    uint8_t h[SL_USTAR_BLOCK], pad[SL_USTAR_BLOCK] = {0};
    size_t n = strlen(data);
    sl_ustar_header(h, name, '0', n, NULL, 1700000000);
    sl_strbuf_append(o, h, sizeof h);
    sl_strbuf_append(o, data, n);
    sl_strbuf_append(o, pad, sl_ustar_padding(n));
}

static void tar_link(sl_strbuf *o, const char *name, const char *target)
{
    uint8_t h[SL_USTAR_BLOCK];
    sl_ustar_header(h, name, '2', 0, target, 1700000000);
    sl_strbuf_append(o, h, sizeof h);
}

static const char one_remote_free[] =
    "a-1 [000] ..... 1.000001: kmem_cache_alloc: call_site=g ptr=200 name=my_alias bytes_req=192 "
    "bytes_alloc=192 gfp_flags=GFP_KERNEL\n"
    "a-1 [001] ..... 1.000002: kmem_cache_free: call_site=h ptr=200 name=my_alias"; /* no newline */

/* A .slabcap of one cache (alias my_alias), its uname -v (NULL: none), its trace member (NULL: none). */
static void build_capture(sl_strbuf *o, const char *uname_v, const char *trace, bool with_end)
{
    char meta[256];
    snprintf(meta, sizeof meta,
             "format=slabcap/1\nkernel_release=6.18.44-test\n%s%s%scpus_possible=2\ncpus_present=2\n"
             "percpu_unit_size=1048576\n",
             uname_v ? "kernel_version=" : "", uname_v ? uname_v : "", uname_v ? "\n" : "");
    tar_file(o, "slabcap.meta", meta);
    tar_link(o, "sys/kernel/slab/my_alias", ":0000192");
    static const char *const attrs[][2] = {{"object_size", "192\n"}, {"align", "8\n"},          {"slab_size", "192\n"},
                                           {"order", "0\n"},         {"objs_per_slab", "21\n"}, {"min_partial", "5\n"},
                                           {"cpu_partial", "120\n"}, {"objects", "42 N0=42\n"}};
    for (unsigned i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        char name[128];
        snprintf(name, sizeof name, "sys/kernel/slab/:0000192/%s", attrs[i][0]);
        tar_file(o, name, attrs[i][1]);
    }
    if (trace)
        tar_file(o, "trace.txt", trace);
    if (with_end) {
        uint8_t zero[2 * SL_USTAR_BLOCK] = {0};
        sl_strbuf_append(o, zero, sizeof zero);
    }
}

static void test_slabcap_archive(void)
{
    sl_strbuf tar = {0};
    build_capture(&tar, NULL, one_remote_free, true);
    for (size_t chunk = 0; chunk < 600; chunk += 511) {
        sl_replay_config cfg = {0};
        int rc;
        sl_replay *r = replay_chunks(tar.data, tar.len, &cfg, chunk, &rc);
        SL_CHECK_EQ(rc, SL_OK);
        jl *j = replay_tree(r);
        SL_REQUIRE(j);
        SL_CHECK(jl_str(j, "model.kernel") && !strcmp(jl_str(j, "model.kernel"), "6.18"));
        SL_CHECK(jl_str(j, "model.kernel_source") && !strcmp(jl_str(j, "model.kernel_source"), "capture"));
        SL_CHECK_EQ(jl_num(j, "capture.cpus_possible"), 2);
        SL_CHECK_EQ(jl_num(j, "capture.sysfs_caches"), 1);
        SL_CHECK_EQ(jl_num(j, "input.archive"), 1);
        SL_CHECK_EQ(jl_num(j, "events.parsed"), 2); /* the last line had no newline */
        const jl *c = json_cache(j, "my_alias");
        SL_REQUIRE(c);
        SL_CHECK(jl_str(c, "geometry.source") && !strcmp(jl_str(c, "geometry.source"), "sysfs"));
        SL_CHECK_EQ(jl_num(c, "geometry.matches_kernel"), 1);
        SL_CHECK_EQ(jl_num(c, "geometry.objs_per_slab"), 21);
        SL_CHECK_EQ(jl_num(c, "cross_cpu_frees"), 1);
        SL_CHECK_EQ(jl_num(j, "model.errors"), 0);
        jl_free(j);
        sl_replay_destroy(r);
    }
    /* A header whose checksum does not match. */
    sl_strbuf bad = {0};
    sl_strbuf_append(&bad, tar.data, tar.len);
    bad.data[5] ^= 1;
    expect_refusal(bad.data, bad.len, "checksum does not match");
    sl_strbuf_free(&bad);
    /* Cut inside the trace member. */
    const char *t = memmem(tar.data, tar.len, "a-1 [001]", 9);
    SL_REQUIRE(t);
    expect_refusal(tar.data, (size_t)(t - tar.data) + 5, "truncated archive: it ends inside member trace.txt");
    sl_strbuf_free(&tar);
    /* No trace member; a trace.dat member. */
    sl_strbuf none = {0};
    build_capture(&none, NULL, NULL, true);
    expect_refusal(none.data, none.len, "has no trace.txt member");
    sl_strbuf_free(&none);
    sl_strbuf dat = {0};
    build_capture(&dat, NULL, NULL, false);
    tar_file(&dat, "trace.dat", "\x17\x08\x44tracing6");
    expect_refusal(dat.data, dat.len, "run `trace-cmd report` on it first");
    sl_strbuf_free(&dat);
}

/* ---- what is not a trace ----------------------------------------------- */

/*
 * The capture's uname -v picks the SLUB fast paths: PREEMPT_RT replays
 * every allocation through ___slab_alloc under local_lock (no allocation
 * fast path), a preemptible kernel the lockless paths (the second
 * allocation from the CPU slab is fast); frees into the CPU slab are fast
 * in both.  A kernel without CONFIG_PREEMPTION steps tids by 1.
 */
static void test_preemption_from_the_capture(void)
{
    static const char two_allocs[] =
        "a-1 [000] ..... 1.000001: kmem_cache_alloc: call_site=g ptr=200 name=my_alias bytes_req=192 bytes_alloc=192 "
        "gfp_flags=GFP_KERNEL\n"
        "a-1 [000] ..... 1.000002: kmem_cache_alloc: call_site=g ptr=2c0 name=my_alias bytes_req=192 bytes_alloc=192 "
        "gfp_flags=GFP_KERNEL\n"
        "a-1 [000] ..... 1.000003: kmem_cache_free: call_site=h ptr=2c0 name=my_alias\n"
        "a-1 [000] ..... 1.000004: kmem_cache_free: call_site=h ptr=200 name=my_alias\n";
    static const struct {
        const char *uname_v, *preemption;
        double alloc_fast;
    } cases[] = {
        {"#1 SMP PREEMPT_RT Tue Jan  6 10:00:00 UTC 2026", "rt", 0.0},
        {"#1 SMP PREEMPT_DYNAMIC @0", "preempt", 0.5},
        {"#1 SMP Tue Jan  6 10:00:00 UTC 2026", "none", 0.5},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sl_strbuf tar = {0};
        build_capture(&tar, cases[i].uname_v, two_allocs, true);
        sl_replay_config cfg = {0};
        int rc;
        sl_replay *r = replay_chunks(tar.data, tar.len, &cfg, 0, &rc);
        SL_CHECK_EQ(rc, SL_OK);
        jl *j = replay_tree(r);
        SL_REQUIRE(j);
        SL_CHECK(jl_str(j, "capture.preemption") && !strcmp(jl_str(j, "capture.preemption"), cases[i].preemption));
        bool rt = !strcmp(cases[i].preemption, "rt");
        const char *rules = jl_str(j, "model.rules.slub");
        SL_CHECK(rules && (strstr(rules, "PREEMPT_RT") != NULL) == rt);
        sl_replay_summary sum;
        sl_replay_summary_get(r, &sum);
        SL_CHECK_EQ(sum.preempt_rt, rt);
        const jl *c = json_cache(j, "my_alias");
        SL_REQUIRE(c);
        SL_CHECK(jl_num(c, "alloc_fastpath_share") == cases[i].alloc_fast);
        SL_CHECK(jl_num(c, "free_fastpath_share") == 1.0);
        /* TID_STEP: 1 without CONFIG_PREEMPTION, else the CPUs rounded up to a power of two. */
        const sl_slub_cache *s = sl_replay_model_cache(r, (unsigned)jl_num(c, "index"), 0);
        SL_REQUIRE(s);
        SL_CHECK_EQ(sl_slub_cache_tid_step(s), !strcmp(cases[i].preemption, "none") ? 1u : 2u);
        SL_CHECK_EQ(jl_num(j, "model.errors"), 0);
        jl_free(j);
        sl_replay_destroy(r);
        sl_strbuf_free(&tar);
    }
}

static void test_refusals(void)
{
    size_t len;
    uint8_t *dat = read_fixture("trace-cmd-6.18.dat.head", &len);
    SL_REQUIRE(dat);
    expect_refusal(dat, len, "a binary trace-cmd trace.dat file: run `trace-cmd report -i FILE > trace.txt` first");
    sl_strbuf gz = {0};
    gz_stored(&gz, dat, len, 0, 1000);
    expect_refusal(gz.data, gz.len, "gzip holding a binary trace-cmd trace.dat");
    sl_strbuf_free(&gz);
    free(dat);
    expect_refusal("\x28\xb5\x2f\xfd\x00\x01", 6, "zstd-compressed data: decompress it first (zstd -d FILE)");
    expect_refusal("\xfd"
                   "7zXZ\0\0\0",
                   8, "xz-compressed data");
    expect_refusal("BZh91AY&SY", 10, "bzip2-compressed data");
    expect_refusal("PK\x03\x04\x14\0", 6, "a zip archive");
    uint8_t noise[1024];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof noise; i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (uint8_t)(x >> 16);
    }
    expect_refusal(noise, sizeof noise, "not a trace: binary data");
    expect_refusal("", 0, "empty input");
    expect_refusal("hello\nworld\n", 12, "not an ftrace trace: none of its 2 lines is a trace event");
    /* Events, but none the replay uses: accepted, with a warning. */
    sl_replay_config cfg = {0};
    int rc;
    sl_replay *r = replay_text("a-1 [000] ..... 1.0: sched_switch: prev_comm=a\n", &cfg, &rc);
    SL_CHECK_EQ(rc, SL_OK);
    sl_replay_summary s;
    sl_replay_summary_get(r, &s);
    SL_CHECK(s.nwarnings >= 1 && strstr(s.warnings[s.nwarnings - 1], "no kmem or percpu events"));
    sl_replay_destroy(r);
    /* Cancel, and data after the end. */
    SL_REQUIRE(sl_replay_create(&cfg, &r) == SL_OK);
    SL_CHECK_EQ(sl_replay_feed(r, trace_text, 40, NULL), SL_OK);
    sl_replay_cancel(r);
    SL_CHECK_EQ(sl_replay_feed(r, trace_text + 40, 10, NULL), SL_EINVAL);
    SL_CHECK(!strcmp(sl_replay_error(r), "cancelled"));
    sl_replay_destroy(r);
    r = replay_text(trace_text, &cfg, &rc);
    SL_CHECK_EQ(sl_replay_feed(r, "x", 1, NULL), SL_EINVAL);
    SL_CHECK(strstr(sl_replay_error(r), "after the end"));
    sl_replay_destroy(r);
    /* A bad --kernel string is refused at creation. */
    sl_replay_config bad = {.kernel = "6.18.x"};
    SL_CHECK_EQ(sl_replay_create(&bad, &r), SL_EINVAL);
    sl_kernel_version v[2];
    char err[200];
    SL_CHECK_EQ(sl_kernel_versions_parse("4.4,6.18", v, err, sizeof err), 2);
    SL_CHECK(v[0].major == 4 && v[0].minor == 4 && v[1].major == 6 && v[1].minor == 18);
    SL_CHECK_EQ(sl_kernel_versions_parse("6.18,5.4,4.4", v, err, sizeof err), SL_EINVAL);
    SL_CHECK(strstr(err, "at most two"));
    SL_CHECK_EQ(sl_kernel_versions_parse("x", v, err, sizeof err), SL_EINVAL);
    SL_CHECK(strstr(err, "X.Y, X.Y.Z or X.Y-rcN"));
    /* The same reader as the SLUB eras': a stable release or an -rc is its X.Y. */
    SL_CHECK_EQ(sl_kernel_versions_parse("6.18.44,7.3-rc2", v, err, sizeof err), 2);
    SL_CHECK(v[0].major == 6 && v[0].minor == 18 && v[1].major == 7 && v[1].minor == 3);
    SL_CHECK(sl_kernel_version_from_release("6.8.0-45-generic", v) && v[0].major == 6 && v[0].minor == 8);
    SL_CHECK(!sl_kernel_version_from_release("linux-6.8", v));
}

/* ---- pause and resume -------------------------------------------------- */

static void test_pause_resume_matches_one_run(void)
{
    size_t len;
    uint8_t *data = read_fixture("capture-6.18.slabcap.gz", &len);
    SL_REQUIRE(data);
    sl_replay_config cfg = {0};
    int rc;
    sl_replay *whole = replay_chunks(data, len, &cfg, 0, &rc);
    SL_REQUIRE(rc == SL_OK);
    char *want = json_without_timing(whole);
    sl_replay_progress wp;
    sl_replay_progress_get(whole, &wp);
    sl_replay_destroy(whole);

    sl_replay *r;
    SL_REQUIRE(sl_replay_create(&cfg, &r) == SL_OK);
    uint64_t limit = 0, steps = 0;
    sl_replay_set_limit(r, limit);
    size_t off = 0, chunk = 8192;
    while (off < len) {
        size_t n = len - off < chunk ? len - off : chunk, used = 0;
        rc = sl_replay_feed(r, data + off, n, &used);
        SL_REQUIRE(rc == SL_OK || rc == SL_REPLAY_PAUSED);
        off += used;
        if (rc == SL_REPLAY_PAUSED) {
            sl_replay_progress p;
            sl_replay_progress_get(r, &p);
            SL_CHECK_EQ(p.events, limit);
            /* Mostly big steps; single steps now and then (the browser's "step one event"). */
            limit += steps++ % 5 ? 1 : 3777;
            sl_replay_set_limit(r, limit);
        }
    }
    while ((rc = sl_replay_finish(r)) == SL_REPLAY_PAUSED)
        sl_replay_set_limit(r, ++limit);
    SL_CHECK_EQ(rc, SL_OK);
    char *got = json_without_timing(r);
    SL_CHECK(got && want && !strcmp(got, want));
    SL_CHECK(steps > 20);
    sl_replay_progress p;
    sl_replay_progress_get(r, &p);
    SL_CHECK_EQ(p.events, wp.events);
    free(got);
    free(want);
    sl_replay_destroy(r);
    free(data);
}

int main(void)
{
    SL_RUN(test_gzip_blocks_and_headers);
    SL_RUN(test_gzip_truncations_and_corruptions);
    SL_RUN(test_gzip_dynamic_fixture_any_chunking);
    SL_RUN(test_slabcap_archive);
    SL_RUN(test_preemption_from_the_capture);
    SL_RUN(test_refusals);
    SL_RUN(test_pause_resume_matches_one_run);
    return sl_check_summary();
}
