/*
 * cmd_slab_types.c - `slablab slab-types`: the SLAB management type, order,
 * objects and waste per slab of each cache in a list, under the rules
 * before and/or after OBJFREELIST_SLAB (commit b03a017bebc4), and the totals
 * in seed 002's form TOTAL = OBJFREELIST + NORMAL(leftover) + NORMAL + OFF.
 */
#include "cli.h"

#include "../src/slab/slab.h"

#include <stdlib.h>
#include <string.h>

static int run_slab_types(int argc, char **argv);
SL_CLI_COMMAND(slab_types, .name = "slab-types",
               .summary = "SLAB management types of a list of caches, before and after OBJFREELIST_SLAB",
               .usage = "slablab slab-types [--sysfs DIR | --caches FILE] [--rules before|after|both] "
                        "[--format table|csv|json]\n"
                        "  without --sysfs or --caches: the kmalloc caches (32 B .. 4 MiB)",
               .run = run_slab_types)

static const char *const rules_names[2] = {"before", "after"};

static int read_file(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *bigger = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return -1;
    }
    *text = buf;
    *len = n;
    return 0;
}

static void print_geometry_json(const sl_slab_geometry *g)
{
    printf("{\"type\":\"%s\",\"order\":%u,\"objs_per_slab\":%u,\"size\":%u,\"align\":%u,\"left\":%u,"
           "\"freelist_size\":%u,\"off_cache_size\":%u,\"colour_off\":%u,\"colour\":%u,\"waste\":%u}",
           sl_slab_mgmt_name(g->mgmt), g->order, g->num, g->size, g->align, g->left, g->freelist_size,
           g->off_cache_size, g->colour_off, g->colour, g->waste);
}

static int run_slab_types(int argc, char **argv)
{
    const sl_cli_command *me = &sl_cli_cmd_slab_types;
    const char *sysfs = NULL, *caches = NULL;
    bool want[2] = {true, true};
    sl_cli_format fmt = SL_FMT_TABLE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: %s\n", me->usage);
            return 0;
        } else if (!strcmp(argv[i], "--sysfs") && i + 1 < argc) {
            sysfs = argv[++i];
        } else if (!strcmp(argv[i], "--caches") && i + 1 < argc) {
            caches = argv[++i];
        } else if (!strcmp(argv[i], "--rules") && i + 1 < argc) {
            const char *r = argv[++i];
            if (!strcmp(r, "before"))
                want[0] = true, want[1] = false;
            else if (!strcmp(r, "after"))
                want[0] = false, want[1] = true;
            else if (!strcmp(r, "both"))
                want[0] = want[1] = true;
            else
                return sl_cli_usage_error(me, "--rules takes before, after or both, not '%s'", r);
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            if (!sl_cli_parse_format(argv[++i], &fmt))
                return sl_cli_usage_error(me, "--format takes table, csv or json, not '%s'", argv[i]);
        } else {
            return sl_cli_usage_error(me, "unknown or incomplete argument '%s'", argv[i]);
        }
    }
    if (sysfs && caches)
        return sl_cli_usage_error(me, "give --sysfs or --caches, not both");

    sl_slab_spec_list list = {0};
    char err[256] = "";
    int rc = SL_OK;
    const char *source = "kmalloc";
    if (sysfs) {
        source = sysfs;
        rc = sl_slab_caches_read_sysfs(sysfs, &list, err, sizeof err);
    } else if (caches) {
        source = caches;
        char *text;
        size_t len;
        if (read_file(caches, &text, &len) != 0) {
            fprintf(stderr, "slablab slab-types: cannot read %s\n", caches);
            return 1;
        }
        rc = sl_slab_caches_parse(text, len, &list, err, sizeof err);
        free(text);
    } else {
        for (unsigned i = 0; i < SL_SLAB_NKMALLOC && rc == SL_OK; i++) {
            sl_slab_spec s = {.object_size = sl_slab_kmalloc_size(i), .flags = SL_SLAB_HWCACHE_ALIGN};
            sl_slab_kmalloc_name(i, s.name, sizeof s.name);
            rc = sl_slab_spec_list_add(&list, &s);
        }
    }
    if (rc != SL_OK) {
        fprintf(stderr, "slablab slab-types: %s: %s\n", source, err[0] ? err : sl_strerror(rc));
        sl_slab_spec_list_free(&list);
        return 1;
    }

    sl_slab_kmalloc_table kt[2];
    sl_slab_geometry *geo[2] = {NULL, NULL};
    unsigned totals[2][SL_SLAB_NMGMT] = {{0}};
    for (unsigned r = 0; r < 2; r++) {
        if (!want[r])
            continue;
        sl_slab_kmalloc_table_init(&kt[r], (sl_slab_rules)r);
        geo[r] = calloc(list.n ? list.n : 1, sizeof *geo[r]);
        if (!geo[r]) {
            fprintf(stderr, "slablab slab-types: %s\n", sl_strerror(SL_ENOMEM));
            rc = 1;
            goto out;
        }
        for (unsigned i = 0; i < list.n; i++) {
            int grc = sl_slab_geometry_compute(&list.v[i], &kt[r], &geo[r][i]);
            if (grc != SL_OK) {
                fprintf(stderr, "slablab slab-types: cache %s: %s\n", list.v[i].name, sl_strerror(grc));
                rc = 1;
                goto out;
            }
            totals[r][geo[r][i].mgmt]++;
        }
    }

    if (fmt == SL_FMT_CSV) {
        printf("cache,object_size,rules,type,order,objs_per_slab,size,align,left,freelist_size,off_cache_size,"
               "colour,waste\n");
        for (unsigned i = 0; i < list.n; i++)
            for (unsigned r = 0; r < 2; r++) {
                if (!want[r])
                    continue;
                const sl_slab_geometry *g = &geo[r][i];
                printf("%s,%u,%s,%s,%u,%u,%u,%u,%u,%u,%u,%u,%u\n", list.v[i].name, list.v[i].object_size,
                       rules_names[r], sl_slab_mgmt_name(g->mgmt), g->order, g->num, g->size, g->align, g->left,
                       g->freelist_size, g->off_cache_size, g->colour, g->waste);
            }
    } else if (fmt == SL_FMT_JSON) {
        printf("{\"source\":");
        sl_cli_json_string(stdout, source);
        printf(",\"caches\":[");
        for (unsigned i = 0; i < list.n; i++) {
            printf("%s\n{\"name\":", i ? "," : "");
            sl_cli_json_string(stdout, list.v[i].name);
            printf(",\"object_size\":%u,\"align\":%u,\"flags\":%u", list.v[i].object_size, list.v[i].align,
                   list.v[i].flags);
            for (unsigned r = 0; r < 2; r++) {
                if (!want[r])
                    continue;
                printf(",\"%s\":", rules_names[r]);
                print_geometry_json(&geo[r][i]);
            }
            printf("}");
        }
        printf("],\n\"totals\":{");
        bool first = true;
        for (unsigned r = 0; r < 2; r++) {
            if (!want[r])
                continue;
            printf("%s\"%s\":{\"total\":%u,\"objfreelist\":%u,\"normal_leftover\":%u,\"normal\":%u,\"off\":%u}",
                   first ? "" : ",", rules_names[r], list.n, totals[r][0], totals[r][1], totals[r][2],
                   totals[r][3]);
            first = false;
        }
        printf("}}\n");
    } else {
        printf("%-28s %8s", "cache", "objsize");
        for (unsigned r = 0; r < 2; r++)
            if (want[r])
                printf(" | %-16s %5s %4s %6s", r ? "after: type" : "before: type", "order", "objs", "waste");
        printf("\n");
        for (unsigned i = 0; i < list.n; i++) {
            printf("%-28s %8u", list.v[i].name, list.v[i].object_size);
            for (unsigned r = 0; r < 2; r++) {
                if (!want[r])
                    continue;
                const sl_slab_geometry *g = &geo[r][i];
                printf(" | %-16s %5u %4u %6u", sl_slab_mgmt_name(g->mgmt), g->order, g->num, g->waste);
            }
            printf("\n");
        }
        printf("\nTOTAL = OBJFREELIST + NORMAL(leftover) + NORMAL + OFF\n");
        for (unsigned r = 0; r < 2; r++)
            if (want[r])
                printf("/%s/ %u = %u + %u + %u + %u\n", r ? "After" : "Before", list.n, totals[r][0], totals[r][1],
                       totals[r][2], totals[r][3]);
    }
out:
    free(geo[0]);
    free(geo[1]);
    sl_slab_spec_list_free(&list);
    return rc;
}
