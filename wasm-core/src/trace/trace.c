/* trace.c - per-CPU event rings: see trace.h for who writes what. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

int sl_trace_init(sl_trace *tr, unsigned ncpus, unsigned ring_capacity)
{
    unsigned cap = 1;
    memset(tr, 0, sizeof *tr);
    if (ncpus == 0 || ring_capacity == 0)
        return SL_EINVAL;
    while (cap < ring_capacity)
        cap <<= 1;
    tr->rings = sl_os_alloc_aligned(sizeof(sl_ring) * ncpus, SL_CACHELINE);
    if (!tr->rings)
        return SL_ENOMEM;
    memset(tr->rings, 0, sizeof(sl_ring) * ncpus);
    tr->ncpus = ncpus;
    for (unsigned c = 0; c < ncpus; c++) {
        tr->rings[c].mask = cap - 1;
        tr->rings[c].slots = calloc(cap, sizeof(sl_event));
        if (!tr->rings[c].slots) {
            sl_trace_destroy(tr);
            return SL_ENOMEM;
        }
    }
    atomic_store(&tr->next_op, 1);
    tr->enabled = true;
    return SL_OK;
}

void sl_trace_destroy(sl_trace *tr)
{
    if (tr->rings) {
        for (unsigned c = 0; c < tr->ncpus; c++)
            free(tr->rings[c].slots);
        sl_os_free(tr->rings);
    }
    memset(tr, 0, sizeof *tr);
}

void sl_trace_emit(sl_trace *tr, const sl_event *ev)
{
    sl_assert(ev->cpu < tr->ncpus);
    sl_ring *r = &tr->rings[ev->cpu];
    unsigned head = atomic_load_explicit(&r->head, memory_order_relaxed);
    unsigned tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail > r->mask) {
        atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
        return;
    }
    sl_event *slot = &r->slots[head & r->mask];
    *slot = *ev;
    slot->seq = atomic_fetch_add_explicit(&tr->next_seq, 1, memory_order_relaxed);
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

unsigned sl_trace_drain(sl_trace *tr, unsigned cpu, sl_event *out, unsigned max)
{
    if (cpu >= tr->ncpus)
        return 0;
    sl_ring *r = &tr->rings[cpu];
    unsigned tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    unsigned head = atomic_load_explicit(&r->head, memory_order_acquire);
    unsigned n = 0;
    while (tail != head && n < max)
        out[n++] = r->slots[tail++ & r->mask];
    atomic_store_explicit(&r->tail, tail, memory_order_release);
    return n;
}

void sl_trace_set_preempt_hook(sl_trace *tr, sl_preempt_hook_fn fn, void *user)
{
    tr->preempt_hook = fn;
    tr->preempt_user = user;
}

uint32_t sl_trace_op_begin(sl_trace *tr) { return atomic_fetch_add_explicit(&tr->next_op, 1, memory_order_relaxed); }
