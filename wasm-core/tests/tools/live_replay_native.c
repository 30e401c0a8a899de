/*
 * live_replay_native.c - the native side of the live replay benchmark
 * (scripts/live-bench.mjs, phase 4): reads a recorded `slablab serve`
 * stream (cli/live_wire.h) and feeds it, in 64-KiB chunks as fetch
 * delivers the page's, to the core's live reader and counting
 * (src/replay/live_count.c: it cuts the frames, carries the cut ones, counts
 * the events, hands the other frames back), the very C the page's worker
 * runs as WebAssembly (web/live/live-state.ts).  The benchmark runs
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
#include "../../src/replay/live_count.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The page's fetch chunks: the stream is fed in these, as the worker feeds what fetch delivers. */
#define CHUNK 65536

/* Feeds the whole stream into c in CHUNK-byte pieces. Returns 0, or -1 when it is not a well-formed stream. */
static int replay(sl_live_count *c, const unsigned char *buf, size_t len)
{
    for (size_t off = 0; off < len; off += CHUNK)
        if (sl_live_count_feed(c, buf + off, len - off < CHUNK ? len - off : CHUNK))
            return -1;
    return 0; /* a recording cut mid-frame: its end stays pending, not counted */
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
            fprintf(stderr, "%s: not a well-formed stream: %s\n", argv[1], sl_live_count_error(c));
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
