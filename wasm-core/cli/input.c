/* input.c - untrusted inputs opened without blocking, checked to be regular files, read with a bound (input.h). */
#include "input.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *not_regular(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO (it could block forever)";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device (it could never end)";
    if (S_ISSOCK(m))
        return "a socket";
    return S_ISREG(m) ? NULL : "not a regular file";
}

FILE *sl_cli_open_input(const char *path, char *err, size_t errlen)
{
    if (!strcmp(path, "-"))
        return stdin;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *why = fstat(fd, &st) != 0 ? strerror(errno) : not_regular(st.st_mode);
    if (why) {
        snprintf(err, errlen, "cannot read %s: it is %s; give a regular file (or - for standard input)", path, why);
        close(fd);
        return NULL;
    }
    /* Regular files never block; clear O_NONBLOCK anyway so stdio sees plain reads. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

void sl_cli_close_input(FILE *f)
{
    if (f && f != stdin)
        fclose(f);
}

int sl_cli_read_input(const char *path, size_t max, char **text, size_t *len, char *err, size_t errlen)
{
    FILE *f = sl_cli_open_input(path, err, errlen);
    if (!f)
        return -1;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    int rc = 0;
    while (buf) {
        size_t want = cap - n;
        size_t got = fread(buf + n, 1, want, f);
        n += got;
        if (got < want) {
            if (ferror(f)) {
                snprintf(err, errlen, "reading %s failed: %s", path, strerror(errno));
                rc = -1;
            }
            break;
        }
        if (n > max) {
            snprintf(err, errlen, "%s is larger than %zu MiB, the most this command reads", path, max >> 20);
            rc = -1;
            break;
        }
        size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
        char *bigger = realloc(buf, ncap + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap = ncap;
    }
    sl_cli_close_input(f);
    if (!buf) {
        snprintf(err, errlen, "reading %s: out of memory", path);
        return -1;
    }
    if (rc == 0 && n > max) {
        snprintf(err, errlen, "%s is larger than %zu MiB, the most this command reads", path, max >> 20);
        rc = -1;
    }
    if (rc) {
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

/* Refuses `path` (followed through a link) when it is a FIFO, device or socket. */
static int check_entry(const char *path, struct stat *st, char *err, size_t errlen)
{
    if (stat(path, st) != 0)
        return 0; /* a dangling link: readers skip what they cannot open */
    if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode))
        return 0;
    snprintf(err, errlen, "refusing to read the tree: %s is %s", path, not_regular(st->st_mode));
    return -1;
}

int sl_cli_check_tree(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is not a directory", dir);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
            continue;
        rc = check_entry(path, &st, err, errlen);
        if (rc || !S_ISDIR(st.st_mode))
            continue;
        DIR *sub = opendir(path);
        struct dirent *a;
        while (rc == 0 && sub && (a = readdir(sub))) {
            char apath[8192];
            if (a->d_name[0] == '.' || (size_t)snprintf(apath, sizeof apath, "%s/%s", path, a->d_name) >= sizeof apath)
                continue;
            struct stat ast;
            rc = check_entry(apath, &ast, err, errlen);
        }
        if (sub)
            closedir(sub);
    }
    closedir(d);
    return rc;
}
