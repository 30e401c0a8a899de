/*
 * pcpu_replay.c - percpu events through the percpu model: the trace's
 * chunks rebuilt area by area.
 *
 * A chunk is known by the trace's base_addr (hashed per boot like every
 * %p, stable within the trace).  percpu_create_chunk adds one; a chunk
 * first seen in an allocation or free existed before the trace (the first
 * chunk always does).  Each chunk has a placed chunk in every kernel
 * model (sl_pcpu with cfg.placed: only the trace creates and destroys
 * chunks), named by its model chunk id, and percpu_alloc_percpu takes
 * exactly [off, off + size) there, so the model's bitmaps and hints are
 * the kernel allocator's own bookkeeping for the areas the trace shows.
 * Areas allocated before the trace are not in the model: their frees are
 * "freed_unknown", and the model's free bytes count only what the trace
 * did.
 *
 * The model's own first chunk (id 0, booted by sl_pcpu_init with the whole
 * unit dynamic) stands for nothing in the trace and is never placed into:
 * the trace's chunks get ids from 1, in the order first seen.  The kernel's
 * first chunk is one of the chunks that existed before the trace, placed
 * like the others, because nothing in the trace tells it apart (its
 * base_addr is hashed like every other), its static and reserved sizes are
 * not in the capture, and its offsets count from the page holding its
 * dynamic region's start (pcpu_alloc_first_chunk's base_addr), not from the
 * unit's start as the model's first chunk does (docs/replay.md).
 *
 * Which allocator keeps the hints follows the kernel version: the 2017
 * bitmap before 5.2, the 2019 scan-hint allocator from 5.2, its first
 * release (and for an unknown kernel; docs/percpu.md says why not 5.1).  The pre-4.14 area map cannot take placed areas; a
 * trace that old (percpu tracepoints appeared in 4.13) replays on the
 * bitmap allocator, which the model's rules say.
 *
 * The unit size is the capture's (percpu_stats, or slabcap.meta), else
 * SL_REPLAY_DEFAULT_PCPU_UNIT; an area past it is a model error naming
 * --pcpu-unit-size.  Units: the machine's possible CPUs, at most
 * SL_PCPU_MAX_UNITS.  Chunks: at most SLI_MAX_CHUNKS are modelled, and
 * no more than SLI_PCPU_CHUNK_BUDGET bytes of them (units x unit size
 * each): a hostile trace naming a new base_addr on every line would
 * otherwise allocate a chunk per line.  Further chunks are counted and
 * reported once.
 * Every base_addr and ptr is a key, 0 included (replay.c's maps).
 */
#include "replay_internal.h"

#include <stdlib.h>
#include <string.h>

sl_pcpu_kind sli_pcpu_kind_for(sl_kernel_version v)
{
    if (v.major == 0)
        return SL_PCPU_SCANHINT;
    return v.major > 5 || (v.major == 5 && v.minor >= 2) ? SL_PCPU_SCANHINT : SL_PCPU_BITMAP;
}

static unsigned pcpu_units(const sl_replay *r)
{
    unsigned u = r->cpus_possible ? r->cpus_possible : r->cpus_hint ? r->cpus_hint : r->model_cpus;
    return u > SL_PCPU_MAX_UNITS ? SL_PCPU_MAX_UNITS : u ? u : 1;
}

static size_t pcpu_unit(const sl_replay *r)
{
    return r->cfg.pcpu_unit_size ? r->cfg.pcpu_unit_size
           : r->pcpu_unit_size   ? r->pcpu_unit_size
                                 : SL_REPLAY_DEFAULT_PCPU_UNIT;
}

unsigned sli_pcpu_max_chunks(const sl_replay *r)
{
    uint64_t chunk = (uint64_t)pcpu_units(r) * pcpu_unit(r);
    uint64_t by_size = SLI_PCPU_CHUNK_BUDGET / chunk;
    return by_size < SLI_MAX_CHUNKS ? (unsigned)(by_size ? by_size : 1) : SLI_MAX_CHUNKS;
}

static bool ensure_pcpu(sl_replay *r, unsigned k)
{
    sli_model *m = &r->models[k];
    if (m->pcpu_ready)
        return true;
    if (m->pcpu_failed)
        return false;
    size_t unit = pcpu_unit(r);
    sl_pcpu_config cfg = {
        .kind = sli_pcpu_kind_for(m->kv), .nr_units = pcpu_units(r), .unit_size = unit, .placed = true};
    int rc = sl_pcpu_init(&m->pcpu, &cfg);
    if (rc != SL_OK) {
        m->pcpu_failed = true;
        sli_model_error(r, k, "percpu: the model cannot run %u units of %zu bytes: %s", cfg.nr_units, unit,
                        sl_strerror(rc));
        return false;
    }
    m->pcpu_kind = cfg.kind;
    m->pcpu_ready = true;
    return true;
}

/* The chunk with this base, created (as existing before the trace) when new. */
static uint32_t chunk_for(sl_replay *r, uint64_t base, bool created)
{
    uint32_t *idx = sli_map_get(&r->chunk_by_base, base);
    if (idx)
        return *idx;
    if (r->nchunks >= sli_pcpu_max_chunks(r)) {
        if (!r->chunks_capped)
            for (unsigned k = 0; k < r->nkernels; k++)
                sli_model_error(r, k,
                                "percpu: more than %u chunks of %zu KiB units (base_addr %016llx is one more): "
                                "the events of further chunks are counted, not modelled",
                                sli_pcpu_max_chunks(r), pcpu_unit(r) >> 10, (unsigned long long)base);
        r->chunks_capped = true;
        return UINT32_MAX;
    }
    if (!sli_grow(&r->chunks, &r->chunks_cap, r->nchunks, sizeof *r->chunks, 16))
        return UINT32_MAX;
    bool existed;
    idx = sli_map_put(&r->chunk_by_base, base, &existed);
    if (!idx)
        return UINT32_MAX;
    *idx = r->nchunks;
    sli_chunk *c = &r->chunks[r->nchunks];
    memset(c, 0, sizeof *c);
    c->base = base;
    c->created_in_trace = created;
    for (unsigned k = 0; k < SL_REPLAY_MAX_KERNELS; k++)
        c->model_id[k] = SL_NONE32;
    for (unsigned k = 0; k < r->nkernels; k++) {
        if (!ensure_pcpu(r, k))
            continue;
        int rc = sl_pcpu_chunk_add(&r->models[k].pcpu, &c->model_id[k]);
        if (rc != SL_OK) {
            c->model_id[k] = SL_NONE32;
            sli_model_error(r, k, "percpu: no memory for chunk %016llx: %s", (unsigned long long)base, sl_strerror(rc));
        }
    }
    return r->nchunks++;
}

static void emit(sl_replay *r, const sli_event *ev, uint8_t kind, uint32_t chunk, uint32_t off, uint32_t size,
                 const sli_area *a, uint8_t flags)
{
    if (!r->cfg.on_op)
        return;
    sl_replay_op op = {.ts_ns = ev->ts_ns,
                       .ptr = kind >= SL_REPLAY_OP_CHUNK_CREATE ? ev->base : ev->ptr,
                       .alloc_ts_ns = a ? a->ts_ns : 0,
                       .line = (uint32_t)r->lines,
                       .bytes = size,
                       .live = chunk != UINT32_MAX ? r->chunks[chunk].live : 0,
                       .obj_pfn = SL_NONE32,
                       .obj_index = off,
                       .cpu = (uint16_t)ev->cpu,
                       .alloc_cpu = a ? a->cpu : SLI_NONE16,
                       .cache = chunk != UINT32_MAX ? (uint16_t)chunk : SLI_NONE16,
                       .kind = kind,
                       .flags = flags};
    if (a && a->cpu != ev->cpu)
        op.flags |= SL_REPLAY_F_CROSS_CPU;
    r->cfg.on_op(r->cfg.user, &op);
}

/* Frees an area the trace allocated in every model; flags gets MODEL_ERROR on a refusal. */
static void model_free_area(sl_replay *r, const sli_area *a, uint8_t *flags)
{
    sli_chunk *c = &r->chunks[a->chunk];
    for (unsigned k = 0; k < r->nkernels; k++) {
        if (c->model_id[k] == SL_NONE32)
            continue;
        sl_pcpu *pc = &r->models[k].pcpu;
        int rc = sl_pcpu_free(pc, a->cpu % pc->cfg.nr_units, sl_pcpu_address(pc, c->model_id[k], a->off));
        if (rc != SL_OK) {
            *flags |= SL_REPLAY_F_MODEL_ERROR;
            sli_model_error(r, k, "percpu: the model refused to free the area at off %u of chunk %016llx: %s", a->off,
                            (unsigned long long)c->base, sl_strerror(rc));
        }
    }
}

static void pcpu_alloc(sl_replay *r, const sli_event *ev)
{
    r->pcpu_allocs++;
    uint32_t ci = chunk_for(r, ev->base, false);
    if (ci == UINT32_MAX) {
        if (!r->chunks_capped)
            sli_model_error(r, 0, "percpu: no memory for the chunk table");
        return;
    }
    bool existed;
    sli_area *a = sli_map_put(&r->areas, ev->ptr, &existed);
    if (!a) {
        sli_model_error(r, 0, "percpu: no memory for the table of live areas");
        return;
    }
    uint8_t flags = 0;
    if (existed) {
        r->pcpu_untraced_frees++;
        r->chunks[a->chunk].live--;
        model_free_area(r, a, &flags);
    }
    *a = (sli_area){.ts_ns = ev->ts_ns, .chunk = ci, .off = ev->off, .size = ev->size, .cpu = (uint16_t)ev->cpu};
    sli_chunk *c = &r->chunks[ci];
    c->allocs++;
    c->live++;
    for (unsigned k = 0; k < r->nkernels; k++) {
        if (c->model_id[k] == SL_NONE32)
            continue;
        sl_pcpu *pc = &r->models[k].pcpu;
        int rc = sl_pcpu_alloc_at(pc, ev->cpu % pc->cfg.nr_units, c->model_id[k], ev->off, ev->size);
        if (rc == SL_OK)
            continue;
        flags |= SL_REPLAY_F_MODEL_ERROR;
        if (rc == SL_EBUSY)
            sli_model_error(r, k,
                            "percpu: the area at off %u (%u bytes) of chunk %016llx overlaps an area the model "
                            "holds live (a free is missing from the trace)",
                            ev->off, ev->size, (unsigned long long)c->base);
        else
            sli_model_error(r, k,
                            "percpu: the area at off %u (%u bytes) does not fit the model's unit of %d bytes "
                            "(pass --pcpu-unit-size)",
                            ev->off, ev->size, pc->unit_size);
    }
    emit(r, ev, SL_REPLAY_OP_PCPU_ALLOC, ci, ev->off, ev->size, NULL, flags);
}

static void pcpu_free(sl_replay *r, const sli_event *ev)
{
    sli_area *found = sli_map_get(&r->areas, ev->ptr);
    if (!found) {
        r->pcpu_freed_unknown++;
        uint32_t ci = chunk_for(r, ev->base, false);
        if (ci != UINT32_MAX)
            r->chunks[ci].freed_unknown++;
        emit(r, ev, SL_REPLAY_OP_PCPU_FREE_UNKNOWN, ci, ev->off, 0, NULL, 0);
        return;
    }
    sli_area a = *found;
    sli_map_del(&r->areas, ev->ptr);
    r->pcpu_frees++;
    sli_chunk *c = &r->chunks[a.chunk];
    c->frees++;
    c->live--;
    uint8_t flags = 0;
    model_free_area(r, &a, &flags);
    emit(r, ev, SL_REPLAY_OP_PCPU_FREE, a.chunk, a.off, a.size, &a, flags);
}

static void pcpu_destroy(sl_replay *r, const sli_event *ev)
{
    uint32_t ci = chunk_for(r, ev->base, false);
    if (ci == UINT32_MAX)
        return;
    sli_chunk *c = &r->chunks[ci];
    uint8_t flags = 0;
    if (c->live) {
        /* Areas the trace allocated here and never freed: their frees were lost. */
        for (unsigned k = 0; k < r->nkernels; k++)
            sli_model_error(r, k, "percpu: chunk %016llx is destroyed with %u areas the trace allocated still live",
                            (unsigned long long)c->base, c->live);
        for (size_t i = 0; i <= r->areas.mask; i++) {
            if (!r->areas.keys[i])
                continue;
            sli_area *a = (sli_area *)(void *)(r->areas.vals + i * r->areas.esize);
            if (a->chunk != ci)
                continue;
            model_free_area(r, a, &flags);
            sli_map_del(&r->areas, r->areas.keys[i]);
            i--; /* backward shift may have moved another entry here */
        }
        sli_area *zero = sli_map_get(&r->areas, 0); /* key 0 lives outside keys[] */
        if (zero && zero->chunk == ci) {
            model_free_area(r, zero, &flags);
            sli_map_del(&r->areas, 0);
        }
        r->pcpu_untraced_frees += c->live;
        c->live = 0;
    }
    for (unsigned k = 0; k < r->nkernels; k++)
        if (c->model_id[k] != SL_NONE32 && sl_pcpu_chunk_remove(&r->models[k].pcpu, c->model_id[k]) == SL_OK)
            c->model_id[k] = SL_NONE32;
    c->destroyed = true;
    sli_map_del(&r->chunk_by_base, c->base); /* a later chunk may reuse the address */
    emit(r, ev, SL_REPLAY_OP_CHUNK_DESTROY, ci, 0, 0, NULL, flags);
}

void sli_replay_pcpu_event(sl_replay *r, const sli_event *ev)
{
    switch (ev->kind) {
    case SLI_EV_PCPU_ALLOC:
        pcpu_alloc(r, ev);
        break;
    case SLI_EV_PCPU_FREE:
        pcpu_free(r, ev);
        break;
    case SLI_EV_PCPU_CREATE: {
        uint32_t ci = chunk_for(r, ev->base, true);
        if (ci != UINT32_MAX)
            r->chunks[ci].created_in_trace = true;
        emit(r, ev, SL_REPLAY_OP_CHUNK_CREATE, ci, 0, 0, NULL, 0);
        break;
    }
    case SLI_EV_PCPU_DESTROY:
        pcpu_destroy(r, ev);
        break;
    default: /* SLI_EV_PCPU_FAIL */
        r->pcpu_fails++;
        break;
    }
}

void sli_replay_free_pcpu(sl_replay *r)
{
    for (unsigned k = 0; k < SL_REPLAY_MAX_KERNELS; k++)
        if (r->models[k].pcpu_ready)
            sl_pcpu_destroy(&r->models[k].pcpu);
    free(r->chunks);
    r->chunks = NULL;
}
