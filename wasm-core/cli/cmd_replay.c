/*
 * cmd_replay.c - `slablab replay`: a kmem/percpu ftrace trace (text, gzip,
 * or a .slabcap from `slablab capture`) through the SLUB and percpu
 * models; per-cache and per-call-site tables, the percpu chunks, the parse
 * accounting; JSON; a Perfetto export.  The work is the replay layer's
 * (src/replay), which the browser runs too.
 */
#include "cli.h"
#include "input.h"
#include "outfile.h"

#include "../src/replay/check.h"
#include "../src/replay/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int run_replay(int argc, char **argv);
SL_CLI_COMMAND(replay, .name = "replay",
               .summary = "replay an ftrace kmem/percpu trace (.txt, .gz, .slabcap) through the models",
               .usage = "slablab replay (FILE | -) [--cache NAME] [--kernel X.Y[,X.Y]] [--format table|json]\n"
                        "                 [--check (a .slabcap's snapshots: the model kept in step, docs/live.md)]\n"
                        "                 [--perfetto OUT.json] [--cpus N] [--zone-mb N] [--pcpu-unit-size BYTES]\n"
                        "                 [--top N (table rows, default 25; 0 = all)] [--validate-each]",
               .run = run_replay)

typedef struct export_ctx {
    sl_replay *r;
    sl_perfetto *pf;
    FILE *out;
} export_ctx;

static const char *cache_name(void *user, unsigned cache)
{
    export_ctx *x = user;
    sl_replay_cache_info ci;
    return sl_replay_cache_info_get(x->r, cache, 0, &ci) == SL_OK ? ci.name : NULL;
}

static bool write_file(void *user, const void *data, size_t len)
{
    return fwrite(data, 1, len, ((export_ctx *)user)->out) == len;
}

static void on_op(void *user, const sl_replay_op *op) { sl_perfetto_op(((export_ctx *)user)->pf, op); }

/*
 * This process's peak resident set: VmHWM, which exec resets (getrusage's
 * ru_maxrss also keeps the high-water mark of the process that forked us).
 */
static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    if (kb < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kb = ru.ru_maxrss;
    }
    return kb;
}

static void human_bytes(char *buf, size_t len, uint64_t v)
{
    if (v >= 10ull << 30)
        snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
    else if (v >= 10ull << 20)
        snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
    else if (v >= 10ull << 10)
        snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
    else
        snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void human_time(char *buf, size_t len, uint64_t ns, uint64_t n)
{
    if (!n)
        snprintf(buf, len, "-");
    else if (ns >= 10000000000ull)
        snprintf(buf, len, "%.0fs", (double)ns / 1e9);
    else if (ns >= 10000000ull)
        snprintf(buf, len, "%.0fms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.0fus", (double)ns / 1e3);
}

static void print_caches(sl_replay *r, unsigned kernels, unsigned top)
{
    unsigned n = sl_replay_cache_count(r);
    unsigned *order = sl_replay_order(r, SL_REPLAY_ORDER_CACHES);
    if (!order)
        return;
    printf("\nCaches (by allocations%s)\n",
           kernels > 1 ? "; the model columns are the first kernel's, each kernel's below" : "");
    printf("%-24s %8s %8s %7s %8s %8s %5s %7s %6s %7s %7s | %5s %6s %6s %4s %5s\n", "cache", "allocs", "frees",
           "unknown", "req", "alloc", "frag%", "peak", "xcpu", "life50", "life99", "fast%", "slabs+", "slabs-", "part",
           "geom");
    for (unsigned i = 0; i < n && (!top || i < top); i++) {
        sl_replay_cache_info ci;
        sl_replay_cache_info_get(r, order[i], 0, &ci);
        char req[16], alloc[16], p50[16], p99[16];
        human_bytes(req, sizeof req, ci.bytes_req);
        human_bytes(alloc, sizeof alloc, ci.bytes_alloc);
        human_time(p50, sizeof p50, ci.lifetime_p50_ns, ci.lifetimes);
        human_time(p99, sizeof p99, ci.lifetime_p99_ns, ci.lifetimes);
        printf("%-24.24s %8llu %8llu %7llu %8s %8s %5.1f %7llu %6llu %7s %7s |", ci.name, (unsigned long long)ci.allocs,
               (unsigned long long)ci.frees, (unsigned long long)ci.freed_unknown, req, alloc,
               ci.bytes_alloc ? 100.0 * (double)(ci.bytes_alloc - ci.bytes_req) / (double)ci.bytes_alloc : 0.0,
               (unsigned long long)ci.peak_live, (unsigned long long)ci.cross_cpu_frees, p50, p99);
        if (!ci.modelled) {
            printf(" %5s %6s %6s %4s %5s\n", "-", "-", "-", "-", "-");
            continue;
        }
        uint64_t ops = ci.allocs + ci.frees, slow = ci.alloc_slowpath + ci.free_slowpath;
        printf(" %5.1f %6llu %6llu %4u %5s\n", ops ? 100.0 * (double)(ops - slow) / (double)ops : 0.0,
               (unsigned long long)ci.slabs_allocated, (unsigned long long)ci.slabs_freed, ci.max_partial,
               ci.geometry_matches == 1   ? "ok"
               : ci.geometry_matches == 0 ? "DIFF"
               : ci.geometry_from_sysfs   ? "?"
                                          : "calc");
    }
    if (top && n > top)
        printf("(%u more caches; --top 0 shows all)\n", n - top);
    free(order);
}

/* The layout of `perf kmem stat --caller`. */
static void print_sites(sl_replay *r, unsigned top)
{
    unsigned n = sl_replay_site_count(r);
    if (!n)
        return;
    unsigned *order = sl_replay_order(r, SL_REPLAY_ORDER_SITES);
    if (!order)
        return;
    static const char rule[] =
        "-----------------------------------------------------------------------------------------"
        "----------------";
    printf("\n%s\n %-34s | Total_alloc/Per | Total_req/Per   | Hit      | Ping-pong | Frag\n%s\n", rule, "Callsite",
           rule);
    for (unsigned i = 0; i < n && (!top || i < top); i++) {
        sl_replay_site_info s;
        sl_replay_site_info_get(r, order[i], &s);
        char a[32], q[32];
        snprintf(a, sizeof a, "%llu/%llu", (unsigned long long)s.bytes_alloc,
                 (unsigned long long)(s.allocs ? s.bytes_alloc / s.allocs : 0));
        snprintf(q, sizeof q, "%llu/%llu", (unsigned long long)s.bytes_req,
                 (unsigned long long)(s.allocs ? s.bytes_req / s.allocs : 0));
        printf(" %-34.34s | %15s | %15s | %8llu | %9llu | %7.3f%%\n", s.site, a, q, (unsigned long long)s.allocs,
               (unsigned long long)s.cross_cpu,
               s.bytes_alloc ? 100.0 * (double)(s.bytes_alloc - s.bytes_req) / (double)s.bytes_alloc : 0.0);
    }
    if (top && n > top)
        printf(" ... (%u more call sites; --top 0 shows all)\n", n - top);
    printf("%s\n", rule);
    free(order);
}

static void print_chunks(sl_replay *r)
{
    unsigned n = sl_replay_chunk_count(r);
    if (!n)
        return;
    printf("\npercpu chunks (model free/contig bytes count only the trace's areas)\n");
    printf("%-18s %-16s %7s %7s %7s %6s %10s %10s %6s\n", "base_addr", "seen", "allocs", "frees", "unknown", "live",
           "free B", "contig B", "pages");
    for (unsigned i = 0; i < n; i++) {
        sl_replay_chunk_info c;
        sl_replay_chunk_info_get(r, i, &c);
        printf("%016llx   %-16s %7llu %7llu %7llu %6u %10u %10u %6u%s\n", (unsigned long long)c.base,
               c.created_in_trace ? "created" : "before the trace", (unsigned long long)c.allocs,
               (unsigned long long)c.frees, (unsigned long long)c.freed_unknown, c.live, c.free_bytes, c.contig_bytes,
               c.nr_populated, c.destroyed ? "  destroyed" : "");
    }
}

/*
 * One section per kernel model: the SLUB rules its caches followed, its
 * sheaves counters, and per cache what the rules change (fast-path share,
 * slabs, the longest partial list, sheaf capacity), so two versions read
 * side by side on the same trace.
 */
static void print_models(sl_replay *r, unsigned top, bool rt)
{
    sl_replay_summary s;
    sl_replay_summary_get(r, &s);
    unsigned n = sl_replay_cache_count(r);
    unsigned *order = sl_replay_order(r, SL_REPLAY_ORDER_CACHES);
    if (!order)
        return;
    for (unsigned k = 0; k < s.nkernels; k++) {
        sl_replay_model_info mi;
        sl_replay_model_info_get(r, k, &mi);
        printf("\nmodel: kernel %s%s, SLUB rules of %s (%s), %u CPUs, %u caches (%u with sheaves), %llu errors%s\n",
               mi.kernel[0] ? mi.kernel : "unknown", rt ? " PREEMPT_RT (SLUB's rt paths)" : "", mi.slub_kernel,
               mi.slub_era, s.model_cpus, mi.caches_modelled, mi.caches_with_sheaves, (unsigned long long)mi.errors,
               mi.errors ? " (--format json lists them with their lines)" : "");
        if (mi.notice[0])
            printf("  notice: %s\n", mi.notice);
        if (mi.caches_with_sheaves)
            printf("  sheaves: %llu allocs and %llu frees on a CPU sheaf, %llu refills, %llu flushes, barn %llu/%llu "
                   "get/fail, %llu/%llu put/fail\n",
                   (unsigned long long)mi.alloc_cpu_sheaf, (unsigned long long)mi.free_cpu_sheaf,
                   (unsigned long long)mi.sheaf_refill, (unsigned long long)mi.sheaf_flush,
                   (unsigned long long)mi.barn_get, (unsigned long long)mi.barn_get_fail,
                   (unsigned long long)mi.barn_put, (unsigned long long)mi.barn_put_fail);
        printf("  %-24s %6s %7s %7s %7s %5s %6s %7s %7s\n", "cache", "fast%", "slabs+", "slabs-", "slabs", "part",
               "sheaf", "refills", "flushes");
        for (unsigned i = 0, shown = 0; i < n && (!top || shown < top); i++) {
            sl_replay_cache_info ci;
            sl_replay_cache_info_get(r, order[i], k, &ci);
            if (!ci.modelled)
                continue;
            shown++;
            uint64_t ops = ci.allocs + ci.frees, slow = ci.alloc_slowpath + ci.free_slowpath;
            printf("  %-24.24s %6.1f %7llu %7llu %7u %5u %6u %7llu %7llu\n", ci.name,
                   ops ? 100.0 * (double)(ops - slow) / (double)ops : 0.0, (unsigned long long)ci.slabs_allocated,
                   (unsigned long long)ci.slabs_freed, ci.slabs, ci.max_partial, ci.sheaf_capacity,
                   (unsigned long long)ci.sheaf_refills, (unsigned long long)ci.sheaf_flushes);
        }
    }
    free(order);
}

static void print_table(sl_replay *r, const char *file, unsigned top)
{
    sl_replay_summary s;
    sl_replay_summary_get(r, &s);
    printf("slablab replay %s\n", file);
    for (unsigned i = 0; i < s.nwarnings; i++)
        printf("warning: %s\n", s.warnings[i]);
    printf("events: %llu lines, %llu parsed, %llu skipped (%llu header, %llu other events, %llu bad), %llu lost by "
           "the kernel\n",
           (unsigned long long)s.lines, (unsigned long long)s.parsed, (unsigned long long)s.skipped,
           (unsigned long long)s.header_lines, (unsigned long long)s.other_events, (unsigned long long)s.bad_lines,
           (unsigned long long)s.lost_events);
    printf("pairs: %llu matched, %llu live at the end, %llu freed but allocated before the trace, %llu kfree(NULL), "
           "%llu frees without an event (allocated again while live)\n",
           (unsigned long long)s.matched, (unsigned long long)s.live_at_end, (unsigned long long)s.freed_unknown,
           (unsigned long long)s.null_frees, (unsigned long long)s.untraced_frees);
    printf("allocation contexts (gfp_flags): %llu may block, %llu may not (modelled as GFP_ATOMIC), %llu with no "
           "reclaim bit (as GFP_ATOMIC), %llu unknown (as GFP_KERNEL)\n",
           (unsigned long long)s.alloc_contexts[0], (unsigned long long)s.alloc_contexts[1],
           (unsigned long long)s.alloc_contexts[2], (unsigned long long)s.alloc_contexts[3]);
    print_caches(r, s.nkernels, top);
    print_sites(r, top);
    print_chunks(r);
    print_models(r, top, s.preempt_rt);
}

/* ---- --check: the model kept in step with the capture's two snapshots (src/replay/check.c) ---- */

enum { CHECK_MAX_CACHES = 256 };

typedef struct check_cache {
    char name[64];
    sl_check *c; /* NULL: not checked (why says why) */
    char why[256];
    uint64_t events;
} check_cache;

typedef struct check_ctx {
    sl_replay *r;
    const char *only;    /* --cache */
    sl_strbuf member[2]; /* snapshot-start.json, snapshot-end.json as they stream in */
    bool too_big[2];
    sl_check_snapshot *snap[2];
    char snap_err[2][256];
    check_cache *caches; /* by the replay's cache index */
    unsigned ncaches;
    uint16_t by_index[65536]; /* the replay's cache index -> 1 + index in caches[] (0: not yet met) */
    unsigned checks;
    uint64_t events_before_snapshot, unknown_frees_placed, unknown_frees_unplaced, over_limit;
    /*
     * kfrees of objects allocated before the trace on slabs no check knew
     * yet (full ones: a snapshot does not list them), kept until a cache's
     * event first touches that slab: then they are that cache's, applied
     * in time order before the event (that slab's earlier events), so the
     * model sees the slab leave "full" as the kernel's did.  Chained by
     * 4-KiB page in `head`; an applied one has ptr 0.
     */
    struct pending_free {
        uint64_t t_ns, ptr;
        uint32_t next; /* index + 1 in the page's chain, 0: end */
        uint16_t cpu;
    } * pending;
    uint32_t npending, cap_pending;
    uint32_t *head; /* PENDING_BUCKETS chains */
    uint64_t unknown_frees_placed_later;
} check_ctx;

enum { PENDING_BUCKETS = 1 << 16, PENDING_MAX = 1 << 22 };

static uint32_t pending_bucket(uint64_t page) { return (uint32_t)((page * 0x9e3779b97f4a7c15ull) >> 48); }

/* Keeps an unplaced kfree for later; false past PENDING_MAX or without memory (it stays unplaced). */
static bool pending_add(check_ctx *x, const sl_replay_op *op)
{
    if (!x->head && !(x->head = calloc(PENDING_BUCKETS, sizeof *x->head)))
        return false;
    if (x->npending == x->cap_pending) {
        uint32_t cap = x->cap_pending ? 2 * x->cap_pending : 4096;
        struct pending_free *g = cap <= PENDING_MAX ? realloc(x->pending, cap * sizeof *g) : NULL;
        if (!g)
            return false;
        x->pending = g, x->cap_pending = cap;
    }
    uint32_t b = pending_bucket(op->ptr >> 12);
    x->pending[x->npending] =
        (struct pending_free){.t_ns = op->ts_ns, .ptr = op->ptr, .next = x->head[b], .cpu = op->cpu};
    x->head[b] = ++x->npending;
    return true;
}

static int by_time(const void *a, const void *b)
{
    const struct pending_free *p = *(struct pending_free *const *)a, *q = *(struct pending_free *const *)b;
    return p->t_ns < q->t_ns ? -1 : p->t_ns > q->t_ns;
}

/* Before k's event at ptr, on a slab k does not know yet: the kept kfrees of that slab's object slots, applied to k. */
static void pending_apply(check_ctx *x, check_cache *k, uint64_t ptr)
{
    uint64_t bytes = sl_check_slab_bytes(k->c), base = ptr - ptr % bytes;
    struct pending_free *found[256];
    unsigned n = 0;
    for (uint64_t page = base >> 12; page < (base + bytes) >> 12; page++)
        for (uint32_t i = x->head[pending_bucket(page)]; i && n < 256; i = x->pending[i - 1].next) {
            struct pending_free *p = &x->pending[i - 1];
            if (p->ptr && p->ptr >> 12 == page && sl_check_object_slot(k->c, p->ptr))
                found[n++] = p;
        }
    if (!n)
        return;
    qsort(found, n, sizeof *found, by_time);
    for (unsigned i = 0; i < n; i++) {
        k->events++;
        sl_check_event(k->c, found[i]->t_ns, found[i]->cpu, false, found[i]->ptr);
        found[i]->ptr = 0;
    }
    x->unknown_frees_placed_later += n;
    x->unknown_frees_unplaced -= n;
}

static void check_member(void *user, const char *name, const void *data, size_t len, bool end)
{
    check_ctx *x = user;
    int which = !strcmp(name, "snapshot-start.json") ? 0 : !strcmp(name, "snapshot-end.json") ? 1 : -1;
    if (which < 0)
        return;
    if (!end) {
        if (x->member[which].len + len > SL_CHECK_MAX_JSON)
            x->too_big[which] = true;
        else
            sl_strbuf_append(&x->member[which], data, len);
        return;
    }
    if (x->too_big[which] || x->member[which].failed) {
        snprintf(x->snap_err[which], sizeof x->snap_err[which], "%s is over %u bytes, or no memory to hold it", name,
                 (unsigned)SL_CHECK_MAX_JSON);
    } else {
        x->snap[which] = sl_check_snapshot_parse(x->member[which].data, x->member[which].len, x->snap_err[which],
                                                 sizeof x->snap_err[which]);
    }
    sl_strbuf_free(&x->member[which]);
}

/* The check of the replay's cache `ci`, made at its first event; NULL when it is not checked. */
static check_cache *check_of(check_ctx *x, unsigned ci)
{
    if (ci >= 65536)
        return NULL;
    if (x->by_index[ci])
        return &x->caches[x->by_index[ci] - 1];
    sl_replay_cache_info info;
    if (sl_replay_cache_info_get(x->r, ci, 0, &info) != SL_OK || !info.name)
        return NULL;
    if ((x->only && strcmp(x->only, info.name)) || x->ncaches >= 65535)
        return NULL;
    check_cache *grown = realloc(x->caches, (x->ncaches + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    x->caches = grown;
    check_cache *k = &x->caches[x->ncaches++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", info.name);
    x->by_index[ci] = (uint16_t)x->ncaches;
    if (x->checks >= CHECK_MAX_CACHES)
        snprintf(k->why, sizeof k->why, "over the %u caches checked at once (use --cache)", CHECK_MAX_CACHES);
    else if (sl_check_create(x->snap[0], info.name, &k->c, k->why, sizeof k->why) == SL_OK)
        x->checks++;
    return k;
}

static void check_op(void *user, const sl_replay_op *op)
{
    check_ctx *x = user;
    bool alloc = op->kind == SL_REPLAY_OP_ALLOC;
    if (!alloc && op->kind != SL_REPLAY_OP_FREE && op->kind != SL_REPLAY_OP_FREE_UNKNOWN)
        return;
    if (!x->snap[0]) {
        x->events_before_snapshot++;
        return;
    }
    check_cache *k = NULL;
    if (op->cache != 0xffff) {
        k = check_of(x, op->cache);
    } else {
        /* a kfree of an object allocated before the trace: its cache is the one whose slab holds it */
        for (unsigned i = 0; i < x->ncaches && !k; i++)
            if (x->caches[i].c && sl_check_knows(x->caches[i].c, op->ptr))
                k = &x->caches[i];
        x->unknown_frees_placed += k != NULL;
        x->unknown_frees_unplaced += k == NULL;
        if (!k)
            pending_add(x, op);
    }
    if (!k || !k->c)
        return;
    if (op->cache != 0xffff && x->npending && !sl_check_knows(k->c, op->ptr))
        pending_apply(x, k, op->ptr);
    k->events++;
    sl_check_event(k->c, op->ts_ns, op->cpu, alloc, op->ptr);
}

static double pct(uint64_t n, uint64_t d) { return d ? 100.0 * (double)n / (double)d : 0.0; }

static int print_check(check_ctx *x, const char *file, sl_cli_format fmt)
{
    /* Events the kernel lost (the trace's markers, or the capture's count): the window's loss. */
    sl_replay_summary sum;
    sl_replay_summary_get(x->r, &sum);
    sl_check_window w = {.timed = false, .lost = sum.lost_events};
    sl_strbuf out = {0};
    int status = 0;
    sl_strbuf_printf(&out, "{\"format\": \"slablab-check/1\", \"capture\": ");
    sl_strbuf_json_string(&out, file, strlen(file));
    sl_strbuf_printf(&out, ", \"kernel\": ");
    const char *rel = sl_check_snapshot_release(x->snap[0]);
    sl_strbuf_json_string(&out, rel, strlen(rel));
    sl_strbuf_printf(&out,
                     ", \"lost_events\": %llu, \"events_before_snapshot\": %llu, \"kfree_unknown_placed\": %llu, "
                     "\"kfree_unknown_placed_later\": %llu, \"kfree_unknown_unplaced\": %llu, \"caches\": [",
                     (unsigned long long)w.lost, (unsigned long long)x->events_before_snapshot,
                     (unsigned long long)x->unknown_frees_placed, (unsigned long long)x->unknown_frees_placed_later,
                     (unsigned long long)x->unknown_frees_unplaced);
    if (fmt != SL_FMT_JSON) {
        printf("slablab replay %s --check (kernel %s): each cache's SLUB model seeded from snapshot-start, driven by "
               "the trace, compared with snapshot-end; %llu events lost by the kernel\n",
               file, rel, (unsigned long long)w.lost);
        printf("%-22s %8s %15s %6s %6s %17s %7s %6s %6s %6s %6s\n", "cache", "events", "slabs agree", "list%", "inuse%",
               "objects agree", "allocs", "hit%", "fast%", "slow%", "sheaf%");
    }
    unsigned shown = 0;
    /* The busiest caches first. */
    unsigned *order = malloc((x->ncaches ? x->ncaches : 1) * sizeof *order);
    if (!order) {
        sl_strbuf_free(&out);
        fprintf(stderr, "slablab replay: no memory\n");
        return 1;
    }
    for (unsigned i = 0; i < x->ncaches; i++) {
        unsigned j = i;
        for (; j > 0 && x->caches[order[j - 1]].events < x->caches[i].events; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (unsigned oi = 0; oi < x->ncaches; oi++) {
        check_cache *k = &x->caches[order[oi]];
        if (!k->c)
            continue;
        sl_check_result res;
        char err[256] = "";
        if (sl_check_compare(k->c, x->snap[1], &w, &res, err, sizeof err) != SL_OK) {
            snprintf(k->why, sizeof k->why, "%s", err);
            continue;
        }
        sl_strbuf_printf(&out, "%s{\"events\": %llu, \"result\": ", shown ? ", " : "", (unsigned long long)k->events);
        sl_check_result_json(&res, &out);
        sl_strbuf_printf(&out, "}");
        shown++;
        if (fmt == SL_FMT_JSON)
            continue;
        char slabs[32], objs[32];
        snprintf(slabs, sizeof slabs, "%u/%u %.0f%%", res.slabs_agreeing, res.slabs_compared,
                 pct(res.slabs_agreeing, res.slabs_compared));
        snprintf(objs, sizeof objs, "%.1f%% of %llu", pct(res.objects_agreeing, res.objects_compared),
                 (unsigned long long)res.objects_compared);
        printf("%-22.22s %8llu %15s %6.1f %6.1f %17s %7llu %6.1f", k->name, (unsigned long long)k->events, slabs,
               pct(res.slabs_list_agreeing, res.slabs_compared), pct(res.slabs_inuse_agreeing, res.slabs_compared),
               objs, (unsigned long long)res.allocs, pct(res.hits, res.allocs));
        for (unsigned p = 0; p < SL_CHECK_NR_PATHS; p++) {
            if (res.path_allocs[p])
                printf(" %6.1f", pct(res.path_hits[p], res.path_allocs[p]));
            else
                printf(" %6s", "-");
        }
        printf("\n");
        bool any = false;
        for (unsigned c = 0; c < SL_CHECK_NR_CAUSES; c++)
            if (res.causes[c] || res.slab_causes[c]) {
                printf("%s%s %llu objects, %llu slabs", any ? "; " : "    disagreeing: ", sl_check_cause_name(c),
                       (unsigned long long)res.causes[c], (unsigned long long)res.slab_causes[c]);
                any = true;
            }
        if (any)
            printf("\n");
        uint64_t fm = 0, aa = 0;
        for (unsigned c = 0; c < SL_CHECK_NR_CAUSES; c++)
            fm += res.free_misses[c], aa += res.alloc_of_allocated[c];
        if (fm || aa || res.corrections_failed || res.model_errors || res.events_outside)
            printf("    events: %llu frees of objects the model held free, %llu allocations of objects it held "
                   "allocated, %llu corrections failed, %llu model errors, %llu outside the geometry\n",
                   (unsigned long long)fm, (unsigned long long)aa, (unsigned long long)res.corrections_failed,
                   (unsigned long long)res.model_errors, (unsigned long long)res.events_outside);
        if (res.notes[0])
            printf("    notes: %s\n", res.notes);
    }
    free(order);
    sl_strbuf_printf(&out, "], \"not_checked\": [");
    unsigned nn = 0;
    for (unsigned i = 0; i < x->ncaches; i++) {
        check_cache *k = &x->caches[i];
        if (!k->why[0])
            continue;
        sl_strbuf_printf(&out, "%s{\"cache\": ", nn++ ? ", " : "");
        sl_strbuf_json_string(&out, k->name, strlen(k->name));
        sl_strbuf_printf(&out, ", \"why\": ");
        sl_strbuf_json_string(&out, k->why, strlen(k->why));
        sl_strbuf_printf(&out, "}");
        if (fmt != SL_FMT_JSON)
            printf("not checked: %s: %s\n", k->name, k->why);
    }
    sl_strbuf_printf(&out, "]}\n");
    if (x->only && !shown) {
        fprintf(stderr, "slablab replay: --check: %s\n", nn ? x->caches[0].why : "no event of this cache in the trace");
        status = 1;
    }
    if (fmt == SL_FMT_JSON && !status)
        fputs(out.failed ? "{}\n" : out.data, stdout);
    else if (fmt != SL_FMT_JSON && !status)
        printf("(%u caches checked; kfree of objects allocated before the trace: %llu placed by their slab, %llu when "
               "their slab's cache first touched it, %llu not)\n",
               shown, (unsigned long long)x->unknown_frees_placed, (unsigned long long)x->unknown_frees_placed_later,
               (unsigned long long)x->unknown_frees_unplaced);
    sl_strbuf_free(&out);
    return status;
}

static bool snapshot_has(const sl_check_snapshot *snap, const char *name)
{
    for (unsigned i = 0; i < sl_check_snapshot_cache_count(snap); i++)
        if (!strcmp(sl_check_snapshot_cache_name(snap, i), name))
            return true;
    return false;
}

static int run_check(const char *file, const char *cache, sl_cli_format fmt, unsigned long zone_mb)
{
    char why[512];
    FILE *in = sl_cli_open_input(file, why, sizeof why);
    if (!in) {
        fprintf(stderr, "slablab replay: %s\n", why);
        return 1;
    }
    check_ctx *x = calloc(1, sizeof *x);
    if (!x) {
        sl_cli_close_input(in);
        fprintf(stderr, "slablab replay: no memory\n");
        return 1;
    }
    x->only = cache;
    /* The replay parses and pairs; its own models are not needed here (a cache name no cache has). */
    sl_replay_config cfg = {
        .cache = "\x01 --check", .zone_bytes = zone_mb << 20, .on_op = check_op, .on_member = check_member, .user = x};
    int rc = sl_replay_create(&cfg, &x->r);
    if (rc != SL_OK) {
        fprintf(stderr, "slablab replay: %s\n", sl_strerror(rc));
        sl_cli_close_input(in);
        free(x);
        return 1;
    }
    static uint8_t buf[1 << 20];
    size_t n;
    while (rc == SL_OK && (n = fread(buf, 1, sizeof buf, in)) > 0)
        rc = sl_replay_feed(x->r, buf, n, NULL);
    int read_errno = ferror(in) ? errno : 0;
    sl_cli_close_input(in);
    if (rc == SL_OK && !read_errno)
        rc = sl_replay_finish(x->r);
    int status = 1;
    const char *err = sl_replay_error(x->r);
    if (read_errno)
        fprintf(stderr, "slablab replay: reading %s failed: %s\n", file, strerror(read_errno));
    else if (err)
        fprintf(stderr, "slablab replay: %s: %s\n", file, err);
    else if (!x->snap[0] || !x->snap[1])
        fprintf(
            stderr, "slablab replay: --check: %s has %s: %s\n", file,
            x->snap_err[0][0] || x->snap_err[1][0] ? "a snapshot that cannot be read" : "no snapshots",
            x->snap_err[0][0] ? x->snap_err[0]
            : x->snap_err[1][0]
                ? x->snap_err[1]
                : "record it with `sudo slablab capture`, which takes one before and one after the trace where it can "
                  "(BPF, Linux 6.13+)");
    else if (cache && !snapshot_has(x->snap[0], cache))
        fprintf(stderr, "slablab replay: --check: no cache named '%s' in %s's snapshots\n", cache, file);
    else
        status = print_check(x, file, fmt);
    for (unsigned i = 0; i < x->ncaches; i++)
        sl_check_destroy(x->caches[i].c);
    free(x->caches);
    free(x->pending);
    free(x->head);
    sl_check_snapshot_free(x->snap[0]);
    sl_check_snapshot_free(x->snap[1]);
    sl_strbuf_free(&x->member[0]);
    sl_strbuf_free(&x->member[1]);
    sl_replay_destroy(x->r);
    free(x);
    return status;
}

static int run_replay(int argc, char **argv)
{
    const char *file = NULL, *perfetto = NULL, *kernel = NULL, *cache = NULL;
    sl_cli_format fmt = SL_FMT_TABLE;
    unsigned long cpus = 0, zone_mb = 0, unit = 0, top = 25;
    bool validate_each = false, check = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--cache") && has_value) {
            cache = argv[++i];
        } else if (!strcmp(a, "--kernel") && has_value) {
            kernel = argv[++i];
            sl_kernel_version v[SL_REPLAY_MAX_KERNELS];
            char err[200];
            if (sl_kernel_versions_parse(kernel, v, err, sizeof err) < 0)
                return sl_cli_usage_error(&sl_cli_cmd_replay, "%s", err);
        } else if (!strcmp(a, "--format") && has_value) {
            if (!sl_cli_parse_format(argv[++i], &fmt) || fmt == SL_FMT_CSV)
                return sl_cli_usage_error(&sl_cli_cmd_replay, "--format takes table or json");
        } else if (!strcmp(a, "--perfetto") && has_value) {
            perfetto = argv[++i];
        } else if (!strcmp(a, "--cpus") && has_value) {
            if (!sl_cli_parse_ulong(argv[++i], 1, 4096, &cpus))
                return sl_cli_usage_error(&sl_cli_cmd_replay, "--cpus takes 1 to 4096");
        } else if (!strcmp(a, "--zone-mb") && has_value) {
            if (!sl_cli_parse_ulong(argv[++i], 4, 65536, &zone_mb))
                return sl_cli_usage_error(&sl_cli_cmd_replay, "--zone-mb takes 4 to 65536");
        } else if (!strcmp(a, "--pcpu-unit-size") && has_value) {
            if (!sl_cli_parse_ulong(argv[++i], 4096, 1ul << 28, &unit) || unit % 4096)
                return sl_cli_usage_error(&sl_cli_cmd_replay,
                                          "--pcpu-unit-size takes a multiple of 4096 up to 256 MiB");
        } else if (!strcmp(a, "--top") && has_value) {
            if (!sl_cli_parse_ulong(argv[++i], 0, 1000000, &top))
                return sl_cli_usage_error(&sl_cli_cmd_replay, "--top takes a number (0 = all)");
        } else if (!strcmp(a, "--validate-each")) {
            validate_each = true;
        } else if (!strcmp(a, "--check")) {
            check = true;
        } else if (a[0] == '-' && a[1] == '-') {
            return sl_cli_usage_error(&sl_cli_cmd_replay, "%s: unknown option, or it needs a value", a);
        } else if (!file) {
            file = a;
        } else {
            return sl_cli_usage_error(&sl_cli_cmd_replay, "one input file only ('%s' is a second)", a);
        }
    }
    if (!file)
        return sl_cli_usage_error(&sl_cli_cmd_replay, "give the trace file (or - for standard input)");
    if (check && (perfetto || kernel))
        return sl_cli_usage_error(&sl_cli_cmd_replay, "--check takes neither --perfetto nor --kernel (the snapshot "
                                                      "names its kernel)");
    if (check)
        return run_check(file, cache, fmt, zone_mb);
    char why[512];
    FILE *in = sl_cli_open_input(file, why, sizeof why);
    if (!in) {
        fprintf(stderr, "slablab replay: %s\n", why);
        return 1;
    }
    export_ctx x = {0};
    sl_replay_config cfg = {.kernel = kernel,
                            .cache = cache,
                            .cpus = (unsigned)cpus,
                            .zone_bytes = zone_mb << 20,
                            .pcpu_unit_size = unit,
                            .validate_each = validate_each};
    /* The Perfetto file is written beside its target and renamed only once the replay succeeded (outfile.h). */
    sl_outfile pf_out = {0};
    if (perfetto) {
        if (sl_outfile_open(&pf_out, perfetto, file, why, sizeof why) != 0) {
            fprintf(stderr, "slablab replay: --perfetto: %s\n", why);
            sl_cli_close_input(in);
            return 1;
        }
        x.out = pf_out.f;
        cfg.on_op = on_op;
        cfg.user = &x;
    }
    int rc = sl_replay_create(&cfg, &x.r);
    if (rc != SL_OK) {
        fprintf(stderr, "slablab replay: %s\n", sl_strerror(rc));
        if (perfetto)
            sl_outfile_abort(&pf_out);
        sl_cli_close_input(in);
        return 1;
    }
    if (perfetto) {
        sl_perfetto_config pc = {
            .sink = write_file, .user = &x, .cache_name = cache_name, .names_user = &x, .counter_interval_ns = 100000};
        x.pf = sl_perfetto_begin(&pc);
    }
    static uint8_t buf[1 << 20];
    size_t n;
    rc = SL_OK;
    while (rc == SL_OK && (n = fread(buf, 1, sizeof buf, in)) > 0)
        rc = sl_replay_feed(x.r, buf, n, NULL);
    int read_errno = ferror(in) ? errno : 0;
    sl_cli_close_input(in);
    if (rc == SL_OK && !read_errno)
        rc = sl_replay_finish(x.r);
    int status = 0;
    if (x.pf && sl_perfetto_end(x.pf) != SL_OK) {
        fprintf(stderr, "slablab replay: writing %s failed\n", perfetto);
        status = 1;
    }
    /* A failed replay leaves no complete-looking Perfetto file: the temporary goes, an old file stays. */
    if (perfetto && (status || rc != SL_OK || read_errno || sl_replay_error(x.r))) {
        sl_outfile_abort(&pf_out);
        if (!status)
            fprintf(stderr, "slablab replay: %s not written: the replay failed\n", perfetto);
        status = 1;
    } else if (perfetto && sl_outfile_commit(&pf_out, why, sizeof why) != 0) {
        fprintf(stderr, "slablab replay: --perfetto: %s\n", why);
        status = 1;
    }
    if (read_errno) {
        fprintf(stderr, "slablab replay: reading %s failed: %s\n", file, strerror(read_errno));
        sl_replay_destroy(x.r);
        return 1;
    }
    long peak_kb = peak_rss_kb();
    char extra[64];
    snprintf(extra, sizeof extra, "\"peak_rss_kb\": %ld", peak_kb);
    sl_strbuf json = {0};
    sl_replay_json(x.r, &json, extra);
    const char *err = sl_replay_error(x.r);
    if (err) {
        fprintf(stderr, "slablab replay: %s: %s\n", file, err);
        status = 1;
    }
    if (fmt == SL_FMT_JSON) {
        fputs(json.data ? json.data : "{}\n", stdout);
    } else if (!err) {
        print_table(x.r, file, (unsigned)top);
        sl_replay_progress p;
        sl_replay_progress_get(x.r, &p);
        printf("%.3f s, %.0f events/s (%.0f per CPU-second), peak RSS %ld KiB\n", p.elapsed_s, p.events_per_s,
               p.events_per_cpu_s, peak_kb);
        if (perfetto)
            printf("Perfetto trace: %s (open it at https://ui.perfetto.dev)\n", perfetto);
    }
    sl_strbuf_free(&json);
    sl_replay_destroy(x.r);
    return status;
}
