/*
 * cmd_snapshot.c - `slablab snapshot`: the running kernel's slab caches as
 * they are now (Linux 6.13+, root, BPF), as JSON (docs/snapshot.md) or a
 * one-line-per-cache table.  The reading is snapshot_read.c, the decoding
 * snapshot_decode.c, the JSON snapshot_json.c.
 *
 * Exit status: 0; 2 for a bad argument; 3 (SL_SNAP_UNAVAILABLE) when this
 * machine cannot be read (the message names what is missing); 1 otherwise.
 */
#include "cli.h"
#include "outfile.h"
#include "snapshot.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int run_snapshot(int argc, char **argv);

SL_CLI_COMMAND(snapshot, .name = "snapshot",
               .summary = "the running kernel's slab caches now, read with BPF (Linux 6.13+, root)",
               .usage = "slablab snapshot [-o FILE] [--cache NAME[,NAME...]]... [--max-slabs N] [--objects]\n"
                        "                        [--format json|table]\n"
                        "  -o FILE        write to FILE (default: standard output)\n"
                        "  --cache NAME   only these caches (repeatable, or comma-separated)\n"
                        "  --max-slabs N  read at most N partial slabs per list (default 10000; 1..1000000)\n"
                        "  --objects      class every object of each listed slab (free, cpu, sheaf, allocated)\n"
                        "  --format F     json (default, docs/snapshot.md) or table (one line per cache)",
               .run = run_snapshot)

#define DEFAULT_MAX_SLABS 10000
#define MAX_NAMES 256

static void write_table(const sl_snapshot *snap, FILE *f)
{
    fprintf(f, "# Linux %s, %u CPUs, %u nodes; %zu caches in %.1f ms\n", snap->release, snap->nr_cpus, snap->nr_nodes,
            snap->ncaches, snap->duration_ns / 1e6);
    fprintf(f, "%-28s %6s %5s %8s %8s %7s %8s %8s %7s %s\n", "cache", "size", "objs", "slabs", "partial", "listed",
            "free", "cpufree", "sheaf", "torn");
    for (size_t i = 0; i < snap->ncaches; i++) {
        const sl_snap_cache *c = &snap->caches[i];
        uint64_t slabs = 0, partial = 0, free_listed = 0, cpu_free = 0, sheaf = 0;
        unsigned torn = 0;
        for (size_t n = 0; n < c->nnodes; n++) {
            slabs += c->nodes[n].rec.nr_slabs;
            partial += c->nodes[n].rec.nr_partial;
            torn += (c->nodes[n].rec.flags & SNAP_F_TORN) != 0;
        }
        for (size_t s = 0; s < c->nslabs; s++) {
            free_listed += c->slabs[s].fl.objects.n;
            torn += (c->slabs[s].rec.flags & SNAP_F_TORN) != 0;
        }
        for (unsigned k = 0; k < snap->nr_cpus; k++) {
            cpu_free += c->cpus[k].fl.objects.n;
            torn += (c->cpus[k].rec.flags & SNAP_F_TORN) != 0;
        }
        for (size_t s = 0; s < c->nsheaves; s++)
            sheaf += c->sheaves[s].objects.n;
        fprintf(f, "%-28s %6u %5u %8" PRIu64 " %8" PRIu64 " %7zu %8" PRIu64 " %8" PRIu64 " %7" PRIu64 " %u\n",
                c->rec.name, c->rec.size, sl_snap_oo_objects(c->rec.oo), slabs, partial, c->nslabs, free_listed,
                cpu_free, sheaf, torn);
    }
}

static int run_snapshot(int argc, char **argv)
{
    const sl_cli_command *cmd = &sl_cli_cmd_snapshot;
    const char *out = "-";
    const char *names[MAX_NAMES];
    size_t nnames = 0;
    char *name_buf[MAX_NAMES];
    size_t nbufs = 0;
    sl_snap_options opt = {.max_slabs = DEFAULT_MAX_SLABS};
    bool table = false;
    int rc = SL_CLI_USAGE;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) {
                sl_cli_usage_error(cmd, "%s needs a file name", a);
                goto done;
            }
            out = argv[i];
        } else if (!strcmp(a, "--cache")) {
            if (++i >= argc || !*argv[i]) {
                sl_cli_usage_error(cmd, "--cache needs a cache name");
                goto done;
            }
            char *copy = strdup(argv[i]);
            if (!copy || nbufs == MAX_NAMES) {
                free(copy);
                sl_cli_usage_error(cmd, "too many --cache options (at most %d)", MAX_NAMES);
                goto done;
            }
            name_buf[nbufs++] = copy;
            for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (strlen(tok) >= SNAP_NAME_LEN) {
                    sl_cli_usage_error(cmd, "cache name '%s' is longer than %d characters", tok, SNAP_NAME_LEN - 1);
                    goto done;
                }
                if (nnames == MAX_NAMES) {
                    sl_cli_usage_error(cmd, "too many cache names (at most %d)", MAX_NAMES);
                    goto done;
                }
                names[nnames++] = tok;
            }
        } else if (!strcmp(a, "--max-slabs")) {
            unsigned long v;
            if (++i >= argc || !sl_cli_parse_ulong(argv[i], 1, 1000000, &v)) {
                sl_cli_usage_error(cmd, "--max-slabs needs a whole number from 1 to 1000000 (got '%s')",
                                   i < argc ? argv[i] : "nothing");
                goto done;
            }
            opt.max_slabs = (unsigned)v;
        } else if (!strcmp(a, "--objects")) {
            opt.objects = true;
        } else if (!strcmp(a, "--format")) {
            if (++i >= argc || (strcmp(argv[i], "json") && strcmp(argv[i], "table"))) {
                sl_cli_usage_error(cmd, "--format takes json or table (got '%s')", i < argc ? argv[i] : "nothing");
                goto done;
            }
            table = !strcmp(argv[i], "table");
        } else {
            sl_cli_usage_error(cmd, "unknown argument '%s'", a);
            goto done;
        }
    }
    if (nbufs && nnames == 0) {
        sl_cli_usage_error(cmd, "--cache needs a cache name");
        goto done;
    }
    if (nnames) {
        opt.names = names;
        opt.nnames = nnames;
    }

    char err[1024];
    sl_outfile of;
    if (sl_outfile_open(&of, out, NULL, err, sizeof err)) {
        fprintf(stderr, "slablab snapshot: %s\n", err);
        rc = 1;
        goto done;
    }
    sl_snapshot snap;
    memset(&snap, 0, sizeof snap);
    rc = sl_snapshot_take(&snap, &opt, err, sizeof err);
    if (rc) {
        fprintf(stderr, "slablab snapshot: %s\n", err);
        sl_outfile_abort(&of);
        sl_snapshot_free(&snap);
        goto done;
    }
    for (size_t i = 0; i < nnames; i++) {
        bool found = false;
        for (size_t c = 0; c < snap.ncaches && !found; c++)
            found = !strcmp(snap.caches[c].rec.name, names[i]);
        if (!found) {
            fprintf(stderr, "slablab snapshot: no cache named '%s' (slablab slabinfo /proc/slabinfo lists them)\n",
                    names[i]);
            rc = 1;
        }
    }
    if (rc) {
        sl_outfile_abort(&of);
        sl_snapshot_free(&snap);
        goto done;
    }
    sl_snapshot_decode(&snap);
    unsigned long dropped = 0, incomplete = 0;
    for (size_t c = 0; c < snap.ncaches; c++) {
        dropped += snap.caches[c].dropped;
        incomplete += !snap.caches[c].ended || snap.caches[c].dropped;
    }
    if (dropped || incomplete)
        fprintf(stderr,
                "slablab snapshot: note: the ring buffer overflowed: %lu records lost, %lu caches incomplete "
                "(each cache's torn.dropped_records says which); a smaller --max-slabs reads less per cache\n",
                dropped, incomplete);
    if (table)
        write_table(&snap, of.f);
    else if (sl_snapshot_write_json(&snap, of.f))
        rc = 1;
    if (rc == 0 && sl_outfile_commit(&of, err, sizeof err)) {
        fprintf(stderr, "slablab snapshot: %s\n", err);
        rc = 1;
    } else if (rc) {
        fprintf(stderr, "slablab snapshot: writing the output failed\n");
        sl_outfile_abort(&of);
    }
    sl_snapshot_free(&snap);
done:
    for (size_t i = 0; i < nbufs; i++)
        free(name_buf[i]);
    return rc;
}
