/*
 * trace.h - per-CPU event rings and preemption points.
 *
 * The models report what they do as fixed-size sl_event records written to
 * a ring owned by the CPU that acts.  Each ring has exactly one writer (the
 * thread acting as that CPU; in the single-threaded build, the scheduler on
 * that CPU's behalf) and one reader (the bridge, draining once per animation
 * frame).  `head` is written only by the writer and `tail` only by the
 * reader, both with release stores and read with acquire loads, so no lock
 * is needed.  A full ring drops the new event and counts it in `dropped`:
 * the writer never waits for the UI.
 *
 * Operation numbers: every API operation takes the next number from one
 * global atomic counter (sl_trace_op_begin), so an object can say which
 * operation allocated or freed it last.  Event sequence numbers: every
 * event takes the next number from another (in sl_trace_emit), so the
 * rings of CPUs running at once merge into the order the events happened;
 * an event emitted under a lock is ordered as the lock orders it.  Both
 * wrap at 2^32 (compare them as differences).  One CPU's events are in
 * its ring in emission order.
 *
 * Preemption points: SL_PREEMPT_POINT() marks the places inside a fast path
 * where the kernel could take an interrupt (between reading the tid and the
 * cmpxchg, say).  A hook installed with sl_trace_set_preempt_hook() runs
 * there; a scheduler uses it to micro-step or to run an "interrupt handler"
 * (another operation on the same CPU) in the middle of an operation.
 *
 * Benchmark builds (SLABLAB_BENCH) compile SL_EVENT and SL_PREEMPT_POINT to
 * nothing: the hot paths carry no tracing cost there.
 */
#ifndef SL_TRACE_H
#define SL_TRACE_H

#include "../platform/platform.h"

enum sl_event_kind {
#define SL_EVENT_KIND(name, num, doc) SL_EV_##name = num,
#include "events.def"
#undef SL_EVENT_KIND
};

#define SL_NONE32 UINT32_MAX

/* The record layout is part of the bridge protocol (web/core/events.ts). */
typedef struct sl_event {
    uint32_t op; /* operation number, or 0 outside an operation */
    uint16_t cpu;
    uint16_t kind;  /* enum sl_event_kind */
    uint16_t cache; /* cache id, or 0xffff */
    uint16_t flags; /* kind-specific */
    uint32_t slab;  /* pfn of the slab's first page, or SL_NONE32 */
    uint32_t obj;   /* object index in the slab, or SL_NONE32 */
    uint32_t arg0;
    uint32_t arg1;
    uint32_t arg2;
    uint32_t seq; /* global emission order (see above) */
} sl_event;
_Static_assert(sizeof(sl_event) == 36, "sl_event is 36 bytes");

typedef struct sl_ring {
    _Alignas(SL_CACHELINE) atomic_uint head; /* next slot to write: writer only */
    _Alignas(SL_CACHELINE) atomic_uint tail; /* next slot to read: reader only */
    atomic_uint dropped;                     /* events lost to a full ring */
    uint32_t mask;                           /* capacity - 1, capacity a power of two */
    sl_event *slots;
} sl_ring;

struct sl_trace;
/*
 * Runs at a preemption point.  `cpu` is the CPU inside the operation, `point`
 * a model-specific id (see the model's header), `line` the source line of the
 * SL_PREEMPT_POINT reached (one id may sit at several places, e.g. in the rt
 * and the cmpxchg fast paths: the line says which; the lab's code panel shows
 * it), `ctx` the model's view of the in-flight operation (documented beside
 * the point ids).
 */
typedef void (*sl_preempt_hook_fn)(struct sl_trace *tr, unsigned cpu, unsigned point, unsigned line, const void *ctx,
                                   void *user);

typedef struct sl_trace {
    unsigned ncpus;
    atomic_uint next_op;
    atomic_uint next_seq;
    bool enabled;
    sl_preempt_hook_fn preempt_hook;
    void *preempt_user;
    sl_ring *rings; /* ncpus rings */
} sl_trace;

/* Returns 0 or SL_ENOMEM.  ring_capacity is rounded up to a power of two. */
int sl_trace_init(sl_trace *tr, unsigned ncpus, unsigned ring_capacity);
void sl_trace_destroy(sl_trace *tr);
/* Reader side: copies up to `max` events of `cpu`'s ring to `out`; returns the count. */
unsigned sl_trace_drain(sl_trace *tr, unsigned cpu, sl_event *out, unsigned max);
void sl_trace_set_preempt_hook(sl_trace *tr, sl_preempt_hook_fn fn, void *user);
/* Writer side, used through the macros below. */
void sl_trace_emit(sl_trace *tr, const sl_event *ev);
uint32_t sl_trace_op_begin(sl_trace *tr);

#if defined(SLABLAB_BENCH)
/* Unevaluated (sizeof): no code, but what only an event reads still counts as read. */
#define SL_EVENT(tr, ...) ((void)sizeof(tr), (void)sizeof((sl_event){__VA_ARGS__}))
#define SL_PREEMPT_POINT(tr, cpu, point, ctx) ((void)0)
#define SL_OP_BEGIN(tr) ((uint32_t)0)
#else
/*
 * SL_EVENT(tr, .op = .., .cpu = .., .kind = SL_EV_X, ...): fields not named
 * default to "none" (cache 0xffff, slab and obj SL_NONE32, the rest 0).  The
 * defaults are designated first and overridden by the caller's, which the
 * override-init warning would flag; that is the intent here.
 */
#define SL_EVENT(tr, ...)                                                                                              \
    do {                                                                                                               \
        sl_trace *sl_ev_tr_ = (tr);                                                                                    \
        if (sl_ev_tr_ && sl_ev_tr_->enabled) {                                                                         \
            _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Woverride-init\"")                       \
                sl_event sl_ev_ = {.cache = 0xffff, .slab = SL_NONE32, .obj = SL_NONE32, __VA_ARGS__};                 \
            _Pragma("GCC diagnostic pop") sl_trace_emit(sl_ev_tr_, &sl_ev_);                                           \
        }                                                                                                              \
    } while (0)
#define SL_PREEMPT_POINT(tr, cpu, point, ctx)                                                                          \
    do {                                                                                                               \
        sl_trace *sl_pp_tr_ = (tr);                                                                                    \
        if (sl_pp_tr_ && sl_pp_tr_->preempt_hook)                                                                      \
            sl_pp_tr_->preempt_hook(sl_pp_tr_, (cpu), (point), __LINE__, (ctx), sl_pp_tr_->preempt_user);              \
    } while (0)
#define SL_OP_BEGIN(tr) ((tr) ? sl_trace_op_begin(tr) : 0u)
#endif

#endif /* SL_TRACE_H */
