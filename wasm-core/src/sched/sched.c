/*
 * sched.c - the deterministic driver (see sched.h).
 *
 * One run owns the trace's preemption hook while it executes.  The hook
 * counts micro-steps, emits a PREEMPT_POINT event for each, takes the stop
 * snapshot, and fires an injected handler when the outer operation (depth 1)
 * reaches the chosen point for the chosen time.  Handlers run at depth 2 and
 * never get interrupts of their own, as an interrupt handler runs with
 * interrupts off.
 */
#include "sched.h"

#include <string.h>

#define MAX_BULK 1024

typedef struct run_state {
    sl_sched_run *r;
    uint32_t cur_op;         /* index of the outer op running */
    unsigned depth;          /* 1 in an outer op, 2 in a handler */
    uint16_t arrivals[8][8]; /* per irq: arrivals of cur_op at each point id 0..7 */
    bool stopped;
} run_state;

static int check_op(const sl_sched_run *r, const sl_sched_op *op, bool handler)
{
    unsigned ncpus = sl_slub_cache_ncpus(r->cache);
    if (op->cpu >= ncpus)
        return SL_EINVAL;
    switch (op->kind) {
    case SL_SCHED_ALLOC:
    case SL_SCHED_FLUSH:
    case SL_SCHED_RCU_GP:
        return SL_OK;
    case SL_SCHED_KFREE_RCU:
    case SL_SCHED_KFREE_NOLOCK:
        return op->first < r->nrefs ? SL_OK : SL_EINVAL;
    case SL_SCHED_KFREE_RCU_NOLOCK:
        return op->first < r->nrefs && op->count <= 1 ? SL_OK : SL_EINVAL;
    case SL_SCHED_KMALLOC_NOLOCK:
    case SL_SCHED_IRQ_WORK:
        return SL_OK;
    case SL_SCHED_ALLOC_GFP:
        return op->count == SL_SLUB_GFP_ATOMIC || op->count == SL_SLUB_GFP_NOWAIT ? SL_OK : SL_EINVAL;
    case SL_SCHED_PREFILL:
    case SL_SCHED_REFILL_SHEAF:
        return r->sheaf_slots && SL_SCHED_SLOT(op) < SL_SCHED_SHEAF_SLOTS && SL_SCHED_GFP(op) <= SL_SLUB_GFP_NOWAIT &&
                       op->first >> 16 == 0
                   ? SL_OK
                   : SL_EINVAL;
    case SL_SCHED_ALLOC_FROM_SHEAF:
    case SL_SCHED_RETURN_SHEAF:
        return r->sheaf_slots && op->first < SL_SCHED_SHEAF_SLOTS ? SL_OK : SL_EINVAL;
    case SL_SCHED_SHRINK:
    case SL_SCHED_BOOTSTRAP:
    case SL_SCHED_CPU_DEAD:
    case SL_SCHED_CPU_ONLINE:
        return handler ? SL_EINVAL : SL_OK; /* process context (CPU hotplug, every CPU) */
    case SL_SCHED_ALLOC_BULK:
        return op->count <= MAX_BULK && op->first <= SL_SLUB_GFP_NOWAIT ? SL_OK : SL_EINVAL;
    case SL_SCHED_FREE:
        return op->first < r->nrefs ? SL_OK : SL_EINVAL;
    case SL_SCHED_FREE_BULK:
        return op->count <= MAX_BULK && (uint64_t)op->first + op->count <= r->nrefs ? SL_OK : SL_EINVAL;
    }
    return SL_EINVAL;
}

/* Runs one operation as CPU `cpu` (in_irq: as an interrupt's handler); returns its result. */
static int32_t do_op(const sl_sched_run *r, const sl_sched_op *op, unsigned cpu, bool in_irq)
{
    sl_slub_cache *s = r->cache;
    void *objs[MAX_BULK];
    switch (op->kind) {
    case SL_SCHED_ALLOC: {
        void *o;
        return sl_slub_alloc(s, cpu, &o);
    }
    case SL_SCHED_FREE: {
        const sl_sched_ref *ref = &r->refs[op->first];
        void *o = sl_slub_object_at(s, ref->pfn, ref->index);
        /* A reference to no object of this cache frees a pointer the model will call foreign. */
        return sl_slub_free(s, cpu, o ? o : (void *)(uintptr_t)1);
    }
    case SL_SCHED_ALLOC_BULK:
        return sl_slub_alloc_bulk_gfp(s, cpu, (sl_slub_gfp)op->first, op->count, objs);
    case SL_SCHED_FREE_BULK:
        for (unsigned i = 0; i < op->count; i++) {
            const sl_sched_ref *ref = &r->refs[op->first + i];
            void *o = sl_slub_object_at(s, ref->pfn, ref->index);
            objs[i] = o ? o : (void *)(uintptr_t)1;
        }
        return sl_slub_free_bulk(s, cpu, op->count, objs, NULL);
    case SL_SCHED_FLUSH:
        return sl_slub_flush_cpu(s, cpu);
    case SL_SCHED_KFREE_RCU: {
        const sl_sched_ref *ref = &r->refs[op->first];
        void *o = sl_slub_object_at(s, ref->pfn, ref->index);
        return sl_slub_kfree_rcu(s, cpu, o ? o : (void *)(uintptr_t)1);
    }
    case SL_SCHED_RCU_GP:
        return sl_slub_rcu_grace_period(s, cpu);
    case SL_SCHED_PREFILL: {
        sl_slub_sheaf **slot = &r->sheaf_slots[SL_SCHED_SLOT(op)];
        return *slot ? SL_EBUSY : sl_slub_prefill_sheaf_gfp(s, cpu, (sl_slub_gfp)SL_SCHED_GFP(op), op->count, slot);
    }
    case SL_SCHED_ALLOC_FROM_SHEAF: {
        void *o;
        return sl_slub_alloc_from_sheaf(s, cpu, r->sheaf_slots[op->first], &o);
    }
    case SL_SCHED_REFILL_SHEAF:
        return sl_slub_refill_sheaf_gfp(s, cpu, (sl_slub_gfp)SL_SCHED_GFP(op), &r->sheaf_slots[SL_SCHED_SLOT(op)],
                                        op->count);
    case SL_SCHED_RETURN_SHEAF: {
        int rc = sl_slub_return_sheaf(s, cpu, r->sheaf_slots[op->first]);
        if (rc == SL_OK)
            r->sheaf_slots[op->first] = NULL;
        return rc;
    }
    case SL_SCHED_SHRINK: {
        int remaining;
        int rc = sl_slub_shrink(s, &remaining);
        return rc == SL_OK ? remaining : rc;
    }
    case SL_SCHED_BOOTSTRAP:
        return sl_slub_bootstrap_sheaves(s);
    case SL_SCHED_ALLOC_GFP: {
        void *o;
        return sl_slub_alloc_gfp(s, cpu, (sl_slub_gfp)op->count, &o);
    }
    case SL_SCHED_KMALLOC_NOLOCK: {
        void *o;
        return sl_slub_kmalloc_nolock(s, cpu, &o);
    }
    case SL_SCHED_KFREE_NOLOCK: {
        const sl_sched_ref *ref = &r->refs[op->first];
        void *o = sl_slub_object_at(s, ref->pfn, ref->index);
        return sl_slub_kfree_nolock(s, cpu, o ? o : (void *)(uintptr_t)1);
    }
    case SL_SCHED_IRQ_WORK:
        return sl_slub_irq_work(s, cpu);
    case SL_SCHED_CPU_DEAD:
        return sl_slub_cpu_dead(s, cpu);
    case SL_SCHED_CPU_ONLINE:
        return sl_slub_cpu_online(s, cpu);
    case SL_SCHED_KFREE_RCU_NOLOCK: {
        const sl_sched_ref *ref = &r->refs[op->first];
        void *o = sl_slub_object_at(s, ref->pfn, ref->index);
        /* a hard interrupt's handler always runs with interrupts off */
        return sl_slub_kfree_rcu_nolock(s, cpu, o ? o : (void *)(uintptr_t)1, op->count == 1 || in_irq);
    }
    }
    return SL_EINVAL;
}

static void emit(sl_trace *tr, unsigned cpu, unsigned kind, uint32_t arg0, uint32_t arg1, uint32_t arg2)
{
#if !defined(SLABLAB_BENCH)
    if (tr && tr->enabled && cpu < tr->ncpus) {
        sl_event ev = {.op = 0,
                       .cpu = (uint16_t)cpu,
                       .kind = (uint16_t)kind,
                       .cache = 0xffff,
                       .slab = SL_NONE32,
                       .obj = SL_NONE32,
                       .arg0 = arg0,
                       .arg1 = arg1,
                       .arg2 = arg2};
        sl_trace_emit(tr, &ev);
    }
#else
    (void)tr, (void)cpu, (void)kind, (void)arg0, (void)arg1, (void)arg2;
#endif
}

static void hook(sl_trace *tr, unsigned cpu, unsigned point, unsigned line, const void *ctx, void *user)
{
    run_state *st = user;
    sl_sched_run *r = st->r;
    const sl_slub_pp_ctx *pc = ctx;
    r->microsteps++;
    emit(tr, cpu, SL_EV_PREEMPT_POINT, point, pc ? pc->op : 0, line);
    if (r->microsteps == r->stop_at_microstep) {
        bool freeing =
            point == SL_SLUB_PP_FREE_BEFORE_CAS || point == SL_SLUB_PP_SLAB_FREE || point == SL_SLUB_PP_BULK_GROUP;
        r->snap_len = sl_slub_snapshot_inflight(r->cache, r->snap_buf, r->snap_cap, freeing ? pc : NULL);
        r->stop_op = st->cur_op;
        st->stopped = true;
    }
    if (st->depth != 1)
        return;
    for (uint32_t i = 0; i < r->nirqs && i < 8; i++) {
        const sl_sched_irq *irq = &r->irqs[i];
        if (irq->at_op != st->cur_op || irq->point != point || point >= 8)
            continue;
        if (st->arrivals[i][point]++ != irq->nth)
            continue;
        emit(tr, cpu, SL_EV_INTERRUPT_BEGIN, point, 0, 0);
        st->depth = 2;
        int32_t rc = do_op(r, &irq->handler, cpu, true);
        st->depth = 1;
        if (r->irqs_fired < 8)
            r->irq_results[r->irqs_fired] = rc;
        r->irqs_fired++;
        emit(tr, cpu, SL_EV_INTERRUPT_END, point, (uint32_t)rc, 0);
    }
}

int sl_sched_execute(sl_sched_run *r)
{
    if (!r || !r->cache || !r->trace || (r->nops && !r->ops) || (r->nrefs && !r->refs) || (r->nirqs && !r->irqs) ||
        r->nirqs > 8)
        return SL_EINVAL;
    for (uint32_t i = 0; i < r->nops; i++)
        if (check_op(r, &r->ops[i], false) != SL_OK)
            return SL_EINVAL;
    for (uint32_t i = 0; i < r->nirqs; i++) {
        sl_sched_op h = r->irqs[i].handler;
        h.cpu = 0;
        if (check_op(r, &h, true) != SL_OK)
            return SL_EINVAL;
    }
    run_state st;
    memset(&st, 0, sizeof st);
    st.r = r;
    r->ops_done = 0;
    r->microsteps = 0;
    r->snap_len = 0;
    r->irqs_fired = 0;
    sl_preempt_hook_fn old_fn = r->trace->preempt_hook;
    void *old_user = r->trace->preempt_user;
    sl_trace_set_preempt_hook(r->trace, hook, &st);
    for (uint32_t i = 0; i < r->nops && !st.stopped; i++) {
        st.cur_op = i;
        st.depth = 1;
        int32_t rc = do_op(r, &r->ops[i], r->ops[i].cpu, false);
        st.depth = 0;
        if (r->results)
            r->results[i] = rc;
        r->ops_done = i + 1;
    }
    sl_trace_set_preempt_hook(r->trace, old_fn, old_user);
    return SL_OK;
}
