/*
 * capture_snapshot.h - the kernel snapshots a .slabcap holds: `slablab
 * capture` takes one just before tracing starts (member snapshot-start.json)
 * and one just after it stops (snapshot-end.json), in the format of
 * docs/snapshot.md, every cache, no --objects.  Where the machine cannot take
 * a snapshot (no BPF, a kernel before 6.13, ...) the capture goes on without
 * them and says why once on stderr.
 */
#ifndef SL_CAPTURE_SNAPSHOT_H
#define SL_CAPTURE_SNAPSHOT_H

#include <stddef.h>

#define SL_CAPTURE_SNAPSHOT_START "snapshot-start.json"
#define SL_CAPTURE_SNAPSHOT_END "snapshot-end.json"

typedef struct sl_capture_snapshot {
    char *data; /* the JSON, or NULL when none could be taken */
    size_t len;
} sl_capture_snapshot;

/* Takes a snapshot of every cache into out (out->data NULL when it could not; the reason is printed once). */
void sl_capture_snapshot_take(sl_capture_snapshot *out);
void sl_capture_snapshot_free(sl_capture_snapshot *s);

#endif /* SL_CAPTURE_SNAPSHOT_H */
