/*
 * live_replay_native.c - the native side of the live replay benchmark
 * (scripts/live-bench.mjs, phase 4): reads a recorded `slablab serve`
 * stream (cli/live_wire.h), cuts it into frames and counts it with the
 * core's live counting (src/replay/live_count.c), the very C the page's
 * worker runs as WebAssembly (web/live/live-state.ts).  The benchmark runs
 * the page's code on the same bytes in Chromium and prints both rates: the
 * page must reach 0.6 of this one.
 *
 *   live_replay_native STREAM_FILE REPS
 *   (cc -O2 -o live_replay_native live_replay_native.c ../../src/replay/live_count.c -lm)
 *
 * Prints one line: "events N best_s S events_per_s R remote M" (the best
 * of REPS runs; remote, the remote frees counted, is the same every run).
 * Exit status 1 when the file cannot be read or is not a stream.
 */
#include "../../cli/live_wire.h"
#include "../../src/replay/live_count.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Counts the whole stream into c. Returns 0, or -1 when it is not a well-formed stream. */
static int replay(sl_live_count *c, const unsigned char *buf, size_t len)
{
    size_t off = 0;
    while (len - off >= LIVE_WIRE_FRAME_HDR) {
        uint32_t n = rd32(buf + off);
        unsigned type = buf[off + 4];
        if (len - off - LIVE_WIRE_FRAME_HDR < n)
            break; /* a recording cut mid-frame: its end is not counted */
        const unsigned char *p = buf + off + LIVE_WIRE_FRAME_HDR;
        if (type == LIVE_F_CACHE && n >= LIVE_WIRE_CACHE_HDR) {
            unsigned id = (unsigned)p[0] | (unsigned)p[1] << 8;
            if (sl_live_count_name_cache(c, id, (const char *)p + LIVE_WIRE_CACHE_HDR, n - LIVE_WIRE_CACHE_HDR))
                return -1;
        } else if (type == LIVE_F_EVENTS) {
            if (n < LIVE_WIRE_EVENTS_HDR || n != LIVE_WIRE_EVENTS_HDR + (uint64_t)rd32(p) * LIVE_WIRE_EVENT)
                return -1;
            sl_live_count_add(c, (double)rd64(p + 8), p + LIVE_WIRE_EVENTS_HDR, rd32(p));
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
    int reps = atoi(argv[2]);
    double best = INFINITY;
    uint64_t events = 0, remote = 0;
    for (int r = 0; r < (reps > 0 ? reps : 1); r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        /* A fresh counter each run, made inside the timing as the page makes its LiveState. */
        sl_live_count *c = sl_live_count_create();
        if (!c) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        if (replay(c, buf, (size_t)len)) {
            fprintf(stderr, "%s: not a well-formed stream\n", argv[1]);
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        if (s < best)
            best = s;
        events = sl_live_count_events(c);
        remote = sl_live_count_remote(c);
        sl_live_count_destroy(c);
    }
    printf("events %llu best_s %.6f events_per_s %.0f remote %llu\n", (unsigned long long)events, best,
           (double)events / best, (unsigned long long)remote);
    free(buf);
    return 0;
}
