/*
 * bench_harness.c - names the machine, calibrates the TSC, and runs the
 * variants of one row interleaved (see bench.h for the method).
 *
 * sl_bench_row keeps every repetition's per-operation figures in a local
 * samples array [variant][phase][rep] until the row is done: the
 * medians come from it, and so do the ratios, which are taken per
 * repetition (variant k of repetition r against the base variant of the
 * same repetition, which ran next to it) before their median is taken.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

const unsigned sl_bench_bulk_sizes[14] = {1, 2, 3, 4, 8, 16, 30, 32, 34, 48, 64, 128, 158, 250};

/* ------------------------------------------------------------------ */
/* Machine                                                             */

static bool has_flag(const char *flags, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = flags; (p = strstr(p, name)) != NULL; p += n) {
        bool start = p == flags || p[-1] == ' ' || p[-1] == '\t';
        bool end = p[n] == ' ' || p[n] == '\n' || p[n] == '\0';
        if (start && end)
            return true;
    }
    return false;
}

static void read_cpuinfo(sl_bench_machine *m)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[4096];
    bool have_model = false, have_flags = false;
    while (fgets(line, sizeof line, f) && !(have_model && have_flags)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        const char *val = colon + 1 + (colon[1] == ' ');
        if (!have_model && !strncmp(line, "model name", 10)) {
            snprintf(m->cpu_model, sizeof m->cpu_model, "%s", val);
            m->cpu_model[strcspn(m->cpu_model, "\n")] = '\0';
            have_model = true;
        } else if (!have_flags && !strncmp(line, "flags", 5)) {
            m->constant_tsc = has_flag(val, "constant_tsc");
            m->nonstop_tsc = has_flag(val, "nonstop_tsc");
            m->hypervisor = has_flag(val, "hypervisor");
            have_flags = true;
        }
    }
    fclose(f);
}

/* TSC ticks per second over about ms milliseconds of the monotonic clock. */
static double tsc_rate_once(unsigned ms)
{
    uint64_t ns0 = sl_time_ns(), tsc0 = sl_tsc_start();
    uint64_t until = ns0 + (uint64_t)ms * 1000000u, ns1;
    while ((ns1 = sl_time_ns()) < until)
        ;
    uint64_t tsc1 = sl_tsc_stop();
    return (double)(tsc1 - tsc0) * 1e9 / (double)(ns1 - ns0);
}

int sl_bench_machine_probe(sl_bench_machine *m, int cpu, unsigned calib_ms)
{
    memset(m, 0, sizeof *m);
    snprintf(m->cpu_model, sizeof m->cpu_model, "unknown");
    read_cpuinfo(m);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof m->kernel, "%s %s", u.sysname, u.release);
    snprintf(m->compiler, sizeof m->compiler, "%s", __VERSION__);
    m->cores = sl_host_cpus();
#if defined(SLABLAB_BENCH)
    m->bench_build = true;
#endif
    m->pinned_cpu = cpu;
    if (cpu >= 0)
        sl_thread_pin((unsigned)cpu);
    double r[3];
    for (int i = 0; i < 3; i++)
        r[i] = tsc_rate_once(calib_ms ? calib_ms : 1);
    m->tsc_hz = sl_bench_stat_of(r, 3).median;
    return SL_OK;
}

/* ------------------------------------------------------------------ */
/* Rows                                                                */

static uint64_t rec_ns(const sl_bench_rec *r)
{
    uint64_t t = 0;
    for (unsigned p = 0; p < r->nphases; p++)
        t += r->ns[p];
    return t;
}

/* Runs v once with `loops`; returns its status. */
static int run_once(const sl_bench_variant *v, uint64_t loops, sl_bench_rec *rec)
{
    memset(rec, 0, sizeof *rec);
    int rc = v->fn(v->arg, loops, rec);
    if (rc == SL_OK && rec->nphases == 0)
        rc = SL_EINVAL; /* a timed function that never stopped the clock */
    return rc;
}

/*
 * Warm-up, and the loop count.  The first run is discarded (it pays for
 * first-touch page faults and lazy initialisation); then the count doubles
 * from 16 (or the variant's min_loops) until a run lasts an eighth of the
 * target and is scaled to the target.  Returns the status.
 */
static int warm_up(const sl_bench_variant *v, const sl_bench_opts *o, uint64_t *loops)
{
    sl_bench_rec rec;
    uint64_t n = v->fixed_loops ? v->fixed_loops : o->loops ? o->loops : v->min_loops > 16 ? v->min_loops : 16;
    int rc = run_once(v, n, &rec);
    if (rc != SL_OK || v->fixed_loops || o->loops) {
        *loops = n;
        return rc;
    }
    uint64_t target = (uint64_t)o->min_time_us * 1000u;
    for (;;) {
        rc = run_once(v, n, &rec);
        if (rc != SL_OK)
            return rc;
        uint64_t t = rec_ns(&rec);
        if (t >= target / 8 || n >= (1ull << 31)) {
            double scaled = (double)n * (double)target / (double)(t ? t : 1);
            *loops = scaled < 1 ? 1 : scaled > 4e9 ? 4000000000ull : (uint64_t)scaled;
            if (*loops < v->min_loops)
                *loops = v->min_loops;
            return SL_OK;
        }
        n *= 2;
    }
}

#define S(v, p, r) samples[((size_t)(v)*SL_BENCH_MAX_PHASES + (p)) * reps + (r)]

int sl_bench_row(sl_bench_exp *e, const sl_bench_opts *o, const char *group, const char *row, const sl_bench_variant *v,
                 unsigned nv, const char *const *phase_names, const char *const *extra_names, int base)
{
    unsigned reps = o->reps ? o->reps : 1;
    size_t cells = (size_t)nv * SL_BENCH_MAX_PHASES * reps;
    double *samples = calloc(cells, sizeof *samples);   /* cycles per op */
    double *nsamples = calloc(cells, sizeof *nsamples); /* ns per op */
    double *period = calloc((size_t)nv * reps, sizeof *period);
    double *extra = calloc((size_t)nv * SL_BENCH_MAX_EXTRA * reps, sizeof *extra);
    uint64_t *loops = calloc(nv, sizeof *loops), *ops = calloc((size_t)nv * SL_BENCH_MAX_PHASES, sizeof *ops);
    int *status = calloc(nv, sizeof *status);
    unsigned *nphases = calloc(nv, sizeof *nphases);
    if (!samples || !nsamples || !period || !extra || !loops || !ops || !status || !nphases) {
        fprintf(stderr, "slablab: out of memory\n");
        exit(1);
    }
    unsigned nextra = 0;
    while (extra_names && nextra < SL_BENCH_MAX_EXTRA && extra_names[nextra])
        nextra++;

    for (unsigned k = 0; k < nv; k++)
        status[k] = v[k].available ? warm_up(&v[k], o, &loops[k]) : SL_OK;

    for (unsigned r = 0; r < reps; r++) {
        for (unsigned j = 0; j < nv; j++) {
            unsigned k = (r & 1) ? nv - 1 - j : j; /* A B C, C B A, ... */
            if (!v[k].available || status[k] != SL_OK)
                continue;
            sl_bench_rec rec;
            status[k] = run_once(&v[k], loops[k], &rec);
            if (status[k] != SL_OK)
                continue;
            nphases[k] = rec.nphases;
            for (unsigned p = 0; p < rec.nphases; p++) {
                ops[k * SL_BENCH_MAX_PHASES + p] = rec.ops[p];
                S(k, p, r) = sl_bench_per_op(rec.tsc[p], rec.ops[p]);
                nsamples[((size_t)k * SL_BENCH_MAX_PHASES + p) * reps + r] = sl_bench_per_op(rec.ns[p], rec.ops[p]);
            }
            period[(size_t)k * reps + r] = (double)rec_ns(&rec) / 1e6;
            for (unsigned x = 0; x < nextra; x++)
                extra[((size_t)k * SL_BENCH_MAX_EXTRA + x) * reps + r] = rec.extra[x];
        }
    }

    int first_error = SL_OK;
    double *tmp = calloc(reps, sizeof *tmp);
    if (!tmp)
        exit(1);
    for (unsigned k = 0; k < nv; k++) {
        unsigned np = nphases[k] ? nphases[k] : 1;
        for (unsigned p = 0; p < np; p++) {
            sl_bench_meas m;
            memset(&m, 0, sizeof m);
            snprintf(m.group, sizeof m.group, "%s", group);
            snprintf(m.row, sizeof m.row, "%s", row);
            snprintf(m.variant, sizeof m.variant, "%s", v[k].name);
            snprintf(m.phase, sizeof m.phase, "%s", phase_names ? phase_names[p] : "");
            m.available = v[k].available && status[k] == SL_OK;
            if (!v[k].available) {
                snprintf(m.reason, sizeof m.reason, "%s", v[k].reason ? v[k].reason : "not available");
            } else if (status[k] != SL_OK) {
                snprintf(m.reason, sizeof m.reason, "failed: %s", sl_strerror(status[k]));
                if (first_error == SL_OK)
                    first_error = status[k];
            } else {
                m.ops = ops[k * SL_BENCH_MAX_PHASES + p];
                m.reps = reps;
                memcpy(tmp, &S(k, p, 0), reps * sizeof *tmp);
                m.cycles = sl_bench_stat_of(tmp, reps);
                memcpy(tmp, &nsamples[((size_t)k * SL_BENCH_MAX_PHASES + p) * reps], reps * sizeof *tmp);
                m.ns = sl_bench_stat_of(tmp, reps);
                memcpy(tmp, &period[(size_t)k * reps], reps * sizeof *tmp);
                m.period_ms = sl_bench_stat_of(tmp, reps).median;
                m.nextra = nextra;
                for (unsigned x = 0; x < nextra; x++) {
                    memcpy(tmp, &extra[((size_t)k * SL_BENCH_MAX_EXTRA + x) * reps], reps * sizeof *tmp);
                    m.extra_name[x] = extra_names[x];
                    m.extra[x] = sl_bench_stat_of(tmp, reps).median;
                }
            }
            sl_bench_add_meas(e, &m);
        }
    }

    /* The base: the given variant, or the cheapest available one by median. */
    for (unsigned p = 0; p < SL_BENCH_MAX_PHASES; p++) {
        int b = base;
        if (b == SL_BENCH_BASE_BEST) {
            double best = 0;
            for (unsigned k = 0; k < nv; k++) {
                if (!v[k].available || status[k] != SL_OK || p >= nphases[k])
                    continue;
                memcpy(tmp, &S(k, p, 0), reps * sizeof *tmp);
                double med = sl_bench_stat_of(tmp, reps).median;
                if (b < 0 || med < best) {
                    b = (int)k;
                    best = med;
                }
            }
        }
        if (b < 0 || (unsigned)b >= nv || !v[b].available || status[b] != SL_OK || p >= nphases[b])
            continue;
        for (unsigned k = 0; k < nv; k++) {
            if ((int)k == b || !v[k].available || status[k] != SL_OK || p >= nphases[k])
                continue;
            for (unsigned r = 0; r < reps; r++)
                tmp[r] = sl_bench_ratio_of(S(k, p, r), S(b, p, r));
            sl_bench_ratio q;
            memset(&q, 0, sizeof q);
            snprintf(q.group, sizeof q.group, "%s", group);
            snprintf(q.row, sizeof q.row, "%s", row);
            snprintf(q.phase, sizeof q.phase, "%s", phase_names ? phase_names[p] : "");
            snprintf(q.a, sizeof q.a, "%s", v[k].name);
            snprintf(q.b, sizeof q.b, "%s", v[b].name);
            q.ratio = sl_bench_stat_of(tmp, reps);
            q.improvement_pct = sl_bench_improvement_pct(1.0, q.ratio.median);
            sl_bench_add_ratio(e, &q);
        }
    }
    free(tmp);
    free(samples);
    free(nsamples);
    free(period);
    free(extra);
    free(loops);
    free(ops);
    free(status);
    free(nphases);
    return first_error;
}
