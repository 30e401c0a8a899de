/*
 * cmd_stats.c - `slablab stats`: runs a workload on one SLUB model cache and
 * prints its CONFIG_SLUB_STATS counters as the kernel's tools/mm/slabinfo
 * does: the activity line of `slabinfo -D` (Objects, Alloc, Free, %Fast,
 * Fallb, O, CmpX, UL) or, with --report, the report of `slabinfo -r`
 * (sizes, "Slab Perf Counter", deactivations, cmpxchg_double looping).
 * Then every counter under its sysfs name, in the kernel's order, total and
 * per CPU as /sys/kernel/slab/<cache>/<counter> shows them ("N C0=a C1=b"),
 * and apart from them the model's own counters.  --kernel X.Y picks the
 * version (eras.h): its paths, and its counters (26 up to 6.17, 43 in 6.18,
 * 7.0's 26, where alloc_fastpath counts the sheaves); slabinfo's Alloc,
 * Free and %Fast read alloc_fastpath & co by name, as the tool reads sysfs.
 * --sheaf-capacity N is kmem_cache_args.sheaf_capacity (6.18's opt-in).
 * --gfp kernel|atomic|nowait is the context of every allocation, single
 * and bulk (sl_slub_gfp: on 6.18 a non-blocking allocation that finds the
 * CPU's sheaves empty takes the slab path instead of refilling; from 7.0
 * it refills as GFP_KERNEL does).
 *
 * The workload runs its CPUs interleaved on this one thread, from a seed,
 * so a run repeats exactly; it stops after --ops operations with whatever
 * it holds still allocated (slabinfo's Objects).  Workloads:
 *   churn    each step a random CPU allocates or frees one of its objects;
 *   remote   producer/consumer: what CPU k allocates, CPU k+1 frees
 *            (__slab_free, CPU partial lists, remote frees into CPU slabs);
 *   burst    each CPU in turn allocates 64 objects, then frees them all;
 *   bulk     kmem_cache_alloc_bulk / kmem_cache_free_bulk of 1..64 objects.
 * The cache can be given the model's fast-path variant, bulk form, debug
 * flags, boot parameters and sysfs tunables, and a zone with no free block
 * above order 0 (--fragment, to see ORDER_FALLBACK).  --nodes N makes N NUMA
 * nodes (the CPUs split among them in blocks, or as --cpu-nodes lists them;
 * --memoryless lists nodes with CPUs and no memory; --defrag-ratio is sysfs
 * remote_node_defrag_ratio): the per-node counts print as sysfs shows them
 * ("partial 3 N0=1 N1=2").
 */
#include "cli.h"

#include "../src/slub/slub.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int run_stats(int argc, char **argv);
SL_CLI_COMMAND(
    stats, .name = "stats",
    .summary = "run a workload on a SLUB model cache; print its counters as slabinfo -D / -r does",
    .usage = "slablab stats [--workload churn|remote|burst|bulk] [--ops N (default 100000)]\n"
             "         [--cpus N (1-8, default 2)] [--size BYTES (default 256)] [--seed N]\n"
             "         [--variant cmpxchg|locked|plain|rt] [--bulk-free detached|generic]\n"
             "         [--debug FZPU (CONSISTENCY_CHECKS, RED_ZONE, POISON, STORE_USER)]\n"
             "         [--min-order N] [--max-order N] [--min-objects N] [--nr-cpus N] [--no-preempt]\n"
             "         [--min-partial N] [--cpu-partial N] [--shrink] [--zone-mb N (default 64)]\n"
             "         [--fragment] [--report] [--format table|json]\n"
             "         [--kernel X.Y (4.3-7.3; newer: 7.3's rules, with a notice; default 6.17)] [--sheaf-capacity N]\n"
             "         [--gfp kernel|atomic|nowait (the allocations' context, default kernel)]\n"
             "         [--nodes N (1-4, default 1)] [--cpu-nodes N,N,... (each CPU's node)]\n"
             "         [--memoryless N,... (nodes with CPUs, no memory)] [--defrag-ratio PCT (0-100, default 100)]",
    .run = run_stats)

enum workload { WL_CHURN, WL_REMOTE, WL_BURST, WL_BULK };
static const char *const workload_names[] = {"churn", "remote", "burst", "bulk"};
static const char *const variant_names[SL_SLUB_NR_FASTPATHS] = {"cmpxchg", "locked", "plain", "rt"};
static const char *const bulk_names[] = {"detached", "generic"};
static const char *const gfp_names[] = {"kernel", "atomic", "nowait"}; /* sl_slub_gfp */

#define HELD_MAX 256 /* objects a CPU holds at most */

typedef struct stats_opts {
    enum workload workload;
    unsigned long ops, cpus, size, seed, zone_mb;
    sl_slub_config cfg;
    long min_partial, cpu_partial; /* -1: not written */
    long defrag_ratio;             /* -1: not written */
    bool cpu_nodes_given;
    bool shrink, fragment, report;
    sl_slub_gfp gfp; /* every allocation's context */
    sl_cli_format fmt;
} stats_opts;

typedef struct run_state {
    sl_slub_cache *s;
    unsigned ncpus;
    void *held[SL_SLUB_MAX_CPUS][HELD_MAX];
    unsigned nheld[SL_SLUB_MAX_CPUS];
    uint64_t rng;
    sl_slub_gfp gfp;
    unsigned long failed; /* operations that returned an error (out of memory) */
} run_state;

static unsigned rnd(run_state *r, unsigned n)
{
    r->rng ^= r->rng >> 12, r->rng ^= r->rng << 25, r->rng ^= r->rng >> 27;
    return (unsigned)(((r->rng * 0x2545F4914F6CDD1Dull) >> 33) % n);
}

static void take(run_state *r, unsigned cpu)
{
    void *p;
    if (r->nheld[cpu] < HELD_MAX && sl_slub_alloc_gfp(r->s, cpu, r->gfp, &p) == SL_OK)
        r->held[cpu][r->nheld[cpu]++] = p;
    else
        r->failed++;
}

/* Frees a random one of `owner`'s objects as CPU `cpu`. */
static void give(run_state *r, unsigned owner, unsigned cpu)
{
    unsigned i = rnd(r, r->nheld[owner]);
    void *p = r->held[owner][i];
    r->held[owner][i] = r->held[owner][--r->nheld[owner]];
    if (sl_slub_free(r->s, cpu, p) != SL_OK)
        r->failed++;
}

static void run_workload(run_state *r, const stats_opts *o)
{
    unsigned long done = 0;
    unsigned cpu = 0;
    bool filling = true;
    while (done < o->ops) {
        switch (o->workload) {
        case WL_CHURN:
            cpu = rnd(r, r->ncpus);
            if (r->nheld[cpu] && (rnd(r, 2) || r->nheld[cpu] == HELD_MAX))
                give(r, cpu, cpu);
            else
                take(r, cpu);
            done++;
            break;
        case WL_REMOTE: {
            /* CPU k allocates for CPU k+1, which frees what it was given: held[k] are objects sent to k. */
            cpu = rnd(r, r->ncpus);
            unsigned peer = (cpu + 1) % r->ncpus;
            if (r->nheld[cpu] && (rnd(r, 2) || r->nheld[peer] == HELD_MAX)) {
                give(r, cpu, cpu);
            } else {
                void *p;
                if (r->nheld[peer] < HELD_MAX && sl_slub_alloc_gfp(r->s, cpu, r->gfp, &p) == SL_OK)
                    r->held[peer][r->nheld[peer]++] = p;
                else
                    r->failed++;
            }
            done++;
            break;
        }
        case WL_BURST:
            if (filling && r->nheld[cpu] < 64) {
                take(r, cpu);
            } else if (r->nheld[cpu]) {
                filling = false;
                void *p = r->held[cpu][--r->nheld[cpu]];
                if (sl_slub_free(r->s, cpu, p) != SL_OK)
                    r->failed++;
            } else {
                filling = true;
                cpu = (cpu + 1) % r->ncpus;
                continue;
            }
            done++;
            break;
        case WL_BULK: {
            cpu = rnd(r, r->ncpus);
            unsigned n = 1 + rnd(r, 64);
            if (r->nheld[cpu] >= n && rnd(r, 2)) {
                void **tail = &r->held[cpu][r->nheld[cpu] - n];
                if (sl_slub_free_bulk(r->s, cpu, n, tail, NULL) < 0)
                    r->failed++;
                r->nheld[cpu] -= n;
            } else if (r->nheld[cpu] + n <= HELD_MAX) {
                if (sl_slub_alloc_bulk_gfp(r->s, cpu, r->gfp, n, &r->held[cpu][r->nheld[cpu]]) == (int)n)
                    r->nheld[cpu] += n;
                else
                    r->failed++;
            } else {
                continue;
            }
            done += n;
            break;
        }
        }
    }
}

/* What slabinfo reads from sysfs, gathered once. */
typedef struct cache_figures {
    const sl_slub_geometry *g;
    sl_slub_node_info ni;
    uint64_t k[SL_SLUB_NR_STATS]; /* counters, all CPUs */
    /* sysfs alloc_fastpath, alloc_slowpath, free_fastpath, free_slowpath of the cache's version */
    uint64_t alloc_fast, alloc_slow, free_fast, free_slow;
    unsigned long objects; /* sysfs objects: allocated, CPU freelists counted in */
} cache_figures;

/* The counter the cache's version shows under sysfs `name`, 0 if it has none (as a missing file reads). */
static uint64_t by_name(sl_slub_cache *s, const char *name)
{
    const sl_slub_kstat *t;
    unsigned n = sl_slub_kstats(sl_slub_cache_rules(s)->version, &t);
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return sl_slub_stat_get(s, -1, t[i].stat);
    return 0;
}

static void gather(sl_slub_cache *s, cache_figures *f)
{
    f->g = sl_slub_cache_geometry(s);
    sl_slub_node_info_get(s, &f->ni);
    for (unsigned i = 0; i < SL_SLUB_NR_STATS; i++)
        f->k[i] = sl_slub_stat_get(s, -1, i);
    f->alloc_fast = by_name(s, "alloc_fastpath");
    f->alloc_slow = by_name(s, "alloc_slowpath");
    f->free_fast = by_name(s, "free_fastpath");
    f->free_slow = by_name(s, "free_slowpath");
    f->objects = f->ni.total_objects - f->ni.partial_free;
}

static unsigned long pct(uint64_t part, uint64_t whole) { return whole ? (unsigned long)(part * 100 / whole) : 0; }

/* slabinfo's first_line() and slabcache() with show_activity (-D). */
static void print_activity(const char *name, const cache_figures *f)
{
    uint64_t total_alloc = f->alloc_fast + f->alloc_slow;
    uint64_t total_free = f->free_fast + f->free_slow;
    printf("Name                   Objects      Alloc       Free   %%Fast Fallb O CmpX   UL\n");
    printf("%-21s %8lu %10llu %10llu %3lu %3lu %5llu %1u %4llu %4llu\n", name, f->objects,
           (unsigned long long)total_alloc, (unsigned long long)total_free, pct(f->alloc_fast, total_alloc),
           pct(f->free_fast, total_free), (unsigned long long)f->k[SL_SLUB_ORDER_FALLBACK], f->g->order,
           (unsigned long long)f->k[SL_SLUB_CMPXCHG_DOUBLE_FAIL],
           (unsigned long long)f->k[SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL]);
}

static const char *onoff(uint32_t flags, uint32_t flag) { return flags & flag ? "On " : "Off"; }

/* slabinfo's report(): the sizes, then slab_stats(). */
static void print_report(const char *name, const cache_figures *f)
{
    const sl_slub_geometry *g = f->g;
    unsigned long slab_bytes = (unsigned long)SL_PAGE_SIZE << g->order, slabs = f->ni.nr_slabs;
    printf("\nSlabcache: %-15s  Aliases: %2d Order : %2u Objects: %lu\n", name, 0, g->order, f->objects);
    if (g->flags & SL_SLUB_HWCACHE_ALIGN)
        printf("** Hardware cacheline aligned\n");
    if (g->flags & SL_SLUB_TYPESAFE_BY_RCU)
        printf("** Slabs are destroyed via RCU\n");
    printf("\nSizes (bytes)     Slabs              Debug                Memory\n");
    printf("------------------------------------------------------------------------\n");
    printf("Object : %7u  Total  : %7lu   Sanity Checks : %s  Total: %7lu\n", g->object_size, slabs,
           onoff(g->flags, SL_SLUB_CONSISTENCY_CHECKS), slabs * slab_bytes);
    printf("SlabObj: %7u  Full   : %7lu   Redzoning     : %s  Used : %7lu\n", g->size,
           slabs - f->ni.nr_partial - f->ni.cpu_slabs, onoff(g->flags, SL_SLUB_RED_ZONE), f->objects * g->object_size);
    printf("SlabSiz: %7lu  Partial: %7u   Poisoning     : %s  Loss : %7lu\n", slab_bytes, f->ni.nr_partial,
           onoff(g->flags, SL_SLUB_POISON), slabs * slab_bytes - f->objects * g->object_size);
    printf("Loss   : %7u  CpuSlab: %7u   Tracking      : %s  Lalig: %7lu\n", g->size - g->object_size, f->ni.cpu_slabs,
           onoff(g->flags, SL_SLUB_STORE_USER), (g->size - g->object_size) * f->objects);
    printf("Align  : %7u  Objects: %7u   Tracing       : Off  Lpadd: %7lu\n", g->align, g->objects,
           (slab_bytes - g->objects * g->size) * slabs);

    const uint64_t *k = f->k;
    uint64_t total_alloc = f->alloc_fast + f->alloc_slow;
    uint64_t total_free = f->free_fast + f->free_slow;
    if (!k[SL_SLUB_ALLOC_SLAB] || !total_alloc)
        return; /* slab_stats() prints nothing then */
#define ROW(label, a, fr)                                                                                              \
    printf("%-20s %8llu %8llu %3lu %3lu\n", label, (unsigned long long)(a), (unsigned long long)(fr),                  \
           pct(a, total_alloc), pct(fr, total_free))
    printf("\nSlab Perf Counter       Alloc     Free %%Al %%Fr\n");
    printf("--------------------------------------------------\n");
    ROW("Fastpath", f->alloc_fast, f->free_fast);
    ROW("Slowpath", total_alloc - f->alloc_fast, f->free_slow);
    ROW("Page Alloc", k[SL_SLUB_ALLOC_SLAB], k[SL_SLUB_FREE_SLAB]);
    ROW("Add partial", k[SL_SLUB_DEACTIVATE_TO_HEAD] + k[SL_SLUB_DEACTIVATE_TO_TAIL], k[SL_SLUB_FREE_ADD_PARTIAL]);
    ROW("Remove partial", k[SL_SLUB_ALLOC_FROM_PARTIAL], k[SL_SLUB_FREE_REMOVE_PARTIAL]);
    ROW("Cpu partial list", k[SL_SLUB_CPU_PARTIAL_ALLOC], k[SL_SLUB_CPU_PARTIAL_FREE]);
    ROW("RemoteObj/SlabFrozen", k[SL_SLUB_DEACTIVATE_REMOTE_FREES], k[SL_SLUB_FREE_FROZEN]);
#undef ROW
    printf("Total                %8llu %8llu\n\n", (unsigned long long)total_alloc, (unsigned long long)total_free);
    if (k[SL_SLUB_CPUSLAB_FLUSH])
        printf("Flushes %8llu\n", (unsigned long long)k[SL_SLUB_CPUSLAB_FLUSH]);
    uint64_t total = k[SL_SLUB_DEACTIVATE_FULL] + k[SL_SLUB_DEACTIVATE_EMPTY] + k[SL_SLUB_DEACTIVATE_TO_HEAD] +
                     k[SL_SLUB_DEACTIVATE_TO_TAIL] + k[SL_SLUB_DEACTIVATE_BYPASS];
    if (total) {
        static const struct {
            const char *label;
            unsigned stat;
        } deact[] = {{"Slab full", SL_SLUB_DEACTIVATE_FULL},
                     {"Slab empty", SL_SLUB_DEACTIVATE_EMPTY},
                     {"Moved to head of partial list", SL_SLUB_DEACTIVATE_TO_HEAD},
                     {"Moved to tail of partial list", SL_SLUB_DEACTIVATE_TO_TAIL},
                     {"Deactivation bypass", SL_SLUB_DEACTIVATE_BYPASS},
                     {"Refilled from foreign frees", SL_SLUB_ALLOC_REFILL},
                     {"Node mismatch", SL_SLUB_ALLOC_NODE_MISMATCH}};
        printf("\nSlab Deactivation             Occurrences %%\n");
        printf("-------------------------------------------------\n");
        for (unsigned i = 0; i < sizeof deact / sizeof deact[0]; i++)
            printf("%-29s %7llu  %3lu%%\n", deact[i].label, (unsigned long long)k[deact[i].stat],
                   pct(k[deact[i].stat], total));
    }
    if (k[SL_SLUB_CMPXCHG_DOUBLE_FAIL] || k[SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL]) {
        printf("\nCmpxchg_double Looping\n------------------------\n");
        printf("Locked Cmpxchg Double redos   %llu\nUnlocked Cmpxchg Double redos %llu\n",
               (unsigned long long)k[SL_SLUB_CMPXCHG_DOUBLE_FAIL],
               (unsigned long long)k[SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL]);
    }
}

/* One counter as its sysfs file `name` reads: the total, then " C<cpu>=<n>" for each CPU with a non-zero count. */
static void print_counter(sl_slub_cache *s, unsigned ncpus, const char *name, unsigned stat)
{
    printf("%-25s %llu", name, (unsigned long long)sl_slub_stat_get(s, -1, stat));
    for (unsigned c = 0; c < ncpus; c++) {
        uint64_t v = sl_slub_stat_get(s, (int)c, stat);
        if (v)
            printf(" C%u=%llu", c, (unsigned long long)v);
    }
    printf("\n");
}

/* The counters t[0..n-1] as a JSON object's members, each {"total", "cpus"}. */
static void print_counters_json(sl_slub_cache *s, unsigned ncpus, const sl_slub_kstat *t, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        printf("%s\n    \"%s\": {\"total\": %llu, \"cpus\": [", i ? "," : "", t[i].name,
               (unsigned long long)sl_slub_stat_get(s, -1, t[i].stat));
        for (unsigned c = 0; c < ncpus; c++)
            printf("%s%llu", c ? ", " : "", (unsigned long long)sl_slub_stat_get(s, (int)c, t[i].stat));
        printf("]}");
    }
}

/* The model's own counters as a kstat table (names from sl_slub_stat_name). */
static unsigned model_counters(sl_slub_kstat out[SL_SLUB_NR_STATS - SL_SLUB_NR_KERNEL_STATS])
{
    unsigned n = 0;
    for (unsigned i = SL_SLUB_NR_KERNEL_STATS; i < SL_SLUB_NR_STATS; i++)
        out[n++] = (sl_slub_kstat){sl_slub_stat_name(i), (uint16_t)i};
    return n;
}

/* A node mask as a JSON array of node numbers. */
static void print_mask_json(uint8_t mask)
{
    printf("[");
    for (unsigned n = 0, k = 0; n < 8; n++)
        if ((mask >> n) & 1u)
            printf("%s%u", k++ ? ", " : "", n);
    printf("]");
}

/* The per-node counts of sysfs partial, slabs and total_objects ("N N0=a N1=b"), into three buffers. */
static void per_node_texts(sl_slub_cache *s, char bufs[3][96])
{
    sl_slub_topology t;
    sl_slub_topology_get(s, &t);
    uint32_t counts[3][SL_SLUB_MAX_NODES] = {{0}};
    for (unsigned n = 0; n < t.nr_nodes; n++) {
        sl_slub_node_info ni;
        sl_slub_node_info_node(s, n, &ni);
        counts[0][n] = ni.nr_partial;
        counts[1][n] = ni.nr_slabs;
        counts[2][n] = ni.total_objects;
    }
    for (unsigned k = 0; k < 3; k++)
        sl_slub_format_per_node(s, counts[k], bufs[k], sizeof bufs[k]);
}

/* The NUMA topology and the per-node counts, as a JSON member "numa". */
static void print_numa_json(sl_slub_cache *s, unsigned ncpus)
{
    sl_slub_topology t;
    sl_slub_topology_get(s, &t);
    char texts[3][96];
    per_node_texts(s, texts);
    printf("  \"numa\": {\"nodes\": %u, \"memory_nodes\": ", t.nr_nodes);
    print_mask_json(t.mem_nodes);
    printf(", \"barn_nodes\": ");
    print_mask_json(t.barn_nodes);
    printf(", \"remote_node_defrag_ratio\": %u, \"cpu_node\": [", t.remote_node_defrag_ratio);
    for (unsigned c = 0; c < ncpus; c++)
        printf("%s%u", c ? ", " : "", t.cpu_node[c]);
    printf("], \"cpu_mem_node\": [");
    for (unsigned c = 0; c < ncpus; c++)
        printf("%s%u", c ? ", " : "", t.cpu_mem_node[c]);
    printf("],\n           \"partial\": \"%s\", \"slabs\": \"%s\", \"total_objects\": \"%s\"},\n", texts[0], texts[1],
           texts[2]);
}

/* The nodes (table output, more than one node only): topology, and sysfs's per-node counts. */
static void print_nodes(sl_slub_cache *s)
{
    sl_slub_topology t;
    sl_slub_topology_get(s, &t);
    if (t.nr_nodes < 2)
        return;
    char texts[3][96];
    per_node_texts(s, texts);
    printf("\nNUMA nodes: %u (remote_node_defrag_ratio %u)\n", t.nr_nodes, t.remote_node_defrag_ratio / 10);
    for (unsigned n = 0; n < t.nr_nodes; n++) {
        printf("  node %u: %s, %s; CPUs", n, (t.mem_nodes >> n) & 1u ? "memory" : "memoryless",
               (t.barn_nodes >> n) & 1u ? "a barn" : "no barn");
        for (unsigned c = 0; c < sl_slub_cache_ncpus(s); c++)
            if (t.cpu_node[c] == n)
                printf(" %u (memory from node %u)", c, t.cpu_mem_node[c]);
        printf("\n");
    }
    printf("%-25s %s\n%-25s %s\n%-25s %s\n", "partial", texts[0], "slabs", texts[1], "total_objects", texts[2]);
}

static void print_json(const stats_opts *o, const char *name, sl_slub_cache *s, const cache_figures *f,
                       unsigned long failed)
{
    const sl_slub_geometry *g = f->g;
    uint64_t total_alloc = f->alloc_fast + f->alloc_slow;
    uint64_t total_free = f->free_fast + f->free_slow;
    const sl_slub_rules *r = sl_slub_cache_rules(s);
    char ver[8];
    printf(
        "{\n  \"name\": \"%s\", \"workload\": \"%s\", \"gfp\": \"%s\", \"ops\": %lu, \"failed\": %lu, \"cpus\": %lu, "
        "\"seed\": %lu,\n",
        name, workload_names[o->workload], gfp_names[o->gfp], o->ops, failed, o->cpus, o->seed);
    char rules[8], notice[160];
    printf("  \"kernel\": \"%s\", \"rules\": \"%s\", \"era\": \"%s\", \"sheaf_capacity\": %u,\n",
           sl_slub_kversion_format(r->version, ver, sizeof ver),
           sl_slub_kversion_format(r->follows, rules, sizeof rules), sl_slub_era_name(r->era),
           sl_slub_cache_sheaf_capacity(s));
    if (sl_slub_kversion_notice(r->version, notice, sizeof notice))
        printf("  \"notice\": \"%s\",\n", notice);
    printf("  \"variant\": \"%s\", \"bulk_free\": \"%s\", \"tid_step\": %lu,\n", variant_names[o->cfg.fastpath],
           bulk_names[o->cfg.bulk_free], sl_slub_cache_tid_step(s));
    printf("  \"cache\": {\"object_size\": %u, \"slab_size\": %u, \"align\": %u, \"order\": %u, \"objs_per_slab\": %u, "
           "\"min_partial\": %u, \"cpu_partial\": %u, \"fallback_order\": %u, \"flags\": %u},\n",
           g->object_size, g->size, g->align, g->order, g->objects, g->min_partial, g->cpu_partial, g->fallback_order,
           g->flags);
    printf("  \"slabinfo\": {\"objects\": %lu, \"slabs\": %u, \"partial\": %u, \"cpu_slabs\": %u, \"alloc\": %llu, "
           "\"free\": %llu, \"fast_alloc_pct\": %lu, \"fast_free_pct\": %lu, \"order_fallback\": %llu, \"cmpx\": %llu, "
           "\"ul\": %llu},\n",
           f->objects, f->ni.nr_slabs, f->ni.nr_partial, f->ni.cpu_slabs, (unsigned long long)total_alloc,
           (unsigned long long)total_free, pct(f->alloc_fast, total_alloc), pct(f->free_fast, total_free),
           (unsigned long long)f->k[SL_SLUB_ORDER_FALLBACK], (unsigned long long)f->k[SL_SLUB_CMPXCHG_DOUBLE_FAIL],
           (unsigned long long)f->k[SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL]);
    print_numa_json(s, (unsigned)o->cpus);
    const sl_slub_kstat *t;
    unsigned n = sl_slub_kstats(r->version, &t);
    sl_slub_kstat model[SL_SLUB_NR_STATS - SL_SLUB_NR_KERNEL_STATS];
    printf("  \"counters\": {");
    print_counters_json(s, (unsigned)o->cpus, t, n);
    printf("\n  },\n  \"model_counters\": {");
    print_counters_json(s, (unsigned)o->cpus, model, model_counters(model));
    printf("\n  }\n}\n");
}

/* Holds every other page of the zone, so that no free block is above order 0. */
static bool fragment_zone(sl_page_zone *z)
{
    for (uint32_t pfn = 0; pfn < z->npages; pfn++)
        if (!sl_page_alloc(z, 0, 0))
            return false;
    for (uint32_t pfn = 0; pfn < z->npages; pfn += 2)
        sl_page_free(z, sl_page_from_pfn(z, pfn), 0);
    return true;
}

/* A comma-separated list of numbers 0..max into out[0..cap-1]; returns how many, or -1 for a bad list. */
static int parse_list(const char *text, unsigned max, uint8_t *out, unsigned cap)
{
    unsigned n = 0;
    while (*text) {
        char *end;
        unsigned long v = strtoul(text, &end, 10);
        if (end == text || v > max || n == cap || (*end && *end != ','))
            return -1;
        out[n++] = (uint8_t)v;
        text = *end ? end + 1 : end;
    }
    return n ? (int)n : -1;
}

static int index_of(const char *const *names, unsigned n, const char *s)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(names[i], s))
            return (int)i;
    return -1;
}

static int parse(int argc, char **argv, stats_opts *o)
{
    *o = (stats_opts){.workload = WL_CHURN,
                      .ops = 100000,
                      .cpus = 2,
                      .size = 256,
                      .seed = 1,
                      .zone_mb = 64,
                      .min_partial = -1,
                      .cpu_partial = -1,
                      .defrag_ratio = -1,
                      .fmt = SL_FMT_TABLE};
    const sl_cli_command *cmd = &sl_cli_cmd_stats;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        unsigned long v;
        bool has_value = i + 1 < argc;
        const char *val = has_value ? argv[i + 1] : NULL;
#define NUMBER(flag, lo, hi, dst)                                                                                      \
    if (!strcmp(a, flag)) {                                                                                            \
        if (!has_value || !sl_cli_parse_ulong(val, lo, hi, &v))                                                        \
            return sl_cli_usage_error(cmd, "%s takes %lu to %lu", flag, (unsigned long)(lo), (unsigned long)(hi));     \
        dst;                                                                                                           \
        i++;                                                                                                           \
        continue;                                                                                                      \
    }
        if (!strcmp(a, "--help")) {
            printf("usage: %s\n", cmd->usage);
            return -1;
        }
        NUMBER("--ops", 1, 100000000, o->ops = v)
        NUMBER("--cpus", 1, SL_SLUB_MAX_CPUS, o->cpus = v)
        NUMBER("--size", 8, 1u << 20, o->size = v)
        NUMBER("--seed", 0, UINT32_MAX, o->seed = v)
        NUMBER("--zone-mb", 1, 1024, o->zone_mb = v)
        NUMBER("--min-order", 0, SL_PAGE_MAX_ORDER, o->cfg.kernel.boot.min_order = (uint8_t)v)
        NUMBER("--max-order", 0, 255, (o->cfg.kernel.boot.max_order = (uint8_t)v, o->cfg.kernel.boot.max_order_set = 1))
        NUMBER("--min-objects", 0, 32767, o->cfg.kernel.boot.min_objects = (uint32_t)v)
        NUMBER("--nr-cpus", 1, 8192, o->cfg.kernel.nr_cpus = (uint16_t)v)
        NUMBER("--min-partial", 0, UINT32_MAX, o->min_partial = (long)v)
        NUMBER("--cpu-partial", 0, UINT32_MAX, o->cpu_partial = (long)v)
        NUMBER("--sheaf-capacity", 1, 1024, o->cfg.sheaf_capacity = (uint16_t)v)
        NUMBER("--nodes", 1, SL_SLUB_MAX_NODES, o->cfg.nr_nodes = (uint8_t)v)
        NUMBER("--defrag-ratio", 0, 100, o->defrag_ratio = (long)v)
#undef NUMBER
        if (!strcmp(a, "--cpu-nodes") && has_value) {
            if (parse_list(argv[++i], SL_SLUB_MAX_NODES - 1, o->cfg.cpu_node, SL_SLUB_MAX_CPUS) < 0)
                return sl_cli_usage_error(cmd, "--cpu-nodes takes a node (0-%d) per CPU, as 0,0,1,1",
                                          SL_SLUB_MAX_NODES - 1);
            o->cpu_nodes_given = true;
            continue;
        }
        if (!strcmp(a, "--memoryless") && has_value) {
            uint8_t nodes[SL_SLUB_MAX_NODES];
            int n = parse_list(argv[++i], SL_SLUB_MAX_NODES - 1, nodes, SL_SLUB_MAX_NODES);
            if (n < 0)
                return sl_cli_usage_error(cmd, "--memoryless takes node numbers (0-%d), as 1 or 1,3",
                                          SL_SLUB_MAX_NODES - 1);
            for (int k = 0; k < n; k++)
                o->cfg.memoryless |= (uint8_t)(1u << nodes[k]);
            continue;
        }
        if (!strcmp(a, "--kernel") && has_value) {
            const char *why;
            if (sl_slub_kversion_parse(argv[++i], &o->cfg.kernel.version, &why) != SL_OK)
                return sl_cli_usage_error(cmd, "--kernel: %s", why);
        } else if (!strcmp(a, "--no-preempt")) {
            o->cfg.kernel.no_preempt = 1;
        } else if (!strcmp(a, "--shrink")) {
            o->shrink = true;
        } else if (!strcmp(a, "--fragment")) {
            o->fragment = true;
        } else if (!strcmp(a, "--report")) {
            o->report = true;
        } else if (!strcmp(a, "--workload") && has_value) {
            int k = index_of(workload_names, 4, argv[++i]);
            if (k < 0)
                return sl_cli_usage_error(cmd, "--workload takes churn, remote, burst or bulk");
            o->workload = (enum workload)k;
        } else if (!strcmp(a, "--variant") && has_value) {
            int k = index_of(variant_names, SL_SLUB_NR_FASTPATHS, argv[++i]);
            if (k < 0)
                return sl_cli_usage_error(cmd, "--variant takes cmpxchg, locked, plain or rt");
            o->cfg.fastpath = (uint8_t)k;
        } else if (!strcmp(a, "--gfp") && has_value) {
            int k = index_of(gfp_names, 3, argv[++i]);
            if (k < 0)
                return sl_cli_usage_error(cmd, "--gfp takes kernel, atomic or nowait");
            o->gfp = (sl_slub_gfp)k;
        } else if (!strcmp(a, "--bulk-free") && has_value) {
            int k = index_of(bulk_names, 2, argv[++i]);
            if (k < 0)
                return sl_cli_usage_error(cmd, "--bulk-free takes detached or generic");
            o->cfg.bulk_free = (uint8_t)k;
        } else if (!strcmp(a, "--debug") && has_value) {
            for (const char *c = argv[++i]; *c; c++) {
                static const char letters[] = "FZPU";
                static const uint32_t flags[4] = {SL_SLUB_CONSISTENCY_CHECKS, SL_SLUB_RED_ZONE, SL_SLUB_POISON,
                                                  SL_SLUB_STORE_USER};
                const char *at = strchr(letters, toupper((unsigned char)*c));
                if (!at)
                    return sl_cli_usage_error(cmd, "--debug takes the letters F, Z, P and U (slab_debug=)");
                o->cfg.flags |= flags[at - letters];
            }
        } else if (!strcmp(a, "--format") && has_value) {
            if (!sl_cli_parse_format(argv[++i], &o->fmt) || o->fmt == SL_FMT_CSV)
                return sl_cli_usage_error(cmd, "--format takes table or json");
        } else if (!has_value && a[0] == '-' && a[1] == '-' &&
                   (!strcmp(a, "--workload") || !strcmp(a, "--variant") || !strcmp(a, "--bulk-free") ||
                    !strcmp(a, "--gfp") || !strcmp(a, "--debug") || !strcmp(a, "--format") || !strcmp(a, "--kernel") ||
                    !strcmp(a, "--cpu-nodes") || !strcmp(a, "--memoryless"))) {
            return sl_cli_usage_error(cmd, "%s needs a value", a);
        } else {
            return sl_cli_usage_error(cmd, "unknown argument '%s'", a);
        }
    }
    if (o->cfg.kernel.nr_cpus && o->cfg.kernel.nr_cpus < o->cpus)
        return sl_cli_usage_error(cmd, "--nr-cpus (CONFIG_NR_CPUS) must be at least --cpus");
    unsigned nodes = o->cfg.nr_nodes ? o->cfg.nr_nodes : 1;
    if ((o->cfg.memoryless >> nodes) || o->cfg.memoryless == (1u << nodes) - 1)
        return sl_cli_usage_error(cmd, "--memoryless: nodes below --nodes (%u), and at least one with memory", nodes);
    for (unsigned c = 0; c < o->cpus; c++) {
        if (!o->cpu_nodes_given)
            o->cfg.cpu_node[c] = (uint8_t)(c * nodes / o->cpus); /* the CPUs in blocks, as on real machines */
        else if (o->cfg.cpu_node[c] >= nodes)
            return sl_cli_usage_error(cmd, "--cpu-nodes: CPU %u's node %u is not below --nodes (%u)", c,
                                      o->cfg.cpu_node[c], nodes);
    }
    o->cfg.object_size = (uint32_t)o->size;
    o->cfg.seed = (uint32_t)o->seed;
    o->cfg.id = 1;
    return 0;
}

static int run_stats(int argc, char **argv)
{
    stats_opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    sl_page_zone zone;
    if (sl_page_zone_init(&zone, o.zone_mb << 20, NULL) != SL_OK) {
        fprintf(stderr, "slablab stats: cannot make a %lu MiB zone\n", o.zone_mb);
        return 1;
    }
    if (o.fragment && !fragment_zone(&zone)) {
        fprintf(stderr, "slablab stats: could not fragment the zone\n");
        sl_page_zone_destroy(&zone);
        return 1;
    }
    static run_state r;
    memset(&r, 0, sizeof r);
    r.ncpus = (unsigned)o.cpus;
    r.rng = 0x9E3779B97F4A7C15ull ^ o.seed;
    r.gfp = o.gfp;
    rc = sl_slub_cache_create(&zone, NULL, r.ncpus, &o.cfg, &r.s);
    if (rc != SL_OK) {
        fprintf(stderr, "slablab stats: no such cache: %s\n", sl_strerror(rc));
        sl_page_zone_destroy(&zone);
        return 1;
    }
    if (o.defrag_ratio >= 0)
        sl_slub_set_remote_node_defrag_ratio(r.s, (unsigned)o.defrag_ratio);
    if ((o.min_partial >= 0 && (rc = sl_slub_set_min_partial(r.s, (uint32_t)o.min_partial)) != SL_OK) ||
        (o.cpu_partial >= 0 && (rc = sl_slub_set_cpu_partial(r.s, (uint32_t)o.cpu_partial)) != SL_OK)) {
        fprintf(stderr, "slablab stats: the tunable was refused (%s): a debug cache takes cpu_partial 0 only\n",
                sl_strerror(rc));
        sl_slub_cache_destroy(r.s);
        sl_page_zone_destroy(&zone);
        return 1;
    }
    run_workload(&r, &o);
    if (o.shrink)
        sl_slub_shrink(r.s, NULL);
    char name[32];
    snprintf(name, sizeof name, "cache-%lu", o.size);
    cache_figures f;
    gather(r.s, &f);
    if (o.fmt == SL_FMT_JSON) {
        print_json(&o, name, r.s, &f, r.failed);
    } else {
        printf("slablab stats: workload %s in GFP_%s context, %lu operations (%lu failed), %lu CPUs, seed %lu; %s fast "
               "path, %s bulk free, TID_STEP %lu\n",
               workload_names[o.workload],
               o.gfp == SL_SLUB_GFP_KERNEL   ? "KERNEL"
               : o.gfp == SL_SLUB_GFP_ATOMIC ? "ATOMIC"
                                             : "NOWAIT",
               o.ops, r.failed, o.cpus, o.seed, variant_names[o.cfg.fastpath], bulk_names[o.cfg.bulk_free],
               sl_slub_cache_tid_step(r.s));
        char notice[160];
        if (sl_slub_kversion_notice(sl_slub_cache_rules(r.s)->version, notice, sizeof notice))
            printf("notice: %s\n", notice);
#if defined(SLABLAB_BENCH)
        printf("note: a benchmark build, which drops alloc_fastpath and free_fastpath as a kernel without "
               "CONFIG_SLUB_STATS drops every counter\n");
#endif
        if (o.report)
            print_report(name, &f);
        else
            print_activity(name, &f);
        const sl_slub_rules *rules = sl_slub_cache_rules(r.s);
        const sl_slub_kstat *t;
        unsigned n = sl_slub_kstats(rules->version, &t);
        char ver[8];
        printf("\nCounters (CONFIG_SLUB_STATS of %s, its order and sysfs names)\n",
               sl_slub_kversion_format(rules->version, ver, sizeof ver));
        for (unsigned i = 0; i < n; i++)
            print_counter(r.s, r.ncpus, t[i].name, t[i].stat);
        printf("\nModel-only counters\n");
        for (unsigned i = SL_SLUB_NR_KERNEL_STATS; i < SL_SLUB_NR_STATS; i++)
            print_counter(r.s, r.ncpus, sl_slub_stat_name(i), i);
        print_nodes(r.s);
    }
    sl_slub_cache_destroy(r.s); /* SL_EBUSY: the run's objects are still allocated, by design */
    sl_page_zone_destroy(&zone);
    return 0;
}
