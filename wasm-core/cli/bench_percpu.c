/*
 * bench_percpu.c - the percpu experiment of `slablab all`: seed 003's
 * workload (allocate N objects of one size, free them in order,
 * alternating or in reverse; and the variant whose chunks start with their
 * second half filled) on the percpu model's area map, bitmap and scan-hint
 * allocators, through the model's own sl_pcpu_run_workload().  The
 * standalone command with the seed's full parameters is the percpu
 * model's `slablab percpu`; this file puts the same runs into the
 * benchmark report, interleaving the three allocators row by row.
 *
 * The workload times itself with the wall clock (each run is one long
 * phase on a fresh instance), so here ns are measured and cycles(tsc) are
 * those ns at the calibrated TSC rate.
 */
#include "bench.h"

#include "../src/percpu/percpu.h"

#include <string.h>

typedef struct pcpu_arg {
    sl_pcpu_workload w;
    double tsc_per_ns;
} pcpu_arg;

static int time_workload(void *arg, uint64_t loops, sl_bench_rec *rec)
{
    const pcpu_arg *a = arg;
    for (uint64_t l = 0; l < loops; l++) {
        sl_pcpu_workload_result res;
        int rc = sl_pcpu_run_workload(&a->w, &res);
        if (rc != SL_OK)
            return rc;
        if (res.alloc_failed)
            return SL_ENOMEM;
        if (res.over_budget)
            return SL_EBUDGET;
        uint64_t ns[2] = {res.alloc_ns, res.free_ns};
        for (unsigned p = 0; p < 2; p++) {
            rec->ns[p] += ns[p];
            rec->tsc[p] += (uint64_t)((double)ns[p] * a->tsc_per_ns);
            rec->ops[p] += a->w.objects;
        }
        rec->nphases = 2;
    }
    return SL_OK;
}

int sl_bench_percpu_run(sl_bench_report *r, const sl_bench_opts *o, unsigned long objects, unsigned budget_s)
{
    sl_bench_exp *e = sl_bench_exp_new(r, "percpu", "percpu allocators: allocate N objects, then free them", "003",
                                       "object (alloc or free)", "ratio");
    sl_bench_param_num(e, "objects", (double)objects);
    sl_bench_param_num(e, "units", 2);
    sl_bench_param_num(e, "align", 4);
    sl_bench_param_num(e, "budget_s", budget_s);
    sl_bench_note(
        e, "the workload times itself with the wall clock; cycles(tsc) here are its ns at the calibrated TSC rate");
    sl_bench_note(e, "seed 003 used 1048576 objects; `slablab percpu` (the percpu model's command) runs that");
    static const size_t sizes[] = {4, 16, 64, 256, 1024};
    static const char *const phases[] = {"alloc", "free"};
    static const struct {
        const char *group;
        sl_pcpu_order order;
        bool prefill;
    } groups[] = {{"inorder", SL_PCPU_FREE_INORDER, false},
                  {"alternate", SL_PCPU_FREE_ALTERNATE, false},
                  {"reverse", SL_PCPU_FREE_REVERSE, false},
                  {"second-half", SL_PCPU_FREE_INORDER, true}};
    pcpu_arg args[SL_PCPU_NKINDS];
    sl_bench_variant v[SL_PCPU_NKINDS];
    int rc = SL_OK;
    for (unsigned g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            if (o->quick && (g % 3 || (sizes[s] != 4 && sizes[s] != 1024)))
                continue;
            for (unsigned k = 0; k < SL_PCPU_NKINDS; k++) {
                memset(&args[k], 0, sizeof args[k]);
                args[k].w.cfg.kind = (sl_pcpu_kind)k;
                args[k].w.cfg.nr_units = 2;
                args[k].w.size = sizes[s];
                args[k].w.align = 4;
                args[k].w.objects = objects;
                args[k].w.order = groups[g].order;
                args[k].w.prefill_second_half = groups[g].prefill;
                args[k].w.budget_ns = (uint64_t)budget_s * 1000000000ull;
                args[k].tsc_per_ns = r->machine.tsc_hz / 1e9;
                v[k] = (sl_bench_variant){.name = sl_pcpu_kind_name((sl_pcpu_kind)k),
                                          .fn = time_workload,
                                          .arg = &args[k],
                                          .available = true,
                                          .fixed_loops = 1};
            }
            char row[16];
            snprintf(row, sizeof row, "%zuB", sizes[s]);
            int rrc = sl_bench_row(e, o, groups[g].group, row, v, SL_PCPU_NKINDS, phases, NULL, SL_PCPU_AREAMAP);
            if (rrc != SL_OK && rrc != SL_EBUDGET)
                rc = rrc;
        }
    }
    return rc == SL_OK ? 0 : 1;
}
