/*
 * api_slab.c - the SLAB model for the browser bridge (typed wrappers:
 * web/slab/slab-api.ts).  Every export is listed in docs/snapshot-format.md
 * ("SLAB bridge API"), with the layouts of the buffers it writes.
 *
 * A world is one simulated machine: an event trace and an sl_slab (page
 * zone, the kernel version's kmalloc caches, created caches), for 1..64
 * CPUs.  Objects cross the bridge as wasm32 pointers; the snapshot names
 * them as (slab pfn, index), and object_at / object_ref convert.  The
 * bridge calls one function at a time, so the quiescent calls (snapshot,
 * validate, shrink, cache create and destroy) are always quiescent here.
 *
 * Binary results are written into caller-provided buffers, all fields
 * little-endian 32-bit:
 *
 *   sl_slab_geometry (44 bytes): mgmt (0 OBJFREELIST, 1 NORMAL(leftover),
 *     2 NORMAL, 3 OFF), size, align, order, num, left, freelist_size,
 *     off_cache_size, colour_off, colour, waste.
 *   sl_slab_cache_info (176 bytes): name[64] (NUL-terminated), id,
 *     object_size, geometry (44 bytes as above), limit, batchcount,
 *     shared_limit, total_slabs, free_slabs, free_objects, active_objs,
 *     cpu_avail, shared_avail, grown, destroyed, alloc_hit, alloc_miss,
 *     free_hit, free_miss.
 *   the snapshot: docs/snapshot-format.md, checked with snapshot_layout.
 *
 * slab-types: the parser and classifier of src/slab/types.c, text in (a
 * /proc/slabinfo file or the --caches format), the JSON of `slablab
 * slab-types --format json` out.
 */
#include "export.h"

#include "../src/slab/slab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(sl_slab_geometry) == 44, "geometry layout");
_Static_assert(sizeof(sl_slab_cache_info) == 176, "cache info layout (wasm32)");

typedef struct sl_api_slab_world {
    sl_trace trace;
    sl_slab *sl;
    unsigned ncpus;
} sl_api_slab_world;

static int last_error;
static char last_message[256];

SL_EXPORT int sl_api_slab_geometry_size(void) { return (int)sizeof(sl_slab_geometry); }
SL_EXPORT int sl_api_slab_info_size(void) { return (int)sizeof(sl_slab_cache_info); }

/* The error of the last world_create, geometry or types call that failed. */
SL_EXPORT int sl_api_slab_last_error(void) { return last_error; }
/* What was wrong, in a sentence (slab-types: "line N: ..."). */
SL_EXPORT const char *sl_api_slab_last_message(void) { return last_message; }

static int fail(int rc, const char *msg)
{
    last_error = rc;
    snprintf(last_message, sizeof last_message, "%s", msg ? msg : sl_strerror(rc));
    return rc;
}

/* Geometry of one cache for a variant (rules 0 before, 1 after; kernel 0 = 6.7); returns 0 or an sl_err. */
SL_EXPORT int sl_api_slab_geometry(uint32_t object_size, uint32_t align, uint32_t flags, int rules, uint32_t kernel,
                                   int init_on_free, sl_slab_geometry *out)
{
    sl_slab_kmalloc_table kt;
    sl_slab_variant v = {.rules = (sl_slab_rules)rules, .kernel = kernel, .init_on_free = init_on_free != 0};
    int rc = sl_slab_kmalloc_table_init(&kt, &v);
    if (rc == SL_OK) {
        sl_slab_spec spec = {.object_size = object_size, .align = align, .flags = flags};
        rc = sl_slab_geometry_compute(&spec, &kt, out);
    }
    return rc == SL_OK ? SL_OK : fail(rc, NULL);
}

/*
 * A world of `ncpus` CPUs over `arena_mb` MiB for a variant, with event
 * rings of `ring_events` per CPU (0: no events).  Returns the handle, or 0
 * with last_error() set.
 */
SL_EXPORT sl_api_slab_world *sl_api_slab_create(unsigned ncpus, unsigned arena_mb, int rules, uint32_t kernel,
                                                int init_on_free, unsigned ring_events)
{
    sl_api_slab_world *w = calloc(1, sizeof *w);
    if (!w) {
        fail(SL_ENOMEM, NULL);
        return NULL;
    }
    int rc = ring_events ? sl_trace_init(&w->trace, ncpus ? ncpus : 1, ring_events) : SL_OK;
    w->trace.enabled = ring_events != 0;
    sl_slab_config cfg = {
        .ncpus = ncpus,
        .arena_bytes = (size_t)arena_mb << 20,
        .variant = {.rules = (sl_slab_rules)rules, .kernel = kernel, .init_on_free = init_on_free != 0},
        .trace = ring_events ? &w->trace : NULL};
    if (rc == SL_OK)
        rc = sl_slab_create(&cfg, &w->sl);
    w->ncpus = ncpus;
    if (rc != SL_OK) {
        if (ring_events)
            sl_trace_destroy(&w->trace);
        free(w);
        fail(rc, NULL);
        return NULL;
    }
    return w;
}

SL_EXPORT void sl_api_slab_destroy(sl_api_slab_world *w)
{
    if (!w)
        return;
    sl_slab_destroy(w->sl);
    if (w->trace.rings)
        sl_trace_destroy(&w->trace);
    free(w);
}

SL_EXPORT void *sl_api_slab_kmalloc(sl_api_slab_world *w, unsigned cpu, uint32_t size)
{
    return sl_slab_kmalloc(w->sl, cpu, size);
}

SL_EXPORT int sl_api_slab_kfree(sl_api_slab_world *w, unsigned cpu, void *p) { return sl_slab_kfree(w->sl, cpu, p); }

/* Creates a cache; returns its id (>= 20) or a negative sl_err. */
SL_EXPORT int sl_api_slab_cache_create(sl_api_slab_world *w, const char *name, uint32_t object_size, uint32_t align,
                                       uint32_t flags)
{
    sl_slab_spec spec = {.object_size = object_size, .align = align, .flags = flags};
    if (name) {
        size_t n = strnlen(name, SL_SLAB_NAME_MAX - 1);
        memcpy(spec.name, name, n);
    }
    sl_slab_cache *c;
    int rc = sl_slab_cache_create(w->sl, &spec, &c);
    if (rc != SL_OK)
        return rc;
    sl_slab_cache_info info;
    sl_slab_cache_info_get(c, &info);
    return (int)info.id;
}

/* kmem_cache_alloc / kmem_cache_free on the cache with this id. */
SL_EXPORT void *sl_api_slab_cache_alloc(sl_api_slab_world *w, unsigned id, unsigned cpu)
{
    sl_slab_cache *c = sl_slab_cache_by_id(w->sl, id);
    return c ? sl_slab_cache_alloc(c, cpu) : NULL;
}

SL_EXPORT int sl_api_slab_cache_free(sl_api_slab_world *w, unsigned id, unsigned cpu, void *p)
{
    sl_slab_cache *c = sl_slab_cache_by_id(w->sl, id);
    return c ? sl_slab_cache_free(c, cpu, p) : SL_EINVAL;
}

SL_EXPORT int sl_api_slab_cache_destroy(sl_api_slab_world *w, unsigned id)
{
    sl_slab_cache *c = sl_slab_cache_by_id(w->sl, id);
    return c ? sl_slab_cache_destroy(c) : SL_EINVAL;
}

/* Number of cache ids (kmalloc indexes the kernel lacks and destroyed caches keep theirs; their info call fails). */
SL_EXPORT int sl_api_slab_cache_count(sl_api_slab_world *w) { return (int)sl_slab_cache_count(w->sl); }

/* Writes the cache's sl_slab_cache_info; returns 0 or SL_EINVAL. */
SL_EXPORT int sl_api_slab_cache_info(sl_api_slab_world *w, unsigned id, sl_slab_cache_info *out)
{
    sl_slab_cache *c = sl_slab_cache_by_id(w->sl, id);
    if (!c)
        return SL_EINVAL;
    sl_slab_cache_info_get(c, out);
    return SL_OK;
}

/* The object at (pfn, index) of cache id, or 0. */
SL_EXPORT void *sl_api_slab_object_at(sl_api_slab_world *w, unsigned id, uint32_t pfn, uint32_t index)
{
    sl_slab_cache *c = sl_slab_cache_by_id(w->sl, id);
    return c ? sl_slab_object_at(c, pfn, index) : NULL;
}

/* out[0..1] = (pfn, index) of the object at p; returns 0, or SL_EFOREIGN when p is no object start. */
SL_EXPORT int sl_api_slab_object_ref(sl_api_slab_world *w, const void *p, uint32_t *out)
{
    return sl_slab_object_ref(w->sl, p, &out[0], &out[1]) ? SL_OK : SL_EFOREIGN;
}

SL_EXPORT void sl_api_slab_drain_cpu(sl_api_slab_world *w, unsigned cpu) { sl_slab_drain_cpu(w->sl, cpu); }

/* One cache_reap run on `cpu` at simulated time now_ms. */
SL_EXPORT void sl_api_slab_reap(sl_api_slab_world *w, unsigned cpu, uint32_t now_ms)
{
    sl_slab_reap(w->sl, cpu, now_ms);
}

SL_EXPORT int sl_api_slab_shrink(sl_api_slab_world *w) { return (int)sl_slab_shrink(w->sl); }

/*
 * One operation of the view's script (web/slab/worker.ts), recorded as ONE
 * operation: OP_BEGIN (arg0 = SL_API_SLAB_SCRIPT_OPCODE + kind) and OP_END (arg1 = the result), so that every step of a script is exactly
 * one top-level operation whatever it does inside (a batch of 10,000
 * kmallocs, a free the model refuses before it brackets anything).  OP_BEGIN's
 * arg1 is `count` (1 for kinds 3..5), its arg2 `arg`.  The
 * model's own operations are nested inside, with their events when `record`
 * is set; without it the inner calls record nothing (a long batch would
 * fill the rings and the timeline).  Kinds:
 *   0 kmalloc       `count` x kmalloc(arg) as `cpu`, the pointers to ptrs[]
 *   1 cache alloc   `count` x kmem_cache_alloc of cache id `arg`, to ptrs[]
 *   2 free          ptrs[0 .. count-1]: kfree when arg is 0xffff, else
 *                   kmem_cache_free of cache id `arg`; a NULL entry is a
 *                   name that matched no object (SL_EFOREIGN)
 *   3 drain         drain_cpu(cpu)
 *   4 reap          cache_reap on `cpu` at arg ms
 *   5 shrink        kmem_cache_shrink of every cache (as CPU 0)
 * Returns the objects allocated (allocs; SL_ENOMEM when none), the first
 * error of a free (the frees after it are not done), or the model's result.
 */
enum { SCRIPT_KMALLOC, SCRIPT_CACHE_ALLOC, SCRIPT_FREE, SCRIPT_DRAIN, SCRIPT_REAP, SCRIPT_SHRINK, SCRIPT_NKINDS };
#define SL_API_SLAB_SCRIPT_OPCODE 220u

static void script_event(sl_api_slab_world *w, uint32_t op, unsigned cpu, unsigned kind, uint32_t a0, uint32_t a1,
                         uint32_t a2)
{
    SL_EVENT(w->trace.rings ? &w->trace : NULL, .op = op, .cpu = (uint16_t)cpu, .kind = (uint16_t)kind, .arg0 = a0,
             .arg1 = a1, .arg2 = a2);
}

static int script_run(sl_api_slab_world *w, unsigned kind, unsigned cpu, uint32_t arg, uint32_t count, void **ptrs)
{
    sl_slab_cache *c = NULL;
    uint32_t done = 0;
    switch (kind) {
    case SCRIPT_KMALLOC:
        for (; done < count && (ptrs[done] = sl_slab_kmalloc(w->sl, cpu, arg)); done++)
            ;
        return done ? (int)done : SL_ENOMEM;
    case SCRIPT_CACHE_ALLOC:
        if (!(c = sl_slab_cache_by_id(w->sl, arg)))
            return SL_EINVAL;
        for (; done < count && (ptrs[done] = sl_slab_cache_alloc(c, cpu)); done++)
            ;
        return done ? (int)done : SL_ENOMEM;
    case SCRIPT_FREE:
        if (arg != 0xffffu && !(c = sl_slab_cache_by_id(w->sl, arg)))
            return SL_EINVAL;
        for (; done < count; done++) {
            int rc = !ptrs[done] ? SL_EFOREIGN
                     : c         ? sl_slab_cache_free(c, cpu, ptrs[done])
                                 : sl_slab_kfree(w->sl, cpu, ptrs[done]);
            if (rc != SL_OK)
                return rc;
        }
        return SL_OK;
    case SCRIPT_DRAIN:
        sl_slab_drain_cpu(w->sl, cpu);
        return SL_OK;
    case SCRIPT_REAP:
        sl_slab_reap(w->sl, cpu, arg);
        return SL_OK;
    default:
        return (int)sl_slab_shrink(w->sl);
    }
}

SL_EXPORT int sl_api_slab_script_op(sl_api_slab_world *w, unsigned kind, unsigned cpu, uint32_t arg, uint32_t count,
                                    void **ptrs, int record)
{
    if (kind >= SCRIPT_NKINDS || cpu >= w->ncpus || (kind <= SCRIPT_FREE && (!count || !ptrs)))
        return SL_EINVAL;
    if (kind > SCRIPT_FREE)
        count = 1;
    uint32_t op = SL_OP_BEGIN(w->trace.rings ? &w->trace : NULL);
    script_event(w, op, cpu, SL_EV_OP_BEGIN, SL_API_SLAB_SCRIPT_OPCODE + kind, count, arg);
    bool was = w->trace.enabled;
    w->trace.enabled = was && record;
    int rc = script_run(w, kind, cpu, arg, count, ptrs);
    w->trace.enabled = was;
    script_event(w, op, cpu, SL_EV_OP_END, SL_API_SLAB_SCRIPT_OPCODE + kind, (uint32_t)rc, 0);
    return rc;
}

/* sl_slab_validate; `why` (may be 0) gets a message of up to `whylen` bytes. */
SL_EXPORT int sl_api_slab_validate(sl_api_slab_world *w, char *why, unsigned whylen)
{
    return sl_slab_validate(w->sl, why, whylen);
}

/* The snapshot (docs/snapshot-format.md): bytes written, or minus the bytes needed. */
SL_EXPORT int sl_api_slab_snapshot(sl_api_slab_world *w, void *buf, unsigned cap)
{
    return (int)sl_slab_snapshot(w->sl, buf, cap);
}

/* Writes SL_SLAB_SNAPSHOT_LAYOUT_WORDS words (sl_slab_snapshot_layout); returns the count. */
SL_EXPORT int sl_api_slab_snapshot_layout(uint32_t *out)
{
    sl_slab_snapshot_layout(out);
    return SL_SLAB_SNAPSHOT_LAYOUT_WORDS;
}

/* Moves up to `max` events of the CPU's ring to out (36 bytes each); returns the count (0 without events). */
SL_EXPORT int sl_api_slab_drain_events(sl_api_slab_world *w, unsigned cpu, sl_event *out, unsigned max)
{
    return w->trace.rings ? (int)sl_trace_drain(&w->trace, cpu, out, max) : 0;
}

/* Events the CPU's ring had no room for since the world was made (0 without events). */
SL_EXPORT uint32_t sl_api_slab_events_dropped(sl_api_slab_world *w, unsigned cpu)
{
    return w->trace.rings && cpu < w->ncpus ? atomic_load(&w->trace.rings[cpu].dropped) : 0;
}

/*
 * slab-types on a text: format 0 a /proc/slabinfo file, 1 the --caches
 * format; kernel 0 = 6.7; rules_mask 1 before, 2 after, 3 both.  Returns
 * the JSON document (free it with sl_api_slab_free_string), or 0 with
 * last_error() and last_message() ("line N: ...") set.
 */
SL_EXPORT char *sl_api_slab_types(const char *text, unsigned len, int format, uint32_t kernel, int init_on_free,
                                  unsigned ncpus, unsigned rules_mask, const char *source)
{
    sl_slab_spec_list list = {0};
    sl_slab_types t = {0};
    char err[256] = "";
    sl_slab_variant v = {.kernel = kernel, .init_on_free = init_on_free != 0};
    int rc = format == 0   ? sl_slab_slabinfo_parse(text, len, &list, err, sizeof err)
             : format == 1 ? sl_slab_caches_parse(text, len, &list, err, sizeof err)
                           : SL_EINVAL;
    if (format != 0 && format != 1)
        snprintf(err, sizeof err, "format must be 0 (slabinfo) or 1 (caches list)");
    if (rc == SL_OK)
        rc = sl_slab_types_compute(&list, &v, ncpus, &t, err, sizeof err);
    char *json = NULL;
    if (rc == SL_OK) {
        json = sl_slab_types_json(&list, &t, source ? source : "", rules_mask & 3);
        if (!json)
            rc = SL_ENOMEM;
    }
    sl_slab_types_free(&t);
    sl_slab_spec_list_free(&list);
    if (rc != SL_OK)
        fail(rc, err[0] ? err : NULL);
    return json;
}

SL_EXPORT void sl_api_slab_free_string(char *s) { free(s); }
