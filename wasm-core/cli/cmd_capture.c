/*
 * cmd_capture.c - `slablab capture`: records the running kernel's kmem and
 * percpu trace events, with the caches' sysfs attributes and the machine's
 * description, into one .slabcap file (a ustar archive, docs/slabcap.md).
 * It runs as root, so it must leave the machine exactly as it found it and
 * never destroy a file (docs/security.md says what it touches).
 *
 * Tracing state.  The capture never touches the global tracing setup: it
 * creates its own ftrace instance (instances/slablab-PID), whose ring
 * buffer, event switches and tracing_on are private to it, and removes the
 * instance at the end, on every path, Ctrl-C (SIGINT, SIGTERM, SIGHUP)
 * included; if the kernel refuses, the capture exits non-zero with the
 * exact `rmdir` to run.  A SIGKILL cannot be caught: then
 * `rmdir /sys/kernel/tracing/instances/slablab-PID` removes the instance.
 *
 * Mounts.  When tracefs (or debugfs, for percpu_stats) is not mounted, the
 * capture mounts it in a mount namespace of its own (unshare, propagation
 * to the host cut with MS_SLAVE): the host's mount table never changes,
 * two captures at once cannot unmount each other's tracefs, and a SIGKILL
 * leaves no mount behind (the namespace dies with the process).  The
 * wrapped command is returned to the host's namespace (setns) before exec.
 *
 * The command.  Every descriptor the capture opens is close-on-exec, so the
 * command and whatever it leaves running never hold the instance's
 * trace_pipe or the output (either would keep the instance busy).  It runs
 * in its own session and process group; Ctrl-C is forwarded to that group,
 * and when the command exits, what it left in the group gets SIGTERM, then
 * SIGKILL, before teardown.  A command that cannot be run fails the capture
 * with status 127 and no file; a capture stopped by a signal keeps what it
 * recorded and exits 128 + the signal.
 *
 * Recording.  trace_pipe is read while the command runs (or for the given
 * seconds), so the ring buffer only has to absorb bursts; events the
 * kernel still drops are counted per CPU from per_cpu/cpuN/stats into
 * slabcap-end.meta (and trace_pipe writes "[LOST N EVENTS]" lines the
 * replay counts).  The archive is written to a temporary file beside -o
 * (outfile.h) and renamed over it only when complete: a failed capture
 * leaves an existing file as it was, and -o naming a device, FIFO or
 * directory is refused before tracing starts.  The trace member is
 * streamed and its header's size patched at the end.  The instance's
 * hash-ptr option is off: pointers are the objects' real addresses, as in
 * the archive's snapshots (`replay --check` places objects in slabs).
 */
#include "capture_snapshot.h"
#include "cli.h"
#include "outfile.h"

#include "../src/replay/replay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int run_capture(int argc, char **argv);
SL_CLI_COMMAND(capture, .name = "capture",
               .summary = "record the kernel's kmem/percpu trace events and slab state into a .slabcap (root)",
               .usage = "slablab capture (--seconds N | -- COMMAND [ARGS...]) -o FILE.slabcap [--buffer-kb N (per CPU, "
                        "default 16384)]",
               .run = run_capture)

static const char *const kmem_events[] = {"kmem_cache_alloc", "kmem_cache_free", "kmalloc", "kfree",
                                          "mm_page_alloc",    "mm_page_free"};
static const char *const percpu_events[] = {"percpu_alloc_percpu", "percpu_free_percpu", "percpu_create_chunk",
                                            "percpu_destroy_chunk", "percpu_alloc_percpu_fail"};

static volatile sig_atomic_t stop_requested; /* the signal that asked the capture to stop, 0 if none */
static void on_signal(int sig) { stop_requested = sig; }

typedef struct capture {
    char tracefs[256];
    int host_ns; /* the host's mount namespace (an fd) once the capture left it for its own, else -1 */
    char instance[320];
    bool instance_made;
    int out; /* the temporary output's descriptor (sl_outfile's) */
    uint64_t mtime;
    char events[1024];
} capture;

/* ---- small file helpers ------------------------------------------------ */

static bool write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

static bool write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = write_all(fd, text, strlen(text));
    return close(fd) == 0 && ok;
}

/* Reads a whole (pseudo) file into b; false if it cannot be opened or read. */
static bool read_file(const char *path, sl_strbuf *b)
{
    b->len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[16384];
    ssize_t n;
    bool ok = true;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            ok = false;
            break;
        }
        sl_strbuf_append(b, buf, (size_t)n);
    }
    close(fd);
    return ok && !b->failed;
}

static bool add_member(capture *c, const char *name, const void *data, size_t len)
{
    uint8_t hdr[SL_USTAR_BLOCK], pad[SL_USTAR_BLOCK] = {0};
    return sl_ustar_header(hdr, name, '0', len, NULL, c->mtime) == SL_OK && write_all(c->out, hdr, sizeof hdr) &&
           write_all(c->out, data, len) && write_all(c->out, pad, sl_ustar_padding(len));
}

static bool add_link(capture *c, const char *name, const char *target)
{
    uint8_t hdr[SL_USTAR_BLOCK];
    return sl_ustar_header(hdr, name, '2', 0, target, c->mtime) == SL_OK && write_all(c->out, hdr, sizeof hdr);
}

/* "0-1,3" -> 3 (the count of CPUs in a kernel cpu list). */
static unsigned cpu_list_count(const char *path)
{
    sl_strbuf b = {0};
    unsigned n = 0;
    if (read_file(path, &b)) {
        for (char *p = b.data; p && *p && *p != '\n';) {
            unsigned long a = strtoul(p, &p, 10), z = a;
            if (*p == '-')
                z = strtoul(p + 1, &p, 10);
            if (z >= a)
                n += (unsigned)(z - a + 1);
            if (*p != ',')
                break;
            p++;
        }
    }
    sl_strbuf_free(&b);
    return n;
}

/* ---- tracefs ------------------------------------------------------------ */

static bool find_mount(const char *type, char *path, size_t len)
{
    FILE *f = fopen("/proc/mounts", "re");
    if (!f)
        return false;
    char dev[256], dir[256], fstype[64];
    bool found = false;
    while (!found && fscanf(f, "%255s %255s %63s %*[^\n]", dev, dir, fstype) == 3)
        if (!strcmp(fstype, type)) {
            snprintf(path, len, "%s", dir);
            found = true;
        }
    fclose(f);
    return found;
}

/*
 * Leaves the host's mount namespace for one of the capture's own (once),
 * whose mounts do not propagate back.  Returns 0, or -1 with errno.
 */
static int private_mounts(capture *c)
{
    if (c->host_ns >= 0)
        return 0;
    int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    if (ns < 0)
        return -1;
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) {
        int e = errno;
        close(ns);
        errno = e;
        return -1;
    }
    c->host_ns = ns;
    return 0;
}

static int setup_tracefs(capture *c)
{
    if (find_mount("tracefs", c->tracefs, sizeof c->tracefs))
        return 0;
    snprintf(c->tracefs, sizeof c->tracefs, "/sys/kernel/tracing");
    if (private_mounts(c) != 0) {
        fprintf(stderr,
                "slablab capture: tracefs is not mounted, and the capture cannot mount it privately (a mount "
                "namespace of its own: %s). Mount it with `mount -t tracefs nodev /sys/kernel/tracing` and run the "
                "capture again.\n",
                strerror(errno));
        return 1;
    }
    if (mount("nodev", c->tracefs, "tracefs", 0, NULL) == 0)
        return 0;
    fprintf(stderr,
            "slablab capture: no tracefs: mounting it at %s failed (%s). The kernel needs CONFIG_TRACING; "
            "try `mount -t tracefs nodev /sys/kernel/tracing` and run the capture again.\n",
            c->tracefs, strerror(errno));
    return 1;
}

/* Removes the instance; false (with the exact command to finish by hand) when the kernel refuses. */
static bool cleanup(capture *c)
{
    bool ok = true;
    if (c->instance_made && rmdir(c->instance) != 0) {
        /* In the capture's own namespace the path is the host's only when tracefs is mounted there. */
        const char *rel = strstr(c->instance, "/instances/");
        fprintf(stderr,
                "slablab capture: could not remove the tracing instance %s (%s): remove it with `rmdir %s` (or, "
                "where tracefs is mounted elsewhere, `rmdir <tracefs>%s`)\n",
                c->instance, strerror(errno), c->instance, rel ? rel : "");
        ok = false;
    }
    c->instance_made = false;
    return ok;
}

/*
 * Not the capture's own events: writing the archive allocates page cache
 * (pages, buffer heads), which would be traced, read and written again.
 * Only its own process-context work at preemption depth 0 is left out,
 * through each event's filter: what the kernel does while the capture
 * happens to be the current task is kept, because it is not the capture's
 * (RCU callbacks run in softirq on its interrupt exit free task_structs,
 * creds and pids with kmem_cache_free; finish_task_switch, entered with
 * preemption off, frees the mm_struct of the task that ran before it).
 * set_event_notrace_pid, used before, dropped those too: on a fork loop
 * about 5 % of mm_struct and task_struct frees were missing from the trace
 * (the objects were allocated again with no free between).  The flags are
 * include/linux/trace_events.h's TRACE_FLAG_HARDIRQ | SOFTIRQ | NMI.  Where
 * a filter cannot be set, set_event_notrace_pid (5.8+) leaves the whole
 * process out; where neither can, the capture's own writes are recorded.
 */
static void exclude_own_events(capture *c)
{
    char path[512], filter[128];
    snprintf(filter, sizeof filter, "common_pid != %d || common_flags & 0x58 || common_preempt_count != 0",
             (int)getpid());
    bool filtered = true;
    for (unsigned i = 0;
         i < sizeof kmem_events / sizeof kmem_events[0] + sizeof percpu_events / sizeof percpu_events[0]; i++) {
        bool kmem = i < sizeof kmem_events / sizeof kmem_events[0];
        const char *event = kmem ? kmem_events[i] : percpu_events[i - sizeof kmem_events / sizeof kmem_events[0]];
        snprintf(path, sizeof path, "%s/events/%s/%s/filter", c->instance, kmem ? "kmem" : "percpu", event);
        if (access(path, F_OK) != 0) /* a percpu event this kernel does not have: not recorded */
            continue;
        filtered = filtered && write_text(path, filter);
    }
    if (filtered)
        return;
    snprintf(path, sizeof path, "%s/set_event_notrace_pid", c->instance);
    snprintf(filter, sizeof filter, "%d", (int)getpid());
    if (write_text(path, filter))
        fprintf(stderr, "slablab capture: note: event filters could not be set; the capture's process is left out "
                        "whole (frees the kernel does while it runs are missing)\n");
    else
        fprintf(stderr,
                "slablab capture: note: cannot exclude the capture's own events (%s): its writes are "
                "recorded too\n",
                strerror(errno));
}

static int setup_instance(capture *c, unsigned long buffer_kb)
{
    snprintf(c->instance, sizeof c->instance, "%s/instances/slablab-%d", c->tracefs, (int)getpid());
    if (mkdir(c->instance, 0755) != 0) {
        fprintf(stderr,
                "slablab capture: cannot create the tracing instance %s (%s); the capture records into its own "
                "instance so the global tracing setup stays as it is (kernels before 3.10 have none)\n",
                c->instance, strerror(errno));
        return 1;
    }
    c->instance_made = true;
    char path[512], val[32];
    snprintf(path, sizeof path, "%s/tracing_on", c->instance);
    if (!write_text(path, "0"))
        goto fail;
    /*
     * The objects' real addresses, not %p's per-boot hashes (hash-ptr, on by
     * default since 5.14): `replay --check` finds each object's slab in the
     * archive's snapshots, which hold real addresses anyway.
     */
    snprintf(path, sizeof path, "%s/options/hash-ptr", c->instance);
    if (!write_text(path, "0") && errno != ENOENT)
        fprintf(stderr,
                "slablab capture: note: cannot turn hash-ptr off (%s): the trace's pointers are hashed and "
                "`replay --check` cannot place them\n",
                strerror(errno));
    snprintf(path, sizeof path, "%s/buffer_size_kb", c->instance);
    snprintf(val, sizeof val, "%lu", buffer_kb);
    if (!write_text(path, val)) {
        fprintf(stderr,
                "slablab capture: cannot size the trace buffer to %s KiB per CPU (%s): try a smaller "
                "--buffer-kb\n",
                val, strerror(errno));
        return 1;
    }
    c->events[0] = 0;
    for (unsigned i = 0; i < sizeof kmem_events / sizeof kmem_events[0]; i++) {
        snprintf(path, sizeof path, "%s/events/kmem/%s/enable", c->instance, kmem_events[i]);
        if (!write_text(path, "1")) {
            fprintf(stderr,
                    "slablab capture: the kernel has no kmem:%s trace event (%s): it needs CONFIG_TRACEPOINTS "
                    "and the kmem events\n",
                    kmem_events[i], strerror(errno));
            return 1;
        }
        snprintf(c->events + strlen(c->events), sizeof c->events - strlen(c->events), "%skmem:%s",
                 c->events[0] ? "," : "", kmem_events[i]);
    }
    for (unsigned i = 0; i < sizeof percpu_events / sizeof percpu_events[0]; i++) {
        snprintf(path, sizeof path, "%s/events/percpu/%s/enable", c->instance, percpu_events[i]);
        if (!write_text(path, "1")) {
            fprintf(stderr, "slablab capture: note: no percpu:%s event on this kernel; recording without it\n",
                    percpu_events[i]);
            continue;
        }
        snprintf(c->events + strlen(c->events), sizeof c->events - strlen(c->events), ",percpu:%s", percpu_events[i]);
    }
    exclude_own_events(c);
    return 0;
fail:
    fprintf(stderr, "slablab capture: cannot write %s: %s\n", path, strerror(errno));
    return 1;
}

/* ---- the snapshot before recording -------------------------------------- */

static uint64_t percpu_unit_size(const char *stats)
{
    const char *p = stats ? strstr(stats, "unit_size") : NULL;
    if (!p)
        return 0;
    p = strchr(p, ':');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

static int write_snapshot(capture *c, const char *command_text, double seconds, unsigned long buffer_kb)
{
    sl_strbuf b = {0}, stats = {0};
    bool have_stats = read_file("/sys/kernel/debug/percpu_stats", &stats);
    /* debugfs only in the capture's own mount namespace: the host's mounts stay as they are. */
    if (!have_stats && !find_mount("debugfs", (char[256]){0}, 256) && private_mounts(c) == 0 &&
        mount("nodev", "/sys/kernel/debug", "debugfs", 0, NULL) == 0)
        have_stats = read_file("/sys/kernel/debug/percpu_stats", &stats);
    struct utsname u;
    uname(&u);
    char started[64];
    time_t now = (time_t)c->mtime;
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    char clock[64] = "local";
    sl_strbuf cb = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/trace_clock", c->instance);
    if (read_file(path, &cb)) {
        char *open_b = strchr(cb.data, '['), *close_b = open_b ? strchr(open_b, ']') : NULL;
        if (open_b && close_b)
            snprintf(clock, sizeof clock, "%.*s", (int)(close_b - open_b - 1), open_b + 1);
    }
    sl_strbuf_free(&cb);
    sl_strbuf_printf(&b,
                     "format=slabcap/1\ntool=slablab capture\nkernel_release=%s\nkernel_version=%s\nmachine=%s\n"
                     "cpus_possible=%u\ncpus_present=%u\ncpus_online=%u\npage_size=%ld\n",
                     u.release, u.version, u.machine, cpu_list_count("/sys/devices/system/cpu/possible"),
                     cpu_list_count("/sys/devices/system/cpu/present"),
                     cpu_list_count("/sys/devices/system/cpu/online"), sysconf(_SC_PAGESIZE));
    if (have_stats && percpu_unit_size(stats.data))
        sl_strbuf_printf(&b, "percpu_unit_size=%llu\n", (unsigned long long)percpu_unit_size(stats.data));
    sl_strbuf_printf(&b, "started_utc=%s\ntrace_clock=%s\nbuffer_kb_per_cpu=%lu\nevents=%s\n", started, clock,
                     buffer_kb, c->events);
    if (command_text)
        sl_strbuf_printf(&b, "command=%s\n", command_text);
    else
        sl_strbuf_printf(&b, "seconds=%g\n", seconds);
    bool ok = add_member(c, "slabcap.meta", b.data, b.len);
    if (ok && read_file("/proc/slabinfo", &b))
        ok = add_member(c, "proc/slabinfo", b.data, b.len);
    if (ok && have_stats)
        ok = add_member(c, "sys/kernel/debug/percpu_stats", stats.data, stats.len);
    sl_strbuf_free(&stats);

    /* /sys/kernel/slab: every cache folder's readable attributes, and the alias links. */
    DIR *d = ok ? opendir("/sys/kernel/slab") : NULL;
    if (ok && !d)
        fprintf(stderr, "slablab capture: note: no /sys/kernel/slab (not SLUB?): the replay computes geometry\n");
    struct dirent *e;
    while (ok && d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char full[512], member[512], link[256];
        snprintf(full, sizeof full, "/sys/kernel/slab/%s", e->d_name);
        snprintf(member, sizeof member, "sys/kernel/slab/%s", e->d_name);
        struct stat st;
        if (lstat(full, &st) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            ssize_t n = readlink(full, link, sizeof link - 1);
            if (n > 0) {
                link[n] = 0;
                const char *target = strrchr(link, '/');
                ok = add_link(c, member, target ? target + 1 : link);
            }
            continue;
        }
        if (!S_ISDIR(st.st_mode))
            continue;
        DIR *cd = opendir(full);
        struct dirent *a;
        while (ok && cd && (a = readdir(cd))) {
            char apath[800], aname[800];
            snprintf(apath, sizeof apath, "%s/%s", full, a->d_name);
            snprintf(aname, sizeof aname, "%s/%s", member, a->d_name);
            if (a->d_name[0] == '.' || lstat(apath, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IRUSR))
                continue;
            if (read_file(apath, &b))
                ok = add_member(c, aname, b.data, b.len);
        }
        if (cd)
            closedir(cd);
    }
    if (d)
        closedir(d);
    sl_strbuf_free(&b);
    return ok ? 0 : 1;
}

/* ---- recording ---------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Moves what trace_pipe has (up to `limit` bytes: the loop must get back to
 * checking the command and the clock) into the archive; returns the bytes
 * moved, or -1 on a write error.
 */
static long long drain_pipe(capture *c, int pipe_fd, char *buf, size_t cap, long long limit)
{
    long long total = 0;
    while (total < limit) {
        ssize_t n = read(pipe_fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return total;
        if (!write_all(c->out, buf, (size_t)n))
            return -1;
        total += n;
    }
    return total;
}

static uint64_t lost_events(capture *c, unsigned cpus)
{
    uint64_t lost = 0;
    sl_strbuf b = {0};
    for (unsigned cpu = 0; cpu < cpus; cpu++) {
        char path[512];
        snprintf(path, sizeof path, "%s/per_cpu/cpu%u/stats", c->instance, cpu);
        if (!read_file(path, &b))
            continue;
        const char *p = strstr(b.data, "overrun:");
        if (p)
            lost += strtoull(p + 8, NULL, 10);
        p = strstr(b.data, "dropped events:");
        if (p)
            lost += strtoull(p + 15, NULL, 10);
    }
    sl_strbuf_free(&b);
    return lost;
}

static int run_capture(int argc, char **argv)
{
    double seconds = 0;
    const char *out_path = NULL;
    unsigned long buffer_kb = 16384;
    char **command = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            command = argv + i + 1;
            if (!*command)
                return sl_cli_usage_error(&sl_cli_cmd_capture, "-- needs a command to run");
            break;
        } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            char *end;
            seconds = strtod(argv[++i], &end);
            if (*end || !(seconds > 0 && seconds <= 86400))
                return sl_cli_usage_error(&sl_cli_cmd_capture, "--seconds takes a number of seconds (0 < N <= 86400)");
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--buffer-kb") && i + 1 < argc) {
            if (!sl_cli_parse_ulong(argv[++i], 64, 4u << 20, &buffer_kb))
                return sl_cli_usage_error(&sl_cli_cmd_capture, "--buffer-kb takes 64 to 4194304 (KiB per CPU)");
        } else {
            return sl_cli_usage_error(&sl_cli_cmd_capture, "unknown argument '%s'", argv[i]);
        }
    }
    if (!out_path)
        return sl_cli_usage_error(&sl_cli_cmd_capture, "give the output file: -o FILE.slabcap");
    if (!command == !(seconds > 0))
        return sl_cli_usage_error(&sl_cli_cmd_capture, "give either --seconds N or -- COMMAND ARGS");

    struct utsname u;
    if (uname(&u) != 0 || strcmp(u.sysname, "Linux")) {
        fprintf(stderr,
                "slablab capture: this is %s, not Linux: the capture records Linux's ftrace events. Record on "
                "the Linux machine and copy the .slabcap here for `slablab replay`.\n",
                uname(&u) == 0 ? u.sysname : "not Linux");
        return 1;
    }
    if (geteuid() != 0) {
        fprintf(stderr, "slablab capture: tracing the kernel needs root: run `sudo slablab capture ...` (tracefs and "
                        "/sys/kernel/slab are root's)\n");
        return 1;
    }
    /* The output first: a refused -o (a device, a FIFO, a missing directory) changes nothing, tracing included. */
    char err[512];
    sl_outfile out;
    if (sl_outfile_open(&out, out_path, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "slablab capture: -o: %s\n", err);
        return 1;
    }
    if (out.is_stdout) {
        sl_outfile_abort(&out);
        fprintf(stderr, "slablab capture: -o needs a file (the archive's trace header is patched at the end)\n");
        return 1;
    }
    capture c = {.out = fileno(out.f), .host_ns = -1, .mtime = (uint64_t)time(NULL)};
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term, old_hup;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);

    int status = setup_tracefs(&c);
    if (!status)
        status = setup_instance(&c, buffer_kb);
    char command_text[1024] = "";
    for (char **a = command; a && *a; a++)
        snprintf(command_text + strlen(command_text), sizeof command_text - strlen(command_text), "%s%s",
                 a == command ? "" : " ", *a);
    if (!status && write_snapshot(&c, command ? command_text : NULL, seconds, buffer_kb)) {
        fprintf(stderr, "slablab capture: writing %s failed: %s\n", out_path, strerror(errno));
        status = 1;
    }
    /* The kernel's slab state just before tracing starts, and (below) just after it stops. */
    sl_capture_snapshot snap_start = {0}, snap_end = {0};
    if (!status)
        sl_capture_snapshot_take(&snap_start);
    if (snap_start.data && !add_member(&c, SL_CAPTURE_SNAPSHOT_START, snap_start.data, snap_start.len))
        status = 1;

    /* The trace member: header now, size patched at the end. */
    off_t trace_hdr = status ? 0 : lseek(c.out, 0, SEEK_CUR);
    uint8_t hdr[SL_USTAR_BLOCK];
    if (!status &&
        (sl_ustar_header(hdr, "trace.txt", '0', 0, NULL, c.mtime) != SL_OK || !write_all(c.out, hdr, sizeof hdr)))
        status = 1;
    char path[512];
    snprintf(path, sizeof path, "%s/trace_pipe", c.instance);
    int pipe_fd = status ? -1 : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (!status && pipe_fd < 0) {
        fprintf(stderr, "slablab capture: cannot open %s: %s\n", path, strerror(errno));
        status = 1;
    }
    snprintf(path, sizeof path, "%s/tracing_on", c.instance);
    pid_t child = -1, group = -1;
    int child_status = 0, exec_errno = 0;
    long long trace_bytes = 0;
    uint64_t t0 = now_ns();
    static char buf[1 << 20];
    if (!status && !write_text(path, "1")) {
        fprintf(stderr, "slablab capture: cannot start tracing (%s)\n", strerror(errno));
        status = 1;
    }
    if (!status && command) {
        /* exec's failure comes back through a close-on-exec pipe: a successful exec closes it empty. */
        int report[2];
        /* What the command leaves behind is reparented to the capture (a subreaper), so it is reaped here and
           kill(-group, 0) does not see zombies a container's init would never collect. */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        if (pipe2(report, O_CLOEXEC) != 0) {
            fprintf(stderr, "slablab capture: pipe failed: %s\n", strerror(errno));
            status = 1;
        } else if ((child = fork()) == 0) {
            sigaction(SIGINT, &old_int, NULL);
            sigaction(SIGTERM, &old_term, NULL);
            sigaction(SIGHUP, &old_hup, NULL);
            setsid(); /* its own session and process group: what it leaves behind can be found and stopped */
            int e = 0;
            if (c.host_ns >= 0 && setns(c.host_ns, CLONE_NEWNS) != 0)
                e = errno;
            else
                execvp(command[0], command);
            e = e ? e : errno;
            ssize_t told = write(report[1], &e, sizeof e); /* nothing more to do if even this fails */
            (void)told;
            _exit(127);
        }
        if (child > 0) {
            close(report[1]);
            ssize_t n;
            while ((n = read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
                ;
            if (n != (ssize_t)sizeof exec_errno)
                exec_errno = 0;
            close(report[0]);
            group = child;
            if (exec_errno) {
                fprintf(stderr, "slablab capture: cannot run %s: %s\n", command[0], strerror(exec_errno));
                waitpid(child, &child_status, 0);
                child = -1;
                status = 127;
            }
        } else if (child < 0) {
            close(report[0]);
            close(report[1]);
            fprintf(stderr, "slablab capture: fork failed: %s\n", strerror(errno));
            status = 1;
        }
    }
    uint64_t deadline = t0 + (uint64_t)(seconds * 1e9);
    while (!status && !stop_requested) {
        if (command) {
            pid_t w = waitpid(child, &child_status, WNOHANG);
            if (w == child) {
                child = -1;
                break;
            }
        } else if (now_ns() >= deadline) {
            break;
        }
        struct pollfd pfd = {.fd = pipe_fd, .events = POLLIN};
        poll(&pfd, 1, 50);
        long long n = drain_pipe(&c, pipe_fd, buf, sizeof buf, 8 << 20);
        if (n < 0) {
            fprintf(stderr, "slablab capture: writing %s failed: %s\n", out_path, strerror(errno));
            status = 1;
        }
        trace_bytes += n > 0 ? n : 0;
    }
    int interrupted = stop_requested;
    if (group > 0) {
        /*
         * Stopped by a signal while the command runs: the command's group
         * gets the same signal (it is not in the terminal's group any more),
         * then SIGTERM after 2 s and SIGKILL after 4.  Once the command has
         * exited, what it left running in its group gets SIGTERM, then
         * SIGKILL after 2 s.  Recording goes on meanwhile, so the buffer does
         * not overflow and the end is traced.
         */
        if (child > 0 && interrupted)
            kill(-group, interrupted);

        uint64_t since = now_ns();
        int sent = 0;
        for (;;) {
            if (child > 0 && waitpid(child, &child_status, WNOHANG) == child)
                child = -1;
            while (child <= 0 && waitpid(-group, NULL, WNOHANG) > 0)
                ;
            bool group_left = kill(-group, 0) == 0;
            if (child <= 0 && !group_left)
                break;
            uint64_t waited = now_ns() - since;
            if (child <= 0 && sent == 0) {
                kill(-group, SIGTERM); /* the command is gone; its leftovers are not wanted */
                sent = 1;
                since = now_ns();
            } else if (sent == 0 && waited > 2000000000ull) {
                kill(-group, SIGTERM);
                sent = 1;
            } else if (sent == 1 && waited > (child > 0 ? 4000000000ull : 2000000000ull)) {
                kill(-group, SIGKILL);
                sent = 2;
            } else if (sent == 2 && waited > 10000000000ull) {
                fprintf(stderr, "slablab capture: process group %d does not die; going on without it\n", (int)group);
                break;
            }
            struct pollfd pfd = {.fd = pipe_fd, .events = POLLIN};
            poll(&pfd, 1, 20);
            long long n = status || pipe_fd < 0 ? 0 : drain_pipe(&c, pipe_fd, buf, sizeof buf, 8 << 20);
            if (n < 0)
                status = 1;
            trace_bytes += n > 0 ? n : 0;
        }
    }
    double duration = (double)(now_ns() - t0) / 1e9;
    if (c.instance_made)
        write_text(path, "0");
    if (!status && snap_start.data)
        sl_capture_snapshot_take(&snap_end);
    if (!status) {
        long long n = drain_pipe(&c, pipe_fd, buf, sizeof buf, LLONG_MAX);
        if (n < 0)
            status = 1;
        else
            trace_bytes += n;
    }
    if (pipe_fd >= 0)
        close(pipe_fd);
    uint64_t lost = c.instance_made ? lost_events(&c, cpu_list_count("/sys/devices/system/cpu/possible")) : 0;
    if (!status) {
        /* Patch the trace member's size, pad it, add the end metadata and the archive's end. */
        uint8_t pad[2 * SL_USTAR_BLOCK] = {0};
        sl_strbuf end = {0};
        sl_strbuf_printf(&end, "duration_s=%.6f\ninterrupted=%d\nlost_events=%llu\ntrace_bytes=%lld\n", duration,
                         interrupted != 0, (unsigned long long)lost, trace_bytes);
        if (command)
            sl_strbuf_printf(&end, "command_exit=%d\n",
                             WIFEXITED(child_status) ? WEXITSTATUS(child_status) : 128 + WTERMSIG(child_status));
        bool ok = write_all(c.out, pad, sl_ustar_padding((uint64_t)trace_bytes)) &&
                  sl_ustar_header(hdr, "trace.txt", '0', (uint64_t)trace_bytes, NULL, c.mtime) == SL_OK &&
                  pwrite(c.out, hdr, sizeof hdr, trace_hdr) == (ssize_t)sizeof hdr &&
                  add_member(&c, "slabcap-end.meta", end.data, end.len) &&
                  (!snap_end.data || add_member(&c, SL_CAPTURE_SNAPSHOT_END, snap_end.data, snap_end.len)) &&
                  write_all(c.out, pad, sizeof pad);
        sl_strbuf_free(&end);
        if (!ok) {
            fprintf(stderr, "slablab capture: writing %s failed: %s\n", out_path, strerror(errno));
            status = 1;
        }
    }
    sl_capture_snapshot_free(&snap_start);
    sl_capture_snapshot_free(&snap_end);
    bool cleaned = cleanup(&c);
    if (c.host_ns >= 0)
        close(c.host_ns);
    /* Only a complete archive replaces -o; on failure the temporary goes and an existing file stays as it was. */
    if (!status && sl_outfile_commit(&out, err, sizeof err) != 0) {
        fprintf(stderr, "slablab capture: %s\n", err);
        status = 1;
    } else if (status) {
        sl_outfile_abort(&out);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (!status)
        printf("slablab capture: %s: %.2f s, %lld bytes of trace%s%s; replay it with `slablab replay %s`\n", out_path,
               duration, trace_bytes, lost ? ", events lost: " : "", lost ? "see slabcap-end.meta" : "", out_path);
    if (!status && interrupted) {
        printf("slablab capture: stopped by signal %d (%s); the file holds what was recorded until then\n", interrupted,
               strsignal(interrupted));
        status = 128 + interrupted;
    }
    if (status == 0 && !cleaned)
        status = 1;
    return status;
}
