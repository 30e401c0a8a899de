/*
 * cmd_geometry.c - `slablab geometry`: the SLUB model's cache geometry
 * (slab_size, order, objs_per_slab, min_partial, cpu_partial,
 * sheaf_capacity) for every cache of a /sys/kernel/slab-like directory or a
 * /proc/slabinfo file, beside the kernel's own figures where the source has
 * them, under the rules of a kernel version (--kernel X.Y, default 6.17;
 * eras.h lists what changes) and optionally the boot parameters
 * slub_min_order, slub_max_order and slub_min_objects (--min-order,
 * --max-order, --min-objects).  Before 5.11 the kernel sized slabs by its
 * possible CPUs (nr_cpu_ids), from 5.11 by its present ones: --cpus is that
 * count.
 */
#include "cli.h"
#include "input.h"

#include "../src/slub/slub.h"

#include <stdlib.h>
#include <string.h>

/*
 * The file is a regular file whose first line is /proc/slabinfo's version 2
 * header (the columns read are version 2's; a version 1 file or any other
 * text would be read as garbage without a word).  0, or -1 with err.
 */
static int check_slabinfo(const char *path, char *err, size_t errlen)
{
    FILE *f = sl_cli_open_input(path, err, errlen);
    if (!f)
        return -1;
    if (f == stdin) {
        snprintf(err, errlen, "--slabinfo needs a file, not standard input");
        return -1;
    }
    char head[64] = {0};
    bool ok = fgets(head, sizeof head, f) && !strncmp(head, "slabinfo - version: 2.", 22);
    sl_cli_close_input(f);
    if (!ok)
        snprintf(err, errlen,
                 "%s does not start with \"slabinfo - version: 2.x\": not a /proc/slabinfo of a kernel "
                 "since 2.6 (only version 2 is read)",
                 path);
    return ok ? 0 : -1;
}

static int run_geometry(int argc, char **argv);
SL_CLI_COMMAND(geometry, .name = "geometry",
               .summary = "compute SLUB cache geometry as a Linux version does and compare it with a kernel's",
               .usage = "slablab geometry (--sysfs DIR | --slabinfo FILE) [--cpus N (default: present CPUs)]\n"
                        "                 [--kernel X.Y (4.3-7.3; newer: 7.3's rules, with a notice; default 6.17)] "
                        "[--min-order N] [--max-order N]\n"
                        "                 [--min-objects N] [--format table|json]",
               .run = run_geometry)

static const char *const fields[SL_SLUB_NR_KFIGS] = {"slab_size",   "order",       "objs_per_slab",
                                                     "min_partial", "cpu_partial", "sheaf_capacity"};

static void print_json(const sl_slub_kcache *v, int n, unsigned cpus, const sl_slub_kernel *kern)
{
    char notice[160];
    bool newer = sl_slub_kversion_notice(kern->version, notice, sizeof notice);
    printf("[");
    for (int i = 0; i < n; i++) {
        sl_slub_geometry g;
        uint32_t model[SL_SLUB_NR_KFIGS];
        int m = sl_slub_kcache_compare(&v[i], cpus, kern, &g, model);
        printf("%s\n  {\"name\": ", i ? "," : "");
        sl_cli_json_string(stdout, v[i].name);
        if (newer) { /* never a silent mapping: every element says whose rules it got */
            printf(", \"notice\": ");
            sl_cli_json_string(stdout, notice);
        }
        if (m < 0) {
            printf(", \"model\": null, \"kernel\": null, \"match\": null}");
            continue;
        }
        printf(", \"model\": {");
        for (unsigned f = 0; f < SL_SLUB_NR_KFIGS; f++)
            printf("%s\"%s\": %u", f ? ", " : "", fields[f], model[f]);
        printf("}, \"kernel\": ");
        if (m == 2) {
            printf("null, \"match\": null}");
            continue;
        }
        printf("{");
        for (unsigned f = 0; f < SL_SLUB_NR_KFIGS; f++) {
            printf("%s\"%s\": ", f ? ", " : "", fields[f]);
            if (v[i].has[f])
                printf("%u", v[i].kernel[f]);
            else
                printf("null");
        }
        printf("}, \"match\": %s}", m == 1 ? "true" : "false");
    }
    printf("\n]\n");
}

static void print_table(const sl_slub_kcache *v, int n, unsigned cpus, const sl_slub_kernel *kern, const char *source)
{
    const sl_slub_boot *boot = &kern->boot;
    sl_slub_rules r;
    char ver[16];
    sl_slub_rules_for(kern->version, &r);
    char notice[160];
    printf("SLUB geometry (Linux %s rules) for %u CPUs, kernel figures from %s\n",
           sl_slub_kversion_format(r.follows, ver, sizeof ver), cpus, source);
    if (sl_slub_kversion_notice(r.version, notice, sizeof notice))
        printf("notice: %s\n", notice);
    if (boot->min_order || boot->max_order_set || boot->min_objects) {
        printf("boot parameters: slub_min_order=%u", boot->min_order);
        if (boot->max_order_set)
            printf(" slub_max_order=%u", boot->max_order);
        printf(" slub_min_objects=%u\n", boot->min_objects);
    }
    printf("%-28s %7s | %6s %5s %5s %4s %5s %5s | %6s %5s %5s %4s %5s %5s | %s\n", "cache", "objsize", "size", "order",
           "objs", "minp", "cpup", "sheaf", "k.size", "order", "objs", "minp", "cpup", "sheaf", "match");
    static const int width[SL_SLUB_NR_KFIGS] = {6, 5, 5, 4, 5, 5};
    int matched = 0, compared = 0;
    for (int i = 0; i < n; i++) {
        sl_slub_geometry g;
        uint32_t model[SL_SLUB_NR_KFIGS];
        int m = sl_slub_kcache_compare(&v[i], cpus, kern, &g, model);
        if (m < 0) {
            printf("%-28s %7u | (the model refuses this size: %s)\n", v[i].name, v[i].object_size, sl_strerror(m));
            continue;
        }
        printf("%-28s %7u |", v[i].name, v[i].object_size);
        for (unsigned f = 0; f < SL_SLUB_NR_KFIGS; f++)
            printf(" %*u", width[f], model[f]);
        printf(" |");
        for (unsigned f = 0; f < SL_SLUB_NR_KFIGS; f++) {
            if (v[i].has[f])
                printf(" %*u", width[f], v[i].kernel[f]);
            else
                printf(" %*s", width[f], "-");
        }
        printf(" | %s\n", m == 1 ? "yes" : m == 0 ? "NO" : "-");
        if (m != 2) {
            compared++;
            matched += m == 1;
        }
    }
    printf("%d caches, %d compared with the kernel: %d match, %d differ\n", n, compared, matched, compared - matched);
}

static int run_geometry(int argc, char **argv)
{
    const char *sysfs = NULL, *slabinfo = NULL;
    unsigned long cpus = 0, value;
    sl_slub_kernel kern = {0};
    sl_slub_boot *boot = &kern.boot;
    sl_cli_format fmt = SL_FMT_TABLE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: %s\n", sl_cli_cmd_geometry.usage);
            return 0;
        } else if (!strcmp(argv[i], "--sysfs") && i + 1 < argc) {
            sysfs = argv[++i];
        } else if (!strcmp(argv[i], "--slabinfo") && i + 1 < argc) {
            slabinfo = argv[++i];
        } else if (!strcmp(argv[i], "--cpus") && i + 1 < argc) {
            if (!sl_cli_parse_ulong(argv[++i], 1, 8192, &cpus))
                return sl_cli_usage_error(&sl_cli_cmd_geometry, "--cpus takes 1 to 8192");
        } else if (!strcmp(argv[i], "--min-order") && i + 1 < argc) {
            if (!sl_cli_parse_ulong(argv[++i], 0, SL_PAGE_MAX_ORDER, &value))
                return sl_cli_usage_error(&sl_cli_cmd_geometry, "--min-order takes 0 to %d", SL_PAGE_MAX_ORDER);
            boot->min_order = (uint8_t)value;
        } else if (!strcmp(argv[i], "--max-order") && i + 1 < argc) {
            /* the kernel clamps slub_max_order to MAX_PAGE_ORDER; so does the model */
            if (!sl_cli_parse_ulong(argv[++i], 0, 255, &value))
                return sl_cli_usage_error(&sl_cli_cmd_geometry, "--max-order takes 0 to 255");
            boot->max_order = (uint8_t)value;
            boot->max_order_set = 1;
        } else if (!strcmp(argv[i], "--min-objects") && i + 1 < argc) {
            if (!sl_cli_parse_ulong(argv[++i], 0, 32767, &value))
                return sl_cli_usage_error(&sl_cli_cmd_geometry, "--min-objects takes 0 to 32767");
            boot->min_objects = (uint32_t)value;
        } else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
            const char *why;
            if (sl_slub_kversion_parse(argv[++i], &kern.version, &why) != SL_OK)
                return sl_cli_usage_error(&sl_cli_cmd_geometry, "--kernel: %s", why);
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            if (!sl_cli_parse_format(argv[++i], &fmt) || fmt == SL_FMT_CSV)
                return sl_cli_usage_error(&sl_cli_cmd_geometry, "--format takes table or json");
        } else if (i + 1 == argc && (!strcmp(argv[i], "--sysfs") || !strcmp(argv[i], "--slabinfo") ||
                                     !strcmp(argv[i], "--cpus") || !strcmp(argv[i], "--format") ||
                                     !strcmp(argv[i], "--min-order") || !strcmp(argv[i], "--max-order") ||
                                     !strcmp(argv[i], "--min-objects") || !strcmp(argv[i], "--kernel"))) {
            return sl_cli_usage_error(&sl_cli_cmd_geometry, "%s needs a value", argv[i]);
        } else {
            return sl_cli_usage_error(&sl_cli_cmd_geometry, "unknown argument '%s'", argv[i]);
        }
    }
    if (!sysfs == !slabinfo)
        return sl_cli_usage_error(&sl_cli_cmd_geometry, "give exactly one of --sysfs DIR and --slabinfo FILE");
    if (!cpus)
        cpus = sl_host_cpus();
    char err[512];
    /* No FIFO or device in the tree or as the file (a reader would block or spin on it), the right header. */
    if (sysfs ? sl_cli_check_tree(sysfs, err, sizeof err) : check_slabinfo(slabinfo, err, sizeof err)) {
        fprintf(stderr, "slablab geometry: %s\n", err);
        return 1;
    }
    sl_slub_kcache *v;
    int n = sysfs ? sl_slub_sysfs_read(sysfs, &v) : sl_slub_slabinfo_read(slabinfo, &v);
    if (n == SL_EINVAL)
        return sl_cli_usage_error(&sl_cli_cmd_geometry, "cannot open %s (no such %s, or not readable)",
                                  sysfs ? sysfs : slabinfo, sysfs ? "directory" : "file");
    if (n < 0) {
        fprintf(stderr, "slablab geometry: %s\n", sl_strerror(n));
        return 1;
    }
    if (n == 0) {
        fprintf(stderr, "slablab geometry: no caches found in %s\n", sysfs ? sysfs : slabinfo);
        free(v);
        return 1;
    }
    if (fmt == SL_FMT_JSON)
        print_json(v, n, (unsigned)cpus, &kern);
    else
        print_table(v, n, (unsigned)cpus, &kern, sysfs ? sysfs : slabinfo);
    free(v);
    return 0;
}
