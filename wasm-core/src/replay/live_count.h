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
 * The counter also reads the stream itself (sl_live_count_feed): the bytes
 * as the network delivers them, cut anywhere.  It walks the frames in
 * place, counts EVENTS frames, names caches from CACHE frames, forgets
 * names at HELLO, and hands every other frame the page decodes (HELLO,
 * CACHE, SITE, STATUS, SNAPSHOT, ERROR, SLABINFO) back in an output buffer,
 * in stream order, as whole frames.  A frame cut across calls is gathered
 * in a carry buffer of at most one frame (SL_LIVE_MAX_FRAME plus its
 * header).  Events of the watched cache (by name: the page's picked cache),
 * other than percpu's, are handed back too, as an EVENTS frame of only
 * those records, where their frame stood.
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
/* The wire's frame header (u32 payload length, u8 type, 3 reserved) and payload headers (cli/live_wire.h). */
#define SL_LIVE_FRAME_HDR 8
#define SL_LIVE_EVENTS_HDR 24
#define SL_LIVE_CACHE_HDR 24
/* A frame whose payload is longer is refused (a whole-machine snapshot is a few MB). */
#define SL_LIVE_MAX_FRAME (64u << 20)
/* Frame types (cli/live_wire.h enum live_frame_type). */
enum {
    SL_LIVE_F_HELLO = 1,
    SL_LIVE_F_CACHE,
    SL_LIVE_F_SITE,
    SL_LIVE_F_EVENTS,
    SL_LIVE_F_STATUS,
    SL_LIVE_F_SNAPSHOT,
    SL_LIVE_F_ERROR,
    SL_LIVE_F_SLABINFO
};

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

/*
 * Reads len bytes of the stream (any cut). Returns 0, or -1 when the stream
 * is malformed (a frame past SL_LIVE_MAX_FRAME, an EVENTS or CACHE frame of
 * the wrong length) or memory runs out: sl_live_count_error says which, and
 * every later feed fails the same way until sl_live_count_restart.  The
 * frames handed back are at sl_live_count_out until the next feed.
 */
int sl_live_count_feed(sl_live_count *c, const unsigned char *bytes, size_t len);
/* A new stream: drops a cut frame's bytes and the error (names are forgotten at the stream's HELLO). */
void sl_live_count_restart(sl_live_count *c);
/* Why the last feed failed (NUL-terminated), or "" when it did not. */
const char *sl_live_count_error(const sl_live_count *c);
/* The frames the last feed handed back (whole frames, header included); *len is set to their bytes. */
const unsigned char *sl_live_count_out(const sl_live_count *c, size_t *len);
/* Bytes held of a cut frame. */
size_t sl_live_count_pending(const sl_live_count *c);
/*
 * Watches the cache named `name` (len bytes; len 0: none): its events are
 * handed back by feed. Returns 0, or -1 when memory runs out (nothing is
 * then watched).
 */
int sl_live_count_watch(sl_live_count *c, const char *name, size_t len);
/* The last EVENTS frame's kernel_lost (the kernel's ring losses so far), 0 before any. */
uint64_t sl_live_count_kernel_lost(const sl_live_count *c);
/* The newest event's time (ns, the events' clock) read by feed, 0 before any. */
double sl_live_count_newest_ns(const sl_live_count *c);

/* Objects in the owner tables (at most 2 * SL_LIVE_OWNERS). */
uint32_t sl_live_count_owners(const sl_live_count *c);
/* Server cache ids whose cache has been looked up (a bounded cache of lookups). */
uint32_t sl_live_count_cache_ids(const sl_live_count *c);

#endif
