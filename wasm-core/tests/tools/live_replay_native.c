/*
 * live_replay_native.c - the native side of the live replay benchmark
 * (scripts/live-bench.mjs, phase 4): reads a recorded `slablab serve`
 * stream (cli/live_wire.h) and counts it as the page's worker does
 * (web/live/live-state.ts's LiveState.add), in C: per-second allocation,
 * free and remote-free bins per cache over a 300-s ring, the owner CPU of
 * recently allocated objects in two generations of at most 200,000 (a
 * free on another CPU is remote), and call-site counts halving every 10 s.
 * The benchmark runs the page's own code on the same bytes in Chromium and
 * prints both rates: the page must reach 0.6 of this one.
 *
 *   live_replay_native STREAM_FILE REPS
 *
 * Prints one line: "events N best_s S events_per_s R remote M" (the best
 * of REPS runs; remote, the remote frees counted, is the same every run).
 * Exit status 1 when the file cannot be read or is not a stream.
 */
#include "../../cli/live_wire.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW_S 300
#define OWNERS 200000
#define OWNER_SLOTS (1u << 19) /* a power of two above OWNERS / 0.5: probes stay short */
#define MAX_BINS 4096
#define SITE_HALF_LIFE_S 10.0

enum { K_ALLOC = 1, K_FREE, K_KMALLOC, K_KFREE, K_PCPU_ALLOC, K_PCPU_FREE };

/* An open-addressing table of object -> CPU; key 0 is empty (keys are stored plus one). */
typedef struct owners {
    uint64_t *key;
    uint8_t *cpu;
    uint32_t n;
} owners;

typedef struct bins {
    char name[64];
    double allocs[WINDOW_S], frees[WINDOW_S], remote[WINDOW_S];
    double total;
} bins;

typedef struct site {
    double allocs, frees;
    int64_t at;
    int used;
} site;

typedef struct state {
    char (*cache_name)[64]; /* by server cache id */
    int32_t *bin_of_id;     /* by server cache id + 1 (0: percpu), -1 when not looked up yet */
    bins *bins;
    int nbins;
    int64_t slot_sec[WINDOW_S];
    int64_t now_s;
    owners cur, old;
    site *sites;
    uint64_t events, remote;
} state;

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t hash(uint64_t k)
{
    k *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(k >> 40) & (OWNER_SLOTS - 1);
}

/* The slot of key in t, or the empty slot where it would go. */
static uint32_t find(const owners *t, uint64_t key)
{
    uint32_t i = hash(key);
    while (t->key[i] && t->key[i] != key)
        i = (i + 1) & (OWNER_SLOTS - 1);
    return i;
}

static void put(owners *t, uint64_t key, uint8_t cpu)
{
    uint32_t i = find(t, key);
    if (!t->key[i])
        t->n++;
    t->key[i] = key;
    t->cpu[i] = cpu;
}

/* Removes key (backward-shift deletion: no tombstones). Returns its CPU, or -1 when absent. */
static int take(owners *t, uint64_t key)
{
    uint32_t i = find(t, key);
    if (!t->key[i])
        return -1;
    int cpu = t->cpu[i];
    t->n--;
    for (uint32_t j = i;;) {
        t->key[i] = 0;
        for (;;) {
            j = (j + 1) & (OWNER_SLOTS - 1);
            if (!t->key[j])
                return cpu;
            uint32_t home = hash(t->key[j]);
            if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
                break;
        }
        t->key[i] = t->key[j];
        t->cpu[i] = t->cpu[j];
        i = j;
    }
}

static int bin_named(state *st, const char *name)
{
    for (int i = 0; i < st->nbins; i++)
        if (!strcmp(st->bins[i].name, name))
            return i;
    if (st->nbins == MAX_BINS)
        return MAX_BINS - 1;
    bins *b = &st->bins[st->nbins];
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    return st->nbins++;
}

static int slot(state *st, int64_t s)
{
    int i = (int)(((s % WINDOW_S) + WINDOW_S) % WINDOW_S);
    if (st->slot_sec[i] != s) {
        st->slot_sec[i] = s;
        for (int b = 0; b < st->nbins; b++)
            st->bins[b].allocs[i] = st->bins[b].frees[i] = st->bins[b].remote[i] = 0;
    }
    return i;
}

static void add_events(state *st, const unsigned char *p, uint32_t count)
{
    uint64_t base = rd64(p + 8);
    const unsigned char *r = p + LIVE_WIRE_EVENTS_HDR;
    int64_t last_sec = -1;
    int sl = 0;
    for (uint32_t k = 0; k < count; k++, r += LIVE_WIRE_EVENT) {
        unsigned kind = r[0], cpu = r[1];
        unsigned cid = (unsigned)r[2] | (unsigned)r[3] << 8;
        double t = (double)base + (double)rd32(r + 8) * 1000.0;
        int64_t s = (int64_t)floor(t / 1e9);
        if (s < st->now_s - WINDOW_S + 1)
            continue;
        if (s > st->now_s)
            st->now_s = s;
        if (s != last_sec) {
            sl = slot(st, s);
            last_sec = s;
        }
        int pcpu = kind == K_PCPU_ALLOC || kind == K_PCPU_FREE;
        unsigned bid = pcpu ? 0 : cid + 1;
        int b = st->bin_of_id[bid];
        if (b < 0) {
            char name[64];
            if (pcpu)
                snprintf(name, sizeof name, "percpu");
            else if (cid == 0)
                snprintf(name, sizeof name, "kmalloc (pages)");
            else if (st->cache_name[cid][0])
                snprintf(name, sizeof name, "%s", st->cache_name[cid]);
            else
                snprintf(name, sizeof name, "cache %u", cid);
            b = st->bin_of_id[bid] = bin_named(st, name);
        }
        bins *bn = &st->bins[b];
        int alloc = kind == K_ALLOC || kind == K_KMALLOC || kind == K_PCPU_ALLOC;
        uint64_t key = ((uint64_t)(rd32(r + 20) & 0x7fff) << 32 | rd32(r + 16)) + 1;
        if (alloc) {
            bn->allocs[sl]++;
            put(&st->cur, key, (uint8_t)cpu);
            if (st->cur.n >= OWNERS) {
                owners tmp = st->old;
                st->old = st->cur;
                st->cur = tmp;
                memset(st->cur.key, 0, OWNER_SLOTS * sizeof *st->cur.key);
                st->cur.n = 0;
            }
        } else {
            bn->frees[sl]++;
            int a = take(&st->cur, key), o = take(&st->old, key);
            int owner = a >= 0 ? a : o;
            if (owner >= 0 && (unsigned)owner != cpu) {
                bn->remote[sl]++;
                st->remote++;
            }
        }
        bn->total++;
        uint32_t sid = rd32(r + 4);
        if (sid && sid < 65536) {
            site *si = &st->sites[sid];
            if (!si->used) {
                *si = (site){.at = s, .used = 1};
            }
            if (s > si->at) {
                double decay = pow(0.5, (double)(s - si->at) / SITE_HALF_LIFE_S);
                si->allocs *= decay;
                si->frees *= decay;
                si->at = s;
            }
            if (alloc)
                si->allocs++;
            else
                si->frees++;
        }
    }
    st->events += count;
}

/* Counts the whole stream once into a fresh st. Returns 0, or -1 when it is not a well-formed stream. */
static int replay(state *st, const unsigned char *buf, size_t len)
{
    memset(st->cache_name, 0, 65536 * sizeof *st->cache_name);
    for (int i = 0; i < 65537; i++)
        st->bin_of_id[i] = -1;
    st->nbins = 0;
    for (int i = 0; i < WINDOW_S; i++)
        st->slot_sec[i] = -1;
    st->now_s = 0;
    memset(st->cur.key, 0, OWNER_SLOTS * sizeof *st->cur.key);
    memset(st->old.key, 0, OWNER_SLOTS * sizeof *st->old.key);
    st->cur.n = st->old.n = 0;
    memset(st->sites, 0, 65536 * sizeof *st->sites);
    st->events = st->remote = 0;
    size_t off = 0;
    while (len - off >= LIVE_WIRE_FRAME_HDR) {
        uint32_t n = rd32(buf + off);
        unsigned type = buf[off + 4];
        if (len - off - LIVE_WIRE_FRAME_HDR < n)
            break; /* a recording cut mid-frame: its end is not counted */
        const unsigned char *p = buf + off + LIVE_WIRE_FRAME_HDR;
        if (type == LIVE_F_CACHE && n >= LIVE_WIRE_CACHE_HDR) {
            unsigned id = (unsigned)p[0] | (unsigned)p[1] << 8;
            size_t nl = n - LIVE_WIRE_CACHE_HDR < 63 ? n - LIVE_WIRE_CACHE_HDR : 63;
            memcpy(st->cache_name[id], p + LIVE_WIRE_CACHE_HDR, nl);
            st->cache_name[id][nl] = '\0';
            st->bin_of_id[id + 1] = -1;
        } else if (type == LIVE_F_EVENTS) {
            if (n < LIVE_WIRE_EVENTS_HDR || n != LIVE_WIRE_EVENTS_HDR + (uint64_t)rd32(p) * LIVE_WIRE_EVENT)
                return -1;
            add_events(st, p, rd32(p));
        }
        off += LIVE_WIRE_FRAME_HDR + n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: live_replay_native STREAM_FILE REPS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(len > 0 ? (size_t)len : 1);
    if (!buf || len <= 0 || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "%s: cannot read it\n", argv[1]);
        return 1;
    }
    fclose(f);
    static state st;
    st.cache_name = calloc(65536, sizeof *st.cache_name);
    st.bin_of_id = calloc(65537, sizeof *st.bin_of_id);
    st.bins = calloc(MAX_BINS, sizeof *st.bins);
    st.sites = calloc(65536, sizeof *st.sites);
    st.cur.key = calloc(OWNER_SLOTS, sizeof *st.cur.key);
    st.cur.cpu = calloc(OWNER_SLOTS, 1);
    st.old.key = calloc(OWNER_SLOTS, sizeof *st.old.key);
    st.old.cpu = calloc(OWNER_SLOTS, 1);
    if (!st.cache_name || !st.bin_of_id || !st.bins || !st.sites || !st.cur.key || !st.cur.cpu || !st.old.key ||
        !st.old.cpu) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    int reps = atoi(argv[2]);
    double best = INFINITY;
    for (int r = 0; r < (reps > 0 ? reps : 1); r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (replay(&st, buf, (size_t)len)) {
            fprintf(stderr, "%s: not a well-formed stream\n", argv[1]);
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        if (s < best)
            best = s;
    }
    printf("events %llu best_s %.6f events_per_s %.0f remote %llu\n", (unsigned long long)st.events, best,
           (double)st.events / best, (unsigned long long)st.remote);
    return 0;
}
