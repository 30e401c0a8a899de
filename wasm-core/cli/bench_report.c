/*
 * bench_report.c - the results of a benchmark run and their three outputs.
 *
 * An experiment owns two growable arrays (measurements and ratios) and
 * fixed arrays of parameters and notes whose strings are literals or
 * live as long as the report (they are never copied).  The writers print
 * the same data three ways:
 *   table  the seeds' style: one line per row, each variant's median
 *          "N cycles(tsc) X ns" with its [min..max], then the ratios;
 *   csv    one line per measurement and per ratio (column "kind"),
 *          preceded by '#' comment lines naming the machine;
 *   json   the document docs/bench-schema.json describes;
 *   time_bench  one line per measurement shaped like prototype-kernel's
 *          time_bench_loop output (the module the seeds measured with),
 *          from the median repetition, so that a kernel module's log and
 *          the lab's figures can be diffed line by line.
 */
#include "bench.h"
#include "outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA_ID "slablab-bench/1"

static void *grow(void *p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return p;
    size_t c = *cap ? *cap * 2 : 32;
    void *q = realloc(p, c * elem);
    if (!q) {
        fprintf(stderr, "slablab: out of memory\n");
        exit(1);
    }
    *cap = c;
    return q;
}

sl_bench_exp *sl_bench_exp_new(sl_bench_report *r, const char *name, const char *title, const char *seed,
                               const char *unit, const char *ratio_style)
{
    sl_bench_exp *e = calloc(1, sizeof *e);
    if (!e || r->nexps >= sizeof r->exps / sizeof r->exps[0]) {
        fprintf(stderr, "slablab: too many experiments\n");
        exit(1);
    }
    e->name = name;
    e->title = title;
    e->seed = seed;
    e->unit = unit;
    e->ratio_style = ratio_style;
    r->exps[r->nexps++] = e;
    return e;
}

void sl_bench_param_num(sl_bench_exp *e, const char *name, double v)
{
    if (e->nparams < SL_BENCH_MAX_PARAMS)
        e->params[e->nparams++] = (sl_bench_param){name, NULL, v};
}

void sl_bench_param_str(sl_bench_exp *e, const char *name, const char *v)
{
    if (e->nparams < SL_BENCH_MAX_PARAMS)
        e->params[e->nparams++] = (sl_bench_param){name, v, 0};
}

void sl_bench_param_kernel(sl_bench_exp *e, const sl_bench_opts *o)
{
    sl_slub_kversion v = o->kernel.major ? o->kernel : SL_SLUB_KVERSION_DEFAULT;
    sl_slub_rules r;
    sl_slub_rules_for(v, &r);
    sl_bench_param_str(e, "kernel", sl_slub_kversion_format(v, e->kernel, sizeof e->kernel));
    sl_bench_param_str(e, "era", sl_slub_era_name(r.era));
}

void sl_bench_note(sl_bench_exp *e, const char *note)
{
    if (e->nnotes < SL_BENCH_MAX_NOTES)
        e->notes[e->nnotes++] = note;
}

sl_bench_meas *sl_bench_add_meas(sl_bench_exp *e, const sl_bench_meas *m)
{
    e->meas = grow(e->meas, &e->capmeas, e->nmeas, sizeof *e->meas);
    e->meas[e->nmeas] = *m;
    return &e->meas[e->nmeas++];
}

sl_bench_ratio *sl_bench_add_ratio(sl_bench_exp *e, const sl_bench_ratio *q)
{
    e->ratios = grow(e->ratios, &e->capratios, e->nratios, sizeof *e->ratios);
    e->ratios[e->nratios] = *q;
    return &e->ratios[e->nratios++];
}

const sl_bench_meas *sl_bench_find(const sl_bench_exp *e, const char *group, const char *row, const char *variant,
                                   const char *phase)
{
    for (size_t i = 0; i < e->nmeas; i++) {
        const sl_bench_meas *m = &e->meas[i];
        if (!strcmp(m->group, group) && !strcmp(m->row, row) && !strcmp(m->variant, variant) &&
            !strcmp(m->phase, phase ? phase : ""))
            return m;
    }
    return NULL;
}

void sl_bench_report_free(sl_bench_report *r)
{
    for (unsigned i = 0; i < r->nexps; i++) {
        free(r->exps[i]->meas);
        free(r->exps[i]->ratios);
        free(r->exps[i]);
    }
    r->nexps = 0;
}

/* ------------------------------------------------------------------ */
/* Table                                                               */

static void table_machine(const sl_bench_report *r, FILE *f)
{
    const sl_bench_machine *m = &r->machine;
    fprintf(f, "# CPU: %s, %u cores%s; TSC %.3f MHz (calibrated)%s%s\n", m->cpu_model, m->cores,
            m->hypervisor ? " (virtual machine)" : "", m->tsc_hz / 1e6, m->constant_tsc ? ", constant_tsc" : "",
            m->nonstop_tsc ? ", nonstop_tsc" : "");
    fprintf(f, "# kernel: %s; compiler: %s; %s; pinned to %s%d\n", m->kernel, m->compiler,
            m->bench_build ? "benchmark build" : "NOT a benchmark build (tracing and asserts on)",
            m->pinned_cpu < 0 ? "no CPU" : "CPU ", m->pinned_cpu < 0 ? 0 : m->pinned_cpu);
    if (m->constant_tsc)
        fprintf(f, "# cycles(tsc) count time at the TSC's constant rate, not core clock cycles\n");
    fprintf(f, "# median of %u interleaved repetitions, [min..max] of cycles(tsc)\n", r->opts.reps);
}

/* Index of s in list[0..n-1], appending it when absent; returns the index. */
static unsigned intern(const char **list, unsigned *n, unsigned cap, const char *s)
{
    for (unsigned i = 0; i < *n; i++)
        if (!strcmp(list[i], s))
            return i;
    if (*n < cap)
        list[(*n)++] = s;
    return *n - 1;
}

static const sl_bench_ratio *find_ratio(const sl_bench_exp *e, const sl_bench_meas *m)
{
    for (size_t i = 0; i < e->nratios; i++) {
        const sl_bench_ratio *q = &e->ratios[i];
        if (!strcmp(q->group, m->group) && !strcmp(q->row, m->row) && !strcmp(q->phase, m->phase) &&
            !strcmp(q->a, m->variant))
            return q;
    }
    return NULL;
}

static void table_cell(const sl_bench_exp *e, const sl_bench_meas *m, FILE *f)
{
    if (!m->available) {
        fprintf(f, "%-40s", m->reason);
        return;
    }
    char cell[160];
    int n = snprintf(cell, sizeof cell, "%4.0f cycles(tsc) %7.3f ns [%.0f..%.0f]", m->cycles.median, m->ns.median,
                     m->cycles.min, m->cycles.max);
    const sl_bench_ratio *q = find_ratio(e, m);
    if (!strcmp(e->ratio_style, "best"))
        n += snprintf(cell + n, sizeof cell - (size_t)n, " x%.2f", q ? q->ratio.median : 1.0);
    for (unsigned x = 0; x < m->nextra && n < (int)sizeof cell; x++)
        n += snprintf(cell + n, sizeof cell - (size_t)n, " %s=%.4g", m->extra_name[x], m->extra[x]);
    fprintf(f, "%-40s", cell);
}

static void table_exp(const sl_bench_exp *e, FILE *f)
{
    fprintf(f, "\n== %s: %s", e->name, e->title);
    if (e->seed)
        fprintf(f, " (seed %s)", e->seed);
    fprintf(f, "\n   per %s", e->unit);
    for (unsigned i = 0; i < e->nparams; i++) {
        if (e->params[i].str)
            fprintf(f, "; %s=%s", e->params[i].name, e->params[i].str);
        else
            fprintf(f, "; %s=%g", e->params[i].name, e->params[i].num);
    }
    fprintf(f, "\n");
    const char *groups[16];
    unsigned ngroups = 0;
    for (size_t i = 0; i < e->nmeas; i++)
        intern(groups, &ngroups, 16, e->meas[i].group);
    for (unsigned g = 0; g < ngroups; g++) {
        const char *rows[64];
        unsigned ncols = 0, nrows = 0;
        char colname[24][SL_BENCH_NAME + 20];
        const sl_bench_meas *colm[24];
        for (size_t i = 0; i < e->nmeas; i++) {
            const sl_bench_meas *m = &e->meas[i];
            if (strcmp(m->group, groups[g]))
                continue;
            char key[SL_BENCH_NAME + 20];
            snprintf(key, sizeof key, "%s%s%s", m->variant, m->phase[0] ? " " : "", m->phase);
            unsigned c = 0;
            for (; c < ncols; c++)
                if (!strcmp(colname[c], key))
                    break;
            if (c == ncols && ncols < 24) {
                snprintf(colname[ncols], sizeof colname[ncols], "%s", key);
                colm[ncols] = m;
                ncols++;
            }
            intern(rows, &nrows, 64, m->row);
        }
        int w = 4;
        for (unsigned r = 0; r < nrows; r++)
            w = (int)strlen(rows[r]) > w ? (int)strlen(rows[r]) : w;
        fprintf(f, "-- %s\n%*s", groups[g], w, "");
        for (unsigned c = 0; c < ncols; c++)
            fprintf(f, " - %-40s", colname[c]);
        fprintf(f, "\n");
        for (unsigned r = 0; r < nrows; r++) {
            fprintf(f, "%*s", w, rows[r]);
            for (unsigned c = 0; c < ncols; c++) {
                const sl_bench_meas *m = sl_bench_find(e, groups[g], rows[r], colm[c]->variant, colm[c]->phase);
                fprintf(f, " - ");
                if (m)
                    table_cell(e, m, f);
                else
                    fprintf(f, "%-40s", "");
            }
            if (strcmp(e->ratio_style, "best")) {
                for (size_t i = 0; i < e->nratios; i++) {
                    const sl_bench_ratio *q = &e->ratios[i];
                    if (strcmp(q->group, groups[g]) || strcmp(q->row, rows[r]))
                        continue;
                    fprintf(f, " -");
                    if (q->phase[0])
                        fprintf(f, " %s", q->phase);
                    if (!strcmp(e->ratio_style, "improvement"))
                        fprintf(f, " %s improved %.1f%% over %s", q->a, q->improvement_pct, q->b);
                    else
                        fprintf(f, " %s/%s %.3f [%.3f..%.3f]", q->a, q->b, q->ratio.median, q->ratio.min, q->ratio.max);
                }
            }
            fprintf(f, "\n");
        }
    }
    for (unsigned i = 0; i < e->nnotes; i++)
        fprintf(f, "   note: %s\n", e->notes[i]);
}

/* ------------------------------------------------------------------ */
/* CSV                                                                 */

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_write(const sl_bench_report *r, FILE *f)
{
    const sl_bench_machine *m = &r->machine;
    fprintf(f, "# cpu=%s; cores=%u; tsc_hz=%.0f; constant_tsc=%d; kernel=%s; bench_build=%d\n", m->cpu_model, m->cores,
            m->tsc_hz, m->constant_tsc, m->kernel, m->bench_build);
    fprintf(f, "kind,experiment,group,row,variant,phase,available,ops,reps,cycles_median,cycles_min,"
               "cycles_max,ns_median,ns_min,ns_max,period_ms,extra,ratio_to,ratio_median,ratio_min,"
               "ratio_max,improvement_pct,reason\n");
    for (unsigned x = 0; x < r->nexps; x++) {
        const sl_bench_exp *e = r->exps[x];
        for (size_t i = 0; i < e->nmeas; i++) {
            const sl_bench_meas *q = &e->meas[i];
            fprintf(f, "measurement,%s,", e->name);
            csv_field(f, q->group);
            fputc(',', f);
            csv_field(f, q->row);
            fputc(',', f);
            csv_field(f, q->variant);
            fprintf(f, ",%s,%d,", q->phase, q->available);
            if (q->available) {
                fprintf(f, "%llu,%u,%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%.3f,", (unsigned long long)q->ops, q->reps,
                        q->cycles.median, q->cycles.min, q->cycles.max, q->ns.median, q->ns.min, q->ns.max,
                        q->period_ms);
                for (unsigned k = 0; k < q->nextra; k++)
                    fprintf(f, "%s%s=%.6g", k ? ";" : "", q->extra_name[k], q->extra[k]);
            } else {
                fprintf(f, ",,,,,,,,,");
            }
            fprintf(f, ",,,,,,");
            csv_field(f, q->reason);
            fputc('\n', f);
        }
        for (size_t i = 0; i < e->nratios; i++) {
            const sl_bench_ratio *q = &e->ratios[i];
            fprintf(f, "ratio,%s,", e->name);
            csv_field(f, q->group);
            fputc(',', f);
            csv_field(f, q->row);
            fputc(',', f);
            csv_field(f, q->a);
            fprintf(f, ",%s,1,,,,,,,,,,,", q->phase);
            csv_field(f, q->b);
            fprintf(f, ",%.4f,%.4f,%.4f,%.2f,\n", q->ratio.median, q->ratio.min, q->ratio.max, q->improvement_pct);
        }
    }
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

/* A finite number, or 0 (JSON has no NaN or infinity). */
static void jnum(FILE *f, double v)
{
    if (!isfinite(v))
        v = 0;
    if (v == floor(v) && fabs(v) < 1e15)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.6g", v);
}

static void jstat(FILE *f, const char *key, sl_bench_stat s)
{
    fprintf(f, "\"%s\": {\"median\": ", key);
    jnum(f, s.median);
    fprintf(f, ", \"min\": ");
    jnum(f, s.min);
    fprintf(f, ", \"max\": ");
    jnum(f, s.max);
    fprintf(f, "}");
}

static void jkey_str(FILE *f, const char *key, const char *v)
{
    fprintf(f, "\"%s\": ", key);
    sl_cli_json_string(f, v);
}

static void json_exp(const sl_bench_exp *e, FILE *f)
{
    fprintf(f, "    {");
    jkey_str(f, "name", e->name);
    fprintf(f, ", ");
    jkey_str(f, "title", e->title);
    fprintf(f, ", \"seed\": ");
    if (e->seed)
        sl_cli_json_string(f, e->seed);
    else
        fprintf(f, "null");
    fprintf(f, ", ");
    jkey_str(f, "unit", e->unit);
    fprintf(f, ", ");
    jkey_str(f, "ratio_style", e->ratio_style);
    fprintf(f, ",\n     \"params\": {");
    for (unsigned i = 0; i < e->nparams; i++) {
        fprintf(f, "%s", i ? ", " : "");
        if (e->params[i].str)
            jkey_str(f, e->params[i].name, e->params[i].str);
        else {
            fprintf(f, "\"%s\": ", e->params[i].name);
            jnum(f, e->params[i].num);
        }
    }
    fprintf(f, "},\n     \"notes\": [");
    for (unsigned i = 0; i < e->nnotes; i++) {
        fprintf(f, "%s", i ? ", " : "");
        sl_cli_json_string(f, e->notes[i]);
    }
    fprintf(f, "],\n     \"measurements\": [");
    for (size_t i = 0; i < e->nmeas; i++) {
        const sl_bench_meas *m = &e->meas[i];
        fprintf(f, "%s\n      {", i ? "," : "");
        jkey_str(f, "group", m->group);
        fprintf(f, ", ");
        jkey_str(f, "row", m->row);
        fprintf(f, ", ");
        jkey_str(f, "variant", m->variant);
        fprintf(f, ", ");
        jkey_str(f, "phase", m->phase);
        fprintf(f, ", \"available\": %s", m->available ? "true" : "false");
        if (!m->available) {
            fprintf(f, ", ");
            jkey_str(f, "reason", m->reason);
        } else {
            fprintf(f, ", \"ops\": %llu, \"reps\": %u, ", (unsigned long long)m->ops, m->reps);
            jstat(f, "cycles", m->cycles);
            fprintf(f, ", ");
            jstat(f, "ns", m->ns);
            fprintf(f, ", \"period_ms\": ");
            jnum(f, m->period_ms);
            fprintf(f, ", \"extra\": {");
            for (unsigned x = 0; x < m->nextra; x++) {
                fprintf(f, "%s\"%s\": ", x ? ", " : "", m->extra_name[x]);
                jnum(f, m->extra[x]);
            }
            fprintf(f, "}");
        }
        fprintf(f, "}");
    }
    fprintf(f, "],\n     \"ratios\": [");
    for (size_t i = 0; i < e->nratios; i++) {
        const sl_bench_ratio *q = &e->ratios[i];
        fprintf(f, "%s\n      {", i ? "," : "");
        jkey_str(f, "group", q->group);
        fprintf(f, ", ");
        jkey_str(f, "row", q->row);
        fprintf(f, ", ");
        jkey_str(f, "phase", q->phase);
        fprintf(f, ", ");
        jkey_str(f, "a", q->a);
        fprintf(f, ", ");
        jkey_str(f, "b", q->b);
        fprintf(f, ", ");
        jstat(f, "ratio", q->ratio);
        fprintf(f, ", \"improvement_pct\": ");
        jnum(f, q->improvement_pct);
        fprintf(f, "}");
    }
    fprintf(f, "]}");
}

static void json_write(const sl_bench_report *r, FILE *f)
{
    const sl_bench_machine *m = &r->machine;
    fprintf(f, "{\n  \"schema\": \"%s\",\n  \"machine\": {", SCHEMA_ID);
    jkey_str(f, "cpu_model", m->cpu_model);
    fprintf(f, ", ");
    jkey_str(f, "kernel", m->kernel);
    fprintf(f, ", ");
    jkey_str(f, "compiler", m->compiler);
    fprintf(f, ", \"cores\": %u, \"tsc_hz\": ", m->cores);
    jnum(f, round(m->tsc_hz));
    fprintf(f,
            ", \"constant_tsc\": %s, \"nonstop_tsc\": %s, \"hypervisor\": %s, \"bench_build\": %s, "
            "\"pinned_cpu\": %d},\n",
            m->constant_tsc ? "true" : "false", m->nonstop_tsc ? "true" : "false", m->hypervisor ? "true" : "false",
            m->bench_build ? "true" : "false", m->pinned_cpu);
    fprintf(f, "  \"options\": {\"reps\": %u, \"loops\": %llu, \"min_time_us\": %u, \"quick\": %s},\n", r->opts.reps,
            (unsigned long long)r->opts.loops, r->opts.min_time_us, r->opts.quick ? "true" : "false");
    fprintf(f, "  \"experiments\": [\n");
    for (unsigned i = 0; i < r->nexps; i++) {
        json_exp(r->exps[i], f);
        fprintf(f, "%s\n", i + 1 < r->nexps ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}

/* ------------------------------------------------------------------ */
/* time_bench                                                          */

/*
 * time_bench_calc_stats + the pr_info of time_bench_loop:
 *   Type:TXT Per elem: C cycles(tsc) Q.DDD ns (step:S) - (measurement period
 *   time:SEC.NNNNNNNNN sec time_interval:NS) - (invoke count:N tsc_interval:T)
 * TXT is "experiment [group] [row] variant [phase]" (the group when it is
 * not the experiment's name, the row when it is not the step); the step is
 * the row when it is a number (the bulk size), else 1.  The intervals are
 * the median repetition's: per-operation median times the operations.
 */
static void time_bench_line(const sl_bench_exp *e, const sl_bench_meas *m, FILE *f)
{
    char *end;
    unsigned long step = strtoul(m->row, &end, 10);
    bool numeric_row = *m->row && !*end;
    fprintf(f, "Type:%s", e->name);
    if (strcmp(m->group, e->name))
        fprintf(f, " %s", m->group);
    if (!numeric_row)
        fprintf(f, " %s", m->row);
    fprintf(f, " %s%s%s", m->variant, *m->phase ? " " : "", m->phase);
    if (!m->available) {
        fprintf(f, " not measured: %s\n", m->reason);
        return;
    }
    unsigned long long ops = m->ops ? m->ops : 1;
    unsigned long long time_interval = llround(m->ns.median * (double)ops);
    unsigned long long tsc_interval = llround(m->cycles.median * (double)ops);
    fprintf(f,
            " Per elem: %llu cycles(tsc) %llu.%03llu ns (step:%lu) - (measurement period time:%llu.%09llu sec "
            "time_interval:%llu) - (invoke count:%llu tsc_interval:%llu)\n",
            tsc_interval / ops, time_interval / ops, time_interval % ops * 1000 / ops, numeric_row ? step : 1,
            time_interval / 1000000000ull, time_interval % 1000000000ull, time_interval, ops, tsc_interval);
}

int sl_bench_report_write(const sl_bench_report *r, FILE *f)
{
    switch (r->opts.format) {
    case SL_FMT_TABLE:
        table_machine(r, f);
        for (unsigned i = 0; i < r->nexps; i++)
            table_exp(r->exps[i], f);
        break;
    case SL_FMT_CSV:
        csv_write(r, f);
        break;
    case SL_FMT_JSON:
        json_write(r, f);
        break;
    case SL_FMT_TIME_BENCH:
        for (unsigned i = 0; i < r->nexps; i++)
            for (size_t k = 0; k < r->exps[i]->nmeas; k++)
                time_bench_line(r->exps[i], &r->exps[i]->meas[k], f);
        break;
    }
    return ferror(f) ? -1 : 0;
}

/* The first measurement's reason when no measurement of the report succeeded (NULL when one did). */
static const char *all_failed(const sl_bench_report *r)
{
    const char *first = NULL;
    for (unsigned i = 0; i < r->nexps; i++)
        for (size_t k = 0; k < r->exps[i]->nmeas; k++) {
            const sl_bench_meas *m = &r->exps[i]->meas[k];
            if (m->available)
                return NULL;
            if (!first)
                first = m->reason;
        }
    return first ? first : "no row was measured";
}

int sl_bench_report_finish(sl_bench_report *r, const char *cmd)
{
    /* -o goes through sl_outfile: an existing report is replaced only by a complete one, never a device. */
    sl_outfile out;
    char err[512];
    if (sl_outfile_open(&out, r->opts.out ? r->opts.out : "-", NULL, err, sizeof err) != 0) {
        fprintf(stderr, "slablab %s: -o: %s\n", cmd, err);
        sl_bench_report_free(r);
        return 1;
    }
    int rc = sl_bench_report_write(r, out.f);
    const char *failed = all_failed(r);
    char reason[128] = "";
    if (failed)
        snprintf(reason, sizeof reason, "%s", failed);
    sl_bench_report_free(r);
    if (rc) {
        sl_outfile_abort(&out);
        fprintf(stderr, "slablab %s: write error\n", cmd);
        return 1;
    }
    if (sl_outfile_commit(&out, err, sizeof err) != 0) {
        fprintf(stderr, "slablab %s: %s\n", cmd, err);
        return 1;
    }
    if (failed) {
        fprintf(stderr, "slablab %s: every row failed or was not available (%s): nothing was measured\n", cmd, reason);
        return 1;
    }
    return 0;
}
