/*
 * cmd_slab_types.c - `slablab slab-types`: the SLAB management type, order,
 * objects and waste per slab of each cache in a list, under the rules
 * before and/or after OBJFREELIST_SLAB (commit b03a017bebc4), the
 * array-cache tunables, the totals in seed 002's form TOTAL = OBJFREELIST +
 * NORMAL(leftover) + NORMAL + OFF, and, for a SLAB kernel's /proc/slabinfo,
 * that kernel's own figures beside the model's.  The computation and the
 * JSON are the core's (src/slab/types.c), shared with the browser.
 */
#include "cli.h"
#include "input.h"

#include "../src/slab/slab.h"

#include <stdlib.h>
#include <string.h>

static int run_slab_types(int argc, char **argv);
SL_CLI_COMMAND(slab_types, .name = "slab-types",
               .summary = "SLAB management types of a list of caches, before and after OBJFREELIST_SLAB",
               .usage =
                   "slablab slab-types [--sysfs DIR | --caches FILE | --slabinfo FILE] [--rules before|after|both]\n"
                   "                   [--kernel X.Y (4.10 .. 6.7, default 6.7)] [--init-on-free]\n"
                   "                   [--cpus N (default: present CPUs)] [--format table|csv|json]\n"
                   "  without --sysfs, --caches or --slabinfo: the kernel's kmalloc caches",
               .run = run_slab_types)

static const char *const rules_names[2] = {"before", "after"};
static void print_table(const sl_slab_spec_list *l, const sl_slab_types *t, const bool want[2])
{
    char kernel[16];
    sl_slab_kernel_name(t->kernel, kernel, sizeof kernel);
    printf("SLAB %s%s, %u CPUs%s\n", kernel, t->init_on_free ? " with init_on_free" : "", t->ncpus,
           l->reported ? "; k. = what the kernel's slabinfo says" : "");
    printf("%-28s %8s", "cache", "objsize");
    for (unsigned r = 0; r < 2; r++)
        if (want[r])
            printf(" | %-16s %5s %4s %6s", r ? "after: type" : "before: type", "order", "objs", "waste");
    printf(" | %5s %5s %6s", "limit", "batch", "shared");
    if (l->reported)
        printf(" | %7s %6s %7s %7s %8s | %s", "k.order", "k.objs", "k.limit", "k.batch", "k.shared", "match");
    printf("\n");
    for (unsigned i = 0; i < l->n; i++) {
        printf("%-28s %8u", l->v[i].name, l->v[i].object_size);
        for (unsigned r = 0; r < 2; r++) {
            if (!want[r])
                continue;
            const sl_slab_geometry *g = &t->g[r][i];
            printf(" | %-16s %5u %4u %6u", sl_slab_mgmt_name(g->mgmt), g->order, g->num, g->waste);
        }
        printf(" | %5u %5u %6u", t->tun[i].limit, t->tun[i].batchcount, t->tun[i].shared);
        if (l->reported) {
            const sl_slab_reported *k = &l->reported[i];
            printf(" | %7u %6u %7u %7u %8u | %s", k->order, k->num, k->limit, k->batchcount, k->shared,
                   t->match[i] ? "yes" : "NO");
        }
        printf("\n");
    }
    printf("\nTOTAL = OBJFREELIST + NORMAL(leftover) + NORMAL + OFF\n");
    for (unsigned r = 0; r < 2; r++)
        if (want[r])
            printf("/%s/ %u = %u + %u + %u + %u\n", r ? "After" : "Before", l->n, t->totals[r][0], t->totals[r][1],
                   t->totals[r][2], t->totals[r][3]);
    if (l->reported) {
        printf("%u caches compared with the kernel (order, objects per slab, limit, batchcount, shared): "
               "%u match, %u differ\n",
               t->compared, t->matched, t->compared - t->matched);
        unsigned by_name = 0;
        for (unsigned i = 0; i < l->n; i++)
            by_name += sl_slab_known_flags(l->v[i].name) != 0;
        if (by_name) {
            printf("creation flags known by name (slabinfo does not show them; the kernel's kmem_cache_create calls "
                   "do):");
            for (unsigned i = 0; i < l->n; i++)
                if (sl_slab_known_flags(l->v[i].name))
                    printf(" %s", l->v[i].name);
            printf("\n");
        }
    }
}

static void print_csv(const sl_slab_spec_list *l, const sl_slab_types *t, const bool want[2])
{
    printf("cache,object_size,rules,type,order,objs_per_slab,size,align,left,freelist_size,off_cache_size,"
           "colour,waste,limit,batchcount,shared\n");
    for (unsigned i = 0; i < l->n; i++)
        for (unsigned r = 0; r < 2; r++) {
            if (!want[r])
                continue;
            const sl_slab_geometry *g = &t->g[r][i];
            printf("%s,%u,%s,%s,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u\n", l->v[i].name, l->v[i].object_size,
                   rules_names[r], sl_slab_mgmt_name(g->mgmt), g->order, g->num, g->size, g->align, g->left,
                   g->freelist_size, g->off_cache_size, g->colour, g->waste, t->tun[i].limit, t->tun[i].batchcount,
                   t->tun[i].shared);
        }
}

/* Reads the list of caches from the chosen source; the kmalloc caches of the kernel without one. */
static int read_list(const char *sysfs, const char *caches, const char *slabinfo, const sl_slab_variant *v,
                     sl_slab_spec_list *list, char *err, size_t errlen)
{
    if (sysfs)
        return sl_cli_check_tree(sysfs, err, errlen) == 0 ? sl_slab_caches_read_sysfs(sysfs, list, err, errlen)
                                                          : SL_EINVAL;
    if (caches || slabinfo) {
        const char *path = caches ? caches : slabinfo;
        char *text;
        size_t len;
        /* A cache list or a slabinfo of a few thousand caches is kilobytes: 64 MiB is far past any real one. */
        if (sl_cli_read_input(path, 64u << 20, &text, &len, err, errlen) != 0)
            return SL_EINVAL;
        int rc = caches ? sl_slab_caches_parse(text, len, list, err, errlen)
                        : sl_slab_slabinfo_parse(text, len, list, err, errlen);
        free(text);
        return rc;
    }
    sl_slab_kmalloc_table kt;
    int rc = sl_slab_kmalloc_table_init(&kt, v);
    for (unsigned i = 0; i < kt.nkmalloc && rc == SL_OK; i++) {
        sl_slab_spec s = sl_slab_kmalloc_spec(&kt, i);
        rc = sl_slab_spec_list_add(list, &s, NULL);
    }
    return rc;
}

static int run_slab_types(int argc, char **argv)
{
    const sl_cli_command *me = &sl_cli_cmd_slab_types;
    const char *sysfs = NULL, *caches = NULL, *slabinfo = NULL;
    bool want[2] = {true, true};
    sl_slab_variant variant = {.kernel = SL_SLAB_KERNEL_LAST};
    unsigned long cpus = 0;
    sl_cli_format fmt = SL_FMT_TABLE;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "--init-on-free")) {
            variant.init_on_free = true;
            continue;
        }
        if (!strcmp(arg, "--sysfs") || !strcmp(arg, "--caches") || !strcmp(arg, "--slabinfo") ||
            !strcmp(arg, "--rules") || !strcmp(arg, "--format") || !strcmp(arg, "--kernel") || !strcmp(arg, "--cpus")) {
            if (!val)
                return sl_cli_usage_error(me, "%s needs a value", arg);
            i++;
        } else {
            return sl_cli_usage_error(me, "unknown argument '%s'", arg);
        }
        if (!strcmp(arg, "--sysfs")) {
            sysfs = val;
        } else if (!strcmp(arg, "--caches")) {
            caches = val;
        } else if (!strcmp(arg, "--slabinfo")) {
            slabinfo = val;
        } else if (!strcmp(arg, "--rules")) {
            if (!strcmp(val, "before") || !strcmp(val, "after") || !strcmp(val, "both")) {
                want[0] = strcmp(val, "after") != 0;
                want[1] = strcmp(val, "before") != 0;
            } else {
                return sl_cli_usage_error(me, "--rules takes before, after or both, not '%s'", val);
            }
        } else if (!strcmp(arg, "--format")) {
            if (!sl_cli_parse_format(val, &fmt))
                return sl_cli_usage_error(me, "--format takes table, csv or json, not '%s'", val);
        } else if (!strcmp(arg, "--kernel")) {
            if (sl_slab_kernel_parse(val, &variant.kernel) != SL_OK)
                return sl_cli_usage_error(me, "--kernel takes a version from 4.10 to 6.7 such as 5.4, not '%s'", val);
        } else if (!sl_cli_parse_ulong(val, 1, 8192, &cpus)) {
            return sl_cli_usage_error(me, "--cpus takes 1 to 8192, not '%s'", val);
        }
    }
    if ((sysfs != NULL) + (caches != NULL) + (slabinfo != NULL) > 1)
        return sl_cli_usage_error(me, "give at most one of --sysfs, --caches and --slabinfo");
    if (variant.init_on_free && variant.kernel < SL_SLAB_KERNEL_INIT_ON_FREE)
        return sl_cli_usage_error(me, "--init-on-free needs --kernel 5.3 or later (init_on_free came with 5.3)");
    if (!cpus)
        cpus = sl_host_cpus();

    const char *source = sysfs ? sysfs : caches ? caches : slabinfo ? slabinfo : "kmalloc";
    sl_slab_spec_list list = {0};
    sl_slab_types t = {0};
    char err[256] = "";
    int rc = read_list(sysfs, caches, slabinfo, &variant, &list, err, sizeof err);
    if (rc == SL_OK)
        rc = sl_slab_types_compute(&list, &variant, (unsigned)cpus, &t, err, sizeof err);
    if (rc != SL_OK) {
        fprintf(stderr, "slablab slab-types: %s: %s\n", source, err[0] ? err : sl_strerror(rc));
        sl_slab_spec_list_free(&list);
        return 1;
    }
    if (fmt == SL_FMT_JSON) {
        char *json = sl_slab_types_json(&list, &t, source, (want[0] ? 1u : 0u) | (want[1] ? 2u : 0u));
        if (json)
            fputs(json, stdout);
        else
            fprintf(stderr, "slablab slab-types: %s\n", sl_strerror(SL_ENOMEM));
        rc = json ? SL_OK : SL_ENOMEM;
        free(json);
    } else if (fmt == SL_FMT_CSV) {
        print_csv(&list, &t, want);
    } else {
        print_table(&list, &t, want);
    }
    sl_slab_types_free(&t);
    sl_slab_spec_list_free(&list);
    return rc == SL_OK ? 0 : 1;
}
