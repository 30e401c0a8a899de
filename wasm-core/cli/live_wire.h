/*
 * live_wire.h - the binary stream `slablab serve` sends to the page
 * (GET /api/live), read by web/live/wire.ts without any text parsing for
 * events.  Little-endian throughout.  docs/live.md describes it; the
 * TypeScript side has the same numbers and a test against a stream this
 * server wrote.
 *
 * The stream is a sequence of frames:
 *   header   u32 payload bytes, u8 type, u8 pad[3]           (8 bytes)
 *   payload  by type:
 *   LIVE_F_HELLO, _STATUS, _ERROR: JSON text (UTF-8)
 *   LIVE_F_SNAPSHOT  JSON {"taken_ns":[start,end],"snapshot":<slablab-snapshot/1>}:
 *                  start and end on the events' clock (CLOCK_MONOTONIC)
 *   LIVE_F_SLABINFO  JSON {"at_ns":t,"caches":[[name, active_objs, num_objs,
 *                  objsize, objperslab, pagesperslab, num_slabs], ...]}
 *                  from /proc/slabinfo, every 2 s
 *   LIVE_F_CACHE   u16 id, u16 0, u32 object_size, u32 size, u32 oo,
 *                  u64 address, name (the rest)
 *   LIVE_F_SITE    u32 id, u32 0, u64 address, "function+0xoff" (the rest)
 *   LIVE_F_EVENTS  u32 count, u32 0, u64 base_ns, u64 kernel_lost_total,
 *                  then count records of LIVE_WIRE_EVENT bytes:
 *                  u8 kind (live_records.h), u8 cpu, u16 cache id (0: none),
 *                  u32 site id (0: none), u32 ns/1000 after base_ns,
 *                  u32 bytes, u32 object low, u32 object high
 * Names (CACHE, SITE) come before the first event that uses them; ids
 * start at 1 and are the same for every client of one server.
 */
#ifndef SL_LIVE_WIRE_H
#define SL_LIVE_WIRE_H

enum live_frame_type {
    LIVE_F_HELLO = 1,
    LIVE_F_CACHE = 2,
    LIVE_F_SITE = 3,
    LIVE_F_EVENTS = 4,
    LIVE_F_STATUS = 5,
    LIVE_F_SNAPSHOT = 6,
    LIVE_F_ERROR = 7,
    LIVE_F_SLABINFO = 8,
};

#define LIVE_WIRE_FRAME_HDR 8
#define LIVE_WIRE_EVENTS_HDR 24
#define LIVE_WIRE_EVENT 24
#define LIVE_WIRE_CACHE_HDR 24
#define LIVE_WIRE_SITE_HDR 16
#define LIVE_WIRE_FORMAT "slablab-live/1"

#endif /* SL_LIVE_WIRE_H */
