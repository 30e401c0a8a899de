/*
 * fuzz_replay.c - libFuzzer drives the whole replay pipeline (sniffing,
 * gunzip, the ustar reader, the ftrace parser, pairing, the SLUB and
 * percpu models, JSON, the Perfetto export) with arbitrary bytes.
 *
 * Byte 0 picks how the rest is presented: as the file itself; inside a
 * gzip member of stored blocks (so the text behind gunzip gets explored);
 * as trace.txt inside a .slabcap-like archive with metadata and sysfs; or
 * as the fields of kmem/percpu event lines (so the field parser does).
 * Byte 1 picks the feeding chunk size and an event limit (pause/resume).
 * Whatever happens must be a clean result: no crash, no sanitizer report,
 * lines = parsed + skipped, a refusal with a message, a JSON document
 * that parses, an export that ends.
 */
#include "../tests/gzip_write.h"
#include "../tests/json_lite.h"

#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        __builtin_trap();
}

static bool sink(void *user, const void *data, size_t len)
{
    (void)data;
    *(size_t *)user += len;
    return true;
}

typedef struct ctx {
    sl_perfetto *pf;
} ctx;
static void on_op(void *user, const sl_replay_op *op) { sl_perfetto_op(((ctx *)user)->pf, op); }

static void tar_member(sl_strbuf *o, const char *name, const void *d, size_t n)
{
    uint8_t h[SL_USTAR_BLOCK], pad[SL_USTAR_BLOCK] = {0};
    sl_ustar_header(h, name, '0', n, NULL, 0);
    sl_strbuf_append(o, h, sizeof h);
    sl_strbuf_append(o, d, n);
    sl_strbuf_append(o, pad, sl_ustar_padding(n));
}

static void wrap_tar(sl_strbuf *o, const uint8_t *d, size_t n)
{
    const char *meta = "format=slabcap/1\nkernel_release=6.18.0\ncpus_possible=3\npercpu_unit_size=65536\n";
    tar_member(o, "slabcap.meta", meta, strlen(meta));
    tar_member(o, "sys/kernel/slab/filp/object_size", "184\n", 4);
    tar_member(o, "sys/kernel/slab/filp/align", "64\n", 3);
    tar_member(o, "sys/kernel/slab/filp/hwcache_align", "1\n", 2);
    uint8_t link[SL_USTAR_BLOCK];
    sl_ustar_header(link, "sys/kernel/slab/files", '2', 0, "filp", 0);
    sl_strbuf_append(o, link, sizeof link);
    tar_member(o, "trace.txt", d, n);
}

/* Each input line becomes the fields of an event line, its kind chosen by the line's first byte. */
static void wrap_lines(sl_strbuf *o, const uint8_t *d, size_t n)
{
    static const char *const kinds[] = {"kmalloc",
                                        "kmem_cache_alloc",
                                        "kfree",
                                        "kmem_cache_free",
                                        "percpu_alloc_percpu",
                                        "percpu_free_percpu",
                                        "percpu_create_chunk",
                                        "percpu_destroy_chunk",
                                        "mm_page_alloc"};
    size_t i = 0;
    unsigned t = 0;
    while (i < n) {
        const uint8_t *nl = memchr(d + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - d) : n;
        if (end > i) {
            sl_strbuf_printf(o, "t-1 [%03u] ..... %u.%06u: %s: ", d[i] % 4, t / 1000000, t % 1000000,
                             kinds[d[i] % (sizeof kinds / sizeof kinds[0])]);
            sl_strbuf_append(o, d + i + 1, end - i - 1);
            sl_strbuf_append(o, "\n", 1);
            t += 1 + d[i];
        }
        i = end + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    sl_strbuf input = {0};
    const uint8_t *in = data + 2;
    size_t n = size - 2;
    switch (data[0] % 4) {
    case 0:
        sl_strbuf_append(&input, in, n);
        break;
    case 1:
        gz_stored(&input, in, n, 0, 65535);
        break;
    case 2:
        wrap_tar(&input, in, n);
        break;
    default:
        wrap_lines(&input, in, n);
        break;
    }
    size_t out_bytes = 0;
    ctx c;
    sl_perfetto_config pc = {.sink = sink, .user = &out_bytes};
    c.pf = sl_perfetto_begin(&pc);
    sl_replay_config cfg = {.kernel = data[1] & 0x80 ? "4.19,6.18" : NULL,
                            .zone_bytes = 4 << 20,
                            .pcpu_unit_size = 1 << 16,
                            .on_op = on_op,
                            .user = &c,
                            .validate_each = data[1] & 0x40};
    sl_replay *r;
    check(sl_replay_create(&cfg, &r) == SL_OK);
    size_t chunk = 1 + (data[1] & 0x3f) * 37;
    uint64_t limit = data[1] & 8 ? (data[1] & 7) : UINT64_MAX;
    sl_replay_set_limit(r, limit);
    int rc = SL_OK;
    size_t off = 0;
    const uint8_t *p = input.failed ? (const uint8_t *)"" : (const uint8_t *)input.data;
    size_t len = input.failed ? 0 : input.len;
    while (rc != SL_EINVAL && off < len) {
        size_t k = len - off < chunk ? len - off : chunk, used = 0;
        rc = sl_replay_feed(r, p + off, k, &used);
        check(used <= k);
        off += used;
        if (rc == SL_REPLAY_PAUSED)
            sl_replay_set_limit(r, limit += 3);
        else
            check(rc == SL_EINVAL || used == k);
    }
    while (rc != SL_EINVAL && (rc = sl_replay_finish(r)) == SL_REPLAY_PAUSED)
        sl_replay_set_limit(r, limit += 3);
    if (rc == SL_EINVAL)
        check(sl_replay_error(r) && sl_replay_error(r)[0]);
    sl_replay_summary s;
    sl_replay_summary_get(r, &s);
    check(s.lines == s.parsed + s.skipped);
    sl_strbuf json = {0};
    check(sl_replay_json(r, &json, NULL) == SL_OK);
    jl *doc = jl_parse(json.data, json.len, NULL, NULL);
    check(doc != NULL);
    jl_free(doc);
    sl_strbuf_free(&json);
    check(sl_perfetto_end(c.pf) == SL_OK);
    check(out_bytes > 0);
    sl_replay_destroy(r);
    sl_strbuf_free(&input);
    return 0;
}
