/*
 * cmd_bench_scale.c - `slablab scale`: the SLUB model with 1..N threads,
 * each acting as one CPU (pinned to host CPU t mod the host's CPUs), doing
 * alloc/free pairs of 256-byte objects on its own CPU, or the same with a
 * share of the objects freed by another CPU (remote frees, __slab_free).
 * Per thread count: throughput of the whole machine, the fast-path share
 * (1 - the model's slow-path counters over the allocs and frees the threads
 * ran: benchmark builds compile the fast-path counters out, as a kernel
 * without CONFIG_SLUB_STATS does), double-word cmpxchg retries from the
 * model's counters, and the cost per operation as one thread sees it (wall
 * time of the run / its ops).
 *
 * Remote frees travel through single-producer single-consumer rings: ring t
 * is written only by thread t-1 and read only by thread t, so each ring
 * needs just a head and a tail.  A thread whose ring is full frees the
 * object itself (no thread ever waits on another while it has work), and
 * after its loop drains its ring until every thread is done.
 *
 * --nodes N puts the cache on N NUMA nodes, the threads split among them in
 * blocks (docs/slub.md, "NUMA nodes"): a remote free may then be a free
 * into another node's slab (__slab_free; from 6.18 never onto the sheaves).
 */
#include "bench.h"
#include "bench_slub.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define RING 256 /* a power of two */
#define DRAIN_EVERY 16

typedef struct ring {
    _Alignas(SL_CACHELINE) _Atomic uint64_t head;
    _Alignas(SL_CACHELINE) _Atomic uint64_t tail;
    _Alignas(SL_CACHELINE) void *slot[RING];
} ring;

typedef struct scale_run {
    sl_slub_cache *s;
    unsigned nthreads;
    unsigned remote_every; /* every k-th object goes to the next CPU; 0: none */
    uint64_t loops;
    ring *rings;
    _Atomic unsigned ready, done;
    _Atomic int go;
    _Atomic int error;
} scale_run;

typedef struct scale_thread {
    scale_run *run;
    unsigned cpu;
} scale_thread;

/* Frees whatever ring `q` holds, as CPU `cpu`. */
static void drain(scale_run *r, ring *q, unsigned cpu)
{
    uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&q->head, memory_order_acquire);
    for (; t < h; t++) {
        int rc = sl_slub_free(r->s, cpu, q->slot[t & (RING - 1)]);
        if (rc != SL_OK)
            atomic_store(&r->error, rc);
    }
    atomic_store_explicit(&q->tail, t, memory_order_release);
}

static void *worker(void *arg)
{
    scale_thread *th = arg;
    scale_run *r = th->run;
    unsigned cpu = th->cpu, n = r->nthreads;
    sl_thread_pin(cpu % sl_host_cpus());
    ring *mine = &r->rings[cpu], *next = &r->rings[(cpu + 1) % n];
    atomic_fetch_add(&r->ready, 1);
    while (!atomic_load_explicit(&r->go, memory_order_acquire))
        sl_cpu_relax();
    for (uint64_t i = 0; i < r->loops; i++) {
        void *p;
        int rc = sl_slub_alloc(r->s, cpu, &p);
        if (SL_UNLIKELY(rc != SL_OK)) {
            atomic_store(&r->error, rc);
            break;
        }
        uint64_t h = atomic_load_explicit(&next->head, memory_order_relaxed);
        if (r->remote_every && n > 1 && i % r->remote_every == 0 &&
            h - atomic_load_explicit(&next->tail, memory_order_acquire) < RING) {
            next->slot[h & (RING - 1)] = p;
            atomic_store_explicit(&next->head, h + 1, memory_order_release);
        } else if ((rc = sl_slub_free(r->s, cpu, p)) != SL_OK) {
            atomic_store(&r->error, rc);
        }
        if (i % DRAIN_EVERY == 0)
            drain(r, mine, cpu);
    }
    atomic_fetch_add(&r->done, 1);
    while (atomic_load(&r->done) < n) {
        drain(r, mine, cpu);
        sched_yield(); /* the others may share this CPU */
    }
    drain(r, mine, cpu);
    return NULL;
}

typedef struct scale_arg {
    sl_slub_cache *s;
    unsigned nthreads, remote_every;
} scale_arg;

static uint64_t stat_sum(sl_slub_cache *s, unsigned a, unsigned b)
{
    return sl_slub_stat_get(s, -1, a) + (b == a ? 0 : sl_slub_stat_get(s, -1, b));
}

static int time_scale(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const scale_arg *a = arg;
    scale_run *r = calloc(1, sizeof *r);
    ring *rings = aligned_alloc(SL_CACHELINE, sizeof *rings * a->nthreads);
    scale_thread th[SL_SLUB_MAX_CPUS];
    sl_thread tid[SL_SLUB_MAX_CPUS];
    if (!r || !rings) {
        free(r);
        free(rings);
        return SL_ENOMEM;
    }
    memset(rings, 0, sizeof *rings * a->nthreads);
    r->s = a->s;
    r->nthreads = a->nthreads;
    r->remote_every = a->remote_every;
    r->loops = loops;
    r->rings = rings;
    uint64_t slow0 = stat_sum(a->s, SL_SLUB_ALLOC_SLOWPATH, SL_SLUB_FREE_SLOWPATH);
    uint64_t fail0 = stat_sum(a->s, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL, SL_SLUB_CMPXCHG_DOUBLE_FAIL);
    unsigned started = 0;
    int rc = SL_OK;
    for (; started < a->nthreads; started++) {
        th[started] = (scale_thread){r, started};
        if ((rc = sl_thread_start(&tid[started], worker, &th[started])) != SL_OK)
            break;
    }
    if (rc != SL_OK) {
        /* let the started ones run an empty loop and stop */
        r->loops = 0;
        r->nthreads = started;
    }
    while (atomic_load(&r->ready) < started)
        sl_cpu_relax();
    sl_bench_start(rec);
    atomic_store_explicit(&r->go, 1, memory_order_release);
    for (unsigned t = 0; t < started; t++)
        sl_thread_join(tid[t]);
    sl_bench_stop(rec, loops);
    if (rc == SL_OK)
        rc = atomic_load(&r->error);
    /* Every object is allocated and freed once inside the run: 2 * loops operations per thread. */
    uint64_t ops = 2 * r->loops * started;
    uint64_t slow = stat_sum(a->s, SL_SLUB_ALLOC_SLOWPATH, SL_SLUB_FREE_SLOWPATH) - slow0;
    rec->extra[0] = rec->ns[0] ? (double)loops * a->nthreads * 1e9 / (double)rec->ns[0] : 0;
    rec->extra[1] = ops && slow <= ops ? 1.0 - (double)slow / (double)ops : 0;
    rec->extra[2] = (double)(stat_sum(a->s, SL_SLUB_CMPXCHG_DOUBLE_CPU_FAIL, SL_SLUB_CMPXCHG_DOUBLE_FAIL) - fail0);
    free(rings);
    free(r);
    return rc;
}

typedef struct scale_opts {
    unsigned long threads;
    unsigned long remote_every;
    unsigned long nodes;
} scale_opts;

int sl_bench_scale_run(sl_bench_report *rep, const sl_bench_opts *o, unsigned max_threads, unsigned remote_every,
                       unsigned nodes)
{
    sl_bench_exp *e = sl_bench_exp_new(rep, "scale", "SLUB model: threads as CPUs, local and remote frees", NULL,
                                       "alloc+free pair, per thread (wall time / that thread's pairs)", "ratio");
    sl_bench_param_num(e, "object_size", 256);
    sl_bench_param_num(e, "remote_every", remote_every);
    sl_bench_param_num(e, "nodes", nodes);
    sl_bench_param_num(e, "host_cpus", sl_host_cpus());
    sl_bench_param_kernel(e, o);
    sl_bench_note(e, "ops_per_sec: alloc+free pairs per second, all threads; fastpath_share: fast-path "
                     "allocs+frees over all allocs+frees; cmpxchg_retries: failed double-word CASes "
                     "(per-CPU and slab) per repetition");
    if (max_threads > sl_host_cpus())
        sl_bench_note(e, "more threads than host CPUs: threads share CPUs and are preempted");
    static const char *const extras[] = {"ops_per_sec", "fastpath_share", "cmpxchg_retries", NULL};
    /* Enough pairs per thread that starting threads is not what is timed. */
    uint64_t min_loops = o->quick ? 20000 : 200000;
    int rc = SL_OK;
    for (unsigned n = 1; rc == SL_OK && n <= max_threads; n++) {
        sl_bench_slub c;
        rc = sl_bench_slub_open_nodes(&c, n, n < nodes ? n : nodes, 256, SL_SLUB_HWCACHE_ALIGN, o->kernel, 0,
                                      SL_SLUB_FP_CMPXCHG, SL_SLUB_BULK_DETACHED, 64);
        if (rc != SL_OK)
            break;
        scale_arg local = {c.cache, n, 0}, remote = {c.cache, n, remote_every};
        sl_bench_variant v[2] = {
            {.name = "local", .fn = time_scale, .arg = &local, .available = true, .min_loops = min_loops},
            {.name = "remote",
             .fn = time_scale,
             .arg = &remote,
             .available = n > 1,
             .reason = "needs two threads",
             .min_loops = min_loops}};
        char row[16];
        snprintf(row, sizeof row, "%u", n);
        rc = sl_bench_row(e, o, "threads", row, v, 2, NULL, extras, 0);
        sl_bench_slub_close(&c);
    }
    if (rc != SL_OK) {
        fprintf(stderr, "slablab scale: %s\n", sl_strerror(rc));
        return 1;
    }
    return 0;
}

static int own_opt(const sl_cli_command *cmd, int argc, char **argv, int *i, void *ctx)
{
    scale_opts *s = ctx;
    if (!strcmp(argv[*i], "--threads")) {
        if (*i + 1 >= argc || !sl_cli_parse_ulong(argv[++*i], 1, SL_SLUB_MAX_CPUS, &s->threads))
            return sl_cli_usage_error(cmd, "--threads takes 1 to %d", SL_SLUB_MAX_CPUS);
    } else if (!strcmp(argv[*i], "--nodes")) {
        if (*i + 1 >= argc || !sl_cli_parse_ulong(argv[++*i], 1, SL_SLUB_MAX_NODES, &s->nodes))
            return sl_cli_usage_error(cmd, "--nodes takes 1 to %d", SL_SLUB_MAX_NODES);
    } else if (!strcmp(argv[*i], "--remote-every")) {
        if (*i + 1 >= argc || !sl_cli_parse_ulong(argv[++*i], 1, 1000000, &s->remote_every))
            return sl_cli_usage_error(cmd, "--remote-every takes 1 to 1000000");
    } else {
        return 0;
    }
    return 1;
}

static int run(sl_bench_report *r, const sl_bench_opts *o, void *ctx)
{
    scale_opts *s = ctx;
    return sl_bench_scale_run(r, o, (unsigned)s->threads, (unsigned)s->remote_every, (unsigned)s->nodes);
}

static int run_scale(int argc, char **argv);
SL_CLI_COMMAND(scale, .name = "scale",
               .summary = "SLUB model with 1..N CPU threads: throughput, fast-path share, cmpxchg retries",
               .usage = "slablab scale [--threads N (1-8, default: host CPUs)] [--remote-every K (default 4)] "
                        "[--nodes N (1-4 NUMA nodes, default 1)] " SL_BENCH_OPTS_USAGE,
               .run = run_scale)

static int run_scale(int argc, char **argv)
{
    unsigned cpus = sl_host_cpus();
    scale_opts s = {cpus < SL_SLUB_MAX_CPUS ? cpus : SL_SLUB_MAX_CPUS, 4, 1};
    return sl_bench_command(&sl_cli_cmd_scale, argc, argv, own_opt, run, &s, NULL);
}
