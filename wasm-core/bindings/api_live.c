/*
 * api_live.c - the live stream's counting (src/replay/live_count.h) for the
 * page's live worker (web/live/live-state.ts).  The worker copies each
 * fetched chunk of the stream into a buffer it malloc'ed here and feeds it
 * with one call, which cuts the frames, counts the events and hands back the
 * few other frames; the summary it posts twice a second is read back through the other
 * calls.  Built into every browser flavour and, on its own, into
 * slablab-live.wasm (a standalone module the worker instantiates
 * synchronously: see CMakeLists.txt).
 *
 * Numbers that may pass 2^31 (events, seconds) cross as doubles.  A null
 * counter is refused (0, NaN or nothing done), never followed.
 */
#include "export.h"

#include "../src/replay/live_count.h"

#include <math.h>

/* A new counter. Returns it, or 0 when memory runs out. */
SL_EXPORT sl_live_count *sl_api_live_create(void) { return sl_live_count_create(); }

SL_EXPORT void sl_api_live_destroy(sl_live_count *c) { sl_live_count_destroy(c); }

SL_EXPORT void sl_api_live_reset_names(sl_live_count *c)
{
    if (c)
        sl_live_count_reset_names(c);
}

/* Names cache id (len bytes of UTF-8 at name). Returns 0, or -1 (null counter, id past 65535, no memory). */
SL_EXPORT int sl_api_live_name_cache(sl_live_count *c, uint32_t id, const char *name, uint32_t len)
{
    return c && name ? sl_live_count_name_cache(c, id, name, len) : -1;
}

/* Counts count records (24 bytes each) at records, of a batch whose clock starts at base_ns. */
SL_EXPORT void sl_api_live_add(sl_live_count *c, double base_ns, const unsigned char *records, uint32_t count)
{
    if (c && records)
        sl_live_count_add(c, base_ns, records, count);
}

/* The newest second counted, or NaN for a null counter. */
SL_EXPORT double sl_api_live_now_s(sl_live_count *c) { return c ? (double)sl_live_count_now_s(c) : NAN; }
/* Events added, or NaN for a null counter. */
SL_EXPORT double sl_api_live_events(sl_live_count *c) { return c ? (double)sl_live_count_events(c) : NAN; }
/* Caches held, or 0. */
SL_EXPORT uint32_t sl_api_live_caches(sl_live_count *c) { return c ? sl_live_count_caches(c) : 0; }
/* Cache i's name, or 0. */
SL_EXPORT const char *sl_api_live_cache_name(sl_live_count *c, uint32_t i)
{
    return c ? sl_live_count_cache_name(c, i) : 0;
}
/* Cache i's events ever counted, or 0. */
SL_EXPORT double sl_api_live_cache_total(sl_live_count *c, uint32_t i)
{
    return c ? sl_live_count_cache_total(c, i) : 0;
}
/* Cache i's window into out (3 * 300 doubles: allocs, frees, remote). Returns its allocations and frees, or 0. */
SL_EXPORT double sl_api_live_cache_window(sl_live_count *c, uint32_t i, double *out)
{
    return c && out ? sl_live_count_cache_window(c, i, out) : 0;
}
/* Call sites seen since the last reset, or 0. */
SL_EXPORT uint32_t sl_api_live_sites(sl_live_count *c)
{
    const uint32_t *ids;
    return c ? sl_live_count_sites(c, &ids) : 0;
}
/* The site ids, in order of first event (sl_api_live_sites of them), or 0. */
SL_EXPORT const uint32_t *sl_api_live_site_ids(sl_live_count *c)
{
    const uint32_t *ids = 0;
    if (c)
        sl_live_count_sites(c, &ids);
    return ids;
}
/* Site id's decayed counts into out[0..1]. Returns the name of its first event's cache, or 0 when unseen. */
SL_EXPORT const char *sl_api_live_site(sl_live_count *c, uint32_t id, double *out)
{
    return c && out ? sl_live_count_site(c, id, out) : 0;
}
SL_EXPORT uint32_t sl_api_live_owners(sl_live_count *c) { return c ? sl_live_count_owners(c) : 0; }
SL_EXPORT uint32_t sl_api_live_cache_ids(sl_live_count *c) { return c ? sl_live_count_cache_ids(c) : 0; }

/*
 * Reads len bytes of the stream at bytes (any cut; the worker copies each fetched chunk there).
 * Returns 0, or -1 when the stream is malformed or memory ran out (sl_api_live_error says which)
 * or the counter is null. The frames handed back are at sl_api_live_out until the next feed.
 */
SL_EXPORT int sl_api_live_feed(sl_live_count *c, const unsigned char *bytes, uint32_t len)
{
    return c && (bytes || !len) ? sl_live_count_feed(c, bytes, len) : -1;
}
/* A new stream: drops a cut frame and the error. */
SL_EXPORT void sl_api_live_restart(sl_live_count *c)
{
    if (c)
        sl_live_count_restart(c);
}
/* Why the last feed failed ("" when it did not), or 0 for a null counter. */
SL_EXPORT const char *sl_api_live_error(sl_live_count *c) { return c ? sl_live_count_error(c) : 0; }
/* The frames the last feed handed back (sl_api_live_out_len bytes), or 0. */
SL_EXPORT const unsigned char *sl_api_live_out(sl_live_count *c)
{
    size_t len;
    return c ? sl_live_count_out(c, &len) : 0;
}
SL_EXPORT uint32_t sl_api_live_out_len(sl_live_count *c)
{
    size_t len = 0;
    if (c)
        sl_live_count_out(c, &len);
    return (uint32_t)len;
}
/* Bytes held of a cut frame, or 0. */
SL_EXPORT uint32_t sl_api_live_pending(sl_live_count *c) { return c ? (uint32_t)sl_live_count_pending(c) : 0; }
/* Watches the cache named by len bytes at name (len 0: none). Returns 0, or -1 (null counter, no memory). */
SL_EXPORT int sl_api_live_watch(sl_live_count *c, const char *name, uint32_t len)
{
    return c && (name || !len) ? sl_live_count_watch(c, name, len) : -1;
}
/* The last EVENTS frame's kernel losses, or NaN for a null counter. */
SL_EXPORT double sl_api_live_kernel_lost(sl_live_count *c) { return c ? (double)sl_live_count_kernel_lost(c) : NAN; }
/* The newest event's time in ns, or NaN for a null counter. */
SL_EXPORT double sl_api_live_newest_ns(sl_live_count *c) { return c ? sl_live_count_newest_ns(c) : NAN; }
