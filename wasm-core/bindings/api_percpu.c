/*
 * api_percpu.c - the percpu model for the browser bridge: a world (one
 * percpu instance booted with its first chunk, and its event trace), one
 * operation per call, the snapshot and the event rings.  Every export is
 * documented in docs/snapshot-format.md ("percpu bridge API"), with the
 * snapshot's layout.
 *
 * Areas cross the bridge as (chunk id, offset) pairs, never as addresses:
 * chunk ids are deterministic, so replaying the same operations on a fresh
 * world names the same areas and gives the same snapshot, which is how the
 * lab steps back.  A pair that names no chunk is freed as a foreign
 * pointer (SL_EFOREIGN), as free_percpu of a stray pointer would be.
 *
 * The model locks internally (pcpu_lock, pcpu_alloc_mutex), so any thread
 * may call; each CPU's event ring has one writer, so operations acting as
 * one CPU must not run on two threads at once (the bridge calls one at a
 * time).  A null world is refused (SL_EINVAL, NaN, 0 events), never
 * followed.
 */
#include "export.h"

#include "../src/percpu/percpu.h"

#include <math.h>
#include <stdlib.h>

typedef struct sl_api_pcpu_world {
    sl_trace trace;
    sl_pcpu pc;
} sl_api_pcpu_world;

static int last_error;

/* Why the last sl_api_pcpu_create returned 0. */
SL_EXPORT int sl_api_pcpu_last_error(void) { return last_error; }

/*
 * A world: allocator kind (0 areamap, 1 bitmap, 2 scanhint), `units` CPUs,
 * units of unit_size bytes (0: 256 KiB), the first chunk's static,
 * reserved and dynamic sizes (sl_pcpu_config), and an event ring of
 * trace_ring events per CPU (0: no events).  Returns the world, or 0 with
 * sl_api_pcpu_last_error() set.
 */
SL_EXPORT sl_api_pcpu_world *sl_api_pcpu_create(uint32_t kind, uint32_t units, uint32_t unit_size, uint32_t static_size,
                                                uint32_t reserved_size, uint32_t dyn_size, uint32_t trace_ring)
{
    sl_api_pcpu_world *w = calloc(1, sizeof *w);
    if (!w) {
        last_error = SL_ENOMEM;
        return NULL;
    }
    sl_pcpu_config cfg = {.kind = (sl_pcpu_kind)kind,
                          .nr_units = units,
                          .unit_size = unit_size,
                          .static_size = static_size,
                          .reserved_size = reserved_size,
                          .dyn_size = dyn_size};
    int rc = SL_OK;
    if (trace_ring) {
        rc = units >= 1 && units <= SL_PCPU_MAX_UNITS ? sl_trace_init(&w->trace, units, trace_ring) : SL_EINVAL;
        cfg.trace = &w->trace;
    }
    if (rc == SL_OK)
        rc = sl_pcpu_init(&w->pc, &cfg);
    last_error = rc;
    if (rc != SL_OK) {
        sl_trace_destroy(&w->trace);
        free(w);
        return NULL;
    }
    return w;
}

SL_EXPORT void sl_api_pcpu_destroy(sl_api_pcpu_world *w)
{
    if (w) {
        sl_pcpu_destroy(&w->pc);
        sl_trace_destroy(&w->trace);
        free(w);
    }
}

/*
 * __alloc_percpu (reserved = 0) or __alloc_reserved_percpu (1) of size
 * bytes aligned to align, acting as cpu.  ref[0], ref[1] = the area's chunk
 * id and offset (NONE on failure).  Returns 0 or the negative sl_err.
 */
SL_EXPORT int sl_api_pcpu_alloc(sl_api_pcpu_world *w, uint32_t cpu, uint32_t size, uint32_t align, uint32_t reserved,
                                uint32_t *ref)
{
    void *p = NULL;
    if (!w || !ref)
        return SL_EINVAL;
    ref[0] = ref[1] = SL_NONE32;
    int rc = (reserved ? sl_pcpu_alloc_reserved : sl_pcpu_alloc)(&w->pc, cpu, size, align, &p);
    if (rc == SL_OK && !sl_pcpu_locate(&w->pc, p, &ref[0], &ref[1]))
        rc = SL_ECORRUPT; /* cannot happen: an area lies in its chunk */
    return rc;
}

/* The unit-0 address of (chunk, offset), or a pointer no chunk holds. */
static void *area(sl_api_pcpu_world *w, uint32_t chunk, uint32_t offset)
{
    void *p = sl_pcpu_address(&w->pc, chunk, offset);
    return p ? p : (void *)(uintptr_t)1;
}

/* free_percpu of (chunk, offset) acting as cpu: 0, or SL_EFOREIGN / SL_EMISALIGNED / SL_EDOUBLEFREE / SL_EINVAL. */
SL_EXPORT int sl_api_pcpu_free(sl_api_pcpu_world *w, uint32_t cpu, uint32_t chunk, uint32_t offset)
{
    if (!w || cpu >= w->pc.cfg.nr_units)
        return SL_EINVAL;
    return sl_pcpu_free(&w->pc, cpu, area(w, chunk, offset));
}

/*
 * One step of the lab's script (web/percpu/worker.ts) as ONE top-level
 * operation, however many areas it allocates or frees: step_begin emits
 * OP_BEGIN as cpu (arg0 = SL_API_PCPU_STEP_OPCODE + kind, kind 0 allocations
 * or 1 frees; arg1 = areas; arg2 = the size asked for, 0 for frees) and
 * returns the step's operation number; the step's sl_api_pcpu_alloc /
 * sl_api_pcpu_free calls follow, each an operation of its own nested inside,
 * with all its events; step_end emits OP_END (arg1 = the step's result,
 * arg2 = the nanoseconds its calls took, as the caller measured them).  So
 * the lab counts one stop per step, and a replay of the same steps on a
 * fresh world hands out the same operation numbers.  Without a trace,
 * nothing is recorded and step_begin returns 0; a bad kind or CPU is refused
 * (SL_NONE32, nothing recorded).
 */
#define SL_API_PCPU_STEP_OPCODE 16u

static bool step_ok(sl_api_pcpu_world *w, uint32_t cpu, uint32_t kind)
{
    return w && w->trace.rings && cpu < w->pc.cfg.nr_units && kind <= 1;
}

SL_EXPORT uint32_t sl_api_pcpu_step_begin(sl_api_pcpu_world *w, uint32_t cpu, uint32_t kind, uint32_t areas,
                                          uint32_t size)
{
    if (!w || !w->trace.rings)
        return 0;
    if (!step_ok(w, cpu, kind))
        return SL_NONE32;
    uint32_t op = SL_OP_BEGIN(&w->trace);
    SL_EVENT(&w->trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_OP_BEGIN, .arg0 = SL_API_PCPU_STEP_OPCODE + kind,
             .arg1 = areas, .arg2 = size);
    return op;
}

SL_EXPORT void sl_api_pcpu_step_end(sl_api_pcpu_world *w, uint32_t cpu, uint32_t op, uint32_t kind, int32_t result,
                                    uint32_t ns)
{
    if (step_ok(w, cpu, kind))
        SL_EVENT(&w->trace, .op = op, .cpu = (uint16_t)cpu, .kind = SL_EV_OP_END,
                 .arg0 = SL_API_PCPU_STEP_OPCODE + kind, .arg1 = (uint32_t)result, .arg2 = ns);
}

/* A 64-bit counter at (chunk, offset) lies inside its chunk's units: NULL if not. */
static void *counter(sl_api_pcpu_world *w, uint32_t chunk, uint32_t offset)
{
    return w && offset % 8 == 0 && offset + 8 <= (uint32_t)w->pc.unit_size ? sl_pcpu_address(&w->pc, chunk, offset)
                                                                           : NULL;
}

/* this_cpu_add of delta to the counter at (chunk, offset) as cpu: 0, or SL_EINVAL for no such counter or CPU. */
SL_EXPORT int sl_api_pcpu_add(sl_api_pcpu_world *w, uint32_t chunk, uint32_t offset, uint32_t cpu, int32_t delta)
{
    void *p = counter(w, chunk, offset);
    if (!p || cpu >= w->pc.cfg.nr_units)
        return SL_EINVAL;
    sl_pcpu_add(&w->pc, p, cpu, delta);
    return SL_OK;
}

/* percpu_counter_sum of the counter at (chunk, offset) (a double, exact to 2^53), NaN for no such counter. */
SL_EXPORT double sl_api_pcpu_sum(sl_api_pcpu_world *w, uint32_t chunk, uint32_t offset)
{
    void *p = counter(w, chunk, offset);
    return p ? (double)sl_pcpu_sum(&w->pc, p) : NAN;
}

/* The invariant checker: 0 or SL_ECORRUPT, and the sentence naming the first problem. */
SL_EXPORT int sl_api_pcpu_validate(sl_api_pcpu_world *w) { return w ? sl_pcpu_validate(&w->pc) : SL_EINVAL; }
SL_EXPORT const char *sl_api_pcpu_validate_message(sl_api_pcpu_world *w)
{
    return w ? sl_pcpu_validate_message(&w->pc) : "no world";
}

/* The snapshot (docs/snapshot-format.md) into buf: bytes written, or minus the bytes needed. */
SL_EXPORT int sl_api_pcpu_snapshot(sl_api_pcpu_world *w, void *buf, uint32_t cap)
{
    return w ? (int)sl_pcpu_snapshot(&w->pc, buf, cap) : SL_EINVAL;
}

/* The snapshot's fixed sizes and identity into out (see sl_pcpu_snapshot_layout); returns the count. */
SL_EXPORT int sl_api_pcpu_snapshot_layout(uint32_t *out) { return (int)sl_pcpu_snapshot_layout(out); }

/* Moves up to max events of CPU cpu's ring to out (36 bytes each); returns the count (0 without a trace). */
SL_EXPORT uint32_t sl_api_pcpu_drain(sl_api_pcpu_world *w, uint32_t cpu, sl_event *out, uint32_t max)
{
    return w && w->trace.rings && cpu < w->trace.ncpus ? sl_trace_drain(&w->trace, cpu, out, max) : 0;
}

/* Events CPU cpu's ring had no room for. */
SL_EXPORT uint32_t sl_api_pcpu_events_dropped(sl_api_pcpu_world *w, uint32_t cpu)
{
    return w && w->trace.rings && cpu < w->trace.ncpus ? atomic_load(&w->trace.rings[cpu].dropped) : 0;
}
