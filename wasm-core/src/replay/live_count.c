/*
 * live_count.c - the live stream's counting (live_count.h says what is
 * kept and why it is bounded).
 *
 * Structures.  Caches are an array of bins (name, three rings of
 * SL_LIVE_WINDOW_S per-second counts, total, newest second), found by
 * server id through bin_of_id (id + 1; 0 is percpu), which is filled on
 * the first event of an id and cleared whenever a cache is forgotten or an
 * id renamed.  slot_sec[i] is the second ring slot i holds; a slot is
 * cleared in every cache when a newer second takes it, and that is also
 * when caches without an event in the window are forgotten.  Owners are
 * two open-addressing tables of 64-bit words: the object's address bits
 * 0-46 plus one (0 marks an empty slot) and the allocating CPU above bit
 * 48, so that a probe reads one word; deletion shifts the probe run back,
 * so no tombstones accumulate.  Sites are arrays indexed by server id.
 * The stream reader keeps a carry buffer (the bytes of one cut frame, grown
 * to that frame's size), an output buffer of the frames handed back by the
 * last feed, and watched[id] for the server ids named like the watched
 * cache.
 *
 * Invariants: every bin_of_id entry is -1 or a held cache; owners in each
 * table < SL_LIVE_OWNERS after an add; each table at most half full
 * (OWNER_SLOTS >= 2 * SL_LIVE_OWNERS), so probes end; carry_len <=
 * SL_LIVE_FRAME_HDR + SL_LIVE_MAX_FRAME; watched[id] is 1 only when
 * cache_name[id] equals watch_name.
 */
#include "live_count.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OWNER_BITS 19
#define OWNER_SLOTS (1u << OWNER_BITS)
#define OWNER_KEY ((1ull << 48) - 1)
#define CACHE_IDS 65536
#define PERCPU_BIN 0

enum { K_ALLOC = 1, K_FREE, K_KMALLOC, K_KFREE, K_PCPU_ALLOC, K_PCPU_FREE };

typedef struct owners {
    uint64_t *slot;
    uint32_t n;
} owners;

typedef struct bins {
    char *name;
    double total;
    int64_t last_s;
    uint32_t allocs[SL_LIVE_WINDOW_S], frees[SL_LIVE_WINDOW_S], remote[SL_LIVE_WINDOW_S];
} bins;

struct sl_live_count {
    char *cache_name[CACHE_IDS];
    int32_t bin_of_id[CACHE_IDS + 1];
    bins **bins;
    uint32_t nbins, cap;
    int64_t slot_sec[SL_LIVE_WINDOW_S];
    int64_t now_s;
    owners cur, old;
    double site_allocs[SL_LIVE_SITE_IDS], site_frees[SL_LIVE_SITE_IDS];
    int64_t site_at[SL_LIVE_SITE_IDS]; /* -1: not seen */
    char *site_cache[SL_LIVE_SITE_IDS];
    uint32_t site_ids[SL_LIVE_SITE_IDS];
    uint32_t nsites;
    uint64_t events, remote;
    /* The stream reader. */
    unsigned char *carry, *out;
    size_t carry_len, carry_cap, out_len, out_cap;
    char error[128];
    char *watch_name;
    unsigned char watched[CACHE_IDS];
    uint64_t kernel_lost;
    double newest_ns;
};

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t owner_home(uint64_t key) { return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - OWNER_BITS)); }

/* The slot holding key in t, or the empty slot where it would go. */
static uint32_t owner_find(const owners *t, uint64_t key)
{
    uint32_t i = owner_home(key);
    while (t->slot[i] && (t->slot[i] & OWNER_KEY) != key)
        i = (i + 1) & (OWNER_SLOTS - 1);
    return i;
}

static void owner_put(owners *t, uint64_t key, unsigned cpu)
{
    uint32_t i = owner_find(t, key);
    if (!t->slot[i])
        t->n++;
    t->slot[i] = key | (uint64_t)cpu << 48;
}

/* Removes key. Returns its CPU, or -1 when it was not there. */
static int owner_take(owners *t, uint64_t key)
{
    uint32_t i = owner_find(t, key);
    if (!t->slot[i])
        return -1;
    int cpu = (int)(t->slot[i] >> 48);
    t->n--;
    for (uint32_t j = i;;) {
        t->slot[i] = 0;
        for (;;) {
            j = (j + 1) & (OWNER_SLOTS - 1);
            if (!t->slot[j])
                return cpu;
            uint32_t home = owner_home(t->slot[j] & OWNER_KEY);
            /* Move slot j back to i unless its home lies cyclically in (i, j]. */
            if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
                break;
        }
        t->slot[i] = t->slot[j];
        i = j;
    }
}

static char *copy(const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

sl_live_count *sl_live_count_create(void)
{
    sl_live_count *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cur.slot = calloc(OWNER_SLOTS, sizeof *c->cur.slot);
    c->old.slot = calloc(OWNER_SLOTS, sizeof *c->old.slot);
    if (!c->cur.slot || !c->old.slot) {
        sl_live_count_destroy(c);
        return NULL;
    }
    for (uint32_t i = 0; i <= CACHE_IDS; i++)
        c->bin_of_id[i] = -1;
    for (uint32_t i = 0; i < SL_LIVE_WINDOW_S; i++)
        c->slot_sec[i] = -1;
    for (uint32_t i = 0; i < SL_LIVE_SITE_IDS; i++)
        c->site_at[i] = -1;
    return c;
}

void sl_live_count_destroy(sl_live_count *c)
{
    if (!c)
        return;
    sl_live_count_reset_names(c);
    for (uint32_t i = 0; i < c->nbins; i++) {
        free(c->bins[i]->name);
        free(c->bins[i]);
    }
    free(c->bins);
    free(c->cur.slot);
    free(c->old.slot);
    free(c->carry);
    free(c->out);
    free(c->watch_name);
    free(c);
}

void sl_live_count_reset_names(sl_live_count *c)
{
    for (uint32_t i = 0; i < CACHE_IDS; i++) {
        free(c->cache_name[i]);
        c->cache_name[i] = NULL;
        c->bin_of_id[i] = -1;
        c->watched[i] = 0;
    }
    c->bin_of_id[CACHE_IDS] = -1;
    for (uint32_t k = 0; k < c->nsites; k++) {
        uint32_t id = c->site_ids[k];
        c->site_at[id] = -1;
        free(c->site_cache[id]);
        c->site_cache[id] = NULL;
    }
    c->nsites = 0;
}

int sl_live_count_name_cache(sl_live_count *c, uint32_t id, const char *name, size_t len)
{
    if (id >= CACHE_IDS)
        return -1;
    char *p = copy(name, len);
    if (!p)
        return -1;
    free(c->cache_name[id]);
    c->cache_name[id] = p;
    c->bin_of_id[id + 1] = -1;
    c->watched[id] = c->watch_name && !strcmp(c->watch_name, p);
    return 0;
}

/* The bins named `name`, made when there are none. Returns its index, or -1 when memory runs out. */
static int32_t bins_named(sl_live_count *c, const char *name)
{
    for (uint32_t i = 0; i < c->nbins; i++)
        if (!strcmp(c->bins[i]->name, name))
            return (int32_t)i;
    if (c->nbins == c->cap) {
        uint32_t cap = c->cap ? 2 * c->cap : 64;
        bins **grown = realloc(c->bins, cap * sizeof *grown);
        if (!grown)
            return -1;
        c->bins = grown;
        c->cap = cap;
    }
    bins *b = calloc(1, sizeof *b);
    char *n = copy(name, strlen(name));
    if (!b || !n) {
        free(b);
        free(n);
        return -1;
    }
    b->name = n;
    b->last_s = INT64_MIN;
    c->bins[c->nbins] = b;
    return (int32_t)c->nbins++;
}

/* The bins of server id bid (id + 1, or PERCPU_BIN). Returns NULL when memory runs out. */
static bins *bins_of(sl_live_count *c, uint32_t bid)
{
    int32_t i = c->bin_of_id[bid];
    if (i < 0) {
        char generic[32];
        const char *name;
        if (bid == PERCPU_BIN)
            name = "percpu";
        else if (bid == 1)
            name = "kmalloc (pages)";
        else if (c->cache_name[bid - 1])
            name = c->cache_name[bid - 1];
        else {
            /* A cache the server has not named (yet): by its id, as the page always called it. */
            unsigned id = bid - 1, k = sizeof generic;
            generic[--k] = '\0';
            do
                generic[--k] = (char)('0' + id % 10);
            while ((id /= 10));
            memcpy(generic + k - 6, "cache ", 6);
            name = generic + k - 6;
        }
        i = bins_named(c, name);
        if (i < 0)
            return NULL;
        c->bin_of_id[bid] = i;
    }
    return c->bins[i];
}

/* The ring slot of second s, cleared (and caches idle for a window forgotten) if it held an older second. */
static int slot_of(sl_live_count *c, int64_t s)
{
    int i = (int)(((s % SL_LIVE_WINDOW_S) + SL_LIVE_WINDOW_S) % SL_LIVE_WINDOW_S);
    if (c->slot_sec[i] == s)
        return i;
    c->slot_sec[i] = s;
    int forgot = 0;
    for (uint32_t k = 0; k < c->nbins;) {
        bins *b = c->bins[k];
        if (b->last_s <= s - SL_LIVE_WINDOW_S) {
            free(b->name);
            free(b);
            c->bins[k] = c->bins[--c->nbins];
            forgot = 1;
            continue;
        }
        b->allocs[i] = b->frees[i] = b->remote[i] = 0;
        k++;
    }
    if (forgot)
        for (uint32_t k = 0; k <= CACHE_IDS; k++)
            c->bin_of_id[k] = -1;
    return i;
}

static void count_site(sl_live_count *c, uint32_t id, int64_t s, const bins *b, int alloc)
{
    int64_t at = c->site_at[id];
    if (at < 0) {
        char *cache = copy(b->name, strlen(b->name));
        if (!cache)
            return; /* out of memory: the site is not counted, and tried again at its next event */
        c->site_at[id] = s;
        c->site_allocs[id] = c->site_frees[id] = 0;
        c->site_cache[id] = cache;
        c->site_ids[c->nsites++] = id;
    } else if (s > at) {
        double decay = pow(0.5, (double)(s - at) / SL_LIVE_SITE_HALF_LIFE_S);
        c->site_allocs[id] *= decay;
        c->site_frees[id] *= decay;
        c->site_at[id] = s;
    }
    if (alloc)
        c->site_allocs[id]++;
    else
        c->site_frees[id]++;
}

void sl_live_count_add(sl_live_count *c, double base_ns, const unsigned char *records, uint32_t count)
{
    if (!(base_ns >= 0 && base_ns < 0x1p64)) {
        c->events += count; /* no clock (NaN, negative, past 2^64 ns): the events have no second */
        return;
    }
    int64_t s = -1;
    int sl = 0;
    /* The current second's span, in µs after base: most events fall in it, so most need no division. */
    double from_us = 1, to_us = 0;
    uint32_t last_bid = UINT32_MAX;
    bins *b = NULL;
    const unsigned char *r = records;
    for (uint32_t k = 0; k < count; k++, r += SL_LIVE_RECORD) {
        unsigned kind = r[0], cpu = r[1];
        uint32_t dt_us = rd32(r + 8);
        if (dt_us < from_us || dt_us >= to_us) {
            s = (int64_t)floor((base_ns + (double)dt_us * 1000.0) / 1e9);
            from_us = ((double)s * 1e9 - base_ns) / 1000.0;
            to_us = from_us + 1e6;
            if (s < c->now_s - SL_LIVE_WINDOW_S + 1) {
                from_us = 1; /* older than the window (a late CPU): not counted in bins */
                to_us = 0;
                continue;
            }
            if (s > c->now_s)
                c->now_s = s;
            sl = slot_of(c, s);
            last_bid = UINT32_MAX; /* slot_of may have forgotten a cache */
        }
        unsigned cid = (unsigned)r[2] | (unsigned)r[3] << 8;
        int pcpu = kind == K_PCPU_ALLOC || kind == K_PCPU_FREE;
        uint32_t bid = pcpu ? PERCPU_BIN : cid + 1;
        if (bid != last_bid) {
            b = bins_of(c, bid);
            if (!b)
                continue; /* out of memory: the event is not counted */
            last_bid = bid;
        }
        int alloc = kind == K_ALLOC || kind == K_KMALLOC || kind == K_PCPU_ALLOC;
        uint64_t key = ((uint64_t)(rd32(r + 20) & 0x7fff) << 32 | rd32(r + 16)) + 1;
        if (alloc) {
            b->allocs[sl]++;
            owner_put(&c->cur, key, cpu);
            if (c->cur.n >= SL_LIVE_OWNERS) {
                owners full = c->cur;
                c->cur = c->old;
                c->old = full;
                memset(c->cur.slot, 0, OWNER_SLOTS * sizeof *c->cur.slot);
                c->cur.n = 0;
            }
        } else {
            b->frees[sl]++;
            int mine = owner_take(&c->cur, key), older = owner_take(&c->old, key);
            int owner = mine >= 0 ? mine : older;
            if (owner >= 0 && (unsigned)owner != cpu) {
                b->remote[sl]++;
                c->remote++;
            }
        }
        b->total++;
        if (s > b->last_s)
            b->last_s = s;
        uint32_t site = rd32(r + 4);
        if (site && site < SL_LIVE_SITE_IDS)
            count_site(c, site, s, b, alloc);
    }
    c->events += count;
}

/* Makes *buf hold at least need bytes (*cap grown by doubling). Returns 0, or -1 when memory runs out. */
static int reserve(unsigned char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 1 << 16;
    while (n < need)
        n *= 2;
    unsigned char *p = realloc(*buf, n);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

/* Sets the reader's error (it stays until restart). Returns -1. */
static int fail(sl_live_count *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(sl_live_count *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof c->error, fmt, ap);
    va_end(ap);
    return -1;
}

/* Appends a frame of type `type` and n payload bytes to out; p may be NULL (the caller fills them). Returns the payload's place, or NULL when memory runs out. */
static unsigned char *emit(sl_live_count *c, unsigned type, const unsigned char *p, size_t n)
{
    if (reserve(&c->out, &c->out_cap, c->out_len + SL_LIVE_FRAME_HDR + n))
        return NULL;
    unsigned char *h = c->out + c->out_len;
    h[0] = (unsigned char)n;
    h[1] = (unsigned char)(n >> 8);
    h[2] = (unsigned char)(n >> 16);
    h[3] = (unsigned char)(n >> 24);
    h[4] = (unsigned char)type;
    h[5] = h[6] = h[7] = 0;
    if (p)
        memcpy(h + SL_LIVE_FRAME_HDR, p, n);
    c->out_len += SL_LIVE_FRAME_HDR + n;
    return h + SL_LIVE_FRAME_HDR;
}

/* Hands back the watched cache's events of an EVENTS payload p (well-formed) as an EVENTS frame of their own. Returns 0, or -1 when memory runs out. */
static int emit_watched(sl_live_count *c, const unsigned char *p, uint32_t count)
{
    const unsigned char *r = p + SL_LIVE_EVENTS_HDR;
    uint32_t kept = 0;
    for (uint32_t k = 0; k < count; k++, r += SL_LIVE_RECORD)
        kept += r[0] != K_PCPU_ALLOC && r[0] != K_PCPU_FREE && c->watched[(unsigned)r[2] | (unsigned)r[3] << 8];
    if (!kept)
        return 0;
    unsigned char *q = emit(c, SL_LIVE_F_EVENTS, NULL, SL_LIVE_EVENTS_HDR + (size_t)kept * SL_LIVE_RECORD);
    if (!q)
        return -1;
    memcpy(q, p, SL_LIVE_EVENTS_HDR);
    q[0] = (unsigned char)kept;
    q[1] = (unsigned char)(kept >> 8);
    q[2] = (unsigned char)(kept >> 16);
    q[3] = (unsigned char)(kept >> 24);
    q += SL_LIVE_EVENTS_HDR;
    r = p + SL_LIVE_EVENTS_HDR;
    for (uint32_t k = 0; k < count; k++, r += SL_LIVE_RECORD)
        if (r[0] != K_PCPU_ALLOC && r[0] != K_PCPU_FREE && c->watched[(unsigned)r[2] | (unsigned)r[3] << 8]) {
            memcpy(q, r, SL_LIVE_RECORD);
            q += SL_LIVE_RECORD;
        }
    return 0;
}

static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* Reads one whole frame (n payload bytes at p). Returns 0, or -1 with the reader's error set. */
static int frame(sl_live_count *c, unsigned type, const unsigned char *p, uint32_t n)
{
    switch (type) {
    case SL_LIVE_F_EVENTS: {
        if (n < SL_LIVE_EVENTS_HDR)
            return fail(c, "an EVENTS frame of %llu bytes is too short", (unsigned long long)n);
        uint32_t count = rd32(p);
        if (n != SL_LIVE_EVENTS_HDR + (uint64_t)count * SL_LIVE_RECORD)
            return fail(c, "an EVENTS frame of %llu bytes says %llu events", (unsigned long long)n,
                        (unsigned long long)count);
        double base = (double)rd64(p + 8);
        c->kernel_lost = rd64(p + 16);
        sl_live_count_add(c, base, p + SL_LIVE_EVENTS_HDR, count);
        if (count) {
            double last =
                base + (double)rd32(p + SL_LIVE_EVENTS_HDR + (size_t)(count - 1) * SL_LIVE_RECORD + 8) * 1000.0;
            if (last > c->newest_ns)
                c->newest_ns = last;
        }
        if (c->watch_name && emit_watched(c, p, count))
            return fail(c, "no memory left to hand back %llu events", (unsigned long long)count);
        return 0;
    }
    case SL_LIVE_F_HELLO:
        sl_live_count_reset_names(c);
        break;
    case SL_LIVE_F_CACHE:
        if (n < SL_LIVE_CACHE_HDR)
            return fail(c, "a CACHE frame of %llu bytes is too short", (unsigned long long)n);
        if (sl_live_count_name_cache(c, (unsigned)p[0] | (unsigned)p[1] << 8, (const char *)p + SL_LIVE_CACHE_HDR,
                                     n - SL_LIVE_CACHE_HDR))
            return fail(c, "no memory left for a cache name of %llu bytes",
                        (unsigned long long)(n - SL_LIVE_CACHE_HDR));
        break;
    case SL_LIVE_F_SITE:
    case SL_LIVE_F_STATUS:
    case SL_LIVE_F_SNAPSHOT:
    case SL_LIVE_F_ERROR:
    case SL_LIVE_F_SLABINFO:
        break;
    default:
        return 0; /* a newer server's frame: skipped */
    }
    if (!emit(c, type, p, n))
        return fail(c, "no memory left to hand back a frame of %llu bytes", (unsigned long long)n);
    return 0;
}

/* The payload length in the frame header at h. Returns it, or -1 (error set) past SL_LIVE_MAX_FRAME. */
static int64_t frame_len(sl_live_count *c, const unsigned char *h)
{
    uint32_t n = rd32(h);
    if (n > SL_LIVE_MAX_FRAME)
        return fail(c, "a frame of %llu bytes (more than %llu)", (unsigned long long)n,
                    (unsigned long long)SL_LIVE_MAX_FRAME);
    return n;
}

int sl_live_count_feed(sl_live_count *c, const unsigned char *bytes, size_t len)
{
    c->out_len = 0;
    if (c->error[0])
        return -1;
    size_t off = 0;
    if (c->carry_len) {
        /* Finish the frame cut at the end of the last feed: its header first, then its payload. */
        if (c->carry_len < SL_LIVE_FRAME_HDR) {
            size_t take = SL_LIVE_FRAME_HDR - c->carry_len < len ? SL_LIVE_FRAME_HDR - c->carry_len : len;
            memcpy(c->carry + c->carry_len, bytes, take);
            c->carry_len += take;
            off = take;
            if (c->carry_len < SL_LIVE_FRAME_HDR)
                return 0;
        }
        int64_t n = frame_len(c, c->carry);
        if (n < 0)
            return -1;
        size_t whole = SL_LIVE_FRAME_HDR + (size_t)n;
        if (reserve(&c->carry, &c->carry_cap, whole))
            return fail(c, "no memory left for a frame of %llu bytes", (unsigned long long)n);
        size_t take = whole - c->carry_len < len - off ? whole - c->carry_len : len - off;
        memcpy(c->carry + c->carry_len, bytes + off, take);
        c->carry_len += take;
        off += take;
        if (c->carry_len < whole)
            return 0;
        c->carry_len = 0;
        if (frame(c, c->carry[4], c->carry + SL_LIVE_FRAME_HDR, (uint32_t)n))
            return -1;
    }
    while (len - off >= SL_LIVE_FRAME_HDR) {
        int64_t n = frame_len(c, bytes + off);
        if (n < 0)
            return -1;
        if (len - off - SL_LIVE_FRAME_HDR < (size_t)n)
            break;
        if (frame(c, bytes[off + 4], bytes + off + SL_LIVE_FRAME_HDR, (uint32_t)n))
            return -1;
        off += SL_LIVE_FRAME_HDR + (size_t)n;
    }
    /* The cut frame's bytes so far (at least its header's room, for the next feed to finish it). */
    size_t rest = len - off;
    if (reserve(&c->carry, &c->carry_cap, rest > SL_LIVE_FRAME_HDR ? rest : SL_LIVE_FRAME_HDR))
        return fail(c, "no memory left for %llu bytes of a cut frame", (unsigned long long)rest);
    if (rest)
        memcpy(c->carry, bytes + off, rest);
    c->carry_len = rest;
    return 0;
}

void sl_live_count_restart(sl_live_count *c)
{
    c->carry_len = 0;
    c->out_len = 0;
    c->error[0] = '\0';
}

const char *sl_live_count_error(const sl_live_count *c) { return c->error; }

const unsigned char *sl_live_count_out(const sl_live_count *c, size_t *len)
{
    *len = c->out_len;
    return c->out;
}

size_t sl_live_count_pending(const sl_live_count *c) { return c->carry_len; }

int sl_live_count_watch(sl_live_count *c, const char *name, size_t len)
{
    free(c->watch_name);
    c->watch_name = NULL;
    memset(c->watched, 0, sizeof c->watched);
    if (!len)
        return 0;
    c->watch_name = copy(name, len);
    if (!c->watch_name)
        return -1;
    for (uint32_t i = 0; i < CACHE_IDS; i++)
        c->watched[i] = c->cache_name[i] && !strcmp(c->cache_name[i], c->watch_name);
    return 0;
}

uint64_t sl_live_count_kernel_lost(const sl_live_count *c) { return c->kernel_lost; }
double sl_live_count_newest_ns(const sl_live_count *c) { return c->newest_ns; }

int64_t sl_live_count_now_s(const sl_live_count *c) { return c->now_s; }
uint64_t sl_live_count_events(const sl_live_count *c) { return c->events; }
uint64_t sl_live_count_remote(const sl_live_count *c) { return c->remote; }
uint32_t sl_live_count_caches(const sl_live_count *c) { return c->nbins; }

const char *sl_live_count_cache_name(const sl_live_count *c, uint32_t i)
{
    return i < c->nbins ? c->bins[i]->name : NULL;
}

double sl_live_count_cache_total(const sl_live_count *c, uint32_t i) { return i < c->nbins ? c->bins[i]->total : 0; }

double sl_live_count_cache_window(const sl_live_count *c, uint32_t i, double *out)
{
    if (i >= c->nbins)
        return 0;
    const bins *b = c->bins[i];
    double in_window = 0;
    for (int k = 0; k < SL_LIVE_WINDOW_S; k++) {
        int64_t sec = c->now_s - (SL_LIVE_WINDOW_S - 1 - k);
        int slot = (int)(((sec % SL_LIVE_WINDOW_S) + SL_LIVE_WINDOW_S) % SL_LIVE_WINDOW_S);
        int held = c->slot_sec[slot] == sec;
        out[k] = held ? b->allocs[slot] : 0;
        out[SL_LIVE_WINDOW_S + k] = held ? b->frees[slot] : 0;
        out[2 * SL_LIVE_WINDOW_S + k] = held ? b->remote[slot] : 0;
        in_window += out[k] + out[SL_LIVE_WINDOW_S + k];
    }
    return in_window;
}

uint32_t sl_live_count_sites(const sl_live_count *c, const uint32_t **ids)
{
    *ids = c->site_ids;
    return c->nsites;
}

const char *sl_live_count_site(const sl_live_count *c, uint32_t id, double *out)
{
    if (id >= SL_LIVE_SITE_IDS || c->site_at[id] < 0)
        return NULL;
    double decay = pow(0.5, (double)(c->now_s - c->site_at[id]) / SL_LIVE_SITE_HALF_LIFE_S);
    out[0] = c->site_allocs[id] * decay;
    out[1] = c->site_frees[id] * decay;
    return c->site_cache[id];
}

uint32_t sl_live_count_owners(const sl_live_count *c) { return c->cur.n + c->old.n; }

uint32_t sl_live_count_cache_ids(const sl_live_count *c)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k <= CACHE_IDS; k++)
        n += c->bin_of_id[k] >= 0;
    return n;
}
