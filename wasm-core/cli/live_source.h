/*
 * live_source.h - where `slablab serve`'s events come from.  A source hands
 * each record (bpf/live_records.h: a struct live_event, or a struct
 * live_cache_rec before a cache's first event) to a callback, from the
 * event thread, whenever it is polled.  Two sources sit behind the same
 * calls (poll, lost, close):
 *
 *   the kernel (live_source.c): loads the event program
 *     (wasm-core/bpf/slab_events.bpf.c, embedded as a libbpf skeleton),
 *     attaches it to the kmem and percpu tracepoints and drains its ring.
 *     Closing detaches and unloads everything it loaded; the kernel also
 *     drops the links when the process dies, since they live only as this
 *     process's file descriptors.
 *   a recording (live_source_capture.c, `serve --from`): the events of a
 *     `slablab capture` file, paced at their recorded timing or at a rate,
 *     with the capture's snapshots handed to a second callback at their
 *     recorded places among the events.  No root, no BPF.
 */
#ifndef SL_LIVE_SOURCE_H
#define SL_LIVE_SOURCE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "../bpf/live_records.h"
#include "live_ksyms.h"

#include <stdbool.h>

typedef struct sl_live_source sl_live_source;

/* Called for each record (a struct live_event or live_cache_rec); returns 0 to go on. */
typedef int (*sl_live_record_fn)(void *ctx, void *data, size_t size);

/* What each source does behind sl_live_source_poll, _lost and _close (below). */
typedef struct sl_live_source_ops {
    int (*poll)(sl_live_source *src, int timeout_ms);
    uint64_t (*lost)(sl_live_source *src);
    void (*close)(sl_live_source *src);
} sl_live_source_ops;

/* Every source's first member. */
struct sl_live_source {
    const sl_live_source_ops *ops;
};

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

/* Stops src and frees it (NULL is allowed): the kernel's detaches every program and unloads them. */
void sl_live_source_close(sl_live_source *src);

/* ---- A recording (live_source_capture.c) ---- */

/* A capture read into memory once, at start; every playback reads it. */
typedef struct sl_live_capture sl_live_capture;

/* The events kept in memory at most (32 bytes each: 256 MiB). */
#define SL_LIVE_CAPTURE_MAX_EVENTS (8u << 20)

/*
 * Reads the capture at path (a `slablab capture` .slabcap, gzip'd or not,
 * or plain ftrace text) with the replay's reader (src/replay): its events
 * (kmem_cache_alloc/free, kmalloc, kfree, percpu alloc/free; a free of an
 * object allocated before the trace included), its call sites' names, its
 * caches' names and geometry (its sysfs), its /proc/slabinfo, and its
 * snapshots (snapshot-start.json, snapshot-end.json) with their places
 * among the events.  Returns 0 with *out set, or 1 with err saying what is
 * wrong: cannot be opened, not a capture or trace, corrupt or truncated,
 * no events, more than SL_LIVE_CAPTURE_MAX_EVENTS.
 */
int sl_live_capture_load(sl_live_capture **out, const char *path, char *err, size_t errlen);

typedef struct sl_live_capture_info {
    const char *release; /* the recorded kernel's `uname -r` (from its snapshot), else "X.Y", else "unknown" */
    unsigned cpus;       /* the recorded machine's CPUs (the trace's, when the capture does not say) */
    uint64_t events;     /* events served per pass */
    uint64_t lost;       /* events the kernel lost while recording (the capture's count) */
    unsigned snapshots, caches, sites;
    double span_s; /* first event to last, as recorded */
} sl_live_capture_info;
void sl_live_capture_info_get(const sl_live_capture *cap, sl_live_capture_info *info);

/*
 * Moves the recording's call-site names into *k (what k held is freed): a
 * table of made-up function addresses, 64 KiB apart, under which each
 * recorded site's address is its function's plus its offset, so that
 * sl_ksyms_name gives back the recorded "function+0xoff".  The hub names
 * call sites from it as it names the kernel's from /proc/kallsyms.
 */
void sl_live_capture_take_symbols(sl_live_capture *cap, sl_ksyms *k);
void sl_live_capture_free(sl_live_capture *cap);

enum sl_live_pace {
    SL_LIVE_PACE_RECORDED, /* the recorded intervals between events */
    SL_LIVE_PACE_RATE,     /* `rate` events a second (a token bucket of 20 ms of events) */
    SL_LIVE_PACE_MAX,      /* as fast as the hub takes them */
};

typedef struct sl_live_playback {
    enum sl_live_pace pace;
    double rate; /* SL_LIVE_PACE_RATE: events a second */
    bool loop;   /* start again after the last event (else stay idle) */
} sl_live_playback;

/* Receives a JSON frame of the recording (LIVE_F_SNAPSHOT, LIVE_F_SLABINFO: live_wire.h) at its place among the events. */
typedef void (*sl_live_json_fn)(void *ctx, int type, const char *json, size_t len);

/*
 * Starts a playback of cap from its beginning: each poll hands fn the
 * records due by then, and json_fn each snapshot (and the recorded
 * /proc/slabinfo, at each pass's start) at its place.  Events are stamped
 * with the CLOCK_MONOTONIC time they are due (at the recorded pace: the
 * pass's start plus their recorded offset), so the stream reads like a
 * live one; a snapshot's taken_ns is the time it is handed over.  Returns
 * 0 with *out set, 1 with err (out of memory).
 */
int sl_live_source_open_capture(sl_live_source **out, const sl_live_capture *cap, const sl_live_playback *pb,
                                sl_live_record_fn fn, sl_live_json_fn json_fn, void *ctx, char *err, size_t errlen);

#endif /* SL_LIVE_SOURCE_H */
