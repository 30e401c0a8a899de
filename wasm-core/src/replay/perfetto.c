/*
 * perfetto.c - replay operations as a Chrome JSON trace, which
 * ui.perfetto.dev (and chrome://tracing) opens.
 *
 * Layout of the output:
 *   pid 1 "CPUs": one thread track per CPU ("CPU n"); each operation is a
 *     complete ("X") slice named after its cache, category alloc / free /
 *     free_unknown / percpu, with the pointer, bytes, model path and input
 *     line as arguments.
 *   pid 2 "caches": one counter ("C") per cache with the series live,
 *     slabs and partial (the first kernel model's), sampled when they
 *     change, at most once per counter_interval_ns of trace time per
 *     cache (the last value of every cache is written at the end);
 *     percpu chunks count their live areas the same way.
 *   flows ("s" at the allocation, "f" at the free) from each allocation
 *     to its free when the free ran on another CPU.
 *
 * Events of one CPU often share a microsecond in the trace; complete
 * slices on one track must not overlap, so each slice lasts 1 ns and is
 * moved to 1 ns after the previous slice of its CPU when needed.  The
 * allocation's adjusted time is remembered (per live pointer) so the flow
 * starts inside the allocation's slice.  Memory: one record per live
 * object, and a few bytes per cache.
 *
 * Output is streamed through the sink as it is produced, in chunks of
 * up to 64 KiB.
 */
#include "replay_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct pf_live {
    uint64_t ts; /* adjusted time of the allocation slice */
    uint16_t cpu;
} pf_live;

typedef struct pf_counter {
    bool written; /* a sample was written, at last_ts */
    bool pending; /* a change not written yet, from pending_ts */
    uint64_t last_ts, pending_ts;
    uint32_t live, slabs, partial;
} pf_counter;

struct sl_perfetto {
    sl_perfetto_config cfg;
    sl_strbuf out;
    bool sink_failed, first_event;
    uint64_t *cpu_last; /* last slice time per CPU (+1: 0 = none) */
    unsigned ncpu;
    pf_counter *counters; /* [cache] */
    unsigned ncounters;
    pf_counter *chunk_counters;
    unsigned nchunk_counters;
    sli_map live; /* ptr -> pf_live */
    uint64_t next_flow;
};

static void flush(sl_perfetto *p, bool force)
{
    if (p->out.len < 65536 && !force)
        return;
    if (p->out.failed || (p->out.len && !p->cfg.sink(p->cfg.user, p->out.data, p->out.len)))
        p->sink_failed = true;
    p->out.len = 0;
}

static void sep(sl_perfetto *p)
{
    sl_strbuf_append(&p->out, p->first_event ? "\n" : ",\n", p->first_event ? 1 : 2);
    p->first_event = false;
}

static void put_ts(sl_perfetto *p, uint64_t ns)
{
    sl_strbuf_printf(&p->out, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

static void name_of(const sl_perfetto *p, unsigned cache, bool percpu, char *buf, size_t len)
{
    const char *n = p->cfg.cache_name && !percpu ? p->cfg.cache_name(p->cfg.names_user, cache) : NULL;
    if (n)
        snprintf(buf, len, "%s", n);
    else
        snprintf(buf, len, percpu ? "percpu chunk %u" : "cache %u", cache);
}

sl_perfetto *sl_perfetto_begin(const sl_perfetto_config *cfg)
{
    sl_perfetto *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->cfg = *cfg;
    p->first_event = true;
    if (sli_map_init(&p->live, sizeof(pf_live)) != SL_OK) {
        free(p);
        return NULL;
    }
    sl_strbuf_printf(&p->out, "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"generator\": \"slablab replay\"}, "
                              "\"traceEvents\": [");
    sep(p);
    sl_strbuf_printf(&p->out,
                     "{\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", \"args\": {\"name\": \"CPUs\"}}");
    sep(p);
    sl_strbuf_printf(&p->out,
                     "{\"ph\": \"M\", \"pid\": 2, \"name\": \"process_name\", \"args\": {\"name\": \"caches\"}}");
    return p;
}

/* The slice time for an event of `cpu` at ts: after the CPU's previous slice. */
static uint64_t slot_ts(sl_perfetto *p, unsigned cpu, uint64_t ts)
{
    if (cpu >= p->ncpu) {
        unsigned n = cpu + 1;
        uint64_t *v = realloc(p->cpu_last, n * sizeof *v);
        if (!v)
            return ts;
        for (unsigned c = p->ncpu; c < n; c++) {
            v[c] = 0;
            sep(p);
            sl_strbuf_printf(&p->out,
                             "{\"ph\": \"M\", \"pid\": 1, \"tid\": %u, \"name\": \"thread_name\", \"args\": "
                             "{\"name\": \"CPU %u\"}}",
                             c, c);
        }
        p->cpu_last = v;
        p->ncpu = n;
    }
    if (p->cpu_last[cpu] && ts < p->cpu_last[cpu])
        ts = p->cpu_last[cpu]; /* cpu_last holds the previous slice's time + 1 */
    p->cpu_last[cpu] = ts + 1;
    return ts;
}

static pf_counter *counter_for(sl_perfetto *p, unsigned idx, bool percpu)
{
    pf_counter **v = percpu ? &p->chunk_counters : &p->counters;
    unsigned *n = percpu ? &p->nchunk_counters : &p->ncounters;
    if (idx >= *n) {
        unsigned cap = idx + 16;
        pf_counter *nv = realloc(*v, cap * sizeof *nv);
        if (!nv)
            return NULL;
        memset(nv + *n, 0, (cap - *n) * sizeof *nv);
        *v = nv;
        *n = cap;
    }
    return &(*v)[idx];
}

static void write_counter(sl_perfetto *p, unsigned idx, bool percpu, const pf_counter *c, uint64_t ts)
{
    char name[80];
    name_of(p, idx, percpu, name, sizeof name);
    sep(p);
    sl_strbuf_printf(&p->out, "{\"ph\": \"C\", \"pid\": 2, \"name\": ");
    sl_strbuf_json_string(&p->out, name, strlen(name));
    sl_strbuf_printf(&p->out, ", \"ts\": ");
    put_ts(p, ts);
    if (percpu)
        sl_strbuf_printf(&p->out, ", \"args\": {\"live areas\": %u}}", c->live);
    else
        sl_strbuf_printf(&p->out, ", \"args\": {\"live\": %u, \"slabs\": %u, \"partial\": %u}}", c->live, c->slabs,
                         c->partial);
}

static void sample(sl_perfetto *p, const sl_replay_op *op, bool percpu)
{
    if (op->cache == SLI_NONE16)
        return;
    pf_counter *c = counter_for(p, op->cache, percpu);
    if (!c || (c->written && c->live == op->live && c->slabs == op->slabs && c->partial == op->partial))
        return;
    c->live = op->live;
    c->slabs = op->slabs;
    c->partial = op->partial;
    if (c->written && op->ts_ns >= c->last_ts && op->ts_ns - c->last_ts < p->cfg.counter_interval_ns) {
        c->pending = true;
        c->pending_ts = op->ts_ns;
        return;
    }
    write_counter(p, op->cache, percpu, c, op->ts_ns);
    c->written = true;
    c->last_ts = op->ts_ns;
    c->pending = false;
}

void sl_perfetto_op(sl_perfetto *p, const sl_replay_op *op)
{
    static const char *const cats[] = {
        [SL_REPLAY_OP_ALLOC] = "alloc",
        [SL_REPLAY_OP_FREE] = "free",
        [SL_REPLAY_OP_FREE_UNKNOWN] = "free_unknown",
        [SL_REPLAY_OP_PCPU_ALLOC] = "percpu_alloc",
        [SL_REPLAY_OP_PCPU_FREE] = "percpu_free",
        [SL_REPLAY_OP_PCPU_FREE_UNKNOWN] = "percpu_free_unknown",
        [SL_REPLAY_OP_CHUNK_CREATE] = "chunk_create",
        [SL_REPLAY_OP_CHUNK_DESTROY] = "chunk_destroy",
    };
    if (op->kind < SL_REPLAY_OP_ALLOC || op->kind > SL_REPLAY_OP_CHUNK_DESTROY)
        return;
    bool percpu = op->kind >= SL_REPLAY_OP_PCPU_ALLOC;
    uint64_t ts = slot_ts(p, op->cpu, op->ts_ns);
    char name[80];
    name_of(p, op->cache, percpu, name, sizeof name);
    sep(p);
    sl_strbuf_printf(&p->out, "{\"ph\": \"X\", \"pid\": 1, \"tid\": %u, \"ts\": ", op->cpu);
    put_ts(p, ts);
    sl_strbuf_printf(&p->out, ", \"dur\": 0.001, \"cat\": \"%s\", \"name\": ", cats[op->kind]);
    sl_strbuf_json_string(&p->out, name, strlen(name));
    sl_strbuf_printf(&p->out, ", \"args\": {\"ptr\": \"%016llx\", \"line\": %u", (unsigned long long)op->ptr, op->line);
    if (op->bytes)
        sl_strbuf_printf(&p->out, ", \"bytes\": %u", op->bytes);
    if (percpu && op->kind != SL_REPLAY_OP_CHUNK_CREATE && op->kind != SL_REPLAY_OP_CHUNK_DESTROY)
        sl_strbuf_printf(&p->out, ", \"off\": %u", op->obj_index);
    if (!percpu && op->kind != SL_REPLAY_OP_FREE_UNKNOWN)
        sl_strbuf_printf(&p->out, ", \"path\": \"%s\"", op->flags & SL_REPLAY_F_SLOWPATH ? "slow" : "fast");
    if (op->flags & SL_REPLAY_F_CROSS_CPU)
        sl_strbuf_printf(&p->out, ", \"allocated_on_cpu\": %u", op->alloc_cpu);
    if (op->flags & SL_REPLAY_F_NEW_SLAB)
        sl_strbuf_printf(&p->out, ", \"new_slab\": true");
    if (op->flags & SL_REPLAY_F_SLAB_FREED)
        sl_strbuf_printf(&p->out, ", \"slab_freed\": true");
    if (op->flags & SL_REPLAY_F_MODEL_ERROR)
        sl_strbuf_printf(&p->out, ", \"model_error\": true");
    sl_strbuf_printf(&p->out, "}}");

    if (op->kind == SL_REPLAY_OP_ALLOC) {
        bool existed;
        pf_live *l = sli_map_put(&p->live, op->ptr, &existed);
        if (l)
            *l = (pf_live){.ts = ts, .cpu = op->cpu};
    } else if (op->kind == SL_REPLAY_OP_FREE) {
        pf_live *l = sli_map_get(&p->live, op->ptr);
        if (l && l->cpu != op->cpu) {
            uint64_t id = ++p->next_flow;
            sep(p);
            sl_strbuf_printf(&p->out,
                             "{\"ph\": \"s\", \"pid\": 1, \"tid\": %u, \"id\": %llu, \"cat\": \"remote_free\", "
                             "\"name\": \"remote free\", \"ts\": ",
                             l->cpu, (unsigned long long)id);
            put_ts(p, l->ts);
            sl_strbuf_printf(&p->out, "}");
            sep(p);
            sl_strbuf_printf(&p->out,
                             "{\"ph\": \"f\", \"bp\": \"e\", \"pid\": 1, \"tid\": %u, \"id\": %llu, \"cat\": "
                             "\"remote_free\", \"name\": \"remote free\", \"ts\": ",
                             op->cpu, (unsigned long long)id);
            put_ts(p, ts);
            sl_strbuf_printf(&p->out, "}");
        }
        if (l)
            sli_map_del(&p->live, op->ptr);
    }
    if (op->kind != SL_REPLAY_OP_FREE_UNKNOWN && op->kind != SL_REPLAY_OP_PCPU_FREE_UNKNOWN)
        sample(p, op, percpu);
    flush(p, false);
}

int sl_perfetto_end(sl_perfetto *p)
{
    for (int percpu = 0; percpu < 2; percpu++) {
        pf_counter *v = percpu ? p->chunk_counters : p->counters;
        unsigned n = percpu ? p->nchunk_counters : p->ncounters;
        for (unsigned i = 0; i < n; i++)
            if (v[i].pending)
                write_counter(p, i, percpu, &v[i], v[i].pending_ts);
    }
    sl_strbuf_printf(&p->out, "\n]}\n");
    flush(p, true);
    bool ok = !p->sink_failed;
    sl_strbuf_free(&p->out);
    sli_map_fini(&p->live);
    free(p->cpu_last);
    free(p->counters);
    free(p->chunk_counters);
    free(p);
    return ok ? SL_OK : SL_EINVAL;
}
