/*
 * live_source.c - the calls every event source answers (they go to its
 * ops), and the kernel's source: loads, attaches and reads the live event
 * program (live_source.h).  Without libbpf at build time the kernel's open
 * is refused with what to install (a recording, live_source_capture.c,
 * needs no libbpf).
 */
#include "live_source.h"

#include "snapshot.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sl_live_source_poll(sl_live_source *src, int timeout_ms) { return src->ops->poll(src, timeout_ms); }

uint64_t sl_live_source_lost(sl_live_source *src) { return src->ops->lost(src); }

void sl_live_source_close(sl_live_source *src)
{
    if (src)
        src->ops->close(src);
}

#if !SLABLAB_HAVE_LIBBPF

int sl_live_source_open(sl_live_source **out, const char *const *filter, size_t nfilter, unsigned ring_mb,
                        sl_live_record_fn fn, void *ctx, char *err, size_t errlen)
{
    (void)filter, (void)nfilter, (void)ring_mb, (void)fn, (void)ctx;
    *out = NULL;
    snprintf(err, errlen,
             "this slablab was built without BPF support: install libbpf-dev, bpftool and clang "
             "(apt-get install libbpf-dev bpftool clang-14), then rebuild");
    return SL_SNAP_UNAVAILABLE;
}

/* Without libbpf no kernel source opens: a recording leaves nothing out. */
void sl_live_source_own(sl_live_source *src, sl_live_own *out)
{
    (void)src;
    memset(out, 0, sizeof *out);
}

#else

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "live_own.h"
#include "slab_events.skel.h"

typedef struct bpf_source {
    sl_live_source base;
    struct slab_events *skel;
    struct ring_buffer *rb;
    unsigned nr_cpus;
    bool own_by_context; /* the program reads the preempt count (live_own.h) */
    char own_note[200];
} bpf_source;

static int bpf_poll(sl_live_source *base, int timeout_ms);
static uint64_t bpf_lost(sl_live_source *base);
static void bpf_close(sl_live_source *base);
static const sl_live_source_ops bpf_ops = {bpf_poll, bpf_lost, bpf_close};

static char last_message[512];

static int keep_message(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    if (level != LIBBPF_DEBUG)
        vsnprintf(last_message, sizeof last_message, fmt, ap);
    return 0;
}

int sl_live_source_open(sl_live_source **out, const char *const *filter, size_t nfilter, unsigned ring_mb,
                        sl_live_record_fn fn, void *ctx, char *err, size_t errlen)
{
    *out = NULL;
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
        snprintf(err, errlen,
                 "this kernel has no BTF (/sys/kernel/btf/vmlinux): the live stream needs "
                 "CONFIG_DEBUG_INFO_BTF (tp_btf programs)");
        return SL_SNAP_UNAVAILABLE;
    }
    if (nfilter > LIVE_MAX_FILTER) {
        snprintf(err, errlen, "at most %d caches can be filtered on (got %zu)", LIVE_MAX_FILTER, nfilter);
        return 1;
    }
    bpf_source *src = calloc(1, sizeof *src);
    if (!src) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    src->base.ops = &bpf_ops;
    last_message[0] = '\0';
    libbpf_set_print(keep_message);
    int rc = 1;
    src->skel = slab_events__open();
    if (!src->skel) {
        snprintf(err, errlen, "could not open the event program: %s", strerror(errno));
        goto fail;
    }
    src->nr_cpus = (unsigned)libbpf_num_possible_cpus();
    sl_live_own_places places;
    bool placed = sl_live_own_find(&places, src->own_note, sizeof src->own_note);
    src->skel->rodata->self_tgid = (uint32_t)getpid();
    src->skel->rodata->nr_cpus = src->nr_cpus;
    if (placed) {
        src->skel->rodata->sec_this_cpu_off = places.this_cpu_off;
        src->skel->rodata->sec_cpu_number = places.cpu_number;
        src->skel->rodata->sec_runqueues = places.runqueues;
    }
    /* The iterator is run once by sl_live_own_check, not attached with the tracepoints. */
    bpf_program__set_autoattach(src->skel->progs.find_percpu_offsets, false);
    src->skel->rodata->nfilter = (uint32_t)nfilter;
    for (size_t i = 0; i < nfilter; i++)
        snprintf((char *)src->skel->rodata->filter[i], LIVE_NAME_LEN, "%s", filter[i]);
    bpf_map__set_max_entries(src->skel->maps.events, ring_mb << 20);
    int e = slab_events__load(src->skel);
    if (e) {
        e = -e;
        rc = (e == EPERM || e == EACCES) ? SL_SNAP_UNAVAILABLE : 1;
        snprintf(err, errlen, "could not load the event program (%s)%s%s%s", strerror(e),
                 e == EPERM || e == EACCES ? ": run as root (CAP_BPF and CAP_PERFMON)" : "",
                 last_message[0] ? ": " : "", last_message);
        goto fail;
    }
    if (placed)
        src->own_by_context = sl_live_own_check(src->skel, src->nr_cpus, &places, src->own_note, sizeof src->own_note);
    e = slab_events__attach(src->skel);
    if (e) {
        snprintf(err, errlen, "could not attach to the kmem/percpu tracepoints (%s)%s%s", strerror(-e),
                 last_message[0] ? ": " : "", last_message);
        rc = SL_SNAP_UNAVAILABLE;
        goto fail;
    }
    src->rb = ring_buffer__new(bpf_map__fd(src->skel->maps.events), fn, ctx, NULL);
    if (!src->rb) {
        snprintf(err, errlen, "could not map the event ring: %s", strerror(errno));
        goto fail;
    }
    libbpf_set_print(NULL);
    *out = &src->base;
    return 0;
fail:
    libbpf_set_print(NULL);
    bpf_close(&src->base);
    return rc;
}

static int bpf_poll(sl_live_source *base, int timeout_ms)
{
    bpf_source *src = (bpf_source *)base;
    int n = ring_buffer__poll(src->rb, timeout_ms);
    if (n == -EINTR)
        return 0;
    return n < 0 ? -1 : n;
}

/* Returns the sum over CPUs of a one-element per-CPU counter map, 0 when it cannot be read. */
static uint64_t per_cpu_sum(const bpf_source *src, const struct bpf_map *map)
{
    uint64_t per_cpu[1024];
    uint32_t zero = 0;
    if (src->nr_cpus == 0 || src->nr_cpus > 1024) /* more than the buffer holds: the lookup would overrun it */
        return 0;
    if (bpf_map_lookup_elem(bpf_map__fd(map), &zero, per_cpu))
        return 0;
    uint64_t sum = 0;
    for (unsigned i = 0; i < src->nr_cpus; i++)
        sum += per_cpu[i];
    return sum;
}

static uint64_t bpf_lost(sl_live_source *base)
{
    bpf_source *src = (bpf_source *)base;
    return per_cpu_sum(src, src->skel->maps.lost);
}

void sl_live_source_own(sl_live_source *base, sl_live_own *out)
{
    memset(out, 0, sizeof *out);
    if (base->ops != &bpf_ops) /* a recording leaves nothing out */
        return;
    bpf_source *src = (bpf_source *)base;
    out->events = per_cpu_sum(src, src->skel->maps.own);
    out->by_context = src->own_by_context;
    snprintf(out->note, sizeof out->note, "%s", src->own_note);
}

static void bpf_close(sl_live_source *base)
{
    bpf_source *src = (bpf_source *)base;
    ring_buffer__free(src->rb);
    slab_events__destroy(src->skel);
    free(src);
}

#endif
