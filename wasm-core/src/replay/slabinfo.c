/*
 * slabinfo.c - the caches as the kernel's tools/mm/slabinfo sees them,
 * read offline: from a .slabcap (its sys/kernel/slab, through the same
 * session pipeline as a replay, trace skipped), from a directory laid out
 * like /sys/kernel/slab, or from a /proc/slabinfo file (which lacks
 * partial and CPU slabs, and whose objsize is the slot size).
 *
 * Each attribute is taken as tools/mm/slabinfo takes it: the leading
 * number of its first line ("3420 N0=3420" is 3420).
 */
#include "replay_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sli_slabinfo_attr(sl_slabinfo_cache *c, const char *attr, const char *value)
{
    static const struct {
        const char *name;
        size_t off;
        bool wide;
    } fields[] = {
#define U32(f) {#f, offsetof(sl_slabinfo_cache, f), false}
#define U64(f)                                                                                                         \
    {                                                                                                                  \
#f, offsetof(sl_slabinfo_cache, f), true                                                                       \
    }
        U32(aliases),         U32(align),           U32(object_size),    U32(slab_size),     U32(objs_per_slab),
        U32(order),           U32(cache_dma),       U32(destroy_by_rcu), U32(hwcache_align), U32(poison),
        U32(reclaim_account), U32(red_zone),        U32(sanity_checks),  U32(store_user),    U32(trace),
        U64(objects),         U64(objects_partial), U64(slabs),          U64(partial),       U64(cpu_slabs),
#undef U32
#undef U64
    };
    for (unsigned i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strcmp(attr, fields[i].name))
            continue;
        unsigned long long v = strtoull(value, NULL, 10);
        if (fields[i].wide)
            *(uint64_t *)(void *)((char *)c + fields[i].off) = v;
        else
            *(uint32_t *)(void *)((char *)c + fields[i].off) = (uint32_t)v;
        return;
    }
}

static bool push_cache(sl_slabinfo_set *set, unsigned *cap, const sl_slabinfo_cache *c)
{
    if (!sli_grow(&set->caches, cap, set->ncaches, sizeof *set->caches, 256))
        return false;
    set->caches[set->ncaches++] = *c;
    return true;
}

/* One /proc/slabinfo line: name active_objs num_objs objsize objperslab pagesperslab : ... : slabdata active num
   shared.  Returns SL_OK (a cache added, or a line that is none: header, comment, malformed), or SL_ENOMEM. */
static int proc_slabinfo_line(const char *line, size_t len, sl_slabinfo_set *set, unsigned *cap)
{
    char buf[512];
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, line, len);
    buf[len] = 0;
    sl_slabinfo_cache c;
    memset(&c, 0, sizeof c);
    unsigned long active, num, objsize, perslab, pages, aslabs, nslabs;
    if (buf[0] == '#' || !strncmp(buf, "slabinfo", 8))
        return SL_OK;
    if (sscanf(buf, "%63s %lu %lu %lu %lu %lu : tunables %*u %*u %*u : slabdata %lu %lu", c.name, &active, &num,
               &objsize, &perslab, &pages, &aslabs, &nslabs) != 8 ||
        pages == 0 || (pages & (pages - 1)) || objsize > UINT32_MAX || perslab > UINT32_MAX)
        return SL_OK;
    c.objects = active;
    c.object_size = c.slab_size = (uint32_t)objsize;
    c.objs_per_slab = (uint32_t)perslab;
    c.order = (uint32_t)__builtin_ctzl(pages);
    c.slabs = nslabs;
    c.align = 8;
    return push_cache(set, cap, &c) ? SL_OK : SL_ENOMEM;
}

static int proc_slabinfo_done(sl_slabinfo_set *set, int rc, char *err, size_t errlen)
{
    if (rc == SL_ENOMEM)
        snprintf(err, errlen, "out of memory");
    else if (!set->ncaches) {
        snprintf(err, errlen, "no cache lines in it (not /proc/slabinfo?)");
        rc = SL_EINVAL;
    }
    return rc;
}

/* A /proc/slabinfo text held in memory (a capture's member). */
static int parse_proc_slabinfo(const char *text, size_t len, sl_slabinfo_set *set, char *err, size_t errlen)
{
    unsigned cap = 0;
    int rc = SL_OK;
    snprintf(set->source, sizeof set->source, "/proc/slabinfo");
    const char *nul = memchr(text, 0, len);
    if (nul) {
        snprintf(err, errlen, "its proc/slabinfo holds a NUL byte at offset %zu: not /proc/slabinfo text",
                 (size_t)(nul - text));
        return SL_EINVAL;
    }
    for (const char *line = text, *end = text + len; rc == SL_OK && line < end;) {
        const char *next = memchr(line, '\n', (size_t)(end - line));
        size_t n = next ? (size_t)(next - line) : (size_t)(end - line);
        rc = proc_slabinfo_line(line, n, set, &cap);
        line += n + 1;
    }
    return proc_slabinfo_done(set, rc, err, errlen);
}

/* A /proc/slabinfo file, streamed a line at a time (memory bounded by the caches it names, not the file). */
static int stream_proc_slabinfo(FILE *f, sl_slabinfo_set *set, char *err, size_t errlen)
{
    unsigned cap = 0;
    int rc = SL_OK;
    snprintf(set->source, sizeof set->source, "/proc/slabinfo");
    char line[512];
    uint64_t at = 0;
    bool first = true;
    while (rc == SL_OK && fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        if (n < sizeof line - 1 && !feof(f) && (n == 0 || line[n - 1] != '\n')) {
            snprintf(err, errlen, "it holds a NUL byte near offset %llu: not /proc/slabinfo text",
                     (unsigned long long)(at + n));
            return SL_EINVAL;
        }
        if (first && strncmp(line, "slabinfo - version: 2.", 22)) {
            snprintf(err, errlen, "its first line is not \"slabinfo - version: 2.x\" (only version 2 is read)");
            return SL_EINVAL;
        }
        first = false;
        at += n;
        bool whole = n && line[n - 1] == '\n';
        rc = proc_slabinfo_line(line, whole ? n - 1 : n, set, &cap);
        /* A line longer than the buffer: the rest is not a cache line of its own. */
        int ch;
        while (!whole && !feof(f) && (ch = fgetc(f)) != EOF && ch != '\n')
            at++;
    }
    if (rc == SL_OK && ferror(f)) {
        snprintf(err, errlen, "reading it failed: %s", strerror(errno));
        return SL_EINVAL;
    }
    return proc_slabinfo_done(set, rc, err, errlen);
}

/* Opens a file of a sysfs-like tree without blocking (a FIFO there would) and reads its first line into buf;
   false when it is not a regular file or cannot be read. */
static bool read_attribute(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, len - 1) : -1;
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    char *nl = memchr(buf, '\n', (size_t)n);
    if (nl)
        *nl = 0;
    return true;
}

static int read_directory(const char *dir, sl_slabinfo_set *set, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot open the directory: %s", strerror(errno));
        return SL_EINVAL;
    }
    unsigned cap = 0, acap = 0;
    snprintf(set->source, sizeof set->source, "sysfs");
    struct dirent *e;
    int rc = SL_OK;
    while (rc == SL_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof set->caches->name)
            continue;
        char path[4096], buf[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            ssize_t n = readlink(path, buf, sizeof buf - 1);
            if (n <= 0)
                continue;
            buf[n] = 0;
            const char *target = strrchr(buf, '/');
            if (!sli_grow(&set->aliases, &acap, set->naliases, sizeof *set->aliases, 256)) {
                rc = SL_ENOMEM;
                break;
            }
            snprintf(set->aliases[set->naliases].name, sizeof set->aliases->name, "%.63s", e->d_name);
            snprintf(set->aliases[set->naliases++].target, sizeof set->aliases->target, "%.63s",
                     target ? target + 1 : buf);
            continue;
        }
        if (!S_ISDIR(st.st_mode))
            continue;
        sl_slabinfo_cache c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "%.63s", e->d_name);
        c.has_sysfs = true;
        DIR *cd = opendir(path);
        struct dirent *a;
        bool any = false;
        while (cd && (a = readdir(cd))) {
            char apath[8192];
            snprintf(apath, sizeof apath, "%s/%s", path, a->d_name);
            if (a->d_name[0] == '.' || !read_attribute(apath, buf, sizeof buf))
                continue;
            sli_slabinfo_attr(&c, a->d_name, buf);
            any |= !strcmp(a->d_name, "object_size");
        }
        if (cd)
            closedir(cd);
        if (any && !push_cache(set, &cap, &c))
            rc = SL_ENOMEM;
    }
    closedir(d);
    if (rc == SL_OK && !set->ncaches) {
        snprintf(err, errlen, "no cache folders in it (not a /sys/kernel/slab-like directory?)");
        rc = SL_EINVAL;
    }
    if (rc == SL_ENOMEM)
        snprintf(err, errlen, "out of memory");
    return rc;
}

/* A .slabcap (or any input the replay reads): its sysfs, else its proc/slabinfo. */
static int read_capture(FILE *f, sl_slabinfo_set *set, char *err, size_t errlen)
{
    sl_replay *r;
    sl_replay_config cfg = {.metadata_only = true};
    if (sl_replay_create(&cfg, &r) != SL_OK) {
        snprintf(err, errlen, "out of memory");
        return SL_ENOMEM;
    }
    static uint8_t buf[1 << 16];
    size_t n;
    int rc = SL_OK;
    while (rc == SL_OK && (n = fread(buf, 1, sizeof buf, f)) > 0)
        rc = sl_replay_feed(r, buf, n, NULL);
    if (rc == SL_OK)
        rc = sl_replay_finish(r);
    const sli_sysfs *sf = &r->sysfs;
    if (rc != SL_OK) {
        snprintf(err, errlen, "%s", sl_replay_error(r) ? sl_replay_error(r) : sl_strerror(rc));
    } else if (sf->ncaches) {
        snprintf(set->source, sizeof set->source, "sysfs");
        set->caches = malloc(sf->ncaches * sizeof *set->caches);
        set->aliases = malloc((sf->nlinks + 1) * sizeof *set->aliases);
        if (!set->caches || !set->aliases) {
            snprintf(err, errlen, "out of memory");
            rc = SL_ENOMEM;
        } else {
            memcpy(set->caches, sf->info, sf->ncaches * sizeof *set->caches);
            set->ncaches = sf->ncaches;
            if (sf->nlinks) /* a capture without alias links has no array at all */
                memcpy(set->aliases, sf->links, sf->nlinks * sizeof *set->aliases);
            set->naliases = sf->nlinks;
        }
    } else if (sf->proc_slabinfo.len) {
        rc = parse_proc_slabinfo(sf->proc_slabinfo.data, sf->proc_slabinfo.len, set, err, errlen);
    } else {
        snprintf(err, errlen,
                 "it holds neither sys/kernel/slab nor proc/slabinfo (a plain trace has no cache "
                 "state: use a .slabcap from `slablab capture`)");
        rc = SL_EINVAL;
    }
    sl_replay_destroy(r);
    return rc;
}

int sl_slabinfo_load(const char *path, sl_slabinfo_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return SL_EINVAL;
    }
    int rc;
    if (S_ISDIR(st.st_mode)) {
        rc = read_directory(path, out, err, errlen);
    } else {
        /* Not blocking on a FIFO, not reading a device such as /dev/zero forever: regular files only. */
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) != 0) {
            snprintf(err, errlen, "%s", strerror(errno));
            if (fd >= 0)
                close(fd);
            return SL_EINVAL;
        }
        if (!S_ISREG(st.st_mode)) {
            snprintf(err, errlen, "not a regular file or directory (a FIFO or device could block or never end)");
            close(fd);
            return SL_EINVAL;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        FILE *f = fdopen(fd, "rb");
        if (!f) {
            snprintf(err, errlen, "%s", strerror(errno));
            close(fd);
            return SL_EINVAL;
        }
        char head[9] = {0};
        size_t got = fread(head, 1, 8, f);
        rewind(f);
        if (got == 8 && !memcmp(head, "slabinfo", 8))
            rc = stream_proc_slabinfo(f, out, err, errlen); /* /proc/slabinfo reads as a zero-sized file */
        else
            rc = read_capture(f, out, err, errlen);
        fclose(f);
    }
    if (rc != SL_OK)
        sl_slabinfo_free(out);
    return rc;
}

void sl_slabinfo_free(sl_slabinfo_set *set)
{
    free(set->caches);
    free(set->aliases);
    memset(set, 0, sizeof *set);
}
