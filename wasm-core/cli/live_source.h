/*
 * live_source.h - the kernel side of `slablab serve`: loads the event
 * program (wasm-core/bpf/slab_events.bpf.c, embedded as a libbpf skeleton),
 * attaches it to the kmem and percpu tracepoints, and hands each ring-buffer
 * record (bpf/live_records.h) to a callback.  Closing detaches and unloads
 * everything it loaded; the kernel also drops the links when the process
 * dies, since they live only as this process's file descriptors.
 */
#ifndef SL_LIVE_SOURCE_H
#define SL_LIVE_SOURCE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "../bpf/live_records.h"

typedef struct sl_live_source sl_live_source;

/* Called for each record (a struct live_event or live_cache_rec); returns 0 to go on. */
typedef int (*sl_live_record_fn)(void *ctx, void *data, size_t size);

/*
 * Loads and attaches the program: events of the named caches only when
 * nfilter > 0 (at most LIVE_MAX_FILTER), a kernel ring of ring_mb MiB (a
 * power of two), the calling process's own work skipped and counted
 * (sl_live_source_own).  Returns 0 with
 * *out set; SL_SNAP_UNAVAILABLE (3) with err naming what this machine or
 * build lacks; 1 with err for any other failure.
 */
int sl_live_source_open(sl_live_source **out, const char *const *filter, size_t nfilter, unsigned ring_mb,
                        sl_live_record_fn fn, void *ctx, char *err, size_t errlen);

/* Waits up to timeout_ms for records and delivers them. Returns the number delivered, or -1 on error. */
int sl_live_source_poll(sl_live_source *src, int timeout_ms);

/* Returns the events the kernel ring had no room for since open (summed over CPUs). */
uint64_t sl_live_source_lost(sl_live_source *src);

/*
 * What the program leaves out as the server's own work (slab_events.bpf.c):
 * by_context when it tells the server's process-context work from the
 * kernel's interrupt and preempt-disabled work that runs while the server
 * is current (live_own.h), else every event of the server's process; note
 * says which, or why not.  events: how many were left out since open.
 */
typedef struct sl_live_own {
    uint64_t events;
    bool by_context;
    char note[200];
} sl_live_own;
void sl_live_source_own(sl_live_source *src, sl_live_own *out);

/* Detaches every program, unloads them and frees src (NULL is allowed). */
void sl_live_source_close(sl_live_source *src);

#endif /* SL_LIVE_SOURCE_H */
