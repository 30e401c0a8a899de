/*
 * seed.c - a SLUB model cache seeded from a description of real slabs (a
 * kernel snapshot's cache, docs/snapshot.md), so that the model goes on from
 * the state a kernel was in instead of from empty.
 *
 * What it builds.  Into a cache just created (no slab yet) with the
 * snapshot's geometry and kernel version, for each described slab a slab of
 * the cache's order (sli_slub_new_slab) whose free objects are linked in the
 * described order, then puts it where the description says:
 *   CPU slab       c->slab, frozen; its own freelist holds the objects freed
 *                  remotely since it was frozen (the slab's freelist), the CPU
 *                  freelist (c->freelist) the objects the CPU may hand out;
 *                  inuse counts the CPU freelist's objects as in use, as the
 *                  kernel's counters do.
 *   CPU partial    c->partial, in the described order (head first): each slab's
 *                  `slabs` (and before 5.16 `pobjects`) counts itself and the
 *                  slabs after it, as put_cpu_partial leaves them; frozen
 *                  before 6.8 (rules.frozen_cpu_partial), not from 6.8.
 *   node partial   the node's partial list in the described order.
 *   full           listed nowhere, every object in use: as many as the
 *                  description asks, at most `max_full` and at most what the
 *                  zone still holds after the listed slabs.
 *   sheaves      a cache with sheaves (6.18 with a sheaf_capacity, 7.x) gets
 *                each CPU's main, spare and rcu_free sheaf and the barn's
 *                full sheaves filled with the described objects, in the
 *                described order (objects[size - 1] handed out next; the
 *                barn's list head first).  Their objects are allocated from
 *                their slab's point of view (inuse counts them, as the
 *                kernel's does) and free in tracking, as a free to a sheaf
 *                leaves them.  The barn's empty sheaves are not made.  A
 *                spare may hold any number of objects up to the capacity:
 *                6.18's kmem_cache_return_sheaf makes a returned prefilled
 *                sheaf, partly used, the CPU's spare when it has none
 *                (maple_node's sheaves, prefilled by the maple tree).
 * Objects not on a freelist or in a sheaf are allocated (with tracking,
 * recorded so, by no operation: alloc_op 0).  The tids are left as the cache's creation set
 * them.  Nothing is traced: the seed is the session's starting state.
 *
 * What holds after it: every invariant sl_slub_validate checks (each object
 * in exactly one place, inuse = objects minus the slab's freelist, frozen
 * exactly for CPU slabs (and CPU partial slabs before 6.8), partial slabs
 * have free objects, the node counters count every slab), and the lists and
 * freelists read back in the described order.
 *
 * What it does not do: it makes every slab at the cache's order (a kernel
 * slab made at the fallback order is seeded at the cache's); it does not
 * make the barn's empty sheaves or sheaves waiting for RCU; a debug
 * cache (red zones, poison, user tracking, consistency checks) is refused,
 * since its object bytes would have to be written as its hooks expect.
 *
 * The whole description is checked before anything is built, so a bad one
 * leaves the cache empty and untouched: an object index outside its slab, an
 * object twice on a slab's freelists, counts that disagree (objects per slab
 * against the cache's, inuse against the free objects), a CPU list on a CPU
 * the cache does not have or on a 7.0 cache (no per-CPU slab), two CPU slabs
 * for one CPU, a CPU freelist on a slab that is not a CPU slab, a partial
 * slab without free objects, a full slab with free objects; sheaves for a
 * cache without them, a sheaf on a CPU the cache does not have, two sheaves
 * in one CPU place, a sheaf over the capacity (an rcu_free sheaf at it, a
 * barn full sheaf not full), a sheaf object
 * outside the described slabs, on its slab's freelists or in two sheaves
 * (or twice in one), and more sheaves than the model's limit.  Call with no
 * operation running.
 */
#include "sheaves.h"
#include "slub_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int refuse(char *msg, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(char *msg, size_t len, int rc, const char *fmt, ...)
{
    if (msg && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static const char *list_name(unsigned list)
{
    static const char *const names[] = {"CPU slab", "CPU partial slab", "node partial slab", "full slab"};
    return list < 4 ? names[list] : "slab";
}

/*
 * Checks one object list (indices) of described slab `i` against seen[]
 * (objects already on one of its freelists).  0, or SL_EINVAL with msg.
 */
static int check_indices(const sl_slub_seed_slab *d, uint32_t i, const uint32_t *idx, uint32_t n, const char *what,
                         uint8_t *seen, char *msg, size_t len)
{
    for (uint32_t k = 0; k < n; k++) {
        if (idx[k] >= d->objects)
            return refuse(msg, len, SL_EINVAL, "slab %u (%s): %s[%u] is object %u, outside the slab's %u objects", i,
                          list_name(d->list), what, k, idx[k], d->objects);
        if (seen[idx[k]])
            return refuse(msg, len, SL_EINVAL, "slab %u (%s): object %u is on its freelists twice (%s[%u])", i,
                          list_name(d->list), idx[k], what, k);
        seen[idx[k]] = 1;
    }
    return SL_OK;
}

static const char *sheaf_name(unsigned place)
{
    static const char *const names[] = {"main sheaf", "spare sheaf", "rcu_free sheaf", "barn full sheaf"};
    return place < 4 ? names[place] : "sheaf";
}

/*
 * Checks d's sheaves against the cache and the (already checked) slabs: each
 * object in one place only.  0, or SL_EINVAL / SL_ENOMEM with msg.
 */
static int check_sheaves(const sl_slub_cache *s, const sl_slub_seed_desc *d, char *msg, size_t len)
{
    if (!d->nsheaves)
        return SL_OK;
    if (!d->sheaves)
        return refuse(msg, len, SL_EINVAL, "the description lists %u sheaves but gives none", d->nsheaves);
    const sli_sheaves *sh = s->sheaves;
    if (!sh || !sli_sheaves_active(sh))
        return refuse(msg, len, SL_EINVAL,
                      "the description has %u sheaves, but this cache has none (a kernel before 6.18, or 6.18 "
                      "without a sheaf_capacity)",
                      d->nsheaves);
    uint32_t cap = sh->capacity, fresh = 0;
    uint8_t taken[SL_SLUB_MAX_CPUS][3] = {{0}};
    for (uint32_t i = 0; i < d->nsheaves; i++) {
        const sl_slub_seed_sheaf *x = &d->sheaves[i];
        const char *what = sheaf_name(x->place);
        if (x->place > SL_SLUB_SEED_BARN_FULL)
            return refuse(msg, len, SL_EINVAL, "sheaf %u: place %u is none of main, spare, rcu_free, barn full", i,
                          x->place);
        if (x->place != SL_SLUB_SEED_BARN_FULL && x->cpu >= s->ncpus)
            return refuse(msg, len, SL_EINVAL, "sheaf %u: a %s of CPU %u, but the cache has %u CPUs", i, what, x->cpu,
                          s->ncpus);
        if (x->place != SL_SLUB_SEED_BARN_FULL && taken[x->cpu][x->place]++)
            return refuse(msg, len, SL_EINVAL, "sheaf %u: a second %s for CPU %u", i, what, x->cpu);
        if (x->size && !x->objects)
            return refuse(msg, len, SL_EINVAL, "sheaf %u: a size without its objects", i);
        if (x->size > cap)
            return refuse(msg, len, SL_EINVAL, "sheaf %u (%s): %u objects, over the sheaf capacity %u", i, what,
                          x->size, cap);
        if (x->place == SL_SLUB_SEED_RCU_FREE && x->size == cap)
            return refuse(msg, len, SL_EINVAL, "sheaf %u: a full rcu_free sheaf (%u), which would be waiting for RCU",
                          i, cap);
        if (x->place == SL_SLUB_SEED_BARN_FULL && x->size != cap)
            return refuse(msg, len, SL_EINVAL, "sheaf %u: a barn full sheaf with %u of %u objects", i, x->size, cap);
        fresh += x->place != SL_SLUB_SEED_MAIN;
    }
    unsigned live = atomic_load_explicit(&sh->nr_sheaves, memory_order_relaxed);
    if (sh->max_sheaves && live + fresh > sh->max_sheaves)
        return refuse(msg, len, SL_EINVAL, "%u more sheaves than the model's limit of %u (%u exist)",
                      live + fresh - sh->max_sheaves, sh->max_sheaves, live);
    /* owner[slab * objects + k]: 0 allocated, 1 on a freelist, 2 + j in sheaf j */
    uint32_t per = s->g.objects;
    uint32_t *owner = calloc((size_t)(d->nslabs ? d->nslabs : 1) * (per ? per : 1), sizeof *owner);
    if (!owner)
        return refuse(msg, len, SL_ENOMEM, "no memory to check the description");
    for (uint32_t i = 0; i < d->nslabs; i++) {
        for (uint32_t k = 0; k < d->slabs[i].nfree; k++)
            owner[(size_t)i * per + d->slabs[i].free[k]] = 1;
        for (uint32_t k = 0; k < d->slabs[i].ncpu_free; k++)
            owner[(size_t)i * per + d->slabs[i].cpu_free[k]] = 1;
    }
    int rc = SL_OK;
    for (uint32_t j = 0; j < d->nsheaves && rc == SL_OK; j++) {
        const sl_slub_seed_sheaf *x = &d->sheaves[j];
        for (uint32_t k = 0; k < x->size && rc == SL_OK; k++) {
            uint32_t slab = x->objects[2 * k], idx = x->objects[2 * k + 1];
            if (slab >= d->nslabs || idx >= per) {
                rc = refuse(msg, len, SL_EINVAL,
                            "sheaf %u (%s): object %u is (slab %u, object %u), outside the %u "
                            "described slabs of %u objects",
                            j, sheaf_name(x->place), k, slab, idx, d->nslabs, per);
                break;
            }
            uint32_t *o = &owner[(size_t)slab * per + idx];
            if (*o == 1)
                rc = refuse(msg, len, SL_EINVAL, "sheaf %u (%s): object %u of slab %u is also on the slab's freelist",
                            j, sheaf_name(x->place), idx, slab);
            else if (*o)
                rc = refuse(msg, len, SL_EINVAL,
                            "sheaf %u (%s): object %u of slab %u is in two places (also sheaf "
                            "%u)",
                            j, sheaf_name(x->place), idx, slab, *o - 2);
            *o = 2 + j;
        }
    }
    free(owner);
    return rc;
}

static int check_desc(const sl_slub_cache *s, const sl_slub_seed_desc *d, char *msg, size_t len)
{
    if (d->nslabs && !d->slabs)
        return refuse(msg, len, SL_EINVAL, "the description lists %u slabs but gives none", d->nslabs);
    uint8_t *seen = calloc(s->g.objects ? s->g.objects : 1, 1);
    if (!seen)
        return refuse(msg, len, SL_ENOMEM, "no memory to check the description");
    bool cpu_slab[SL_SLUB_MAX_CPUS] = {false};
    int rc = SL_OK;
    for (uint32_t i = 0; i < d->nslabs && rc == SL_OK; i++) {
        const sl_slub_seed_slab *x = &d->slabs[i];
        bool on_cpu = x->list == SL_SLUB_SEED_CPU_SLAB || x->list == SL_SLUB_SEED_CPU_PARTIAL;
        if (x->list > SL_SLUB_SEED_FULL)
            rc = refuse(msg, len, SL_EINVAL, "slab %u: list %u is none of CPU slab, CPU partial, node partial, full", i,
                        x->list);
        else if (on_cpu && !s->rules.cpu_slab)
            rc = refuse(msg, len, SL_EINVAL, "slab %u: a %s, but this kernel version's cache has no per-CPU slabs", i,
                        list_name(x->list));
        else if (on_cpu && x->cpu >= s->ncpus)
            rc = refuse(msg, len, SL_EINVAL, "slab %u: a %s of CPU %u, but the cache has %u CPUs", i,
                        list_name(x->list), x->cpu, s->ncpus);
        else if (x->list == SL_SLUB_SEED_CPU_SLAB && cpu_slab[x->cpu])
            rc = refuse(msg, len, SL_EINVAL, "slab %u: a second CPU slab for CPU %u", i, x->cpu);
        else if (x->objects != s->g.objects)
            rc = refuse(msg, len, SL_EINVAL, "slab %u: %u objects, but the cache's slabs hold %u", i, x->objects,
                        s->g.objects);
        else if ((x->nfree && !x->free) || (x->ncpu_free && !x->cpu_free))
            rc = refuse(msg, len, SL_EINVAL, "slab %u: a freelist length without its objects", i);
        else if (x->ncpu_free && x->list != SL_SLUB_SEED_CPU_SLAB)
            rc = refuse(msg, len, SL_EINVAL, "slab %u: a CPU freelist on a %s (only a CPU slab has one)", i,
                        list_name(x->list));
        else if (x->inuse + x->nfree != x->objects)
            rc = refuse(msg, len, SL_EINVAL, "slab %u (%s): inuse %u and %u free objects do not make its %u", i,
                        list_name(x->list), x->inuse, x->nfree, x->objects);
        else if ((x->list == SL_SLUB_SEED_CPU_PARTIAL || x->list == SL_SLUB_SEED_NODE_PARTIAL) && !x->nfree)
            rc = refuse(msg, len, SL_EINVAL, "slab %u: a %s without free objects", i, list_name(x->list));
        else if (x->list == SL_SLUB_SEED_FULL && x->nfree)
            rc = refuse(msg, len, SL_EINVAL, "slab %u: a full slab with %u free objects", i, x->nfree);
        if (rc != SL_OK)
            break;
        if (x->list == SL_SLUB_SEED_CPU_SLAB)
            cpu_slab[x->cpu] = true;
        memset(seen, 0, s->g.objects);
        rc = check_indices(x, i, x->free, x->nfree, "free", seen, msg, len);
        if (rc == SL_OK)
            rc = check_indices(x, i, x->cpu_free, x->ncpu_free, "cpu_free", seen, msg, len);
    }
    free(seen);
    return rc == SL_OK ? check_sheaves(s, d, msg, len) : rc;
}

/* Fills the sheaves with the made slabs' objects (tracking: free, as a sheaf's). */
static int seed_sheaves(sli_act *a, const sl_slub_seed_desc *d, sli_slub_slab **made)
{
    sl_slub_cache *s = a->s;
    uint32_t total = 0, n = d->nsheaves;
    for (uint32_t j = 0; j < n; j++)
        total += d->sheaves[j].size;
    uint8_t *place = calloc(n, 1), *cpu = calloc(n, 1);
    uint32_t *size = calloc(n, sizeof *size), *off = calloc(n, sizeof *off);
    void **objs = calloc(total ? total : 1, sizeof *objs);
    int rc = SL_ENOMEM;
    if (place && cpu && size && off && objs) {
        static const uint8_t places[] = {SLI_SHEAF_MAIN, SLI_SHEAF_SPARE, SLI_SHEAF_RCU_FREE, SLI_SHEAF_BARN_FULL};
        for (uint32_t j = 0, at = 0; j < n; j++) {
            const sl_slub_seed_sheaf *x = &d->sheaves[j];
            place[j] = places[x->place];
            cpu[j] = x->place == SL_SLUB_SEED_BARN_FULL ? 0 : x->cpu;
            size[j] = x->size;
            off[j] = at;
            for (uint32_t k = 0; k < x->size; k++)
                objs[at++] = sli_obj_at(s, made[x->objects[2 * k]], x->objects[2 * k + 1]);
        }
        rc = sli_sheaves_seed(s->sheaves, a, n, place, cpu, size, off, objs);
        if (rc == SL_OK && s->info)
            for (uint32_t j = 0; j < n; j++)
                for (uint32_t k = 0; k < d->sheaves[j].size; k++)
                    sli_info(s, made[d->sheaves[j].objects[2 * k]], d->sheaves[j].objects[2 * k + 1])->state =
                        SLI_OBJ_FREE;
    }
    free(place);
    free(cpu);
    free(size);
    free(off);
    free(objs);
    return rc;
}

/* Links slab's objects idx[0..n-1] in that order; returns the first (NULL for none). */
static void *link_objects(sl_slub_cache *s, sli_slub_slab *slab, const uint32_t *idx, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        sli_set_fp(s, sli_obj_at(s, slab, idx[k]), k + 1 < n ? sli_obj_at(s, slab, idx[k + 1]) : NULL);
    return n ? sli_obj_at(s, slab, idx[0]) : NULL;
}

/* A new slab of the cache's order laid out as x describes (counters, freelist, tracking); NULL: no page. */
static sli_slub_slab *build_slab(sli_act *a, const sl_slub_seed_slab *x, uint8_t frozen)
{
    sl_slub_cache *s = a->s;
    sli_slub_slab *slab = sli_slub_new_slab(a);
    if (!slab)
        return NULL;
    if (sli_slab_order(slab) != s->g.order) { /* only the fallback order was left: the seed keeps one order */
        sli_slub_discard_slab(a, slab);
        return NULL;
    }
    void *first = link_objects(s, slab, x->free, x->nfree);
    slab->fc = (sl_dword){(uintptr_t)first, sli_counters(x->inuse, x->objects, frozen)};
    if (s->info) {
        for (uint32_t i = 0; i < x->objects; i++)
            sli_info(s, slab, i)->state = SLI_OBJ_ALLOCATED;
        for (uint32_t k = 0; k < x->nfree; k++)
            sli_info(s, slab, x->free[k])->state = SLI_OBJ_FREE;
        for (uint32_t k = 0; k < x->ncpu_free; k++)
            sli_info(s, slab, x->cpu_free[k])->state = SLI_OBJ_FREE;
    }
    return slab;
}

int sl_slub_seed(sl_slub_cache *s, const sl_slub_seed_desc *d, char *msg, size_t msg_len)
{
    if (msg && msg_len)
        msg[0] = 0;
    if (!s || !d)
        return refuse(msg, msg_len, SL_EINVAL, "no cache or no description");
    if (sli_kmem_cache_debug(s) || (s->flags & (SL_SLUB_POISON | SL_SLUB_RED_ZONE)))
        return refuse(msg, msg_len, SL_EINVAL, "a debug cache (red zones, poison, user tracking) cannot be seeded");
    if (sli_nr_slabs_all(s) != 0)
        return refuse(msg, msg_len, SL_EBUSY, "the cache already has slabs: seed a cache just created");
    int rc = check_desc(s, d, msg, msg_len);
    if (rc != SL_OK)
        return rc;
    sli_act a = {.s = s, .c = &s->cpu[0], .op = 0, .cpu = 0, .cas = 0};
    sli_slub_slab **made = calloc(d->nslabs ? d->nslabs : 1, sizeof *made);
    if (!made)
        return refuse(msg, msg_len, SL_ENOMEM, "no memory to seed");
    for (uint32_t i = 0; i < d->nslabs; i++) {
        const sl_slub_seed_slab *x = &d->slabs[i];
        uint8_t frozen =
            x->list == SL_SLUB_SEED_CPU_SLAB || (x->list == SL_SLUB_SEED_CPU_PARTIAL && s->rules.frozen_cpu_partial);
        made[i] = build_slab(&a, x, frozen);
        if (!made[i]) {
            for (uint32_t k = 0; k < i; k++)
                sli_slub_discard_slab(&a, made[k]);
            free(made);
            return refuse(msg, msg_len, SL_ENOMEM, "the arena holds only %u of the %u listed slabs (order %u)", i,
                          d->nslabs, s->g.order);
        }
    }
    if (d->nsheaves && seed_sheaves(&a, d, made) != SL_OK) {
        for (uint32_t k = 0; k < d->nslabs; k++)
            sli_slub_discard_slab(&a, made[k]);
        free(made);
        return refuse(msg, msg_len, SL_ENOMEM, "no memory for the %u described sheaves", d->nsheaves);
    }
    /* Lists, in the described order: CPU partial chains are built from their tails. */
    for (uint32_t i = 0; i < d->nslabs; i++) {
        const sl_slub_seed_slab *x = &d->slabs[i];
        sli_slub_slab *slab = made[i];
        if (x->list == SL_SLUB_SEED_CPU_SLAB) {
            sli_slub_cpu *c = &s->cpu[x->cpu];
            slab->cpu = x->cpu;
            c->slab = slab;
            sl_dword ft = sl_dw_read(&c->fl_tid);
            sl_dw_write_plain(&c->fl_tid,
                              (sl_dword){(uintptr_t)link_objects(s, slab, x->cpu_free, x->ncpu_free), ft.hi});
        } else if (x->list == SL_SLUB_SEED_NODE_PARTIAL) {
            sli_slub_add_partial(&a, slab, true);
        }
    }
    for (uint32_t i = d->nslabs; i-- > 0;) {
        const sl_slub_seed_slab *x = &d->slabs[i];
        if (x->list != SL_SLUB_SEED_CPU_PARTIAL)
            continue;
        sli_slub_cpu *c = &s->cpu[x->cpu];
        sli_slub_slab *slab = made[i], *old = c->partial;
        slab->cpu = x->cpu;
        slab->slabs = (old ? old->slabs : 0) + 1;
        slab->pobjects = (old ? old->pobjects : 0) + x->objects - x->inuse;
        slab->next = old;
        c->partial = slab;
    }
    free(made);
    /* Full slabs: every object in use, on no list. */
    sl_slub_seed_slab full = {.list = SL_SLUB_SEED_FULL, .objects = s->g.objects, .inuse = s->g.objects};
    uint32_t want = d->full_slabs < d->max_full ? d->full_slabs : d->max_full, nfull = 0;
    while (nfull < want && build_slab(&a, &full, 0))
        nfull++;
    return (int)nfull;
}
