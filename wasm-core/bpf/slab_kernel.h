/*
 * slab_kernel.h - the few kernel types the snapshot program reads, declared
 * by hand for CO-RE instead of a vmlinux.h dumped from the build machine's
 * BTF: the build then needs no BTF and no particular kernel, and every field
 * access is relocated at load time against the running kernel's BTF
 * (preserve_access_index).  Only the fields read are declared; their order
 * and offsets here do not matter, their names and types do.
 *
 * Where kernels differ, a `___flavor` struct (libbpf ignores the suffix when
 * matching) names a field that only some kernels have, and the program asks
 * bpf_core_field_exists() before reading it:
 *   6.13-6.17  s->cpu_slab (struct kmem_cache_cpu), s->node[]
 *   6.18       s->cpu_slab and s->cpu_sheaves, n->barn (opt-in sheaves)
 *   7.0        s->cpu_sheaves only (no kmem_cache_cpu), n->barn
 *   7.1+       s->per_node[i].node and s->per_node[i].barn
 */
#ifndef SLAB_KERNEL_H
#define SLAB_KERNEL_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;

/* The map and program types the program uses (values from include/uapi/linux/bpf.h). */
enum bpf_map_type {
    BPF_MAP_TYPE_HASH = 1,
    BPF_MAP_TYPE_ARRAY = 2,
    BPF_MAP_TYPE_PERCPU_ARRAY = 6,
    BPF_MAP_TYPE_RINGBUF = 27,
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct list_head {
    struct list_head *next;
    struct list_head *prev;
};

struct page {
    unsigned long flags;
};

typedef struct {
    long counter;
} atomic_long_t;

struct kmem_cache_order_objects {
    unsigned int x;
};

struct kmem_cache_cpu {
    void **freelist;
    unsigned long tid;
    struct slab *slab;
    struct slab *partial;
};

struct slab_sheaf {
    struct list_head barn_list;
    struct kmem_cache *cache;
    unsigned int size;
    int node;
    void *objects[0];
};

struct slub_percpu_sheaves {
    struct slab_sheaf *main;
    struct slab_sheaf *spare;
    struct slab_sheaf *rcu_free;
};

struct node_barn {
    struct list_head sheaves_full;
    struct list_head sheaves_empty;
    unsigned int nr_full;
    unsigned int nr_empty;
};

struct kmem_cache_node {
    unsigned long nr_partial;
    struct list_head partial;
    atomic_long_t nr_slabs;
    atomic_long_t total_objects;
};

/* 6.18 and 7.0: the barn hangs off the node. */
struct kmem_cache_node___barn {
    struct node_barn *barn;
};

struct slab {
    struct kmem_cache *slab_cache;
    struct list_head slab_list;
    void *freelist;
    unsigned long counters;
    unsigned int inuse : 16;
    unsigned int objects : 15;
    unsigned int frozen : 1;
};

/* CONFIG_SLUB_CPU_PARTIAL: the per-CPU partial list is chained through slab->next. */
struct slab___cpu_partial {
    struct slab *next;
};

struct kmem_cache {
    unsigned int flags;
    unsigned long min_partial;
    unsigned int size;
    unsigned int object_size;
    unsigned int offset;
    struct kmem_cache_order_objects oo;
    struct kmem_cache_order_objects min;
    int refcount;
    unsigned int inuse;
    unsigned int align;
    unsigned int red_left_pad;
    const char *name;
    struct kmem_cache_node *node[1];
};

/* 6.13-6.18: the per-CPU slab. */
struct kmem_cache___cpu_slab {
    struct kmem_cache_cpu *cpu_slab;
};

/* CONFIG_SLUB_CPU_PARTIAL (gone in 7.0). */
struct kmem_cache___cpu_partial {
    unsigned int cpu_partial;
    unsigned int cpu_partial_slabs;
};

/* 6.18+: sheaves. */
struct kmem_cache___sheaves {
    struct slub_percpu_sheaves *cpu_sheaves;
    unsigned int sheaf_capacity;
};

/* CONFIG_SLAB_FREELIST_HARDENED. */
struct kmem_cache___hardened {
    unsigned long random;
};

/* 7.1+: node and barn pointers side by side per node. */
struct kmem_cache_per_node_ptrs {
    struct node_barn *barn;
    struct kmem_cache_node *node;
};
struct kmem_cache___per_node {
    struct kmem_cache_per_node_ptrs per_node[1];
};

struct seq_file {
    char *buf;
};

struct bpf_iter_meta {
    struct seq_file *seq;
    __u64 session_id;
    __u64 seq_num;
};

struct bpf_map {
    __u32 id;
};

struct bpf_array {
    struct bpf_map map;
    void *pptrs[0];
};

struct bpf_iter__kmem_cache {
    struct bpf_iter_meta *meta;
    struct kmem_cache *s;
};

struct bpf_iter__bpf_map {
    struct bpf_iter_meta *meta;
    struct bpf_map *map;
};

#pragma clang attribute pop

#endif /* SLAB_KERNEL_H */
