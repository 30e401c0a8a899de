/*
 * cmd_percpu.c - `slablab percpu`: the workloads of commit 40064aeca35c
 * (seed 003) on the area map, 2017 bitmap and 2019 scan-hint allocators.
 *
 * For every allocator x free order x object size it runs
 * sl_pcpu_run_workload() on a fresh instance and prints alloc and free
 * milliseconds, one table per allocator and order in the seed's form.  A
 * run that passes --budget stops and is printed as "over budget" with the
 * number of objects it had allocated or freed; nothing is cut silently.
 */
#include "cli.h"

#include "../src/percpu/percpu.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int run_percpu(int argc, char **argv);
SL_CLI_COMMAND(percpu, .name = "percpu",
               .summary = "seed 003: percpu area map vs bitmap vs scan-hint allocators, alloc/free times",
               .usage = "slablab percpu [--allocator areamap,bitmap,scanhint] [--sizes 4,16,64,256,1024]\n"
                        "         [--objects N (default 1048576)] [--free-order inorder,alternate,reverse]\n"
                        "         [--prefill none|second-half] [--align N (power of two, 4..4096; default 4)]\n"
                        "         [--units N (CPUs, default 2)] [--unit-size BYTES (pages, default 262144)]\n"
                        "         [--budget SECONDS (per run, 0 = none; default 0)] [--format table|csv|json]",
               .run = run_percpu)

#define MAX_LIST 8

static const char *pretty(sl_pcpu_kind k)
{
    switch (k) {
    case SL_PCPU_AREAMAP:
        return "Area Map Allocator";
    case SL_PCPU_BITMAP:
        return "Bitmap Allocator";
    case SL_PCPU_SCANHINT:
        return "Bitmap Allocator with scan hints (2019)";
    }
    return "?";
}

/* Splits a comma list into items parsed by `one`; returns the count, or 0 on a bad item. */
static unsigned parse_list(char *s, unsigned max, bool (*one)(const char *, void *), void *out, size_t elem)
{
    unsigned n = 0;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        if (n == max || !one(tok, (char *)out + n * elem))
            return 0;
        n++;
    }
    return n;
}
static bool one_kind(const char *s, void *out) { return sl_pcpu_parse_kind(s, out); }
static bool one_order(const char *s, void *out) { return sl_pcpu_parse_order(s, out); }
static bool one_size(const char *s, void *out)
{
    unsigned long v;
    if (!sl_cli_parse_ulong(s, 1, SL_PCPU_MAX_ALLOC_SIZE, &v))
        return false;
    *(size_t *)out = v;
    return true;
}

static void print_result(sl_cli_format fmt, const sl_pcpu_workload *w, const sl_pcpu_workload_result *r, bool first)
{
    double ams = (double)r->alloc_ns / 1e6, fms = (double)r->free_ns / 1e6;
    const char *state = r->alloc_failed ? "alloc_failed" : r->over_budget ? "over_budget" : "ok";
    const sl_pcpu_work *k = &r->work;
    if (fmt == SL_FMT_CSV) {
        printf("%s,%s,%s,%zu,%zu,%lu,%lu,%lu,%.3f,%.3f,%s,%u,%llu,%llu,%llu,%llu,%llu\n",
               sl_pcpu_kind_name(w->cfg.kind), sl_pcpu_order_name(w->order),
               w->prefill_second_half ? "second-half" : "none", w->align, w->size, w->objects, r->allocated, r->freed,
               ams, fms, state, r->chunks, (unsigned long long)k->entries_moved, (unsigned long long)k->memmoves,
               (unsigned long long)k->blocks, (unsigned long long)k->bits, (unsigned long long)k->chunks);
    } else if (fmt == SL_FMT_JSON) {
        printf("%s\n    {\"allocator\": ", first ? "" : ",");
        sl_cli_json_string(stdout, sl_pcpu_kind_name(w->cfg.kind));
        printf(", \"free_order\": ");
        sl_cli_json_string(stdout, sl_pcpu_order_name(w->order));
        printf(", \"prefill\": \"%s\", \"align\": %zu, \"size\": %zu, \"objects\": %lu, \"allocated\": %lu, "
               "\"freed\": %lu, \"alloc_ms\": %.3f, \"free_ms\": %.3f, \"status\": \"%s\", \"chunks\": %u, "
               "\"entries_moved\": %llu, \"memmoves\": %llu, \"blocks_scanned\": %llu, \"bits_searched\": %llu, "
               "\"chunks_tried\": %llu}",
               w->prefill_second_half ? "second-half" : "none", w->align, w->size, w->objects, r->allocated, r->freed,
               ams, fms, state, r->chunks, (unsigned long long)k->entries_moved, (unsigned long long)k->memmoves,
               (unsigned long long)k->blocks, (unsigned long long)k->bits, (unsigned long long)k->chunks);
    } else if (r->alloc_failed) {
        printf("%zuB | allocation failed after %lu of %lu objects | -\n", w->size, r->allocated, w->objects);
    } else if (r->over_budget && r->allocated < w->objects) {
        printf("%zuB | over budget (%.0f s): %lu of %lu allocated | not run\n", w->size, (double)w->budget_ns / 1e9,
               r->allocated, w->objects);
    } else if (r->over_budget) {
        printf("%zuB | %.0f | over budget (%.0f s): %lu of %lu freed\n", w->size, ams, (double)w->budget_ns / 1e9,
               r->freed, r->allocated);
    } else {
        printf("%zuB | %.0f | %.0f\n", w->size, ams, fms);
    }
    fflush(stdout);
}

static int run_percpu(int argc, char **argv)
{
    const sl_cli_command *cmd = &sl_cli_cmd_percpu;
    sl_pcpu_kind kinds[MAX_LIST] = {SL_PCPU_AREAMAP, SL_PCPU_BITMAP, SL_PCPU_SCANHINT};
    unsigned nkinds = 3;
    size_t sizes[MAX_LIST] = {4, 16, 64, 256, 1024};
    unsigned nsizes = 5;
    sl_pcpu_order orders[MAX_LIST] = {SL_PCPU_FREE_INORDER, SL_PCPU_FREE_ALTERNATE, SL_PCPU_FREE_REVERSE};
    unsigned norders = 3;
    unsigned long objects = 1048576, align = 4, units = 2, unit_size = SL_PCPU_DEFAULT_UNIT_SIZE, budget = 0;
    bool prefill = false;
    sl_cli_format fmt = SL_FMT_TABLE;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            printf("usage: %s\n", cmd->usage);
            return 0;
        }
        if (!v)
            return sl_cli_usage_error(cmd, "'%s' needs a value", a);
        i++;
        if (!strcmp(a, "--allocator")) {
            if (!(nkinds = parse_list(v, MAX_LIST, one_kind, kinds, sizeof kinds[0])))
                return sl_cli_usage_error(cmd, "--allocator takes a comma list of areamap, bitmap, scanhint");
        } else if (!strcmp(a, "--sizes")) {
            if (!(nsizes = parse_list(v, MAX_LIST, one_size, sizes, sizeof sizes[0])))
                return sl_cli_usage_error(cmd, "--sizes takes up to %d sizes of 1 to %d bytes", MAX_LIST,
                                          SL_PCPU_MAX_ALLOC_SIZE);
        } else if (!strcmp(a, "--free-order")) {
            if (!(norders = parse_list(v, MAX_LIST, one_order, orders, sizeof orders[0])))
                return sl_cli_usage_error(cmd, "--free-order takes a comma list of inorder, alternate, reverse");
        } else if (!strcmp(a, "--objects")) {
            if (!sl_cli_parse_ulong(v, 1, 1ul << 26, &objects))
                return sl_cli_usage_error(cmd, "--objects takes 1 to %lu", 1ul << 26);
        } else if (!strcmp(a, "--prefill")) {
            if (strcmp(v, "none") && strcmp(v, "second-half"))
                return sl_cli_usage_error(cmd, "--prefill takes none or second-half");
            prefill = !strcmp(v, "second-half");
        } else if (!strcmp(a, "--align")) {
            if (!sl_cli_parse_ulong(v, 4, SL_PAGE_SIZE, &align) || (align & (align - 1)))
                return sl_cli_usage_error(cmd, "--align takes a power of two from 4 to %zu", SL_PAGE_SIZE);
        } else if (!strcmp(a, "--units")) {
            if (!sl_cli_parse_ulong(v, 1, SL_PCPU_MAX_UNITS, &units))
                return sl_cli_usage_error(cmd, "--units takes 1 to %d", SL_PCPU_MAX_UNITS);
        } else if (!strcmp(a, "--unit-size")) {
            if (!sl_cli_parse_ulong(v, SL_PAGE_SIZE, 64ul << 20, &unit_size) || unit_size % SL_PAGE_SIZE)
                return sl_cli_usage_error(cmd, "--unit-size takes a multiple of %zu up to 64 MiB", SL_PAGE_SIZE);
        } else if (!strcmp(a, "--budget")) {
            if (!sl_cli_parse_ulong(v, 0, 86400, &budget))
                return sl_cli_usage_error(cmd, "--budget takes 0 to 86400 seconds");
        } else if (!strcmp(a, "--format")) {
            if (!sl_cli_parse_format(v, &fmt))
                return sl_cli_usage_error(cmd, "--format takes table, csv or json");
        } else {
            return sl_cli_usage_error(cmd, "unknown argument '%s'", a);
        }
    }
    if (units * unit_size > (1ul << 30))
        return sl_cli_usage_error(cmd, "--units x --unit-size must stay within 1 GiB per chunk");
    for (unsigned s = 0; s < nsizes; s++)
        if (sizes[s] > unit_size)
            return sl_cli_usage_error(cmd, "size %zu does not fit a %lu-byte unit", sizes[s], unit_size);
    /*
     * The largest run's memory: every object is backed in every unit (the
     * model keeps real copies), plus its pointer; a run past half of this
     * machine's memory would swap or be killed, so it is refused up front.
     */
    size_t largest = 0;
    for (unsigned s = 0; s < nsizes; s++)
        largest = sizes[s] > largest ? sizes[s] : largest;
    size_t slot = (largest + align - 1) & ~(size_t)(align - 1);
    unsigned long long need = (unsigned long long)objects * (slot * units + 2 * sizeof(void *)) + units * unit_size;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    unsigned long long phys = pages > 0 && page > 0 ? (unsigned long long)pages * (unsigned long long)page : 0;
    if (phys && need > phys / 2)
        return sl_cli_usage_error(cmd,
                                  "this run needs about %llu MiB (--objects x the largest size x --units), more than "
                                  "half of this machine's %llu MiB: use fewer --objects, smaller --sizes or fewer "
                                  "--units",
                                  need >> 20, phys >> 20);

    if (fmt == SL_FMT_CSV)
        printf("allocator,free_order,prefill,align,size,objects,allocated,freed,alloc_ms,free_ms,status,chunks,"
               "entries_moved,memmoves,blocks_scanned,bits_searched,chunks_tried\n");
    else if (fmt == SL_FMT_JSON)
        printf("{\"experiment\": \"percpu\", \"units\": %lu, \"unit_size\": %lu, \"budget_s\": %lu, \"runs\": [", units,
               unit_size, budget);
    else
        printf("percpu: %lu objects, align %lu, %lu units of %lu bytes, prefill %s, budget %s\n", objects, align, units,
               unit_size, prefill ? "second-half" : "none", budget ? "on" : "none");

    bool first = true;
    for (unsigned k = 0; k < nkinds; k++) {
        for (unsigned o = 0; o < norders; o++) {
            if (fmt == SL_FMT_TABLE)
                printf("\n%s (free order: %s):\nObject Size | Alloc Time (ms) | Free Time (ms)\n"
                       "----------------------------------------------\n",
                       pretty(kinds[k]), sl_pcpu_order_name(orders[o]));
            for (unsigned s = 0; s < nsizes; s++) {
                sl_pcpu_workload w = {
                    .cfg = {.kind = kinds[k], .nr_units = (unsigned)units, .unit_size = unit_size},
                    .size = sizes[s],
                    .align = align,
                    .objects = objects,
                    .order = orders[o],
                    .prefill_second_half = prefill,
                    .budget_ns = (uint64_t)budget * 1000000000ull,
                };
                sl_pcpu_workload_result r;
                int rc = sl_pcpu_run_workload(&w, &r);
                if (rc != SL_OK) {
                    fprintf(stderr, "slablab percpu: %s\n", sl_strerror(rc));
                    return 1;
                }
                print_result(fmt, &w, &r, first);
                first = false;
            }
        }
    }
    if (fmt == SL_FMT_JSON)
        printf("\n]}\n");
    return 0;
}
