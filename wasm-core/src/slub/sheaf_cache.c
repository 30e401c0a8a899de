/*
 * sheaf_cache.c - a cache's sheaves as its kernel version gives them, and
 * the API over them: kfree_rcu and the model's grace period, the prefill
 * API, bootstrap_cache_sheaves (sheaves.c holds the sheaves themselves).
 *
 * Which cache gets sheaves (eras.h):
 *   6.18  a cache created with a sheaf_capacity and no debug flags (in 6.18
 *         vm_area_struct and maple_node ask for 32); they sit over the
 *         per-CPU slab: refills are __kmem_cache_alloc_bulk's CPU-freelist
 *         loop, flushes __kmem_cache_free_bulk's detached freelists into
 *         do_slab_free;
 *   7.0   every cache, with calculate_sheaf_capacity's size (0 for a debug
 *         cache, which keeps the bootstrap sheaf and always takes the slab
 *         path); a kmalloc cache created before bootstrap_cache_sheaves
 *         (early_boot) has the bootstrap sheaf until sl_slub_bootstrap_sheaves.
 *         Refills are refill_objects, flushes detached freelists into
 *         __slab_free (nocpu.c).
 *
 * kfree_rcu: kvfree_call_rcu tries the CPU's rcu_free sheaf
 * (__kfree_rcu_sheaf; never on a PREEMPT_RT 7.x kernel, where
 * kvfree_call_rcu bypasses the sheaves entirely); an object no sheaf takes
 * waits alone, on the CPU's rcu_wait list, linked through its free pointer
 * slot (the kernel batches such objects in kfree_rcu_cpu's pages; the model
 * keeps the wait, not the batching).  After the grace period those objects
 * go through kfree_bulk, which is kmem_cache_free_bulk(NULL, ...): detached
 * freelists straight to their slabs, never onto sheaves (FREE_SLOWPATH per
 * object in 7.x).  The free hook (double free, red zone, tracking) runs when
 * kfree_rcu is called; after the grace period only the free itself.  A
 * grace period is an explicit step per CPU (sl_slub_rcu_grace_period): the
 * callbacks that CPU queued run, in order; sl_slub_rcu_barrier is
 * kvfree_rcu_barrier (flush_all_rcu_sheaves, then every grace period).
 * sl_slub_cpu_dead is slub_cpu_dead's __pcs_flush_all_cpu.
 *
 * kfree_rcu_nolock (7.3, kfree_call_rcu_nolock): __kfree_rcu_sheaf with
 * SLAB_FREE_NOLOCK (on PREEMPT_RT too), the object's free check run now as
 * kfree_rcu's is; an object the sheaf cannot take goes on the CPU's
 * rcu_defer list
 * (defer_kfree_rcu: deferred_percpu_work's objects_by_rcu, linked through
 * the free pointer slot where the kernel links the object's kvfree_rcu_head),
 * and the CPU's irq_work (sl_slub_irq_work) hands each, newest first, to
 * kvfree_call_rcu: kfree_rcu's own path.  A full rcu sheaf filled by
 * kfree_rcu_nolock with interrupts off waits on sheaves.c's rcu_irq list for
 * the same irq_work, which then calls call_rcu on it.
 *
 * Locks: rcu_wait and rcu_defer are the CPU's own (its thread only); the
 * rest is sheaves.c's.
 */
#include "sheaves.h"

#include <string.h>

/* __kmem_cache_alloc_bulk over the per-CPU slab: all or nothing, so min does not matter. */
static unsigned refill_from_cpu_slab(sli_act *a, void **p, unsigned min, unsigned max)
{
    (void)min;
    return sli_slub_alloc_bulk_cpu(a, max, p);
}
static const sli_slab_ops opt_in_ops = {refill_from_cpu_slab, sli_slub_free_bulk_slabs, sli_slub_alloc_bulk_slabs};
static const sli_slab_ops nocpu_ops = {sli_slub_refill_objects, sli_slub_free_bulk_slabs, sli_slub_alloc_bulk_slabs};

/* An act for work done outside any operation (creation, destruction), as CPU cpu with op 0. */
static sli_act quiet_act(sl_slub_cache *s, unsigned cpu)
{
    return (sli_act){.s = s, .c = &s->cpu[cpu], .op = 0, .cpu = (uint16_t)cpu};
}

int sli_slub_sheaves_create(sl_slub_cache *s, const sl_slub_config *cfg)
{
    if (s->rules.sheaves == SL_SLUB_SHEAVES_NONE)
        return SL_OK;
    uint32_t capacity = sl_slub_sheaf_capacity(s->rules.version, s->g.size, s->flags, cfg->sheaf_capacity);
    if (s->rules.sheaves == SL_SLUB_SHEAVES_OPT_IN && !capacity)
        return SL_OK;
    if (cfg->sheaf_capacity_exact && cfg->sheaf_capacity && capacity)
        capacity = cfg->sheaf_capacity;
    uint32_t boot_capacity = capacity;
    if (cfg->early_boot)
        capacity = 0;
    sli_sheaves *sh = sl_os_alloc_aligned(sizeof *sh, SL_CACHELINE);
    if (!sh)
        return SL_ENOMEM;
    sli_act a = quiet_act(s, 0);
    int rc =
        sli_sheaves_init(sh, &a, s->ncpus, capacity, cfg->max_sheaves, s->rules.cpu_slab ? &opt_in_ops : &nocpu_ops);
    if (rc != SL_OK) {
        sl_os_free(sh);
        return rc;
    }
    /*
     * Barns (sheaves.h): 6.18 and 7.0 one in each kmem_cache_node, found by
     * numa_mem_id(); 7.1 one for each node in slab_barn_nodes (N_ONLINE:
     * nodes with memory and memoryless ones with an online CPU), found by
     * numa_node_id().  The model gives a cache whose sheaves are off
     * (capacity 0) its barns too; no path reaches them.
     */
    sh->barn_per_node = s->rules.barn_per_node;
    sh->barn_nodes = s->mem_nodes;
    for (unsigned c = 0; c < s->ncpus; c++) {
        if (sh->barn_per_node && ((s->online_cpus >> c) & 1u))
            sh->barn_nodes |= (uint8_t)(1u << s->cpu_nid[c]);
        sh->barn_nid[c] = sh->barn_per_node ? s->cpu_nid[c] : s->cpu_mem_nid[c];
    }
    sh->main_to_spare = s->rules.era == SL_SLUB_ERA_SHEAVES;
    sh->relock_trylock = s->rules.relock_trylock;
    sh->oversize_counted = s->rules.oversize_counted;
    sh->refill_nonblocking = s->rules.refill_nonblocking;
    sh->rcu_undo_frees = s->rules.kfree_rcu_nolock;
    sh->boot_capacity = boot_capacity;
    s->sheaves = sh;
    return SL_OK;
}

void sli_slub_sheaves_destroy(sl_slub_cache *s, sli_act *a)
{
    if (!s->sheaves)
        return;
    sli_sheaves_destroy(s->sheaves, a);
    sl_os_free(s->sheaves);
    s->sheaves = NULL;
}

uint32_t sl_slub_cache_sheaf_capacity(const sl_slub_cache *s) { return s->sheaves ? s->sheaves->capacity : 0; }

int sl_slub_bootstrap_sheaves(sl_slub_cache *s)
{
    if (!s || !s->sheaves || sli_sheaves_active(s->sheaves) || sli_kmem_cache_debug(s))
        return SL_EINVAL;
    sli_act a = quiet_act(s, 0);
    int rc = sli_sheaves_bootstrap(s->sheaves, &a, s->sheaves->boot_capacity);
    if (rc == SL_OK)
        sli_slub_set_leaf(s);
    return rc;
}

/* ---- kfree_rcu ---------------------------------------------------------- */

/* OP_BEGIN/OP_END's operation codes: the driver's (sl_sched_kind), as SLI_OPC_* are. */
enum {
    OPC_KFREE_RCU = 6,
    OPC_RCU_GP = 7,
    OPC_PREFILL = 8,
    OPC_ALLOC_FROM_SHEAF = 9,
    OPC_REFILL_SHEAF = 10,
    OPC_RETURN_SHEAF = 11,
    OPC_CPU_DEAD = 21,
    OPC_CPU_ONLINE = 22,
    OPC_KFREE_RCU_NOLOCK = 23
};

/*
 * kvfree_call_rcu of a checked object (kfree_rcu, and the irq_work for what
 * kfree_rcu_nolock deferred): the rcu_free sheaf, else the wait alone.  On
 * PREEMPT_RT 7.x never the sheaf (7.3 as read at 5541d897, "disallow
 * kfree_rcu_sheaf() on PREEMPT_RT again").  Runs with interrupts on.
 */
void sli_slub_kvfree_call_rcu(sli_act *a, sli_slub_slab *slab, void *obj)
{
    sl_slub_cache *s = a->s;
    bool try_sheaf = s->sheaves && !(s->fastpath == SL_SLUB_FP_RT && !s->rules.cpu_slab);
    /* kfree_rcu_sheaf: only an object of the CPU's memory node (slab_nid(slab) == numa_mem_id()) */
    try_sheaf = try_sheaf && !sli_slab_remote(a, slab);
    if (try_sheaf && sli_kfree_rcu_sheaf(s->sheaves, a, obj, false))
        return;
    uint32_t waiting = 1;
    for (void *o = a->c->rcu_wait; o; o = sli_get_fp(s, o))
        waiting++;
    sli_set_fp(s, obj, a->c->rcu_wait);
    a->c->rcu_wait = obj;
    SLI_EV(a, SLUB_RCU_WAIT, slab, obj, waiting, 0, 0);
    (void)waiting; /* benchmark builds have no events */
}

int sl_slub_kfree_rcu(sl_slub_cache *s, unsigned cpu, void *obj)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_KFREE_RCU, 1, obj);
    int err;
    sli_slub_slab *slab = sli_slub_free_check(&a, obj, &err);
    if (slab)
        sli_slub_kvfree_call_rcu(&a, slab, obj);
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_KFREE_RCU, slab ? SL_OK : err, NULL);
    return slab ? SL_OK : err;
}

int sl_slub_kfree_rcu_nolock(sl_slub_cache *s, unsigned cpu, void *obj, bool irqs_off)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a) || !s->rules.kfree_rcu_nolock)
        return SL_EINVAL;
    a.ctx = SLI_CTX_NOLOCK;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_KFREE_RCU_NOLOCK, 1, obj);
    int err;
    sli_slub_slab *slab = sli_slub_free_check(&a, obj, &err);
    /*
     * kfree_call_rcu_nolock: a cache without sheaves fails in the sheaf; so
     * does, in the model, another node's object (kfree_rcu_sheaf's
     * slab_nid test, taken to hold for the nolock entry too).
     */
    if (slab && !(s->sheaves && !sli_slab_remote(&a, slab) && sli_kfree_rcu_sheaf(s->sheaves, &a, obj, irqs_off))) {
        bool first = a.c->rcu_defer == NULL; /* llist_add true: irq_work_queue */
        sli_set_fp(s, obj, a.c->rcu_defer);
        a.c->rcu_defer = obj;
        SLI_EV(&a, SLUB_DEFER_FREE, slab, obj, first, 1, 0);
        (void)first; /* benchmark builds have no events */
    }
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_KFREE_RCU_NOLOCK, slab ? SL_OK : err, NULL);
    return slab ? SL_OK : err;
}

/*
 * kvfree_rcu's callback for the objects that waited alone: kfree_bulk, i.e.
 * kmem_cache_free_bulk(NULL, ...), whose detached freelists go straight to
 * the slabs (the hooks having run): the sheaves are bypassed.
 */
static unsigned free_waiting(sli_act *a)
{
    sl_slub_cache *s = a->s;
    void *list = a->c->rcu_wait, *batch[64];
    unsigned n = 0, k = 0;
    a->c->rcu_wait = NULL;
    while (list) {
        batch[k++] = list;
        list = sli_get_fp(s, list);
        n++;
        if (k == sizeof batch / sizeof batch[0] || !list) {
            if (!s->rules.cpu_slab)
                sli_stat(a, SL_SLUB_FREE_SLOWPATH, k);
            sli_slub_free_bulk_slabs(a, batch, k);
            k = 0;
        }
    }
    return n;
}

/* kernel: none (the model's explicit RCU grace period) */
int sl_slub_rcu_grace_period(sl_slub_cache *s, unsigned cpu)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_RCU_GP, 0, NULL);
    unsigned n = s->sheaves ? sli_sheaves_rcu_gp(s->sheaves, &a) : 0;
    unsigned alone = free_waiting(&a);
    if (alone)
        SLI_EV(&a, SLUB_RCU_FREE, NULL, NULL, alone, 0, 0);
    n += alone;
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_RCU_GP, (int32_t)n, NULL);
    return (int)n;
}

int sl_slub_rcu_barrier(sl_slub_cache *s)
{
    if (!s)
        return SL_EINVAL;
    int freed = 0;
    /* 7.3's flush_all_rcu_sheaves begins with deferred_work_barrier: every CPU's irq_work runs */
    if (s->rules.kfree_rcu_nolock)
        for (unsigned c = 0; c < s->ncpus; c++) {
            sli_act a;
            if (!sli_slub_begin(s, c, &a))
                return SL_EINVAL;
            if (s->sheaves && atomic_load_explicit(&s->sheaves->pcs[c].lock, memory_order_relaxed))
                return SL_EBUSY; /* irq_work_sync from inside a sheaf section would never return */
            int n = sl_slub_irq_work(s, c);
            if (n < 0)
                return n;
        }
    /* flush_all_rcu_sheaves: every CPU's rcu_free sheaf to call_rcu, then rcu_barrier(). */
    for (unsigned c = 0; c < s->ncpus; c++) {
        sli_act a;
        if (!sli_slub_begin(s, c, &a))
            return SL_EINVAL;
        if (s->sheaves && sli_pcs_flush_rcu(s->sheaves, &a) != SL_OK)
            return SL_EBUSY;
    }
    for (unsigned c = 0; c < s->ncpus; c++) {
        int n = sl_slub_rcu_grace_period(s, c);
        if (n < 0)
            return n;
        freed += n;
    }
    return freed;
}

int sl_slub_cpu_dead(sl_slub_cache *s, unsigned cpu)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    /* An operation as any other (OP_BEGIN/OP_END), so a stepping view stops inside its flushes. */
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_CPU_DEAD, 0, NULL);
    if (s->sheaves && atomic_load_explicit(&s->sheaves->pcs[cpu].lock, memory_order_relaxed)) {
        sli_slub_op_event(&a, SL_EV_OP_END, OPC_CPU_DEAD, SL_EBUSY, NULL);
        return SL_EBUSY; /* a CPU going offline runs nothing */
    }
    s->online_cpus &= (uint8_t) ~(1u << cpu); /* the barns stay: slub_cpu_dead frees none */
    /*
     * The kernel flushes the CPU slab first (__flush_cpu_slab, before 7.0),
     * then the sheaves (__pcs_flush_all_cpu), on the CPU running the
     * hotplug; the model acts as the dead CPU, so it flushes the sheaves
     * first: the slabs their objects fill go through its CPU partial list
     * on to the node lists, and the dead CPU keeps nothing.
     */
    int flushed = s->sheaves ? (int)sli_pcs_cpu_dead(s->sheaves, &a) : 0;
    if (s->rules.cpu_slab)
        sli_slub_flush_cpu_slab(&a);
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_CPU_DEAD, flushed, NULL);
    return flushed;
}

bool sl_slub_barn_info_get(sl_slub_cache *s, unsigned nid, sl_slub_barn_info *out)
{
    memset(out, 0, sizeof *out);
    if (!s || nid >= s->nr_nodes)
        return false;
    sli_sheaves *sh = s->sheaves;
    if (sh && ((sh->barn_nodes >> nid) & 1u)) {
        out->present = 1;
        out->nr_full = __atomic_load_n(&sh->barn[nid].nr_full, __ATOMIC_RELAXED);
        out->nr_empty = __atomic_load_n(&sh->barn[nid].nr_empty, __ATOMIC_RELAXED);
    }
    return true;
}

int sl_slub_cpu_online(sl_slub_cache *s, unsigned cpu)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_CPU_ONLINE, 0, NULL);
    s->online_cpus |= (uint8_t)(1u << cpu);
    sli_sheaves *sh = s->sheaves;
    unsigned nid = s->cpu_nid[cpu];
    int made = 0; /* before 7.1 barns live with the memory nodes; or the node has its barn */
    if (sh && sh->barn_per_node && !((sh->barn_nodes >> nid) & 1u)) {
        memset(&sh->barn[nid], 0, sizeof sh->barn[nid]); /* barn_init */
        sh->barn_nodes |= (uint8_t)(1u << nid);
        made = 1;
    }
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_CPU_ONLINE, made, NULL);
    return made;
}

bool sl_slub_cpu_is_online(const sl_slub_cache *s, unsigned cpu)
{
    return s && cpu < s->ncpus && ((s->online_cpus >> cpu) & 1u);
}

/* ---- the prefill API ------------------------------------------------------ */

/* The handle is the sheaf itself; the cast is checked against the cache's list of sheaves out. */
static sli_sheaf *own_sheaf(sl_slub_cache *s, const sl_slub_sheaf *handle)
{
    sli_sheaf *sheaf = (sli_sheaf *)(uintptr_t)handle;
    return s->sheaves && sheaf && sli_sheaf_is_prefilled(s->sheaves, sheaf) ? sheaf : NULL;
}

int sl_slub_prefill_sheaf(sl_slub_cache *s, unsigned cpu, uint32_t size, sl_slub_sheaf **out)
{
    return sl_slub_prefill_sheaf_gfp(s, cpu, SL_SLUB_GFP_KERNEL, size, out);
}

int sl_slub_prefill_sheaf_gfp(sl_slub_cache *s, unsigned cpu, sl_slub_gfp gfp, uint32_t size, sl_slub_sheaf **out)
{
    sli_act a;
    int ctx = sli_ctx_of_gfp(gfp);
    if (out)
        *out = NULL;
    if (ctx < 0 || !out || !sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    a.ctx = (uint8_t)ctx;
    /* Every operation that began is bracketed, refused or not: a stepping view counts operations by them. */
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_PREFILL, (int32_t)size, NULL);
    int err = SL_EINVAL;
    /* A cache whose sheaves are off (capacity 0) gets an oversize sheaf: size > sheaf_capacity. */
    if (s->sheaves)
        *out = (sl_slub_sheaf *)sli_prefill_sheaf(s->sheaves, &a, size, &err);
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_PREFILL, err, NULL);
    return err;
}

int sl_slub_refill_sheaf(sl_slub_cache *s, unsigned cpu, sl_slub_sheaf **handle, uint32_t size)
{
    return sl_slub_refill_sheaf_gfp(s, cpu, SL_SLUB_GFP_KERNEL, handle, size);
}

int sl_slub_refill_sheaf_gfp(sl_slub_cache *s, unsigned cpu, sl_slub_gfp gfp, sl_slub_sheaf **handle, uint32_t size)
{
    sli_act a;
    int ctx = sli_ctx_of_gfp(gfp);
    if (ctx < 0 || !handle || !sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    a.ctx = (uint8_t)ctx;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_REFILL_SHEAF, (int32_t)size, NULL);
    sli_sheaf *sheaf = own_sheaf(s, *handle);
    int rc = sheaf ? sli_refill_sheaf(s->sheaves, &a, &sheaf, size) : SL_EINVAL;
    if (sheaf)
        *handle = (sl_slub_sheaf *)sheaf;
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_REFILL_SHEAF, rc, NULL);
    return rc;
}

int sl_slub_alloc_from_sheaf(sl_slub_cache *s, unsigned cpu, sl_slub_sheaf *handle, void **obj)
{
    sli_act a;
    if (!obj || !sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    *obj = NULL;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_ALLOC_FROM_SHEAF, 1, NULL);
    sli_sheaf *sheaf = own_sheaf(s, handle);
    void *p = sheaf ? sli_alloc_from_sheaf(s->sheaves, &a, sheaf) : NULL;
    int rc = !sheaf ? SL_EINVAL : p ? SL_OK : SL_ENOMEM;
    if (p && s->debug_hooks)
        rc = sli_slub_alloc_hook(&a, p);
    *obj = rc == SL_OK ? p : NULL;
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_ALLOC_FROM_SHEAF, rc, *obj);
    return rc;
}

int sl_slub_return_sheaf(sl_slub_cache *s, unsigned cpu, sl_slub_sheaf *handle)
{
    sli_act a;
    if (!sli_slub_begin(s, cpu, &a))
        return SL_EINVAL;
    sli_slub_op_event(&a, SL_EV_OP_BEGIN, OPC_RETURN_SHEAF, 0, NULL);
    int rc = s->sheaves ? sli_return_sheaf(s->sheaves, &a, (sli_sheaf *)(uintptr_t)handle) : SL_EINVAL;
    sli_slub_op_event(&a, SL_EV_OP_END, OPC_RETURN_SHEAF, rc, NULL);
    return rc;
}

uint32_t sl_slub_sheaf_size(const sl_slub_sheaf *handle)
{
    return handle ? ((const sli_sheaf *)(const void *)handle)->size : 0;
}

/* ---- figures ---------------------------------------------------------------- */

typedef struct count_ctx {
    sl_slub_sheaves_info *out;
} count_ctx;

static int count_sheaf(void *ctx, const sli_sheaf *sheaf, unsigned place, unsigned cpu)
{
    sl_slub_sheaves_info *out = ((count_ctx *)ctx)->out;
    (void)cpu;
    if (sheaf == &sli_bootstrap_sheaf)
        return 0;
    out->objects += sheaf->size;
    if (place == SLI_SHEAF_RCU_FREE || place == SLI_SHEAF_RCU_PENDING)
        out->rcu_waiting += sheaf->size;
    return 0;
}

void sl_slub_sheaves_info_get(sl_slub_cache *s, sl_slub_sheaves_info *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned c = 0; c < s->ncpus; c++) {
        for (void *o = s->cpu[c].rcu_wait; o; o = sli_get_fp(s, o))
            out->rcu_waiting++;
        for (void *o = s->cpu[c].rcu_defer; o; o = sli_get_fp(s, o)) /* on their way to kfree_rcu */
            out->rcu_waiting++;
    }
    if (!s->sheaves)
        return;
    sli_sheaves *sh = s->sheaves;
    out->capacity = sh->capacity;
    for (unsigned nid = 0; nid < SL_SLUB_MAX_NODES; nid++) {
        if (!((sh->barn_nodes >> nid) & 1u))
            continue;
        out->barn_full += __atomic_load_n(&sh->barn[nid].nr_full, __ATOMIC_RELAXED);
        out->barn_empty += __atomic_load_n(&sh->barn[nid].nr_empty, __ATOMIC_RELAXED);
    }
    out->sheaves = atomic_load_explicit(&sh->nr_sheaves, memory_order_relaxed);
    count_ctx ctx = {out};
    sli_sheaves_walk(sh, count_sheaf, &ctx);
}
