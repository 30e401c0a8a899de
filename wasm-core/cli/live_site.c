/* live_site.c - the built lab in memory, looked up by exact path (live_site.h). */
#include "live_site.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if SLABLAB_HAVE_ZLIB
#include <zlib.h>
#endif

static const char *type_of(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".wasm", "application/wasm"},
        {".json", "application/json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
        {".map", "application/json"},
        {".woff2", "font/woff2"},
    };
    size_t len = strlen(path);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t el = strlen(types[i].ext);
        if (len >= el && !strcmp(path + len - el, types[i].ext))
            return types[i].type;
    }
    return "application/octet-stream";
}

static int add_file(sl_site *site, int dirfd, const char *name, const char *rel, size_t max_bytes, char *err,
                    size_t errlen)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0; /* a link or unreadable: not served */
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    if (site->bytes + (size_t)st.st_size > max_bytes) {
        close(fd);
        snprintf(err, errlen, "the site is larger than %zu MiB (at %s)", max_bytes >> 20, rel);
        return -1;
    }
    unsigned char *data = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (data && got < (size_t)st.st_size) {
        ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (site->n == site->cap) {
        size_t ncap = site->cap ? site->cap * 2 : 64;
        sl_site_file *grown = realloc(site->files, ncap * sizeof *grown);
        if (!grown) {
            free(data);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        site->files = grown;
        site->cap = ncap;
    }
    char *path = strdup(rel);
    if (!data || !path || got != (size_t)st.st_size) {
        free(data);
        free(path);
        snprintf(err, errlen, "could not read %s", rel);
        return -1;
    }
    site->files[site->n++] = (sl_site_file){.path = path, .data = data, .len = got, .type = type_of(rel)};
    site->bytes += got;
    return 0;
}

static int walk(sl_site *site, int dirfd, const char *rel, int depth, size_t max_bytes, char *err, size_t errlen)
{
    if (depth > 16)
        return 0;
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return 0;
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue; /* ".", "..", and hidden files are not served */
        char child[1024];
        if ((size_t)snprintf(child, sizeof child, "%s/%s", rel, e->d_name) >= sizeof child)
            continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
            continue;
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                rc = walk(site, sub, child, depth + 1, max_bytes, err, errlen);
        } else if (S_ISREG(st.st_mode)) {
            rc = add_file(site, dirfd, e->d_name, child, max_bytes, err, errlen);
        }
    }
    closedir(d);
    return rc;
}

int sl_site_load(sl_site *site, const char *dir, size_t max_bytes, char *err, size_t errlen)
{
    memset(site, 0, sizeof *site);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot read the built lab in %s (%s): run `npm run build` first, or name it with --site",
                 dir, strerror(errno));
        return -1;
    }
    if (walk(site, fd, "", 0, max_bytes, err, errlen)) {
        sl_site_free(site);
        return -1;
    }
    if (!sl_site_find(site, "/")) {
        snprintf(err, errlen, "%s has no index.html: is it the built lab (npm run build writes dist/)?", dir);
        sl_site_free(site);
        return -1;
    }
    return 0;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Points site's table into the inflated pack site->pack (raw bytes). Returns 0, or -1 with err. */
static int index_pack(sl_site *site, size_t raw, char *err, size_t errlen)
{
    const unsigned char *p = site->pack, *end = site->pack + raw;
    while (p < end) {
        if ((size_t)(end - p) < 8) {
            snprintf(err, errlen, "the built-in site is corrupt (an entry header cut short)");
            return -1;
        }
        uint32_t plen = le32(p), dlen = le32(p + 4);
        p += 8;
        if (plen < 2 || plen > 1024 || (size_t)(end - p) < plen || p[0] != '/' || p[plen - 1] != '\0' ||
            memchr(p, '\0', plen) != p + plen - 1 || (size_t)(end - p - plen) < dlen) {
            snprintf(err, errlen, "the built-in site is corrupt (a bad entry)");
            return -1;
        }
        if (site->n == site->cap) {
            size_t ncap = site->cap ? site->cap * 2 : 64;
            sl_site_file *grown = realloc(site->files, ncap * sizeof *grown);
            if (!grown) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            site->files = grown;
            site->cap = ncap;
        }
        const char *path = (const char *)p;
        site->files[site->n++] =
            (sl_site_file){.path = (char *)path, .data = (unsigned char *)p + plen, .len = dlen, .type = type_of(path)};
        site->bytes += dlen;
        p += plen + dlen;
    }
    return 0;
}

int sl_site_load_pack(sl_site *site, const unsigned char *pack, size_t len, size_t max_bytes, char *err, size_t errlen)
{
    memset(site, 0, sizeof *site);
    static const unsigned char magic[8] = {'S', 'L', 'S', 'I', 'T', 'E', '1', '\0'};
    if (len < 16 || memcmp(pack, magic, sizeof magic)) {
        snprintf(err, errlen, "the built-in site is not a site pack");
        return -1;
    }
    uint64_t raw = (uint64_t)le32(pack + 8) | (uint64_t)le32(pack + 12) << 32;
    if (raw > max_bytes) {
        snprintf(err, errlen, "the built-in site is larger than %zu MiB", max_bytes >> 20);
        return -1;
    }
#if SLABLAB_HAVE_ZLIB
    site->pack = malloc(raw ? (size_t)raw : 1);
    uLongf got = (uLongf)raw;
    if (!site->pack) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (uncompress(site->pack, &got, pack + 16, (uLong)(len - 16)) != Z_OK || got != raw) {
        snprintf(err, errlen, "the built-in site is corrupt (it does not inflate to its %" PRIu64 " bytes)", raw);
        sl_site_free(site);
        return -1;
    }
    if (index_pack(site, (size_t)raw, err, errlen)) {
        sl_site_free(site);
        return -1;
    }
    if (!sl_site_find(site, "/")) {
        snprintf(err, errlen, "the built-in site has no index.html");
        sl_site_free(site);
        return -1;
    }
    return 0;
#else
    (void)index_pack;
    snprintf(err, errlen, "this slablab was built without zlib: it cannot read a built-in site");
    return -1;
#endif
}

const sl_site_file *sl_site_find(const sl_site *site, const char *path)
{
    if (!strcmp(path, "/"))
        path = "/index.html";
    for (size_t i = 0; i < site->n; i++)
        if (!strcmp(site->files[i].path, path))
            return &site->files[i];
    return NULL;
}

void sl_site_free(sl_site *site)
{
    for (size_t i = 0; !site->pack && i < site->n; i++) {
        free(site->files[i].path);
        free(site->files[i].data);
    }
    free(site->pack);
    free(site->files);
    memset(site, 0, sizeof *site);
}
