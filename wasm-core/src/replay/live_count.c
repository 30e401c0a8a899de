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
 *
 * Invariants: every bin_of_id entry is -1 or a held cache; owners in each
 * table < SL_LIVE_OWNERS after an add; each table at most half full
 * (OWNER_SLOTS >= 2 * SL_LIVE_OWNERS), so probes end.
 */
#include "live_count.h"

#include <math.h>
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
    free(c);
}

void sl_live_count_reset_names(sl_live_count *c)
{
    for (uint32_t i = 0; i < CACHE_IDS; i++) {
        free(c->cache_name[i]);
        c->cache_name[i] = NULL;
        c->bin_of_id[i] = -1;
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
