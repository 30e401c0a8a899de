/*
 * sysfs.c - reading a kernel's cache descriptions, so the model's geometry
 * can be checked against the kernel's own figures: a directory laid out like
 * /sys/kernel/slab (one folder per cache of attribute files; symlinked
 * aliases of merged caches skipped) or a /proc/slabinfo file.
 *
 * Inputs taken from sysfs: object_size, align (already calculate_alignment's
 * result, which it leaves unchanged), and the flag files hwcache_align, ctor
 * (non-empty = has one), destroy_by_rcu, poison, red_zone, store_user,
 * sanity_checks, reclaim_account, cache_dma.  A name starting "kmalloc-" is
 * taken as SLAB_KMALLOC.  Kernel figures: slab_size, order, objs_per_slab,
 * min_partial, cpu_partial, sheaf_capacity (6.18+), each optional.  The
 * sheaf_capacity a cache's creator asks for is not in sysfs: the reader
 * knows the callers that pass one (6.18's vm_area_struct and maple_node,
 * 32).  In /proc/slabinfo the objsize
 * column is s->size (the padded slot), so it is taken as the object size
 * with align 8 and no flags, and only order and objects per slab compare.
 */
#include "slub_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Reads the first line of dir/name/attr into buf; false if absent. */
static bool read_attr(const char *dir, const char *name, const char *attr, char *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, name, attr);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        buf[0] = 0;
    buf[strcspn(buf, "\n")] = 0;
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const sl_slub_kcache *)a)->name, ((const sl_slub_kcache *)b)->name);
}

/* Appends k to the growing array *v; on allocation failure frees it and returns false. */
static bool push_kcache(sl_slub_kcache **v, size_t *n, size_t *cap, const sl_slub_kcache *k)
{
    if (*n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 64;
        sl_slub_kcache *nv = realloc(*v, ncap * sizeof **v);
        if (!nv) {
            free(*v);
            *v = NULL;
            return false;
        }
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = *k;
    return true;
}

/* The kernel's figures, in the order of sl_slub_kcache.kernel[] (SL_SLUB_KFIG_*). */
static const char *const kernel_attr[SL_SLUB_NR_KFIGS] = {"slab_size",   "order",       "objs_per_slab",
                                                          "min_partial", "cpu_partial", "sheaf_capacity"};

static bool parse_u32(const char *s, uint32_t *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

bool sl_slub_kcache_attr(sl_slub_kcache *k, const char *attr, const char *value)
{
    static const struct {
        const char *attr;
        uint32_t flag;
    } flags[] = {
        {"hwcache_align", SL_SLUB_HWCACHE_ALIGN},
        {"destroy_by_rcu", SL_SLUB_TYPESAFE_BY_RCU},
        {"poison", SL_SLUB_POISON},
        {"red_zone", SL_SLUB_RED_ZONE},
        {"store_user", SL_SLUB_STORE_USER},
        {"sanity_checks", SL_SLUB_CONSISTENCY_CHECKS},
        {"reclaim_account", SL_SLUB_RECLAIM_ACCOUNT},
        {"cache_dma", SL_SLUB_CACHE_DMA},
    };
    uint32_t v;
    if (!strcmp(attr, "object_size"))
        return parse_u32(value, &k->object_size);
    if (!strcmp(attr, "align"))
        return parse_u32(value, &k->align);
    if (!strcmp(attr, "ctor")) {
        if (value[0] && value[0] != '\n')
            k->flags |= SL_SLUB_CTOR;
        return true;
    }
    for (unsigned i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (!strcmp(attr, flags[i].attr)) {
            if (parse_u32(value, &v) && v)
                k->flags |= flags[i].flag;
            return true;
        }
    }
    for (unsigned i = 0; i < SL_SLUB_NR_KFIGS; i++)
        if (!strcmp(attr, kernel_attr[i]))
            return k->has[i] = parse_u32(value, &k->kernel[i]);
    return false;
}

void sl_slub_kcache_init(sl_slub_kcache *k, const char *name)
{
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->align = 8;
    if (!strncmp(k->name, "kmalloc-", 8))
        k->flags |= SL_SLUB_KMALLOC;
    k->sheaf_request = sl_slub_sheaf_request(k->name);
    k->flags |= sl_slub_known_flags(k->name);
}

int sl_slub_sysfs_read(const char *dir, sl_slub_kcache **out)
{
    static const char *const attrs[] = {
        "object_size", "align",         "hwcache_align",   "ctor",      "destroy_by_rcu", "poison", "red_zone",
        "store_user",  "sanity_checks", "reclaim_account", "cache_dma", "slab_size",      "order",  "objs_per_slab",
        "min_partial", "cpu_partial",   "sheaf_capacity"};
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return SL_EINVAL;
    size_t n = 0, cap = 0;
    sl_slub_kcache *v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof v->name)
            continue;
        char path[4096];
        struct stat stbuf;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &stbuf) != 0 || S_ISLNK(stbuf.st_mode) || !S_ISDIR(stbuf.st_mode))
            continue;
        sl_slub_kcache k;
        sl_slub_kcache_init(&k, e->d_name);
        char buf[256];
        if (!read_attr(dir, k.name, "object_size", buf, sizeof buf) || !sl_slub_kcache_attr(&k, "object_size", buf))
            continue; /* not a cache folder */
        for (unsigned i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
            if (read_attr(dir, k.name, attrs[i], buf, sizeof buf))
                sl_slub_kcache_attr(&k, attrs[i], buf);
        if (!push_kcache(&v, &n, &cap, &k)) {
            closedir(d);
            return SL_ENOMEM;
        }
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof *v, by_name);
    *out = v;
    return (int)n;
}

int sl_slub_slabinfo_read(const char *file, sl_slub_kcache **out)
{
    *out = NULL;
    FILE *f = fopen(file, "r");
    if (!f)
        return SL_EINVAL;
    size_t n = 0, cap = 0;
    sl_slub_kcache *v = NULL;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char name[64];
        unsigned long active, num, objsize, perslab, pages;
        if (line[0] == '#' || !strncmp(line, "slabinfo", 8))
            continue;
        if (sscanf(line, "%63s %lu %lu %lu %lu %lu", name, &active, &num, &objsize, &perslab, &pages) != 6 ||
            objsize == 0 || objsize > UINT32_MAX || pages == 0 || (pages & (pages - 1)))
            continue;
        sl_slub_kcache k;
        memset(&k, 0, sizeof k);
        strcpy(k.name, name);
        k.object_size = (uint32_t)objsize;
        k.align = 8;
        k.sheaf_request = sl_slub_sheaf_request(k.name);
        k.flags = sl_slub_known_flags(k.name);
        k.kernel[1] = (uint32_t)__builtin_ctzl(pages);
        k.kernel[2] = (uint32_t)perslab;
        k.has[1] = k.has[2] = true;
        if (!push_kcache(&v, &n, &cap, &k)) {
            fclose(f);
            return SL_ENOMEM;
        }
    }
    fclose(f);
    *out = v;
    return (int)n;
}

uint32_t sl_slub_sheaf_request(const char *name)
{
    /* mm/vma_init.c and lib/maple_tree.c: .sheaf_capacity = 32 */
    return !strcmp(name, "vm_area_struct") || !strcmp(name, "maple_node") ? 32 : 0;
}

uint32_t sl_slub_known_flags(const char *name)
{
    static const char *const no_sheaves[] = {"kmem_cache", "kmem_cache_node", "kmemleak_object", "kmemleak_scan_area"};
    for (unsigned i = 0; i < sizeof no_sheaves / sizeof no_sheaves[0]; i++)
        if (!strcmp(name, no_sheaves[i]))
            return SL_SLUB_NO_SHEAVES;
    return 0;
}

int sl_slub_kcache_compare(const sl_slub_kcache *k, unsigned nr_cpus, const sl_slub_kernel *kern, sl_slub_geometry *g,
                           uint32_t model[SL_SLUB_NR_KFIGS])
{
    int rc = sl_slub_calculate_geometry(k->object_size, k->align, k->flags, nr_cpus, kern, g);
    if (rc != SL_OK)
        return rc;
    sl_slub_rules r;
    sli_slub_kernel_rules(kern, &r);
    model[SL_SLUB_KFIG_SLAB_SIZE] = g->size;
    model[SL_SLUB_KFIG_ORDER] = g->order;
    model[SL_SLUB_KFIG_OBJS_PER_SLAB] = g->objects;
    model[SL_SLUB_KFIG_MIN_PARTIAL] = g->min_partial;
    model[SL_SLUB_KFIG_CPU_PARTIAL] = g->cpu_partial;
    model[SL_SLUB_KFIG_SHEAF_CAPACITY] = sl_slub_sheaf_capacity(r.version, g->size, k->flags, k->sheaf_request);
    int compared = 0;
    for (unsigned i = 0; i < SL_SLUB_NR_KFIGS; i++) {
        /* A kernel with sheaf_capacity files is newer than a version without sheaves: nothing to compare. */
        if (!k->has[i] || (i == SL_SLUB_KFIG_SHEAF_CAPACITY && r.sheaves == SL_SLUB_SHEAVES_NONE))
            continue;
        compared++;
        if (k->kernel[i] != model[i])
            return 0;
    }
    return compared ? 1 : 2;
}

/* show_slab_objects: "total N0=a N1=b" (only nodes with a count, only with more than one node). */
char *sl_slub_format_per_node(const sl_slub_cache *s, const uint32_t *count, char *buf, size_t len)
{
    uint64_t total = 0;
    for (unsigned n = 0; n < s->nr_nodes; n++)
        total += count[n];
    size_t at = (size_t)snprintf(buf, len, "%llu", (unsigned long long)total);
    for (unsigned n = 0; n < s->nr_nodes && s->nr_nodes > 1 && at < len; n++)
        if (count[n])
            at += (size_t)snprintf(buf + at, len - at, " N%u=%u", n, count[n]);
    return buf;
}
