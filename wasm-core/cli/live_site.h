/*
 * live_site.h - the built lab (dist/) held in memory for `slablab serve`.
 *
 * Every regular file under the directory is read once at start; a request
 * is then answered by looking its path up in this table, so no path a
 * client sends ever reaches the file system (no open, no stat, no
 * realpath), and nothing outside the directory can be served whatever the
 * encoding.  Symbolic links, devices and files above the size limit are
 * left out.
 *
 * A release binary (scripts/build-release.mjs) carries the site inside it:
 * a pack of dist/ made at build time (magic "SLSITE1\0", the u64 size of
 * what follows once inflated, then a zlib stream of entries: u32 path
 * bytes with its NUL, u32 data bytes, the path, the data), included by an
 * assembler .incbin.  It is inflated once at start into one block that the
 * table points into; the same exact-path lookup then answers requests.
 */
#ifndef SL_LIVE_SITE_H
#define SL_LIVE_SITE_H

#include <stddef.h>

typedef struct sl_site_file {
    char *path; /* "/index.html": relative to the directory, with a leading slash */
    unsigned char *data;
    size_t len;
    const char *type; /* Content-Type */
} sl_site_file;

typedef struct sl_site {
    sl_site_file *files;
    size_t n, cap;
    size_t bytes;
    unsigned char *pack; /* an inflated pack the files point into (NULL when read from a directory) */
} sl_site;

/* Reads dir into site (at most max_bytes in all). Returns 0, or -1 with err (dir unreadable, no index.html, too big). */
int sl_site_load(sl_site *site, const char *dir, size_t max_bytes, char *err, size_t errlen);

/* Reads an in-memory pack (the layout above) of at most max_bytes inflated into site.
 * Returns 0, or -1 with err (not a pack, truncated, corrupt, too big, no /index.html). */
int sl_site_load_pack(sl_site *site, const unsigned char *pack, size_t len, size_t max_bytes, char *err, size_t errlen);

/* The file whose path is exactly path ("/" means "/index.html"), or NULL. */
const sl_site_file *sl_site_find(const sl_site *site, const char *path);

void sl_site_free(sl_site *site);

#endif /* SL_LIVE_SITE_H */
