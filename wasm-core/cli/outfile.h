/*
 * outfile.h - the one way a slablab command writes an output file (-o,
 * --perfetto, --json-out ...), so that no output option can destroy what it
 * did not create.
 *
 * The rules, and why:
 *  - The target is never opened for writing.  Writes go to a temporary file
 *    created beside it (same directory, so the final rename is atomic and
 *    never crosses a file system), opened O_CLOEXEC (a command the tool runs
 *    must not inherit it) and O_EXCL (never an existing file), with the mode
 *    a new file would get (0666 less the umask).
 *  - Nothing at the target changes until sl_outfile_commit: a failed or
 *    interrupted command leaves an existing file as it was, and never a
 *    complete-looking half of a new one.
 *  - A target that exists and is not a regular file (a device node, FIFO,
 *    directory or socket) is refused: renaming over /dev/full as root would
 *    delete the device.  A symbolic link is followed: the file it names is
 *    replaced and the link stays.
 *  - A target that is the same file (device and inode) as the command's
 *    input is refused: `replay X --perfetto X` would otherwise replace the
 *    trace it is reading.
 *  - "-" means standard output: no temporary; commit flushes it and reports
 *    a write error (a full disk, a closed pipe) instead of exiting 0.
 */
#ifndef SL_OUTFILE_H
#define SL_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct sl_outfile {
    FILE *f;      /* write here */
    char *target; /* the file to replace on commit (a link resolved); NULL for stdout */
    char *temp;   /* the temporary beside it; NULL for stdout or once renamed/removed */
    bool is_stdout;
} sl_outfile;

/* Opens `path` for writing ("-" = stdout). Refuses a target that exists and is not a regular file
   (device, FIFO, directory, socket) and a target that is the same file (inode) as `input` (may be NULL).
   Writes go to a temporary file created beside the target (O_CLOEXEC, mode of a new file); nothing
   at `path` changes until sl_outfile_commit. Returns 0, or -1 with a specific message in err. */
int sl_outfile_open(sl_outfile *o, const char *path, const char *input, char *err, size_t errlen);
/* Flushes, fsyncs and renames the temporary file over `path`. Returns 0, or -1 with err (the temporary is removed). */
int sl_outfile_commit(sl_outfile *o, char *err, size_t errlen);
/* Removes the temporary file only; never touches `path`. */
void sl_outfile_abort(sl_outfile *o);

#endif /* SL_OUTFILE_H */
