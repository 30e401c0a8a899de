/*
 * api_bench_wasm.c - work the browser runs on CPU threads: the free-running
 * workloads of the SLUB view, and the `fastpath`, `bulk`, `kmalloc` and
 * `percpu` benchmarks of the Benchmarks page.
 *
 * Free-running.  sl_api_slub_workload (api_slub.c) runs a workload as CPU k
 * on the calling thread.  The bridge worker cannot call it on a pthread
 * itself, so sl_api_freerun_start starts one thread per simulated CPU (a
 * pthread is a web worker sharing the module's memory; the pool has eight
 * ready, so no thread waits for the event loop) that calls it in rounds until
 * sl_api_freerun_stop.  Each thread is the only one acting as its CPU, as the
 * model requires: it claims its CPU for the whole run (sl_api_slub_cpu_claim,
 * retried while a call of the bridge still holds it), so a call from the
 * bridge acting as that CPU meanwhile gets SL_EBUSY.  `fr` belongs to the
 * bridge worker between start and stop; while the threads run, only their per-CPU counters (single writer, relaxed
 * atomics), the stop flag and the pause counts of sl_api_freerun_snapshot are shared.  One free-run at a time.
 * With `duty` below 100 each thread sleeps after every round so that it runs
 * only that share of the time: eight simulated CPUs on a two-core host would
 * otherwise leave the page's main thread a fifth of a core, and the view
 * could not draw at display rate.  A `rate` (operations per second per CPU,
 * 0 for none) caps each thread further, in rounds of a hundredth of a second
 * of work, so that the per-CPU event rings, which the view drains once per
 * frame, do not overflow between two frames.
 *
 * Benchmarks.  One loop per call, timed with sl_time_ns (performance.now(),
 * whose resolution the page's isolation decides: the caller sizes `loops` so
 * a call lasts milliseconds).  The Benchmarks page calls them in the
 * benchmark flavour of the module (SLABLAB_BENCH: the C of the native
 * benchmark build); in the lab's traced builds they run too, the preemption
 * points then costing a test of a NULL pointer (the caches have no trace).
 * The SLUB caches are `slablab fastpath`'s and `slablab bulk`'s (see
 * bench_loop).
 * The SLAB loop is seed 002's slab_test (`slablab kmalloc`): rounds of 10000
 * kmalloc(size) then 10000 kfree on a one-CPU world with no trace.  In the
 * threads build each loop runs on a CPU thread, joined before returning.
 * The percpu experiment is one row of seed 003's table per call (one
 * allocator, object size and free order: sl_pcpu_run_workload, timed by the
 * workload itself), so the page reports progress and can cancel between
 * rows.
 */
#include "export.h"

#include "../src/percpu/percpu.h"
#include "../src/slab/slab.h"
#include "../src/slub/slub.h"

#include <stdlib.h>

#include <string.h>
#include <time.h>

/* api_slub.c's world is opaque here: its workload entry points are all this file uses. */
typedef struct sl_api_slub_world sl_api_slub_world;
int sl_api_slub_workload(sl_api_slub_world *w, uint32_t cpu, uint32_t kind, uint32_t nops, uint32_t seed);
void sl_api_slub_workload_stop(sl_api_slub_world *w, uint32_t stop);
int sl_api_slub_workload_drain(sl_api_slub_world *w, uint32_t cpu);
int sl_api_slub_cpu_claim(sl_api_slub_world *w, uint32_t cpu);
void sl_api_slub_cpu_release(sl_api_slub_world *w, uint32_t cpu);
int sl_api_slub_snapshot(sl_api_slub_world *w, void *buf, uint32_t cap);

#define ROUND_OPS 1024

typedef struct fr_cpu {
    sl_thread thread;
    unsigned cpu;
    bool started;
    _Atomic uint64_t ops;       /* written by this CPU's thread only */
    _Atomic uint64_t thread_id; /* the thread (web worker) acting as this CPU */
} fr_cpu;

static struct {
    sl_api_slub_world *w;
    unsigned ncpus, kind, seed, duty, rate;
    atomic_uint stop;
    /* sl_api_freerun_snapshot: pause asks the threads to let go of their CPUs between rounds; paused of live have. */
    atomic_uint pause, paused, live;
    bool running;
    fr_cpu cpu[SL_SLUB_MAX_CPUS];
} fr;

static void sleep_ns(uint64_t ns)
{
    if (!ns)
        return;
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

/* Claims CPU c->cpu for this thread, waiting while the bridge holds it or a pause is asked; false once stopped. */
static bool fr_claim(fr_cpu *c)
{
    while (atomic_load(&fr.pause) || sl_api_slub_cpu_claim(fr.w, c->cpu) != SL_OK) {
        if (atomic_load_explicit(&fr.stop, memory_order_relaxed))
            return false;
        sleep_ns(50000);
    }
    return true;
}

static void *fr_main(void *arg)
{
    fr_cpu *c = arg;
    atomic_store_explicit(&c->thread_id, sl_thread_self_id(), memory_order_relaxed);
    /* This thread is CPU c->cpu until the run stops (but for pauses): anyone else acting as it gets SL_EBUSY. */
    if (!fr_claim(c))
        return NULL;
    atomic_fetch_add(&fr.live, 1);
    unsigned chunk = fr.rate ? fr.rate / 100 : ROUND_OPS;
    chunk = chunk < 1 ? 1 : chunk > ROUND_OPS ? ROUND_OPS : chunk;
    uint64_t begun = sl_time_ns(), done = 0;
    for (uint32_t round = 0; !atomic_load_explicit(&fr.stop, memory_order_relaxed); round++) {
        if (atomic_load(&fr.pause)) {
            sl_api_slub_cpu_release(fr.w, c->cpu);
            atomic_fetch_add(&fr.paused, 1);
            bool claimed = fr_claim(c);
            atomic_fetch_sub(&fr.paused, 1);
            if (!claimed) {
                atomic_fetch_sub(&fr.live, 1);
                return NULL;
            }
        }
        uint64_t t0 = sl_time_ns();
        int n = sl_api_slub_workload(fr.w, c->cpu, fr.kind, chunk, fr.seed + round);
        uint64_t rest = 0;
        if (fr.duty < 100)
            rest = (sl_time_ns() - t0) * (100 - fr.duty) / fr.duty;
        if (n > 0 && fr.rate) {
            /* Sleep until the operations done so far are due at `rate`. */
            uint64_t due = begun + (done + (uint64_t)n) * 1000000000u / fr.rate, now = sl_time_ns();
            if (due > now + rest)
                rest = due - now;
        }
        sleep_ns(rest);
        if (n <= 0)
            break; /* out of memory with nothing to give back, or stopped */
        done += (uint64_t)n;
        atomic_store_explicit(&c->ops, done, memory_order_relaxed);
    }
    sl_api_slub_cpu_release(fr.w, c->cpu);
    atomic_fetch_sub(&fr.live, 1);
    return NULL;
}

/*
 * Starts one thread per CPU running workload `kind` (see sl_api_slub_workload)
 * on world w, each busy `duty` percent of the time (1..100) and doing at most
 * `rate` operations per second (0: no cap).  Returns 0, SL_ENOTHREADS in the
 * single-threaded build, SL_EBUSY if a free-run is already going, SL_EINVAL
 * for bad arguments, or the error of a thread that could not start (the
 * others are stopped again).
 */
SL_EXPORT int sl_api_freerun_start(sl_api_slub_world *w, uint32_t ncpus, uint32_t kind, uint32_t seed, uint32_t duty,
                                   uint32_t rate)
{
    if (!SL_HAVE_THREADS)
        return SL_ENOTHREADS;
    if (fr.running)
        return SL_EBUSY;
    if (!w || ncpus < 1 || ncpus > SL_SLUB_MAX_CPUS || kind > 2 || duty < 1 || duty > 100)
        return SL_EINVAL;
    memset(&fr.cpu, 0, sizeof fr.cpu);
    fr.w = w;
    fr.ncpus = ncpus;
    fr.kind = kind;
    fr.seed = seed;
    fr.duty = duty;
    fr.rate = rate;
    atomic_store(&fr.stop, 0);
    atomic_store(&fr.pause, 0);
    atomic_store(&fr.paused, 0);
    atomic_store(&fr.live, 0);
    sl_api_slub_workload_stop(w, 0);
    fr.running = true;
    for (unsigned k = 0; k < ncpus; k++) {
        fr.cpu[k].cpu = k;
        int rc = sl_thread_start(&fr.cpu[k].thread, fr_main, &fr.cpu[k]);
        if (rc != SL_OK) {
            atomic_store(&fr.stop, 1);
            sl_api_slub_workload_stop(w, 1);
            for (unsigned j = 0; j < k; j++)
                sl_thread_join(fr.cpu[j].thread);
            fr.running = false;
            return rc;
        }
        fr.cpu[k].started = true;
    }
    return SL_OK;
}

/*
 * Stops the threads, joins them and frees every object the workloads still
 * hold.  Returns the operations done by all CPUs, or 0 when none was running.
 */
SL_EXPORT double sl_api_freerun_stop(sl_api_slub_world *w)
{
    if (!fr.running || w != fr.w)
        return 0;
    atomic_store(&fr.stop, 1);
    sl_api_slub_workload_stop(w, 1);
    double total = 0;
    for (unsigned k = 0; k < fr.ncpus; k++) {
        if (fr.cpu[k].started)
            sl_thread_join(fr.cpu[k].thread);
        total += (double)atomic_load(&fr.cpu[k].ops);
    }
    sl_api_slub_workload_stop(w, 0);
    for (unsigned k = 0; k < fr.ncpus; k++)
        sl_api_slub_workload_drain(w, k);
    fr.running = false;
    return total;
}

/*
 * A snapshot of world w with every CPU quiet, so that it holds the sheaves
 * (sl_api_slub_snapshot leaves them out while a thread acts as a CPU): the
 * threads are asked to let go of their CPUs at the end of their current
 * round, the snapshot is taken once all have, and they go on.  After a
 * second without that (a round of a slow rate sleeps), the snapshot is taken
 * running.  Without a free-run, the plain snapshot.
 */
SL_EXPORT int sl_api_freerun_snapshot(sl_api_slub_world *w, void *buf, uint32_t cap)
{
    if (!fr.running || w != fr.w)
        return sl_api_slub_snapshot(w, buf, cap);
    atomic_store(&fr.pause, 1);
    for (uint64_t t0 = sl_time_ns();
         atomic_load(&fr.paused) < atomic_load(&fr.live) && sl_time_ns() - t0 < 1000000000u;)
        sleep_ns(50000);
    int n = sl_api_slub_snapshot(w, buf, cap);
    atomic_store(&fr.pause, 0);
    return n;
}

/* Operations CPU `cpu` has done in this free-run (a double is exact to 2^53). */
SL_EXPORT double sl_api_freerun_ops(uint32_t cpu)
{
    return cpu < SL_SLUB_MAX_CPUS ? (double)atomic_load_explicit(&fr.cpu[cpu].ops, memory_order_relaxed) : 0;
}

/* The id of the thread acting as CPU `cpu`, 0 before it started. */
SL_EXPORT double sl_api_freerun_thread(uint32_t cpu)
{
    return cpu < SL_SLUB_MAX_CPUS ? (double)atomic_load_explicit(&fr.cpu[cpu].thread_id, memory_order_relaxed) : 0;
}

/* ---- benchmark loops ------------------------------------------------ */

enum { BENCH_FASTPATH = 0, BENCH_BULK = 1, BENCH_KMALLOC = 2, BENCH_MAX_BULK = 1024, BENCH_KMALLOC_ROUND = 10000 };

typedef struct bench_job {
    unsigned what, fastpath, form, bulk;
    unsigned rules, kernel, size, phase; /* kmalloc: SLAB rules and kernel, kmalloc size, 0 time kmalloc / 1 kfree */
    uint32_t loops;
    double ns; /* out: nanoseconds per object (alloc+free pair) */
    int rc;    /* out */
} bench_job;

/*
 * The timed loops of `slablab fastpath` and `slablab bulk` (cli/cmd_bench_fastpath.c, cmd_bench_bulk.c), one
 * function per experiment with its loop inside, as the CLI's: an alloc+free pair, slab_common.c's generic bulk
 * loops (one alloc or free per object), or kmem_cache_alloc_bulk + kmem_cache_free_bulk.  Each returns SL_OK
 * or the first error.
 */
typedef int (*bench_fn)(sl_slub_cache *s, unsigned n, uint32_t loops, void **p);

static int time_pair(sl_slub_cache *s, unsigned n, uint32_t loops, void **p)
{
    (void)n;
    (void)p;
    for (uint32_t i = 0; i < loops; i++) {
        void *obj;
        int rc = sl_slub_alloc(s, 0, &obj);
        if (SL_UNLIKELY(rc != SL_OK))
            return rc;
        __asm__ __volatile__("" ::: "memory");
        if (SL_UNLIKELY((rc = sl_slub_free(s, 0, obj)) != SL_OK))
            return rc;
    }
    return SL_OK;
}

static SL_NOINLINE void generic_free_bulk(sl_slub_cache *s, unsigned n, void **p)
{
    for (unsigned i = 0; i < n; i++)
        (void)sl_slub_free(s, 0, p[i]);
}
static SL_NOINLINE bool generic_alloc_bulk(sl_slub_cache *s, unsigned n, void **p)
{
    for (unsigned i = 0; i < n; i++)
        if (sl_slub_alloc(s, 0, &p[i]) != SL_OK) {
            generic_free_bulk(s, i, p);
            return false;
        }
    return true;
}

static int time_generic(sl_slub_cache *s, unsigned n, uint32_t loops, void **p)
{
    for (uint32_t i = 0; i < loops; i++) {
        if (!generic_alloc_bulk(s, n, p))
            return SL_ENOMEM;
        __asm__ __volatile__("" ::: "memory");
        generic_free_bulk(s, n, p);
    }
    return SL_OK;
}

static int time_bulk(sl_slub_cache *s, unsigned n, uint32_t loops, void **p)
{
    for (uint32_t i = 0; i < loops; i++) {
        if (sl_slub_alloc_bulk(s, 0, n, p) != (int)n)
            return SL_ENOMEM;
        __asm__ __volatile__("" ::: "memory");
        int rc = sl_slub_free_bulk(s, 0, n, p, NULL);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

/*
 * The caches of `slablab fastpath` and `slablab bulk` (cli/cmd_bench_*.c),
 * so that the page's figures and the CLI's compare: a prefaulted zone, one
 * CPU for fastpath, the seed machine's 8 CPUs for bulk (order-1 slabs of 32
 * objects), and bulk's `generic` as the CLI's per-object loop with the
 * cmpxchg fast path.
 */
static void bench_loop(bench_job *j)
{
    bool bulk = j->what == BENCH_BULK;
    bench_fn fn = !bulk ? time_pair : j->form == SL_SLUB_BULK_GENERIC ? time_generic : time_bulk;
    sl_page_zone zone;
    memset(&zone, 0, sizeof zone);
    j->rc = sl_page_zone_init(&zone, (size_t)(bulk ? 32 : 16) << 20, NULL);
    if (j->rc != SL_OK)
        return;
    sl_page_zone_prefault(&zone);
    sl_slub_config cfg = {.object_size = 256,
                          .flags = SL_SLUB_HWCACHE_ALIGN,
                          .fastpath = (uint8_t)j->fastpath,
                          .bulk_free = (uint8_t)j->form,
                          .seed = 1,
                          .id = 1};
    sl_slub_cache *s = NULL;
    j->rc = sl_slub_cache_create(&zone, NULL, bulk ? 8 : 1, &cfg, &s);
    if (j->rc == SL_OK) {
        void *p[BENCH_MAX_BULK];
        /* Warm up: the slabs the loop cycles through exist before timing. */
        j->rc = fn(s, j->bulk, 4, p);
        uint64_t t0 = sl_time_ns();
        if (j->rc == SL_OK)
            j->rc = fn(s, j->bulk, j->loops, p);
        uint64_t t1 = sl_time_ns();
        j->ns = (double)(t1 - t0) / ((double)j->loops * j->bulk);
        sl_slub_cache_destroy(s);
    }
    sl_page_zone_destroy(&zone);
}

/* One slab_test round: ROUND kmalloc then ROUND kfree; adds the timed phase's nanoseconds to *ns. */
static int kmalloc_round(sl_slab *sl, size_t size, void **v, unsigned phase, uint64_t *ns)
{
    uint64_t t0 = sl_time_ns();
    for (unsigned i = 0; i < BENCH_KMALLOC_ROUND; i++)
        if (!(v[i] = sl_slab_kmalloc(sl, 0, size)))
            return SL_ENOMEM;
    uint64_t t1 = sl_time_ns();
    for (unsigned i = 0; i < BENCH_KMALLOC_ROUND; i++)
        (void)sl_slab_kfree(sl, 0, v[i]);
    uint64_t t2 = sl_time_ns();
    *ns += phase ? t2 - t1 : t1 - t0;
    return SL_OK;
}

/* `loops` slab_test rounds after one untimed round; j->ns = nanoseconds per call of the timed phase. */
static void bench_kmalloc_loop(bench_job *j)
{
    void **v = malloc(sizeof *v * BENCH_KMALLOC_ROUND);
    size_t slabs = (size_t)BENCH_KMALLOC_ROUND * j->size * 3 / 2 + ((size_t)8 << 20);
    sl_slab_config cfg = {
        .ncpus = 1, .arena_bytes = slabs, .variant = {.rules = (sl_slab_rules)j->rules, .kernel = j->kernel}};
    sl_slab *sl = NULL;
    j->rc = v ? sl_slab_create(&cfg, &sl) : SL_ENOMEM;
    uint64_t ns = 0, warm = 0;
    if (j->rc == SL_OK)
        j->rc = kmalloc_round(sl, j->size, v, j->phase, &warm);
    for (uint32_t i = 0; i < j->loops && j->rc == SL_OK; i++)
        j->rc = kmalloc_round(sl, j->size, v, j->phase, &ns);
    j->ns = (double)ns / ((double)j->loops * BENCH_KMALLOC_ROUND);
    if (sl)
        sl_slab_destroy(sl);
    free(v);
}

static void *bench_main(void *arg)
{
    bench_job *j = arg;
    if (j->what == BENCH_KMALLOC)
        bench_kmalloc_loop(j);
    else
        bench_loop(j);
    return NULL;
}

/* Runs fn(arg) on a CPU thread when on_thread and the build has threads (joined before returning), else here. */
static void run_on_cpu(void *(*fn)(void *), void *arg, uint32_t on_thread)
{
    sl_thread t;
    if (on_thread && SL_HAVE_THREADS && sl_thread_start(&t, fn, arg) == SL_OK)
        sl_thread_join(t);
    else
        fn(arg);
}

static double bench_run(bench_job *j, uint32_t on_thread)
{
    run_on_cpu(bench_main, j, on_thread);
    return j->rc == SL_OK ? j->ns : (double)j->rc;
}

/*
 * `loops` alloc+free pairs of one object with fast-path variant `fastpath`
 * (sl_slub_fastpath), on a CPU thread when on_thread and the build has
 * threads.  Returns nanoseconds per pair, or a negative sl_err.
 */
SL_EXPORT double sl_api_bench_fastpath(uint32_t fastpath, uint32_t loops, uint32_t on_thread)
{
    if (fastpath >= SL_SLUB_NR_FASTPATHS || loops == 0)
        return SL_EINVAL;
    bench_job j = {.what = BENCH_FASTPATH, .fastpath = fastpath, .bulk = 1, .loops = loops};
    return bench_run(&j, on_thread);
}

/*
 * `loops` rounds of kmem_cache_alloc_bulk + kmem_cache_free_bulk of `bulk`
 * objects with free form `form` (sl_slub_bulk_free), as seed 000's
 * slab_bulk_test01.  Returns nanoseconds per object (an alloc+free pair), or
 * a negative sl_err.
 */
SL_EXPORT double sl_api_bench_bulk(uint32_t form, uint32_t bulk, uint32_t loops, uint32_t on_thread)
{
    if (form > SL_SLUB_BULK_GENERIC || bulk == 0 || bulk > BENCH_MAX_BULK || loops == 0)
        return SL_EINVAL;
    bench_job j = {.what = BENCH_BULK, .form = form, .bulk = bulk, .loops = loops};
    return bench_run(&j, on_thread);
}

/*
 * seed 002's slab_test on the SLAB model: `loops` rounds of 10000
 * kmalloc(size) then 10000 kfree on one CPU, after an untimed round, with
 * the management-type rules `rules` (0 before OBJFREELIST, 1 after) of
 * kernel `kernel` (X*100+Y, 0 = 6.7).  Only `phase` is timed (0 the kmallocs,
 * 1 the kfrees).  Returns nanoseconds per call, or a negative sl_err.
 */
SL_EXPORT double sl_api_bench_kmalloc(uint32_t rules, uint32_t kernel, uint32_t size, uint32_t phase, uint32_t loops,
                                      uint32_t on_thread)
{
    if (rules > SL_SLAB_RULES_AFTER || size == 0 || size > 4096 || phase > 1 || loops == 0)
        return SL_EINVAL;
    bench_job j = {
        .what = BENCH_KMALLOC, .rules = rules, .kernel = kernel, .size = size, .phase = phase, .loops = loops};
    return bench_run(&j, on_thread);
}

typedef struct pcpu_job {
    sl_pcpu_workload w;
    sl_pcpu_workload_result r;
    int rc;
} pcpu_job;

static void *pcpu_main(void *arg)
{
    pcpu_job *j = arg;
    j->rc = sl_pcpu_run_workload(&j->w, &j->r);
    return NULL;
}

/*
 * One row of seed 003's experiment (slablab percpu): a fresh instance of
 * allocator `kind` (0 areamap, 1 bitmap, 2 scanhint) with `units` units of
 * unit_size bytes (0: 256 KiB) allocates `objects` objects of `size` bytes
 * aligned to `align`, into chunks whose second half was filled first when
 * `prefill`, then frees them in `order` (0 inorder, 1 alternate, 2
 * reverse), stopping once alloc + free took budget_ms (0: no budget).
 * out[11] = alloc ms, free ms, objects allocated, objects freed, status
 * (0 done, 1 over budget, 2 an allocation failed: no memory), chunks when
 * all were live; out[6..11] = the timed phases' work (sl_pcpu_work): chunks
 * tried, blocks (area map: entries) visited, bits searched, memmoves,
 * entries moved.  Returns 0, or SL_EINVAL / SL_ENOMEM before timing began.
 */
SL_EXPORT int sl_api_bench_percpu(uint32_t kind, uint32_t size, uint32_t align, uint32_t objects, uint32_t order,
                                  uint32_t prefill, uint32_t units, uint32_t unit_size, uint32_t budget_ms,
                                  uint32_t on_thread, double *out)
{
    if (kind >= SL_PCPU_NKINDS || order > SL_PCPU_FREE_REVERSE || size == 0 || size > SL_PCPU_MAX_ALLOC_SIZE ||
        objects == 0 || objects > (1u << 26))
        return SL_EINVAL;
    pcpu_job j = {.w = {.cfg = {.kind = (sl_pcpu_kind)kind, .nr_units = units, .unit_size = unit_size},
                        .size = size,
                        .align = align,
                        .objects = objects,
                        .order = (sl_pcpu_order)order,
                        .prefill_second_half = prefill != 0,
                        .budget_ns = (uint64_t)budget_ms * 1000000u}};
    run_on_cpu(pcpu_main, &j, on_thread);
    if (j.rc != SL_OK)
        return j.rc;
    const double status = j.r.over_budget ? 1 : j.r.alloc_failed ? 2 : 0;
    const double v[11] = {(double)j.r.alloc_ns / 1e6,
                          (double)j.r.free_ns / 1e6,
                          (double)j.r.allocated,
                          (double)j.r.freed,
                          status,
                          (double)j.r.chunks,
                          (double)j.r.work.chunks,
                          (double)j.r.work.blocks,
                          (double)j.r.work.bits,
                          (double)j.r.work.memmoves,
                          (double)j.r.work.entries_moved};
    memcpy(out, v, sizeof v);
    return SL_OK;
}
