/*
 * test_percpu.c - the percpu model's three allocators, each step checked by
 * sl_pcpu_validate(): allocation, every free order, alignment, chunk
 * creation and destruction, block-spanning areas, per-CPU copies, bad
 * frees, and that validate() notices a broken hint.
 */
#include "check.h"

#include "../src/percpu/pcpu_internal.h"

#define UNIT_SMALL (4 * SL_PAGE_SIZE)

static const sl_pcpu_kind kinds[] = {SL_PCPU_AREAMAP, SL_PCPU_BITMAP, SL_PCPU_SCANHINT};

static int init(sl_pcpu *pc, sl_pcpu_kind k, unsigned units, size_t unit_size)
{
    sl_pcpu_config cfg = {.kind = k, .nr_units = units, .unit_size = unit_size};
    return sl_pcpu_init(pc, &cfg);
}

static void test_alloc_free_and_errors(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        sl_pcpu pc;
        SL_REQUIRE(init(&pc, kinds[ki], 3, UNIT_SMALL) == SL_OK);
        void *a, *b;
        SL_CHECK_EQ(sl_pcpu_alloc(&pc, 0, 8, 8, &a), SL_OK);
        SL_CHECK_EQ(sl_pcpu_alloc(&pc, 1, 16, 0, &b), SL_OK);
        SL_CHECK(a != b);
        for (unsigned u = 0; u < 3; u++) {
            SL_CHECK_EQ(*(int64_t *)sl_pcpu_ptr(&pc, a, u), 0);
            sl_pcpu_add(&pc, a, u, (int64_t)u + 10);
        }
        SL_CHECK_EQ(sl_pcpu_sum(&pc, a), 10 + 11 + 12);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);

        int local;
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, &local), SL_EFOREIGN);
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, (char *)b + 4), SL_EMISALIGNED);
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, sl_pcpu_ptr(&pc, b, 1)), SL_EMISALIGNED);
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, b), SL_OK);
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, b), SL_EDOUBLEFREE);
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, NULL), SL_OK);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);

        void *x;
        SL_CHECK_EQ(sl_pcpu_alloc(&pc, 0, 0, 4, &x), SL_EINVAL);
        SL_CHECK_EQ(sl_pcpu_alloc(&pc, 0, 4, 12, &x), SL_EINVAL);
        SL_CHECK_EQ(sl_pcpu_alloc(&pc, 0, 4, 2 * SL_PAGE_SIZE, &x), SL_EINVAL);
        SL_CHECK_EQ(sl_pcpu_alloc(&pc, 0, UNIT_SMALL + 4, 4, &x), SL_EINVAL);
        SL_CHECK_EQ(sl_pcpu_alloc(&pc, 3, 4, 4, &x), SL_EINVAL);
        SL_CHECK(x == NULL);

        /* Freed memory comes back zeroed in every unit. */
        *(int *)sl_pcpu_ptr(&pc, a, 2) = 77;
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, a), SL_OK);
        SL_CHECK_EQ(sl_pcpu_alloc(&pc, 0, 8, 8, &x), SL_OK);
        SL_CHECK(x == a);
        SL_CHECK_EQ(*(int *)sl_pcpu_ptr(&pc, x, 2), 0);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        sl_pcpu_destroy(&pc);
    }
    sl_pcpu pc;
    SL_CHECK_EQ(init(&pc, SL_PCPU_BITMAP, 0, UNIT_SMALL), SL_EINVAL);
    SL_CHECK_EQ(init(&pc, SL_PCPU_BITMAP, 2, 1000), SL_EINVAL);
    SL_CHECK_EQ(init(&pc, (sl_pcpu_kind)7, 2, UNIT_SMALL), SL_EINVAL);
}

static void test_alignment(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        sl_pcpu pc;
        SL_REQUIRE(init(&pc, kinds[ki], 2, UNIT_SMALL) == SL_OK);
        void *p[40];
        unsigned n = 0;
        for (size_t align = 4; align <= SL_PAGE_SIZE; align *= 2) {
            for (size_t size = 4; size <= 1024 && n < 40; size *= 4) {
                SL_REQUIRE(sl_pcpu_alloc(&pc, 0, size, align, &p[n]) == SL_OK);
                SL_CHECK_EQ((uintptr_t)p[n] % align, 0);
                SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
                n++;
            }
        }
        for (unsigned i = 0; i < n; i++) {
            SL_CHECK_EQ(sl_pcpu_free(&pc, 0, p[(i * 7) % n]), SL_OK);
            SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        }
        sl_pcpu_destroy(&pc);
    }
}

/* Every free order of the seed, one allocator at a time, validate after each step. */
static void test_free_orders(void)
{
    enum { N = 3000 };
    static void *p[N];
    for (unsigned ki = 0; ki < 3; ki++) {
        for (int order = 0; order < 3; order++) {
            sl_pcpu pc;
            SL_REQUIRE(init(&pc, kinds[ki], 2, SL_PAGE_SIZE) == SL_OK); /* one-page units: 3 chunks */
            for (unsigned i = 0; i < N; i++) {
                SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 4, 4, &p[i]) == SL_OK);
                SL_REQUIRE(sl_pcpu_validate(&pc) == SL_OK);
            }
            for (unsigned i = 0; i < N; i++) {
                unsigned k = order == 0 ? i : order == 2 ? N - 1 - i : i < N / 2 ? 2 * i : 2 * (i - N / 2) + 1;
                SL_REQUIRE(sl_pcpu_free(&pc, 0, p[k]) == SL_OK);
                SL_REQUIRE(sl_pcpu_validate(&pc) == SL_OK);
            }
            sl_pcpu_stats st;
            sl_pcpu_get_stats(&pc, &st);
            SL_CHECK_EQ(st.live_allocs, 0);
            SL_CHECK_EQ(st.nr_chunks, 1); /* the balance step keeps one empty chunk */
            SL_CHECK(st.chunks_created >= 3);
            SL_CHECK_EQ(st.chunks_destroyed, st.chunks_created - 1);
            SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
            sl_pcpu_destroy(&pc);
        }
    }
}

/* Areas of several pages (block-spanning in the bitmaps), mixed with small ones. */
static void test_block_spanning(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        sl_pcpu pc;
        SL_REQUIRE(init(&pc, kinds[ki], 2, 16 * SL_PAGE_SIZE) == SL_OK);
        void *p[64];
        unsigned n = 0;
        for (unsigned i = 0; i < 64; i++) {
            size_t size = i % 3 == 0 ? 6000 + 4 * i : i % 3 == 1 ? 12 : 4100;
            SL_REQUIRE(sl_pcpu_alloc(&pc, 0, size, i % 5 == 0 ? 64 : 4, &p[n]) == SL_OK);
            n++;
            SL_REQUIRE(sl_pcpu_validate(&pc) == SL_OK);
        }
        for (unsigned i = 0; i < n; i += 2) {
            SL_REQUIRE(sl_pcpu_free(&pc, 0, p[i]) == SL_OK);
            SL_REQUIRE(sl_pcpu_validate(&pc) == SL_OK);
        }
        for (unsigned i = 0; i < 20; i++) {
            SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 2 * SL_PAGE_SIZE + 4 * i, 4, &p[2 * i]) == SL_OK);
            SL_REQUIRE(sl_pcpu_validate(&pc) == SL_OK);
        }
        for (unsigned i = n; i-- > 0;) {
            if (i % 2 == 0 && i >= 40)
                continue;
            SL_REQUIRE(sl_pcpu_free(&pc, 0, p[i]) == SL_OK);
            SL_REQUIRE(sl_pcpu_validate(&pc) == SL_OK);
        }
        sl_pcpu_destroy(&pc);
    }
}

/* Random sizes, alignments and frees; each live object's copies hold its id and must keep it. */
static void test_randomized(void)
{
    enum { LIVE = 256 };
    unsigned steps = (unsigned)sl_test_scale(4000);
    for (unsigned ki = 0; ki < 3; ki++) {
        sl_pcpu pc;
        SL_REQUIRE(init(&pc, kinds[ki], 3, 8 * SL_PAGE_SIZE) == SL_OK);
        void *live[LIVE] = {0};
        uint64_t rng = 0x9e3779b97f4a7c15ull + ki;
        for (unsigned s = 0; s < steps; s++) {
            unsigned slot = (unsigned)(sl_test_rand(&rng) % LIVE);
            if (live[slot]) {
                for (unsigned u = 0; u < 3; u++)
                    SL_REQUIRE(*(uint32_t *)sl_pcpu_ptr(&pc, live[slot], u) == slot * 3 + u);
                SL_REQUIRE(sl_pcpu_free(&pc, slot % 3, live[slot]) == SL_OK);
                live[slot] = NULL;
            } else {
                uint64_t r = sl_test_rand(&rng);
                size_t size = (r & 3) == 0 ? 4 + (r >> 8) % 9000 : 4 + 4 * ((r >> 8) % 32);
                size_t align = (size_t)4 << ((r >> 32) % 11);
                SL_REQUIRE(sl_pcpu_alloc(&pc, slot % 3, size, align, &live[slot]) == SL_OK);
                SL_REQUIRE((uintptr_t)live[slot] % align == 0);
                for (unsigned u = 0; u < 3; u++)
                    *(uint32_t *)sl_pcpu_ptr(&pc, live[slot], u) = slot * 3 + u;
            }
            if (sl_pcpu_validate(&pc) != SL_OK) {
                fprintf(stderr, "  %s: step %u\n", sl_pcpu_kind_name(kinds[ki]), s);
                SL_REQUIRE(false);
            }
        }
        sl_pcpu_destroy(&pc);
    }
}

/* validate() must notice a broken hint, not just pass. */
static void test_validate_detects_corruption(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        sl_pcpu pc;
        SL_REQUIRE(init(&pc, kinds[ki], 1, UNIT_SMALL) == SL_OK);
        void *p;
        SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 64, 4, &p) == SL_OK);
        sl_pcpu_chunk *c = pc.chunks[0];
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        if (kinds[ki] == SL_PCPU_AREAMAP) {
            int saved = c->contig_hint;
            c->contig_hint = 4; /* smaller than the largest free area */
            SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_ECORRUPT);
            c->contig_hint = saved;
        } else {
            c->md_blocks[0].contig_hint++;
            SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_ECORRUPT);
            c->md_blocks[0].contig_hint--;
            sli_clear_bit(c->bound_map, 0);
            SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_ECORRUPT);
            sli_set_bit(c->bound_map, 0);
        }
        c->nr_alloc++;
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_ECORRUPT);
        c->nr_alloc--;
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        sl_pcpu_destroy(&pc);
    }
}

static void test_area_map_grows(void)
{
    sl_pcpu pc;
    SL_REQUIRE(init(&pc, SL_PCPU_AREAMAP, 1, UNIT_SMALL) == SL_OK);
    void *p;
    for (unsigned i = 0; i < 200; i++)
        SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 4, 4, &p) == SL_OK);
    sl_pcpu_stats st;
    sl_pcpu_get_stats(&pc, &st);
    SL_CHECK(st.map_extends >= 2);
    SL_CHECK(pc.chunks[0]->map_alloc >= 200 + SLI_PCPU_MAP_MARGIN_HIGH);
    SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
    sl_pcpu_destroy(&pc);
}

/*
 * The hint inaccuracies the kernel accepts, on one deterministic case: a
 * full chunk of 16-byte objects; free the first object of page 1 and then
 * the last of page 0, so one 32-byte run straddles the page boundary.  Both
 * bitmaps offer each small free to the chunk hint on its own (no rescan:
 * no page became free) and lag at 16 bytes; the area map merges the areas
 * and knows the run.  Then free two neighbours inside page 2: v4.14 offers
 * the 32-byte run and catches up; v5.4 offers it with a block-relative end
 * (a no-op outside page 0) and still says 16.
 */
static void test_hint_accuracy_contract(void)
{
    static const unsigned straddle[3] = {32, 16, 16}, after_page2[3] = {32, 32, 16};
    for (unsigned ki = 0; ki < 3; ki++) {
        sl_pcpu pc;
        SL_REQUIRE(init(&pc, kinds[ki], 1, UNIT_SMALL) == SL_OK);
        static void *p[UNIT_SMALL / 16];
        for (unsigned i = 0; i < UNIT_SMALL / 16; i++)
            SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 16, 16, &p[i]) == SL_OK);
        SL_REQUIRE(pc.nr_chunks == 1);
        unsigned pp = SL_PAGE_SIZE / 16;
        SL_REQUIRE(sl_pcpu_free(&pc, 0, p[pp]) == SL_OK);
        SL_REQUIRE(sl_pcpu_free(&pc, 0, p[pp - 1]) == SL_OK);
        sl_pcpu_chunk_info info;
        SL_REQUIRE(sl_pcpu_chunk_info_get(&pc, 0, &info) == SL_OK);
        SL_CHECK_EQ(info.free_bytes, 32);
        SL_CHECK_EQ(info.contig_bytes, straddle[ki]);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);

        SL_REQUIRE(sl_pcpu_free(&pc, 0, p[2 * pp + 10]) == SL_OK);
        SL_REQUIRE(sl_pcpu_free(&pc, 0, p[2 * pp + 11]) == SL_OK);
        SL_REQUIRE(sl_pcpu_chunk_info_get(&pc, 0, &info) == SL_OK);
        SL_CHECK_EQ(info.contig_bytes, after_page2[ki]);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        sl_pcpu_destroy(&pc);
    }
}

static void test_workload_and_budget(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        for (int order = 0; order < 3; order++) {
            sl_pcpu_workload w = {.cfg = {.kind = kinds[ki], .nr_units = 2},
                                  .size = 16,
                                  .align = 4,
                                  .objects = 20000,
                                  .order = (sl_pcpu_order)order,
                                  .prefill_second_half = order == 1};
            sl_pcpu_workload_result r;
            SL_REQUIRE(sl_pcpu_run_workload(&w, &r) == SL_OK);
            SL_CHECK(!r.over_budget && !r.alloc_failed);
            SL_CHECK_EQ(r.allocated, 20000);
            SL_CHECK_EQ(r.freed, 20000);
            SL_CHECK(r.chunks >= 2);
        }
    }
    /* A budget that cannot be met is reported with how far the run got. */
    sl_pcpu_workload w = {.cfg = {.kind = SL_PCPU_AREAMAP, .nr_units = 1},
                          .size = 4, .align = 8, .objects = 200000, .budget_ns = 1};
    sl_pcpu_workload_result r;
    SL_REQUIRE(sl_pcpu_run_workload(&w, &r) == SL_OK);
    SL_CHECK(r.over_budget);
    SL_CHECK(r.allocated < 200000);
    SL_CHECK_EQ(r.freed, 0);
    sl_pcpu_order o;
    SL_CHECK(sl_pcpu_parse_order("alternate", &o) && o == SL_PCPU_FREE_ALTERNATE);
    SL_CHECK(!sl_pcpu_parse_order("random", &o));
    sl_pcpu_kind k;
    SL_CHECK(sl_pcpu_parse_kind("scanhint", &k) && k == SL_PCPU_SCANHINT);
    SL_CHECK(!sl_pcpu_parse_kind("slab", &k));
}

static void test_chunk_info_and_granules(void)
{
    sl_pcpu pc;
    SL_REQUIRE(init(&pc, SL_PCPU_SCANHINT, 1, UNIT_SMALL) == SL_OK);
    void *a, *b;
    SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 12, 4, &a) == SL_OK);
    SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 4, 16, &b) == SL_OK);
    sl_pcpu_chunk_info info;
    SL_REQUIRE(sl_pcpu_chunk_info_get(&pc, 0, &info) == SL_OK);
    SL_CHECK_EQ(info.nr_alloc, 2);
    SL_CHECK_EQ(info.free_bytes, UNIT_SMALL - 16);
    SL_CHECK_EQ(info.nr_populated, 1);
    SL_CHECK_EQ(sl_pcpu_chunk_info_get(&pc, 1, &info), SL_EINVAL);
    uint8_t g[8];
    SL_CHECK_EQ(sl_pcpu_chunk_granules(&pc, 0, g, 8), 8);
    SL_CHECK(g[0] == 1 && g[1] == 2 && g[2] == 2 && g[3] == 0 && g[4] == 1 && g[5] == 0);
    sl_pcpu_destroy(&pc);
}

int main(void)
{
    SL_RUN(test_alloc_free_and_errors);
    SL_RUN(test_alignment);
    SL_RUN(test_free_orders);
    SL_RUN(test_block_spanning);
    SL_RUN(test_randomized);
    SL_RUN(test_validate_detects_corruption);
    SL_RUN(test_area_map_grows);
    SL_RUN(test_hint_accuracy_contract);
    SL_RUN(test_workload_and_budget);
    SL_RUN(test_chunk_info_and_granules);
    return sl_check_summary();
}
