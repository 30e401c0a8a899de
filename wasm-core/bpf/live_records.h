/*
 * live_records.h - what the live event program (slab_events.bpf.c) puts in
 * its ring buffer for `slablab serve`, shared by the program and user space.
 *
 * Two record kinds, told apart by `kind`:
 *   struct live_event      an allocation or a free seen at a tracepoint;
 *   struct live_cache_rec  the first sight of a cache: its name and sizes,
 *                          sent once per cache pointer, before its first event.
 * Both start with the same 8-byte header word layout (kind in byte 0).
 */
#ifndef LIVE_RECORDS_H
#define LIVE_RECORDS_H

#ifndef __bpf__
#include <stdint.h>
typedef uint8_t live_u8;
typedef uint16_t live_u16;
typedef uint32_t live_u32;
typedef uint64_t live_u64;
#else
typedef __u8 live_u8;
typedef __u16 live_u16;
typedef __u32 live_u32;
typedef __u64 live_u64;
#endif

#define LIVE_NAME_LEN 32    /* cache names kept (the kernel's longest are under 32) */
#define LIVE_MAX_FILTER 16  /* --caches names the program filters on */
#define LIVE_MAX_KNOWN 4096 /* cache pointers remembered (named, or filtered out) */
/* CPUs whose preempt count the program can read (more: every event of the server's process is its own). */
#define LIVE_MAX_CPUS 1024

/* live_event.kind: the tracepoint it came from. */
enum live_kind {
    LIVE_ALLOC = 1,      /* kmem_cache_alloc: a named cache */
    LIVE_FREE = 2,       /* kmem_cache_free */
    LIVE_KMALLOC = 3,    /* kmalloc: cache from bpf_get_kmem_cache(ptr), 0 for page-sized */
    LIVE_KFREE = 4,      /* kfree */
    LIVE_PCPU_ALLOC = 5, /* percpu_alloc_percpu: no cache; obj is the percpu pointer */
    LIVE_PCPU_FREE = 6,  /* percpu_free_percpu */
    LIVE_CACHE = 0x40,   /* a struct live_cache_rec */
};

struct live_event {
    live_u8 kind;
    live_u8 flags; /* reserved, 0 */
    live_u16 cpu;
    live_u32 bytes;     /* kmalloc/percpu: bytes_alloc; cache events: 0 (the cache's size) */
    live_u64 ts;        /* bpf_ktime_get_ns() */
    live_u64 cache;     /* struct kmem_cache *, 0 when none */
    live_u64 obj;       /* the object (percpu: the percpu pointer) */
    live_u64 call_site; /* the caller's return address (percpu free: 0) */
};

struct live_cache_rec {
    live_u8 kind; /* LIVE_CACHE */
    live_u8 pad[3];
    live_u32 object_size;
    live_u64 cache;
    live_u32 size; /* bytes per object with metadata */
    live_u32 oo;   /* order << 16 | objects per slab */
    char name[LIVE_NAME_LEN];
};

#endif /* LIVE_RECORDS_H */
