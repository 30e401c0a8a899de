/*
 * check.c - the SLUB model kept in step with a real kernel (check.h).
 *
 * The model.  One SLUB model cache (src/slub) with the real cache's slot
 * size and order, its kernel version's rules (the snapshot's release read
 * by kversion.c: 6.18 here, a per-CPU slab and CPU partial lists, sheaves
 * for the caches created with a sheaf_capacity), its CPUs, and tracking on
 * (each object's free/allocated state).  sl_slub_seed builds the earlier
 * snapshot's listed slabs into it, freelists in order, on their lists, and
 * its sheaves.  Full slabs, which a snapshot counts but does not list, are
 * made one at a time when an event first touches one.
 *
 * Real slabs and model slabs.  The model's slabs live in its own arena, so
 * each real slab (its first byte, found from an object's address: slabs
 * are buddy pages aligned to their size) is paired with a model slab (its
 * pfn): the seeded ones in description order; a real slab first met in a
 * free with a new full model slab (sl_slub_steer_new_slab: it was full at
 * the earlier snapshot); a real slab first met in an allocation with the
 * new slab the model took for that same allocation, or, when the model did
 * not take one, with a new empty slab.  A pairing ends when the model gives
 * its slab back (the FREE_SLAB counter moved: every pairing is checked).
 *
 * Driving it.  A free of object K on CPU c is sl_slub_free(K) on c (the
 * model's own free path: fast path into its CPU slab, __slab_free,
 * put_cpu_partial, discard, or a sheaf), unless the model holds K free
 * already: that is counted (free_misses, with a cause) and skipped.  An
 * allocation on CPU c is sl_slub_alloc on c; its object P against the
 * kernel's K is a prediction hit or miss, counted by the path the model
 * took (the ALLOC_FASTPATH, ALLOC_SLOWPATH and ALLOC_PCS counters).  After
 * a miss P is given back with sl_slub_free on c and K taken out of wherever
 * the model holds it free (sl_slub_steer_take: a correction, not a kernel
 * path); a K the model holds allocated already is counted
 * (alloc_of_allocated).
 *
 * Comparing.  Each slab the later snapshot lists (with a first byte) is
 * compared with its model slab: the list (CPU slab or CPU partial of the
 * same CPU, node partial), inuse, and each object's state (free: on a
 * freelist, a CPU freelist or in a sheaf).  A real slab with no model slab
 * is, for the model, a full slab on no list (it was never touched).  Each
 * disagreeing object gets the first cause whose rule holds: torn (the slab,
 * or an object claimed twice); during a read (an event on it fell in one
 * of the two reads, or the slab was first met during the earlier read and
 * the object not touched since); lost events; unlisted (an untouched
 * object of a slab the earlier snapshot did not list); untraced free or
 * allocation (the object changed state with no event of that kind on it);
 * other.  These are the rules of the TypeScript mirror of object states
 * (web/live/agreement.ts) that this replaced.
 */
#include "check_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX
enum { MAX_OBJECTS = 1 << 21 }; /* objects of the mapped slabs a check follows (24 bytes each) */

/* Per object of a mapped slab: which events touched it and when. */
enum { T_ALLOC = 1, T_FREE = 2, T_LAST_FREE = 4 }; /* T_LAST_FREE: the last event on it was a free */
typedef struct obj_mark {
    uint8_t touched;
    uint64_t first_ns, last_ns;
} obj_mark;

typedef struct pairing {
    uint64_t kbase;    /* the real slab's first byte */
    uint32_t pfn;      /* its model slab, or NONE32 once the model gave it back */
    uint32_t marks;    /* index of its objects' obj_mark */
    uint8_t guessed;   /* not listed by the earlier snapshot: its untouched objects' states were guessed */
    uint64_t first_ns; /* the first event on it (guessed slabs) */
} pairing;

struct sl_check {
    sli_check_cache a; /* the earlier snapshot's cache (geometry, and what was seeded) */
    sl_page_zone zone;
    bool zone_made;
    sl_slub_cache *s;
    unsigned ncpus;
    uint64_t slab_bytes;
    sl_slub_kversion version;
    pairing *pairs;
    uint32_t npairs, cap_pairs;
    uint32_t *hash;    /* open addressing: pair index + 1, 0 empty */
    uint32_t hash_cap; /* a power of two */
    uint32_t *by_pfn;  /* model pfn -> pair index + 1 */
    obj_mark *marks;
    uint32_t nmarks, cap_marks;
    uint8_t *free_map;   /* scratch: one slab's model free objects */
    uint64_t slab_frees; /* the model's FREE_SLAB counter last seen */
    bool seen_event;
    bool cpu_slabs; /* allocations come from a per-CPU slab (no sheaves, before 7.0) */
    uint64_t first_ns;
    bool earlier_read; /* sl_check_set_earlier_read was called */
    uint64_t earlier_end;
    uint64_t event_misses[2][2]; /* [allocation][during the earlier read] */
    sl_check_result r;           /* the event counters; sl_check_compare adds the comparison */
};

static const char *const cause_names[SL_CHECK_NR_CAUSES] = {
    "torn", "during_read", "lost", "unlisted", "untraced_free", "untraced_alloc", "list", "place", "other"};
static const char *const cause_words[SL_CHECK_NR_CAUSES] = {
    "torn snapshot (read while it changed)",
    "moved while a snapshot was being read",
    "lost events",
    "a slab the earlier snapshot did not list (its untouched objects guessed)",
    "a free with no event since its last allocation (kfree_rcu into a sheaf, bulk free, sheaf flush)",
    "an allocation with no event since its last free (sheaf refill or prefill, bulk allocation)",
    "a slab whose objects agree on another list (the model moved it otherwise: CPU partial or node partial, "
    "another CPU's slab)",
    "a slab whose objects and list agree, its inuse not (an object free in a sheaf or on a CPU freelist in one, on "
    "the slab's freelist in the other)",
    "other (the model's state contradicts the last event on the object: a failed correction)",
};

const char *sl_check_cause_name(unsigned cause) { return cause < SL_CHECK_NR_CAUSES ? cause_names[cause] : NULL; }
const char *sl_check_cause_words(unsigned cause) { return cause < SL_CHECK_NR_CAUSES ? cause_words[cause] : NULL; }

static int fail(char *err, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t len, int rc, const char *fmt, ...)
{
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static void note(sl_check_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(sl_check_result *r, const char *fmt, ...)
{
    size_t at = strlen(r->notes);
    if (at + 2 >= sizeof r->notes)
        return;
    if (at)
        r->notes[at++] = ';', r->notes[at++] = ' ', r->notes[at] = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes + at, sizeof r->notes - at, fmt, ap);
    va_end(ap);
}

/* ---- the pairing of real slabs and model slabs ------------------------ */

static uint32_t hash_slot(const sl_check *c, uint64_t kbase)
{
    uint64_t h = (kbase >> 12) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) & (c->hash_cap - 1);
}

/* The pairing of the real slab at kbase, or NULL. */
static pairing *pair_of(const sl_check *c, uint64_t kbase)
{
    for (uint32_t i = hash_slot(c, kbase);; i = (i + 1) & (c->hash_cap - 1)) {
        uint32_t v = c->hash[i];
        if (!v)
            return NULL;
        if (c->pairs[v - 1].kbase == kbase)
            return &c->pairs[v - 1];
    }
}

static bool hash_grow(sl_check *c)
{
    uint32_t cap = c->hash_cap ? 2 * c->hash_cap : 1024;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return false;
    free(c->hash);
    c->hash = h, c->hash_cap = cap;
    for (uint32_t p = 0; p < c->npairs; p++) {
        uint32_t i = hash_slot(c, c->pairs[p].kbase);
        while (c->hash[i])
            i = (i + 1) & (cap - 1);
        c->hash[i] = p + 1;
    }
    return true;
}

/* Pairs the real slab kbase (not paired yet) with model slab pfn (or NONE32).  NULL past a bound or without memory. */
static pairing *pair_new(sl_check *c, uint64_t kbase, uint32_t pfn, bool guessed, uint64_t t_ns)
{
    uint32_t per = c->a.objects;
    if (c->npairs >= SL_CHECK_MAX_SLABS || c->nmarks + per > MAX_OBJECTS)
        return NULL;
    if (2 * (c->npairs + 1) > c->hash_cap && !hash_grow(c))
        return NULL;
    if (c->npairs == c->cap_pairs) {
        uint32_t cap = c->cap_pairs ? 2 * c->cap_pairs : 256;
        pairing *g = realloc(c->pairs, cap * sizeof *g);
        if (!g)
            return NULL;
        c->pairs = g, c->cap_pairs = cap;
    }
    if (c->nmarks + per > c->cap_marks) {
        uint32_t cap = c->cap_marks ? 2 * c->cap_marks : 4096;
        while (cap < c->nmarks + per)
            cap *= 2;
        obj_mark *g = realloc(c->marks, (size_t)cap * sizeof *g);
        if (!g)
            return NULL;
        c->marks = g, c->cap_marks = cap;
    }
    pairing *p = &c->pairs[c->npairs];
    *p = (pairing){.kbase = kbase, .pfn = pfn, .marks = c->nmarks, .guessed = guessed, .first_ns = t_ns};
    memset(&c->marks[c->nmarks], 0, per * sizeof *c->marks);
    c->nmarks += per;
    uint32_t i = hash_slot(c, kbase);
    while (c->hash[i])
        i = (i + 1) & (c->hash_cap - 1);
    c->hash[i] = ++c->npairs;
    if (pfn != NONE32)
        c->by_pfn[pfn] = c->npairs;
    return p;
}

static void pair_model(sl_check *c, pairing *p, uint32_t pfn)
{
    p->pfn = pfn;
    c->by_pfn[pfn] = (uint32_t)(p - c->pairs) + 1;
}

/* After the model gave slabs back: pairings whose model slab is gone lose it. */
static void forget_freed_slabs(sl_check *c)
{
    uint64_t frees = sl_slub_stat_get(c->s, -1, SL_SLUB_FREE_SLAB);
    if (frees == c->slab_frees)
        return;
    c->slab_frees = frees;
    for (uint32_t i = 0; i < c->npairs; i++) {
        pairing *p = &c->pairs[i];
        sl_slub_steer_slab_info info;
        if (p->pfn != NONE32 && sl_slub_steer_slab(c->s, p->pfn, &info, NULL) != SL_OK) {
            if (c->by_pfn[p->pfn] == i + 1)
                c->by_pfn[p->pfn] = 0;
            p->pfn = NONE32;
        }
    }
}

/* ---- seeding ----------------------------------------------------------- */

/* Whether slab x's free indices are all distinct (a torn read may repeat one). */
static bool distinct(const sli_check_cache *a, const sli_check_slab *x, uint8_t *seen)
{
    memset(seen, 0, a->objects);
    for (uint32_t k = 0; k < x->nfree + x->ncpu_free; k++) {
        uint32_t i = k < x->nfree ? a->idx[x->free_at + k] : a->idx[x->cpu_free_at + k - x->nfree];
        if (seen[i]++)
            return false;
    }
    return true;
}

/*
 * The seed description of a's listed slabs that the model can take, each
 * paired (in description order) with no model slab yet; take[i] says which
 * of a->slabs were described.  A slab listed twice (the snapshot read it on
 * two lists while it moved) is described once.  SL_OK or SL_ENOMEM.
 */
static int describe(sl_check *c, sl_slub_seed_desc *d, sl_slub_seed_slab **slabs, uint8_t *take)
{
    sli_check_cache *a = &c->a;
    /* room for the listed slabs and, for the sheaves, one full slab per sheaf object at most */
    *slabs = calloc(a->nslabs + a->nsheaf_objs + 1, sizeof **slabs);
    uint8_t *seen = calloc(a->objects, 1);
    if (!*slabs || !seen) {
        free(seen);
        return SL_ENOMEM;
    }
    uint32_t n = 0, skipped = 0, twice = 0;
    for (size_t i = 0; i < a->nslabs; i++) {
        const sli_check_slab *x = &a->slabs[i];
        uint32_t nfree = x->nfree;
        bool partial = x->list != SLI_CHECK_CPU_SLAB;
        take[i] =
            !x->torn && x->objects == a->objects && nfree <= a->objects && (!partial || nfree) && distinct(a, x, seen);
        if (take[i] && pair_of(c, x->base)) {
            take[i] = 0;
            twice++;
            continue;
        }
        if (!take[i]) {
            skipped++;
            continue;
        }
        if (!pair_new(c, x->base, NONE32, false, 0)) {
            free(seen);
            return SL_ENOMEM;
        }
        (*slabs)[n++] = (sl_slub_seed_slab){.list = x->list,
                                            .cpu = x->cpu,
                                            .objects = a->objects,
                                            .inuse = a->objects - nfree,
                                            .nfree = nfree,
                                            .free = a->idx + x->free_at,
                                            .ncpu_free = x->ncpu_free,
                                            .cpu_free = a->idx + x->cpu_free_at};
    }
    free(seen);
    if (skipped)
        note(&c->r, "%u listed slabs not seeded (torn, or counts that disagree with their freelists)", skipped);
    if (twice)
        note(&c->r, "%u slabs listed twice (moving while read) seeded once", twice);
    d->nslabs = n;
    d->slabs = *slabs;
    return SL_OK;
}

/*
 * The sheaves' words: each object as (described slab, index).  An object on
 * a slab no list holds (a full slab, in the kernel) gets that slab described
 * as a full slab (appended to d's slabs, paired with no model slab yet: the
 * sheaves tell it after the seed).  Left out (a note says so) when an
 * object is not an object slot, is on a listed slab's freelist, or is held
 * twice: the snapshot changed while read.  SL_OK or SL_ENOMEM.
 */
static int describe_sheaves(sl_check *c, sl_slub_seed_desc *d, sl_slub_seed_slab *dslabs, sl_slub_seed_sheaf **out,
                            uint32_t **words)
{
    sli_check_cache *a = &c->a;
    if (!a->nsheaves || !a->nsheaf_objs || !a->sheaf_capacity)
        return SL_OK;
    *out = calloc(a->nsheaves, sizeof **out);
    *words = calloc(2 * a->nsheaf_objs, sizeof **words);
    uint8_t *held = calloc((size_t)(d->nslabs + a->nsheaf_objs) * a->objects, 1);
    if (!*out || !*words || !held) {
        free(held);
        return SL_ENOMEM;
    }
    /* what the listed slabs' freelists hold */
    for (uint32_t i = 0; i < d->nslabs; i++) {
        for (uint32_t k = 0; k < dslabs[i].nfree; k++)
            held[(size_t)i * a->objects + dslabs[i].free[k]] = 1;
        for (uint32_t k = 0; k < dslabs[i].ncpu_free; k++)
            held[(size_t)i * a->objects + dslabs[i].cpu_free[k]] = 1;
    }
    uint32_t ns = 0, nslabs = d->nslabs;
    const char *why = NULL;
    for (size_t j = 0; j < a->nsheaves && !why; j++) {
        const sli_check_sheaf *x = &a->sheaves[j];
        if (!x->size)
            continue;
        for (uint32_t k = 0; k < x->size && !why; k++) {
            uint64_t o = a->sheaf_objs[x->at + k];
            uint64_t base = o - o % c->slab_bytes;
            uint64_t off = o - base - a->red_left_pad;
            if (off % a->size || off / a->size >= a->objects) {
                why = "an object of theirs is no object slot";
                break;
            }
            pairing *p = pair_of(c, base);
            if (!p) {
                p = pair_new(c, base, NONE32, false, 0);
                if (!p) {
                    free(held);
                    return SL_ENOMEM;
                }
                dslabs[nslabs++] =
                    (sl_slub_seed_slab){.list = SL_SLUB_SEED_FULL, .objects = a->objects, .inuse = a->objects};
            }
            uint32_t si = (uint32_t)(p - c->pairs), idx = (uint32_t)(off / a->size);
            if (si >= nslabs || held[(size_t)si * a->objects + idx]++) {
                why = "an object of theirs is also on a freelist or in another sheaf";
                break;
            }
            (*words)[2 * (x->at + k)] = si;
            (*words)[2 * (x->at + k) + 1] = idx;
        }
        (*out)[ns++] =
            (sl_slub_seed_sheaf){.place = x->place, .cpu = x->cpu, .size = x->size, .objects = *words + 2 * x->at};
    }
    free(held);
    if (why) {
        /* The full slabs described for them go too: nothing else refers to them. */
        c->npairs = d->nslabs;
        memset(c->hash, 0, c->hash_cap * sizeof *c->hash);
        for (uint32_t p = 0; p < c->npairs; p++) {
            uint32_t i = hash_slot(c, c->pairs[p].kbase);
            while (c->hash[i])
                i = (i + 1) & (c->hash_cap - 1);
            c->hash[i] = p + 1;
        }
        c->nmarks = c->npairs * a->objects;
        note(&c->r, "sheaves start empty (%s): their objects are allocated in the model", why);
        return SL_OK;
    }
    d->nslabs = nslabs;
    d->nsheaves = ns;
    d->sheaves = *out;
    return SL_OK;
}

/*
 * After the seed: the model slabs of the full slabs described for sheaf
 * objects, found through the model's sheaves (each described sheaf read back
 * in place).
 */
static void pair_sheaf_slabs(sl_check *c, const sl_slub_seed_desc *d, uint32_t listed)
{
    void **objs = calloc(c->a.sheaf_capacity ? c->a.sheaf_capacity : 1, sizeof *objs);
    if (!objs)
        return;
    unsigned barn = 0;
    for (uint32_t j = 0; j < d->nsheaves; j++) {
        const sl_slub_seed_sheaf *x = &d->sheaves[j];
        uint32_t n = sl_slub_steer_sheaf(c->s, x->place, x->cpu, x->place == SL_SLUB_SEED_BARN_FULL ? barn++ : 0, objs,
                                         c->a.sheaf_capacity);
        for (uint32_t k = 0; k < n && k < x->size; k++) {
            uint32_t si = x->objects[2 * k], pfn, idx;
            if (si >= listed && si < c->npairs && c->pairs[si].pfn == NONE32 &&
                sl_slub_object_index(c->s, objs[k], &pfn, &idx))
                pair_model(c, &c->pairs[si], pfn);
        }
    }
    free(objs);
}

int sl_check_create(const sl_check_snapshot *snap, const char *name, sl_check **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!snap || !name)
        return fail(err, errlen, SL_EINVAL, "no snapshot or no cache name");
    if (snap->page_size != SL_PAGE_SIZE)
        return fail(err, errlen, SL_EINVAL, "pages of %u bytes: the model's are %u", snap->page_size,
                    (unsigned)SL_PAGE_SIZE);
    sl_check *c = calloc(1, sizeof *c);
    if (!c)
        return fail(err, errlen, SL_ENOMEM, "no memory for the check");
    int rc = sli_check_cache_read(snap, name, &c->a, err, errlen);
    if (rc != SL_OK) {
        free(c);
        return rc;
    }
    sli_check_cache *a = &c->a;
    snprintf(c->r.cache, sizeof c->r.cache, "%s", name);
    if (!sli_check_version(snap, &c->version)) {
        int failed = fail(err, errlen, SL_EINVAL, "the kernel release '%s' names no version", snap->release);
        sl_check_destroy(c);
        return failed;
    }
    snprintf(c->r.kernel, sizeof c->r.kernel, "%u.%u", c->version.major, c->version.minor);
    if (a->red_left_pad || a->inuse_bytes > (a->object_size + 7) / 8 * 8) {
        int failed = fail(err, errlen, SL_EINVAL,
                          "%s is a debug cache (red zones, poison, user tracking): the model does "
                          "not seed one",
                          name);
        sl_check_destroy(c);
        return failed;
    }
    unsigned ncpus = snap->nr_cpus > a->cpus_seen ? snap->nr_cpus : a->cpus_seen;
    c->ncpus = ncpus < 2 ? 2 : ncpus;
    if (c->ncpus > SL_SLUB_MAX_CPUS) {
        int failed = fail(err, errlen, SL_EINVAL, "%u CPUs: the model has at most %u", c->ncpus, SL_SLUB_MAX_CPUS);
        sl_check_destroy(c);
        return failed;
    }
    c->slab_bytes = (uint64_t)SL_PAGE_SIZE << a->order;
    /* The listed slabs twice over, and room for the full slabs the events will touch (made when touched). */
    size_t slabs = 2 * a->nslabs + (a->nr_slabs < 4096 ? a->nr_slabs : 4096) + 256;
    size_t zone = slabs * c->slab_bytes + ((size_t)4 << 20);
    if (zone > SL_CHECK_MAX_ZONE)
        zone = SL_CHECK_MAX_ZONE;
    if (sl_page_zone_init(&c->zone, zone, NULL) != SL_OK) {
        int failed = fail(err, errlen, SL_ENOMEM, "no memory for a %zu-byte model zone", zone);
        sl_check_destroy(c);
        return failed;
    }
    c->zone_made = true;
    bool sheaves = c->version.major >= 7 || (c->version.major == 6 && c->version.minor >= 18);
    sl_slub_config cfg = {
        .object_size = a->size,
        .track = 1,
        .seed = 1,
        .kernel = {.boot = {.min_order = (uint8_t)a->order, .max_order = (uint8_t)a->order, .max_order_set = 1},
                   .version = c->version}};
    if (sheaves && a->sheaf_capacity) {
        cfg.sheaf_capacity = (uint16_t)(a->sheaf_capacity < 0xffff ? a->sheaf_capacity : 0xffff);
        cfg.sheaf_capacity_exact = c->version.major >= 7;
    }
    rc = sl_slub_cache_create(&c->zone, NULL, c->ncpus, &cfg, &c->s);
    if (rc != SL_OK) {
        int failed = fail(err, errlen, rc, "the model has no cache for %s under Linux %u.%u's rules (%s)", name,
                          c->version.major, c->version.minor, sl_strerror(rc));
        sl_check_destroy(c);
        return failed;
    }
    const sl_slub_geometry *g = sl_slub_cache_geometry(c->s);
    if (g->objects != a->objects || g->size != a->size || g->order != a->order) {
        int failed = fail(err, errlen, SL_EINVAL,
                          "%s: the model's slabs (%u objects of %u bytes, order %u) are not the "
                          "kernel's (%u of %u, order %u)",
                          name, g->objects, g->size, g->order, a->objects, a->size, a->order);
        sl_check_destroy(c);
        return failed;
    }
    /* The kernel's tunables as read (sysfs min_partial and cpu_partial may have been written). */
    if (a->has_tunables && (sl_slub_set_min_partial(c->s, a->min_partial) != SL_OK ||
                            (c->version.major < 7 && g->cpu_partial != a->cpu_partial &&
                             sl_slub_set_cpu_partial(c->s, a->cpu_partial) != SL_OK)))
        note(&c->r, "the kernel's min_partial %u and cpu_partial %u could not be set", a->min_partial, a->cpu_partial);
    c->by_pfn = calloc(c->zone.npages, sizeof *c->by_pfn);
    c->free_map = calloc(a->objects, 1);
    uint8_t *take = calloc(a->nslabs ? a->nslabs : 1, 1);
    sl_slub_seed_desc d = {0};
    sl_slub_seed_slab *dslabs = NULL;
    sl_slub_seed_sheaf *dsheaves = NULL;
    uint32_t *words = NULL;
    rc = c->by_pfn && c->free_map && take && hash_grow(c) ? describe(c, &d, &dslabs, take) : SL_ENOMEM;
    uint32_t listed = d.nslabs;
    if (rc == SL_OK)
        rc = describe_sheaves(c, &d, dslabs, &dsheaves, &words);
    char msg[256] = "";
    if (rc == SL_OK) {
        rc = sl_slub_seed(c->s, &d, msg, sizeof msg);
        if (rc >= 0) {
            rc = SL_OK;
        } else if (d.nsheaves) { /* the sheaves broke a rule (a torn read): seed without them */
            note(&c->r, "sheaves start empty (%s)", msg);
            d.nsheaves = 0;
            d.nslabs = listed; /* the full slabs described for them are made when an event touches them */
            rc = sl_slub_seed(c->s, &d, msg, sizeof msg);
            rc = rc >= 0 ? SL_OK : rc;
        }
        if (rc != SL_OK)
            fail(err, errlen, rc, "%s: the model refused the snapshot's slabs: %s", name, msg);
    } else if (rc == SL_ENOMEM) {
        fail(err, errlen, rc, "no memory to seed %s", name);
    }
    if (rc == SL_OK) {
        uint32_t *pfns = calloc(listed ? listed : 1, sizeof *pfns);
        if (!pfns || sl_slub_steer_listed(c->s, pfns, listed) != listed) {
            rc = fail(err, errlen, pfns ? SL_ECORRUPT : SL_ENOMEM, "%s: the seeded lists are not the description's",
                      name);
        } else {
            for (uint32_t i = 0; i < listed; i++)
                pair_model(c, &c->pairs[i], pfns[i]);
            if (d.nsheaves)
                pair_sheaf_slabs(c, &d, listed);
            c->r.slabs_seeded = listed;
        }
        free(pfns);
    }
    free(take);
    free(dslabs);
    free(dsheaves);
    free(words);
    if (rc != SL_OK) {
        sl_check_destroy(c);
        return rc;
    }
    if (a->no_base)
        note(&c->r, "%u listed slabs without a first byte were left out", a->no_base);
    if (a->left_out)
        note(&c->r, "%u partial slabs past --max-slabs were not read", a->left_out);
    if (a->nnodes > 1)
        note(&c->r, "%u nodes' partial lists are the model's one node list", a->nnodes);
    c->slab_frees = sl_slub_stat_get(c->s, -1, SL_SLUB_FREE_SLAB);
    c->cpu_slabs = sl_slub_cache_rules(c->s)->cpu_slab && !sl_slub_cache_sheaf_capacity(c->s);
    *out = c;
    return SL_OK;
}

void sl_check_destroy(sl_check *c)
{
    if (!c)
        return;
    if (c->s) {
        /* Objects are still allocated: the cache goes all the same (SL_EBUSY is expected). */
        (void)sl_slub_cache_destroy(c->s);
    }
    if (c->zone_made)
        sl_page_zone_destroy(&c->zone);
    sli_check_cache_free(&c->a);
    free(c->pairs);
    free(c->hash);
    free(c->by_pfn);
    free(c->marks);
    free(c->free_map);
    free(c);
}

/* ---- events -------------------------------------------------------------- */

void sl_check_set_earlier_read(sl_check *c, uint64_t start_ns, uint64_t end_ns)
{
    (void)start_ns;
    if (c)
        c->earlier_read = true, c->earlier_end = end_ns;
}

int sl_check_validate(sl_check *c, char *msg, size_t len) { return c ? sl_slub_validate(c->s, msg, len) : SL_EINVAL; }

bool sl_check_knows(const sl_check *c, uint64_t address)
{
    return c && pair_of(c, address - address % c->slab_bytes) != NULL;
}

uint64_t sl_check_slab_bytes(const sl_check *c) { return c ? c->slab_bytes : 0; }

bool sl_check_object_slot(const sl_check *c, uint64_t address)
{
    if (!c)
        return false;
    uint64_t off = address % c->slab_bytes;
    return off >= c->a.red_left_pad && (off - c->a.red_left_pad) % c->a.size == 0 &&
           (off - c->a.red_left_pad) / c->a.size < c->a.objects;
}

/* The path the model's last allocation on cpu took, from its counters before (b) and after. */
static unsigned alloc_path(const sl_check *c, unsigned cpu, const uint64_t b[3])
{
    if (sl_slub_stat_get(c->s, (int)cpu, SL_SLUB_ALLOC_PCS) != b[2])
        return SL_CHECK_PATH_SHEAF;
    if (sl_slub_stat_get(c->s, (int)cpu, SL_SLUB_ALLOC_SLOWPATH) != b[1])
        return SL_CHECK_PATH_SLOW;
    return SL_CHECK_PATH_FAST;
}

/* A new model slab for real slab kbase (full: first met in a free).  NULL past a bound or out of pages. */
static pairing *adopt(sl_check *c, uint64_t kbase, pairing *p, bool full, uint64_t t_ns)
{
    uint32_t pfn;
    if (sl_slub_steer_new_slab(c->s, full, &pfn) != SL_OK)
        return NULL;
    if (p) {
        pair_model(c, p, pfn);
        p->guessed = 1, p->first_ns = t_ns;
        memset(&c->marks[p->marks], 0, c->a.objects * sizeof *c->marks);
    } else {
        p = pair_new(c, kbase, pfn, true, t_ns);
    }
    if (p) {
        if (full)
            c->r.slabs_adopted_full++;
        else
            c->r.slabs_adopted_new++;
    }
    return p;
}

/* Counts an event the model could not follow as it was, by whether it fell in the earlier read. */
static void event_miss(sl_check *c, bool alloc, uint64_t t_ns)
{
    bool in_read = c->earlier_read && t_ns <= c->earlier_end;
    c->event_misses[alloc][in_read]++;
}

static void mark(sl_check *c, const pairing *p, uint32_t idx, bool alloc, uint64_t t_ns)
{
    obj_mark *m = &c->marks[p->marks + idx];
    if (!m->touched)
        m->first_ns = t_ns;
    m->touched = (uint8_t)((m->touched & ~T_LAST_FREE) | (alloc ? T_ALLOC : T_FREE | T_LAST_FREE));
    m->last_ns = t_ns;
}

int sl_check_event(sl_check *c, uint64_t t_ns, unsigned cpu, bool alloc, uint64_t address)
{
    if (!c)
        return SL_EINVAL;
    uint64_t kbase = address - address % c->slab_bytes;
    uint64_t off = address - kbase;
    if (cpu >= c->ncpus || off < c->a.red_left_pad || (off - c->a.red_left_pad) % c->a.size ||
        (off - c->a.red_left_pad) / c->a.size >= c->a.objects) {
        c->r.events_outside++;
        return SL_EINVAL;
    }
    uint32_t idx = (uint32_t)((off - c->a.red_left_pad) / c->a.size);
    if (!c->seen_event)
        c->seen_event = true, c->first_ns = t_ns;
    pairing *p = pair_of(c, kbase);
    if (alloc) {
        uint64_t before[3] = {sl_slub_stat_get(c->s, (int)cpu, SL_SLUB_ALLOC_FASTPATH),
                              sl_slub_stat_get(c->s, (int)cpu, SL_SLUB_ALLOC_SLOWPATH),
                              sl_slub_stat_get(c->s, (int)cpu, SL_SLUB_ALLOC_PCS)};
        void *got = NULL;
        int rc = sl_slub_alloc(c->s, cpu, &got);
        forget_freed_slabs(c);
        uint32_t ppfn = 0, pidx = 0;
        if (rc != SL_OK || !sl_slub_object_index(c->s, got, &ppfn, &pidx)) {
            c->r.model_errors++;
            c->r.events_unapplied++;
            return SL_EINVAL;
        }
        unsigned path = alloc_path(c, cpu, before);
        uint32_t owner = c->by_pfn[ppfn];
        if (!owner && (!p || p->pfn == NONE32)) {
            /* The model took a new slab, the kernel's object is on a slab new to us: the same new slab. */
            if (p)
                pair_model(c, p, ppfn), p->guessed = 1, p->first_ns = t_ns;
            else
                p = pair_new(c, kbase, ppfn, true, t_ns);
            if (!p) {
                c->r.events_unapplied++;
                return SL_EINVAL;
            }
            owner = c->by_pfn[ppfn];
            c->r.slabs_bound_new++;
        }
        c->r.allocs++;
        c->r.path_allocs[path]++;
        c->r.events_applied++;
        if (p && owner == (uint32_t)(p - c->pairs) + 1 && pidx == idx) {
            c->r.hits++;
            c->r.path_hits[path]++;
            mark(c, p, idx, true, t_ns);
            return SL_OK;
        }
        /* A miss: the model's object goes back on this CPU, the kernel's is taken out of the model's free places. */
        if (sl_slub_free(c->s, cpu, got) != SL_OK)
            c->r.model_errors++;
        forget_freed_slabs(c);
        p = pair_of(c, kbase);
        if (!p || p->pfn == NONE32)
            p = adopt(c, kbase, p, false, t_ns);
        if (!p) {
            c->r.events_unapplied++;
            return SL_EINVAL;
        }
        mark(c, p, idx, true, t_ns);
        void *k = sl_slub_object_at(c->s, p->pfn, idx);
        int st = k ? sl_slub_steer_object_state(c->s, k) : SL_EFOREIGN;
        if (st == 1) {
            /* Without sheaves every allocation on a CPU comes from its CPU slab: the kernel's is K's slab. */
            sl_slub_steer_slab_info ki;
            if (c->cpu_slabs && sl_slub_steer_slab(c->s, p->pfn, &ki, NULL) == SL_OK &&
                !(ki.list == SL_SLUB_STEER_CPU_SLAB && ki.cpu == cpu) &&
                sl_slub_steer_cpu_slab(c->s, cpu, p->pfn) == SL_OK) {
                c->r.cpu_slab_corrections++;
                forget_freed_slabs(c);
            }
            rc = sl_slub_steer_take(c->s, cpu, k);
            if (rc == SL_OK)
                c->r.corrections++;
            else
                c->r.corrections_failed++;
        } else if (st == 0) {
            event_miss(c, true, t_ns);
        } else {
            c->r.model_errors++;
        }
        return SL_OK;
    }
    c->r.frees++;
    if (!p || p->pfn == NONE32)
        p = adopt(c, kbase, p, true, t_ns);
    if (!p) {
        c->r.events_unapplied++;
        return SL_EINVAL;
    }
    mark(c, p, idx, false, t_ns);
    void *k = sl_slub_object_at(c->s, p->pfn, idx);
    int st = k ? sl_slub_steer_object_state(c->s, k) : SL_EFOREIGN;
    if (st == 1) {
        event_miss(c, false, t_ns);
        c->r.events_applied++;
        return SL_OK;
    }
    if (st != 0 || sl_slub_free(c->s, cpu, k) != SL_OK) {
        c->r.model_errors++;
        c->r.events_unapplied++;
        return SL_EINVAL;
    }
    forget_freed_slabs(c);
    c->r.events_applied++;
    return SL_OK;
}

/* ---- comparing ----------------------------------------------------------- */

static const char *const list_names[5] = {"cpu_slab", "cpu_partial", "node_partial", "no list (full)",
                                          "the same list of another CPU"};

/* Adds a note naming where the slabs whose list disagrees are, in the kernel and in the model. */
static void list_moves_note(sl_check_result *r)
{
    char buf[256] = "";
    size_t at = 0;
    for (unsigned k = 0; k < 3; k++)
        for (unsigned m = 0; m < 5; m++)
            if (r->list_moves[k][m] && at < sizeof buf)
                at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%u %s/%s", at ? ", " : "", r->list_moves[k][m],
                                       list_names[k], list_names[m]);
    if (at)
        note(r,
             "lists that disagree (kernel/model): %s; %u of them with no event on any object (moved by a "
             "drain of a CPU partial list, a bulk operation, or before the tracing started)",
             buf, r->list_untouched);
}

/*
 * Caches with sheaves: counts the objects in each side's sheaves and, when
 * they differ, says so.  A free object in a sheaf counts as in use in its
 * slab, so every object one side holds in a sheaf and the other on the
 * slab's freelist is a `place` disagreement (or moves a slab's list).
 */
static void sheaves_note(sl_check *c, const sli_check_cache *b, sl_check_result *r)
{
    if (!c->a.sheaf_capacity || !sl_slub_cache_sheaf_capacity(c->s))
        return;
    void **objs = calloc(c->a.sheaf_capacity, sizeof *objs);
    if (!objs)
        return;
    uint32_t model = 0;
    for (unsigned k = 0; k < c->ncpus; k++)
        for (unsigned place = SL_SLUB_SEED_MAIN; place <= SL_SLUB_SEED_RCU_FREE; place++)
            model += sl_slub_steer_sheaf(c->s, place, k, 0, objs, c->a.sheaf_capacity);
    for (unsigned nth = 0;; nth++) {
        uint32_t n = sl_slub_steer_sheaf(c->s, SL_SLUB_SEED_BARN_FULL, 0, nth, objs, c->a.sheaf_capacity);
        if (!n)
            break;
        model += n;
    }
    free(objs);
    r->sheaf_objects_kernel = (uint32_t)b->nsheaf_objs;
    r->sheaf_objects_model = model;
    if (r->sheaf_objects_kernel != model)
        note(r,
             "objects in sheaves: %u in the kernel's, %u in the model's (each free object in a sheaf on one "
             "side and on its slab's freelist on the other moves that slab's inuse)",
             r->sheaf_objects_kernel, model);
}

static bool in_read(const sl_check_window *w, uint64_t first, uint64_t last)
{
    return w->timed && (first <= w->before[1] || last >= w->after[0]);
}

int sl_check_compare(sl_check *c, const sl_check_snapshot *snap, const sl_check_window *w, sl_check_result *out,
                     char *err, size_t errlen)
{
    if (!c || !snap || !w || !out)
        return fail(err, errlen, SL_EINVAL, "no check, snapshot, window or result");
    sl_check_result *r = out;
    *r = c->r;
    memset(r->causes, 0, sizeof r->causes);
    memset(r->slab_causes, 0, sizeof r->slab_causes);
    memset(r->list_moves, 0, sizeof r->list_moves);
    r->list_untouched = 0;
    /* The events the model could not follow: their causes need the window's lost count, known only now. */
    for (unsigned al = 0; al < 2; al++) {
        uint64_t *to = al ? r->alloc_of_allocated : r->free_misses;
        memset(to, 0, SL_CHECK_NR_CAUSES * sizeof *to);
        to[SL_CHECK_DURING_READ] = c->event_misses[al][1];
        to[w->lost ? SL_CHECK_LOST : al ? SL_CHECK_UNTRACED_FREE : SL_CHECK_UNTRACED_ALLOC] = c->event_misses[al][0];
    }
    sli_check_cache b;
    int rc = sli_check_cache_read(snap, c->a.name, &b, err, errlen);
    if (rc != SL_OK)
        return rc;
    if (b.objects != c->a.objects || b.size != c->a.size || b.order != c->a.order) {
        sli_check_cache_free(&b);
        return fail(err, errlen, SL_EINVAL, "%s: the later snapshot's geometry is not the earlier one's", c->a.name);
    }
    uint32_t per = c->a.objects;
    /* real[i]: 0 allocated, 1 free, 2 claimed twice (torn) */
    uint8_t *real = calloc(per, 1);
    uint8_t *listed = calloc(c->npairs ? c->npairs : 1, 1);
    if (!real || !listed) {
        free(real);
        free(listed);
        sli_check_cache_free(&b);
        return fail(err, errlen, SL_ENOMEM, "no memory to compare");
    }
    for (size_t si = 0; si < b.nslabs; si++) {
        const sli_check_slab *x = &b.slabs[si];
        memset(real, 0, per);
        for (uint32_t k = 0; k < x->nfree + x->ncpu_free; k++) {
            uint32_t i = k < x->nfree ? b.idx[x->free_at + k] : b.idx[x->cpu_free_at + k - x->nfree];
            real[i] = real[i] ? 2 : 1;
        }
        for (size_t k = 0; k < b.nsheaf_objs; k++) {
            uint64_t o = b.sheaf_objs[k];
            if (o - o % c->slab_bytes != x->base)
                continue;
            uint64_t off = o - x->base - c->a.red_left_pad;
            if (off % c->a.size == 0 && off / c->a.size < per) {
                uint32_t i = (uint32_t)(off / c->a.size);
                real[i] = real[i] ? 2 : 1;
            }
        }
        pairing *p = pair_of(c, x->base);
        sl_slub_steer_slab_info info = {.list = SL_SLUB_STEER_NONE, .objects = per, .inuse = per};
        bool modelled = p && p->pfn != NONE32 && sl_slub_steer_slab(c->s, p->pfn, &info, c->free_map) == SL_OK;
        if (!modelled)
            memset(c->free_map, 0, per); /* never touched: full, on no list, for the model */
        if (p)
            listed[p - c->pairs] = 1;
        r->slabs_compared++;
        bool list_ok = info.list == x->list && (x->list == SLI_CHECK_NODE_PARTIAL || info.cpu == x->cpu);
        bool inuse_ok = info.inuse == x->inuse;
        if (!list_ok && x->list < 3)
            r->list_moves[x->list][info.list == x->list ? 4 : info.list < 4 ? info.list : SL_SLUB_STEER_NONE]++;
        r->slabs_list_agreeing += list_ok;
        r->slabs_inuse_agreeing += inuse_ok;
        uint64_t cause_n[SL_CHECK_NR_CAUSES] = {0};
        uint32_t bad = 0;
        bool guessed = !p || p->guessed;
        uint64_t slab_first = p ? p->first_ns : 0;
        bool slab_in_read = p && p->guessed && w->timed && slab_first <= w->before[1];
        bool any_in_read = slab_in_read, any_touched = false;
        for (uint32_t i = 0; i < per; i++) {
            const obj_mark *m = p ? &c->marks[p->marks + i] : NULL;
            bool touched = m && m->touched;
            any_touched |= touched;
            if (touched && in_read(w, m->first_ns, m->last_ns))
                any_in_read = true;
            r->objects_compared++;
            if (real[i] == (c->free_map[i] ? 1 : 0)) {
                r->objects_agreeing++;
                continue;
            }
            bad++;
            sl_check_cause why = real[i] == 2 || x->torn ? SL_CHECK_TORN
                                 : (touched && in_read(w, m->first_ns, m->last_ns)) || (slab_in_read && !touched)
                                     ? SL_CHECK_DURING_READ
                                 : w->lost                                                   ? SL_CHECK_LOST
                                 : guessed && !touched                                       ? SL_CHECK_UNLISTED
                                 : real[i] == 1 && !(touched && (m->touched & T_LAST_FREE))  ? SL_CHECK_UNTRACED_FREE
                                 : real[i] == 0 && !(touched && !(m->touched & T_LAST_FREE)) ? SL_CHECK_UNTRACED_ALLOC
                                                                                             : SL_CHECK_OTHER;
            r->causes[why]++;
            cause_n[why]++;
        }
        if (!list_ok && !any_touched)
            r->list_untouched++;
        if (list_ok && inuse_ok) {
            r->slabs_agreeing++;
            continue;
        }
        unsigned top = SL_CHECK_OTHER;
        if (bad) {
            for (unsigned k = 0; k < SL_CHECK_NR_CAUSES; k++)
                if (cause_n[k] > cause_n[top] || (cause_n[k] == cause_n[top] && k < top && cause_n[k]))
                    top = k;
        } else {
            /* Every object agrees: nothing was guessed wrong, the slab sits elsewhere (its list, or inuse alone). */
            top = x->torn       ? SL_CHECK_TORN
                  : any_in_read ? SL_CHECK_DURING_READ
                  : w->lost     ? SL_CHECK_LOST
                  : !list_ok    ? SL_CHECK_LIST
                                : SL_CHECK_PLACE;
        }
        r->slab_causes[top]++;
        if (r->nexamples < SL_CHECK_EXAMPLES)
            r->examples[r->nexamples++] = (sl_check_example){.base = x->base,
                                                             .objects = bad,
                                                             .cause = (uint8_t)top,
                                                             .list_agrees = list_ok,
                                                             .inuse_agrees = inuse_ok};
    }
    for (uint32_t i = 0; i < c->npairs; i++) {
        sl_slub_steer_slab_info info;
        if (!listed[i] && c->pairs[i].pfn != NONE32 &&
            sl_slub_steer_slab(c->s, c->pairs[i].pfn, &info, NULL) == SL_OK && info.list != SL_SLUB_STEER_NONE)
            r->model_only_listed++;
    }
    if (b.no_base)
        note(r, "%u slabs of the later snapshot without a first byte were not compared", b.no_base);
    list_moves_note(r);
    sheaves_note(c, &b, r);
    free(real);
    free(listed);
    sli_check_cache_free(&b);
    return SL_OK;
}

static bool json_causes(sl_strbuf *o, const char *key, const uint64_t *v)
{
    bool ok = sl_strbuf_printf(o, "\"%s\": {", key);
    for (unsigned k = 0; k < SL_CHECK_NR_CAUSES; k++)
        ok = ok && sl_strbuf_printf(o, "%s\"%s\": %llu", k ? ", " : "", cause_names[k], (unsigned long long)v[k]);
    return ok && sl_strbuf_printf(o, "}");
}

bool sl_check_result_json(const sl_check_result *r, sl_strbuf *o)
{
    static const char *const paths[SL_CHECK_NR_PATHS] = {"fast", "slow", "sheaf"};
    bool ok = sl_strbuf_printf(o, "{\"cache\": ") && sl_strbuf_json_string(o, r->cache, strlen(r->cache)) &&
              sl_strbuf_printf(o,
                               ", \"kernel_rules\": \"%s\", \"slabs_compared\": %u, \"slabs_agreeing\": %u, "
                               "\"slabs_list_agreeing\": %u, \"slabs_inuse_agreeing\": %u, \"model_only_listed\": %u, "
                               "\"objects_compared\": %llu, \"objects_agreeing\": %llu, ",
                               r->kernel, r->slabs_compared, r->slabs_agreeing, r->slabs_list_agreeing,
                               r->slabs_inuse_agreeing, r->model_only_listed, (unsigned long long)r->objects_compared,
                               (unsigned long long)r->objects_agreeing) &&
              json_causes(o, "causes", r->causes) && sl_strbuf_printf(o, ", ") &&
              json_causes(o, "slab_causes", r->slab_causes) &&
              sl_strbuf_printf(o, ", \"allocs\": %llu, \"hits\": %llu, \"paths\": {", (unsigned long long)r->allocs,
                               (unsigned long long)r->hits);
    for (unsigned k = 0; k < SL_CHECK_NR_PATHS; k++)
        ok = ok && sl_strbuf_printf(o, "%s\"%s\": {\"allocs\": %llu, \"hits\": %llu}", k ? ", " : "", paths[k],
                                    (unsigned long long)r->path_allocs[k], (unsigned long long)r->path_hits[k]);
    ok = ok && sl_strbuf_printf(o, "}, \"frees\": %llu, ", (unsigned long long)r->frees) &&
         json_causes(o, "free_misses", r->free_misses) && sl_strbuf_printf(o, ", ") &&
         json_causes(o, "alloc_of_allocated", r->alloc_of_allocated) &&
         sl_strbuf_printf(o,
                          ", \"events_applied\": %llu, \"events_outside\": %llu, \"events_unapplied\": %llu, "
                          "\"model_errors\": %llu, \"corrections\": %llu, \"cpu_slab_corrections\": %llu, "
                          "\"corrections_failed\": %llu, "
                          "\"slabs_seeded\": %u, \"slabs_adopted_full\": %u, \"slabs_adopted_new\": %u, "
                          "\"slabs_bound_new\": %u, ",
                          (unsigned long long)r->events_applied, (unsigned long long)r->events_outside,
                          (unsigned long long)r->events_unapplied, (unsigned long long)r->model_errors,
                          (unsigned long long)r->corrections, (unsigned long long)r->cpu_slab_corrections,
                          (unsigned long long)r->corrections_failed, r->slabs_seeded, r->slabs_adopted_full,
                          r->slabs_adopted_new, r->slabs_bound_new);
    static const char *const lists[3] = {"cpu_slab", "cpu_partial", "node_partial"};
    static const char *const model_lists[5] = {"cpu_slab", "cpu_partial", "node_partial", "none", "other_cpu"};
    ok = ok && sl_strbuf_printf(o, "\"sheaf_objects_kernel\": %u, \"sheaf_objects_model\": %u, ",
                                r->sheaf_objects_kernel, r->sheaf_objects_model);
    ok = ok && sl_strbuf_printf(o, "\"list_untouched\": %u, \"list_moves\": {", r->list_untouched);
    for (unsigned k = 0; k < 3; k++) {
        ok = ok && sl_strbuf_printf(o, "%s\"%s\": {", k ? ", " : "", lists[k]);
        for (unsigned m = 0; m < 5; m++)
            ok = ok && sl_strbuf_printf(o, "%s\"%s\": %u", m ? ", " : "", model_lists[m], r->list_moves[k][m]);
        ok = ok && sl_strbuf_printf(o, "}");
    }
    ok = ok && sl_strbuf_printf(o, "}, \"examples\": [");
    for (uint32_t i = 0; i < r->nexamples; i++) {
        const sl_check_example *e = &r->examples[i];
        ok = ok && sl_strbuf_printf(o,
                                    "%s{\"base\": \"0x%llx\", \"objects\": %u, \"cause\": \"%s\", \"list_agrees\": "
                                    "%s, \"inuse_agrees\": %s}",
                                    i ? ", " : "", (unsigned long long)e->base, e->objects, cause_names[e->cause],
                                    e->list_agrees ? "true" : "false", e->inuse_agrees ? "true" : "false");
    }
    return ok && sl_strbuf_printf(o, "], \"notes\": ") && sl_strbuf_json_string(o, r->notes, strlen(r->notes)) &&
           sl_strbuf_printf(o, "}");
}
