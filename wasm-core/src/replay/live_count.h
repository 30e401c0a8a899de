/*
 * live_count.h - the counting of `slablab serve`'s live event stream, once,
 * in C: the page's worker runs it as WebAssembly (bindings/api_live.c,
 * web/live/live-state.ts) and the native replay benchmark
 * (tests/tools/live_replay_native.c) runs it natively, so the two rates
 * compare the same code.
 *
 * What is kept, all of it bounded whatever the stream's length:
 *   - per cache (keyed by name, so history survives a server restart that
 *     numbers caches anew): allocation, free and remote-free counts per
 *     second over the last SL_LIVE_WINDOW_S seconds (a ring of bins), and
 *     the events ever counted; a cache with no event in the window is
 *     forgotten (caches come and go with names of their own);
 *   - the owner CPU of recently allocated objects, in two generations of at
 *     most SL_LIVE_OWNERS each (the older goes when the newer fills), to
 *     tell a remote free: freed on another CPU than the one that allocated;
 *   - per call site (server ids below SL_LIVE_SITE_IDS): allocation and
 *     free counts halving every SL_LIVE_SITE_HALF_LIFE_S seconds, and the
 *     cache of the site's first event.
 *
 * Records are the wire's (cli/live_wire.h): 24 bytes, little-endian, kind,
 * cpu, cache id (16 bits), site id, microseconds after the batch's base,
 * bytes, object address low and high words.  Seconds are the events' own
 * clock: floor((base_ns + dt_us * 1000) / 1e9).  An event older than the
 * window (a late CPU) is counted in the events total only.
 *
 * Not thread-safe: one counter is used by one thread at a time.
 */
#ifndef SL_LIVE_COUNT_H
#define SL_LIVE_COUNT_H

#include <stddef.h>
#include <stdint.h>

#define SL_LIVE_WINDOW_S 300
#define SL_LIVE_OWNERS 200000
#define SL_LIVE_SITE_IDS 65536
#define SL_LIVE_SITE_HALF_LIFE_S 10
/* Bytes of one record (cli/live_wire.h's LIVE_WIRE_EVENT). */
#define SL_LIVE_RECORD 24

typedef struct sl_live_count sl_live_count;

/* A new counter. Returns it, or NULL when memory runs out. */
sl_live_count *sl_live_count_create(void);
/* Frees c (NULL is ignored). */
void sl_live_count_destroy(sl_live_count *c);

/* A new connection: forgets the server's cache and site ids and the sites' counts (the bins stay, by name). */
void sl_live_count_reset_names(sl_live_count *c);
/*
 * Names server cache id `id` (below 65536) `name` (len bytes, not
 * terminated). Returns 0, or -1 when the id is out of range or memory runs
 * out (the id then keeps its former name).
 */
int sl_live_count_name_cache(sl_live_count *c, uint32_t id, const char *name, size_t len);
/*
 * Counts `count` records (SL_LIVE_RECORD bytes each, any alignment) of a batch whose clock starts at
 * base_ns. A base that is no time (NaN, negative, 2^64 ns or more) counts them in the events total only.
 */
void sl_live_count_add(sl_live_count *c, double base_ns, const unsigned char *records, uint32_t count);

/* The newest second counted (0 before any event). */
int64_t sl_live_count_now_s(const sl_live_count *c);
/* Events added, in or out of the window. */
uint64_t sl_live_count_events(const sl_live_count *c);
/* Remote frees counted since the counter was made. */
uint64_t sl_live_count_remote(const sl_live_count *c);

/* The caches held (each with an event in the window), numbered 0..n-1 until the next add. */
uint32_t sl_live_count_caches(const sl_live_count *c);
/* Cache i's name (NUL-terminated), or NULL when i is out of range. */
const char *sl_live_count_cache_name(const sl_live_count *c, uint32_t i);
/* Cache i's events ever counted (0 when i is out of range). */
double sl_live_count_cache_total(const sl_live_count *c, uint32_t i);
/*
 * Cache i's window, oldest second first and ending at now_s, into out:
 * allocs[SL_LIVE_WINDOW_S], frees[...], remote[...] (3 * SL_LIVE_WINDOW_S
 * values; seconds the ring does not hold are 0). Returns the allocations and
 * frees in the window, or 0 when i is out of range (out untouched).
 */
double sl_live_count_cache_window(const sl_live_count *c, uint32_t i, double *out);

/* The call sites seen since the last reset_names, in order of first event; *ids is set to them. */
uint32_t sl_live_count_sites(const sl_live_count *c, const uint32_t **ids);
/*
 * Site id's counts decayed to second now_s: out[0] allocations, out[1]
 * frees. Returns the name of the cache of its first event, or NULL when the
 * id has not been seen (out untouched).
 */
const char *sl_live_count_site(const sl_live_count *c, uint32_t id, double *out);

/* Objects in the owner tables (at most 2 * SL_LIVE_OWNERS). */
uint32_t sl_live_count_owners(const sl_live_count *c);
/* Server cache ids whose cache has been looked up (a bounded cache of lookups). */
uint32_t sl_live_count_cache_ids(const sl_live_count *c);

#endif
