/*
 * validate.c - the SLUB model's invariant checker (call with no operation
 * running).
 *
 * Invariants checked:
 *   CPU k:  tid % TID_STEP == k (TID_STEP > 1); a CPU freelist only with a CPU slab; every
 *           object on it belongs to the CPU slab, which is frozen and ours;
 *           the partial chain holds slabs off the node list, unfrozen (frozen
 *           before 6.8), and its head's `slabs` is the chain length; a 7.0
 *           cache has no CPU slab, CPU freelist or partial chain at all.
 *   sheaves: sheaves.c's own invariants (sli_sheaves_validate); every object
 *           a sheaf holds, or that waits alone for RCU, is an object start of
 *           a slab of this cache, held once, counted in its slab's inuse, and
 *           (with tracking) recorded free.
 *   node:   each node's partial list is well linked, its slabs are ours,
 *           of that node, unfrozen, marked on_node_partial, have free
 *           objects; nr_partial is its length; each node's nr_slabs and
 *           total_objects count the slabs of that node; every slab's node
 *           is a node with memory; sheaves sit only in barns that exist.
 *   slab:   its order is the cache's or the fallback order, and its object
 *           count and bound (limit) are that order's; frozen exactly when it
 *           is some CPU's slab, except a debug cache's disabled slab (frozen,
 *           on no list, no freelist, inuse = objects, whose free objects
 *           leaked); on at most one list;
 *           an unlisted unfrozen slab is full; its freelist stays inside the
 *           slab at object starts with no cycle; inuse = objects minus the
 *           objects on the slab's own freelist; every object is in exactly one
 *           place (slab freelist, CPU freelist, or allocated), and with
 *           tracking its recorded state agrees.
 */
#include "sheaves.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PLACE_NONE, PLACE_CPU_SLAB, PLACE_CPU_PARTIAL, PLACE_NODE_PARTIAL };
/* mark[] of an object in check_slab: where it was found. */
enum { MARK_NONE = 0, MARK_SLAB_FREELIST = 1, MARK_CPU_FREELIST = 2, MARK_HELD = 3 };

typedef struct vstate {
    sl_slub_cache *s;
    char *msg;
    size_t len;
    int rc;
    uint8_t *place; /* per pfn of a slab's head page */
    uint8_t *owner;
    void **held; /* objects sheaves hold or that wait alone for RCU, sorted by address */
    size_t nheld, held_cap;
} vstate;

static int fail(vstate *v, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(vstate *v, int rc, const char *fmt, ...)
{
    if (v->rc == SL_OK) {
        v->rc = rc;
        if (v->msg && v->len) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(v->msg, v->len, fmt, ap);
            va_end(ap);
        }
    }
    return rc;
}

static void mark_place(vstate *v, sli_slub_slab *slab, uint8_t place, uint8_t owner, const char *where)
{
    size_t k = sli_slab_pfn(v->s, slab);
    if (v->place[k] != PLACE_NONE)
        fail(v, SL_ECORRUPT, "slab %u is on two lists (%s and list kind %u)", sli_slab_pfn(v->s, slab), where,
             v->place[k]);
    v->place[k] = place;
    v->owner[k] = owner;
}

static void check_cpus(vstate *v)
{
    sl_slub_cache *s = v->s;
    for (unsigned k = 0; k < s->ncpus && v->rc == SL_OK; k++) {
        sli_slub_cpu *c = &s->cpu[k];
        sl_dword ft = sl_dw_read(&c->fl_tid);
        if (s->tid_step > 1 && ft.hi % s->tid_step != k)
            fail(v, SL_ECORRUPT, "CPU %u: tid %lu is not %u modulo TID_STEP %lu", k, (unsigned long)ft.hi, k,
                 (unsigned long)s->tid_step);
        if (c->slab) {
            if (!sli_is_our_slab(s, c->slab)) {
                fail(v, SL_ECORRUPT, "CPU %u: its CPU slab is not a slab of this cache", k);
                return;
            }
            if (!sli_frozen(c->slab->fc.hi))
                fail(v, SL_ECORRUPT, "CPU %u: its CPU slab %u is not frozen", k, sli_slab_pfn(s, c->slab));
            mark_place(v, c->slab, PLACE_CPU_SLAB, (uint8_t)k, "a CPU slab");
        }
        uint32_t n = 0;
        for (void *o = (void *)ft.lo; o && v->rc == SL_OK; o = sli_get_fp(s, o)) {
            if (!c->slab || sli_obj_index_checked(s, c->slab, o) < 0)
                fail(v, SL_EFREELIST, "CPU %u: its freelist holds %p, not an object of its CPU slab", k, o);
            else if (++n > sli_slab_objects(c->slab))
                fail(v, SL_EFREELIST, "CPU %u: its freelist has a cycle", k);
        }
        uint32_t len = 0;
        for (sli_slub_slab *p = c->partial; p && v->rc == SL_OK; p = p->next) {
            if (!sli_is_our_slab(s, p) || ++len > s->zone->npages) {
                fail(v, SL_ECORRUPT, "CPU %u: its partial list is corrupt", k);
                return;
            }
            if (sli_frozen(p->fc.hi) != s->rules.frozen_cpu_partial || p->on_node_partial)
                fail(v, SL_ECORRUPT, "CPU %u: partial slab %u is %s or on the node list", k, sli_slab_pfn(s, p),
                     s->rules.frozen_cpu_partial ? "not frozen" : "frozen");
            mark_place(v, p, PLACE_CPU_PARTIAL, (uint8_t)k, "a CPU partial list");
        }
        if (c->partial && c->partial->slabs != len)
            fail(v, SL_ECORRUPT, "CPU %u: partial list head says %u slabs, the list has %u", k, c->partial->slabs, len);
        if (!s->rules.cpu_slab && (c->slab || c->partial || ft.lo))
            fail(v, SL_ECORRUPT, "CPU %u: a 7.0 cache has no CPU slab, freelist or partial list", k);
    }
}

static bool held_push(vstate *v, void *obj)
{
    if (v->nheld == v->held_cap) {
        size_t ncap = v->held_cap ? 2 * v->held_cap : 256;
        void **n = realloc(v->held, ncap * sizeof *n);
        if (!n)
            return false;
        v->held = n;
        v->held_cap = ncap;
    }
    v->held[v->nheld++] = obj;
    return true;
}

static int held_visit(void *ctx, const sli_sheaf *sheaf, unsigned place, unsigned cpu)
{
    vstate *v = ctx;
    (void)place, (void)cpu;
    for (uint32_t i = 0; i < sheaf->size; i++)
        if (!held_push(v, sheaf->objects[i]))
            return SL_ENOMEM;
    return 0;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return (x > y) - (x < y);
}

/* The sheaves' invariants, then every object they hold or that waits for RCU, gathered and sorted. */
static void check_held(vstate *v)
{
    sl_slub_cache *s = v->s;
    if (s->sheaves) {
        int rc = sli_sheaves_validate(s->sheaves, v->msg, v->len);
        if (rc != SL_OK) {
            v->rc = rc; /* the message is sheaves.c's */
            return;
        }
        if (sli_sheaves_walk(s->sheaves, held_visit, v) != 0) {
            fail(v, SL_ENOMEM, "no memory to check the sheaves");
            return;
        }
    }
    for (unsigned k = 0; k < s->ncpus && v->rc == SL_OK; k++) {
        /* the objects waiting alone for RCU, then those kfree_nolock and kfree_rcu_nolock deferred to the irq_work */
        static const char *const what[] = {"waiting for RCU", "deferred by kfree_nolock",
                                           "deferred by kfree_rcu_nolock"};
        for (unsigned list = 0; list < 3; list++) {
            size_t n = 0;
            void *head = list == 0 ? s->cpu[k].rcu_wait : list == 1 ? s->cpu[k].defer_free : s->cpu[k].rcu_defer;
            for (void *o = head; o && v->rc == SL_OK; o = sli_get_fp(s, o)) {
                if (++n > s->zone->npages * (size_t)s->info_stride || !sli_slab_of(s, o))
                    fail(v, SL_ECORRUPT, "CPU %u: its list of objects %s is corrupt", k, what[list]);
                else if (!held_push(v, o))
                    fail(v, SL_ENOMEM, "no memory to check the RCU waits");
            }
        }
    }
    if (v->nheld)
        qsort(v->held, v->nheld, sizeof *v->held, by_address);
    for (size_t i = 0; i < v->nheld && v->rc == SL_OK; i++) {
        uint32_t pfn, idx;
        if (!sl_slub_object_index(s, v->held[i], &pfn, &idx))
            fail(v, SL_ECORRUPT, "a sheaf (or the RCU wait) holds %p, not an object of this cache", v->held[i]);
        else if (i && v->held[i] == v->held[i - 1])
            fail(v, SL_EFREELIST, "slab %u: object %u is held twice by sheaves or the RCU wait (a double free)", pfn,
                 idx);
    }
}

/* Marks the held objects of slab (a run of the sorted array), reporting one found elsewhere too. */
static void mark_held(vstate *v, sli_slub_slab *slab, uint8_t *mark)
{
    sl_slub_cache *s = v->s;
    uintptr_t base = (uintptr_t)sli_slab_base(s, slab), end = base + ((uintptr_t)SL_PAGE_SIZE << sli_slab_order(slab));
    size_t lo = 0, hi = v->nheld;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)v->held[mid] < base)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < v->nheld && (uintptr_t)v->held[i] < end && v->rc == SL_OK; i++) {
        long k = sli_obj_index_checked(s, slab, v->held[i]);
        if (k < 0)
            continue; /* reported by check_held */
        if (mark[k])
            fail(v, SL_EFREELIST, "slab %u: object %ld is held by a sheaf (or waits for RCU) and is on a %s",
                 sli_slab_pfn(s, slab), k, mark[k] == MARK_SLAB_FREELIST ? "slab freelist" : "CPU freelist");
        else
            mark[k] = MARK_HELD;
    }
}

/* Node nid's partial list: well linked, counted, each slab marked and of that node. */
static void check_node(vstate *v, unsigned nid)
{
    sl_slub_cache *s = v->s;
    sli_slub_node *n = sli_get_node(s, nid);
    uint32_t len = 0;
    sli_slub_slab *prev = NULL;
    for (sli_slub_slab *p = n->partial_head; p && v->rc == SL_OK; prev = p, p = p->lnext) {
        if (!sli_is_our_slab(s, p) || ++len > s->zone->npages || p->lprev != prev) {
            fail(v, SL_ECORRUPT, "node %u: the partial list is corrupt", nid);
            return;
        }
        if (!p->on_node_partial || sli_frozen(p->fc.hi) || !p->fc.lo)
            fail(v, SL_ECORRUPT, "node %u partial slab %u: not marked, frozen, or without free objects", nid,
                 sli_slab_pfn(s, p));
        else if (p->nid != nid)
            fail(v, SL_ECORRUPT, "slab %u of node %u is on node %u's partial list", sli_slab_pfn(s, p), p->nid, nid);
        mark_place(v, p, PLACE_NODE_PARTIAL, 0, "the node partial list");
    }
    if (v->rc == SL_OK && (n->partial_tail != prev || len != n->nr_partial))
        fail(v, SL_ECORRUPT, "node %u: nr_partial is %u but its list has %u slabs", nid, n->nr_partial, len);
}

static void check_slab(vstate *v, sli_slub_slab *slab, uint8_t *mark)
{
    sl_slub_cache *s = v->s;
    uint32_t pfn = sli_slab_pfn(s, slab), order = sli_slab_order(slab);
    size_t k = pfn;
    sl_dword fc = sl_dw_read(&slab->fc);
    uint32_t objects = sli_objects(fc.hi), inuse = sli_inuse(fc.hi);
    uint32_t expect = order == s->g.order ? s->g.objects : order == s->g.fallback_order ? s->g.fallback_objects : 0;
    if (objects != expect || inuse > objects ||
        __atomic_load_n(&slab->limit, __ATOMIC_RELAXED) != objects * s->g.size) {
        fail(v, SL_ECORRUPT, "slab %u (order %u): counters say %u objects, %u in use (bound %u)", pfn, order, objects,
             inuse, slab->limit);
        return;
    }
    bool frozen = sli_frozen(fc.hi);
    bool disabled = sli_slab_disabled(s, slab);
    /* CPU slabs are frozen; before 6.8 so are the slabs on CPU partial lists. */
    bool cpu_owned = v->place[k] == PLACE_CPU_SLAB || (s->rules.frozen_cpu_partial && v->place[k] == PLACE_CPU_PARTIAL);
    if (disabled && (v->place[k] != PLACE_NONE || fc.lo || inuse != objects))
        fail(v, SL_ECORRUPT, "slab %u: disabled by a failed check, yet on a list or with free objects", pfn);
    else if (!disabled && frozen != cpu_owned)
        fail(v, SL_ECORRUPT, "slab %u: frozen is %d but it is %s a CPU slab%s", pfn, frozen, frozen ? "not" : "",
             s->rules.frozen_cpu_partial ? " or on a CPU partial list" : "");
    if ((v->place[k] == PLACE_NODE_PARTIAL) != (slab->on_node_partial != 0))
        fail(v, SL_ECORRUPT, "slab %u: on_node_partial disagrees with the node list", pfn);
    if (v->place[k] == PLACE_NONE && fc.lo)
        fail(v, SL_ECORRUPT, "slab %u has free objects but is on no list and not frozen", pfn);
    memset(mark, 0, objects);
    uint32_t slab_free = 0, cpu_free = 0;
    for (void *o = (void *)fc.lo; o && v->rc == SL_OK; o = sli_get_fp(s, o)) {
        long i = sli_obj_index_checked(s, slab, o);
        if (i < 0)
            fail(v, SL_EFREELIST, "slab %u: its freelist points outside its objects (%p)", pfn, o);
        else if (mark[i])
            fail(v, SL_EFREELIST, "slab %u: object %ld is twice on its freelist (a cycle)", pfn, i);
        else
            mark[i] = MARK_SLAB_FREELIST, slab_free++;
    }
    if (v->place[k] == PLACE_CPU_SLAB) {
        sli_slub_cpu *c = &s->cpu[v->owner[k]];
        for (void *o = (void *)sl_dw_read(&c->fl_tid).lo; o && v->rc == SL_OK; o = sli_get_fp(s, o)) {
            long i = sli_obj_index_checked(s, slab, o);
            if (mark[i])
                fail(v, SL_EFREELIST, "slab %u: object %ld is on CPU %u's freelist %s", pfn, i, v->owner[k],
                     mark[i] == MARK_SLAB_FREELIST ? "and on the slab freelist" : "twice");
            else
                mark[i] = MARK_CPU_FREELIST, cpu_free++;
        }
    }
    if (v->rc == SL_OK)
        mark_held(v, slab, mark);
    if (v->rc != SL_OK)
        return;
    if (inuse != objects - slab_free)
        fail(v, SL_ECORRUPT, "slab %u: inuse is %u but %u of %u objects are on its freelist", pfn, inuse, slab_free,
             objects);
    if (s->info) {
        for (uint32_t i = 0; i < objects && v->rc == SL_OK; i++) {
            uint8_t st = __atomic_load_n(&sli_info(s, slab, i)->state, __ATOMIC_RELAXED);
            if (st == SLI_OBJ_DUP)
                fail(v, SL_EFREELIST, "slab %u: object %u was handed out twice (a corrupt CPU freelist)", pfn, i);
            else if (mark[i] && st != SLI_OBJ_FREE)
                fail(v, SL_EFREELIST, "slab %u: object %u is %s but allocated", pfn, i,
                     mark[i] == MARK_HELD ? "held by a sheaf (or waits for RCU)" : "on a freelist");
            else if (!mark[i] && st == SLI_OBJ_FREE && !disabled)
                fail(v, SL_EFREELIST, "slab %u: object %u is free but on no freelist (lost)", pfn, i);
        }
    }
}

int sl_slub_validate(sl_slub_cache *s, char *msg, size_t msg_len)
{
    if (msg && msg_len)
        msg[0] = 0;
    if (!s)
        return SL_EINVAL;
    size_t slots = s->zone->npages + 1;
    vstate v = {.s = s, .msg = msg, .len = msg_len, .rc = SL_OK};
    v.place = calloc(slots, 1);
    v.owner = calloc(slots, 1);
    uint8_t *mark = malloc(s->g.objects);
    if (!v.place || !v.owner || !mark) {
        free(v.place), free(v.owner), free(mark);
        return SL_ENOMEM;
    }
    check_cpus(&v);
    for (unsigned nid = 0; nid < s->nr_nodes && v.rc == SL_OK; nid++)
        check_node(&v, nid);
    if (v.rc == SL_OK)
        check_held(&v);
    uint32_t nr_slabs[SL_SLUB_MAX_NODES] = {0}, total[SL_SLUB_MAX_NODES] = {0};
    for (uint32_t pfn = 0; pfn < s->zone->npages && v.rc == SL_OK; pfn += 1u << s->g.fallback_order) {
        sli_slub_slab *slab = sli_slab_at(s, pfn);
        if (!slab)
            continue;
        if (slab->nid >= s->nr_nodes || !sli_node_has_mem(s, slab->nid)) {
            fail(&v, SL_ECORRUPT, "slab %u: node %u, which is not a node with memory of the cache's %u", pfn, slab->nid,
                 s->nr_nodes);
            break;
        }
        nr_slabs[slab->nid]++;
        total[slab->nid] += sli_objects(slab->fc.hi);
        check_slab(&v, slab, mark);
    }
    for (unsigned nid = 0; nid < s->nr_nodes && v.rc == SL_OK; nid++) {
        sli_slub_node *n = sli_get_node(s, nid);
        if (nr_slabs[nid] != atomic_load(&n->nr_slabs) || total[nid] != atomic_load(&n->total_objects))
            fail(&v, SL_ECORRUPT, "node %u's counters say %u slabs, %u objects; found %u, %u", nid,
                 atomic_load(&n->nr_slabs), atomic_load(&n->total_objects), nr_slabs[nid], total[nid]);
    }
    if (v.rc == SL_OK && sl_page_validate(s->zone) != SL_OK)
        fail(&v, SL_ECORRUPT, "the page allocator is inconsistent");
    free(v.place), free(v.owner), free(mark), free(v.held);
    return v.rc;
}
