// SPDX-License-Identifier: GPL-2.0
/*
 * slab_snapshot.bpf.c - reads the running kernel's SLUB state for
 * `slablab snapshot`.
 *
 * Two iterator programs:
 *   find_percpu_offsets  (iter/bpf_map) finds this program's own per-CPU
 *       array among the kernel's maps and records its per-CPU base pointer
 *       and the element's real address on each CPU: their differences are
 *       the CPUs' per-CPU offsets, which /proc/kallsyms does not give
 *       without CONFIG_KALLSYMS_ALL.  User space stores them in cpu_off[].
 *   snapshot_caches  (iter/kmem_cache, Linux 6.13+) visits every cache with
 *       a trusted pointer and sends its geometry, per-CPU state (CPU slab,
 *       CPU freelist, CPU partial slabs, sheaves), per-node partial slabs
 *       and barn through the ring buffer `out` (records: snapshot_records.h).
 *
 * Safety: no lock is taken and nothing is written to the kernel; every read
 * of memory other than the cache itself is bpf_probe_read_kernel, which
 * fails instead of faulting.  Every walk is a bpf_loop with a bound (the
 * slab's object count, --max-slabs, SNAP_MAX_* ), and freelist pointers
 * that leave the slab's aligned block are not followed.  Lists and
 * freelists change while they are read: the CPU's tid and freelist, and a
 * slab's freelist and counters, are read before and after; a mismatch is
 * read again up to SNAP_RETRIES times and then marked SNAP_F_TORN.
 *
 * CO-RE: the field layouts come from the running kernel's BTF at load time;
 * fields that only some kernels have are read behind bpf_core_field_exists()
 * (slab_kernel.h lists which).
 */
#include "slab_kernel.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "snapshot_records.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_nodes = 1;
const volatile __u32 max_slabs = 1024;
const volatile __u32 page_size = 4096;
const volatile __u32 filter_names = 0;

/* Set by user space after load: the per-CPU array's id, then the offsets. */
__u32 pcpu_map_id;
__u64 cpu_off[SNAP_MAX_CPUS];
/* Written by find_percpu_offsets. */
__u64 pcpu_base;
__u64 pcpu_elem[SNAP_MAX_CPUS];
__u32 pcpu_found;

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} pcpu_probe SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 22); /* resized by user space */
} out SEC(".maps");

/* What one cache's walk needs; in the scratch map, so that the global functions below find it. */
struct walk {
    __u64 s;          /* the struct kmem_cache */
    __u64 random;     /* s->random */
    __u64 slab_bytes; /* the largest slab's bytes: the freelist walk's outer bound */
    __u32 offset;     /* s->offset: where a free object stores its free pointer */
    __u32 hardened;
    __u32 dropped; /* ring buffer outputs that failed */
    __u32 pad;
};

/* Records are built here, not on the stack: the call chain's stacks together must stay under 512 bytes. */
struct scratch {
    struct walk walk;
    struct snap_words words;
    struct snap_cache cache;
    struct snap_cpu cpu;
    struct snap_slab slab;
    struct snap_sheaf sheaf;
    struct snap_node node;
};
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct scratch);
} scratch_map SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1024);
    __type(key, char[SNAP_NAME_LEN]);
    __type(value, __u8);
} wanted SEC(".maps");

SEC("iter/bpf_map")
int find_percpu_offsets(struct bpf_iter__bpf_map *ctx)
{
    struct bpf_map *map = ctx->map;
    __u64 addr = 0, pptr = 0;
    __u32 key = 0;

    if (!map || map->id != pcpu_map_id)
        return 0;
    if (bpf_probe_read_kernel(&addr, sizeof addr, &ctx->map))
        return 0;
    addr += bpf_core_field_offset(struct bpf_array, pptrs);
    if (bpf_probe_read_kernel(&pptr, sizeof pptr, (void *)addr))
        return 0;
    pcpu_base = pptr;
    for (__u32 cpu = 0; cpu < SNAP_MAX_CPUS && cpu < nr_cpus; cpu++) {
        void *elem = bpf_map_lookup_percpu_elem(&pcpu_probe, &key, cpu);
        __u64 v = 0;
        if (!elem)
            break;
        /* The verifier refuses arithmetic on a map-value pointer: take its value as a scalar. */
        bpf_probe_read_kernel(&v, sizeof v, &elem);
        pcpu_elem[cpu] = v;
        pcpu_found = cpu + 1;
    }
    return 0;
}

/*
 * Which kernel this is, as load-time constants: libbpf turns each into 0 or 1, so the
 * verifier never sees the reads of fields this kernel lacks (their relocations fail).
 */
#define HAS_CPU_SLAB bpf_core_field_exists(((struct kmem_cache___cpu_slab *)0)->cpu_slab)
#define HAS_SHEAVES bpf_core_field_exists(((struct kmem_cache___sheaves *)0)->cpu_sheaves)
#define HAS_BARN_NODE bpf_core_field_exists(((struct kmem_cache_node___barn *)0)->barn)
#define HAS_PER_NODE bpf_core_field_exists(((struct kmem_cache___per_node *)0)->per_node)
#define HAS_HARDENED bpf_core_field_exists(((struct kmem_cache___hardened *)0)->random)
#define HAS_CPU_PARTIAL                                                                                                \
    (bpf_core_field_exists(((struct kmem_cache___cpu_partial *)0)->cpu_partial) &&                                     \
     bpf_core_field_exists(((struct slab___cpu_partial *)0)->next))

static __always_inline struct scratch *scratch(void)
{
    __u32 key = 0;
    return bpf_map_lookup_elem(&scratch_map, &key);
}

/*
 * Sends a record.  Once one did not fit, nothing more of this cache is sent (only counted), so
 * that no later record is read with words that belonged to a lost one.
 */
static void emit(struct scratch *scr, void *rec, __u64 size)
{
    if (scr->walk.dropped || bpf_ringbuf_output(&out, rec, size, 0))
        scr->walk.dropped++;
}

static void flush_words(struct scratch *scr)
{
    struct snap_words *b = &scr->words;
    __u32 n = b->n;
    if (n == 0)
        return;
    if (n > SNAP_WORDS_MAX)
        n = SNAP_WORDS_MAX;
    b->hdr.type = SNAP_REC_WORDS;
    b->hdr.size = offsetof(struct snap_words, w) + n * 8;
    emit(scr, b, offsetof(struct snap_words, w) + (__u64)n * 8);
    b->n = 0;
}

static void push_word(struct scratch *scr, __u64 v)
{
    struct snap_words *b = &scr->words;
    __u32 n = b->n;
    if (n >= SNAP_WORDS_MAX) {
        flush_words(scr);
        n = 0;
    }
    b->w[n & (SNAP_WORDS_MAX - 1)] = v;
    b->n = n + 1;
}

/* ---- freelist chains ------------------------------------------------------------------- */

struct chain {
    struct scratch *scr;
    __u64 p, lo, hi;
    __u32 end, done;
};

static long chain_step(__u32 i, void *arg)
{
    struct chain *c = arg;
    struct walk *w = &c->scr->walk;
    __u64 at, raw = 0;

    (void)i;
    if (!c->p) {
        c->end = SNAP_END_NULL;
        c->done = 1;
        return 1;
    }
    if (c->p < c->lo || c->p >= c->hi) {
        c->end = SNAP_END_OUTSIDE;
        c->done = 1;
        return 1;
    }
    at = c->p + w->offset;
    if (bpf_probe_read_kernel(&raw, sizeof raw, (void *)at)) {
        c->end = SNAP_END_FAULT;
        c->done = 1;
        return 1;
    }
    push_word(c->scr, raw);
    /* The kernel's freelist_ptr_decode(): ptr ^ s->random ^ swab(address stored at). */
    c->p = w->hardened ? raw ^ w->random ^ __builtin_bswap64(at) : raw;
    return 0;
}

/* Sends the stored words of the chain starting at head (at most bound of them); returns how it ended. */
__noinline int walk_chain(__u64 head, __u32 bound)
{
    struct scratch *scr = scratch();
    struct chain c = {.scr = scr, .p = head};
    struct walk *w;

    if (!scr)
        return SNAP_END_FAULT;
    w = &scr->walk;

    c.lo = head & ~(w->slab_bytes - 1);
    c.hi = c.lo + w->slab_bytes;
    if (bound > SNAP_MAX_CHAIN)
        bound = SNAP_MAX_CHAIN;
    bpf_loop(bound + 1, chain_step, &c, 0);
    flush_words(scr);
    return c.done ? c.end : SNAP_END_BOUND;
}

/* ---- slabs ----------------------------------------------------------------------------- */

static int read_slab_state(__u64 slab, __u64 *freelist, __u64 *counters)
{
    struct slab *sl = (void *)slab;
    if (bpf_core_read(freelist, sizeof *freelist, &sl->freelist))
        return -1;
    if (bpf_core_read(counters, sizeof *counters, &sl->counters))
        return -1;
    return 0;
}

/*
 * Sends one slab (its freelist words, then its record), read again while it is torn: a
 * freelist or counters that changed during the walk.
 */
__noinline int emit_slab(__u64 slab, __u32 where, __u32 owner, __u32 index)
{
    struct scratch *scr = scratch();
    struct slab *sl = (void *)slab;
    struct snap_slab *r;

    if (!scr)
        return 0;
    r = &scr->slab;

    __builtin_memset(r, 0, sizeof *r);
    r->hdr.type = SNAP_REC_SLAB;
    r->hdr.size = sizeof *r;
    r->where = where;
    r->owner = owner;
    r->index = index;
    r->addr = slab;
    bpf_core_read(&r->cache, sizeof r->cache, &sl->slab_cache);
    for (__u32 attempt = 1; attempt <= SNAP_RETRIES; attempt++) {
        r->attempts = attempt;
        r->flags = 0;
        if (read_slab_state(slab, &r->freelist, &r->counters)) {
            r->flags = SNAP_F_FAULT;
            break;
        }
        /* counters: inuse (16 bits), objects (15), frozen (1), on every kernel read here. */
        r->end = walk_chain(r->freelist, (r->counters >> 16) & 0x7fff);
        read_slab_state(slab, &r->freelist_again, &r->counters_again);
        if (r->freelist == r->freelist_again && r->counters == r->counters_again)
            break;
        if (attempt == SNAP_RETRIES) {
            r->flags = SNAP_F_TORN;
            break;
        }
        r->flags = SNAP_F_RETRY;
        emit(scr, r, sizeof *r);
    }
    emit(scr, r, sizeof *r);
    return 0;
}

/* ---- sheaves --------------------------------------------------------------------------- */

struct sheaf_walk {
    struct scratch *scr;
    __u64 objects; /* address of sheaf->objects[0] */
    __u32 fault;
};

static long sheaf_step(__u32 i, void *arg)
{
    struct sheaf_walk *sw = arg;
    __u64 v = 0;
    if (bpf_probe_read_kernel(&v, sizeof v, (void *)(sw->objects + (__u64)i * 8))) {
        sw->fault = 1;
        return 1;
    }
    push_word(sw->scr, v);
    return 0;
}

__noinline int emit_sheaf(__u64 addr, __u32 where, __u32 owner)
{
    struct scratch *scr = scratch();
    struct slab_sheaf *sh = (void *)addr;
    struct sheaf_walk sw = {.scr = scr};
    struct snap_sheaf *rp;
    __u32 n;

    if (!addr || !scr)
        return 0;
    rp = &scr->sheaf;
    __builtin_memset(rp, 0, sizeof *rp);
    rp->hdr.type = SNAP_REC_SHEAF;
    rp->hdr.size = sizeof *rp;
    rp->where = where;
    rp->owner = owner;
    rp->addr = addr;
    if (bpf_core_read(&rp->size, sizeof rp->size, &sh->size) ||
        bpf_core_read(&rp->cache, sizeof rp->cache, &sh->cache)) {
        rp->flags = SNAP_F_FAULT;
        emit(scr, rp, sizeof *rp);
        return 0;
    }
    bpf_core_read(&rp->node, sizeof rp->node, &sh->node);
    n = rp->size;
    if (n > SNAP_MAX_SHEAF) {
        n = SNAP_MAX_SHEAF;
        rp->flags |= SNAP_F_TORN;
    }
    if (where != SNAP_AT_BARN_EMPTY) {
        sw.objects = addr + bpf_core_field_offset(struct slab_sheaf, objects);
        bpf_loop(n, sheaf_step, &sw, 0);
        flush_words(scr);
        if (sw.fault)
            rp->flags |= SNAP_F_FAULT;
    }
    emit(scr, rp, sizeof *rp);
    return 0;
}

/* ---- per CPU --------------------------------------------------------------------------- */

struct partial_walk {
    __u64 slab;
    __u32 cpu;
};

static long cpu_partial_step(__u32 i, void *arg)
{
    struct partial_walk *pw = arg;
    struct slab___cpu_partial *sl = (void *)pw->slab;
    __u64 next = 0;
    if (!pw->slab)
        return 1;
    emit_slab(pw->slab, SNAP_AT_CPU_PARTIAL, pw->cpu, i);
    if (bpf_core_read(&next, sizeof next, &sl->next))
        return 1;
    pw->slab = next;
    return 0;
}

static long cpu_step(__u32 cpu, void *arg)
{
    struct scratch *scr = scratch();
    struct walk *w;
    struct snap_cpu *r;
    __u64 off;

    (void)arg;
    if (cpu >= SNAP_MAX_CPUS || !scr)
        return 1;
    w = &scr->walk;
    r = &scr->cpu;
    __builtin_memset(r, 0, sizeof *r);
    {
        /* Masked where the verifier sees it (clang drops a plain mask after the check above). */
        __u64 idx = cpu;
        asm volatile("%[i] &= %[m]" : [i] "+r"(idx) : [m] "i"(SNAP_MAX_CPUS - 1));
        off = cpu_off[idx];
    }

    if (HAS_CPU_SLAB) {
        struct kmem_cache___cpu_slab *sc = (void *)w->s;
        __u64 base = 0;
        struct kmem_cache_cpu *c;

        bpf_core_read(&base, sizeof base, &sc->cpu_slab);
        c = (void *)(base + off);
        r->hdr.type = SNAP_REC_CPU;
        r->hdr.size = sizeof *r;
        r->cpu = cpu;
        if (HAS_SHEAVES) {
            struct kmem_cache___sheaves *ss = (void *)w->s;
            __u64 pcs = 0;
            bpf_core_read(&pcs, sizeof pcs, &ss->cpu_sheaves);
            r->sheaves = pcs ? pcs + off : 0;
        }
        for (__u32 attempt = 1; attempt <= SNAP_RETRIES; attempt++) {
            __u64 slab = 0, objects = 0;
            r->attempts = attempt;
            r->flags = 0;
            if (bpf_core_read(&r->tid, sizeof r->tid, &c->tid) ||
                bpf_core_read(&r->freelist, sizeof r->freelist, &c->freelist) ||
                bpf_core_read(&r->slab, sizeof r->slab, &c->slab) ||
                bpf_core_read(&r->partial, sizeof r->partial, &c->partial)) {
                r->flags = SNAP_F_FAULT;
                break;
            }
            slab = r->slab;
            if (slab) {
                struct slab *sl = (void *)slab;
                __u64 counters = 0;
                bpf_core_read(&counters, sizeof counters, &sl->counters);
                objects = (counters >> 16) & 0x7fff;
            }
            r->end = walk_chain(r->freelist, objects ? objects : SNAP_MAX_CHAIN);
            bpf_core_read(&r->tid_again, sizeof r->tid_again, &c->tid);
            bpf_core_read(&r->freelist_again, sizeof r->freelist_again, &c->freelist);
            if (r->tid == r->tid_again && r->freelist == r->freelist_again)
                break;
            r->flags = attempt < SNAP_RETRIES ? SNAP_F_RETRY : SNAP_F_TORN;
            if (attempt < SNAP_RETRIES)
                emit(scr, r, sizeof *r);
        }
        emit(scr, r, sizeof *r);
        if (r->slab && !(r->flags & SNAP_F_FAULT))
            emit_slab(r->slab, SNAP_AT_CPU_SLAB, cpu, 0);
        if (r->partial && HAS_CPU_PARTIAL) {
            struct partial_walk pw = {.slab = r->partial, .cpu = cpu};
            bpf_loop(max_slabs, cpu_partial_step, &pw, 0);
        }
    } else if (HAS_SHEAVES) {
        struct kmem_cache___sheaves *ss = (void *)w->s;
        __u64 pcs = 0;
        bpf_core_read(&pcs, sizeof pcs, &ss->cpu_sheaves);
        r->hdr.type = SNAP_REC_CPU;
        r->hdr.size = sizeof *r;
        r->cpu = cpu;
        r->attempts = 1;
        r->sheaves = pcs ? pcs + off : 0;
        emit(scr, r, sizeof *r);
    }

    if (HAS_SHEAVES) {
        struct kmem_cache___sheaves *ss = (void *)w->s;
        __u64 pcs = 0, main = 0, spare = 0, rcu = 0;
        struct slub_percpu_sheaves *p;
        bpf_core_read(&pcs, sizeof pcs, &ss->cpu_sheaves);
        if (pcs) {
            p = (void *)(pcs + off);
            bpf_core_read(&main, sizeof main, &p->main);
            bpf_core_read(&spare, sizeof spare, &p->spare);
            bpf_core_read(&rcu, sizeof rcu, &p->rcu_free);
            emit_sheaf(main, SNAP_AT_SHEAF_MAIN, cpu);
            emit_sheaf(spare, SNAP_AT_SHEAF_SPARE, cpu);
            emit_sheaf(rcu, SNAP_AT_SHEAF_RCU, cpu);
        }
    }
    return 0;
}

/* ---- per node -------------------------------------------------------------------------- */

struct list_walk {
    __u64 pos, head;
    __u64 entry_off; /* offset of the list_head inside its entry */
    __u32 where, owner;
    __u32 bound, count, end, done;
};

static long list_step(__u32 i, void *arg)
{
    struct list_walk *lw = arg;
    struct list_head *lh = (void *)lw->pos;
    __u64 next = 0;

    if (lw->pos == lw->head) {
        lw->end = SNAP_END_NULL;
        lw->done = 1;
        return 1;
    }
    if (!lw->pos) {
        lw->end = SNAP_END_FAULT;
        lw->done = 1;
        return 1;
    }
    if (i >= lw->bound) {
        lw->end = SNAP_END_BOUND;
        lw->done = 1;
        return 1;
    }
    if (lw->where == SNAP_AT_NODE_PARTIAL)
        emit_slab(lw->pos - lw->entry_off, lw->where, lw->owner, i);
    else
        emit_sheaf(lw->pos - lw->entry_off, lw->where, lw->owner);
    lw->count = i + 1;
    if (bpf_core_read(&next, sizeof next, &lh->next)) {
        lw->end = SNAP_END_FAULT;
        lw->done = 1;
        return 1;
    }
    lw->pos = next;
    return 0;
}

/*
 * Walks the list whose head lw->head was set by the caller (entries' list_head at lw->entry_off),
 * at most bound entries; returns how it ended, with lw->count entries sent.
 */
static __u32 walk_list(struct list_walk *lw, __u32 bound)
{
    struct list_head *lh = (void *)lw->head;
    __u64 first = 0;

    if (bpf_core_read(&first, sizeof first, &lh->next))
        return SNAP_END_FAULT;
    lw->pos = first;
    lw->bound = bound;
    /* One more step than the bound, to see whether the list ends right there. */
    bpf_loop(bound + 1, list_step, lw, 0);
    if (lw->done)
        return lw->end;
    return SNAP_END_BOUND;
}

static long node_step(__u32 node, void *arg)
{
    struct scratch *scr = scratch();
    struct walk *w;
    struct snap_node *r;
    __u64 n = 0, barn = 0;
    struct kmem_cache_node *kn;

    (void)arg;
    if (node >= SNAP_MAX_NODES || !scr)
        return 1;
    w = &scr->walk;
    r = &scr->node;
    __builtin_memset(r, 0, sizeof *r);
    if (HAS_PER_NODE) {
        struct kmem_cache___per_node *pn = (void *)w->s;
        bpf_core_read(&n, sizeof n, &pn->per_node[node].node);
        bpf_core_read(&barn, sizeof barn, &pn->per_node[node].barn);
    } else {
        struct kmem_cache *s = (void *)w->s;
        bpf_core_read(&n, sizeof n, &s->node[node]);
        if (n && HAS_BARN_NODE) {
            struct kmem_cache_node___barn *nb = (void *)n;
            bpf_core_read(&barn, sizeof barn, &nb->barn);
        }
    }
    if (!n)
        return 0;
    kn = (void *)n;
    r->hdr.type = SNAP_REC_NODE;
    r->hdr.size = sizeof *r;
    r->node = node;
    r->addr = n;
    r->barn = barn;
    if (bpf_core_read(&r->nr_partial, sizeof r->nr_partial, &kn->nr_partial) ||
        bpf_core_read(&r->nr_slabs, sizeof r->nr_slabs, &kn->nr_slabs.counter) ||
        bpf_core_read(&r->total_objects, sizeof r->total_objects, &kn->total_objects.counter)) {
        r->flags = SNAP_F_FAULT;
        emit(scr, r, sizeof *r);
        return 0;
    }
    {
        struct list_walk lw = {.where = SNAP_AT_NODE_PARTIAL, .owner = node};
        lw.head = n + bpf_core_field_offset(struct kmem_cache_node, partial);
        lw.entry_off = bpf_core_field_offset(struct slab, slab_list);
        r->list_end = walk_list(&lw, max_slabs);
        r->listed = lw.count;
    }
    bpf_core_read(&r->nr_partial_again, sizeof r->nr_partial_again, &kn->nr_partial);
    if (r->nr_partial != r->nr_partial_again)
        r->flags |= SNAP_F_TORN;
    if (barn) {
        struct node_barn *b = (void *)barn;
        struct list_walk full = {.where = SNAP_AT_BARN_FULL, .owner = node};
        struct list_walk empty = {.where = SNAP_AT_BARN_EMPTY, .owner = node};
        bpf_core_read(&r->nr_full, sizeof r->nr_full, &b->nr_full);
        bpf_core_read(&r->nr_empty, sizeof r->nr_empty, &b->nr_empty);
        full.head = barn + bpf_core_field_offset(struct node_barn, sheaves_full);
        full.entry_off = bpf_core_field_offset(struct slab_sheaf, barn_list);
        walk_list(&full, SNAP_MAX_BARN);
        empty.head = barn + bpf_core_field_offset(struct node_barn, sheaves_empty);
        empty.entry_off = full.entry_off;
        walk_list(&empty, SNAP_MAX_BARN);
    }
    emit(scr, r, sizeof *r);
    return 0;
}

/* ---- the cache ------------------------------------------------------------------------- */

static __u32 kernel_features(void)
{
    __u32 f = 0;
    if (HAS_CPU_SLAB)
        f |= SNAP_FEAT_CPU_SLAB;
    if (HAS_SHEAVES)
        f |= SNAP_FEAT_SHEAVES;
    if (HAS_BARN_NODE)
        f |= SNAP_FEAT_BARN_NODE;
    if (HAS_PER_NODE)
        f |= SNAP_FEAT_PER_NODE;
    if (HAS_HARDENED)
        f |= SNAP_FEAT_HARDENED;
    if (HAS_CPU_PARTIAL)
        f |= SNAP_FEAT_CPU_PARTIAL;
    return f;
}

SEC("iter/kmem_cache")
int snapshot_caches(struct bpf_iter__kmem_cache *ctx)
{
    struct seq_file *seq = ctx->meta->seq;
    struct kmem_cache *s = ctx->s;
    struct scratch *scr = scratch();
    struct snap_end_rec end = {};
    struct snap_cache *c;
    struct walk *w;
    __u32 order;
    char mark = 'c';

    if (!s || !scr)
        return 0;
    w = &scr->walk;
    c = &scr->cache;
    __builtin_memset(w, 0, sizeof *w);
    scr->words.n = 0;
    __builtin_memset(c->name, 0, sizeof c->name);
    bpf_probe_read_kernel_str(c->name, sizeof c->name, BPF_CORE_READ(s, name));
    if (filter_names && !bpf_map_lookup_elem(&wanted, c->name))
        return 0;

    c->hdr.type = SNAP_REC_CACHE;
    c->hdr.size = sizeof *c;
    c->addr = (__u64)s;
    c->features = kernel_features();
    c->page_struct_size = bpf_core_type_size(struct page);
    c->flags = BPF_CORE_READ(s, flags);
    c->min_partial = BPF_CORE_READ(s, min_partial);
    c->object_size = BPF_CORE_READ(s, object_size);
    c->size = BPF_CORE_READ(s, size);
    c->offset = BPF_CORE_READ(s, offset);
    c->align = BPF_CORE_READ(s, align);
    c->inuse = BPF_CORE_READ(s, inuse);
    c->red_left_pad = BPF_CORE_READ(s, red_left_pad);
    c->refcount = BPF_CORE_READ(s, refcount);
    c->oo = BPF_CORE_READ(s, oo.x);
    c->min = BPF_CORE_READ(s, min.x);
    c->random = 0;
    c->cpu_partial = 0;
    c->cpu_partial_slabs = 0;
    c->sheaf_capacity = 0;
    if (HAS_HARDENED)
        c->random = BPF_CORE_READ((struct kmem_cache___hardened *)s, random);
    if (HAS_CPU_PARTIAL) {
        c->cpu_partial = BPF_CORE_READ((struct kmem_cache___cpu_partial *)s, cpu_partial);
        c->cpu_partial_slabs = BPF_CORE_READ((struct kmem_cache___cpu_partial *)s, cpu_partial_slabs);
    }
    if (HAS_SHEAVES)
        c->sheaf_capacity = BPF_CORE_READ((struct kmem_cache___sheaves *)s, sheaf_capacity);
    emit(scr, c, sizeof *c);

    w->s = (__u64)s;
    w->random = c->random;
    w->hardened = HAS_HARDENED;
    w->offset = c->offset;
    order = c->oo >> 16;
    if (order > 10)
        order = 10;
    w->slab_bytes = (__u64)page_size << order;

    bpf_loop(nr_cpus, cpu_step, NULL, 0);
    bpf_loop(nr_nodes, node_step, NULL, 0);

    end.hdr.type = SNAP_REC_END;
    end.hdr.size = sizeof end;
    end.addr = (__u64)s;
    end.dropped = w->dropped;
    bpf_ringbuf_output(&out, &end, sizeof end, 0);
    /* One byte per cache, so that a one-byte read() returns after each and user space drains the ring. */
    bpf_seq_write(seq, &mark, 1);
    return 0;
}
