/*
 * api_replay.c - trace replay for the browser: the same session the CLI
 * runs (src/replay), fed chunk by chunk from the bridge worker, and the
 * Perfetto exporter.  web/trace/replay-api.ts is its typed face.
 *
 * Sessions.  sl_api_replay_create returns a handle (0 for a bad --kernel
 * string or no memory; sl_api_replay_config_error says which).  The worker
 * copies each chunk of the file into the module (sl_api_replay_buffer
 * gives a buffer of SL_API_REPLAY_CHUNK bytes) and calls
 * sl_api_replay_feed, which returns 0 (all taken), 1 (paused at the event
 * limit: feed the rest again later) or a negative sl_err (refused:
 * sl_api_replay_error says why), with the bytes taken in *consumed.  Cancel
 * stops it for good.  Progress is 8 doubles.  Results: the JSON document
 * (sl_api_replay_json, docs/replay.md); with collect_ops, each applied
 * event as a 64-byte sl_replay_op record (layout from
 * sl_api_replay_op_layout), held until the worker drains them after each
 * feed; per-cache model snapshots (docs/snapshot-format.md), the model
 * object of a live trace pointer, a percpu chunk's granule map.
 *
 * Export.  sl_api_perfetto_begin gives an exporter writing into a buffer
 * the worker drains (pending/data/clear); it takes cache names and batches
 * of sl_replay_op records, so it serves a replay and, later, any lab
 * session that produces such records.
 */
#include "export.h"

#include "../src/replay/replay.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SL_API_REPLAY_CHUNK (1u << 20)

typedef struct api_replay {
    sl_replay *r;
    uint8_t *chunk;
    sl_strbuf json;
    sl_replay_op *ops;
    unsigned nops, cap_ops;
    bool collect_ops, ops_overflow, keep_line;
    char last_line[SL_REPLAY_MAX_LINE + 1]; /* keep_line: the input line of the last op (scrubbing's words) */
} api_replay;

static char config_error[200];

static void collect(void *user, const sl_replay_op *op)
{
    api_replay *a = user;
    if (a->nops == a->cap_ops) {
        /* One feed of SL_API_REPLAY_CHUNK bytes holds at most ~20k events; more means the worker is not draining. */
        unsigned cap = a->cap_ops ? a->cap_ops * 2 : 4096;
        sl_replay_op *n = cap <= (1u << 22) ? realloc(a->ops, cap * sizeof *n) : NULL;
        if (!n) {
            a->ops_overflow = true;
            return;
        }
        a->ops = n;
        a->cap_ops = cap;
    }
    const char *line;
    size_t len;
    sl_replay_op *o = &a->ops[a->nops++];
    *o = *op;
    o->event = (uint32_t)sl_replay_current(a->r, &line, &len);
    if (a->keep_line) {
        len = len < SL_REPLAY_MAX_LINE ? len : SL_REPLAY_MAX_LINE;
        memcpy(a->last_line, line, len);
        a->last_line[len] = 0;
    }
}

/* flags: bit 0 track objects in the models (snapshots name owners), bit 1 collect op records, bit 2 keep the
 * input line of the last op collected (sl_api_replay_last_line). */
SL_EXPORT api_replay *sl_api_replay_create(const char *kernel, const char *cache, unsigned cpus, unsigned zone_mb,
                                           unsigned pcpu_unit_kb, unsigned flags)
{
    config_error[0] = 0;
    sl_kernel_version v[SL_REPLAY_MAX_KERNELS];
    if (kernel && *kernel && sl_kernel_versions_parse(kernel, v, config_error, sizeof config_error) < 0)
        return NULL;
    api_replay *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(config_error, sizeof config_error, "out of memory");
        return NULL;
    }
    a->collect_ops = flags & 2;
    a->keep_line = flags & 4;
    sl_replay_config cfg = {
        .kernel = kernel && *kernel ? kernel : NULL,
        .cache = cache && *cache ? cache : NULL,
        .cpus = cpus,
        .zone_bytes = (size_t)zone_mb << 20,
        .pcpu_unit_size = (size_t)pcpu_unit_kb << 10,
        .track = flags & 1,
        .on_op = a->collect_ops ? collect : NULL,
        .user = a,
    };
    a->chunk = malloc(SL_API_REPLAY_CHUNK);
    if (!a->chunk || sl_replay_create(&cfg, &a->r) != SL_OK) {
        snprintf(config_error, sizeof config_error, "out of memory (or a cache name over 63 bytes)");
        free(a->chunk);
        free(a);
        return NULL;
    }
    return a;
}

SL_EXPORT const char *sl_api_replay_config_error(void) { return config_error; }

/* Checks a --kernel string: the count of versions (1, 2), or a negative sl_err (message: config_error). */
SL_EXPORT int sl_api_replay_check_kernel(const char *kernel)
{
    sl_kernel_version v[SL_REPLAY_MAX_KERNELS];
    return sl_kernel_versions_parse(kernel, v, config_error, sizeof config_error);
}

SL_EXPORT void sl_api_replay_destroy(api_replay *a)
{
    if (!a)
        return;
    sl_replay_destroy(a->r);
    sl_strbuf_free(&a->json);
    free(a->ops);
    free(a->chunk);
    free(a);
}

SL_EXPORT uint8_t *sl_api_replay_buffer(api_replay *a) { return a->chunk; }
SL_EXPORT unsigned sl_api_replay_buffer_size(void) { return SL_API_REPLAY_CHUNK; }

/* Feeds len bytes from the session's buffer.  Returns 0, 1 (paused) or a negative sl_err; *consumed the bytes taken. */
SL_EXPORT int sl_api_replay_feed(api_replay *a, unsigned len, unsigned *consumed)
{
    size_t used = 0;
    int rc = len <= SL_API_REPLAY_CHUNK ? sl_replay_feed(a->r, a->chunk, len, &used) : SL_EINVAL;
    *consumed = (unsigned)used;
    return rc;
}

SL_EXPORT int sl_api_replay_finish(api_replay *a) { return sl_replay_finish(a->r); }
SL_EXPORT void sl_api_replay_set_limit(api_replay *a, double events)
{
    sl_replay_set_limit(a->r, events < 0 || events >= 1.8e19 ? UINT64_MAX : (uint64_t)events);
}
SL_EXPORT void sl_api_replay_cancel(api_replay *a) { sl_replay_cancel(a->r); }
SL_EXPORT const char *sl_api_replay_error(api_replay *a) { return sl_replay_error(a->r); }

/* bytes_in, text_bytes, lines, events, model_errors, elapsed_s, events_per_s, finished (0/1). */
SL_EXPORT void sl_api_replay_progress(api_replay *a, double out[8])
{
    sl_replay_progress p;
    sl_replay_progress_get(a->r, &p);
    out[0] = (double)p.bytes_in;
    out[1] = (double)p.text_bytes;
    out[2] = (double)p.lines;
    out[3] = (double)p.events;
    out[4] = (double)p.model_errors;
    out[5] = p.elapsed_s;
    out[6] = p.events_per_s;
    out[7] = p.finished;
}

/* Builds the JSON document; returns its length (the bytes: sl_api_replay_json_data), or a negative sl_err. */
SL_EXPORT int sl_api_replay_json(api_replay *a)
{
    a->json.len = 0;
    a->json.failed = false;
    int rc = sl_replay_json(a->r, &a->json, NULL);
    return rc == SL_OK ? (int)a->json.len : rc;
}
SL_EXPORT const char *sl_api_replay_json_data(api_replay *a) { return a->json.data; }

SL_EXPORT unsigned sl_api_replay_ops_pending(api_replay *a) { return a->nops; }
SL_EXPORT const sl_replay_op *sl_api_replay_ops_data(api_replay *a) { return a->ops; }
SL_EXPORT void sl_api_replay_ops_clear(api_replay *a) { a->nops = 0; }
/* keep_line sessions: the input line of the last op collected ("" before any). */
SL_EXPORT const char *sl_api_replay_last_line(api_replay *a) { return a->last_line; }
/* True when records were lost because the worker let more than 4M pile up. */
SL_EXPORT int sl_api_replay_ops_overflowed(api_replay *a) { return a->ops_overflow; }

/* sizeof, then the offsets of ts_ns, ptr, alloc_ts_ns, line, bytes, live, slabs, partial, obj_pfn, obj_index,
 * cpu, alloc_cpu, cache, kind, flags, event.  Returns the count written (17). */
SL_EXPORT int sl_api_replay_op_layout(uint32_t *out)
{
    static const uint32_t layout[] = {
        sizeof(sl_replay_op),
        offsetof(sl_replay_op, ts_ns),
        offsetof(sl_replay_op, ptr),
        offsetof(sl_replay_op, alloc_ts_ns),
        offsetof(sl_replay_op, line),
        offsetof(sl_replay_op, bytes),
        offsetof(sl_replay_op, live),
        offsetof(sl_replay_op, slabs),
        offsetof(sl_replay_op, partial),
        offsetof(sl_replay_op, obj_pfn),
        offsetof(sl_replay_op, obj_index),
        offsetof(sl_replay_op, cpu),
        offsetof(sl_replay_op, alloc_cpu),
        offsetof(sl_replay_op, cache),
        offsetof(sl_replay_op, kind),
        offsetof(sl_replay_op, flags),
        offsetof(sl_replay_op, event),
    };
    memcpy(out, layout, sizeof layout);
    return (int)(sizeof layout / sizeof layout[0]);
}

/* ---- the models, for scrubbing ---------------------------------------- */

/* Snapshot of cache `cache`'s model in kernel `kernel`: bytes written, the negative bytes needed, or SL_EINVAL. */
SL_EXPORT int sl_api_replay_cache_snapshot(api_replay *a, unsigned cache, unsigned kernel, void *buf, unsigned cap)
{
    sl_slub_cache *s = sl_replay_model_cache(a->r, cache, kernel);
    return s ? (int)sl_slub_snapshot(s, buf, cap) : SL_EINVAL;
}

/* The model object of a live trace pointer: out = {cache, slab pfn, index}.  SL_OK or SL_EINVAL. */
SL_EXPORT int sl_api_replay_lookup(api_replay *a, double ptr_hi, double ptr_lo, unsigned kernel, uint32_t out[3])
{
    uint64_t ptr = (uint64_t)ptr_hi << 32 | (uint32_t)ptr_lo;
    unsigned cache;
    void *obj;
    if (sl_replay_lookup(a->r, ptr, kernel, &cache, &obj) != SL_OK)
        return SL_EINVAL;
    sl_slub_cache *s = sl_replay_model_cache(a->r, cache, kernel);
    out[0] = cache;
    return s && sl_slub_object_index(s, obj, &out[1], &out[2]) ? SL_OK : SL_EINVAL;
}

/* Percpu chunk `chunk` (the JSON's percpu.chunks index) of kernel 0: one byte per 4 bytes of a unit
 * (0 free, 1 area start, 2 continuation).  Returns the granules written, or SL_EINVAL. */
SL_EXPORT int sl_api_replay_chunk_granules(api_replay *a, unsigned chunk, uint8_t *out, unsigned max)
{
    sl_pcpu *pc = sl_replay_pcpu(a->r, 0);
    uint32_t id = sl_replay_chunk_model_id(a->r, chunk, 0);
    return pc && id != SL_NONE32 ? sl_pcpu_chunk_granules(pc, id, out, max) : SL_EINVAL;
}

/* ---- Perfetto export ----------------------------------------------------- */

typedef struct api_perfetto {
    sl_perfetto *p;
    sl_strbuf out;
    char **names;
    unsigned nnames;
} api_perfetto;

static bool to_buffer(void *user, const void *data, size_t len)
{
    return sl_strbuf_append(&((api_perfetto *)user)->out, data, len);
}

static const char *name_of(void *user, unsigned cache)
{
    api_perfetto *e = user;
    return cache < e->nnames ? e->names[cache] : NULL;
}

SL_EXPORT api_perfetto *sl_api_perfetto_begin(unsigned counter_interval_us)
{
    api_perfetto *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    sl_perfetto_config cfg = {.sink = to_buffer,
                              .user = e,
                              .cache_name = name_of,
                              .names_user = e,
                              .counter_interval_ns = (uint64_t)counter_interval_us * 1000};
    e->p = sl_perfetto_begin(&cfg);
    if (!e->p) {
        free(e);
        return NULL;
    }
    return e;
}

/* Names cache `cache` (the JSON's caches[].index).  SL_OK or SL_ENOMEM. */
SL_EXPORT int sl_api_perfetto_cache_name(api_perfetto *e, unsigned cache, const char *name)
{
    if (cache >= e->nnames) {
        char **n = realloc(e->names, (cache + 1) * sizeof *n);
        if (!n)
            return SL_ENOMEM;
        memset(n + e->nnames, 0, (cache + 1 - e->nnames) * sizeof *n);
        e->names = n;
        e->nnames = cache + 1;
    }
    free(e->names[cache]);
    e->names[cache] = strdup(name);
    return e->names[cache] ? SL_OK : SL_ENOMEM;
}

SL_EXPORT void sl_api_perfetto_ops(api_perfetto *e, const sl_replay_op *ops, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sl_perfetto_op(e->p, &ops[i]);
}

SL_EXPORT unsigned sl_api_perfetto_pending(api_perfetto *e) { return (unsigned)e->out.len; }
SL_EXPORT const char *sl_api_perfetto_data(api_perfetto *e) { return e->out.data; }
SL_EXPORT void sl_api_perfetto_clear(api_perfetto *e) { e->out.len = 0; }

/* Writes the end of the trace (drain it after) and frees the exporter but its buffer: SL_OK or SL_ENOMEM. */
SL_EXPORT int sl_api_perfetto_end(api_perfetto *e)
{
    int rc = sl_perfetto_end(e->p);
    e->p = NULL;
    return rc == SL_OK && !e->out.failed ? SL_OK : SL_ENOMEM;
}

SL_EXPORT void sl_api_perfetto_free(api_perfetto *e)
{
    if (!e)
        return;
    if (e->p)
        sl_perfetto_end(e->p);
    for (unsigned i = 0; i < e->nnames; i++)
        free(e->names[i]);
    free(e->names);
    sl_strbuf_free(&e->out);
    free(e);
}
