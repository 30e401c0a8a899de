/*
 * test_slub_cli.c - the SLUB commands of the `slablab` binary: `stats` (slabinfo -D / -r
 * shaped output, the counters under their sysfs names in the kernel's order, the model's
 * apart), and `geometry` under boot parameters and kernel versions.  The binary is found beside this test's own
 * executable (both are built into the build directory).  Native only.
 */
#include "cli_test.h"

#if !SL_WASM
#include "../src/slub/slub.h"

static char bin[PATH_MAX + 16], fixture[PATH_MAX + 32];

/* Runs `slablab ARGS`; its stdout into out; returns the exit status. */
static int run(const char *args, char *out, size_t cap)
{
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "%s 2>/dev/null", args);
    return sl_cli_run(bin, cmd, out, cap);
}

/* The total a counter line "name total C0=.. C1=.." gives, or -1. */
static long long counter(const char *out, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *at = strstr(out, key);
    long long v;
    return at && sscanf(at + strlen(key), " %lld", &v) == 1 ? v : -1;
}

static char out[1 << 16];

static void test_stats_activity_line_and_counters(void)
{
    SL_CHECK_EQ(run("stats --workload remote --ops 20000 --cpus 2", out, sizeof out), 0);
    const char *head = strstr(out, "Name                   Objects      Alloc       Free   %Fast Fallb O CmpX   UL\n");
    SL_REQUIRE(head);
    char name[64];
    long long objects, alloc, freed, pa, pf, fallb, order, cmpx, ul;
    SL_REQUIRE(sscanf(strchr(head, '\n') + 1, "%63s %lld %lld %lld %lld %lld %lld %lld %lld %lld", name, &objects,
                      &alloc, &freed, &pa, &pf, &fallb, &order, &cmpx, &ul) == 10);
    SL_CHECK(!strcmp(name, "cache-256"));
    /* slabinfo's columns from the counters below. */
    long long af = counter(out, "alloc_fastpath"), as = counter(out, "alloc_slowpath");
    long long ff = counter(out, "free_fastpath"), fs = counter(out, "free_slowpath");
    SL_REQUIRE(af >= 0 && as >= 0 && ff >= 0 && fs >= 0);
    SL_CHECK_EQ(alloc, af + as);
    SL_CHECK_EQ(freed, ff + fs);
    SL_CHECK_EQ(pa, af * 100 / alloc);
    SL_CHECK_EQ(fallb, counter(out, "order_fallback"));
    SL_CHECK_EQ(cmpx, counter(out, "cmpxchg_double_fail"));
    SL_CHECK_EQ(ul, counter(out, "cmpxchg_double_cpu_fail"));
    SL_CHECK(fs > 0); /* remote frees */
    /* The kernel's counters (6.17's 26) in the kernel's order, the model's after their own heading. */
    const char *prev = strstr(out, "\nCounters (");
    SL_REQUIRE(prev);
    const sl_slub_kstat *t;
    unsigned nk = sl_slub_kstats(SL_SLUB_KVERSION_DEFAULT, &t);
    SL_CHECK_EQ(nk, 26);
    SL_CHECK(strstr(out, "\nalloc_cpu_sheaf ") == NULL); /* 6.18's, not 6.17's */
    for (unsigned i = 0; i < nk + SL_SLUB_NR_STATS - SL_SLUB_NR_KERNEL_STATS; i++) {
        char key[64];
        snprintf(key, sizeof key, "\n%s ", i < nk ? t[i].name : sl_slub_stat_name(SL_SLUB_NR_KERNEL_STATS + i - nk));
        const char *at = strstr(prev, key);
        SL_CHECK(at != NULL);
        if (!at)
            break;
        const char *model = strstr(out, "\nModel-only counters");
        SL_CHECK(model && (i < nk ? at < model : at > model));
        prev = at;
    }
    /* Per-CPU values as sysfs prints them: " C0=n C1=m" summing to the total. */
    const char *line = strstr(out, "\nalloc_slowpath ");
    long long c0 = 0, c1 = 0;
    long long total;
    SL_REQUIRE(line && sscanf(line, "\nalloc_slowpath %lld C0=%lld C1=%lld", &total, &c0, &c1) == 3);
    SL_CHECK_EQ(total, as);
    SL_CHECK_EQ(c0 + c1, as);
}

static void test_stats_report_and_fallback(void)
{
    SL_CHECK_EQ(
        run("stats --workload churn --ops 20000 --min-order 1 --fragment --variant rt --report", out, sizeof out), 0);
    SL_CHECK(strstr(out, "Slabcache: cache-256        Aliases:  0 Order :  1") != NULL);
    SL_CHECK(strstr(out, "\nSlab Perf Counter       Alloc     Free %Al %Fr\n") != NULL);
    SL_CHECK(strstr(out, "\nSlab Deactivation             Occurrences %\n") != NULL);
    SL_CHECK(counter(out, "order_fallback") > 0); /* no order-1 block: every slab at order 0 */
    SL_CHECK_EQ(counter(out, "order_fallback"), counter(out, "alloc_slab"));
    SL_CHECK_EQ(counter(out, "alloc_fastpath"), 0); /* PREEMPT_RT: every allocation is ___slab_alloc */
    long long fast, slow;
    const char *row = strstr(out, "\nFastpath ");
    SL_REQUIRE(row && sscanf(row, "\nFastpath %lld", &fast) == 1);
    SL_CHECK_EQ(fast, 0);
    row = strstr(out, "\nSlowpath ");
    SL_REQUIRE(row && sscanf(row, "\nSlowpath %lld", &slow) == 1);
    SL_CHECK_EQ(slow, counter(out, "alloc_slowpath"));
    /* Tunables, a debug cache, JSON. */
    SL_CHECK_EQ(run("stats --ops 2000 --min-partial 0 --cpu-partial 0 --shrink --format json", out, sizeof out), 0);
    SL_CHECK(strstr(out, "\"min_partial\": 0, \"cpu_partial\": 0") != NULL);
    SL_CHECK(strstr(out, "\"order_fallback\": {\"total\": 0") != NULL);
    SL_CHECK(strstr(out, "\"model_counters\": {") != NULL);
    SL_CHECK_EQ(run("stats --ops 2000 --debug FP --workload bulk --bulk-free generic", out, sizeof out), 0);
    SL_CHECK_EQ(counter(out, "alloc_fastpath"), 0); /* a debug cache has no CPU slab */
    SL_CHECK(counter(out, "bulk_free_calls") > 0);
    /* Bad arguments: exit status 2. */
    SL_CHECK_EQ(run("stats --variant fast", out, sizeof out), 2);
    SL_CHECK_EQ(run("stats --cpus 9", out, sizeof out), 2);
    SL_CHECK_EQ(run("stats --debug X", out, sizeof out), 2);
    SL_CHECK_EQ(run("stats --cpus 4 --nr-cpus 2", out, sizeof out), 2);
    SL_CHECK_EQ(run("stats --debug F --cpu-partial 10", out, sizeof out), 1); /* refused by the cache */
}

static void test_geometry_boot_parameters(void)
{
    static char big[1 << 20];
    char args[PATH_MAX + 128];
    snprintf(args, sizeof args, "geometry --sysfs '%s' --cpus 2", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 0);
    SL_CHECK(strstr(big, "235 caches, 235 compared with the kernel: 234 match, 1 differ") != NULL);
    /* slub_min_order=1: no cache of the model has order 0 any more. */
    snprintf(args, sizeof args, "geometry --sysfs '%s' --cpus 2 --min-order 1 --format json", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 0);
    unsigned models = 0, order0 = 0;
    for (const char *p = big; (p = strstr(p, "\"model\": {\"slab_size\": ")); p++) {
        unsigned size, order;
        if (sscanf(p, "\"model\": {\"slab_size\": %u, \"order\": %u", &size, &order) == 2) {
            models++;
            order0 += order == 0;
        }
    }
    SL_CHECK_EQ(models, 235);
    SL_CHECK_EQ(order0, 0);
    snprintf(args, sizeof args, "geometry --sysfs '%s' --min-order 11", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 2);
}

/* stats --kernel: each version's counters under its names; 7.0's alloc_fastpath counts the sheaves. */
static void test_stats_kernel_versions(void)
{
    SL_CHECK_EQ(run("stats --kernel 7.0 --ops 20000 --workload remote", out, sizeof out), 0);
    SL_CHECK(strstr(out, "Counters (CONFIG_SLUB_STATS of 7.0") != NULL);
    SL_CHECK(counter(out, "alloc_fastpath") > 0);
    SL_CHECK_EQ(counter(out, "cpu_partial_free"), -1); /* gone in 7.0 */
    SL_CHECK_EQ(counter(out, "alloc_cpu_sheaf"), -1);  /* 6.18's name */
    SL_CHECK_EQ(run("stats --kernel 6.18 --sheaf-capacity 32 --ops 20000 --format json", out, sizeof out), 0);
    SL_CHECK(strstr(out, "\"kernel\": \"6.18\"") != NULL && strstr(out, "\"sheaf_capacity\": 32") != NULL);
    SL_CHECK(strstr(out, "\"alloc_cpu_sheaf\": {\"total\": ") != NULL);
    SL_CHECK(strstr(out, "\"sheaf_return_slow\"") != NULL);
    SL_CHECK_EQ(run("stats --kernel 4.4 --workload bulk --ops 5000", out, sizeof out), 0);
    SL_CHECK(counter(out, "cpu_partial_free") >= 0);
    SL_CHECK_EQ(run("stats --kernel 3.0", out, sizeof out), 2);
    SL_CHECK_EQ(run("stats --kernel 7.0 --variant plain", out, sizeof out), 1); /* 7.0 has no CPU-slab variants */
    SL_CHECK_EQ(run("stats --kernel 8.0 --ops 2000", out, sizeof out), 0);
    SL_CHECK(strstr(out, "notice: Linux 8.0 is newer than the newest kernel the model follows (7.3): it gets 7.3's "
                         "rules") != NULL);
    SL_CHECK_EQ(run("stats --kernel 8.0 --ops 2000 --format json", out, sizeof out), 0);
    SL_CHECK(strstr(out, "\"kernel\": \"8.0\", \"rules\": \"7.3\"") != NULL && strstr(out, "\"notice\": ") != NULL);
    SL_CHECK_EQ(run("stats --kernel 7.3-rc2 --ops 2000 --format json", out, sizeof out), 0);
    SL_CHECK(strstr(out, "\"kernel\": \"7.3\", \"rules\": \"7.3\"") != NULL && !strstr(out, "\"notice\""));
    SL_CHECK_EQ(run("stats --kernel 7.0 --variant rt --ops 2000", out, sizeof out), 0); /* but PREEMPT_RT kernels */
}

/*
 * stats --gfp: every allocation in that context.  On 7.0 (from -rc3's
 * fb1091febd66) and 7.1 a GFP_ATOMIC or GFP_NOWAIT workload refills sheaves
 * as GFP_KERNEL does; on 6.18 with opt-in sheaves a GFP_ATOMIC workload never
 * refills one (its allocations take the slab path when main, spare and barn
 * are empty); the bulk workload takes the same path in every context.
 */
static void test_stats_gfp(void)
{
    SL_CHECK_EQ(run("stats --kernel 7.0 --workload burst --ops 4000", out, sizeof out), 0);
    SL_CHECK(strstr(out, "workload burst in GFP_KERNEL context") != NULL);
    long long kernel70 = counter(out, "sheaf_refill");
    SL_CHECK(kernel70 > 0);
    SL_CHECK_EQ(run("stats --kernel 7.0 --workload burst --ops 4000 --gfp atomic", out, sizeof out), 0);
    SL_CHECK(strstr(out, "workload burst in GFP_ATOMIC context") != NULL);
    SL_CHECK_EQ(counter(out, "sheaf_refill"), kernel70); /* allow_spin: the same refills as GFP_KERNEL */
    SL_CHECK_EQ(run("stats --kernel 6.18 --sheaf-capacity 32 --workload burst --ops 4000", out, sizeof out), 0);
    SL_CHECK(counter(out, "sheaf_refill") > 0);
    SL_CHECK_EQ(
        run("stats --kernel 6.18 --sheaf-capacity 32 --workload burst --ops 4000 --gfp atomic", out, sizeof out), 0);
    SL_CHECK_EQ(counter(out, "sheaf_refill"), 0); /* 6.18's can_alloc: no refill without blocking */
    SL_CHECK(counter(out, "alloc_slab") > 0);
    SL_CHECK_EQ(run("stats --kernel 7.1 --workload burst --ops 4000 --gfp nowait --format json", out, sizeof out), 0);
    SL_CHECK(strstr(out, "\"gfp\": \"nowait\"") != NULL);
    SL_CHECK(strstr(out, "\"sheaf_refill\": {\"total\": 0") == NULL);
    static char bulk[1 << 16];
    SL_CHECK_EQ(run("stats --kernel 7.0 --workload bulk --ops 3000", bulk, sizeof bulk), 0);
    SL_CHECK_EQ(run("stats --kernel 7.0 --workload bulk --ops 3000 --gfp atomic", out, sizeof out), 0);
    const char *names[] = {"alloc_fastpath", "alloc_slowpath", "sheaf_refill",
                           "barn_get",       "barn_get_fail",  "alloc_slab"};
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        SL_CHECK_EQ(counter(out, names[i]), counter(bulk, names[i]));
    SL_CHECK_EQ(run("stats --gfp sometimes", out, sizeof out), 2);
    SL_CHECK_EQ(run("stats --gfp", out, sizeof out), 2);
}

/* --kernel: 6.18's rules add sheaf_capacity, 4.18's reproduce a 4.18 kernel's /proc/slabinfo. */
static void test_geometry_kernel_versions(void)
{
    static char big[1 << 20];
    char args[PATH_MAX + 160];
    snprintf(args, sizeof args, "geometry --sysfs '%s' --cpus 2 --kernel 6.18", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 0);
    SL_CHECK(strstr(big, "Linux 6.18 rules") != NULL);
    SL_CHECK(strstr(big, "235 caches, 235 compared with the kernel: 234 match, 1 differ") != NULL);
    snprintf(args, sizeof args, "geometry --sysfs '%s' --cpus 2 --kernel 6.18 --format json", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 0);
    SL_CHECK(strstr(big, "\"sheaf_capacity\": 32}, \"kernel\"") != NULL);
    snprintf(args, sizeof args,
             "geometry --slabinfo '%.*s/slabinfo/rhcos-4.18.0-80.11.2.el8_0-2cpus.slabinfo' "
             "--cpus 2 --kernel 4.18",
             (int)(strlen(fixture) - 6), fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 0);
    SL_CHECK(strstr(big, "142 caches, 142 compared with the kernel: 142 match, 0 differ") != NULL);
    snprintf(args, sizeof args, "geometry --sysfs '%s' --kernel 4.2", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 2);
    snprintf(args, sizeof args, "geometry --sysfs '%s' --kernel six", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 2);
    /* A version newer than the newest modelled: 7.3's rules, said in the table and in every JSON element. */
    snprintf(args, sizeof args, "geometry --sysfs '%s' --cpus 2 --kernel 7.6", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 0);
    SL_CHECK(strstr(big, "Linux 7.3 rules") != NULL);
    SL_CHECK(strstr(big, "notice: Linux 7.6 is newer than the newest kernel the model follows (7.3)") != NULL);
    snprintf(args, sizeof args, "geometry --sysfs '%s' --cpus 2 --kernel 7.6 --format json", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 0);
    SL_CHECK(strstr(big, "\"notice\": \"Linux 7.6 is newer") != NULL);
    snprintf(args, sizeof args, "geometry --sysfs '%s' --cpus 2 --kernel 7.3 --format json", fixture);
    SL_CHECK_EQ(run(args, big, sizeof big), 0);
    SL_CHECK(strstr(big, "\"notice\"") == NULL);
}

/*
 * --nodes, --cpu-nodes, --memoryless: the topology in the JSON, the per-node
 * counts as sysfs prints them ("total N0=a N1=b", summing to the total), a
 * bad topology refused by name; one node prints no node section.
 */
static void test_stats_numa_nodes(void)
{
    static char big[1 << 17];
    SL_CHECK_EQ(run("stats --kernel 7.1 --nodes 3 --memoryless 1 --cpus 3 --ops 5000 --format json", big, sizeof big),
                0);
    SL_CHECK(strstr(big, "\"nodes\": 3, \"memory_nodes\": [0, 2], \"barn_nodes\": [0, 1, 2]") != NULL);
    SL_CHECK(strstr(big, "\"cpu_node\": [0, 1, 2], \"cpu_mem_node\": [0, 0, 2]") != NULL);
    const char *slabs = strstr(big, "\"slabs\": \"");
    SL_REQUIRE(slabs);
    long long total, n0 = 0, n2 = 0;
    SL_REQUIRE(sscanf(slabs, "\"slabs\": \"%lld N0=%lld N2=%lld", &total, &n0, &n2) >= 2);
    SL_CHECK(total > 0 && total == n0 + n2);
    char text[96] = "";
    SL_REQUIRE(sscanf(slabs, "\"slabs\": \"%95[^\"]", text) == 1);
    SL_CHECK(strstr(text, "N1=") == NULL); /* node 1 has no memory: no slab of its own */
    SL_CHECK_EQ(run("stats --kernel 7.0 --nodes 2 --cpus 4 --workload remote --ops 5000", big, sizeof big), 0);
    SL_CHECK(strstr(big, "NUMA nodes: 2") && strstr(big, "CPUs 2 (memory from node 1) 3 (memory from node 1)"));
    SL_CHECK(strstr(big, "\npartial ") != NULL);
    SL_CHECK_EQ(run("stats --ops 100", big, sizeof big), 0);
    SL_CHECK(strstr(big, "NUMA nodes") == NULL);
    SL_CHECK(run("stats --nodes 2 --memoryless 0,1", big, sizeof big) != 0);
    SL_CHECK(run("stats --nodes 2 --cpu-nodes 0,2", big, sizeof big) != 0);
    SL_CHECK(run("stats --nodes 5", big, sizeof big) != 0);
}
#endif

#if SL_WASM
static void test_cli_needs_native(void) { SL_SKIP(SL_CLI_NATIVE_ONLY); }
#endif

int main(void)
{
#if SL_WASM
    SL_RUN(test_cli_needs_native);
#else
    char dir[PATH_MAX];
    if (!sl_cli_binary(bin, sizeof bin) || !sl_test_dirname(__FILE__, dir, sizeof dir)) {
        fprintf(stderr, "  no slablab binary beside this test\n");
        return 1;
    }
    snprintf(fixture, sizeof fixture, "%s/fixtures/sysfs", dir);
    SL_RUN(test_stats_activity_line_and_counters);
    SL_RUN(test_stats_report_and_fallback);
    SL_RUN(test_geometry_boot_parameters);
    SL_RUN(test_geometry_kernel_versions);
    SL_RUN(test_stats_kernel_versions);
    SL_RUN(test_stats_gfp);
    SL_RUN(test_stats_numa_nodes);
#endif
    return sl_check_summary();
}
