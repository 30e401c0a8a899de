/*
 * pcpu_workload.c - the workload of commit 40064aeca35c's evaluation:
 * allocate N objects of one size, then free them in order, alternating, or
 * in reverse, timing each phase.
 *
 * Orders.  inorder frees object 0, 1, 2, ...; alternate frees every other
 * object first (0, 2, 4, ...) and then the rest (1, 3, 5, ...); reverse
 * frees the last allocated first.
 *
 * Second-half prefill (the seed's "pages are second half filled" variant).
 * Before timing, filler objects of the same size and alignment are
 * allocated until the chunks they fill could hold the workload twice; then
 * the fillers in the first half of every chunk are freed, last first.  The
 * workload therefore allocates into chunks whose first half is free and
 * whose second half is full, the case where the area map must memmove the
 * whole second half's entries on every split.
 *
 * Counts.  Besides the two times the result holds the timed phases' work
 * (sl_pcpu_work: chunks tried, blocks or map entries visited, bits searched,
 * memmoves and the entries they moved), which is the same on every run.
 *
 * Budget.  The clock is checked every 256 operations; once alloc + free
 * time passes the budget the run stops and says how many objects it had
 * allocated and freed.  What is still allocated is released by destroying
 * the instance, untimed.  Single-threaded; the instance is private.
 */
#include "pcpu_internal.h"

#include <stdlib.h>
#include <string.h>

const char *sl_pcpu_order_name(sl_pcpu_order o)
{
    switch (o) {
    case SL_PCPU_FREE_INORDER:
        return "inorder";
    case SL_PCPU_FREE_ALTERNATE:
        return "alternate";
    case SL_PCPU_FREE_REVERSE:
        return "reverse";
    }
    return "?";
}

bool sl_pcpu_parse_order(const char *s, sl_pcpu_order *out)
{
    for (int o = 0; o < 3; o++) {
        if (s && !strcmp(s, sl_pcpu_order_name((sl_pcpu_order)o))) {
            *out = (sl_pcpu_order)o;
            return true;
        }
    }
    return false;
}

/* Fills chunks with fillers, then frees the first half of each.  Returns SL_OK or an error. */
static int prefill_second_half(sl_pcpu *pc, const sl_pcpu_workload *w)
{
    size_t bytes = (size_t)w->objects * w->size * 2;
    unsigned long n = (unsigned long)(bytes / w->size);
    void **fill = malloc(sizeof(void *) * n);
    if (!fill)
        return SL_ENOMEM;
    unsigned long got = 0;
    int rc = SL_OK;
    for (; got < n && rc == SL_OK; got++)
        rc = sl_pcpu_alloc(pc, 0, w->size, w->align, &fill[got]);
    if (rc != SL_OK)
        got--;
    for (unsigned long i = got; i-- > 0 && rc == SL_OK;) {
        /* The offset inside its chunk decides: fillers in a chunk's first half go. */
        unsigned unit;
        sl_pcpu_chunk *c = sli_pcpu_chunk_lookup(pc, fill[i], &unit);
        if (c && (char *)fill[i] - c->base < pc->unit_size / 2)
            rc = sl_pcpu_free(pc, 0, fill[i]);
    }
    free(fill);
    return rc;
}

static bool over(uint64_t t0, uint64_t spent, uint64_t budget)
{
    return budget && spent + (sl_time_ns() - t0) > budget;
}

int sl_pcpu_run_workload(const sl_pcpu_workload *w, sl_pcpu_workload_result *out)
{
    memset(out, 0, sizeof *out);
    if (!w->objects || !w->size)
        return SL_EINVAL;
    sl_pcpu pc;
    int rc = sl_pcpu_init(&pc, &w->cfg);
    if (rc != SL_OK)
        return rc;
    void **obj = malloc(sizeof(void *) * w->objects);
    if (!obj) {
        sl_pcpu_destroy(&pc);
        return SL_ENOMEM;
    }
    if (w->prefill_second_half && (rc = prefill_second_half(&pc, w)) != SL_OK) {
        free(obj);
        sl_pcpu_destroy(&pc);
        return rc;
    }

    const sl_pcpu_work before = pc.work;
    uint64_t t0 = sl_time_ns();
    unsigned long i;
    for (i = 0; i < w->objects; i++) {
        if ((i & 255) == 0 && over(t0, 0, w->budget_ns)) {
            out->over_budget = true;
            break;
        }
        if (sl_pcpu_alloc(&pc, 0, w->size, w->align, &obj[i]) != SL_OK) {
            out->alloc_failed = true;
            break;
        }
    }
    out->alloc_ns = sl_time_ns() - t0;
    out->allocated = i;
    out->chunks = pc.nr_chunks;

    if (!out->over_budget && !out->alloc_failed) {
        unsigned long n = out->allocated, half = (n + 1) / 2;
        t0 = sl_time_ns();
        for (i = 0; i < n; i++) {
            if ((i & 255) == 0 && over(t0, out->alloc_ns, w->budget_ns)) {
                out->over_budget = true;
                break;
            }
            unsigned long k = i;
            if (w->order == SL_PCPU_FREE_REVERSE)
                k = n - 1 - i;
            else if (w->order == SL_PCPU_FREE_ALTERNATE)
                k = i < half ? 2 * i : 2 * (i - half) + 1;
            sl_pcpu_free(&pc, 0, obj[k]);
        }
        out->free_ns = sl_time_ns() - t0;
        out->freed = i;
    }
    out->work = (sl_pcpu_work){.chunks = pc.work.chunks - before.chunks,
                               .blocks = pc.work.blocks - before.blocks,
                               .bits = pc.work.bits - before.bits,
                               .memmoves = pc.work.memmoves - before.memmoves,
                               .entries_moved = pc.work.entries_moved - before.entries_moved};
    free(obj);
    sl_pcpu_destroy(&pc);
    return SL_OK;
}
