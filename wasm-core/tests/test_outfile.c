/*
 * test_outfile.c - cli/outfile.c, the safe output file every output option
 * uses: nothing at the target changes before commit, an abort never touches
 * it, a device node / FIFO / directory and the input file itself are
 * refused, the temporary is close-on-exec with a new file's mode, and a
 * failed commit (a full device) removes the temporary and leaves the target.
 * Native only (the CLI is); the device-node tests need root for mknod and
 * skip by name without it.
 */
#include "check.h"

#if !SL_WASM
#include "../cli/outfile.c"

#include <dirent.h>
#include <sys/sysmacros.h>

static char dir[] = "/tmp/slablab-outfile-XXXXXX";
static char err[512];

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static bool file_is(const char *path, const char *text)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(text) && !memcmp(buf, text, n);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Files in the temp dir, hidden ones included (a leftover temporary shows here). */
static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
    if (d)
        closedir(d);
    return n;
}

static void test_outfile_commit_replaces_only_at_commit(void)
{
    char p[PATH_MAX];
    path_in(p, sizeof p, "out.txt");
    write_file(p, "old");
    sl_outfile o;
    SL_REQUIRE(sl_outfile_open(&o, p, NULL, err, sizeof err) == 0);
    fputs("new", o.f);
    fflush(o.f);
    SL_CHECK(file_is(p, "old"));
    int flags = fcntl(fileno(o.f), F_GETFD);
    SL_CHECK(flags >= 0 && (flags & FD_CLOEXEC));
    SL_CHECK_EQ(sl_outfile_commit(&o, err, sizeof err), 0);
    SL_CHECK(file_is(p, "new"));
    SL_CHECK_EQ(entries(), 1);
    unlink(p);
}

static void test_outfile_abort_leaves_existing_file(void)
{
    char p[PATH_MAX];
    path_in(p, sizeof p, "keep.txt");
    write_file(p, "precious");
    sl_outfile o;
    SL_REQUIRE(sl_outfile_open(&o, p, NULL, err, sizeof err) == 0);
    fputs("half a file", o.f);
    sl_outfile_abort(&o);
    SL_CHECK(file_is(p, "precious"));
    SL_CHECK_EQ(entries(), 1);
    unlink(p);
    /* A new target that is aborted never appears. */
    SL_REQUIRE(sl_outfile_open(&o, p, NULL, err, sizeof err) == 0);
    sl_outfile_abort(&o);
    SL_CHECK(access(p, F_OK) != 0);
    SL_CHECK_EQ(entries(), 0);
}

static void test_outfile_new_file_mode(void)
{
    char p[PATH_MAX];
    path_in(p, sizeof p, "mode.txt");
    mode_t old = umask(027);
    sl_outfile o;
    int rc = sl_outfile_open(&o, p, NULL, err, sizeof err);
    umask(old);
    SL_REQUIRE(rc == 0);
    SL_REQUIRE(sl_outfile_commit(&o, err, sizeof err) == 0);
    struct stat st;
    SL_REQUIRE(stat(p, &st) == 0);
    SL_CHECK_EQ(st.st_mode & 0777, 0640);
    unlink(p);
}

static void test_outfile_refuses_directory_fifo_and_input(void)
{
    char p[PATH_MAX];
    sl_outfile o;
    SL_CHECK_EQ(sl_outfile_open(&o, dir, NULL, err, sizeof err), -1);
    SL_CHECK(strstr(err, "directory") != NULL);
    path_in(p, sizeof p, "fifo");
    SL_REQUIRE(mkfifo(p, 0600) == 0);
    SL_CHECK_EQ(sl_outfile_open(&o, p, NULL, err, sizeof err), -1);
    SL_CHECK(strstr(err, "FIFO") != NULL);
    struct stat st;
    SL_CHECK(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode));
    unlink(p);
    char in[PATH_MAX], link[PATH_MAX];
    path_in(in, sizeof in, "trace.txt");
    path_in(link, sizeof link, "alias.txt");
    write_file(in, "the input");
    SL_REQUIRE(symlink(in, link) == 0);
    SL_CHECK_EQ(sl_outfile_open(&o, in, in, err, sizeof err), -1);
    SL_CHECK(strstr(err, "input") != NULL);
    SL_CHECK_EQ(sl_outfile_open(&o, link, in, err, sizeof err), -1);
    SL_CHECK(file_is(in, "the input"));
    /* Through a link to another file: that file is replaced, the link stays a link. */
    unlink(link);
    char other[PATH_MAX];
    path_in(other, sizeof other, "other.txt");
    write_file(other, "x");
    SL_REQUIRE(symlink(other, link) == 0);
    SL_REQUIRE(sl_outfile_open(&o, link, in, err, sizeof err) == 0);
    fputs("through", o.f);
    SL_CHECK_EQ(sl_outfile_commit(&o, err, sizeof err), 0);
    SL_CHECK(file_is(other, "through"));
    SL_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    unlink(link);
    unlink(other);
    unlink(in);
}

/* A character device made in the temp dir (never /dev/full itself): refused, and still there. */
static void test_outfile_refuses_device_node(void)
{
    if (geteuid() != 0)
        SL_SKIP("mknod of a device node needs root");
    char p[PATH_MAX];
    path_in(p, sizeof p, "full");
    if (mknod(p, S_IFCHR | 0600, makedev(1, 7)) != 0)
        SL_SKIP("mknod is not permitted here (a container without CAP_MKNOD)");
    sl_outfile o;
    SL_CHECK_EQ(sl_outfile_open(&o, p, NULL, err, sizeof err), -1);
    SL_CHECK(strstr(err, "character device") != NULL);
    struct stat st;
    SL_CHECK(lstat(p, &st) == 0 && S_ISCHR(st.st_mode));
    unlink(p);
}

/* stdout ("-") on a full device: commit reports the failure instead of succeeding. */
static void test_outfile_stdout_write_error(void)
{
    if (geteuid() != 0)
        SL_SKIP("mknod of a device node needs root");
    char p[PATH_MAX];
    path_in(p, sizeof p, "full");
    if (mknod(p, S_IFCHR | 0600, makedev(1, 7)) != 0)
        SL_SKIP("mknod is not permitted here (a container without CAP_MKNOD)");
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), fd = open(p, O_WRONLY);
    SL_REQUIRE(saved >= 0 && fd >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    sl_outfile o;
    int open_rc = sl_outfile_open(&o, "-", NULL, err, sizeof err);
    fputs("lost", o.f);
    int commit_rc = sl_outfile_commit(&o, err, sizeof err);
    clearerr(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    unlink(p);
    SL_CHECK_EQ(open_rc, 0);
    SL_CHECK_EQ(commit_rc, -1);
    SL_CHECK(strstr(err, "standard output") != NULL);
}

static void test_outfile_missing_directory(void)
{
    sl_outfile o;
    char p[PATH_MAX];
    path_in(p, sizeof p, "no/such/dir/out.json");
    SL_CHECK_EQ(sl_outfile_open(&o, p, NULL, err, sizeof err), -1);
    SL_CHECK(strstr(err, "No such file") != NULL);
}
#endif

int main(void)
{
#if SL_WASM
    printf("skipped: the slablab CLI (and its output files) is native only\n");
    return sl_check_summary();
#else
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    SL_RUN(test_outfile_commit_replaces_only_at_commit);
    SL_RUN(test_outfile_abort_leaves_existing_file);
    SL_RUN(test_outfile_new_file_mode);
    SL_RUN(test_outfile_refuses_directory_fifo_and_input);
    SL_RUN(test_outfile_refuses_device_node);
    SL_RUN(test_outfile_stdout_write_error);
    SL_RUN(test_outfile_missing_directory);
    rmdir(dir);
    return sl_check_summary();
#endif
}
