/*
 * steer.c - corrections that keep a seeded model cache in step with a real
 * kernel it is compared with (the replay layer's check, src/replay/check.c).
 * None of this is a kernel path: the kernel never takes an object out of
 * the middle of a freelist or makes a slab appear full.  These functions
 * exist because the model, driven by a real kernel's allocation and free
 * events, sometimes hands out another object than the kernel did (the
 * kernel's order depends on things the model does not see: events the
 * kernel does not trace, interrupts, the order two CPUs' events were
 * timestamped in); the check then gives the model's object back through
 * the real free path (sl_slub_free) and takes the kernel's object out of
 * wherever the model holds it free, here, so that the next prediction
 * starts from the kernel's state again.
 *
 * What they touch and keep true.  The cache must be created with tracking
 * (sl_slub_config.track): an object's state (free or allocated) is read
 * from its tracking entry, which every place a model object can be free in
 * (a slab's freelist, a CPU freelist, a sheaf) keeps as free.  Taking an
 * object:
 *   CPU freelist   (c->freelist of the CPU whose CPU slab holds it) the
 *                  object is unlinked; the slab's inuse already counts it,
 *                  as the kernel's counters count a CPU freelist's objects;
 *                  the CPU's tid moves on, as any change of c->freelist does.
 *   slab freelist  unlinked; inuse + 1.  A node partial slab that becomes
 *                  full leaves the node list (as get_partial's acquire would
 *                  take it); a CPU partial slab that becomes full leaves its
 *                  CPU's chain (its `slabs` and `pobjects` are recounted, and
 *                  it is unfrozen where CPU partial slabs are frozen, before
 *                  6.8); a CPU slab stays frozen and listed nowhere else.
 *   sheaf          a main or rcu_free sheaf loses the object (the objects
 *                  above it move down one).  A spare or barn full sheaf: the
 *                  kernel allocates only from its CPU's main sheaf, so the
 *                  sheaf that held the kernel's object was, in the kernel,
 *                  the main sheaf of the allocating CPU.  With that CPU's
 *                  model main not empty, the object is swapped with the
 *                  main's top, which the main loses (the counts stay as the
 *                  model's free path left them).  With it empty, the
 *                  kernel's own exchange runs (6.18 mm/slub.c): its own
 *                  spare and the main trade places (__pcs_replace_empty_main,
 *                  a spare with objects), or the barn's sheaf becomes main
 *                  and the empty main goes on the barn's empty list
 *                  (barn_replace_empty_sheaf, which takes the list's first
 *                  full sheaf; here the one holding the object); then the
 *                  new main loses the object.  Another CPU's spare, with the
 *                  main empty, just loses it: a spare may be partly filled
 *                  in 6.18 (kmem_cache_return_sheaf makes a returned
 *                  prefilled sheaf of any size the spare).  Sheaves waiting
 *                  for RCU and prefilled sheaves are not searched.
 * The CPU slab: without sheaves every allocation on a CPU comes from its
 * CPU slab, so when the kernel's object sits on another slab, that slab was
 * the kernel's CPU slab.  sl_slub_steer_cpu_slab makes it the model's as
 * ___slab_alloc leaves a slab it took: off its list (only it: the slabs
 * get_partial_node would move after it are not moved; another CPU's CPU
 * slab first gives its CPU freelist back to the slab), frozen, its whole
 * freelist the CPU freelist; the CPU's previous CPU slab goes through
 * deactivate_slab, as flush_slab sends it (the kernel's path).  What the
 * kernel must have done before (6.18 mm/slub.c): a slab on another CPU's
 * partial list reaches this CPU only through the node list, and a CPU
 * partial chain leaves for the node list whole (put_cpu_partial's drain,
 * flush_cpu_slab's put_partials_cpu), so that CPU's chain goes to the node
 * list; and this CPU took it with get_partial, which ___slab_alloc calls
 * only when this CPU's partial list is empty, so this CPU's model chain
 * goes to the node list too.  Both through __put_partials (tail, empty
 * slabs past min_partial discarded).  A slab on the model's node list is
 * not taken as proof of the same: there the model's lists may have drifted
 * (the kernel may have popped it from this CPU's own partial list), and
 * sending this CPU's chain away made filp agree less (a live window 10 ->
 * 9 of 17 slabs, 10-s captures 20 -> 15 and 12 -> 11; docs/live.md).
 * A new slab the kernel had and the model did not (one the earlier
 * snapshot did not list) is made at the cache's order either full, on no
 * list (a full slab, as the seed makes them), or empty at the tail of the
 * node partial list (a slab the kernel has just taken from the page
 * allocator).  After each function sl_slub_validate passes if it passed
 * before.
 *
 * Locking: call with no operation running (the check drives the model from
 * one thread); the node's list_lock is taken where the list changes.
 */
#include "sheaves.h"
#include "slub_internal.h"

#include <string.h>

/* The CPU whose CPU slab `slab` is, or -1. */
static int cpu_slab_of(const sl_slub_cache *s, const sli_slub_slab *slab)
{
    for (unsigned k = 0; k < s->ncpus; k++)
        if (s->cpu[k].slab == slab)
            return (int)k;
    return -1;
}

/* The CPU whose partial chain holds `slab`, or -1. */
static int cpu_partial_of(const sl_slub_cache *s, const sli_slub_slab *slab)
{
    for (unsigned k = 0; k < s->ncpus; k++)
        for (const sli_slub_slab *p = s->cpu[k].partial; p; p = p->next)
            if (p == slab)
                return (int)k;
    return -1;
}

int sl_slub_steer_object_state(const sl_slub_cache *s, const void *obj)
{
    if (!s || !s->info)
        return SL_EINVAL;
    sli_slub_slab *slab = obj ? sli_slab_of(s, obj) : NULL;
    uint32_t i;
    if (!slab)
        return SL_EFOREIGN;
    if (!sli_obj_start(s, slab, obj, &i))
        return SL_EMISALIGNED;
    return sli_info(s, slab, i)->state == SLI_OBJ_FREE ? 1 : 0;
}

/* Unlinks obj from the chain starting at *head (freelist pointers in the objects); false if absent. */
static bool unlink_from(const sl_slub_cache *s, void **head, void *obj)
{
    void *prev = NULL;
    for (void *o = *head; o; prev = o, o = sli_get_fp(s, o)) {
        if (o != obj)
            continue;
        void *next = sli_get_fp(s, o);
        if (prev)
            sli_set_fp(s, prev, next);
        else
            *head = next;
        return true;
    }
    return false;
}

/* Recounts c's partial chain's `slabs` and `pobjects` (each counts itself and the slabs after it). */
static void recount_chain(sli_slub_cpu *c)
{
    uint32_t slabs = 0, pobjects = 0;
    for (sli_slub_slab *p = c->partial; p; p = p->next) {
        sl_dword fc = sl_dw_read(&p->fc);
        slabs++;
        pobjects += sli_objects(fc.hi) - sli_inuse(fc.hi);
    }
    for (sli_slub_slab *p = c->partial; p; p = p->next) {
        sl_dword fc = sl_dw_read(&p->fc);
        p->slabs = slabs--;
        p->pobjects = pobjects;
        pobjects -= sli_objects(fc.hi) - sli_inuse(fc.hi);
    }
}

/* Takes obj off slab's own freelist (inuse + 1) and off any list a full slab may not be on. */
static int take_from_slab(sl_slub_cache *s, sli_slub_slab *slab, void *obj)
{
    sl_dword fc = sl_dw_read(&slab->fc);
    void *head = (void *)fc.lo;
    if (!unlink_from(s, &head, obj))
        return SL_EINVAL;
    uint32_t inuse = sli_inuse(fc.hi) + 1, objects = sli_objects(fc.hi);
    uint32_t frozen = sli_frozen(fc.hi);
    bool full = inuse == objects;
    sli_act a = {.s = s, .c = &s->cpu[0], .op = 0, .cpu = 0, .cas = 0};
    int on_cpu_partial = full && cpu_slab_of(s, slab) < 0 ? cpu_partial_of(s, slab) : -1;
    if (on_cpu_partial >= 0) {
        sli_slub_cpu *c = &s->cpu[on_cpu_partial];
        sli_slub_slab **pp = &c->partial;
        while (*pp != slab)
            pp = &(*pp)->next;
        *pp = slab->next;
        slab->next = NULL;
        recount_chain(c);
        frozen = 0;
    }
    if (full && slab->on_node_partial) {
        sli_list_lock(&a, sli_slab_node(s, slab));
        sli_slub_remove_partial(&a, slab);
        sl_spin_unlock(&sli_slab_node(s, slab)->list_lock);
    }
    sl_dw_write_plain(&slab->fc, (sl_dword){(uintptr_t)head, sli_counters(inuse, objects, frozen)});
    return SL_OK;
}

/* Removes objects[j] of sheaf x, the objects above moving down. */
static void sheaf_remove(sli_sheaf *x, uint32_t j)
{
    memmove(&x->objects[j], &x->objects[j + 1], (x->size - j - 1) * sizeof x->objects[0]);
    x->size--;
}

/* Finds obj in x: its index, or -1. */
static long sheaf_find(const sli_sheaf *x, const void *obj)
{
    for (uint32_t j = 0; x && j < x->size; j++)
        if (x->objects[j] == obj)
            return (long)j;
    return -1;
}

/* Takes sheaf x off the barn's full list (nr_full - 1); false if it is not there. */
static bool barn_unlink_full(sli_barn *b, sli_sheaf *x)
{
    for (sli_sheaf **pp = &b->full; *pp; pp = &(*pp)->next) {
        if (*pp != x)
            continue;
        *pp = x->next;
        x->next = NULL;
        b->nr_full--;
        return true;
    }
    return false;
}

/*
 * Takes obj out of the sheaf that holds it, for an allocation on `cpu` (see
 * the essay).  SL_OK or SL_EINVAL (in no sheaf searched).
 */
static int take_from_sheaves(sl_slub_cache *s, unsigned cpu, void *obj)
{
    sli_sheaves *sh = s->sheaves;
    if (!sh || !sli_sheaves_active(sh) || cpu >= sh->ncpus)
        return SL_EINVAL;
    for (unsigned k = 0; k < sh->ncpus; k++) {
        sli_pcs *pcs = &sh->pcs[k];
        sli_sheaf *lifo[] = {pcs->main, pcs->rcu_free};
        for (unsigned w = 0; w < 2; w++) {
            long j = sheaf_find(lifo[w], obj);
            if (j >= 0) {
                sheaf_remove(lifo[w], (uint32_t)j);
                return SL_OK;
            }
        }
    }
    sli_pcs *mine = &sh->pcs[cpu];
    for (unsigned k = 0; k <= sh->ncpus; k++) {
        sli_sheaf *held = NULL;
        long j = -1;
        if (k < sh->ncpus) {
            held = sh->pcs[k].spare;
            j = sheaf_find(held, obj);
        } else {
            for (held = sh->barn[0].full; held && (j = sheaf_find(held, obj)) < 0; held = held->next)
                ;
        }
        if (j < 0)
            continue;
        sli_sheaf *main = mine->main;
        if (main->size) {
            /* The kernel's main was this sheaf: it gives obj, the model's main gives its top back in obj's place. */
            held->objects[j] = main->objects[main->size - 1];
            main->size--;
        } else if (k == cpu) {
            /* __pcs_replace_empty_main: an empty main and a spare with objects trade places. */
            mine->main = held, mine->spare = main;
            sheaf_remove(held, (uint32_t)j);
        } else if (k == sh->ncpus) {
            /* barn_replace_empty_sheaf: the empty main goes to the barn, obj's full sheaf becomes main. */
            sl_spin_lock(&sh->barn[0].lock);
            barn_unlink_full(&sh->barn[0], held);
            main->next = sh->barn[0].empty;
            sh->barn[0].empty = main;
            sh->barn[0].nr_empty++;
            sl_spin_unlock(&sh->barn[0].lock);
            mine->main = held;
            sheaf_remove(held, (uint32_t)j);
        } else {
            /* Another CPU's spare, and nothing to swap: it gives obj up (a spare may be partly filled, 6.18). */
            sheaf_remove(held, (uint32_t)j);
        }
        return SL_OK;
    }
    return SL_EINVAL;
}

int sl_slub_steer_take(sl_slub_cache *s, unsigned cpu, void *obj)
{
    int st = sl_slub_steer_object_state(s, obj);
    if (st < 0)
        return st;
    if (st == 0)
        return SL_EINVAL;
    sli_slub_slab *slab = sli_slab_of(s, obj);
    uint32_t i;
    sli_obj_start(s, slab, obj, &i);
    int rc = SL_EINVAL;
    int k = cpu_slab_of(s, slab);
    if (k >= 0) {
        sli_slub_cpu *c = &s->cpu[k];
        sl_dword ft = sl_dw_read(&c->fl_tid);
        void *head = (void *)ft.lo;
        if (unlink_from(s, &head, obj)) {
            sl_dw_write_plain(&c->fl_tid, (sl_dword){(uintptr_t)head, sli_next_tid(s, ft.hi)});
            rc = SL_OK;
        }
    }
    if (rc != SL_OK)
        rc = take_from_slab(s, slab, obj);
    if (rc != SL_OK)
        rc = take_from_sheaves(s, cpu, obj);
    if (rc == SL_OK) {
        sli_slub_objinfo *info = sli_info(s, slab, i);
        info->state = SLI_OBJ_ALLOCATED;
        info->alloc_op = 0;
    }
    return rc;
}

int sl_slub_steer_new_slab(sl_slub_cache *s, bool full, uint32_t *pfn)
{
    if (!s || !pfn)
        return SL_EINVAL;
    sli_act a = {.s = s, .c = &s->cpu[0], .op = 0, .cpu = 0, .cas = 0};
    sli_slub_slab *slab = sli_slub_new_slab(&a);
    if (!slab)
        return SL_ENOMEM;
    if (sli_slab_order(slab) != s->g.order) {
        sli_slub_discard_slab(&a, slab);
        return SL_ENOMEM;
    }
    uint32_t n = s->g.objects;
    if (full) {
        slab->fc = (sl_dword){0, sli_counters(n, n, 0)};
        if (s->info)
            for (uint32_t i = 0; i < n; i++)
                sli_info(s, slab, i)->state = SLI_OBJ_ALLOCATED;
    } else {
        sli_list_lock(&a, sli_slab_node(s, slab));
        sli_slub_add_partial(&a, slab, true);
        sl_spin_unlock(&sli_slab_node(s, slab)->list_lock);
    }
    *pfn = sli_slab_pfn(s, slab);
    return SL_OK;
}

int sl_slub_steer_slab(const sl_slub_cache *s, uint32_t pfn, sl_slub_steer_slab_info *out, uint8_t *free_map)
{
    if (!s || !out)
        return SL_EINVAL;
    sli_slub_slab *slab = sli_slab_at(s, pfn);
    if (!slab)
        return SL_EFOREIGN;
    sl_dword fc = sl_dw_read(&slab->fc);
    *out = (sl_slub_steer_slab_info){.list = SL_SLUB_STEER_NONE,
                                     .objects = sli_objects(fc.hi),
                                     .inuse = sli_inuse(fc.hi),
                                     .frozen = (uint8_t)sli_frozen(fc.hi)};
    int k = cpu_slab_of(s, slab);
    if (k >= 0) {
        out->list = SL_SLUB_STEER_CPU_SLAB, out->cpu = (uint8_t)k;
    } else if ((k = cpu_partial_of(s, slab)) >= 0) {
        out->list = SL_SLUB_STEER_CPU_PARTIAL, out->cpu = (uint8_t)k;
    } else if (slab->on_node_partial) {
        out->list = SL_SLUB_STEER_NODE_PARTIAL;
    }
    if (free_map) {
        if (!s->info)
            return SL_EINVAL;
        for (uint32_t i = 0; i < out->objects; i++)
            free_map[i] = sli_info(s, slab, i)->state == SLI_OBJ_FREE;
    }
    return SL_OK;
}

uint32_t sl_slub_steer_listed(const sl_slub_cache *s, uint32_t *pfns, uint32_t cap)
{
    uint32_t n = 0;
#define PUT(slab)                                                                                                      \
    do {                                                                                                               \
        if (n < cap)                                                                                                   \
            pfns[n] = sli_slab_pfn(s, (slab));                                                                         \
        n++;                                                                                                           \
    } while (0)
    for (unsigned k = 0; k < s->ncpus; k++) {
        if (s->cpu[k].slab)
            PUT(s->cpu[k].slab);
        for (const sli_slub_slab *p = s->cpu[k].partial; p; p = p->next)
            PUT(p);
    }
    for (unsigned nid = 0; nid < s->nr_nodes; nid++)
        for (const sli_slub_slab *p = sli_get_node(s, nid)->partial_head; p; p = p->lnext)
            PUT(p);
#undef PUT
    return n;
}

/*
 * a's CPU's partial chain to the node list, as put_cpu_partial's drain
 * sends it (__put_partials: at the tail, empty slabs past min_partial
 * discarded).
 */
static void put_own_partials(sli_act *a)
{
    sli_slub_slab *chain = a->c->partial;
    a->c->partial = NULL;
    sli_slub_put_partials(a, chain);
}

int sl_slub_steer_cpu_slab(sl_slub_cache *s, unsigned cpu, uint32_t pfn)
{
    if (!s || cpu >= s->ncpus || !s->rules.cpu_slab)
        return SL_EINVAL;
    sli_slub_slab *slab = sli_slab_at(s, pfn);
    if (!slab)
        return SL_EFOREIGN;
    sli_slub_cpu *c = &s->cpu[cpu];
    if (c->slab == slab)
        return SL_OK;
    sli_act a = {.s = s, .c = c, .op = 0, .cpu = (uint16_t)cpu, .cas = 0};
    sl_dword fc = sl_dw_read(&slab->fc);
    void *head = (void *)fc.lo;
    uint32_t objects = sli_objects(fc.hi);
    int k = cpu_slab_of(s, slab);
    if (k >= 0) {
        /* Another CPU's slab: its CPU freelist goes back in front of the slab's own (no longer in use). */
        sli_slub_cpu *o = &s->cpu[k];
        sl_dword ft = sl_dw_read(&o->fl_tid);
        void *tail = NULL;
        for (void *x = (void *)ft.lo; x; x = sli_get_fp(s, x))
            tail = x;
        if (tail) {
            sli_set_fp(s, tail, head);
            head = (void *)ft.lo;
        }
        o->slab = NULL;
        sl_dw_write_plain(&o->fl_tid, (sl_dword){0, sli_next_tid(s, ft.hi)});
    } else if ((k = cpu_partial_of(s, slab)) >= 0) {
        sli_slub_slab **pp = &s->cpu[k].partial;
        while (*pp != slab)
            pp = &(*pp)->next;
        *pp = slab->next;
        slab->next = NULL;
        if (k == (int)cpu) {
            recount_chain(&s->cpu[k]);
        } else {
            /* Another CPU's partial slab reached this CPU through the node list: that chain was drained whole. */
            sli_slub_slab *chain = s->cpu[k].partial;
            s->cpu[k].partial = NULL;
            sli_act ak = {.s = s, .c = &s->cpu[k], .op = 0, .cpu = (uint16_t)k, .cas = 0};
            sli_slub_put_partials(&ak, chain);
            put_own_partials(&a);
        }
    } else if (slab->on_node_partial) {
        /*
         * Only this slab leaves the node list: the slabs get_partial_node
         * would move after it onto the CPU partial list are not moved (on
         * real captures that made the lists agree less, not more).  Nor
         * does this CPU's partial chain (see the essay).
         */
        sli_list_lock(&a, sli_slab_node(s, slab));
        sli_slub_remove_partial(&a, slab);
        sl_spin_unlock(&sli_slab_node(s, slab)->list_lock);
    }
    /* The slab is off every list: freeze it (freeze_slab) before the CPU's current slab goes. */
    slab->fc = (sl_dword){0, sli_counters(objects, objects, 1)};
    slab->cpu = (uint16_t)cpu;
    sl_dword ft = sl_dw_read(&c->fl_tid);
    sli_slub_slab *old = c->slab;
    c->slab = NULL;
    sl_dw_write_plain(&c->fl_tid, (sl_dword){0, sli_next_tid(s, ft.hi)});
    if (old)
        sli_slub_deactivate_slab(&a, old, (void *)ft.lo); /* flush_slab's deactivate_slab, the kernel's path */
    c->slab = slab;
    ft = sl_dw_read(&c->fl_tid);
    sl_dw_write_plain(&c->fl_tid, (sl_dword){(uintptr_t)head, sli_next_tid(s, ft.hi)});
    return SL_OK;
}

uint32_t sl_slub_steer_sheaf(const sl_slub_cache *s, unsigned place, unsigned cpu, unsigned nth, void **objs,
                             uint32_t cap)
{
    const sli_sheaves *sh = s ? s->sheaves : NULL;
    if (!sh || !sli_sheaves_active(sh) || (place != SL_SLUB_SEED_BARN_FULL && cpu >= sh->ncpus))
        return 0;
    const sli_sheaf *x = NULL;
    if (place == SL_SLUB_SEED_MAIN)
        x = sh->pcs[cpu].main;
    else if (place == SL_SLUB_SEED_SPARE)
        x = sh->pcs[cpu].spare;
    else if (place == SL_SLUB_SEED_RCU_FREE)
        x = sh->pcs[cpu].rcu_free;
    else if (place == SL_SLUB_SEED_BARN_FULL)
        for (x = sh->barn[0].full; x && nth; x = x->next)
            nth--;
    uint32_t n = x ? x->size : 0;
    for (uint32_t k = 0; k < n && k < cap; k++)
        objs[k] = x->objects[k];
    return n;
}
