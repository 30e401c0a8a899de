/*
 * live_server.h - `slablab serve`'s state shared by its threads: the
 * options, the built site, the hub, the event source, the snapshot
 * schedule.  cmd_serve.c runs it; live_http.c answers requests.
 */
#ifndef SL_LIVE_SERVER_H
#define SL_LIVE_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../bpf/live_records.h"
#include "live_hub.h"
#include "live_site.h"
#include "live_source.h"

#define LIVE_TOKEN_HEX 32  /* 128 random bits */
#define LIVE_MAX_STREAMS 8 /* pages streaming at once */

typedef struct sl_live_server {
    /* Options. */
    char bind[64];
    unsigned port; /* as bound (0 asked for: the kernel's pick) */
    bool bind_loopback;
    char token[LIVE_TOKEN_HEX + 1];
    char cookie[48]; /* slablab_token_<port> */
    const char *filter[LIVE_MAX_FILTER];
    unsigned nfilter;
    unsigned ring_mb;
    unsigned snapshot_s; /* 0: no periodic snapshots */
    unsigned max_slabs;
    /* --from: the recording played instead of the kernel's events (NULL: the kernel), and how. */
    sl_live_capture *recording;
    sl_live_playback playback;
    /* State. */
    sl_site site;
    sl_live_hub *hub;
    pthread_mutex_t snap_mu; /* one snapshot at a time (libbpf's print hook is global) */
    pthread_mutex_t wake_mu;
    pthread_cond_t wake; /* a page asked for a snapshot, or stopping */
    bool snapshot_wanted;
    atomic_bool stop; /* set by the main thread, read by the others */
    unsigned streams; /* under hub->mu */
} sl_live_server;

/* Starts answering HTTP on srv->bind:srv->port (sets srv->port). Returns the daemon, or NULL with err. */
struct MHD_Daemon *sl_live_http_start(sl_live_server *srv, char *err, size_t errlen);

/*
 * Takes a snapshot of the named caches (comma-separated) as JSON
 * (docs/snapshot.md) into a malloc'd buffer; with wrap, as the stream's
 * {"taken_ns":[start,end],"snapshot":...}.  Returns it (length in *len),
 * or NULL with err.
 */
char *sl_live_snapshot_json(sl_live_server *srv, const char *names, bool wrap, size_t *len, char *err, size_t errlen);

/* Asks the snapshot thread for a snapshot now. */
void sl_live_wake_snapshots(sl_live_server *srv);

#endif /* SL_LIVE_SERVER_H */
