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

static bool read_u32(const char *dir, const char *name, const char *attr, uint32_t *out)
{
    char buf[256], *end;
    if (!read_attr(dir, name, attr, buf, sizeof buf))
        return false;
    unsigned long v = strtoul(buf, &end, 10);
    if (end == buf || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool flag_set(const char *dir, const char *name, const char *attr)
{
    uint32_t v;
    return read_u32(dir, name, attr, &v) && v != 0;
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

int sl_slub_sysfs_read(const char *dir, sl_slub_kcache **out)
{
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
        memset(&k, 0, sizeof k);
        strcpy(k.name, e->d_name);
        if (!read_u32(dir, k.name, "object_size", &k.object_size))
            continue; /* not a cache folder */
        if (!read_u32(dir, k.name, "align", &k.align))
            k.align = 8;
        char buf[256];
        if (flag_set(dir, k.name, "hwcache_align"))
            k.flags |= SL_SLUB_HWCACHE_ALIGN;
        if (read_attr(dir, k.name, "ctor", buf, sizeof buf) && buf[0])
            k.flags |= SL_SLUB_CTOR;
        if (flag_set(dir, k.name, "destroy_by_rcu"))
            k.flags |= SL_SLUB_TYPESAFE_BY_RCU;
        if (flag_set(dir, k.name, "poison"))
            k.flags |= SL_SLUB_POISON;
        if (flag_set(dir, k.name, "red_zone"))
            k.flags |= SL_SLUB_RED_ZONE;
        if (flag_set(dir, k.name, "store_user"))
            k.flags |= SL_SLUB_STORE_USER;
        if (flag_set(dir, k.name, "sanity_checks"))
            k.flags |= SL_SLUB_CONSISTENCY_CHECKS;
        if (flag_set(dir, k.name, "reclaim_account"))
            k.flags |= SL_SLUB_RECLAIM_ACCOUNT;
        if (flag_set(dir, k.name, "cache_dma"))
            k.flags |= SL_SLUB_CACHE_DMA;
        if (!strncmp(k.name, "kmalloc-", 8))
            k.flags |= SL_SLUB_KMALLOC;
        k.sheaf_request = sl_slub_sheaf_request(k.name);
        static const char *const kattr[SL_SLUB_NR_KFIGS] = {"slab_size",   "order",       "objs_per_slab",
                                                            "min_partial", "cpu_partial", "sheaf_capacity"};
        for (unsigned i = 0; i < SL_SLUB_NR_KFIGS; i++)
            k.has[i] = read_u32(dir, k.name, kattr[i], &k.kernel[i]);
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

int sl_slub_kcache_compare(const sl_slub_kcache *k, unsigned nr_cpus, const sl_slub_kernel *kern,
                           sl_slub_geometry *g, uint32_t model[SL_SLUB_NR_KFIGS])
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
