/* outfile.c - safe output files: a temporary beside the target, renamed on success (outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/* The mode a new file gets here: 0666 less the umask (umask can only be read by setting it). */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(022);
    umask(mask);
    return 0666 & ~mask;
}

int sl_outfile_open(sl_outfile *o, const char *path, const char *input, char *err, size_t errlen)
{
    *o = (sl_outfile){0};
    if (!path || !*path) {
        snprintf(err, errlen, "no output file named");
        return -1;
    }
    if (!strcmp(path, "-")) {
        o->f = stdout;
        o->is_stdout = true;
        return 0;
    }
    /* A link is followed: the file it names is the one replaced, the link stays. */
    char resolved[PATH_MAX];
    const char *target = path;
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    if (exists) {
        if (!S_ISREG(st.st_mode)) {
            snprintf(err, errlen, "refusing to write %s: it is %s, not a regular file", path, kind_of(st.st_mode));
            return -1;
        }
        struct stat in;
        if (input && strcmp(input, "-") && stat(input, &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
            snprintf(err, errlen, "refusing to write %s: it is the input file %s, which it would replace", path, input);
            return -1;
        }
        if (!realpath(path, resolved)) {
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
            return -1;
        }
        target = resolved;
    } else {
        struct stat lst;
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            snprintf(err, errlen, "refusing to write %s: it is a link to a file that does not exist", path);
            return -1;
        }
    }
    const char *slash = strrchr(target, '/');
    size_t dirlen = slash ? (size_t)(slash - target + 1) : 0;
    const char *base = slash ? slash + 1 : target;
    size_t tlen = dirlen + 1 + strlen(base) + sizeof ".tmp-XXXXXX";
    o->target = strdup(target);
    o->temp = malloc(tlen);
    if (!o->target || !o->temp) {
        snprintf(err, errlen, "cannot write %s: out of memory", path);
        free(o->target);
        free(o->temp);
        *o = (sl_outfile){0};
        return -1;
    }
    snprintf(o->temp, tlen, "%.*s.%s.tmp-XXXXXX", (int)dirlen, target, base);
    int fd = mkostemp(o->temp, O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: creating a temporary file beside it failed: %s", path, strerror(errno));
        free(o->target);
        free(o->temp);
        *o = (sl_outfile){0};
        return -1;
    }
    if (fchmod(fd, new_file_mode()) != 0 || !(o->f = fdopen(fd, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(o->temp);
        free(o->target);
        free(o->temp);
        *o = (sl_outfile){0};
        return -1;
    }
    return 0;
}

int sl_outfile_commit(sl_outfile *o, char *err, size_t errlen)
{
    if (!o->f) {
        snprintf(err, errlen, "the output file is not open");
        return -1;
    }
    if (o->is_stdout) {
        int bad = fflush(stdout) != 0 || ferror(stdout);
        o->f = NULL;
        if (bad) {
            snprintf(err, errlen, "writing the standard output failed: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    int e = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        e = errno ? errno : EIO;
    if (!e && fsync(fileno(o->f)) != 0)
        e = errno;
    if (fclose(o->f) != 0 && !e)
        e = errno;
    o->f = NULL;
    if (!e && rename(o->temp, o->target) != 0)
        e = errno;
    if (e) {
        snprintf(err, errlen, "writing %s failed: %s", o->target, strerror(e));
        sl_outfile_abort(o);
        return -1;
    }
    /* The rename is durable only once the directory is synced; a failure here loses nothing written. */
    char *slash = strrchr(o->target, '/');
    if (slash) {
        *slash = '\0';
        int dfd = open(*o->target ? o->target : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        *slash = '/';
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
    free(o->temp);
    free(o->target);
    *o = (sl_outfile){0};
    return 0;
}

void sl_outfile_abort(sl_outfile *o)
{
    if (o->is_stdout) {
        if (o->f)
            fflush(stdout);
        *o = (sl_outfile){0};
        return;
    }
    if (o->f)
        fclose(o->f);
    if (o->temp)
        unlink(o->temp);
    free(o->temp);
    free(o->target);
    *o = (sl_outfile){0};
}
