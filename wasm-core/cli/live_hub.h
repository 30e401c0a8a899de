/*
 * live_hub.h - between the kernel's event ring and the pages: names the
 * caches and call sites, packs events into LIVE_F_EVENTS frames
 * (live_wire.h), and keeps one bounded queue per connected page.
 *
 * Threads: the event thread alone calls sl_live_hub_record and _flush (the
 * batch and the name lookups are its own); every other call may come from
 * any thread and takes hub->mu.  Frames are built once and shared by every
 * queue (reference counted).
 *
 * Bounds: a queue holds at most queue_limit bytes of events and snapshots;
 * when a page lags, new event frames are dropped for it and counted
 * (server_dropped in its status frames), never buffered further.  Names,
 * status frames and snapshots are not dropped (the page could not decode
 * without names; a snapshot must keep its place among the events); a page
 * that falls queue_limit + LIVE_HUB_SLACK behind even so is cut off.
 */
#ifndef SL_LIVE_HUB_H
#define SL_LIVE_HUB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live_ksyms.h"

#define LIVE_HUB_MAX_CACHES 4096
#define LIVE_HUB_MAX_SITES 65535
#define LIVE_HUB_SLACK (4u << 20)
#define LIVE_HUB_BATCH 4096 /* events per frame at most */
#define LIVE_HUB_MAX_WATCH 16

typedef struct sl_live_frame sl_live_frame;
typedef struct sl_live_qnode sl_live_qnode;

typedef struct sl_live_client {
    struct sl_live_client *next;
    unsigned id;
    sl_live_qnode *head, *tail;
    size_t bytes;    /* queued, all frames */
    size_t head_off; /* bytes of the head frame already read */
    uint64_t sent_events, dropped_events, dropped_snapshots;
    bool closed; /* cut off, or left */
    char watch[LIVE_HUB_MAX_WATCH][32];
    unsigned nwatch;
} sl_live_client;

typedef struct sl_live_addr_id {
    uint64_t addr;
    uint32_t id; /* 0: free slot */
} sl_live_addr_id;

typedef struct sl_live_hub {
    pthread_mutex_t mu;
    pthread_cond_t data; /* a queue got a frame, or the hub is stopping */
    sl_live_client *clients;
    unsigned nclients, next_client_id;
    size_t queue_limit;
    bool stopping;
    /* Snapshots may be dropped (counted) for a lagging page, as slabinfo is: a recording's (serve --from),
     * which come at every pass, many a second at --rate max, and would otherwise cut such a page off. */
    bool snapshots_droppable;
    /* Frames every new page gets first (its HELLO is its own): CACHE and SITE, in order. */
    sl_live_frame **names;
    size_t nnames, cap_names;
    /* Event thread's own. */
    sl_live_addr_id cache_ids[2 * LIVE_HUB_MAX_CACHES], site_ids[2 * (LIVE_HUB_MAX_SITES + 1)];
    uint32_t ncaches, nsites;
    unsigned char *batch; /* LIVE_WIRE_EVENTS_HDR + LIVE_HUB_BATCH records */
    uint32_t batch_n;
    uint64_t batch_base_ns;
    sl_ksyms ksyms;
    /* Totals (under mu). */
    uint64_t events_in, kernel_lost;
    /* What the program left out as the server's own work (sl_live_source_own), set by the event thread;
     * own_known: a kernel source reported it (status frames carry these only then). */
    uint64_t server_own;
    bool own_known, own_by_context;
    char own_note[200];
    bool attached;
    char source_error[512];
    char hello[1024]; /* the machine part of HELLO (JSON members) */
} sl_live_hub;

/* Sets up hub (queue_limit bytes per page; hello_members: JSON members for HELLO). Returns 0, -1 out of memory. */
int sl_live_hub_init(sl_live_hub *hub, size_t queue_limit, const char *hello_members);
void sl_live_hub_destroy(sl_live_hub *hub);

/* Adds a page: queues its HELLO and every name known. Returns the client, NULL when out of memory. */
sl_live_client *sl_live_hub_join(sl_live_hub *hub);
/* Removes a page and frees what it had queued. */
void sl_live_hub_leave(sl_live_hub *hub, sl_live_client *c);
/* Sets the caches client `id` looks at (comma-separated names). Returns 0, -1 when there is no such client. */
int sl_live_hub_watch(sl_live_hub *hub, unsigned id, const char *names);

/* Event thread: takes one ring record (live_records.h). Returns 0. */
int sl_live_hub_record(void *hub, void *data, size_t size);
/* Event thread: sends the batch (if any) with the kernel ring's lost count. */
void sl_live_hub_flush(sl_live_hub *hub, uint64_t kernel_lost);
/* Queues a STATUS frame to every page (its own counters). */
void sl_live_hub_status(sl_live_hub *hub);
/* Queues a JSON frame of `type` to every page (a SLABINFO frame may be dropped for a lagging page, and is counted; a
 * SNAPSHOT only when snapshots_droppable). */
void sl_live_hub_send_json(sl_live_hub *hub, int type, const char *json, size_t len);
/* Fills names (comma-separated, at most cap bytes) with every cache any page watches; returns how many. */
unsigned sl_live_hub_watched(sl_live_hub *hub, char *names, size_t cap);
/* Marks the hub stopping: every read returns -1. */
void sl_live_hub_stop(sl_live_hub *hub);

/*
 * Copies up to max queued bytes for c into buf, waiting up to timeout_ms
 * for some.  Returns the bytes copied, 0 when none came in time, -1 when
 * c was cut off or the hub is stopping.
 */
long sl_live_client_read(sl_live_hub *hub, sl_live_client *c, unsigned char *buf, size_t max, int timeout_ms);

#endif /* SL_LIVE_HUB_H */
