/*
 * snapshot_decode.c - turns the snapshot program's records into the model of
 * snapshot.h and works out what the kernel does not store in one place:
 *
 *  - Freelists.  The program sends a freelist as its unencoded head and the
 *    free pointers as stored in the objects.  With SLAB_FREELIST_HARDENED a
 *    stored pointer is ptr ^ s->random ^ swab(address it is stored at)
 *    (freelist_ptr_encode() in mm/slub.c, 6.x and 7.x alike), so each next
 *    object is decoded from the previous one.
 *  - Slab addresses.  A struct slab lives in the vmemmap array and its
 *    memory in the direct map, both linear in the page frame number:
 *    base = slab * (PAGE_SIZE / sizeof(struct page)) + offset, with one
 *    offset for the machine (page_offset_base - vmemmap_base * ratio, which
 *    /proc/kallsyms does not give here).  Every slab with a free object
 *    votes for an offset (the object rounded down to its slab's size, slabs
 *    being naturally aligned); the majority wins and gives the base of every
 *    listed slab, free objects or not.
 *  - Checks.  A free object must lie in its slab, at an object start
 *    (base + red_left_pad + i * size), and appear once: a cycle or a stray
 *    pointer becomes the freelist's error text, and is never followed
 *    further.  A freelist's length against objects - inuse is left to the
 *    reader (a CPU slab's objects are on the CPU freelist instead).
 *  - Classes (--objects).  Every object of a listed slab is allocated, free
 *    on the slab's freelist, on the owning CPU's freelist, or in a sheaf;
 *    an object claimed twice (possible only in a torn snapshot) is marked.
 */
#include "snapshot.h"

#include <stdlib.h>
#include <string.h>

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *q = realloc(p, ncap * elem);
    if (!q)
        return NULL;
    memset((char *)q + *cap * elem, 0, (ncap - *cap) * elem);
    *cap = ncap;
    return q;
}

static int words_push(sl_snap_words *v, uint64_t x)
{
    uint64_t *w = grow(v->w, &v->cap, v->n + 1, sizeof *w);
    if (!w)
        return -1;
    v->w = w;
    v->w[v->n++] = x;
    return 0;
}

static void words_free(sl_snap_words *v)
{
    free(v->w);
    memset(v, 0, sizeof *v);
}

/* ---- records --------------------------------------------------------------------------- */

static sl_snap_cache *current(sl_snapshot *snap)
{
    if (snap->ncaches == 0 || snap->caches[snap->ncaches - 1].ended)
        return NULL;
    return &snap->caches[snap->ncaches - 1];
}

/* Moves the words sent since the last CPU, SLAB or SHEAF record into `into`. */
static void take_pending(sl_snapshot *snap, sl_snap_words *into)
{
    *into = snap->pending;
    memset(&snap->pending, 0, sizeof snap->pending);
}

int sl_snapshot_add_record(sl_snapshot *snap, const void *data, size_t size)
{
    const struct snap_hdr *h = data;
    sl_snap_cache *c;
    if (size < sizeof *h || h->size > size)
        return -1;
    snap->records++;
    snap->bytes += size;
    switch (h->type) {
    case SNAP_REC_CACHE: {
        if (h->size < sizeof(struct snap_cache))
            return -1;
        sl_snap_cache *v = grow(snap->caches, &snap->cap_caches, snap->ncaches + 1, sizeof *v);
        if (!v)
            return -1;
        snap->caches = v;
        c = &v[snap->ncaches++];
        memset(c, 0, sizeof *c);
        memcpy(&c->rec, data, sizeof c->rec);
        c->rec.name[SNAP_NAME_LEN - 1] = '\0';
        c->cpus = calloc(snap->nr_cpus ? snap->nr_cpus : 1, sizeof *c->cpus);
        if (!c->cpus)
            return -1;
        if (snap->ncaches == 1) {
            snap->features = c->rec.features;
            snap->page_struct_size = c->rec.page_struct_size;
        }
        words_free(&snap->pending);
        return 0;
    }
    case SNAP_REC_WORDS: {
        const struct snap_words *w = data;
        if (h->size < offsetof(struct snap_words, w) || w->n > SNAP_WORDS_MAX ||
            h->size < offsetof(struct snap_words, w) + w->n * 8)
            return -1;
        for (uint32_t i = 0; i < w->n; i++)
            if (words_push(&snap->pending, w->w[i]))
                return -1;
        return 0;
    }
    default:
        break;
    }
    c = current(snap);
    if (!c)
        return -1;
    switch (h->type) {
    case SNAP_REC_CPU: {
        const struct snap_cpu *r = data;
        if (h->size < sizeof *r)
            return -1;
        if (r->flags & SNAP_F_RETRY) {
            words_free(&snap->pending);
            return 0;
        }
        if (r->cpu >= snap->nr_cpus)
            return -1;
        sl_snap_cpu *cpu = &c->cpus[r->cpu];
        words_free(&cpu->fl.stored);
        cpu->present = true;
        cpu->rec = *r;
        cpu->fl.head = r->freelist;
        cpu->fl.end = r->end;
        take_pending(snap, &cpu->fl.stored);
        return 0;
    }
    case SNAP_REC_SLAB: {
        const struct snap_slab *r = data;
        if (h->size < sizeof *r)
            return -1;
        if (r->flags & SNAP_F_RETRY) {
            words_free(&snap->pending);
            return 0;
        }
        sl_snap_slab *v = grow(c->slabs, &c->cap_slabs, c->nslabs + 1, sizeof *v);
        if (!v)
            return -1;
        c->slabs = v;
        sl_snap_slab *s = &v[c->nslabs++];
        memset(s, 0, sizeof *s);
        s->rec = *r;
        s->inuse = r->counters & 0xffff;
        s->objects = (r->counters >> 16) & 0x7fff;
        s->frozen = (unsigned)(r->counters >> 31) & 1;
        s->fl.head = r->freelist;
        s->fl.end = r->end;
        take_pending(snap, &s->fl.stored);
        return 0;
    }
    case SNAP_REC_SHEAF: {
        const struct snap_sheaf *r = data;
        if (h->size < sizeof *r)
            return -1;
        sl_snap_sheaf *v = grow(c->sheaves, &c->cap_sheaves, c->nsheaves + 1, sizeof *v);
        if (!v)
            return -1;
        c->sheaves = v;
        sl_snap_sheaf *s = &v[c->nsheaves++];
        memset(s, 0, sizeof *s);
        s->rec = *r;
        take_pending(snap, &s->objects);
        return 0;
    }
    case SNAP_REC_NODE: {
        const struct snap_node *r = data;
        if (h->size < sizeof *r)
            return -1;
        sl_snap_node *v = grow(c->nodes, &c->cap_nodes, c->nnodes + 1, sizeof *v);
        if (!v)
            return -1;
        c->nodes = v;
        c->nodes[c->nnodes++].rec = *r;
        return 0;
    }
    case SNAP_REC_END: {
        const struct snap_end_rec *r = data;
        if (h->size < sizeof *r)
            return -1;
        c->dropped = r->dropped;
        c->ended = true;
        words_free(&snap->pending);
        return 0;
    }
    default:
        return -1;
    }
}

/* ---- decoding -------------------------------------------------------------------------- */

static uint64_t swab64(uint64_t x) { return __builtin_bswap64(x); }

/* The order of a slab with `objects` objects: the cache's oo or min order, else the larger. */
static unsigned slab_order(const sl_snap_cache *c, unsigned objects)
{
    if (objects == sl_snap_oo_objects(c->rec.min))
        return sl_snap_oo_order(c->rec.min);
    return sl_snap_oo_order(c->rec.oo);
}

/* The bytes of a slab with `objects` objects. */
static uint64_t slab_bytes(const sl_snapshot *snap, const sl_snap_cache *c, unsigned objects)
{
    return (uint64_t)snap->page_size << slab_order(c, objects);
}

/*
 * Decodes fl->stored from fl->head into fl->objects.  The program stopped
 * where a pointer left the slab's aligned block; a pointer it followed is
 * decoded the same way here.
 */
static void decode_chain(const sl_snapshot *snap, const sl_snap_cache *c, sl_snap_freelist *fl)
{
    bool hardened = snap->features & SNAP_FEAT_HARDENED;
    uint64_t p = fl->head;
    words_free(&fl->objects);
    for (size_t i = 0; i < fl->stored.n && p; i++) {
        if (words_push(&fl->objects, p))
            return;
        uint64_t at = p + c->rec.offset;
        p = hardened ? fl->stored.w[i] ^ c->rec.random ^ swab64(at) : fl->stored.w[i];
    }
    switch (fl->end) {
    case SNAP_END_OUTSIDE:
        snprintf(fl->error, sizeof fl->error, "pointer 0x%llx leaves the slab; not followed", (unsigned long long)p);
        break;
    case SNAP_END_FAULT:
        snprintf(fl->error, sizeof fl->error, "reading the free pointer of 0x%llx failed", (unsigned long long)p);
        break;
    case SNAP_END_BOUND:
        snprintf(fl->error, sizeof fl->error, "longer than the slab's %zu objects: a cycle; not followed",
                 fl->stored.n ? fl->stored.n - 1 : 0);
        break;
    default:
        break;
    }
}

/*
 * Checks fl's objects against the slab at base (order, size): each inside,
 * at an object start, once.  Cuts the list at the first bad entry and says
 * why in fl->error.
 */
static void check_chain(const sl_snapshot *snap, const sl_snap_cache *c, const sl_snap_slab *s, sl_snap_freelist *fl,
                        uint8_t *seen)
{
    unsigned size = c->rec.size ? c->rec.size : 1;
    uint64_t bytes = slab_bytes(snap, c, s->objects);
    memset(seen, 0, s->objects ? s->objects : 1);
    for (size_t i = 0; i < fl->objects.n; i++) {
        uint64_t p = fl->objects.w[i];
        const char *why = NULL;
        uint64_t rel = p - s->base - c->rec.red_left_pad;
        if (p < s->base || p >= s->base + bytes)
            why = "outside the slab";
        else if (rel % size)
            why = "not at an object start";
        else if (rel / size >= s->objects)
            why = "past the slab's last object";
        else if (seen[rel / size]++)
            why = "repeated: a cycle";
        if (why) {
            snprintf(fl->error, sizeof fl->error, "free object %zu (0x%llx) %s; the list is cut there", i,
                     (unsigned long long)p, why);
            fl->objects.n = i;
            return;
        }
    }
}

/* Finds the direct map's offset by majority over the slabs with a free object. */
static void find_direct_map(sl_snapshot *snap)
{
    unsigned psz = snap->page_struct_size ? snap->page_struct_size : 64;
    snap->map_ratio = snap->page_size / psz;
    uint64_t best = 0;
    unsigned best_votes = 0, samples = 0;
    /* Boyer-Moore majority vote, then a count of the winner. */
    for (int pass = 0; pass < 2; pass++) {
        unsigned votes = 0;
        for (size_t ci = 0; ci < snap->ncaches; ci++) {
            sl_snap_cache *c = &snap->caches[ci];
            for (size_t si = 0; si < c->nslabs; si++) {
                sl_snap_slab *s = &c->slabs[si];
                uint64_t obj = s->fl.head;
                if (!obj || s->fl.end == SNAP_END_FAULT)
                    continue;
                uint64_t bytes = slab_bytes(snap, c, s->objects);
                uint64_t k = (obj & ~(bytes - 1)) - s->rec.addr * snap->map_ratio;
                if (pass == 0) {
                    samples++;
                    if (votes == 0)
                        best = k;
                    if (k == best)
                        votes++;
                    else
                        votes--;
                } else if (k == best) {
                    best_votes++;
                }
            }
        }
    }
    snap->map_offset = best;
    snap->map_samples = samples;
    snap->map_agreeing = best_votes;
}

typedef struct owner_map {
    uint64_t *keys;
    sl_snap_slab **vals;
    size_t cap;
} owner_map;

static size_t om_slot(const owner_map *m, uint64_t k)
{
    uint64_t h = k * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 20) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* Marks obj with class in the listed slab that holds it, if any (bases are keyed by their slab's order). */
static void mark(const sl_snapshot *snap, const owner_map *m, const sl_snap_cache *c, uint64_t obj, char class)
{
    unsigned orders[2] = {sl_snap_oo_order(c->rec.oo), sl_snap_oo_order(c->rec.min)};
    for (int k = 0; k < 2; k++) {
        uint64_t base = obj & ~(((uint64_t)snap->page_size << orders[k]) - 1);
        size_t i = om_slot(m, base);
        if (!m->keys[i])
            continue;
        sl_snap_slab *s = m->vals[i];
        uint64_t rel = obj - base - c->rec.red_left_pad;
        unsigned size = c->rec.size ? c->rec.size : 1;
        if (rel % size || rel / size >= s->objects || !s->state)
            return;
        char *st = &s->state[rel / size];
        *st = (*st == SL_SNAP_OBJ_ALLOCATED || *st == class) ? class : SL_SNAP_OBJ_CONFLICT;
        return;
    }
}

static void classify(sl_snapshot *snap, sl_snap_cache *c)
{
    owner_map m = {0};
    m.cap = 16;
    while (m.cap < c->nslabs * 2 + 2)
        m.cap *= 2;
    m.keys = calloc(m.cap, sizeof *m.keys);
    m.vals = calloc(m.cap, sizeof *m.vals);
    if (!m.keys || !m.vals)
        goto out;
    for (size_t i = 0; i < c->nslabs; i++) {
        sl_snap_slab *s = &c->slabs[i];
        if (!s->base || !s->objects)
            continue;
        s->state = malloc(s->objects + 1u);
        if (!s->state)
            continue;
        memset(s->state, SL_SNAP_OBJ_ALLOCATED, s->objects);
        s->state[s->objects] = '\0';
        size_t slot = om_slot(&m, s->base);
        m.keys[slot] = s->base;
        m.vals[slot] = s;
    }
    for (size_t i = 0; i < c->nslabs; i++)
        for (size_t j = 0; j < c->slabs[i].fl.objects.n; j++)
            mark(snap, &m, c, c->slabs[i].fl.objects.w[j], SL_SNAP_OBJ_FREE);
    for (unsigned cpu = 0; cpu < snap->nr_cpus; cpu++)
        for (size_t j = 0; j < c->cpus[cpu].fl.objects.n; j++)
            mark(snap, &m, c, c->cpus[cpu].fl.objects.w[j], SL_SNAP_OBJ_CPU);
    for (size_t i = 0; i < c->nsheaves; i++)
        for (size_t j = 0; j < c->sheaves[i].objects.n; j++)
            mark(snap, &m, c, c->sheaves[i].objects.w[j], SL_SNAP_OBJ_SHEAF);
out:
    free(m.keys);
    free(m.vals);
}

void sl_snapshot_decode(sl_snapshot *snap)
{
    find_direct_map(snap);
    for (size_t ci = 0; ci < snap->ncaches; ci++) {
        sl_snap_cache *c = &snap->caches[ci];
        size_t most = 1;
        for (size_t si = 0; si < c->nslabs; si++)
            if (c->slabs[si].objects > most)
                most = c->slabs[si].objects;
        uint8_t *seen = malloc(most > 0x8000 ? most : 0x8000);
        if (!seen)
            continue;
        for (size_t si = 0; si < c->nslabs; si++) {
            sl_snap_slab *s = &c->slabs[si];
            s->base = snap->map_agreeing ? s->rec.addr * snap->map_ratio + snap->map_offset : 0;
            decode_chain(snap, c, &s->fl);
            if (s->base)
                check_chain(snap, c, s, &s->fl, seen);
        }
        for (unsigned cpu = 0; cpu < snap->nr_cpus; cpu++) {
            sl_snap_cpu *k = &c->cpus[cpu];
            if (!k->present)
                continue;
            decode_chain(snap, c, &k->fl);
            for (size_t si = 0; si < c->nslabs; si++) {
                sl_snap_slab *s = &c->slabs[si];
                if (s->rec.where == SNAP_AT_CPU_SLAB && s->rec.owner == cpu && s->rec.addr == k->rec.slab && s->base)
                    check_chain(snap, c, s, &k->fl, seen);
            }
        }
        free(seen);
        if (snap->opt.objects)
            classify(snap, c);
    }
}

void sl_snapshot_free(sl_snapshot *snap)
{
    for (size_t ci = 0; ci < snap->ncaches; ci++) {
        sl_snap_cache *c = &snap->caches[ci];
        for (size_t i = 0; i < c->nslabs; i++) {
            words_free(&c->slabs[i].fl.stored);
            words_free(&c->slabs[i].fl.objects);
            free(c->slabs[i].state);
        }
        for (size_t i = 0; i < c->nsheaves; i++)
            words_free(&c->sheaves[i].objects);
        for (unsigned i = 0; i < snap->nr_cpus && c->cpus; i++) {
            words_free(&c->cpus[i].fl.stored);
            words_free(&c->cpus[i].fl.objects);
        }
        free(c->cpus);
        free(c->slabs);
        free(c->sheaves);
        free(c->nodes);
    }
    free(snap->caches);
    words_free(&snap->pending);
    snap->caches = NULL;
    snap->ncaches = snap->cap_caches = 0;
}
