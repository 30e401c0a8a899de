/*
 * cmd_bench_compare.c - `slablab compare`: the SLUB model's per-CPU cache
 * against glibc malloc, jemalloc, mimalloc and tcmalloc on the same loops,
 * interleaved in one process (bench_allocators.c explains how four mallocs
 * share it), each figure also given as a ratio to the row's best.
 *
 * Workloads, as mimalloc-bench's micro tests and the seeds' loops do them:
 *   pair      alloc+free of one object of a fixed size, 16..4096 bytes
 *             (seed 000's "fastpath reuse");
 *   burst     N allocs then N frees of 256 bytes, N = the bulk sizes
 *             (per object);
 *   prodcons  this thread allocates 256-byte objects and passes them
 *             through a single-producer single-consumer ring to a thread
 *             on another CPU, which frees them (the remote-free path).
 */
#include "bench.h"
#include "bench_allocators.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BURST 250
#define RING 1024 /* slots of the producer/consumer ring, a power of two */
/* Enough objects that starting the consumer thread is not what is timed. */
#define PRODCONS_MIN_LOOPS(o) ((o)->quick ? 2000u : 50000u)

typedef struct work {
    const sl_bench_allocator *a;
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

/* Producer/consumer: head and tail on their own cache lines. */
typedef struct ring {
    _Alignas(SL_CACHELINE) _Atomic uint64_t head; /* written by the producer */
    _Alignas(SL_CACHELINE) _Atomic uint64_t tail; /* written by the consumer */
    _Alignas(SL_CACHELINE) _Atomic(void *) slot[RING];
    uint64_t total;
    const work *w;
    _Atomic int ready;
} ring;

static void *consumer(void *arg)
{
    ring *q = arg;
    sl_thread_pin((unsigned)q->w->consumer_cpu);
    void (*release)(void *) = q->w->a->free;
    atomic_store_explicit(&q->ready, 1, memory_order_release);
    uint64_t t = 0;
    while (t < q->total) {
        uint64_t h = atomic_load_explicit(&q->head, memory_order_acquire);
        if (h == t) {
            sl_cpu_relax();
            continue;
        }
        for (; t < h; t++)
            release(atomic_load_explicit(&q->slot[t & (RING - 1)], memory_order_relaxed));
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
    void *(*alloc)(size_t) = w->a->alloc;
    uint64_t tail = 0;
    sl_bench_start(rec);
    for (uint64_t h = 0; h < loops; h++) {
        while (h - tail >= RING) {
            sl_cpu_relax();
            tail = atomic_load_explicit(&q->tail, memory_order_acquire);
        }
        void *p = alloc(w->size);
        if (SL_UNLIKELY(!p)) {
            p = NULL; /* the consumer frees NULL harmlessly and the run ends */
            rc = SL_ENOMEM;
        }
        atomic_store_explicit(&q->slot[h & (RING - 1)], p, memory_order_relaxed);
        atomic_store_explicit(&q->head, h + 1, memory_order_release);
    }
    while (atomic_load_explicit(&q->tail, memory_order_acquire) < loops)
        sl_cpu_relax();
    sl_bench_stop(rec, loops);
    sl_thread_join(th);
    free(q);
    return rc;
}

static const unsigned pair_sizes[] = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

int sl_bench_compare_run(sl_bench_report *r, const sl_bench_opts *o, unsigned max_size,
                         bool want_burst, bool want_prodcons)
{
    static sl_bench_allocator al[SL_BENCH_NALLOCATORS];
    sl_bench_allocators_load(al);
    sl_bench_exp *e = sl_bench_exp_new(r, "compare", "the SLUB model's per-CPU cache against general-purpose mallocs",
                                       NULL, "operation (an alloc+free pair; per object for burst and prodcons)",
                                       "best");
    for (unsigned k = 0; k < SL_BENCH_NALLOCATORS; k++)
        sl_bench_param_str(e, al[k].name, al[k].available ? al[k].reason : "unavailable");
    sl_bench_param_num(e, "burst_object_size", 256);

    work w[SL_BENCH_NALLOCATORS];
    sl_bench_variant v[SL_BENCH_NALLOCATORS];
    for (unsigned k = 0; k < SL_BENCH_NALLOCATORS; k++) {
        w[k] = (work){.a = &al[k], .size = 256, .burst = 1};
        v[k] = (sl_bench_variant){.name = al[k].name, .arg = &w[k], .available = al[k].available, .reason = al[k].reason};
    }
    int failures = 0;
    char row[32];
    for (unsigned s = 0; s < sizeof pair_sizes / sizeof pair_sizes[0] && pair_sizes[s] <= max_size; s++) {
        for (unsigned k = 0; k < SL_BENCH_NALLOCATORS; k++) {
            w[k].size = pair_sizes[s];
            v[k].fn = time_pair;
        }
        snprintf(row, sizeof row, "%u", pair_sizes[s]);
        failures += sl_bench_row(e, o, "pair", row, v, SL_BENCH_NALLOCATORS, NULL, NULL, SL_BENCH_BASE_BEST) != SL_OK;
    }
    for (unsigned b = 0; want_burst && b < 14; b++) {
        if (o->quick && b % 6)
            continue; /* quick: 1, 30, 158 */
        for (unsigned k = 0; k < SL_BENCH_NALLOCATORS; k++) {
            w[k].size = 256;
            w[k].burst = sl_bench_bulk_sizes[b];
            v[k].fn = time_burst;
        }
        snprintf(row, sizeof row, "%u", sl_bench_bulk_sizes[b]);
        failures += sl_bench_row(e, o, "burst", row, v, SL_BENCH_NALLOCATORS, NULL, NULL, SL_BENCH_BASE_BEST) != SL_OK;
    }
    if (want_prodcons) {
        unsigned cpus = sl_host_cpus();
        for (unsigned k = 0; k < SL_BENCH_NALLOCATORS; k++) {
            w[k].size = 256;
            w[k].consumer_cpu = (int)(((unsigned)(o->cpu < 0 ? 0 : o->cpu) + 1) % cpus);
            v[k].fn = time_prodcons;
            v[k].min_loops = PRODCONS_MIN_LOOPS(o);
            if (cpus < 2) {
                v[k].available = false;
                v[k].reason = "needs two CPUs";
            }
        }
        failures += sl_bench_row(e, o, "prodcons", "256", v, SL_BENCH_NALLOCATORS, NULL, NULL, SL_BENCH_BASE_BEST) != SL_OK;
    }
    return failures ? 1 : 0;
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
