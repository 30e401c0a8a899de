/*
 * snapshot_read.c - loads the snapshot program (wasm-core/bpf/, embedded as
 * a libbpf skeleton), runs its two iterators and collects the records.
 *
 *  1. Checks what the machine offers, so that a refusal names what is
 *     missing: Linux 6.13+ (the kmem_cache iterator), BTF, no lockdown in
 *     confidentiality mode, BPF permission.
 *  2. Loads the program with the CPU and node counts and --max-slabs as
 *     load-time constants; libbpf relocates its field accesses (CO-RE)
 *     against /sys/kernel/btf/vmlinux.
 *  3. Runs find_percpu_offsets (iter/bpf_map) to learn each CPU's per-CPU
 *     offset from the program's own per-CPU array, and stores them.
 *  4. Runs snapshot_caches (iter/kmem_cache) one cache per read(): the
 *     program writes one byte per cache to the iterator and its records to
 *     the ring buffer, which is drained after every read, so the ring only
 *     ever holds one cache.
 * The program and its links are gone when this returns (bpftool prog list
 * shows nothing of it).
 */
#include "snapshot.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The count of a "0-3,5"-style list file (its highest entry + 1), or 0 when unreadable. */
static unsigned count_of_list(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[256];
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    unsigned highest = 0;
    bool any = false;
    for (char *p = buf; *p;) {
        if (*p >= '0' && *p <= '9') {
            unsigned long v = strtoul(p, &p, 10);
            if (v > highest || !any)
                highest = (unsigned)v;
            any = true;
        } else {
            p++;
        }
    }
    return any ? highest + 1 : 0;
}

static void fill_machine(sl_snapshot *snap)
{
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(snap->release, sizeof snap->release, "%s", u.release);
        snprintf(snap->version, sizeof snap->version, "%s", u.version);
        snprintf(snap->machine, sizeof snap->machine, "%.63s", u.machine);
    }
    snap->nr_cpus = count_of_list("/sys/devices/system/cpu/possible");
    if (snap->nr_cpus == 0)
        snap->nr_cpus = (unsigned)sysconf(_SC_NPROCESSORS_CONF);
    snap->nr_nodes = count_of_list("/sys/devices/system/node/possible");
    if (snap->nr_nodes == 0)
        snap->nr_nodes = 1;
    snap->page_size = (unsigned)sysconf(_SC_PAGESIZE);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(snap->taken_at, sizeof snap->taken_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int unavailable(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int unavailable(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return SL_SNAP_UNAVAILABLE;
}

#define STILL_WORKS                                                                                                    \
    "(without BPF, `slablab slabinfo` and `slablab capture` still read /proc/slabinfo, /sys/kernel/slab and ftrace)"

#if !SLABLAB_HAVE_LIBBPF

int sl_snapshot_take(sl_snapshot *snap, const sl_snap_options *opt, char *err, size_t errlen)
{
    (void)opt;
    fill_machine(snap);
    return unavailable(err, errlen,
                       "this slablab was built without BPF support: install libbpf-dev, bpftool, pkg-config and clang "
                       "(apt-get install libbpf-dev bpftool pkg-config clang-14), then configure the build again "
                       "(cmake -S wasm-core -B BUILD_DIR, or remove the build directory and run node scripts/setup.mjs "
                       "bench) " STILL_WORKS);
}

#else

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "slab_snapshot.skel.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* libbpf's messages, kept for the error text instead of printed. */
static char libbpf_log[4096];

static int keep_libbpf_message(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    if (level == LIBBPF_DEBUG)
        return 0;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t have = strlen(libbpf_log), add = strlen(line);
    if (add >= sizeof libbpf_log)
        add = sizeof libbpf_log - 1;
    if (have + add >= sizeof libbpf_log) {
        memmove(libbpf_log, libbpf_log + have + add - (sizeof libbpf_log - 1), sizeof libbpf_log - 1 - add);
        have = sizeof libbpf_log - 1 - add;
    }
    memcpy(libbpf_log + have, line, add);
    libbpf_log[have + add] = '\0';
    return 0;
}

/* The last line libbpf printed (the most specific), or "". */
static const char *libbpf_last_line(void)
{
    static char last[512];
    size_t n = strlen(libbpf_log);
    while (n && libbpf_log[n - 1] == '\n')
        n--;
    size_t start = n;
    while (start && libbpf_log[start - 1] != '\n')
        start--;
    snprintf(last, sizeof last, "%.*s", (int)(n - start), libbpf_log + start);
    return last;
}

/* Refusals that can be seen before loading anything. */
static int preflight(const sl_snapshot *snap, char *err, size_t errlen)
{
    unsigned major = 0, minor = 0;
    if (sscanf(snap->release, "%u.%u", &major, &minor) == 2 && (major < 6 || (major == 6 && minor < 13)))
        return unavailable(
            err, errlen,
            "Linux %s has no kmem_cache BPF iterator (it came in 6.13); a snapshot needs 6.13 or later " STILL_WORKS,
            snap->release);
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
        return unavailable(
            err, errlen,
            "the kernel has no BTF (/sys/kernel/btf/vmlinux: %s); it needs CONFIG_DEBUG_INFO_BTF=y " STILL_WORKS,
            strerror(errno));
    FILE *f = fopen("/sys/kernel/security/lockdown", "r");
    if (f) {
        char mode[128] = "";
        if (!fgets(mode, sizeof mode, f))
            mode[0] = '\0';
        fclose(f);
        if (strstr(mode, "[confidentiality]"))
            return unavailable(err, errlen,
                               "kernel lockdown is in confidentiality mode, which refuses bpf_probe_read_kernel; "
                               "a snapshot needs lockdown off or in integrity mode " STILL_WORKS);
    }
    return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
    return sl_snapshot_add_record(ctx, data, size) ? -EINVAL : 0;
}

/*
 * Ring buffer bytes for one cache of at most max_slabs partial slabs per list (a power of two):
 * about 2 KiB a slab.  SLABLAB_SNAPSHOT_RING_KB overrides it (the tests make the ring overflow).
 */
static uint32_t ring_bytes(unsigned max_slabs)
{
    const char *env = getenv("SLABLAB_SNAPSHOT_RING_KB");
    if (env && *env) {
        unsigned long kb = strtoul(env, NULL, 10);
        uint64_t bytes = 4096;
        while (bytes < (uint64_t)kb * 1024 && bytes < (256u << 20))
            bytes <<= 1;
        return (uint32_t)bytes;
    }
    uint64_t want = (uint64_t)max_slabs * 2048 + (4u << 20);
    uint64_t bytes = 4u << 20;
    while (bytes < want && bytes < (256u << 20))
        bytes <<= 1;
    return (uint32_t)bytes;
}

/* Reads an iterator link to its end; with drain, drains the ring after every read. Returns 0 or -errno. */
static int run_iterator(struct bpf_link *link, struct ring_buffer *drain)
{
    int fd = bpf_iter_create(bpf_link__fd(link));
    if (fd < 0)
        return -errno;
    char buf[4096];
    size_t want = drain ? 1 : sizeof buf; /* one byte is one cache: drain after each */
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            break;
        }
        if (drain && ring_buffer__consume(drain) < 0) {
            rc = -EINVAL;
            break;
        }
        if (n == 0)
            break;
    }
    close(fd);
    return rc;
}

static int load_error(int e, char *err, size_t errlen)
{
    if (e == EPERM || e == EACCES)
        return unavailable(err, errlen,
                           "loading the BPF program was refused (%s): run as root, or with CAP_BPF and CAP_PERFMON "
                           "(kernel.unprivileged_bpf_disabled does not matter then) " STILL_WORKS " [libbpf: %s]",
                           strerror(e), libbpf_last_line());
    if (strstr(libbpf_log, "bpf_probe_read_kernel") && strstr(libbpf_log, "unknown func"))
        return unavailable(err, errlen,
                           "the kernel withholds bpf_probe_read_kernel from BPF programs: kernel lockdown in "
                           "confidentiality mode; a snapshot needs lockdown off or in integrity mode " STILL_WORKS);
    if (e == ENOENT || e == EINVAL || e == ESRCH)
        return unavailable(err, errlen,
                           "the kernel refused the snapshot program (%s): it needs the kmem_cache iterator "
                           "(Linux 6.13+), bpf_loop and BTF [libbpf: %s]",
                           strerror(e), libbpf_last_line());
    snprintf(err, errlen, "loading the snapshot program failed: %s [libbpf: %s]", strerror(e), libbpf_last_line());
    return 1;
}

int sl_snapshot_take(sl_snapshot *snap, const sl_snap_options *opt, char *err, size_t errlen)
{
    struct slab_snapshot *skel = NULL;
    struct bpf_link *link = NULL;
    struct ring_buffer *rb = NULL;
    int rc = 1;
    uint64_t t0 = now_ns();

    snap->opt = *opt;
    fill_machine(snap);
    if ((rc = preflight(snap, err, errlen)) != 0)
        return rc;
    if (snap->nr_cpus > SNAP_MAX_CPUS || snap->nr_nodes > SNAP_MAX_NODES)
        return unavailable(err, errlen, "%u CPUs and %u nodes: the program reads at most %u CPUs and %u nodes",
                           snap->nr_cpus, snap->nr_nodes, SNAP_MAX_CPUS, SNAP_MAX_NODES);

    libbpf_log[0] = '\0';
    libbpf_set_print(keep_libbpf_message);
    /* SLABLAB_SNAPSHOT_BTF: relocate against another BTF (the tests' other-era layouts). */
    const char *btf = getenv("SLABLAB_SNAPSHOT_BTF");
    LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = btf && *btf ? btf : NULL);
    skel = slab_snapshot__open_opts(&open_opts);
    if (!skel) {
        rc = load_error(errno, err, errlen);
        goto out;
    }
    skel->rodata->nr_cpus = snap->nr_cpus;
    skel->rodata->nr_nodes = snap->nr_nodes;
    skel->rodata->max_slabs = opt->max_slabs;
    skel->rodata->page_size = snap->page_size;
    skel->rodata->filter_names = opt->names != NULL;
    bpf_map__set_max_entries(skel->maps.out, ring_bytes(opt->max_slabs));
    if (slab_snapshot__load(skel)) {
        rc = load_error(errno, err, errlen);
        goto out;
    }
    for (size_t i = 0; opt->names && i < opt->nnames; i++) {
        char key[SNAP_NAME_LEN] = {0};
        uint8_t one = 1;
        snprintf(key, sizeof key, "%s", opt->names[i]);
        if (bpf_map__update_elem(skel->maps.wanted, key, sizeof key, &one, sizeof one, BPF_ANY)) {
            snprintf(err, errlen, "setting up the cache filter failed: %s", strerror(errno));
            goto out;
        }
    }
    uint64_t t1 = now_ns();
    snap->load_ns = t1 - t0;

    /* Per-CPU offsets: this program's per-CPU array element, on every CPU. */
    struct bpf_map_info info;
    uint32_t info_len = sizeof info;
    memset(&info, 0, sizeof info);
    if (bpf_obj_get_info_by_fd(bpf_map__fd(skel->maps.pcpu_probe), &info, &info_len)) {
        snprintf(err, errlen, "reading the per-CPU map's id failed: %s", strerror(errno));
        goto out;
    }
    skel->bss->pcpu_map_id = info.id;
    link = bpf_program__attach_iter(skel->progs.find_percpu_offsets, NULL);
    if (!link) {
        rc = load_error(errno, err, errlen);
        goto out;
    }
    int e = run_iterator(link, NULL);
    bpf_link__destroy(link);
    link = NULL;
    if (e || skel->bss->pcpu_found < snap->nr_cpus) {
        snprintf(err, errlen, "finding the per-CPU offsets failed (%s; %u of %u CPUs found)",
                 e ? strerror(-e) : "no error", skel->bss->pcpu_found, snap->nr_cpus);
        goto out;
    }
    for (unsigned cpu = 0; cpu < snap->nr_cpus; cpu++)
        skel->bss->cpu_off[cpu] = skel->bss->pcpu_elem[cpu] - skel->bss->pcpu_base;
    uint64_t t2 = now_ns();
    snap->percpu_ns = t2 - t1;

    rb = ring_buffer__new(bpf_map__fd(skel->maps.out), on_record, snap, NULL);
    if (!rb) {
        snprintf(err, errlen, "creating the ring buffer reader failed: %s", strerror(errno));
        goto out;
    }
    link = bpf_program__attach_iter(skel->progs.snapshot_caches, NULL);
    if (!link) {
        rc =
            unavailable(err, errlen, "attaching the kmem_cache iterator failed (%s): it needs Linux 6.13+ [libbpf: %s]",
                        strerror(errno), libbpf_last_line());
        goto out;
    }
    e = run_iterator(link, rb);
    if (e) {
        snprintf(err, errlen, "reading the caches failed: %s%s", strerror(-e),
                 e == -EINVAL ? " (a malformed record from the program)" : "");
        goto out;
    }
    snap->iterate_ns = now_ns() - t2;
    struct bpf_prog_info prog;
    uint32_t prog_len = sizeof prog;
    memset(&prog, 0, sizeof prog);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.snapshot_caches), &prog, &prog_len) == 0) {
        snap->prog_run_ns = prog.run_time_ns;
        snap->prog_runs = prog.run_cnt;
    }
    rc = 0;
out:
    bpf_link__destroy(link);
    ring_buffer__free(rb);
    slab_snapshot__destroy(skel);
    libbpf_set_print(NULL);
    snap->duration_ns = now_ns() - t0;
    return rc;
}

#endif
