/*
 * snapshot_records.h - the records the snapshot program (slab_snapshot.bpf.c)
 * sends to `slablab snapshot` through its ring buffer; shared by both sides,
 * so the layout cannot drift.  Every record starts with snap_hdr and is a
 * multiple of 8 bytes.
 *
 * Order, per cache: CACHE; then per CPU: WORDS* CPU (the CPU freelist's
 * stored words, closed by the CPU record), and for each of the CPU slab and
 * the CPU partial slabs WORDS* SLAB, and for each sheaf WORDS* SHEAF; then
 * per node: for each partial slab WORDS* SLAB, for each barn sheaf WORDS*
 * SHEAF, then NODE; last END.  WORDS records carry the raw words read and
 * belong to the next CPU, SLAB or SHEAF record.  A CPU or SLAB record with
 * SNAP_F_RETRY was torn and is read again: the reader drops it with its words.
 *
 * A freelist is sent as the stored (encoded) free pointers, in chain order:
 * the reader decodes them (snapshot_model.c), starting from the unencoded
 * head in the CPU or SLAB record.
 */
#ifndef SNAPSHOT_RECORDS_H
#define SNAPSHOT_RECORDS_H

#ifndef __bpf__
#include <stdint.h>
typedef uint32_t snap_u32;
typedef uint64_t snap_u64;
#else
typedef __u32 snap_u32;
typedef __u64 snap_u64;
#endif

#define SNAP_NAME_LEN 64
#define SNAP_WORDS_MAX 256   /* words per WORDS record */
#define SNAP_MAX_CPUS 1024   /* the program's CPU table */
#define SNAP_MAX_NODES 64    /* nodes read per cache */
#define SNAP_MAX_CHAIN 32768 /* free pointers followed per chain (slab->objects is 15 bits) */
#define SNAP_MAX_SHEAF 4096  /* objects read per sheaf */
#define SNAP_MAX_BARN 64     /* sheaves read per barn list (the kernel keeps at most 10) */
#define SNAP_RETRIES 3       /* reads of a CPU or slab before it is reported torn */

enum snap_rec_type {
    SNAP_REC_CACHE = 1,
    SNAP_REC_CPU = 2,
    SNAP_REC_SLAB = 3,
    SNAP_REC_WORDS = 4,
    SNAP_REC_SHEAF = 5,
    SNAP_REC_NODE = 6,
    SNAP_REC_END = 7,
};

/* snap_cache.features: what this kernel has, from CO-RE field checks. */
enum snap_feature {
    SNAP_FEAT_CPU_SLAB = 1u << 0,    /* s->cpu_slab (6.13-6.18) */
    SNAP_FEAT_SHEAVES = 1u << 1,     /* s->cpu_sheaves (6.18+) */
    SNAP_FEAT_BARN_NODE = 1u << 2,   /* n->barn (6.18, 7.0) */
    SNAP_FEAT_PER_NODE = 1u << 3,    /* s->per_node[] (7.1+) */
    SNAP_FEAT_HARDENED = 1u << 4,    /* s->random (SLAB_FREELIST_HARDENED) */
    SNAP_FEAT_CPU_PARTIAL = 1u << 5, /* s->cpu_partial, slab->next (SLUB_CPU_PARTIAL) */
};

/* Record flags. */
enum snap_flag {
    SNAP_F_TORN = 1u << 0,  /* still inconsistent after SNAP_RETRIES reads */
    SNAP_F_RETRY = 1u << 1, /* torn, read again: drop this record and its words */
    SNAP_F_FAULT = 1u << 2, /* a read of the record's own fields failed */
};

/* How a chain walk (freelist, list) ended. */
enum snap_end {
    SNAP_END_NULL = 0,    /* reached NULL (freelist) or the list head (list) */
    SNAP_END_BOUND = 1,   /* stopped at the bound (objects of the slab, --max-slabs, ...) */
    SNAP_END_OUTSIDE = 2, /* a pointer left the slab's aligned block: not followed */
    SNAP_END_FAULT = 3,   /* a read failed */
};

/* Where a SLAB or SHEAF record was found; owner is the CPU or the node. */
enum snap_where {
    SNAP_AT_CPU_SLAB = 1,
    SNAP_AT_CPU_PARTIAL = 2,
    SNAP_AT_NODE_PARTIAL = 3,
    SNAP_AT_SHEAF_MAIN = 4,
    SNAP_AT_SHEAF_SPARE = 5,
    SNAP_AT_SHEAF_RCU = 6,
    SNAP_AT_BARN_FULL = 7,
    SNAP_AT_BARN_EMPTY = 8,
};

struct snap_hdr {
    snap_u32 type;
    snap_u32 size; /* bytes, header included */
};

struct snap_cache {
    struct snap_hdr hdr;
    snap_u64 addr;
    snap_u64 min_partial;
    snap_u64 random;
    snap_u32 flags, object_size, size, offset;
    snap_u32 align, inuse, red_left_pad, refcount;
    snap_u32 cpu_partial, cpu_partial_slabs, sheaf_capacity, oo;
    snap_u32 min, features, page_struct_size, pad;
    char name[SNAP_NAME_LEN];
};

struct snap_cpu {
    struct snap_hdr hdr;
    snap_u32 cpu, flags;
    snap_u32 attempts, end; /* reads made; how the freelist walk ended */
    snap_u64 tid, tid_again;
    snap_u64 freelist, freelist_again;
    snap_u64 slab, partial;
    snap_u64 sheaves; /* this CPU's struct slub_percpu_sheaves, 0 without sheaves */
};

struct snap_slab {
    struct snap_hdr hdr;
    snap_u32 where, owner;
    snap_u32 index, flags;
    snap_u32 attempts, end;
    snap_u64 addr, cache;
    snap_u64 freelist, freelist_again;
    snap_u64 counters, counters_again;
};

struct snap_words {
    struct snap_hdr hdr;
    snap_u32 n, pad;
    snap_u64 w[SNAP_WORDS_MAX];
};

struct snap_sheaf {
    struct snap_hdr hdr;
    snap_u32 where, owner;
    snap_u32 size, node;
    snap_u32 flags, pad;
    snap_u64 addr, cache;
};

struct snap_node {
    struct snap_hdr hdr;
    snap_u32 node, flags;
    snap_u64 addr, barn;
    snap_u64 nr_partial, nr_partial_again;
    snap_u64 nr_slabs, total_objects;
    snap_u32 nr_full, nr_empty;
    snap_u32 listed, list_end; /* partial slabs sent; how the list walk ended */
};

struct snap_end_rec {
    struct snap_hdr hdr;
    snap_u64 addr;
    snap_u32 dropped, pad; /* ring buffer outputs that failed for this cache */
};

#endif /* SNAPSHOT_RECORDS_H */
