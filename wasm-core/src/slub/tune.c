/*
 * tune.c - the SLUB model's sysfs tunables, as mm/slub.c (6.8+) stores
 * them: min_partial_store, cpu_partial_store (slub_set_cpu_partial then
 * flush_all) and shrink_store (__kmem_cache_shrink: flush_all then
 * __kmem_cache_do_shrink).
 *
 * Each runs with no operation in flight: they write s->g, which operations
 * read without a lock, and flush_all acts as every CPU in turn (the kernel
 * queues flush_cpu_slab on each CPU and waits for them; here the calling
 * thread runs them one after another, each counted as the CPU it flushes).
 * The shrink itself acts as CPU 0, as the writer of the sysfs file would
 * run on some CPU.  A tunable writes a SLUB_TUNE event.
 */
#include "sheaves.h"

enum { TUNE_MIN_PARTIAL = 0, TUNE_CPU_PARTIAL = 1, TUNE_SHRINK = 2 };

#define SHRINK_PROMOTE_MAX 32

/* has_pcs_used: the CPU's sheaves hold something (a spare, an rcu_free sheaf, objects on main). */
static bool has_pcs_used(const sl_slub_cache *s, unsigned k)
{
    const sli_pcs *pcs = s->sheaves && sli_sheaves_active(s->sheaves) ? &s->sheaves->pcs[k] : NULL;
    return pcs && (pcs->spare || pcs->rcu_free || pcs->main->size);
}

/*
 * flush_all: flush_cpu_slab on every CPU that has a CPU slab or CPU partial
 * slabs (has_cpu_slab) or sheaves in use (has_pcs_used, 6.18+).
 */
static void flush_all(sl_slub_cache *s)
{
    for (unsigned k = 0; k < s->ncpus; k++)
        if (s->cpu[k].slab || s->cpu[k].partial || has_pcs_used(s, k))
            sl_slub_flush_cpu(s, k);
}

int sl_slub_set_min_partial(sl_slub_cache *s, uint32_t min_partial)
{
    sli_act a;
    if (!sli_slub_begin(s, 0, &a))
        return SL_EINVAL;
    s->g.min_partial = min_partial;
    SLI_EV(&a, SLUB_TUNE, NULL, NULL, TUNE_MIN_PARTIAL, min_partial, 0);
    return SL_OK;
}

/* kernel: slub_set_cpu_partial */
int sl_slub_set_cpu_partial(sl_slub_cache *s, uint32_t objects)
{
    sli_act a;
    if (!sli_slub_begin(s, 0, &a) || (objects && (sli_kmem_cache_debug(s) || !s->rules.cpu_slab)))
        return SL_EINVAL; /* !kmem_cache_has_cpu_partial, or 7.0, which has no CPU partial lists */
    sli_slub_set_cpu_partial(&s->g, objects);
    SLI_EV(&a, SLUB_TUNE, NULL, NULL, TUNE_CPU_PARTIAL, objects, 0);
    flush_all(s);
    return SL_OK;
}

/* Appends slab to the chain *head .. *tail through slab->next (free on a node partial slab). */
static void chain_append(sli_slub_slab **head, sli_slub_slab **tail, sli_slub_slab *slab)
{
    slab->next = NULL;
    if (*tail)
        (*tail)->next = slab;
    else
        *head = slab;
    *tail = slab;
}

/*
 * __kmem_cache_do_shrink: under list_lock, every empty slab leaves the list
 * to be discarded, and slabs with 1..32 free objects go to promote[free - 1]
 * (each list_move puts it first there); the rest stay in order.  Then
 * promote[31] .. promote[0] are spliced onto the head in turn, so the list
 * reads: promote[0] (1 free object), promote[1], ..., promote[31], the
 * rest.  The model empties the list and adds the slabs back in that order.
 */
static uint32_t do_shrink(sli_act *a, sli_slub_node *n)
{
    sli_slub_slab *promote[SHRINK_PROMOTE_MAX] = {0}, *rest = NULL, *rest_tail = NULL, *discard = NULL;
    uint32_t discarded = 0;
    sli_list_lock(a, n);
    for (sli_slub_slab *slab = n->partial_head, *next; slab; slab = next) {
        next = slab->lnext;
        uintptr_t c = sl_dw_read(&slab->fc).hi;
        uint32_t free = sli_objects(c) - sli_inuse(c);
        sli_slub_remove_partial(a, slab);
        if (free == sli_objects(c)) {
            slab->next = discard;
            discard = slab;
        } else if (free <= SHRINK_PROMOTE_MAX) {
            slab->next = promote[free - 1];
            promote[free - 1] = slab;
        } else {
            chain_append(&rest, &rest_tail, slab);
        }
    }
    for (unsigned i = 0; i < SHRINK_PROMOTE_MAX; i++)
        for (sli_slub_slab *slab = promote[i], *next; slab; slab = next) {
            next = slab->next;
            slab->next = NULL;
            sli_slub_add_partial(a, slab, true);
        }
    for (sli_slub_slab *slab = rest, *next; slab; slab = next) {
        next = slab->next;
        slab->next = NULL;
        sli_slub_add_partial(a, slab, true);
    }
    sl_spin_unlock(&n->list_lock);
    while (discard) {
        sli_slub_slab *slab = discard;
        discard = slab->next;
        slab->next = NULL;
        sli_slub_discard_slab(a, slab); /* free_slab: no FREE_SLAB count on this path */
        discarded++;
    }
    return discarded;
}

int sl_slub_shrink(sl_slub_cache *s, int *remaining)
{
    if (!s)
        return SL_EINVAL;
    flush_all(s);
    sli_act a;
    if (!sli_slub_begin(s, 0, &a))
        return SL_EINVAL;
    if (s->sheaves)
        sli_barn_shrink(s->sheaves, &a); /* __kmem_cache_do_shrink, 6.18+: the barn first */
    uint32_t discarded = 0;
    for (unsigned nid = 0; nid < s->nr_nodes; nid++) /* for_each_kmem_cache_node */
        if (sli_node_has_mem(s, nid))
            discarded += do_shrink(&a, sli_get_node(s, nid));
    SLI_EV(&a, SLUB_TUNE, NULL, NULL, TUNE_SHRINK, discarded, 0);
    (void)discarded; /* benchmark builds have no events */
    if (remaining)
        *remaining = sli_nr_slabs_all(s) != 0;
    return SL_OK;
}
