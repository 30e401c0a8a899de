// SPDX-License-Identifier: GPL-2.0
/*
 * slab_events.bpf.c - the allocations and frees of the running kernel, for
 * `slablab serve`: one program per tracepoint (tp_btf, typed arguments read
 * from the context array; fentry is refused on the machines this was built
 * on, and perf-event tracepoints need tracefs), each writing a struct
 * live_event (live_records.h) to the ring buffer `events`.
 *
 *   kmem_cache_alloc (call_site, ptr, s, gfp, node)      LIVE_ALLOC
 *   kmem_cache_free  (call_site, ptr, s)                 LIVE_FREE
 *   kmalloc          (call_site, ptr, req, alloc, ...)   LIVE_KMALLOC
 *   kfree            (call_site, ptr)                    LIVE_KFREE
 *   percpu_alloc_percpu (call_site, reserved, atomic, size, align,
 *                        base, off, ptr, bytes_alloc, gfp) LIVE_PCPU_ALLOC
 *   percpu_free_percpu  (base, off, ptr)                 LIVE_PCPU_FREE
 *
 * kmalloc and kfree name no cache: bpf_get_kmem_cache(ptr) (a kfunc, Linux
 * 6.13+) gives the slab's cache, NULL for a large kmalloc served by pages.
 *
 * The first event of a cache is preceded by a live_cache_rec with its name
 * and sizes; `known` remembers which caches were named, and with a --caches
 * filter which were filtered out (then their events are not sent at all).
 *
 * Bounded: a full ring drops the event and counts it in `lost` (per CPU,
 * summed by user space); nothing waits.  Events of the server's own process
 * (self_tgid) are skipped, so that streaming does not feed on itself.
 */
#include "slab_kernel.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "live_records.h"

char LICENSE[] SEC("license") = "GPL";

/* From include/uapi/linux/bpf.h (slab_kernel.h declares only what the snapshot uses). */
#define LIVE_MAP_LRU_HASH 9
#define LIVE_NOEXIST 1

const volatile __u32 self_tgid = 0;
const volatile __u32 nfilter = 0;
const volatile char filter[LIVE_MAX_FILTER][LIVE_NAME_LEN] = {};

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 23); /* resized by user space (--ring-mb) */
} events SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} lost SEC(".maps");

enum { KNOWN_SEND = 1, KNOWN_SKIP = 2 };

struct {
    __uint(type, LIVE_MAP_LRU_HASH);
    __uint(max_entries, LIVE_MAX_KNOWN);
    __type(key, __u64);
    __type(value, __u32);
} known SEC(".maps");

extern struct kmem_cache *bpf_get_kmem_cache(__u64 addr) __ksym __weak;

static __always_inline void count_lost(void)
{
    __u32 zero = 0;
    __u64 *n = bpf_map_lookup_elem(&lost, &zero);
    if (n)
        (*n)++;
}

/* Whether name (NUL-terminated within LIVE_NAME_LEN) is one of the filter's names. */
static __always_inline int filtered_in(const char *name)
{
    for (__u32 i = 0; i < LIVE_MAX_FILTER && i < nfilter; i++) {
        int same = 1;
        for (__u32 j = 0; j < LIVE_NAME_LEN; j++) {
            if (name[j] != filter[i][j]) {
                same = 0;
                break;
            }
            if (!name[j])
                break;
        }
        if (same)
            return 1;
    }
    return 0;
}

/*
 * Returns whether events of cache s are to be sent, naming s first (a
 * LIVE_CACHE record) when it is seen for the first time.
 */
static __always_inline int cache_wanted(__u64 s)
{
    __u32 *verdict = bpf_map_lookup_elem(&known, &s);
    if (verdict)
        return *verdict == KNOWN_SEND;
    struct live_cache_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
    if (!r) {
        count_lost();
        return 0; /* named at its next event */
    }
    struct kmem_cache *c = (struct kmem_cache *)s;
    const char *name = 0;
    r->kind = LIVE_CACHE;
    r->pad[0] = r->pad[1] = r->pad[2] = 0;
    r->cache = s;
    r->object_size = 0;
    r->size = 0;
    r->oo = 0;
    bpf_core_read(&r->object_size, sizeof(r->object_size), &c->object_size);
    bpf_core_read(&r->size, sizeof(r->size), &c->size);
    bpf_core_read(&r->oo, sizeof(r->oo), &c->oo.x);
    bpf_core_read(&name, sizeof(name), &c->name);
    if (!name || bpf_probe_read_kernel_str(r->name, sizeof(r->name), name) < 0)
        r->name[0] = '\0';
    __u32 v = (nfilter == 0 || filtered_in(r->name)) ? KNOWN_SEND : KNOWN_SKIP;
    bpf_map_update_elem(&known, &s, &v, LIVE_NOEXIST);
    if (v == KNOWN_SKIP) {
        bpf_ringbuf_discard(r, 0);
        return 0;
    }
    bpf_ringbuf_submit(r, 0);
    return 1;
}

static __always_inline int from_self(void) { return self_tgid && (bpf_get_current_pid_tgid() >> 32) == self_tgid; }

static __always_inline void emit(__u8 kind, __u64 cache, __u64 obj, __u64 call_site, __u64 bytes)
{
    struct live_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    if (!e) {
        count_lost();
        return;
    }
    e->kind = kind;
    e->flags = 0;
    e->cpu = (__u16)bpf_get_smp_processor_id();
    e->bytes = bytes > 0xffffffffull ? 0xffffffffu : (__u32)bytes;
    e->ts = bpf_ktime_get_ns();
    e->cache = cache;
    e->obj = obj;
    e->call_site = call_site;
    bpf_ringbuf_submit(e, 0);
}

/* A cache event: sent when the cache is wanted. */
static __always_inline void cache_event(__u8 kind, __u64 s, __u64 obj, __u64 call_site, __u64 bytes)
{
    if (from_self() || !obj)
        return;
    if (s && !cache_wanted(s))
        return;
    if (!s && nfilter)
        return;
    emit(kind, s, obj, call_site, bytes);
}

/* kmalloc and kfree: the object's cache, 0 when pages serve it or the kfunc is missing. */
static __always_inline __u64 cache_of(__u64 obj)
{
    if (!bpf_get_kmem_cache || !obj)
        return 0;
    return (__u64)bpf_get_kmem_cache(obj);
}

SEC("tp_btf/kmem_cache_alloc")
int on_kmem_cache_alloc(__u64 *ctx)
{
    cache_event(LIVE_ALLOC, ctx[2], ctx[1], ctx[0], 0);
    return 0;
}

SEC("tp_btf/kmem_cache_free")
int on_kmem_cache_free(__u64 *ctx)
{
    cache_event(LIVE_FREE, ctx[2], ctx[1], ctx[0], 0);
    return 0;
}

SEC("tp_btf/kmalloc")
int on_kmalloc(__u64 *ctx)
{
    if (from_self() || !ctx[1])
        return 0;
    cache_event(LIVE_KMALLOC, cache_of(ctx[1]), ctx[1], ctx[0], ctx[3]);
    return 0;
}

SEC("tp_btf/kfree")
int on_kfree(__u64 *ctx)
{
    /* kfree(NULL) and ZERO_SIZE_PTR (16) are traced too; they free nothing. */
    if (from_self() || ctx[1] <= 16)
        return 0;
    cache_event(LIVE_KFREE, cache_of(ctx[1]), ctx[1], ctx[0], 0);
    return 0;
}

SEC("tp_btf/percpu_alloc_percpu")
int on_percpu_alloc(__u64 *ctx)
{
    if (from_self() || nfilter)
        return 0;
    emit(LIVE_PCPU_ALLOC, 0, ctx[7], ctx[0], ctx[8]);
    return 0;
}

SEC("tp_btf/percpu_free_percpu")
int on_percpu_free(__u64 *ctx)
{
    if (from_self() || nfilter)
        return 0;
    emit(LIVE_PCPU_FREE, 0, ctx[2], 0, 0);
    return 0;
}
