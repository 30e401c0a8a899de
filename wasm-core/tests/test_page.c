/* test_page.c - the buddy allocator: splitting, merging, compound pages, lookups, threads. */
#include "check.h"

#include "../src/page/page.h"

typedef struct model_slab {
    sl_dword freelist_counters;
    void *cache;
    uint64_t more[5];
} model_slab;
SL_PAGE_PRIV_CHECK(model_slab);

static void test_split_and_merge_back(void)
{
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 8u << 20, NULL) == SL_OK); /* 2048 pages: two order-10 blocks */
    SL_CHECK_EQ(z.stats.free_blocks[10], 2);
    sl_page *a = sl_page_alloc(&z, 0, 0);
    SL_REQUIRE(a != NULL);
    /* One order-10 block split down to order 0: one free block of each order 0..9 remains. */
    for (unsigned o = 0; o < 10; o++)
        SL_CHECK_EQ(z.stats.free_blocks[o], 1);
    SL_CHECK_EQ(z.stats.free_blocks[10], 1);
    sl_page *b = sl_page_alloc(&z, 3, 1);
    SL_REQUIRE(b != NULL);
    SL_CHECK_EQ(sl_page_pfn(&z, b) % 8, 0);
    SL_CHECK_EQ(sl_page_order(b), 3);
    SL_CHECK_EQ(sl_page_validate(&z), SL_OK);
    SL_CHECK_EQ(sl_page_free(&z, a, 0), SL_OK);
    SL_CHECK_EQ(sl_page_free(&z, b, 1), SL_OK);
    SL_CHECK_EQ(z.stats.free_blocks[10], 2);
    SL_CHECK_EQ(z.stats.pages_free, 2048);
    SL_CHECK_EQ(sl_page_validate(&z), SL_OK);
    sl_page_zone_destroy(&z);
}

static void test_compound_lookup_and_priv(void)
{
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 1u << 20, NULL) == SL_OK);
    sl_page *h = sl_page_alloc(&z, 2, 0);
    SL_REQUIRE(h != NULL);
    model_slab *ms = SL_PAGE_PRIV(h, model_slab);
    SL_CHECK_EQ(ms->freelist_counters.lo, 0);
    ms->cache = &z;
    unsigned char *addr = sl_page_address(&z, h);
    SL_CHECK(sl_page_from_addr(&z, addr) == h);
    SL_CHECK(sl_page_from_addr(&z, addr + 3 * SL_PAGE_SIZE + 100) == h);
    SL_CHECK(sl_page_from_addr(&z, addr + 4 * SL_PAGE_SIZE) == NULL); /* a free page */
    SL_CHECK(sl_page_from_addr(&z, addr - 1) == NULL);
    int outside;
    SL_CHECK(sl_page_from_addr(&z, &outside) == NULL);
    SL_CHECK(sl_page_from_pfn(&z, z.npages) == NULL);
    /* Freeing a tail page or a free page is refused. */
    SL_CHECK_EQ(sl_page_free(&z, h + 1, 0), SL_EINVAL);
    SL_CHECK_EQ(sl_page_free(&z, h, 0), SL_OK);
    SL_CHECK_EQ(sl_page_free(&z, h, 0), SL_EINVAL);
    /* A reused block has its private area zeroed again. */
    sl_page *h2 = sl_page_alloc(&z, 2, 0);
    SL_REQUIRE(h2 == h);
    SL_CHECK(SL_PAGE_PRIV(h2, model_slab)->cache == NULL);
    SL_CHECK_EQ(sl_page_validate(&z), SL_OK);
    sl_page_zone_destroy(&z);
}

static void test_exhaustion_and_bad_orders(void)
{
    sl_page_zone z;
    SL_CHECK_EQ(sl_page_zone_init(&z, 100, NULL), SL_EINVAL);
    SL_REQUIRE(sl_page_zone_init(&z, 5 * SL_PAGE_SIZE, NULL) == SL_OK); /* blocks of 4 + 1 pages */
    SL_CHECK(sl_page_alloc(&z, 11, 0) == NULL);
    SL_CHECK(sl_page_alloc(&z, 3, 0) == NULL);
    sl_page *a = sl_page_alloc(&z, 2, 0), *b = sl_page_alloc(&z, 0, 0);
    SL_CHECK(a != NULL && b != NULL);
    SL_CHECK(sl_page_alloc(&z, 0, 0) == NULL);
    SL_CHECK_EQ(z.stats.alloc_failed, 2); /* order 11 is refused, not counted */
    SL_CHECK_EQ(sl_page_validate(&z), SL_OK);
    sl_page_zone_destroy(&z);
}

static void test_validate_detects_corruption(void)
{
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 1u << 20, NULL) == SL_OK);
    sl_page *h = sl_page_alloc(&z, 1, 0);
    SL_REQUIRE(h != NULL);
    SL_CHECK_EQ(sl_page_validate(&z), SL_OK);
    h[1].flags = 0; /* a tail page that forgot its head */
    SL_CHECK_EQ(sl_page_validate(&z), SL_ECORRUPT);
    h[1].flags = SL_PG_TAIL;
    z.stats.pages_free++;
    SL_CHECK_EQ(sl_page_validate(&z), SL_ECORRUPT);
    z.stats.pages_free--;
    SL_CHECK_EQ(sl_page_validate(&z), SL_OK);
    sl_page_zone_destroy(&z);
}

static void test_random_against_model(void)
{
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 4u << 20, NULL) == SL_OK);
    sl_page *held[256] = {0};
    uint64_t rng = 42, pages_held = 0;
    for (unsigned step = 0; step < 20000; step++) {
        unsigned i = (unsigned)(sl_test_rand(&rng) % 256);
        if (held[i]) {
            pages_held -= 1u << sl_page_order(held[i]);
            SL_CHECK_EQ(sl_page_free(&z, held[i], 0), SL_OK);
            held[i] = NULL;
        } else {
            unsigned order = (unsigned)(sl_test_rand(&rng) % 5);
            held[i] = sl_page_alloc(&z, order, 0);
            if (held[i])
                pages_held += 1u << order;
        }
        if (step % 97 == 0)
            SL_CHECK_EQ(sl_page_validate(&z), SL_OK);
    }
    SL_CHECK_EQ(z.stats.pages_free + pages_held, z.npages);
    for (unsigned i = 0; i < 256; i++)
        if (held[i])
            SL_CHECK_EQ(sl_page_free(&z, held[i], 0), SL_OK);
    SL_CHECK_EQ(z.stats.free_blocks[10], 1);
    SL_CHECK_EQ(sl_page_validate(&z), SL_OK);
    sl_page_zone_destroy(&z);
}

typedef struct thread_arg {
    sl_page_zone *z;
    unsigned cpu;
    unsigned iters;
    unsigned failures;
} thread_arg;

static void *churn(void *p)
{
    thread_arg *a = p;
    sl_page *mine[16] = {0};
    uint64_t rng = a->cpu + 1;
    for (unsigned i = 0; i < a->iters; i++) {
        unsigned k = (unsigned)(sl_test_rand(&rng) % 16);
        if (mine[k]) {
            /* Our block must still say it is ours: nobody else handed it out meanwhile. */
            if (*(unsigned *)sl_page_address(a->z, mine[k]) != a->cpu * 1000 + k)
                a->failures++;
            sl_page_free(a->z, mine[k], a->cpu);
            mine[k] = NULL;
        } else if ((mine[k] = sl_page_alloc(a->z, (unsigned)(sl_test_rand(&rng) % 3), a->cpu))) {
            *(unsigned *)sl_page_address(a->z, mine[k]) = a->cpu * 1000 + k;
        }
    }
    for (unsigned k = 0; k < 16; k++)
        if (mine[k])
            sl_page_free(a->z, mine[k], a->cpu);
    return NULL;
}

static void test_threads(void)
{
    SL_SKIP_WITHOUT_THREADS();
    sl_page_zone z;
    SL_REQUIRE(sl_page_zone_init(&z, 1u << 20, NULL) == SL_OK);
    thread_arg args[4];
    sl_thread th[4];
    for (unsigned c = 0; c < 4; c++) {
        args[c] = (thread_arg){&z, c, (unsigned)sl_test_scale(50000), 0};
        SL_REQUIRE(sl_thread_start(&th[c], churn, &args[c]) == SL_OK);
    }
    for (unsigned c = 0; c < 4; c++) {
        sl_thread_join(th[c]);
        SL_CHECK_EQ(args[c].failures, 0);
    }
    SL_CHECK_EQ(z.stats.pages_free, z.npages);
    SL_CHECK_EQ(sl_page_validate(&z), SL_OK);
    sl_page_zone_destroy(&z);
}

int main(void)
{
    SL_RUN(test_split_and_merge_back);
    SL_RUN(test_compound_lookup_and_priv);
    SL_RUN(test_exhaustion_and_bad_orders);
    SL_RUN(test_validate_detects_corruption);
    SL_RUN(test_random_against_model);
    SL_RUN(test_threads);
    return sl_check_summary();
}
