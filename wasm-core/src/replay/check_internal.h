/*
 * check_internal.h - what check.c and check_snapshot.c share: the parsed
 * snapshot (a token array over its JSON) and one cache read from it.
 */
#ifndef SL_CHECK_INTERNAL_H
#define SL_CHECK_INTERNAL_H

#include "check.h"

typedef struct sli_tok {
    uint8_t type;
    uint32_t start, end; /* bytes of the value (a string's without its quotes) */
    uint32_t size;       /* children: an object's keys and values, an array's elements */
    uint32_t next;       /* the token after this value's subtree */
} sli_tok;

struct sl_check_snapshot {
    char *json;
    size_t len;
    sli_tok *tok;
    uint32_t ntok;
    char release[128];
    uint32_t nr_cpus, page_size;
    uint32_t caches; /* the caches[] token */
    uint32_t ncaches;
    uint32_t *cache_tok;
    char (*names)[64];
};

/* Where a listed slab is. */
enum { SLI_CHECK_CPU_SLAB = 0, SLI_CHECK_CPU_PARTIAL = 1, SLI_CHECK_NODE_PARTIAL = 2 };

typedef struct sli_check_slab {
    uint64_t base;
    uint8_t list, cpu, torn;
    uint32_t objects, inuse;
    uint32_t nfree, free_at;         /* the slab's freelist: idx[free_at ..] */
    uint32_t ncpu_free, cpu_free_at; /* a CPU slab's CPU freelist */
    uint32_t bad;                    /* addresses that are no object of the slab (left out) */
} sli_check_slab;

typedef struct sli_check_sheaf {
    uint8_t place, cpu; /* SL_SLUB_SEED_MAIN .. _BARN_FULL */
    uint32_t size, at;  /* sheaf_objs[at .. at + size) */
} sli_check_sheaf;

typedef struct sli_check_cache {
    char name[64];
    uint32_t object_size, size, inuse_bytes, red_left_pad, order, objects, sheaf_capacity;
    uint32_t min_partial, cpu_partial; /* the sysfs tunables as the kernel had them */
    bool has_tunables;
    uint32_t cpus_seen, nnodes, nr_slabs, left_out;
    uint32_t no_base, odd; /* listed slabs without a first byte; with other counts than the cache's */
    sli_check_slab *slabs; /* CPU slab and CPU partial slabs per CPU, then node partial slabs */
    size_t nslabs, cap_slabs;
    uint32_t *idx;
    size_t nidx, cap_idx;
    sli_check_sheaf *sheaves;
    size_t nsheaves, cap_sheaves;
    uint64_t *sheaf_objs;
    size_t nsheaf_objs, cap_sheaf_objs;
} sli_check_cache;

/* Reads cache `name` of s into c (freed with sli_check_cache_free).  SL_OK, SL_EINVAL or SL_ENOMEM with err. */
int sli_check_cache_read(const sl_check_snapshot *s, const char *name, sli_check_cache *c, char *err, size_t errlen);
void sli_check_cache_free(sli_check_cache *c);
/* The snapshot kernel's version (kversion.c's reading of its release); false if it has none. */
bool sli_check_version(const sl_check_snapshot *s, sl_slub_kversion *v);

#endif /* SL_CHECK_INTERNAL_H */
