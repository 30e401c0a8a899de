/* capture_snapshot.c - a kernel snapshot as a .slabcap member (capture_snapshot.h). */
#include "capture_snapshot.h"

#include "snapshot.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* As `slablab snapshot`'s default: whole lists, every cache. */
#define CAPTURE_MAX_SLABS 10000

void sl_capture_snapshot_take(sl_capture_snapshot *out)
{
    static bool reported;
    sl_snap_options opt = {.max_slabs = CAPTURE_MAX_SLABS};
    sl_snapshot snap;
    char err[1024];
    memset(out, 0, sizeof *out);
    memset(&snap, 0, sizeof snap);
    if (sl_snapshot_take(&snap, &opt, err, sizeof err)) {
        if (!reported)
            fprintf(stderr, "slablab capture: note: no kernel snapshot in the capture: %s\n", err);
        reported = true;
        sl_snapshot_free(&snap);
        return;
    }
    sl_snapshot_decode(&snap);
    FILE *f = open_memstream(&out->data, &out->len);
    if (!f || sl_snapshot_write_json(&snap, f) != 0) {
        if (f)
            fclose(f);
        free(out->data);
        memset(out, 0, sizeof *out);
        fprintf(stderr, "slablab capture: note: the kernel snapshot could not be written\n");
    } else if (fclose(f) != 0) {
        free(out->data);
        memset(out, 0, sizeof *out);
    }
    sl_snapshot_free(&snap);
}

void sl_capture_snapshot_free(sl_capture_snapshot *s)
{
    free(s->data);
    memset(s, 0, sizeof *s);
}
