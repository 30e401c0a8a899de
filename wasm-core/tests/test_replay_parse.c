/*
 * test_replay_parse.c - the ftrace line parser on every variant the issue
 * lists, and the parse accounting of a file mixing them with malformed
 * lines: each bad line's number and specific reason, the header and lost
 * lines, other events by name, and lines = parsed + skipped.
 */
#include "replay_util.h"

#include "../src/replay/replay_internal.h"

static int parse(const char *line, sli_event *ev) { return sli_parse_line(line, strlen(line), ev); }

static void test_trace_format_five_flags(void)
{
    sli_event ev;
    SL_CHECK_EQ(parse("            bash-30207   [000] .....  1075.777717: kmem_cache_alloc: "
                      "call_site=copy_process+0x18a/0x1c70 ptr=00000000057c088f name=task_struct bytes_req=5960 "
                      "bytes_alloc=6016 gfp_flags=GFP_KERNEL node=-1 accounted=true",
                      &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.kind, SLI_EV_CACHE_ALLOC);
    SL_CHECK_EQ(ev.cpu, 0);
    SL_CHECK_EQ(ev.ts_ns, 1075777717000ull);
    SL_CHECK_EQ(ev.ptr, 0x57c088full);
    SL_CHECK(ev.cache_len == 11 && !memcmp(ev.cache, "task_struct", 11));
    SL_CHECK_EQ(ev.bytes_req, 5960);
    SL_CHECK_EQ(ev.bytes_alloc, 6016);
    SL_CHECK_EQ(ev.accounted, 1);
    SL_CHECK_EQ(sli_site_key(ev.site, ev.site_len), strlen("copy_process+0x18a"));
}

static void test_flags_four_or_absent_and_no_task(void)
{
    sli_event ev;
    SL_CHECK_EQ(parse("  bash-1 [003] d..1  12.000100: kfree: call_site=a+0x1/0x2 ptr=00000000000000ab", &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.cpu, 3);
    SL_CHECK_EQ(ev.ptr, 0xab);
    /* trace-cmd report: no flags column, padded event name, "(func+off)" token, 0x pointers. */
    SL_CHECK_EQ(parse("            bash-2193  [001]   339.773567: kmalloc:              (eventfs_set_attr+0x10d) "
                      "call_site=eventfs_set_attr+0x10d ptr=0xffff888127e90b40 bytes_req=60 bytes_alloc=64 "
                      "gfp_flags=GFP_NOFS|__GFP_ZERO node=-1 accounted=false",
                      &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.kind, SLI_EV_KMALLOC);
    SL_CHECK_EQ(ev.cpu, 1);
    SL_CHECK_EQ(ev.ptr, 0xffff888127e90b40ull);
    SL_CHECK_EQ(ev.accounted, 0);
    /* trace_pipe lines without a task. */
    SL_CHECK_EQ(
        parse("[002] ....   808.188898: kfree: call_site=security_cred_free+0x42/0x50 ptr=0000000062400820", &ev),
        SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.cpu, 2);
    SL_CHECK_EQ(ev.ts_ns, 808188898000ull);
    /* trace-cmd report -l: CPU and flags in one token; -t: nanoseconds. */
    SL_CHECK_EQ(parse("    bash-9243    1.....  2493.506379038: kmem_cache_free:      (x+0x1) call_site=x+0x1 "
                      "ptr=0xffff88815b084068 name=anon_vma",
                      &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.cpu, 1);
    SL_CHECK_EQ(ev.ts_ns, 2493506379038ull);
}

static void test_task_names_with_spaces_colons_brackets(void)
{
    sli_event ev;
    SL_CHECK_EQ(parse("  Web Content: 1-4242 [001] ..... 7.5: kfree: call_site=f ptr=1", &ev), SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.cpu, 1);
    SL_CHECK_EQ(ev.ts_ns, 7500000000ull);
    SL_CHECK_EQ(parse("kworker/u4:2-events_unbound-77 [000] ..... 1.000001: kfree: call_site=f ptr=2", &ev),
                SLI_LINE_EVENT);
    /* A comm that itself looks like "[1] 2.0: x:" must not fool the anchor. */
    SL_CHECK_EQ(parse("a [1] 2.0: x:-9 [001] d..2. 3.000002: kfree: call_site=f ptr=3", &ev), SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.ts_ns, 3000002000ull);
    SL_CHECK_EQ(ev.ptr, 3);
    SL_CHECK_EQ(parse("x] 1.5: y-77  [000] ..... 5.000001: kfree: call_site=f ptr=4", &ev), SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.ts_ns, 5000001000ull);
}

static void test_kernel_version_variants(void)
{
    sli_event ev;
    /* Before 6.0: no name=, call_site as a raw address. */
    SL_CHECK_EQ(parse("sh-1 [000] .... 1.0: kmem_cache_alloc: call_site=ffffffff8123abcd ptr=ffff88810a1b2c00 "
                      "bytes_req=192 bytes_alloc=192 gfp_flags=GFP_KERNEL",
                      &ev),
                SLI_LINE_EVENT);
    SL_CHECK(ev.cache == NULL);
    SL_CHECK_EQ(ev.site_len, 16);
    /* Before 6.1: the *_node variants. */
    SL_CHECK_EQ(parse("sh-1 [000] .... 1.0: kmem_cache_alloc_node: call_site=f+0x1/0x9 ptr=ffff88810a1b2c40 "
                      "bytes_req=64 bytes_alloc=64 gfp_flags=GFP_KERNEL node=0",
                      &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.kind, SLI_EV_CACHE_ALLOC);
    SL_CHECK_EQ(parse("sh-1 [000] .... 1.0: kmalloc_node: call_site=f ptr=ffff88810a1b2c80 bytes_req=60 "
                      "bytes_alloc=64 gfp_flags=GFP_KERNEL node=0",
                      &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.kind, SLI_EV_KMALLOC);
    SL_CHECK(!(ev.have & SLI_F_ACCOUNTED));
    /* pfn in hex (4.x on) and in decimal (before). */
    SL_CHECK_EQ(parse("sh-1 [000] .... 1.0: mm_page_alloc: page=00000000801d289a pfn=0x11b9ef order=2 migratetype=0 "
                      "gfp_flags=GFP_KERNEL",
                      &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.pfn, 0x11b9ef);
    SL_CHECK_EQ(ev.order, 2);
    SL_CHECK_EQ(parse("sh-1 [000] .... 1.0: mm_page_free: page=ffffea0004321000 pfn=1075840 order=0", &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.pfn, 1075840);
    /* percpu before 5.19: no call_site, bytes_alloc, gfp_flags. */
    SL_CHECK_EQ(parse("systemd-1     [000] ....     0.568931: percpu_alloc_percpu: reserved=0 is_atomic=0 size=48 "
                      "align=8 base_addr=00000000fa92a086 off=32672 ptr=000000008da0b73d",
                      &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.kind, SLI_EV_PCPU_ALLOC);
    SL_CHECK_EQ(ev.off, 32672);
    SL_CHECK_EQ(ev.size, 48);
    SL_CHECK_EQ(ev.base, 0xfa92a086);
    SL_CHECK(ev.site == NULL);
    SL_CHECK_EQ(parse("<idle>-0     [000] ....     0.543208: percpu_create_chunk: base_addr=000000005d5ad71c", &ev),
                SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.kind, SLI_EV_PCPU_CREATE);
}

static void test_pointers_and_gfp(void)
{
    sli_event ev;
    SL_CHECK_EQ(parse("a-1 [000] .... 1.0: kfree: call_site=f ptr=(null)", &ev), SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.ptr, 0);
    SL_CHECK_EQ(parse("a-1 [000] 1.0: kfree: (f) call_site=f ptr=(nil)", &ev), SLI_LINE_EVENT);
    SL_CHECK_EQ(ev.ptr, 0);
    struct {
        const char *gfp;
        unsigned bits;
    } cases[] = {
        {"GFP_KERNEL", 0},
        {"GFP_KERNEL_ACCOUNT|__GFP_ZERO", SLI_GFP_ACCOUNT},
        {"GFP_NOFS|__GFP_RECLAIMABLE", SLI_GFP_RECLAIMABLE},
        {"GFP_DMA", SLI_GFP_DMA},
        {"GFP_KERNEL|__GFP_DMA", SLI_GFP_DMA},
        {"GFP_DMA32", 0}, /* not GFP_DMA */
        {"0x400cc0", SLI_GFP_ACCOUNT},
        {"0xcd0", SLI_GFP_RECLAIMABLE},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[256];
        snprintf(line, sizeof line, "a-1 [000] .... 1.0: kmalloc: call_site=f ptr=10 bytes_alloc=64 gfp_flags=%s",
                 cases[i].gfp);
        SL_CHECK_EQ(parse(line, &ev), SLI_LINE_EVENT);
        if (ev.gfp != cases[i].bits)
            fprintf(stderr, "  gfp_flags=%s -> %u\n", cases[i].gfp, ev.gfp);
        SL_CHECK_EQ(ev.gfp, cases[i].bits);
    }
}

static void test_headers_lost_and_bad_reasons(void)
{
    sli_event ev;
    SL_CHECK_EQ(parse("# entries-in-buffer/entries-written: 18187/18187   #P:2", &ev), SLI_LINE_HEADER);
    SL_CHECK_EQ(ev.cpus_hint, 2);
    SL_CHECK_EQ(parse("cpus=4", &ev), SLI_LINE_HEADER);
    SL_CHECK_EQ(ev.cpus_hint, 4);
    SL_CHECK_EQ(parse("version = 6", &ev), SLI_LINE_HEADER);
    SL_CHECK_EQ(parse("CPU 0 is empty", &ev), SLI_LINE_HEADER);
    SL_CHECK_EQ(parse("", &ev), SLI_LINE_HEADER);
    SL_CHECK_EQ(parse("CPU:1 [LOST 12 EVENTS]", &ev), SLI_LINE_LOST);
    SL_CHECK_EQ(ev.lost, 12);
    SL_CHECK_EQ(parse("CPU:1 [38103 EVENTS DROPPED]", &ev), SLI_LINE_LOST);
    SL_CHECK_EQ(ev.lost, 38103);
    SL_CHECK_EQ(parse("a-1 [000] .... 1.0: sched_switch: prev_comm=a prev_pid=1", &ev), SLI_LINE_OTHER_EVENT);
    SL_CHECK(ev.name_len == 12 && !memcmp(ev.name, "sched_switch", 12));
    struct {
        const char *line, *reason;
    } bad[] = {
        {"hello world", "no timestamp (SECONDS.FRACTION:) found: not an ftrace event line"},
        {"bash-1 1.5: kfree: ptr=1", "no [CPU] before the timestamp or no event name after it"},
        {"a-1 [5000] .... 1.0: kfree: ptr=1", "CPU number out of range (over 4095)"},
        {"a-1 [000] .... 1.0: kfree: call_site=f", "an event without its ptr= field"},
        {"a-1 [000] .... 1.0: kfree: ptr=zzz", "a ptr= value that is not a hex pointer"},
        {"a-1 [000] .... 1.0: kmalloc: ptr=1 bytes_req=3", "an allocation without its bytes_alloc= field"},
        {"a-1 [000] .... 1.0: kmalloc: ptr=1 bytes_alloc=six", "a field value that is not a number"},
        {"a-1 [000] .... 1.0: kmem_cache_free: ptr=1 name=", "an empty or over-long cache name="},
        {"a-1 [000] .... 1.0: percpu_alloc_percpu: size=8 base_addr=1 ptr=2", "a percpu event without its off= field"},
        {"a-1 [000] .... 1.0: percpu_free_percpu: off=8 ptr=2", "a percpu event without its base_addr= field"},
        {"a-1 [000] .... 1.0: mm_page_alloc: order=0 migratetype=0", "a page event without pfn= or page="},
        {"a-1 [000] .... 1.0: mm_page_free: pfn=0x1", "a page event without its order= field"},
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(bad[i].line, &ev);
        SL_CHECK_EQ(rc, SLI_LINE_BAD);
        if (rc == SLI_LINE_BAD && strcmp(ev.reason, bad[i].reason))
            fprintf(stderr, "  '%s': reason '%s'\n", bad[i].line, ev.reason);
        SL_CHECK(rc == SLI_LINE_BAD && !strcmp(ev.reason, bad[i].reason));
    }
    char nul[] = "a-1 [000] .... 1.0: kfree: ptr=1\0x";
    SL_CHECK_EQ(sli_parse_line(nul, sizeof nul - 1, &ev), SLI_LINE_BAD);
    SL_CHECK(!strcmp(ev.reason, "binary data (a NUL byte) in the line"));
}

/* A file of every kind of line, through the session: the accounting, line by line. */
static void test_session_accounting(void)
{
    char longline[5000];
    memset(longline, 'x', sizeof longline - 1);
    longline[sizeof longline - 1] = 0;
    sl_strbuf t = {0};
    sl_strbuf_printf(&t,
                     "# tracer: nop\n"                                   /* 1 header */
                     "# entries-in-buffer/entries-written: 9/9   #P:2\n" /* 2 header */
                     "a-1 [000] ..... 1.000001: kmalloc: call_site=f+0x1/0x2 ptr=100 bytes_req=60 "
                     "bytes_alloc=64 gfp_flags=GFP_KERNEL\n"                               /* 3 */
                     "garbage line\n"                                                      /* 4 bad */
                     "a-1 [001] ..... 1.000002: kfree: call_site=g ptr=100\r\n"            /* 5 */
                     "%s\n"                                                                /* 6 long */
                     "CPU:0 [LOST 7 EVENTS]\n"                                             /* 7 lost */
                     "a-1 [000] ..... 1.000003: sched_switch: prev_comm=a\n"               /* 8 other */
                     "a-1 [000] ..... 1.000004: kfree: call_site=g ptr=deadbeef\n"         /* 9 */
                     "a-1 [000] ..... 1.000005: kfree: call_site=g ptr=0000000000000000\n" /* 10 */
                     "a-1 [000] ..... 1.000006: kfree: call_site=g\n"                      /* 11 bad */
                     "a-1 [000] ..... 1.0000",                                             /* 12 cut */
                     longline);
    sl_replay_config cfg = {0};
    int rc;
    sl_replay *r = replay_text(t.data, &cfg, &rc);
    SL_REQUIRE(r && rc == SL_OK);
    jl *j = replay_tree(r);
    SL_REQUIRE(j);
    SL_CHECK_EQ(jl_num(j, "events.lines"), 12);
    SL_CHECK_EQ(jl_num(j, "events.parsed"), 4);
    SL_CHECK_EQ(jl_num(j, "events.skipped"), 8);
    SL_CHECK_EQ(jl_num(j, "events.skipped_by_reason.header"), 3); /* two comments and the LOST line */
    SL_CHECK_EQ(jl_num(j, "events.skipped_by_reason.other_event"), 1);
    SL_CHECK_EQ(jl_num(j, "events.skipped_by_reason.bad"), 4);
    SL_CHECK_EQ(jl_num(j, "events.lost"), 7);
    SL_CHECK_EQ(jl_num(j, "events.by_kind.kmalloc"), 1);
    SL_CHECK_EQ(jl_num(j, "events.by_kind.kfree"), 3);
    SL_CHECK_EQ(jl_num(j, "events.by_kind.sched_switch"), 1);
    const jl *bad = jl_get(jl_get(j, "events"), "bad_lines");
    SL_REQUIRE(bad && bad->n == 4);
    static const struct {
        int line;
        const char *reason;
    } want[] = {{4, "no timestamp (SECONDS.FRACTION:) found: not an ftrace event line"},
                {6, "a line longer than 4096 bytes"},
                {11, "an event without its ptr= field"},
                {12, "no timestamp (SECONDS.FRACTION:) found: not an ftrace event line"}};
    for (unsigned i = 0; i < 4; i++) {
        SL_CHECK_EQ(jl_num(bad->kids[i], "line"), want[i].line);
        const char *reason = jl_str(bad->kids[i], "reason");
        SL_CHECK(reason && !strcmp(reason, want[i].reason));
    }
    SL_CHECK_EQ(jl_num(j, "pairs.matched"), 1);
    SL_CHECK_EQ(jl_num(j, "pairs.freed_unknown"), 1);
    SL_CHECK_EQ(jl_num(j, "pairs.null_frees"), 1);
    SL_CHECK_EQ(jl_num(j, "pairs.live_at_end"), 0);
    SL_CHECK_EQ(jl_num(j, "model.cpus"), 2); /* from #P:2 */
    const jl *c = json_cache(j, "kmalloc-64");
    SL_REQUIRE(c);
    SL_CHECK_EQ(jl_num(c, "cross_cpu_frees"), 1);
    SL_CHECK_EQ(jl_num(c, "lifetimes"), 1);
    SL_CHECK_EQ(jl_num(c, "lifetime_p50_us"), 1.0); /* 1 us, exact below 16 ns resolution limits */
    SL_CHECK_EQ(jl_num(j, "model.errors"), 0);
    jl_free(j);
    sl_replay_destroy(r);
    sl_strbuf_free(&t);
}

/* Bin k of a timeline series' allocs or frees. */
static double bin_of(const jl *series, const char *which, size_t k)
{
    const jl *bins = jl_get(series, which);
    return bins && k < bins->n ? bins->kids[k]->num : -1;
}

/*
 * The timeline: 1 ms bins from the first event, doubled until the last
 * fits in 1024 (a pair of bins summed into one each time), events before
 * the first in bin 0, the busiest caches by name and the rest as "other".
 */
static void test_timeline_bins(void)
{
    sl_strbuf t = {0};
    sl_strbuf_printf(&t, "a-1 [000] ..... 10.000000: kmalloc: call_site=f ptr=1 bytes_req=8 bytes_alloc=8\n"
                         "a-1 [000] ..... 10.000500: kmalloc: call_site=f ptr=2 bytes_req=8 bytes_alloc=8\n"
                         "a-1 [001] ..... 9.999000: kfree: call_site=f ptr=1\n"     /* before the first: bin 0 */
                         "a-1 [000] ..... 10.001000: kfree: call_site=f ptr=2\n"    /* bin 1 (1 ms) */
                         "a-1 [000] ..... 10.001000: kfree: call_site=f ptr=77\n"); /* allocated before: no cache */
    /* Ten more caches, one allocation each, at 3 s: bin 3000 of 1 ms, so the width doubles twice (4 ms). */
    for (int c = 0; c < 10; c++)
        sl_strbuf_printf(
            &t,
            "a-1 [000] ..... 13.000000: kmem_cache_alloc: call_site=f ptr=%x name=c%d bytes_req=%d bytes_alloc=%d\n",
            0x100 + c, c, 32 + c, 32 + c);
    sl_strbuf_printf(
        &t, "a-1 [000] ..... 13.000000: kmem_cache_alloc: call_site=f ptr=300 name=c0 bytes_req=32 bytes_alloc=32\n");
    sl_replay_config cfg = {0};
    int rc;
    sl_replay *r = replay_text(t.data, &cfg, &rc);
    SL_REQUIRE(r && rc == SL_OK);
    jl *j = replay_tree(r);
    SL_REQUIRE(j);
    SL_CHECK(jl_num(j, "timeline.t0_s") == 10.0);
    SL_CHECK(jl_num(j, "timeline.bin_s") == 0.004);
    SL_CHECK_EQ(jl_num(j, "timeline.bins"), 751); /* 3000 ms / 4 ms + 1 */
    const jl *series = jl_get(jl_get(j, "timeline"), "series");
    SL_REQUIRE(series && series->n == 9); /* eight caches by name, then "other" */
    const jl *first = series->kids[0];
    SL_CHECK(!strcmp(jl_str(first, "name"), "kmalloc-8")); /* four events: the busiest */
    SL_CHECK_EQ(bin_of(first, "allocs", 0), 2);
    SL_CHECK_EQ(bin_of(first, "frees", 0), 2); /* the early one and the one at 1 ms, now in one bin */
    SL_CHECK_EQ(bin_of(first, "allocs", 1), 0);
    SL_CHECK(!strcmp(jl_str(series->kids[1], "name"), "c0")); /* two allocations */
    SL_CHECK_EQ(bin_of(series->kids[1], "allocs", 750), 2);
    const jl *other = series->kids[8];
    SL_CHECK(!strcmp(jl_str(other, "name"), "other"));
    SL_CHECK_EQ(bin_of(other, "allocs", 750), 3); /* the ten one-event caches: seven named, three others */
    SL_CHECK_EQ(jl_get(other, "frees")->n, 751);
    jl_free(j);
    sl_replay_destroy(r);
    sl_strbuf_free(&t);
}

/*
 * sli_find_byte against memchr: every length to 40, the byte at every place
 * (and absent), in fillers that trip a word-at-a-time test when it is wrong:
 * the high bit set, 0x01 (a borrow from a zero byte below), c + 1 and c - 1,
 * and the byte again after its first place (the first must be found).
 */
static void test_find_byte_is_memchr(void)
{
    static const char targets[] = {'\n', 0, ':', '=', (char)0x80};
    static const unsigned char fillers[] = {'a', 0x80, 0xff, 0x01, 0x00, 0x7f};
    char buf[48];
    for (size_t t = 0; t < sizeof targets; t++)
        for (size_t f = 0; f < sizeof fillers; f++)
            for (size_t off = 0; off < 8; off++) /* every alignment of the start */
                for (size_t n = 0; n <= 40; n++)
                    for (size_t at = 0; at <= n; at++) {
                        char *p = buf + off;
                        for (size_t i = 0; i < n; i++) {
                            char fill = (char)fillers[(f + i) % sizeof fillers];
                            p[i] = fill == targets[t] ? (char)(fill + 1) : fill;
                            if (i % 3 == 1 && (char)(targets[t] + 1) != targets[t])
                                p[i] = (char)(targets[t] + (i % 2 ? 1 : -1));
                        }
                        if (at < n) {
                            p[at] = targets[t];
                            if (at + 2 < n)
                                p[at + 2] = targets[t];
                        }
                        SL_CHECK(sli_find_byte(p, n, targets[t]) == memchr(p, (unsigned char)targets[t], n));
                    }
}

int main(void)
{
    SL_RUN(test_trace_format_five_flags);
    SL_RUN(test_flags_four_or_absent_and_no_task);
    SL_RUN(test_task_names_with_spaces_colons_brackets);
    SL_RUN(test_kernel_version_variants);
    SL_RUN(test_pointers_and_gfp);
    SL_RUN(test_headers_lost_and_bad_reasons);
    SL_RUN(test_session_accounting);
    SL_RUN(test_find_byte_is_memchr);
    SL_RUN(test_timeline_bins);
    return sl_check_summary();
}
