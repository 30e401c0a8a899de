/*
 * cmd_bench_compare.c - `slablab compare`: the SLUB model's per-CPU cache
 * (kernel fast path, and seed 001's plain one) against glibc malloc,
 * jemalloc, mimalloc and tcmalloc on the same loops,
 * interleaved in one process (bench_allocators.c explains how four mallocs
 * share it), each figure also given as a ratio to the row's best.
 *
 * Workloads, as mimalloc-bench's micro tests and the seeds' loops do them:
 *   pair      alloc+free of one object of a fixed size, 16..4096 bytes
 *             (seed 000's "fastpath reuse");
 *   burst     N allocs then N frees of 256 bytes, N = the bulk sizes
 *             (per object);
 *   prodcons  this thread allocates 256-byte objects and passes them
 *             through a single-producer single-consumer ring (published in
 *             batches of 32) to a thread on another CPU, which frees them
 *             (the remote-free path).
 */
#include "bench.h"
#include "bench_allocators.h"
#include "bench_slub.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BURST 250
#define RING 1024 /* slots of the producer/consumer ring, a power of two */
/* The producer publishes its head every PUBLISH objects (a power of two
 * dividing RING), so the ring's own cache-line traffic is a small part of
 * what is timed: the objects' trip between CPUs and the remote free are
 * the rest. */
#define PUBLISH 32
/* Enough objects that starting the consumer thread is not what is timed. */
#define PRODCONS_MIN_LOOPS(o) ((o)->quick ? 2000u : 50000u)

typedef struct work {
    const sl_bench_allocator *a; /* a malloc, or NULL for the SLUB model */
    sl_slub_cache *slub;         /* SLUB: the cache of this size (CPU 0 allocates, CPU 1 frees remotely) */
    size_t size;
    unsigned burst;
    int consumer_cpu;
} work;

/* Keeps p alive as far as the compiler knows. */
SL_INLINE void use(void *p) { __asm__ __volatile__("" : : "r"(p) : "memory"); }

static int time_pair(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const work *w = arg;
    void *(*alloc)(size_t) = w->a->alloc;
    void (*release)(void *) = w->a->free;
    size_t size = w->size;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++) {
        void *p = alloc(size);
        if (SL_UNLIKELY(!p))
            return SL_ENOMEM;
        use(p);
        release(p);
    }
    sl_bench_stop(rec, loops);
    return SL_OK;
}

static int time_burst(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const work *w = arg;
    void *(*alloc)(size_t) = w->a->alloc;
    void (*release)(void *) = w->a->free;
    void *p[MAX_BURST];
    unsigned n = w->burst;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++) {
        for (unsigned k = 0; k < n; k++)
            if (SL_UNLIKELY(!(p[k] = alloc(w->size))))
                return SL_ENOMEM;
        use(p);
        for (unsigned k = 0; k < n; k++)
            release(p[k]);
    }
    sl_bench_stop(rec, loops * n);
    return SL_OK;
}

static int time_slub_pair(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const work *w = arg;
    sl_slub_cache *s = w->slub;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++) {
        void *p;
        if (SL_UNLIKELY(sl_slub_alloc(s, 0, &p) != SL_OK))
            return SL_ENOMEM;
        use(p);
        if (SL_UNLIKELY(sl_slub_free(s, 0, p) != SL_OK))
            return SL_ECORRUPT;
    }
    sl_bench_stop(rec, loops);
    return SL_OK;
}

static int time_slub_burst(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const work *w = arg;
    sl_slub_cache *s = w->slub;
    void *p[MAX_BURST];
    unsigned n = w->burst;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++) {
        for (unsigned k = 0; k < n; k++)
            if (SL_UNLIKELY(sl_slub_alloc(s, 0, &p[k]) != SL_OK))
                return SL_ENOMEM;
        use(p);
        for (unsigned k = 0; k < n; k++)
            if (SL_UNLIKELY(sl_slub_free(s, 0, p[k]) != SL_OK))
                return SL_ECORRUPT;
    }
    sl_bench_stop(rec, loops * n);
    return SL_OK;
}

/* The producer's alloc and the consumer's free, for a malloc or the SLUB model. */
static void *pc_alloc(const work *w)
{
    void *p = NULL;
    if (w->a)
        return w->a->alloc(w->size);
    return sl_slub_alloc(w->slub, 0, &p) == SL_OK ? p : NULL;
}

static int pc_free(const work *w, void *p)
{
    if (w->a) {
        w->a->free(p);
        return SL_OK;
    }
    return p ? sl_slub_free(w->slub, 1, p) : SL_OK;
}

/* Producer/consumer: head and tail on their own cache lines. */
typedef struct ring {
    _Alignas(SL_CACHELINE) _Atomic uint64_t head; /* written by the producer */
    _Alignas(SL_CACHELINE) _Atomic uint64_t tail; /* written by the consumer */
    _Alignas(SL_CACHELINE) _Atomic(void *) slot[RING];
    uint64_t total;
    const work *w;
    _Atomic int ready;
    _Atomic int error;
} ring;

static void *consumer(void *arg)
{
    ring *q = arg;
    sl_thread_pin((unsigned)q->w->consumer_cpu);
    atomic_store_explicit(&q->ready, 1, memory_order_release);
    uint64_t t = 0;
    while (t < q->total) {
        uint64_t h = atomic_load_explicit(&q->head, memory_order_acquire);
        if (h == t) {
            sl_cpu_relax();
            continue;
        }
        for (; t < h; t++)
            if (pc_free(q->w, atomic_load_explicit(&q->slot[t & (RING - 1)], memory_order_relaxed)) != SL_OK)
                atomic_store(&q->error, SL_ECORRUPT);
        atomic_store_explicit(&q->tail, t, memory_order_release);
    }
    return NULL;
}

static int time_prodcons(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const work *w = arg;
    ring *q = aligned_alloc(SL_CACHELINE, sizeof *q);
    if (!q)
        return SL_ENOMEM;
    memset(q, 0, sizeof *q);
    q->total = loops;
    q->w = w;
    sl_thread th;
    int rc = sl_thread_start(&th, consumer, q);
    if (rc != SL_OK) {
        free(q);
        return rc;
    }
    while (!atomic_load_explicit(&q->ready, memory_order_acquire))
        sl_cpu_relax();
    uint64_t tail = 0;
    sl_bench_start(rec);
    for (uint64_t h = 0; h < loops; h++) {
        while (h - tail >= RING) {
            sl_cpu_relax();
            tail = atomic_load_explicit(&q->tail, memory_order_acquire);
        }
        void *p = pc_alloc(w);
        if (SL_UNLIKELY(!p)) {
            p = NULL; /* the consumer frees NULL harmlessly and the run ends */
            rc = SL_ENOMEM;
        }
        atomic_store_explicit(&q->slot[h & (RING - 1)], p, memory_order_relaxed);
        if (((h + 1) & (PUBLISH - 1)) == 0 || h + 1 == loops)
            atomic_store_explicit(&q->head, h + 1, memory_order_release);
    }
    while (atomic_load_explicit(&q->tail, memory_order_acquire) < loops)
        sl_cpu_relax();
    sl_bench_stop(rec, loops);
    sl_thread_join(th);
    if (rc == SL_OK)
        rc = atomic_load(&q->error);
    free(q);
    return rc;
}

static const unsigned pair_sizes[] = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

/* The model's variants: the kernel's fast path, and seed 001's plain one. */
#define NSLUB 2
static const sl_slub_fastpath slub_fp[NSLUB] = {SL_SLUB_FP_CMPXCHG, SL_SLUB_FP_PLAIN};
static const char *const slub_name[NSLUB] = {"slub", "slub-plain"};
#define NV (SL_BENCH_NALLOCATORS + NSLUB)

/* Opens the SLUB caches of one row (those kernel has); returns 0 or an error (then none is open). */
static int open_slub(sl_bench_slub *c, work *w, uint32_t size, sl_slub_kversion kernel)
{
    for (unsigned k = 0; k < NSLUB; k++) {
        c[k] = (sl_bench_slub){0};
        if (!sl_bench_slub_has_fastpath(kernel, slub_fp[k]))
            continue;
        int rc = sl_bench_slub_open(&c[k], 2, size, 0, kernel, 0, slub_fp[k], SL_SLUB_BULK_DETACHED, 32);
        if (rc != SL_OK) {
            while (k)
                if (c[--k].cache)
                    sl_bench_slub_close(&c[k]);
            return rc;
        }
        w[SL_BENCH_NALLOCATORS + k].slub = c[k].cache;
    }
    return SL_OK;
}

static void close_slub(sl_bench_slub *c)
{
    for (unsigned k = 0; k < NSLUB; k++)
        if (c[k].cache)
            sl_bench_slub_close(&c[k]);
}

/* Runs one row with the mallocs' loop `fn` and the model's `slub_fn`. */
static int row(sl_bench_exp *e, const sl_bench_opts *o, const char *group, const char *key, work *w,
               sl_bench_variant *v, sl_bench_fn fn, sl_bench_fn slub_fn, uint32_t size)
{
    sl_bench_slub c[NSLUB];
    int rc = open_slub(c, w, size, o->kernel);
    if (rc != SL_OK)
        return rc;
    for (unsigned k = 0; k < NV; k++) {
        w[k].size = size;
        v[k].fn = k < SL_BENCH_NALLOCATORS ? fn : slub_fn;
    }
    rc = sl_bench_row(e, o, group, key, v, NV, NULL, NULL, SL_BENCH_BASE_BEST);
    close_slub(c);
    return rc;
}

int sl_bench_compare_run(sl_bench_report *r, const sl_bench_opts *o, unsigned max_size, bool want_burst,
                         bool want_prodcons)
{
    static sl_bench_allocator al[SL_BENCH_NALLOCATORS];
    sl_bench_allocators_load(al);
    sl_bench_exp *e =
        sl_bench_exp_new(r, "compare", "the SLUB model's per-CPU cache against general-purpose mallocs", NULL,
                         "operation (an alloc+free pair; per object for burst and prodcons)", "best");
    for (unsigned k = 0; k < SL_BENCH_NALLOCATORS; k++)
        sl_bench_param_str(e, al[k].name, al[k].available ? al[k].reason : "unavailable");
    sl_bench_param_num(e, "burst_object_size", 256);
    sl_bench_param_kernel(e, o);
    sl_bench_note(e, "slub: one SLUB model cache per size (word-aligned, as kmalloc's), kernel fast path "
                     "(this_cpu_cmpxchg_double); slub-plain: seed 001's fast path without the cmpxchg");
    sl_bench_note(e, "prodcons: objects allocated on one CPU and freed on another (for slub: CPU 0 allocates, "
                     "CPU 1 frees remotely through __slab_free)");

    unsigned cpus = sl_host_cpus();
    int consumer = (int)(((unsigned)(o->cpu < 0 ? 0 : o->cpu) + 1) % cpus);
    work w[NV];
    sl_bench_variant v[NV];
    for (unsigned k = 0; k < NV; k++) {
        bool lib = k < SL_BENCH_NALLOCATORS;
        w[k] = (work){.a = lib ? &al[k] : NULL, .size = 256, .burst = 1, .consumer_cpu = consumer};
        bool has = lib || sl_bench_slub_has_fastpath(o->kernel, slub_fp[k - SL_BENCH_NALLOCATORS]);
        v[k] = (sl_bench_variant){.name = lib ? al[k].name : slub_name[k - SL_BENCH_NALLOCATORS],
                                  .arg = &w[k],
                                  .available = lib ? al[k].available : has,
                                  .reason = lib   ? al[k].reason
                                            : has ? NULL
                                                  : "7.0 has no per-CPU slab fast path"};
    }
    int rc = SL_OK;
    char key[32];
    for (unsigned s = 0; rc == SL_OK && s < sizeof pair_sizes / sizeof pair_sizes[0] && pair_sizes[s] <= max_size;
         s++) {
        snprintf(key, sizeof key, "%u", pair_sizes[s]);
        rc = row(e, o, "pair", key, w, v, time_pair, time_slub_pair, pair_sizes[s]);
    }
    for (unsigned b = 0; rc == SL_OK && want_burst && b < 14; b++) {
        if (o->quick && b % 6)
            continue; /* quick: 1, 30, 158 */
        for (unsigned k = 0; k < NV; k++)
            w[k].burst = sl_bench_bulk_sizes[b];
        snprintf(key, sizeof key, "%u", sl_bench_bulk_sizes[b]);
        rc = row(e, o, "burst", key, w, v, time_burst, time_slub_burst, 256);
    }
    if (rc == SL_OK && want_prodcons) {
        for (unsigned k = 0; k < NV; k++) {
            v[k].min_loops = PRODCONS_MIN_LOOPS(o);
            if (cpus < 2) {
                v[k].available = false;
                v[k].reason = "needs two CPUs";
            }
        }
        rc = row(e, o, "prodcons", "256", w, v, time_prodcons, time_prodcons, 256);
    }
    if (rc != SL_OK) {
        fprintf(stderr, "slablab compare: %s\n", sl_strerror(rc));
        return 1;
    }
    return 0;
}

typedef struct compare_args {
    unsigned long max_size;
    bool burst, prodcons;
} compare_args;

static int own_opt(const sl_cli_command *cmd, int argc, char **argv, int *i, void *ctx)
{
    compare_args *c = ctx;
    const char *a = argv[*i];
    if (!strcmp(a, "--max-size")) {
        if (*i + 1 >= argc || !sl_cli_parse_ulong(argv[++*i], 16, 4096, &c->max_size))
            return sl_cli_usage_error(cmd, "--max-size takes 16 to 4096");
    } else if (!strcmp(a, "--workload")) {
        const char *s = *i + 1 < argc ? argv[++*i] : "";
        if (!strcmp(s, "pair")) {
            c->burst = c->prodcons = false;
        } else if (!strcmp(s, "burst")) {
            c->burst = true;
            c->prodcons = false;
            c->max_size = 0;
        } else if (!strcmp(s, "prodcons")) {
            c->burst = false;
            c->prodcons = true;
            c->max_size = 0;
        } else if (strcmp(s, "all")) {
            return sl_cli_usage_error(cmd, "--workload takes pair, burst, prodcons or all");
        }
    } else {
        return 0;
    }
    return 1;
}

static int run(sl_bench_report *r, const sl_bench_opts *o, void *ctx)
{
    compare_args *c = ctx;
    unsigned long max = c->max_size == 4096 && o->quick ? 64 : c->max_size;
    return sl_bench_compare_run(r, o, (unsigned)max, c->burst, c->prodcons);
}

static int run_compare(int argc, char **argv);
SL_CLI_COMMAND(compare, .name = "compare",
               .summary = "the SLUB model's per-CPU cache vs glibc, jemalloc, mimalloc, tcmalloc",
               .usage = "slablab compare [--workload pair|burst|prodcons|all] [--max-size BYTES] " SL_BENCH_OPTS_USAGE,
               .run = run_compare)

static int run_compare(int argc, char **argv)
{
    compare_args c = {4096, true, true};
    sl_bench_allocators_prepare();
    return sl_bench_command(&sl_cli_cmd_compare, argc, argv, own_opt, run, &c, NULL);
}
