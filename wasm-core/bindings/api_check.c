/*
 * api_check.c - the bindings of the live view's agreement: the SLUB model
 * kept in step with the kernel (src/replay/check.c, the same C as
 * `slablab replay --check`).  The live worker (web/live/check-api.ts) seeds
 * a check from one real snapshot of the picked cache, feeds it the events
 * streamed since, and compares it with the next snapshot.
 *
 * Events cross the bridge as 5 u32 words each: time in ns (low, high), the
 * object's address (low, high), and CPU | (1 << 31 for an allocation).
 * Times are u64 on the events' clock; the snapshots' read windows come as
 * doubles (ns: exact up to 2^53 ns, 104 days of uptime, and past that
 * rounded by a few ns, far less than a read lasts).
 * Results come back as JSON (sl_check_result_json); every failure leaves a
 * sentence in sl_api_check_message().
 */
#include "export.h"

#include "../src/replay/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sl_api_check {
    sl_check *check;
    sl_strbuf result;
} sl_api_check;

static char message[320];

/* Why the last call failed ("" after a success). */
SL_EXPORT const char *sl_api_check_message(void) { return message; }

/*
 * A check of cache `name` seeded from the snapshot JSON at json[0..len),
 * whose read took [start_ns, end_ns].  Returns it, or NULL with the message
 * (not a snapshot, no such cache, a cache the model cannot seed, no memory).
 */
SL_EXPORT sl_api_check *sl_api_check_create(const char *json, uint32_t len, const char *name, double start_ns,
                                            double end_ns)
{
    message[0] = 0;
    if (!json || !name) {
        snprintf(message, sizeof message, "no snapshot or no cache name");
        return NULL;
    }
    sl_check_snapshot *snap = sl_check_snapshot_parse(json, len, message, sizeof message);
    if (!snap)
        return NULL;
    sl_api_check *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(message, sizeof message, "no memory for the check");
    } else if (sl_check_create(snap, name, &c->check, message, sizeof message) != SL_OK) {
        free(c);
        c = NULL;
    } else {
        sl_check_set_earlier_read(c->check, (uint64_t)start_ns, (uint64_t)end_ns);
    }
    sl_check_snapshot_free(snap);
    return c;
}

/* Applies n events (5 words each, in time order).  Returns how many were applied as they were. */
SL_EXPORT uint32_t sl_api_check_events(sl_api_check *c, const uint32_t *w, uint32_t n)
{
    if (!c || (!w && n))
        return 0;
    uint32_t ok = 0;
    for (uint32_t i = 0; i < n; i++, w += 5) {
        uint64_t t = (uint64_t)w[1] << 32 | w[0], addr = (uint64_t)w[3] << 32 | w[2];
        ok += sl_check_event(c->check, t, w[4] & 0xff, (w[4] >> 31) != 0, addr) == SL_OK;
    }
    return ok;
}

/*
 * Compares the model with the cache in the later snapshot json[0..len),
 * read over [start_ns, end_ns], `lost` events lost in the window.  Returns
 * the result as JSON (valid until the next call on c), or NULL with the
 * message.
 */
SL_EXPORT const char *sl_api_check_compare(sl_api_check *c, const char *json, uint32_t len, double start_ns,
                                           double end_ns, double lost, double before_start_ns, double before_end_ns)
{
    message[0] = 0;
    if (!c || !json) {
        snprintf(message, sizeof message, "no check or no snapshot");
        return NULL;
    }
    sl_check_snapshot *snap = sl_check_snapshot_parse(json, len, message, sizeof message);
    if (!snap)
        return NULL;
    sl_check_window w = {.timed = true,
                         .before = {(uint64_t)before_start_ns, (uint64_t)before_end_ns},
                         .after = {(uint64_t)start_ns, (uint64_t)end_ns},
                         .lost = lost > 0 ? (uint64_t)lost : 0};
    sl_check_result r;
    int rc = sl_check_compare(c->check, snap, &w, &r, message, sizeof message);
    sl_check_snapshot_free(snap);
    if (rc != SL_OK)
        return NULL;
    c->result.len = 0;
    c->result.failed = false;
    if (!sl_check_result_json(&r, &c->result) || c->result.failed) {
        snprintf(message, sizeof message, "no memory for the result");
        return NULL;
    }
    return c->result.data;
}

SL_EXPORT void sl_api_check_destroy(sl_api_check *c)
{
    if (!c)
        return;
    sl_check_destroy(c->check);
    sl_strbuf_free(&c->result);
    free(c);
}
