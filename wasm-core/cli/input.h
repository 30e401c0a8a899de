/*
 * input.h - how a slablab command opens what it reads: a trace, a capture,
 * a /proc/slabinfo copy, a cache list, a sysfs-like tree.  These files are
 * untrusted, and a path can name something that is not a file at all:
 * /dev/zero never ends, a FIFO blocks the open until a writer comes, a
 * directory fails with an unhelpful message.  So every input is opened
 * without blocking (O_NONBLOCK, O_CLOEXEC), checked to be a regular file
 * ("-", standard input, excepted), and read with a bound.
 */
#ifndef SL_CLI_INPUT_H
#define SL_CLI_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Opens `path` for reading ("-" = standard input).  Returns the stream, or NULL with a specific message in err
   (cannot open it and why; it is a directory, a FIFO, a device or a socket, not a regular file). */
FILE *sl_cli_open_input(const char *path, char *err, size_t errlen);
/* Closes what sl_cli_open_input returned (standard input stays open). */
void sl_cli_close_input(FILE *f);
/* The whole of `path` ("-" = standard input) into *text (malloc'd, NUL-terminated, *len bytes), reading at most
   `max` bytes.  Returns 0, or -1 with err: as sl_cli_open_input, a read error, or larger than max. */
int sl_cli_read_input(const char *path, size_t max, char **text, size_t *len, char *err, size_t errlen);
/* Checks a sysfs-like tree: `dir` is a directory, and nothing in it or in its subdirectories (one level, links
   followed) is a FIFO, device or socket a reader could block or spin on.  Returns 0, or -1 with err naming it. */
int sl_cli_check_tree(const char *dir, char *err, size_t errlen);

#endif /* SL_CLI_INPUT_H */
