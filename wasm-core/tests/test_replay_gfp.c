/*
 * test_replay_gfp.c - the replay honours each allocation's gfp flags
 * (issue 23): the context is read from gfp_flags= (names, or a number
 * read with the capture kernel's bit values), counted, and given to the
 * model: an atomic allocation on an empty main sheaf refills a sheaf on
 * every 7.x (allow_spin; 7.0 since -rc3's fb1091febd66), as a GFP_KERNEL one
 * does, and takes the CPU slab's slow path on 6.18, whose replayed caches
 * have no sheaves.
 */
#include "replay_util.h"

#include "../src/replay/replay_internal.h"

static int parse(const char *line, sli_event *ev) { return sli_parse_line(line, strlen(line), ev); }

/* The context each gfp_flags= form gives, and the kmalloc type bits kept beside it. */
static void test_gfp_flags_give_the_context(void)
{
    struct {
        const char *gfp;
        unsigned reclaim;
        unsigned type;
    } cases[] = {
        {"GFP_KERNEL", SLI_RECLAIM_DIRECT | SLI_RECLAIM_KSWAPD, 0},
        {"GFP_KERNEL_ACCOUNT|__GFP_ZERO", SLI_RECLAIM_DIRECT | SLI_RECLAIM_KSWAPD, SLI_GFP_ACCOUNT},
        {"GFP_NOFS|__GFP_RECLAIMABLE", SLI_RECLAIM_DIRECT | SLI_RECLAIM_KSWAPD, SLI_GFP_RECLAIMABLE},
        {"GFP_ATOMIC", SLI_RECLAIM_KSWAPD, 0},
        {"GFP_ATOMIC|__GFP_ZERO|__GFP_DMA", SLI_RECLAIM_KSWAPD, SLI_GFP_DMA},
        {"GFP_NOWAIT|__GFP_ZERO", SLI_RECLAIM_KSWAPD, 0},
        {"GFP_TRANSHUGE", SLI_RECLAIM_DIRECT, 0},
        {"GFP_TRANSHUGE_LIGHT", 0, 0},
        {"__GFP_HIGH|__GFP_NOWARN", 0, 0},
        {"none", 0, 0},
        {"__GFP_WAIT|__GFP_IO|__GFP_FS", SLI_RECLAIM_DIRECT, 0}, /* 4.3's GFP_KERNEL spelled out */
        {"__GFP_KSWAPD_RECLAIM|__GFP_NOWARN", SLI_RECLAIM_KSWAPD, 0},
    };
    sli_event ev;
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[256];
        snprintf(line, sizeof line, "a-1 [000] .... 1.0: kmalloc: call_site=f ptr=10 bytes_alloc=64 gfp_flags=%s",
                 cases[i].gfp);
        SL_CHECK_EQ(parse(line, &ev), SLI_LINE_EVENT);
        if (ev.gfp_reclaim != cases[i].reclaim || ev.gfp != cases[i].type)
            fprintf(stderr, "  gfp_flags=%s -> reclaim %u type %u\n", cases[i].gfp, ev.gfp_reclaim, ev.gfp);
        SL_CHECK_EQ(ev.gfp_reclaim, cases[i].reclaim);
        SL_CHECK_EQ(ev.gfp, cases[i].type);
        SL_CHECK(ev.have & SLI_F_GFP);
        SL_CHECK(!(ev.have & SLI_F_GFP_HEX));
    }
    /* A number is kept raw: its reclaim bits depend on the capture's kernel. */
    SL_CHECK_EQ(parse("a-1 [000] .... 1.0: kmalloc: call_site=f ptr=10 bytes_alloc=64 gfp_flags=0x820", &ev),
                SLI_LINE_EVENT);
    SL_CHECK(ev.have & SLI_F_GFP_HEX);
    SL_CHECK_EQ(ev.gfp_hex, 0x820);
    /* No field: nothing said. */
    SL_CHECK_EQ(parse("a-1 [000] .... 1.0: kmalloc: call_site=f ptr=10 bytes_alloc=64", &ev), SLI_LINE_EVENT);
    SL_CHECK(!(ev.have & SLI_F_GFP));
}

/*
 * One allocation of a named cache on CPU 0 in context `gfp`, replayed on
 * `kernels` (two at a time, as the replay takes them): the cache (object
 * 64 bytes) has sheaves in 7.x and none in 6.18 (it does not opt in), and
 * its first allocation finds main empty, no spare and an empty barn.
 */
static sl_replay *replay_one_alloc(const char *gfp, const char *kernels)
{
    char trace[512];
    snprintf(trace, sizeof trace,
             "# tracer: nop\n"
             "a-1 [000] .... 1.000000: kmem_cache_alloc: call_site=f+0x1 ptr=0xffff888000100000 bytes_req=64 "
             "bytes_alloc=64 gfp_flags=%s node=-1 name=gfptest\n",
             gfp);
    sl_replay_config cfg = {.kernel = kernels, .cpus = 2, .zone_bytes = 8 << 20, .validate_each = true};
    int rc;
    sl_replay *r = replay_text(trace, &cfg, &rc);
    SL_CHECK_EQ(rc, SL_OK);
    return r;
}

enum { K618, K70, K71, K73, NK };

/* Sheaf refills and slow-path allocations of that one allocation on 6.18, 7.0, 7.1 and 7.3. */
static bool model_figures(const char *gfp, uint64_t refill[NK], uint64_t slow[NK])
{
    static const char *const pairs[2] = {"6.18,7.0", "7.1,7.3"};
    for (unsigned p = 0; p < 2; p++) {
        sl_replay *r = replay_one_alloc(gfp, pairs[p]);
        if (!r)
            return false;
        for (unsigned k = 0; k < 2; k++) {
            sl_replay_model_info mi;
            SL_CHECK_EQ(sl_replay_model_info_get(r, k, &mi), SL_OK);
            SL_CHECK_EQ(mi.errors, 0);
            refill[2 * p + k] = mi.sheaf_refill;
            sl_replay_cache_info ci;
            SL_CHECK_EQ(sl_replay_cache_info_get(r, 0, k, &ci), SL_OK);
            SL_CHECK_EQ(ci.allocs, 1);
            slow[2 * p + k] = ci.alloc_slowpath;
        }
        sl_replay_destroy(r);
    }
    return true;
}

static void test_atomic_on_an_empty_main_sheaf(void)
{
    uint64_t refill[NK], slow[NK];
    SL_REQUIRE(model_figures("GFP_ATOMIC|__GFP_ZERO", refill, slow));
    /*
     * 7.0, 7.1 and 7.3: allow_spin is true for GFP_ATOMIC: the empty sheaf is
     * refilled from slabs (7.0-rc1/rc2's can_alloc would have taken ___slab_alloc).
     */
    SL_CHECK(refill[K70] > 0);
    SL_CHECK_EQ(slow[K70], 0);
    SL_CHECK_EQ(refill[K71], refill[K70]);
    SL_CHECK_EQ(slow[K71], 0);
    SL_CHECK_EQ(refill[K73], refill[K71]);
    SL_CHECK_EQ(slow[K73], 0);
    /* 6.18: the cache has no sheaves: the CPU slab's slow path, whatever the context. */
    SL_CHECK_EQ(refill[K618], 0);
    SL_CHECK_EQ(slow[K618], 1);
    sl_replay *r = replay_one_alloc("GFP_ATOMIC|__GFP_ZERO", "7.0");
    SL_REQUIRE(r);
    jl *t = replay_tree(r);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.blocking"), 0);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.nonblocking"), 1);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.no_reclaim"), 0);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.unknown"), 0);
    jl_free(t);
    sl_replay_summary s;
    sl_replay_summary_get(r, &s);
    SL_CHECK_EQ(s.alloc_contexts[1], 1);
    sl_replay_destroy(r);
}

static void test_kernel_refills_in_every_era(void)
{
    uint64_t refill[NK], slow[NK];
    SL_REQUIRE(model_figures("GFP_KERNEL", refill, slow));
    for (unsigned k = K70; k < NK; k++) {
        SL_CHECK(refill[k] > 0);
        SL_CHECK_EQ(slow[k], 0);
    }
    SL_CHECK_EQ(refill[K70], refill[K71]);
    sl_replay *r = replay_one_alloc("GFP_KERNEL", "7.0");
    SL_REQUIRE(r);
    jl *t = replay_tree(r);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.blocking"), 1);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.nonblocking"), 0);
    jl_free(t);
    sl_replay_destroy(r);
}

/* A numeric gfp_flags= is read with the capture kernel's bit values: 6.0+ knows them, 5.x does not. */
static void test_numeric_gfp_by_capture_version(void)
{
    /* 0x820 = __GFP_KSWAPD_RECLAIM | __GFP_HIGH: GFP_ATOMIC in gfp_types.h's values. */
    const char *line = "a-1 [000] .... 1.000000: kmem_cache_alloc: call_site=f+0x1 ptr=0xffff888000100000 "
                       "bytes_req=64 bytes_alloc=64 gfp_flags=0x820 node=-1 name=gfptest\n";
    sl_replay_config cfg = {.kernel = "7.0", .cpus = 2, .zone_bytes = 8 << 20};
    int rc;
    sl_replay *r = replay_text(line, &cfg, &rc);
    SL_REQUIRE(r && rc == SL_OK);
    sl_replay_summary s;
    sl_replay_summary_get(r, &s);
    SL_CHECK_EQ(s.alloc_contexts[SLI_CTX_GFP_NONBLOCK], 1);
    sl_replay_model_info mi;
    SL_CHECK_EQ(sl_replay_model_info_get(r, 0, &mi), SL_OK);
    SL_CHECK(mi.sheaf_refill > 0); /* run as GFP_ATOMIC on 7.0: it may spin, so it refills */
    sl_replay_destroy(r);

    /* 0xcc0 = GFP_KERNEL (both reclaim bits, __GFP_IO, __GFP_FS). */
    const char *kline = "a-1 [000] .... 1.000000: kmem_cache_alloc: call_site=f+0x1 ptr=0xffff888000100000 "
                        "bytes_req=64 bytes_alloc=64 gfp_flags=0xcc0 node=-1 name=gfptest\n";
    r = replay_text(kline, &cfg, &rc);
    SL_REQUIRE(r && rc == SL_OK);
    sl_replay_summary_get(r, &s);
    SL_CHECK_EQ(s.alloc_contexts[SLI_CTX_GFP_BLOCK], 1);
    sl_replay_destroy(r);

    /* A 5.15 trace: its bits are not gfp_types.h's, so the number says nothing; the allocation runs as GFP_KERNEL. */
    cfg.kernel = "5.15";
    r = replay_text(line, &cfg, &rc);
    SL_REQUIRE(r && rc == SL_OK);
    sl_replay_summary_get(r, &s);
    SL_CHECK_EQ(s.alloc_contexts[SLI_CTX_GFP_UNKNOWN], 1);
    SL_CHECK_EQ(s.alloc_contexts[SLI_CTX_GFP_NONBLOCK], 0);
    sl_replay_destroy(r);
}

/* Flags with neither reclaim bit, and events without gfp_flags=, are counted apart. */
static void test_no_reclaim_and_unknown_counted(void)
{
    const char *trace = "a-1 [000] .... 1.000000: kmalloc: call_site=f+0x1 ptr=0xffff888000100000 bytes_req=60 "
                        "bytes_alloc=64 gfp_flags=__GFP_NOWARN node=-1\n"
                        "a-1 [000] .... 1.000001: kmalloc: call_site=f+0x1 ptr=0xffff888000100040 bytes_req=60 "
                        "bytes_alloc=64 node=-1\n"
                        "a-1 [001] .... 1.000002: kmalloc: call_site=f+0x1 ptr=0xffff888000100080 bytes_req=60 "
                        "bytes_alloc=64 gfp_flags=GFP_NOWAIT node=-1\n";
    sl_replay_config cfg = {.kernel = "7.1", .cpus = 2, .zone_bytes = 8 << 20, .validate_each = true};
    int rc;
    sl_replay *r = replay_text(trace, &cfg, &rc);
    SL_REQUIRE(r && rc == SL_OK);
    jl *t = replay_tree(r);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.blocking"), 0);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.nonblocking"), 1);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.no_reclaim"), 1);
    SL_CHECK_EQ(jl_num(t, "alloc_contexts.unknown"), 1);
    jl_free(t);
    sl_replay_model_info mi;
    SL_CHECK_EQ(sl_replay_model_info_get(r, 0, &mi), SL_OK);
    SL_CHECK_EQ(mi.errors, 0);
    sl_replay_destroy(r);
}

int main(void)
{
    SL_RUN(test_gfp_flags_give_the_context);
    SL_RUN(test_atomic_on_an_empty_main_sheaf);
    SL_RUN(test_kernel_refills_in_every_era);
    SL_RUN(test_numeric_gfp_by_capture_version);
    SL_RUN(test_no_reclaim_and_unknown_counted);
    return sl_check_summary();
}
