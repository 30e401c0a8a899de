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
 * summed by user space); nothing waits.
 *
 * The server's own work is left out, so that streaming does not feed on
 * itself, and counted in `own` (per CPU): an event is the server's own when
 * its process (self_tgid) is current AND the CPU is in process context with
 * no preemption disabled beyond the tracepoint's own (from_self below).
 * Interrupt work that merely runs while the server is current (RCU callbacks
 * in softirq freeing task_struct, loopback receive, hardirqs) and work with
 * preemption disabled (a context switch's finish_task_switch) is the
 * kernel's, and is streamed.  The preempt count is read from CPU n's
 * __preempt_count, whose address user space finds (cli/live_own.c): the
 * variable's place in the per-CPU section (the kernel's BTF), plus where
 * that section is linked and the CPU's per-CPU offset, which
 * find_percpu_offsets below measures, all checked against this_cpu_off and
 * cpu_number on every CPU before use.  When a check fails preempt_ok stays
 * 0 and every event of the server's process is left out (and counted), as
 * before; user space says so.
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
const volatile __u32 nr_cpus = 1;
/* Places in the per-CPU section (.data..percpu, from the kernel's BTF), set before load. */
const volatile __u64 sec_this_cpu_off = 0, sec_cpu_number = 0, sec_runqueues = 0;

/*
 * Written by find_percpu_offsets for user space to check: where the section
 * is linked (base: 0 before Linux 6.15 on x86_64, __per_cpu_start since
 * "x86/percpu/64: Use relative percpu offsets"), and per CPU its per-CPU
 * offset and the values read at offset + base + sec_this_cpu_off (must be
 * the offset) and + sec_cpu_number (must be the CPU).
 */
__u32 probe_map_id; /* set by user space: the `lost` map's id */
__u32 probe_cpus;
__u64 probe_base;
__s32 probe_rq_cpu; /* the runqueue's own cpu field, which must be the CPU the iterator ran on */
__u32 probe_at_cpu;
__u64 probe_off[LIVE_MAX_CPUS];
__u64 probe_this_cpu_off[LIVE_MAX_CPUS];
__u32 probe_cpu_number[LIVE_MAX_CPUS];

/* Set by user space once the check passed: CPU n's __preempt_count is at preempt_addr[n]. */
__u32 preempt_ok;
__u64 preempt_addr[LIVE_MAX_CPUS];
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

/* Events left out as the server's own (from_self), per CPU. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} own SEC(".maps");

enum { KNOWN_SEND = 1, KNOWN_SKIP = 2 };

struct {
    __uint(type, LIVE_MAP_LRU_HASH);
    __uint(max_entries, LIVE_MAX_KNOWN);
    __type(key, __u64);
    __type(value, __u32);
} known SEC(".maps");

/* Only what find_percpu_offsets reads (CO-RE: their layout comes from the kernel's BTF). */
#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)
struct cfs_rq {
    struct rq *rq; /* CONFIG_FAIR_GROUP_SCHED */
};
struct rq {
    int cpu;
    struct cfs_rq cfs;
};
struct sched_entity {
    struct cfs_rq *cfs_rq;
};
struct task_struct {
    struct sched_entity se;
};
#pragma clang attribute pop

extern struct kmem_cache *bpf_get_kmem_cache(__u64 addr) __ksym __weak;

static __always_inline void count_in(void *map)
{
    __u32 zero = 0;
    __u64 *n = bpf_map_lookup_elem(map, &zero);
    if (n)
        (*n)++;
}

static __always_inline void count_lost(void) { count_in(&lost); }

/*
 * include/linux/preempt.h (Linux 6.18): the count's low byte is the
 * preemption depth, then 8 bits of softirq (SOFTIRQ_OFFSET, 0x100, is set
 * while a softirq is served; 0x200 steps are local_bh_disable), 4 of
 * hardirq, 4 of NMI.  x86 keeps PREEMPT_NEED_RESCHED in bit 31 (ignored).
 */
#define PC_PREEMPT_MASK 0x000000ffu
#define PC_SOFTIRQ_OFFSET 0x00000100u
#define PC_HARDIRQ_MASK 0x000f0000u
#define PC_NMI_MASK 0x00f00000u
/*
 * The depth a tracepoint's probe runs at from a preemptible caller: 6.18's
 * __DO_TRACE_CALL takes guard(preempt_notrace)() (+1), and __bpf_trace_run
 * adds nothing (rcu_read_lock is PREEMPT_RCU's nesting count here, not the
 * preempt count).  ftrace subtracts the same one (tracing_gen_ctx_dec), so
 * "depth > 1" here is the capture's `common_preempt_count != 0`.
 */
#define TRACEPOINT_DEPTH 1u

/*
 * Returns whether this event is the server's own work, counting it in `own`
 * when it is: its process is current and, when the preempt count can be
 * read, the CPU is in process context (no softirq served, no hardirq, no
 * NMI) with preemption not disabled beyond the tracepoint's own.  A failed
 * read of the count is taken as the server's own (and counted).
 */
static __always_inline int from_self(void)
{
    if (!self_tgid || (bpf_get_current_pid_tgid() >> 32) != self_tgid)
        return 0;
    if (preempt_ok) {
        __u32 cpu = bpf_get_smp_processor_id();
        __u32 pc = 0;
        if (cpu < LIVE_MAX_CPUS && !bpf_probe_read_kernel(&pc, sizeof pc, (const void *)preempt_addr[cpu])) {
            if (pc & (PC_SOFTIRQ_OFFSET | PC_HARDIRQ_MASK | PC_NMI_MASK))
                return 0;
            if ((pc & PC_PREEMPT_MASK) > TRACEPOINT_DEPTH)
                return 0;
        }
    }
    count_in(&own);
    return 1;
}

/* Returns CPU cpu's per-CPU offset: where `lost`'s element is on it minus its per-CPU pointer (0: none). */
static __always_inline __u64 percpu_offset(__u64 pptr, __u32 cpu)
{
    __u32 key = 0;
    __u64 v = 0;
    void *elem = bpf_map_lookup_percpu_elem(&lost, &key, cpu);
    if (!elem)
        return 0;
    /* The verifier refuses arithmetic on a map-value pointer: take its value as a scalar. */
    bpf_probe_read_kernel(&v, sizeof v, &elem);
    return v - pptr;
}

/*
 * Iterates the kernel's BPF maps (user space reads it once, before the
 * tracepoints are attached) to find the `lost` per-CPU array: its per-CPU
 * pointer (struct bpf_array pptrs[0]) and its element's real address on
 * each CPU differ by that CPU's per-CPU offset.  Where the per-CPU section
 * is linked comes from a per-CPU variable whose address the running task
 * leads to: its runqueue (current->se.cfs_rq->rq, the per-CPU `runqueues`
 * of this CPU; iterators run with migration disabled), minus this CPU's
 * offset and the variable's place.  At each CPU's offset plus that base
 * plus the places of this_cpu_off and cpu_number the CPU's own copies are
 * read back, for user space to check.
 */
SEC("iter/bpf_map")
int find_percpu_offsets(struct bpf_iter__bpf_map *ctx)
{
    struct bpf_map *map = ctx->map;
    __u64 addr = 0, pptr = 0, cfs = 0, rq = 0;
    int rq_cpu = -1;

    if (!map || map->id != probe_map_id)
        return 0;
    if (bpf_probe_read_kernel(&addr, sizeof addr, &ctx->map))
        return 0;
    addr += bpf_core_field_offset(struct bpf_array, pptrs);
    if (bpf_probe_read_kernel(&pptr, sizeof pptr, (void *)addr))
        return 0;

    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    if (bpf_core_read(&cfs, sizeof cfs, &task->se.cfs_rq) || !cfs)
        return 0;
    if (bpf_core_field_exists(((struct cfs_rq *)0)->rq)) {
        if (bpf_core_read(&rq, sizeof rq, &((struct cfs_rq *)cfs)->rq))
            return 0;
    } else { /* without group scheduling every task is on its runqueue's own cfs_rq */
        rq = cfs - bpf_core_field_offset(struct rq, cfs);
    }
    if (bpf_core_read(&rq_cpu, sizeof rq_cpu, &((struct rq *)rq)->cpu))
        return 0;
    __u32 at = bpf_get_smp_processor_id();
    __u64 here = percpu_offset(pptr, at);
    if (!here || !sec_runqueues)
        return 0;
    __u64 base = rq - here - sec_runqueues;
    probe_base = base;
    probe_rq_cpu = rq_cpu;
    probe_at_cpu = at;

    for (__u32 cpu = 0; cpu < LIVE_MAX_CPUS && cpu < nr_cpus; cpu++) {
        __u64 off = percpu_offset(pptr, cpu), seen = 0;
        __u32 n = ~0u;
        if (!off)
            break;
        probe_off[cpu] = off;
        /* A read that fails leaves 0 and ~0: neither passes the check. */
        if (sec_this_cpu_off &&
            bpf_probe_read_kernel(&seen, sizeof seen, (const void *)(off + base + sec_this_cpu_off)))
            seen = 0;
        if (sec_cpu_number && bpf_probe_read_kernel(&n, sizeof n, (const void *)(off + base + sec_cpu_number)))
            n = ~0u;
        probe_this_cpu_off[cpu] = seen;
        probe_cpu_number[cpu] = n;
        probe_cpus = cpu + 1;
    }
    return 0;
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

/* A cache event: sent when the cache is wanted and it is not the server's own (counted then). */
static __always_inline void cache_event(__u8 kind, __u64 s, __u64 obj, __u64 call_site, __u64 bytes)
{
    if (!obj)
        return;
    if (s && !cache_wanted(s))
        return;
    if (!s && nfilter)
        return;
    if (from_self())
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
    if (!ctx[1])
        return 0;
    cache_event(LIVE_KMALLOC, cache_of(ctx[1]), ctx[1], ctx[0], ctx[3]);
    return 0;
}

SEC("tp_btf/kfree")
int on_kfree(__u64 *ctx)
{
    /* kfree(NULL) and ZERO_SIZE_PTR (16) are traced too; they free nothing. */
    if (ctx[1] <= 16)
        return 0;
    cache_event(LIVE_KFREE, cache_of(ctx[1]), ctx[1], ctx[0], 0);
    return 0;
}

SEC("tp_btf/percpu_alloc_percpu")
int on_percpu_alloc(__u64 *ctx)
{
    if (nfilter || from_self())
        return 0;
    emit(LIVE_PCPU_ALLOC, 0, ctx[7], ctx[0], ctx[8]);
    return 0;
}

SEC("tp_btf/percpu_free_percpu")
int on_percpu_free(__u64 *ctx)
{
    if (nfilter || from_self())
        return 0;
    emit(LIVE_PCPU_FREE, 0, ctx[2], 0, 0);
    return 0;
}
