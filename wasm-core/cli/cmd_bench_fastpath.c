/*
 * cmd_bench_fastpath.c - `slablab fastpath`: seed 001's measurement.  The
 * SLUB model's alloc+free pair of one 256-byte object ("fastpath reuse":
 * the object goes straight back to the per-CPU freelist it came from) for
 * the four fast-path variants (cmpxchg, locked, seed 001's plain writes,
 * and PREEMPT_RT's local_lock paths, the kernel's nearest relative of
 * plain writes), interleaved and reported as ratios to cmpxchg; and the
 * bare instruction costs seed 001 reasons with: CMPXCHG16B without and with
 * LOCK, and the 8-byte cmpxchg with and without LOCK, each looped on one
 * cache-hot word as the per-CPU fast path does.
 */
#include "bench.h"
#include "bench_slub.h"

#include <string.h>

/* Keeps p alive as far as the compiler knows. */
SL_INLINE void use(void *p) { __asm__ __volatile__("" : : "r"(p) : "memory"); }

/* slab_bulk_test01's benchmark_kmem_cache_fastpath_reuse: alloc then free one object, as CPU 0. */
static int time_slub_pair(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    sl_slub_cache *s = arg;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++) {
        void *p;
        int rc = sl_slub_alloc(s, 0, &p);
        if (SL_UNLIKELY(rc != SL_OK))
            return rc;
        use(p);
        if (SL_UNLIKELY((rc = sl_slub_free(s, 0, p)) != SL_OK))
            return rc;
    }
    sl_bench_stop(rec, loops);
    return SL_OK;
}

/* time_bench's "for_loop": what the loop itself costs. */
static int time_for_loop(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    (void)arg;
    uint64_t n = 0;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++) {
        n++;
        __asm__ __volatile__("" ::: "memory");
    }
    sl_bench_stop(rec, n);
    return SL_OK;
}

/* this_cpu_cmpxchg_double (CMPXCHG16B, no LOCK) or cmpxchg_double (LOCK),
 * always succeeding, as on the fast path. */
static int time_dw_cas(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    bool locked = arg != NULL;
    sl_dword w = {0, 0};
    uint64_t ok = 0;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++) {
        sl_dword old = {(uintptr_t)i, (uintptr_t)i}, new_ = {(uintptr_t)i + 1, (uintptr_t)i + 1};
        ok += locked ? sl_dw_cas(&w, old, new_) : sl_dw_cas_local(&w, old, new_);
    }
    sl_bench_stop(rec, loops);
    return ok == loops ? SL_OK : SL_ECORRUPT;
}

/* The 8-byte compare-and-swap: this_cpu_cmpxchg (no LOCK) or cmpxchg (LOCK). */
SL_INLINE bool cas8(uint64_t *p, uint64_t old, uint64_t new_, bool locked)
{
    uint64_t prev = old;
    if (locked)
        __asm__ __volatile__("lock cmpxchgq %2, %1" : "+a"(prev), "+m"(*p) : "r"(new_) : "memory", "cc");
    else
        __asm__ __volatile__("cmpxchgq %2, %1" : "+a"(prev), "+m"(*p) : "r"(new_) : "memory", "cc");
    return prev == old;
}

static int time_cas8(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    bool locked = arg != NULL;
    uint64_t w = 0, ok = 0;
    sl_bench_start(rec);
    for (uint64_t i = 0; i < loops; i++)
        ok += cas8(&w, i, i + 1, locked);
    sl_bench_stop(rec, loops);
    return ok == loops ? SL_OK : SL_ECORRUPT;
}

static int instr_row(sl_bench_exp *e, const sl_bench_opts *o, const char *row, sl_bench_fn fn, void *arg)
{
    sl_bench_variant v = {.name = "cost", .fn = fn, .arg = arg, .available = true};
    return sl_bench_row(e, o, "instructions", row, &v, 1, NULL, NULL, 0);
}

int sl_bench_fastpath_run(sl_bench_report *r, const sl_bench_opts *o)
{
    sl_bench_exp *e = sl_bench_exp_new(r, "fastpath", "SLUB fast path alloc+free and the instructions it costs", "001",
                                       "operation (an alloc+free pair, or one instruction)", "ratio");
    static int one = 1;
    int rc = SL_OK;
    sl_bench_param_num(e, "object_size", 256);
    sl_bench_param_str(e, "flags", "HWCACHE_ALIGN");
    sl_bench_param_kernel(e, o);
    sl_bench_slub c[SL_SLUB_NR_FASTPATHS];
    sl_bench_variant v[SL_SLUB_NR_FASTPATHS];
    unsigned opened = 0;
    for (; opened < SL_SLUB_NR_FASTPATHS && rc == SL_OK; opened++) {
        sl_slub_fastpath fp = (sl_slub_fastpath)opened;
        v[opened] = (sl_bench_variant){.name = sl_bench_slub_fastpath_name(o->kernel, fp),
                                       .fn = time_slub_pair,
                                       .available = sl_bench_slub_has_fastpath(o->kernel, fp),
                                       .reason = "7.0 has no per-CPU slab: its caches allocate from sheaves"};
        c[opened] = (sl_bench_slub){0};
        if (!v[opened].available)
            continue;
        rc = sl_bench_slub_open(&c[opened], 1, 256, SL_SLUB_HWCACHE_ALIGN, o->kernel, 0, fp, SL_SLUB_BULK_DETACHED, 16);
        if (rc != SL_OK)
            break;
        v[opened].arg = c[opened].cache;
    }
    if (rc == SL_OK)
        rc = sl_bench_row(e, o, "slub alloc+free", "256", v, SL_SLUB_NR_FASTPATHS, NULL, NULL, SL_SLUB_FP_CMPXCHG);
    while (opened)
        if (c[--opened].cache)
            sl_bench_slub_close(&c[opened]);
    /* the instruction rows run even if the model's failed: they need no cache */
    int failures = rc != SL_OK;
    failures += instr_row(e, o, "for_loop", time_for_loop, NULL) != SL_OK;
    failures += instr_row(e, o, "cmpxchg16b", time_dw_cas, NULL) != SL_OK;
    failures += instr_row(e, o, "lock cmpxchg16b", time_dw_cas, &one) != SL_OK;
    failures += instr_row(e, o, "cmpxchg 8-byte", time_cas8, NULL) != SL_OK;
    failures += instr_row(e, o, "lock cmpxchg 8-byte", time_cas8, &one) != SL_OK;
    sl_bench_note(e, "local_irq_{disable,enable} and local_irq_{save,restore} are kernel-only (CLI/STI "
                     "and POPF of IF need ring 0): not measured here; seed 001 quotes 7 and 37 "
                     "cycles(tsc) on an E5-2695");
    sl_bench_note(e, "rt: PREEMPT_RT, where alloc is always ___slab_alloc and free writes freelist and tid, "
                     "each under the CPU's local_lock (here a spin lock: a LOCK CMPXCHG and a release store; "
                     "the kernel's rt_spin_lock adds migrate_disable/enable)");
    return failures ? 1 : 0;
}

static int run(sl_bench_report *r, const sl_bench_opts *o, void *ctx)
{
    (void)ctx;
    return sl_bench_fastpath_run(r, o);
}

static int run_fastpath(int argc, char **argv);
SL_CLI_COMMAND(fastpath, .name = "fastpath",
               .summary = "SLUB fast path alloc+free: cmpxchg vs locked vs plain vs rt, and bare CMPXCHG16B costs",
               .usage = "slablab fastpath " SL_BENCH_OPTS_USAGE, .run = run_fastpath)

static int run_fastpath(int argc, char **argv)
{
    return sl_bench_command(&sl_cli_cmd_fastpath, argc, argv, NULL, run, NULL, NULL);
}
