/*
 * bench_slub.c - opens and closes the SLUB model caches the experiments
 * time, on prefaulted zones (see bench_slub.h).
 */
#include "bench_slub.h"

#include <string.h>

int sl_bench_slub_open(sl_bench_slub *b, unsigned ncpus, uint32_t size, uint32_t flags, sl_slub_kversion kernel,
                       uint16_t sheaf_capacity, sl_slub_fastpath fp, sl_slub_bulk_free bf, unsigned zone_mb)
{
    return sl_bench_slub_open_nodes(b, ncpus, 1, size, flags, kernel, sheaf_capacity, fp, bf, zone_mb);
}

int sl_bench_slub_open_nodes(sl_bench_slub *b, unsigned ncpus, unsigned nodes, uint32_t size, uint32_t flags,
                             sl_slub_kversion kernel, uint16_t sheaf_capacity, sl_slub_fastpath fp,
                             sl_slub_bulk_free bf, unsigned zone_mb)
{
    memset(b, 0, sizeof *b);
    int rc = sl_page_zone_init(&b->zone, (size_t)zone_mb << 20, NULL);
    if (rc != SL_OK)
        return rc;
    sl_page_zone_prefault(&b->zone);
    sl_slub_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.object_size = size;
    cfg.flags = flags;
    cfg.fastpath = (uint8_t)fp;
    cfg.bulk_free = (uint8_t)bf;
    cfg.seed = 1;
    cfg.kernel.version = kernel;
    cfg.sheaf_capacity = sheaf_capacity;
    cfg.nr_nodes = (uint8_t)nodes;
    for (unsigned c = 0; c < ncpus && c < SL_SLUB_MAX_CPUS; c++)
        cfg.cpu_node[c] = (uint8_t)(c * nodes / ncpus);
    rc = sl_slub_cache_create(&b->zone, NULL, ncpus, &cfg, &b->cache);
    if (rc != SL_OK)
        sl_page_zone_destroy(&b->zone);
    return rc;
}

void sl_bench_slub_close(sl_bench_slub *b)
{
    if (b->cache)
        (void)sl_slub_cache_destroy(b->cache);
    sl_page_zone_destroy(&b->zone);
    b->cache = NULL;
}

/* The rules of kernel ({0, 0}: the default's). */
static sl_slub_rules rules_of(sl_slub_kversion kernel)
{
    sl_slub_rules r;
    sl_slub_rules_for(kernel.major ? kernel : SL_SLUB_KVERSION_DEFAULT, &r);
    return r;
}

bool sl_bench_slub_has_fastpath(sl_slub_kversion kernel, sl_slub_fastpath fp)
{
    return rules_of(kernel).cpu_slab || fp == SL_SLUB_FP_CMPXCHG;
}

const char *sl_bench_slub_fastpath_name(sl_slub_kversion kernel, sl_slub_fastpath fp)
{
    if (!rules_of(kernel).cpu_slab && fp == SL_SLUB_FP_CMPXCHG)
        return "sheaves";
    switch (fp) {
    case SL_SLUB_FP_CMPXCHG:
        return "cmpxchg";
    case SL_SLUB_FP_LOCKED:
        return "locked";
    case SL_SLUB_FP_PLAIN:
        return "plain";
    case SL_SLUB_FP_RT:
        return "rt";
    }
    return "?";
}
