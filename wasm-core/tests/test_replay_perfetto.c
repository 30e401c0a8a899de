/*
 * test_replay_perfetto.c - the Perfetto (Chrome JSON) export of a real
 * capture, parsed back: one complete slice per replayed operation on its
 * CPU's track, slices of a track never overlapping, a flow from each
 * allocation to its free exactly when the free ran on another CPU (start
 * inside the allocation's slice, end inside the free's), each cache's last
 * counter sample equal to the replay's final state, and a failing sink
 * reported.
 */
#include "replay_util.h"

typedef struct collect {
    sl_replay *r;
    sl_perfetto *pf;
    sl_strbuf out;
    uint64_t ops, remote_frees;
    unsigned fail_after; /* sink calls before it fails (0: never) */
    unsigned sink_calls;
} collect;

static bool sink(void *user, const void *data, size_t len)
{
    collect *c = user;
    if (c->fail_after && ++c->sink_calls >= c->fail_after)
        return false;
    return sl_strbuf_append(&c->out, data, len);
}

static const char *names(void *user, unsigned cache)
{
    sl_replay_cache_info ci;
    return sl_replay_cache_info_get(((collect *)user)->r, cache, 0, &ci) == SL_OK ? ci.name : NULL;
}

static void on_op(void *user, const sl_replay_op *op)
{
    collect *c = user;
    c->ops++;
    c->remote_frees += op->kind == SL_REPLAY_OP_FREE && op->alloc_cpu != op->cpu;
    sl_perfetto_op(c->pf, op);
}

static int export_fixture(collect *c, uint64_t interval)
{
    size_t len;
    uint8_t *data = read_fixture("capture-6.18.slabcap.gz", &len);
    if (!data)
        return SL_EINVAL;
    sl_replay_config cfg = {.on_op = on_op, .user = c};
    if (sl_replay_create(&cfg, &c->r) != SL_OK)
        return SL_ENOMEM;
    sl_perfetto_config pc = {
        .sink = sink, .user = c, .cache_name = names, .names_user = c, .counter_interval_ns = interval};
    c->pf = sl_perfetto_begin(&pc);
    int rc = sl_replay_feed(c->r, data, len, NULL);
    if (rc == SL_OK)
        rc = sl_replay_finish(c->r);
    int end = sl_perfetto_end(c->pf);
    free(data);
    return rc != SL_OK ? rc : end;
}

typedef struct slice_key {
    double tid, ts;
} slice_key;

static bool has_slice(const slice_key *v, size_t n, double tid, double ts)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].tid == tid && v[i].ts == ts)
            return true;
    return false;
}

static void test_export_parses_back(void)
{
    collect c = {0};
    SL_REQUIRE(export_fixture(&c, 0) == SL_OK);
    const char *err = NULL;
    size_t at = 0;
    jl *doc = jl_parse(c.out.data, c.out.len, &err, &at);
    if (!doc)
        fprintf(stderr, "  export does not parse: %s at %zu\n", err, at);
    SL_REQUIRE(doc);
    SL_CHECK(jl_str(doc, "displayTimeUnit") && !strcmp(jl_str(doc, "displayTimeUnit"), "ns"));
    const jl *evs = jl_get(doc, "traceEvents");
    SL_REQUIRE(evs && evs->type == JL_ARR);

    uint64_t slices = 0, flows_s = 0, flows_f = 0;
    double last_end[16];
    for (int i = 0; i < 16; i++)
        last_end[i] = -1;
    bool cpu_named[16] = {false}, procs[3] = {false};
    slice_key *allocs = malloc(evs->n * sizeof *allocs), *frees = malloc(evs->n * sizeof *frees);
    size_t nallocs = 0, nfrees = 0;
    double *flow_start_ids = malloc(evs->n * sizeof(double));
    size_t nstart = 0;
    for (size_t i = 0; i < evs->n; i++) {
        const jl *e = evs->kids[i];
        const char *ph = jl_str(e, "ph");
        SL_REQUIRE(ph);
        double tid = jl_num(e, "tid"), ts = jl_num(e, "ts");
        if (!strcmp(ph, "M")) {
            const char *what = jl_str(e, "name");
            if (!strcmp(what, "process_name"))
                procs[(int)jl_num(e, "pid")] = true;
            else if (!strcmp(what, "thread_name") && tid >= 0 && tid < 16)
                cpu_named[(int)tid] = true;
        } else if (!strcmp(ph, "X")) {
            slices++;
            SL_REQUIRE(tid >= 0 && tid < 16);
            SL_CHECK(cpu_named[(int)tid]); /* named before its first slice */
            double dur = jl_num(e, "dur");
            SL_CHECK(dur > 0);
            SL_CHECK(ts >= last_end[(int)tid] - 1e-9); /* no overlap within a CPU's track */
            last_end[(int)tid] = ts + dur;
            const char *cat = jl_str(e, "cat");
            if (!strcmp(cat, "alloc"))
                allocs[nallocs++] = (slice_key){tid, ts};
            else if (!strcmp(cat, "free"))
                frees[nfrees++] = (slice_key){tid, ts};
            SL_CHECK(jl_str(e, "args.ptr") != NULL && jl_num(e, "args.line") > 0);
        } else if (!strcmp(ph, "s")) {
            flows_s++;
            SL_CHECK(has_slice(allocs, nallocs, tid, ts)); /* starts inside its allocation's slice */
            flow_start_ids[nstart++] = jl_num(e, "id");
        } else if (!strcmp(ph, "f")) {
            flows_f++;
            SL_CHECK(jl_str(e, "bp") && !strcmp(jl_str(e, "bp"), "e"));
            SL_CHECK(has_slice(frees, nfrees, tid, ts)); /* ends inside the free's slice */
            SL_CHECK(nstart && flow_start_ids[nstart - 1] == jl_num(e, "id"));
        } else {
            SL_CHECK(!strcmp(ph, "C"));
        }
    }
    SL_CHECK(procs[1] && procs[2]);
    SL_CHECK_EQ(slices, c.ops);
    SL_CHECK_EQ(flows_s, c.remote_frees);
    SL_CHECK_EQ(flows_f, c.remote_frees);
    SL_CHECK(c.remote_frees > 10);

    /* Each cache's last counter sample is the replay's end state. */
    unsigned checked = 0;
    for (unsigned ci = 0; ci < sl_replay_cache_count(c.r); ci++) {
        sl_replay_cache_info info;
        sl_replay_cache_info_get(c.r, ci, 0, &info);
        const jl *last = NULL;
        for (size_t i = 0; i < evs->n; i++) {
            const jl *e = evs->kids[i];
            if (!strcmp(jl_str(e, "ph"), "C") && !strcmp(jl_str(e, "name"), info.name))
                last = e;
        }
        if (!last || !info.modelled)
            continue;
        checked++;
        SL_CHECK_EQ(jl_num(last, "args.live"), info.live);
        SL_CHECK_EQ(jl_num(last, "args.slabs"), info.slabs);
        SL_CHECK_EQ(jl_num(last, "args.partial"), info.partial);
    }
    SL_CHECK(checked > 10);
    free(allocs);
    free(frees);
    free(flow_start_ids);
    jl_free(doc);
    sl_strbuf_free(&c.out);
    sl_replay_destroy(c.r);
}

/* A counter interval thins the samples; the end state is still written. */
static void test_counter_interval(void)
{
    collect every = {0}, thin = {0};
    SL_REQUIRE(export_fixture(&every, 0) == SL_OK);
    SL_REQUIRE(export_fixture(&thin, 1000000) == SL_OK);
    size_t n_every = 0, n_thin = 0;
    for (const char *p = every.out.data; (p = strstr(p, "\"ph\": \"C\"")); p++)
        n_every++;
    for (const char *p = thin.out.data; (p = strstr(p, "\"ph\": \"C\"")); p++)
        n_thin++;
    SL_CHECK(n_thin < n_every / 2);
    SL_CHECK(n_thin > 0);
    sl_strbuf_free(&every.out);
    sl_strbuf_free(&thin.out);
    sl_replay_destroy(every.r);
    sl_replay_destroy(thin.r);
}

static void test_failing_sink_is_reported(void)
{
    collect c = {.fail_after = 3};
    SL_CHECK_EQ(export_fixture(&c, 0), SL_EINVAL);
    sl_strbuf_free(&c.out);
    sl_replay_destroy(c.r);
}

int main(void)
{
    SL_RUN(test_export_parses_back);
    SL_RUN(test_counter_interval);
    SL_RUN(test_failing_sink_is_reported);
    return sl_check_summary();
}
