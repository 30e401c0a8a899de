/*
 * test_replay_hardening.c - the replay on hostile trace values (issue 22):
 * a percpu base_addr or ptr of 0 (the hash map once used key 0 as "empty":
 * a segfault natively, a silently overwritten byte of low memory in
 * WebAssembly), a free of ptr 0 after a real chunk (the chunk's live count
 * once underflowed), and keys that differ only in their high bits (once all
 * on one slot: linear probing over the whole table).  Runs natively, under
 * ASan/UBSan and in the WebAssembly build.
 */
#include "replay_util.h"

#include "../src/replay/replay_internal.h"

#define LINE(ev, rest) "bash-1 [000] ..... 1.000001: " ev ": " rest "\n"

/* Every chunk's live count is the number of live areas that name it (none has underflowed). */
static void check_chunk_counts(sl_replay *r)
{
    for (uint32_t ci = 0; ci < r->nchunks; ci++) {
        uint32_t live = 0;
        for (size_t i = 0; i <= r->areas.mask; i++) {
            const sli_area *a = (const sli_area *)(const void *)(r->areas.vals + i * r->areas.esize);
            live += r->areas.keys[i] && a->chunk == ci;
        }
        const sli_area *z = sli_map_get(&r->areas, 0);
        live += z && z->chunk == ci;
        SL_CHECK_EQ(r->chunks[ci].live, live);
        SL_CHECK(r->chunks[ci].live < 1000);
    }
}

static void test_replay_percpu_free_base_zero(void)
{
    sl_replay_config cfg = {0};
    int rc;
    sl_replay *r = replay_text(LINE("percpu_free_percpu", "base_addr=0 off=40 ptr=00000000ce33218c"), &cfg, &rc);
    SL_REQUIRE(r);
    SL_CHECK_EQ(rc, SL_OK);
    SL_CHECK_EQ(r->pcpu_freed_unknown, 1);
    SL_CHECK_EQ(r->nchunks, 1);
    SL_CHECK_EQ(r->chunks[0].base, 0);
    SL_CHECK_EQ(r->chunks[0].freed_unknown, 1);
    check_chunk_counts(r);
    sl_replay_destroy(r);
}

static void test_replay_percpu_alloc_and_destroy_base_zero(void)
{
    const char *t = LINE("percpu_alloc_percpu", "call_site=f+0x1/0x2 reserved=0 is_atomic=0 size=16 align=8 "
                                                "base_addr=0 off=40 ptr=0 bytes_alloc=64 gfp_flags=GFP_KERNEL")
        LINE("percpu_alloc_percpu", "call_site=f+0x1/0x2 reserved=0 is_atomic=0 size=16 align=8 base_addr=0 off=88 "
                                    "ptr=00000000000000a8 bytes_alloc=64 gfp_flags=GFP_KERNEL")
            LINE("percpu_destroy_chunk", "base_addr=0") LINE("percpu_destroy_chunk", "base_addr=0");
    sl_replay_config cfg = {0};
    int rc;
    sl_replay *r = replay_text(t, &cfg, &rc);
    SL_REQUIRE(r);
    SL_CHECK_EQ(rc, SL_OK);
    SL_CHECK_EQ(r->pcpu_allocs, 2);
    /* The first destroy frees both areas (ptr 0 included), the second finds a new, empty chunk. */
    SL_CHECK_EQ(r->areas.count, 0);
    SL_CHECK_EQ(r->pcpu_untraced_frees, 2);
    SL_CHECK(sli_map_get(&r->areas, 0) == NULL);
    check_chunk_counts(r);
    sl_replay_destroy(r);
}

static void test_replay_percpu_free_ptr_zero_after_real_chunk(void)
{
    const char *t = LINE("percpu_alloc_percpu", "call_site=f+0x1/0x2 reserved=0 is_atomic=0 size=16 align=8 "
                                                "base_addr=00000000dbbbee13 off=40 ptr=00000000ce33218c "
                                                "bytes_alloc=64 gfp_flags=GFP_KERNEL")
        LINE("percpu_free_percpu", "base_addr=00000000dbbbee13 off=40 ptr=0")
            LINE("percpu_free_percpu", "base_addr=00000000dbbbee13 off=40 ptr=00000000ce33218c");
    sl_replay_config cfg = {0};
    int rc;
    sl_replay *r = replay_text(t, &cfg, &rc);
    SL_REQUIRE(r);
    SL_CHECK_EQ(rc, SL_OK);
    SL_CHECK_EQ(r->pcpu_freed_unknown, 1);
    SL_CHECK_EQ(r->pcpu_frees, 1);
    SL_REQUIRE(r->nchunks == 1);
    SL_CHECK_EQ(r->chunks[0].live, 0);
    SL_CHECK_EQ(r->chunks[0].frees, 1);
    check_chunk_counts(r);
    jl *doc = replay_tree(r);
    SL_CHECK(doc != NULL);
    jl_free(doc);
    sl_replay_destroy(r);
}

/* Key 0 is a key like any other: stored, found, counted, kept across growth, deleted. */
static void test_replay_map_key_zero(void)
{
    sli_map m;
    SL_REQUIRE(sli_map_init(&m, sizeof(uint64_t)) == SL_OK);
    bool existed = true;
    SL_CHECK(sli_map_get(&m, 0) == NULL);
    uint64_t *v = sli_map_put(&m, 0, &existed);
    SL_REQUIRE(v);
    SL_CHECK(!existed);
    *v = 77;
    for (uint64_t k = 1; k <= 1000; k++) {
        uint64_t *w = sli_map_put(&m, k, &existed);
        SL_REQUIRE(w);
        *w = k;
    }
    SL_CHECK_EQ(m.count, 1001);
    v = sli_map_get(&m, 0);
    SL_CHECK(v && *v == 77);
    SL_CHECK(sli_map_put(&m, 0, &existed) && existed);
    for (uint64_t k = 1; k <= 1000; k++) {
        uint64_t *w = sli_map_get(&m, k);
        SL_CHECK(w && *w == k);
    }
    SL_CHECK(sli_map_del(&m, 0));
    SL_CHECK(!sli_map_del(&m, 0));
    SL_CHECK(sli_map_get(&m, 0) == NULL);
    SL_CHECK_EQ(m.count, 1000);
    sli_map_fini(&m);
}

/*
 * Pointers that differ only in their high bits (i << 48, i << 40, i << 32)
 * once all hashed to one slot.  With every key bit in the slot, the longest
 * probe of 2^16 keys in a half-full table stays short (expected O(log n):
 * about 20 here; once it was the table's whole population).
 */
static void test_replay_map_high_bit_keys_spread(void)
{
    static const unsigned shifts[] = {48, 40, 32, 12};
    for (unsigned s = 0; s < sizeof shifts / sizeof shifts[0]; s++) {
        sli_map m;
        SL_REQUIRE(sli_map_init(&m, sizeof(uint32_t)) == SL_OK);
        const uint64_t n = 1u << 16;
        bool existed;
        for (uint64_t i = 1; i <= n; i++)
            SL_REQUIRE(sli_map_put(&m, i << shifts[s], &existed));
        size_t longest = sli_map_longest_probe(&m);
        if (longest >= 64)
            fprintf(stderr, "  keys i << %u: longest probe %zu\n", shifts[s], longest);
        SL_CHECK(longest < 64);
        /* Deleting every other key keeps the rest findable (backward shift with the new slots). */
        for (uint64_t i = 1; i <= n; i += 2)
            SL_CHECK(sli_map_del(&m, i << shifts[s]));
        for (uint64_t i = 1; i <= n; i++)
            SL_CHECK((sli_map_get(&m, i << shifts[s]) != NULL) == (i % 2 == 0));
        sli_map_fini(&m);
    }
}

/* The whole replay over `i << 48` pointers: the live table stays unclustered, each free finds its object. */
static void test_replay_high_bit_pointers(void)
{
    sl_strbuf allocs = {0}, frees = {0};
    const unsigned n = 20000;
    for (unsigned i = 1; i <= n; i++) {
        sl_strbuf_printf(&allocs,
                         "bash-1 [000] ..... 1.%06u: kmalloc: call_site=f+0x1/0x2 ptr=%016llx bytes_req=24 "
                         "bytes_alloc=32 gfp_flags=GFP_KERNEL node=-1 accounted=false\n",
                         i, (unsigned long long)i << 48);
        sl_strbuf_printf(&frees, "bash-1 [000] ..... 2.%06u: kfree: call_site=g+0x1/0x2 ptr=%016llx\n", i,
                         (unsigned long long)i << 48);
    }
    SL_REQUIRE(!allocs.failed && !frees.failed);
    sl_replay_config cfg = {0};
    sl_replay *r;
    SL_REQUIRE(sl_replay_create(&cfg, &r) == SL_OK);
    SL_CHECK_EQ(sl_replay_feed(r, allocs.data, allocs.len, NULL), SL_OK);
    SL_CHECK_EQ(r->objs.count, n);
    SL_CHECK(sli_map_longest_probe(&r->objs) < 64);
    SL_CHECK_EQ(sl_replay_feed(r, frees.data, frees.len, NULL), SL_OK);
    SL_CHECK_EQ(sl_replay_finish(r), SL_OK);
    SL_CHECK_EQ(r->objs.count, 0);
    SL_CHECK_EQ(r->freed_unknown, 0);
    sl_replay_destroy(r);
    sl_strbuf_free(&allocs);
    sl_strbuf_free(&frees);
}

/* A new base_addr on every line: at most sli_pcpu_max_chunks are modelled (once: gigabytes natively, an abort in
   WebAssembly), the rest counted and reported once. */
static void test_replay_percpu_chunks_bounded(void)
{
    sl_strbuf t = {0};
    const unsigned n = SLI_MAX_CHUNKS + 500;
    for (unsigned i = 1; i <= n; i++)
        sl_strbuf_printf(&t, "bash-1 [000] ..... 1.%06u: percpu_free_percpu: base_addr=%016llx off=40 ptr=%016llx\n", i,
                         (unsigned long long)i << 21, (unsigned long long)i);
    SL_REQUIRE(!t.failed);
    sl_replay_config cfg = {0};
    int rc;
    sl_replay *r = replay_chunks(t.data, t.len, &cfg, 0, &rc);
    SL_REQUIRE(r);
    SL_CHECK_EQ(rc, SL_OK);
    SL_CHECK_EQ(r->nchunks, sli_pcpu_max_chunks(r));
    SL_CHECK(r->nchunks >= 16 && r->nchunks <= SLI_MAX_CHUNKS);
    SL_CHECK(r->chunks_capped);
    SL_CHECK_EQ(r->pcpu_freed_unknown, n);
    SL_CHECK_EQ(r->models[0].errors, 1);
    SL_CHECK(strstr(r->models[0].error_msgs[0].msg, "more than") != NULL);
    sl_replay_destroy(r);
    sl_strbuf_free(&t);
}

/* The JSON writer keeps its output valid UTF-8 whatever the bytes (the browser's JSON.parse and Perfetto need it). */
static void test_json_string_utf8(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
#define FFFD "\xef\xbf\xbd"
        {"plain", "\"plain\""},
        {"caf\xc3\xa9", "\"caf\xc3\xa9\""},           /* valid 2-byte: kept */
        {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""}, /* valid 4-byte: kept */
        {"a\xff"
         "b",
         "\"a" FFFD "b\""},                                  /* invalid byte */
        {"\xc0\xaf", "\"" FFFD FFFD "\""},                   /* overlong '/' */
        {"\xed\xa0\x80", "\"" FFFD FFFD FFFD "\""},          /* a surrogate */
        {"\xe9", "\"" FFFD "\""},                            /* truncated sequence at the end */
        {"\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""}, /* past U+10FFFF */
        {"q\"\\\x01", "\"q\\\"\\\\\\u0001\""},
#undef FFFD
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sl_strbuf b = {0};
        SL_REQUIRE(sl_strbuf_json_string(&b, cases[i].in, strlen(cases[i].in)));
        if (strcmp(b.data, cases[i].out))
            fprintf(stderr, "  case %u: got %s\n", i, b.data);
        SL_CHECK(!strcmp(b.data, cases[i].out));
        sl_strbuf_free(&b);
    }
}

int main(void)
{
    SL_RUN(test_replay_percpu_free_base_zero);
    SL_RUN(test_replay_percpu_alloc_and_destroy_base_zero);
    SL_RUN(test_replay_percpu_free_ptr_zero_after_real_chunk);
    SL_RUN(test_replay_map_key_zero);
    SL_RUN(test_replay_map_high_bit_keys_spread);
    SL_RUN(test_replay_high_bit_pointers);
    SL_RUN(test_replay_percpu_chunks_bounded);
    SL_RUN(test_json_string_utf8);
    return sl_check_summary();
}
