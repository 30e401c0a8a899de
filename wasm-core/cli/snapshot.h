/*
 * snapshot.h - `slablab snapshot`: the running kernel's SLUB state, read by
 * the BPF program in wasm-core/bpf/ (snapshot_read.c), decoded and checked
 * (snapshot_decode.c) and written as JSON (snapshot_json.c; the format is
 * docs/snapshot.md).
 *
 * The model keeps the program's records (bpf/snapshot_records.h) and adds
 * what user space works out: each freelist decoded from its stored words,
 * each listed slab's first byte, errors found on the way (a cycle, a pointer
 * outside its slab), and with --objects each object's class.
 */
#ifndef SL_SNAPSHOT_H
#define SL_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../bpf/snapshot_records.h"

#define SL_SNAP_FORMAT "slablab-snapshot/1"
#define SL_SNAP_ERR_LEN 96

/* Exit status of `slablab snapshot` when this machine cannot be read (no BPF, too old, ...). */
#define SL_SNAP_UNAVAILABLE 3

/* Object classes in sl_snap_slab.state (--objects). */
#define SL_SNAP_OBJ_ALLOCATED 'a'
#define SL_SNAP_OBJ_FREE 'f'     /* on the slab's own freelist */
#define SL_SNAP_OBJ_CPU 'c'      /* on a CPU freelist (the slab is that CPU's slab) */
#define SL_SNAP_OBJ_SHEAF 's'    /* in a CPU's or a barn's sheaf */
#define SL_SNAP_OBJ_CONFLICT '!' /* claimed by two of the above: the snapshot was torn there */

typedef struct sl_snap_words {
    uint64_t *w;
    size_t n, cap;
} sl_snap_words;

/* A freelist as read: the unencoded head, the stored words, and what decoding made of them. */
typedef struct sl_snap_freelist {
    uint64_t head;
    sl_snap_words stored;        /* encoded free pointers, chain order */
    sl_snap_words objects;       /* decoded free objects, head first */
    uint32_t end;                /* enum snap_end: how the program's walk ended */
    char error[SL_SNAP_ERR_LEN]; /* "" or what is wrong (cycle, outside the slab, ...) */
} sl_snap_freelist;

typedef struct sl_snap_slab {
    struct snap_slab rec;
    uint64_t base; /* first byte of the slab's memory; 0 when it could not be worked out */
    unsigned objects, inuse, frozen;
    sl_snap_freelist fl;
    char *state; /* --objects: one class character per object, NUL-terminated */
} sl_snap_slab;

typedef struct sl_snap_sheaf {
    struct snap_sheaf rec;
    sl_snap_words objects;
} sl_snap_sheaf;

typedef struct sl_snap_cpu {
    bool present;
    struct snap_cpu rec;
    sl_snap_freelist fl;
} sl_snap_cpu;

typedef struct sl_snap_node {
    struct snap_node rec;
} sl_snap_node;

typedef struct sl_snap_cache {
    struct snap_cache rec;
    sl_snap_cpu *cpus; /* nr_cpus entries */
    sl_snap_slab *slabs;
    size_t nslabs, cap_slabs;
    sl_snap_sheaf *sheaves;
    size_t nsheaves, cap_sheaves;
    sl_snap_node *nodes;
    size_t nnodes, cap_nodes;
    uint32_t dropped; /* ring buffer records lost */
    bool ended;       /* the END record arrived */
} sl_snap_cache;

typedef struct sl_snap_options {
    const char **names; /* --cache; NULL: every cache */
    size_t nnames;
    unsigned max_slabs;
    bool objects;
} sl_snap_options;

typedef struct sl_snapshot {
    char release[128], version[256], machine[64];
    unsigned nr_cpus, nr_nodes, page_size;
    uint32_t features;         /* enum snap_feature */
    uint32_t page_struct_size; /* sizeof(struct page) */
    /* The direct map: a slab's first byte = its struct slab address * ratio + offset. */
    uint64_t map_offset;
    unsigned map_ratio, map_samples, map_agreeing;
    char taken_at[32];
    uint64_t load_ns, percpu_ns, iterate_ns, duration_ns;
    /* The kmem_cache iterator program's run time and runs as the kernel counts them
       (kernel.bpf_stats_enabled=1); both 0 when the kernel does not count. */
    uint64_t prog_run_ns, prog_runs;
    uint64_t records, bytes;
    sl_snap_cache *caches;
    size_t ncaches, cap_caches;
    sl_snap_options opt;
    sl_snap_words pending; /* words sent since the last CPU, SLAB or SHEAF record */
} sl_snapshot;

/*
 * Takes a snapshot of the running kernel (Linux, root, BPF): fills snap.
 * Returns 0; SL_SNAP_UNAVAILABLE with err naming what this machine lacks
 * (and what still works); or 1 with err for any other failure.
 */
int sl_snapshot_take(sl_snapshot *snap, const sl_snap_options *opt, char *err, size_t errlen);

/* Appends a record from the program to snap (used by snapshot_read.c). Returns 0, or -1 when malformed. */
int sl_snapshot_add_record(sl_snapshot *snap, const void *data, size_t size);

/*
 * Works out what the records leave to user space: decodes every freelist,
 * finds the direct map's offset and each slab's first byte, checks that
 * each free object is an object of its slab and appears once, and with
 * opt.objects classes every object of every listed slab.
 */
void sl_snapshot_decode(sl_snapshot *snap);

/* Writes snap as JSON (docs/snapshot.md). Returns 0, or -1 when writing failed. */
int sl_snapshot_write_json(const sl_snapshot *snap, FILE *f);

/* Frees what snap holds (not snap itself). */
void sl_snapshot_free(sl_snapshot *snap);

/* The order and objects per slab packed in a kmem_cache_order_objects (OO_SHIFT 16). */
static inline unsigned sl_snap_oo_order(uint32_t oo) { return oo >> 16; }
static inline unsigned sl_snap_oo_objects(uint32_t oo) { return oo & 0xffff; }

#endif /* SL_SNAPSHOT_H */
