/*
 * test_replay_fixtures.c - the traces recorded on Linux 6.18
 * (tests/fixtures/replay) end to end, and the replay's rules on small
 * hand-written traces.
 *
 * The fixtures are checked against an oracle written here independently
 * of the replay's parser (substring search for the event name and ptr=, a
 * plain hash set of live pointers): event counts, matched pairs, frees of
 * objects allocated before the trace, kfree(NULL), allocations of a
 * pointer still live, live at the end.  Then: model.errors = 0, the
 * accounting identities, the model's slab counts, the geometry against
 * the capture's own sysfs, the three trace-cmd formats agreeing, two
 * kernel models side by side, the --cache filter, pointer lookups, the
 * percpu chunks.  The rules: kmalloc cache names from gfp flags and kernel
 * version, remote frees taking the model's slow path, model errors naming
 * their line.
 */
#include "replay_util.h"

#include "../src/replay/replay_internal.h"

/* ---- the oracle --------------------------------------------------------- */

typedef struct oracle {
    uint64_t allocs, frees, matched, freed_unknown, null_frees, untraced, pcpu_allocs, pcpu_frees, pcpu_unknown;
    uint64_t *set; /* open addressing, 0 = empty, tombstone = 1 */
    size_t cap;
    uint64_t *pset;
} oracle;

static bool set_op(uint64_t *set, size_t cap, uint64_t key, int op) /* 0 find, 1 insert, 2 erase */
{
    size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) % cap, tomb = SIZE_MAX;
    for (size_t probes = 0; probes < cap; probes++, i = (i + 1) % cap) {
        if (set[i] == key) {
            if (op == 2)
                set[i] = 1;
            return true;
        }
        if (set[i] == 1 && tomb == SIZE_MAX)
            tomb = i;
        if (set[i] == 0) {
            if (op == 1)
                set[tomb != SIZE_MAX ? tomb : i] = key;
            return false;
        }
    }
    if (op == 1 && tomb != SIZE_MAX)
        set[tomb] = key;
    return false;
}

static uint64_t ptr_of(const char *line, const char *field)
{
    const char *p = strstr(line, field);
    if (!p)
        return 0;
    p += strlen(field);
    if (!strncmp(p, "(nil)", 5) || !strncmp(p, "(null)", 6))
        return 2;
    return strtoull(p, NULL, 16) + 2; /* keys 0 and 1 are the set's; NULL is 2 */
}

static void oracle_line(oracle *o, const char *line)
{
    bool alloc = strstr(line, " kmalloc: ") || strstr(line, " kmem_cache_alloc: ") || strstr(line, " kmalloc_node: ") ||
                 strstr(line, " kmem_cache_alloc_node: ");
    bool free_ = strstr(line, " kfree: ") || strstr(line, " kmem_cache_free: ");
    if (alloc || free_) {
        uint64_t p = ptr_of(line, " ptr=");
        if (alloc) {
            o->allocs++;
            if (set_op(o->set, o->cap, p, 0))
                o->untraced++;
            else
                set_op(o->set, o->cap, p, 1);
        } else {
            o->frees++;
            if (p == 2)
                o->null_frees++;
            else if (set_op(o->set, o->cap, p, 2))
                o->matched++;
            else
                o->freed_unknown++;
        }
    } else if (strstr(line, " percpu_alloc_percpu: ")) {
        o->pcpu_allocs++;
        set_op(o->pset, o->cap, ptr_of(line, " ptr="), 1);
    } else if (strstr(line, " percpu_free_percpu: ")) {
        if (set_op(o->pset, o->cap, ptr_of(line, " ptr="), 2))
            o->pcpu_frees++;
        else
            o->pcpu_unknown++;
    }
}

/* The trace text of a fixture: gunzipped, and out of its archive when it is one. */
static char *fixture_text(const char *name, size_t *len)
{
    size_t n;
    uint8_t *raw = read_fixture(name, &n);
    if (!raw)
        return NULL;
    sl_strbuf out = {0};
    if (n > 2 && raw[0] == 0x1f && raw[1] == 0x8b) {
        sli_gunzip *z = malloc(sizeof *z);
        sli_gunzip_init(z);
        size_t off = 0;
        while (off < n || z->wr > z->rd) {
            size_t used;
            if (sli_gunzip_run(z, raw + off, n - off, &used) != SLI_GZ_NEED_INPUT)
                break;
            off += used;
            const uint8_t *p;
            size_t k = sli_gunzip_pending(z, &p);
            sl_strbuf_append(&out, p, k);
            sli_gunzip_take(z, k);
            if (!k && !used)
                break;
        }
        sli_gunzip_fini(z);
        free(z);
    } else {
        sl_strbuf_append(&out, raw, n);
    }
    free(raw);
    if (out.len > 512 && !memcmp(out.data + 257, "ustar", 5)) {
        /* A plain ustar walk: name at 0, octal size at 124. */
        for (size_t off = 0; off + 512 <= out.len;) {
            const char *h = out.data + off;
            if (!h[0])
                break;
            size_t size = strtoul(h + 124, NULL, 8);
            if (!strcmp(h, "trace.txt")) {
                char *t = malloc(size + 1);
                memcpy(t, h + 512, size);
                t[size] = 0;
                *len = size;
                sl_strbuf_free(&out);
                return t;
            }
            off += 512 + (size + 511) / 512 * 512;
        }
    }
    *len = out.len;
    return out.data;
}

static void run_oracle(const char *text, oracle *o)
{
    memset(o, 0, sizeof *o);
    o->cap = 1 << 20;
    o->set = calloc(o->cap, sizeof *o->set);
    o->pset = calloc(o->cap, sizeof *o->pset);
    char *copy = strdup(text);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n"))
        oracle_line(o, line);
    free(copy);
}

static uint64_t oracle_live(const oracle *o)
{
    uint64_t n = 0;
    for (size_t i = 0; i < o->cap; i++)
        n += o->set[i] > 1;
    return n;
}

static void oracle_free(oracle *o)
{
    free(o->set);
    free(o->pset);
}

/* ---- fixtures ------------------------------------------------------------ */

/* An events.by_kind count (absent: none of that kind). */
static double kind(const jl *j, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "events.by_kind.%s", name);
    double v = jl_num(j, path);
    return v < 0 ? 0 : v;
}

/* Everything that must hold for any consistent trace. */
static void check_consistent(const jl *j, const char *what)
{
    const char *status = jl_str(j, "status");
    SL_CHECK(status && !strcmp(status, "ok"));
    SL_CHECK_EQ(jl_num(j, "model.errors"), 0);
    const jl *errs = jl_get(jl_get(j, "model"), "error_list");
    if (errs && errs->n)
        fprintf(stderr, "  %s: first model error: line %g: %s\n", what, jl_num(errs->kids[0], "line"),
                jl_str(errs->kids[0], "message"));
    SL_CHECK_EQ(jl_num(j, "events.lines"), jl_num(j, "events.parsed") + jl_num(j, "events.skipped"));
    double allocs = 0, caches_untraced = 0;
    const jl *caches = jl_get(j, "caches");
    SL_REQUIRE(caches);
    for (size_t i = 0; i < caches->n; i++) {
        const jl *c = caches->kids[i];
        allocs += jl_num(c, "allocs");
        caches_untraced += jl_num(c, "untraced_frees");
        SL_CHECK(jl_num(c, "allocs") == jl_num(c, "frees") + jl_num(c, "live_at_end") + jl_num(c, "untraced_frees"));
        if (jl_num(c, "modelled") == 1) {
            SL_CHECK_EQ(jl_num(c, "slabs_allocated") - jl_num(c, "slabs_freed"), jl_num(c, "slabs_at_end"));
            SL_CHECK(jl_num(c, "live_at_end") <= jl_num(c, "slabs_at_end") * jl_num(c, "geometry.objs_per_slab"));
            SL_CHECK(jl_num(c, "max_partial") >= jl_num(c, "partial_at_end"));
            double share = jl_num(c, "fastpath_share");
            SL_CHECK(share >= 0 && share <= 1);
        }
    }
    SL_CHECK_EQ(allocs,
                jl_num(j, "pairs.matched") + jl_num(j, "pairs.live_at_end") + jl_num(j, "pairs.untraced_frees"));
    SL_CHECK_EQ(caches_untraced, jl_num(j, "pairs.untraced_frees"));
    SL_CHECK_EQ(kind(j, "kfree") + kind(j, "kmem_cache_free"),
                jl_num(j, "pairs.matched") + jl_num(j, "pairs.freed_unknown") + jl_num(j, "pairs.null_frees"));
}

static void check_oracle(const jl *j, const oracle *o)
{
    SL_CHECK_EQ(kind(j, "kmalloc") + kind(j, "kmem_cache_alloc"), o->allocs);
    SL_CHECK_EQ(jl_num(j, "pairs.matched"), o->matched);
    SL_CHECK_EQ(jl_num(j, "pairs.freed_unknown"), o->freed_unknown);
    SL_CHECK_EQ(jl_num(j, "pairs.null_frees"), o->null_frees);
    SL_CHECK_EQ(jl_num(j, "pairs.untraced_frees"), o->untraced);
    SL_CHECK_EQ(jl_num(j, "pairs.live_at_end"), oracle_live(o));
    SL_CHECK_EQ(jl_num(j, "percpu.allocs"), o->pcpu_allocs);
    SL_CHECK_EQ(jl_num(j, "percpu.frees"), o->pcpu_frees);
    SL_CHECK_EQ(jl_num(j, "percpu.freed_unknown"), o->pcpu_unknown);
}

static jl *replay_fixture(const char *name, const sl_replay_config *cfg)
{
    size_t len;
    uint8_t *data = read_fixture(name, &len);
    if (!data)
        return NULL;
    int rc;
    sl_replay *r = replay_chunks(data, len, cfg, 1 << 16, &rc);
    jl *j = rc == SL_OK ? replay_tree(r) : NULL;
    if (rc != SL_OK)
        fprintf(stderr, "  %s refused: %s\n", name, r ? sl_replay_error(r) : "?");
    sl_replay_destroy(r);
    free(data);
    return j;
}

static void test_capture_fixture(void)
{
    sl_replay_config cfg = {0};
    jl *j = replay_fixture("capture-6.18.slabcap.gz", &cfg);
    SL_REQUIRE(j);
    check_consistent(j, "capture");
    size_t len;
    char *text = fixture_text("capture-6.18.slabcap.gz", &len);
    SL_REQUIRE(text);
    oracle o;
    run_oracle(text, &o);
    check_oracle(j, &o);
    SL_CHECK(o.allocs > 10000 && o.matched > 5000);
    oracle_free(&o);
    free(text);
    SL_CHECK(jl_str(j, "model.kernel") && !strcmp(jl_str(j, "model.kernel"), "6.18"));
    SL_CHECK_EQ(jl_num(j, "model.cpus"), 2);
    SL_CHECK_EQ(jl_num(j, "events.skipped"), 0);
    SL_CHECK_EQ(jl_num(j, "capture.percpu_unit_size"), 1048576);
    SL_CHECK_EQ(jl_num(j, "percpu.unit_size"), 1048576);
    SL_CHECK(jl_str(j, "percpu.allocator") && !strcmp(jl_str(j, "percpu.allocator"), "scanhint"));
    /* Geometry from the capture's sysfs, and equal to the kernel's but for the known vm_area_struct. */
    const jl *caches = jl_get(j, "caches");
    unsigned from_sysfs = 0;
    for (size_t i = 0; caches && i < caches->n; i++) {
        const jl *c = caches->kids[i];
        const char *src = jl_str(c, "geometry.source"), *name = jl_str(c, "name");
        if (!src || strcmp(src, "sysfs"))
            continue;
        from_sysfs++;
        double m = jl_num(c, "geometry.matches_kernel");
        if (!strcmp(name, "vm_area_struct"))
            SL_CHECK_EQ(m, 0); /* freeptr_offset: see docs/slub.md */
        else if (m != 1)
            fprintf(stderr, "  %s: model geometry differs from sysfs\n", name);
        else
            SL_CHECK_EQ(m, 1);
    }
    SL_CHECK(from_sysfs > 15);
    const jl *dentry = json_cache(j, "dentry");
    SL_CHECK(dentry && jl_num(dentry, "geometry.objs_per_slab") == 21);
    jl_free(j);
}

static void test_trace_cmd_formats_agree(void)
{
    static const char *const names[3] = {"trace-cmd-report-6.18.txt.gz", "trace-cmd-report-l-6.18.txt.gz",
                                         "trace-cmd-report-t-6.18.txt.gz"};
    jl *j[3];
    for (int i = 0; i < 3; i++) {
        sl_replay_config cfg = {0};
        j[i] = replay_fixture(names[i], &cfg);
        SL_REQUIRE(j[i]);
        check_consistent(j[i], names[i]);
        SL_CHECK_EQ(jl_num(j[i], "events.skipped_by_reason.bad"), 0);
        SL_CHECK_EQ(jl_num(j[i], "model.cpus"), 2); /* cpus=2 */
    }
    size_t len;
    char *text = fixture_text(names[0], &len);
    oracle o;
    run_oracle(text, &o);
    for (int i = 0; i < 3; i++)
        check_oracle(j[i], &o);
    oracle_free(&o);
    free(text);
    static const char *const same[] = {"events.lines",     "events.parsed",     "pairs.matched", "pairs.freed_unknown",
                                       "pairs.null_frees", "pairs.live_at_end", "percpu.allocs", "model.errors"};
    for (int i = 1; i < 3; i++)
        for (unsigned k = 0; k < sizeof same / sizeof same[0]; k++)
            SL_CHECK_EQ(jl_num(j[i], same[k]), jl_num(j[0], same[k]));
    const jl *a = jl_get(j[0], "caches"), *b = jl_get(j[2], "caches");
    SL_REQUIRE(a && b && a->n == b->n);
    for (size_t i = 0; i < a->n; i++)
        SL_CHECK(!strcmp(jl_str(a->kids[i], "name"), jl_str(b->kids[i], "name")) &&
                 jl_num(a->kids[i], "allocs") == jl_num(b->kids[i], "allocs"));
    for (int i = 0; i < 3; i++)
        jl_free(j[i]);
}

/* The models validated after every event (small zone and real unit: validate walks all of them). */
static void test_validate_after_every_event(void)
{
    /* The default version (the trace names none: 6.17), and 7.0's sheaves and barn. */
    static const char *const versions[] = {NULL, "7.0"};
    for (int v = 0; v < 2; v++) {
        sl_replay_config cfg = {
            .validate_each = true, .zone_bytes = 16 << 20, .pcpu_unit_size = 1 << 20, .kernel = versions[v]};
        jl *j = replay_fixture("trace-cmd-report-6.18.txt.gz", &cfg);
        SL_REQUIRE(j);
        check_consistent(j, "validate_each");
        SL_CHECK(jl_num(j, "model.caches_modelled") > 10);
        SL_CHECK_EQ(jl_num(j, "model.errors"), 0);
        jl_free(j);
    }
}

static void test_two_kernels_side_by_side(void)
{
    sl_replay_config cfg = {.kernel = "4.4,6.18"};
    jl *j = replay_fixture("capture-6.18.slabcap.gz", &cfg);
    SL_REQUIRE(j);
    check_consistent(j, "4.4,6.18");
    const jl *models = jl_get(j, "models");
    SL_REQUIRE(models && models->n == 2);
    SL_CHECK(!strcmp(jl_str(models->kids[0], "kernel"), "4.4"));
    SL_CHECK(!strcmp(jl_str(models->kids[1], "kernel"), "6.18"));
    SL_CHECK(!strcmp(jl_str(models->kids[0], "kernel_source"), "option"));
    SL_CHECK(!strcmp(jl_str(models->kids[0], "percpu_allocator"), "bitmap"));
    SL_CHECK(!strcmp(jl_str(models->kids[1], "percpu_allocator"), "scanhint"));
    SL_CHECK_EQ(jl_num(models->kids[1], "errors"), 0);
    SL_CHECK_EQ(jl_num(models->kids[0], "kernel_switch"), 1);
    SL_CHECK(!strcmp(jl_str(models->kids[0], "slub_kernel"), "4.4"));
    /* Named as 4.4 names kmalloc caches: no kmalloc-cg-N before 5.14. */
    const jl *caches = jl_get(j, "caches");
    for (size_t i = 0; caches && i < caches->n; i++)
        SL_CHECK(strncmp(jl_str(caches->kids[i], "name"), "kmalloc-cg-", 11));
    const jl *c = caches ? caches->kids[0] : NULL;
    const jl *by = jl_get(c, "by_kernel");
    SL_CHECK(by && by->n == 2);
    jl_free(j);

    /* The scan hints arrived in 5.2 (docs/percpu.md): 5.1 keeps the 2017 bitmap. */
    cfg.kernel = "5.1,5.2";
    j = replay_fixture("percpu-chunks-6.18.trace.txt", &cfg);
    SL_REQUIRE(j);
    models = jl_get(j, "models");
    SL_REQUIRE(models && models->n == 2);
    SL_CHECK(!strcmp(jl_str(models->kids[0], "percpu_allocator"), "bitmap"));
    SL_CHECK(!strcmp(jl_str(models->kids[1], "percpu_allocator"), "scanhint"));
    SL_CHECK_EQ(jl_num(j, "model.errors"), 0);
    jl_free(j);
}

static bool str_is(const jl *j, const char *path, const char *want)
{
    const char *got = jl_str(j, path);
    return got && !strcmp(got, want);
}

/*
 * The model caches follow the SLUB rules of the kernel's version: the real
 * capture replays without a model error under each era, with sheaves for
 * none (4.4, 6.17), for the two caches that opt in (6.18: vm_area_struct
 * and maple_node, 32), or for every cache (7.0), whose sheaves then serve
 * allocations and frees and are refilled from slabs.
 */
static void test_kernel_eras(void)
{
    static const char *const versions[] = {"4.4", "6.17", "6.18", "7.0"};
    for (unsigned v = 0; v < 4; v++) {
        sl_replay_config cfg = {.kernel = versions[v]};
        jl *j = replay_fixture("capture-6.18.slabcap.gz", &cfg);
        SL_REQUIRE(j);
        check_consistent(j, versions[v]);
        SL_CHECK_EQ(jl_num(j, "model.errors"), 0);
        SL_CHECK(str_is(j, "model.kernel", versions[v]) && str_is(j, "model.slub_kernel", versions[v]));
        SL_CHECK(str_is(j, "model.kernel_source", "option"));
        SL_CHECK_EQ(jl_num(j, "model.kernel_switch"), 1);
        double modelled = jl_num(j, "model.caches_modelled"), with_sheaves = jl_num(j, "model.sheaves.caches");
        SL_CHECK(modelled > 10);
        const jl *caches = jl_get(j, "caches");
        for (size_t i = 0; caches && i < caches->n; i++) {
            const jl *c = caches->kids[i];
            if (jl_num(c, "modelled") != 1)
                continue;
            const char *name = jl_str(c, "name");
            bool opts_in = !strcmp(name, "vm_area_struct") || !strcmp(name, "maple_node");
            double cap = jl_num(c, "sheaf_capacity");
            if (v < 2)
                SL_CHECK_EQ(cap, 0);
            else if (v == 2)
                SL_CHECK_EQ(cap, opts_in ? 32 : 0);
            else
                SL_CHECK(cap >= (opts_in ? 32 : 1));
        }
        if (v < 2) {
            SL_CHECK_EQ(with_sheaves, 0);
            SL_CHECK_EQ(jl_num(j, "model.sheaves.alloc_cpu_sheaf"), 0);
        } else {
            SL_CHECK_EQ(with_sheaves, v == 2 ? 2 : modelled);
            SL_CHECK(jl_num(j, "model.sheaves.alloc_cpu_sheaf") > 0);
            SL_CHECK(jl_num(j, "model.sheaves.free_cpu_sheaf") > 0);
            SL_CHECK(jl_num(j, "model.sheaves.sheaf_refill") > 0);
        }
        jl_free(j);
    }
}

/* 6.17 and 7.0 side by side on the same trace: two models, each cache's figures under both. */
static void test_cpu_slab_against_sheaves(void)
{
    sl_replay_config cfg = {.kernel = "6.17,7.0"};
    jl *j = replay_fixture("capture-6.18.slabcap.gz", &cfg);
    SL_REQUIRE(j);
    const jl *models = jl_get(j, "models");
    SL_REQUIRE(models && models->n == 2);
    SL_CHECK(str_is(models->kids[0], "slub_kernel", "6.17") && str_is(models->kids[1], "slub_kernel", "7.0"));
    SL_CHECK(jl_str(models->kids[0], "rules.slub") && strstr(jl_str(models->kids[0], "rules.slub"), "no sheaves"));
    SL_CHECK(jl_str(models->kids[1], "rules.slub") && strstr(jl_str(models->kids[1], "rules.slub"), "every cache"));
    for (int k = 0; k < 2; k++)
        SL_CHECK_EQ(jl_num(models->kids[k], "errors"), 0);
    SL_CHECK_EQ(jl_num(models->kids[0], "sheaves.caches"), 0);
    SL_CHECK(jl_num(models->kids[1], "sheaves.sheaf_refill") > 0);
    const jl *by = jl_get(json_cache(j, "maple_node"), "by_kernel");
    SL_REQUIRE(by && by->n == 2);
    SL_CHECK(str_is(by->kids[0], "kernel", "6.17") && str_is(by->kids[1], "kernel", "7.0"));
    SL_CHECK_EQ(jl_num(by->kids[0], "sheaf_capacity"), 0);
    SL_CHECK_EQ(jl_num(by->kids[1], "sheaf_capacity"), 32);
    SL_CHECK(jl_num(by->kids[0], "slabs_allocated") > 0 && jl_num(by->kids[1], "slabs_allocated") > 0);
    /* Under 7.0 maple_node's allocations come from sheaves refilled in bulk, not from the CPU slab. */
    SL_CHECK(jl_num(by->kids[1], "sheaf_refills") > 0 && jl_num(by->kids[0], "sheaf_refills") == 0);
    jl_free(j);
}

/*
 * Without --kernel the capture's uname -r picks the era; versions the model lacks map to the nearest era,
 * which model.slub_kernel names beside the asked model.kernel (8.1 gets the newest rules, 7.3's).
 */
static void test_default_and_clamped_versions(void)
{
    sl_replay_config cfg = {0};
    jl *j = replay_fixture("capture-6.18.slabcap.gz", &cfg);
    SL_REQUIRE(j);
    SL_CHECK(str_is(j, "model.kernel", "6.18") && str_is(j, "model.slub_kernel", "6.18"));
    SL_CHECK(str_is(j, "model.kernel_source", "capture"));
    SL_CHECK_EQ(jl_num(j, "model.sheaves.caches"), 2);
    jl_free(j);
    static const char *const asked[][2] = {{"3.10", "4.3"}, {"8.1", "7.3"}};
    for (int i = 0; i < 2; i++) {
        cfg.kernel = asked[i][0];
        j = replay_fixture("capture-6.18.slabcap.gz", &cfg);
        SL_REQUIRE(j);
        SL_CHECK(str_is(j, "model.kernel", asked[i][0]) && str_is(j, "model.slub_kernel", asked[i][1]));
        /* a kernel newer than the newest modelled is said so, never mapped silently */
        const char *notice = jl_str(j, "model.notice");
        SL_CHECK(i == 0
                     ? notice == NULL
                     : notice && strstr(notice, "Linux 8.1 is newer than the newest kernel the model follows (7.3)"));
        SL_CHECK_EQ(jl_num(j, "model.errors"), 0);
        jl_free(j);
    }
}

static void test_cache_filter_and_lookup(void)
{
    sl_replay_config cfg = {.cache = "dentry"};
    jl *j = replay_fixture("capture-6.18.slabcap.gz", &cfg);
    SL_REQUIRE(j);
    check_consistent(j, "--cache dentry");
    SL_CHECK_EQ(jl_num(j, "model.caches_modelled"), 1);
    SL_CHECK_EQ(jl_num(json_cache(j, "dentry"), "modelled"), 1);
    SL_CHECK_EQ(jl_num(json_cache(j, "filp"), "modelled"), 0);
    jl_free(j);

    /* A live pointer maps to the model object the replay allocated for it. */
    const char *t =
        "a-1 [000] ..... 1.0: kmem_cache_alloc: call_site=g ptr=abc name=filp bytes_req=184 bytes_alloc=192 "
        "gfp_flags=GFP_KERNEL\n"
        "a-1 [000] ..... 1.1: kmem_cache_alloc: call_site=g ptr=abd name=filp bytes_req=184 bytes_alloc=192 "
        "gfp_flags=GFP_KERNEL\n";
    sl_replay_config plain = {.cpus = 2};
    int rc;
    sl_replay *r = replay_text(t, &plain, &rc);
    SL_REQUIRE(rc == SL_OK);
    unsigned cache;
    void *a, *b;
    SL_CHECK_EQ(sl_replay_lookup(r, 0xabc, 0, &cache, &a), SL_OK);
    SL_CHECK_EQ(sl_replay_lookup(r, 0xabd, 0, &cache, &b), SL_OK);
    sl_slub_cache *s = sl_replay_model_cache(r, cache, 0);
    SL_REQUIRE(s);
    uint32_t pfn_a = 0, idx_a = 0, pfn_b = 1, idx_b = 0;
    SL_CHECK(sl_slub_object_index(s, a, &pfn_a, &idx_a) && sl_slub_object_index(s, b, &pfn_b, &idx_b));
    SL_CHECK(pfn_a == pfn_b && idx_a != idx_b); /* two objects of one slab */
    SL_CHECK_EQ(sl_replay_lookup(r, 0x999, 0, &cache, &a), SL_EINVAL);
    sl_replay_destroy(r);
}

static void test_percpu_chunk_fixture(void)
{
    for (int real_unit = 0; real_unit < 2; real_unit++) {
        sl_replay_config cfg = {.pcpu_unit_size = real_unit ? 1 << 20 : 0};
        jl *j = replay_fixture("percpu-chunks-6.18.trace.txt", &cfg);
        SL_REQUIRE(j);
        check_consistent(j, "percpu");
        size_t len;
        char *text = fixture_text("percpu-chunks-6.18.trace.txt", &len);
        oracle o;
        run_oracle(text, &o);
        check_oracle(j, &o);
        oracle_free(&o);
        free(text);
        SL_CHECK_EQ(jl_num(j, "percpu.unit_size"), real_unit ? 1048576 : 2097152);
        const jl *chunks = jl_get(jl_get(j, "percpu"), "chunks");
        SL_REQUIRE(chunks);
        unsigned created = 0;
        for (size_t i = 0; i < chunks->n; i++) {
            const jl *c = chunks->kids[i];
            if (strcmp(jl_str(c, "seen"), "created"))
                continue;
            created++;
            SL_CHECK_EQ(jl_num(c, "destroyed"), 1);
            SL_CHECK(jl_num(c, "allocs") > 0);
            SL_CHECK_EQ(jl_num(c, "live"), 0);
        }
        SL_CHECK_EQ(created, 1);
        jl_free(j);
    }
}

/* ---- rules on small traces ------------------------------------------------ */

static void test_kmalloc_cache_names(void)
{
    static const struct {
        const char *kernel, *gfp, *extra, *name;
        unsigned bytes;
    } cases[] = {
        {"6.18", "GFP_KERNEL", "", "kmalloc-64", 64},
        {"6.18", "GFP_KERNEL_ACCOUNT", "", "kmalloc-cg-64", 64},
        {"6.18", "GFP_KERNEL", " accounted=true", "kmalloc-cg-96", 96},
        {"6.18", "GFP_NOFS|__GFP_RECLAIMABLE|__GFP_ACCOUNT", "", "kmalloc-rcl-1k", 1024},
        {"6.18", "GFP_DMA", "", "dma-kmalloc-8k", 8192},
        {"6.18", "GFP_DMA32", "", "kmalloc-192", 192},
        {"6.18", "GFP_KERNEL", "", "kmalloc-large", 16384},
        {"5.10", "GFP_KERNEL_ACCOUNT", "", "kmalloc-64", 64},
        {"4.19", "__GFP_RECLAIMABLE", "", "kmalloc-64", 64},
        {"5.4", "__GFP_RECLAIMABLE", "", "kmalloc-rcl-64", 64},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[512];
        snprintf(t, sizeof t,
                 "a-1 [000] ..... 1.0: kmalloc: call_site=f ptr=10 bytes_req=1 bytes_alloc=%u gfp_flags=%s%s\n",
                 cases[i].bytes, cases[i].gfp, cases[i].extra);
        sl_replay_config cfg = {.kernel = cases[i].kernel, .cpus = 1};
        int rc;
        sl_replay *r = replay_text(t, &cfg, &rc);
        SL_REQUIRE(rc == SL_OK);
        sl_replay_cache_info ci;
        SL_CHECK_EQ(sl_replay_cache_count(r), 1);
        SL_CHECK_EQ(sl_replay_cache_info_get(r, 0, 0, &ci), SL_OK);
        if (strcmp(ci.name, cases[i].name))
            fprintf(stderr, "  %s %s %u -> %s\n", cases[i].kernel, cases[i].gfp, cases[i].bytes, ci.name);
        SL_CHECK(!strcmp(ci.name, cases[i].name));
        SL_CHECK_EQ(ci.modelled, cases[i].bytes <= 8192);
        if (ci.modelled)
            SL_CHECK_EQ(ci.size, cases[i].bytes); /* computed kmalloc geometry: the slot is the size */
        sl_replay_destroy(r);
    }
}

static void test_remote_free_takes_the_slow_path(void)
{
    const char *t = "a-1 [000] ..... 1.0: kmem_cache_alloc: call_site=g ptr=a1 name=filp bytes_req=184 bytes_alloc=192 "
                    "gfp_flags=GFP_KERNEL\n"
                    "a-1 [000] ..... 1.1: kmem_cache_alloc: call_site=g ptr=a2 name=filp bytes_req=184 bytes_alloc=192 "
                    "gfp_flags=GFP_KERNEL\n"
                    "a-1 [000] ..... 1.2: kmem_cache_free: call_site=h ptr=a1 name=filp\n"
                    "b-2 [001] ..... 1.3: kmem_cache_free: call_site=h ptr=a2 name=filp\n";
    sl_replay_config cfg = {.cpus = 2};
    int rc;
    sl_replay *r = replay_text(t, &cfg, &rc);
    SL_REQUIRE(rc == SL_OK);
    sl_replay_cache_info ci;
    SL_REQUIRE(sl_replay_cache_info_get(r, 0, 0, &ci) == SL_OK);
    SL_CHECK_EQ(ci.allocs, 2);
    SL_CHECK_EQ(ci.cross_cpu_frees, 1);
    SL_CHECK_EQ(ci.alloc_slowpath, 1); /* the first allocation found no CPU slab */
    SL_CHECK_EQ(ci.free_slowpath, 1);  /* CPU 1 freeing into CPU 0's slab: __slab_free */
    SL_CHECK_EQ(ci.slabs_allocated, 1);
    SL_CHECK_EQ(ci.size, 192);
    sl_replay_destroy(r);
}

/* The longest node partial list of each cache, seen through every operation's record. */
typedef struct partial_peaks {
    uint32_t max[1024];
} partial_peaks;

static void note_partial(void *user, const sl_replay_op *op)
{
    partial_peaks *p = user;
    if ((op->kind == SL_REPLAY_OP_ALLOC || op->kind == SL_REPLAY_OP_FREE) && op->cache < 1024 &&
        op->partial > p->max[op->cache])
        p->max[op->cache] = op->partial;
}

/*
 * max_partial samples the node partial list only after an operation that
 * went to the slabs (a slow path, a sheaf refill or flush; what stays
 * per-CPU never touches it): the records of every operation, which read it
 * after each one, find the same peaks on the 6.18 capture, under the
 * per-CPU slab, 6.18's opt-in sheaves and 7.0's sheaves for all.
 */
static void test_longest_partial_list(void)
{
    size_t len;
    uint8_t *data = read_fixture("capture-6.18.slabcap.gz", &len);
    SL_REQUIRE(data);
    static const char *const versions[] = {"6.17", "6.18", "7.0"};
    for (unsigned v = 0; v < 3; v++) {
        static partial_peaks peaks;
        memset(&peaks, 0, sizeof peaks);
        sl_replay_config cfg = {.on_op = note_partial, .user = &peaks, .kernel = versions[v]};
        int rc;
        sl_replay *r = replay_chunks(data, len, &cfg, 1 << 16, &rc);
        SL_REQUIRE(rc == SL_OK);
        unsigned with_partial = 0;
        for (unsigned i = 0; i < sl_replay_cache_count(r) && i < 1024; i++) {
            sl_replay_cache_info ci;
            SL_REQUIRE(sl_replay_cache_info_get(r, i, 0, &ci) == SL_OK);
            SL_CHECK_EQ(ci.max_partial, peaks.max[i]);
            with_partial += ci.max_partial > 0;
        }
        SL_CHECK(with_partial > 0);
        sl_replay_destroy(r);
    }
    free(data);
}

static void test_untraced_frees_and_unknown_frees(void)
{
    const char *t = "a-1 [000] ..... 1.0: kmalloc: call_site=f ptr=7 bytes_alloc=32 gfp_flags=GFP_KERNEL\n"
                    "a-1 [000] ..... 1.1: kmalloc: call_site=f ptr=7 bytes_alloc=32 gfp_flags=GFP_KERNEL\n"
                    "a-1 [000] ..... 1.2: kmem_cache_free: call_site=h ptr=55 name=filp\n"
                    "a-1 [000] ..... 1.3: kfree: call_site=h ptr=56\n"
                    "a-1 [000] ..... 1.4: kmalloc: call_site=f ptr=0 bytes_alloc=32 gfp_flags=GFP_KERNEL\n";
    sl_replay_config cfg = {.cpus = 1};
    int rc;
    sl_replay *r = replay_text(t, &cfg, &rc);
    SL_REQUIRE(rc == SL_OK);
    jl *j = replay_tree(r);
    SL_REQUIRE(j);
    SL_CHECK_EQ(jl_num(j, "pairs.untraced_frees"), 1);
    SL_CHECK_EQ(jl_num(j, "pairs.live_at_end"), 1);
    SL_CHECK_EQ(jl_num(j, "pairs.freed_unknown"), 2);
    SL_CHECK_EQ(jl_num(j, "pairs.alloc_failed"), 1);
    SL_CHECK_EQ(jl_num(json_cache(j, "filp"), "freed_unknown"), 1); /* known by name= */
    SL_CHECK_EQ(jl_num(json_cache(j, "kmalloc-32"), "untraced_frees"), 1);
    SL_CHECK_EQ(jl_num(j, "model.errors"), 0);
    jl_free(j);
    sl_replay_destroy(r);
}

static void test_model_errors_name_their_line(void)
{
    /* The percpu model refuses an area it holds live: the trace lost a free. */
    const char *t = "a-1 [000] ..... 1.0: percpu_create_chunk: base_addr=c0\n"
                    "a-1 [000] ..... 1.1: percpu_alloc_percpu: reserved=0 is_atomic=0 size=16 align=8 base_addr=c0 "
                    "off=64 ptr=100\n"
                    "a-1 [000] ..... 1.2: percpu_alloc_percpu: reserved=0 is_atomic=0 size=16 align=8 base_addr=c0 "
                    "off=72 ptr=200\n";
    sl_replay_config cfg = {.cpus = 2, .pcpu_unit_size = 1 << 16};
    int rc;
    sl_replay *r = replay_text(t, &cfg, &rc);
    SL_REQUIRE(rc == SL_OK);
    jl *j = replay_tree(r);
    SL_REQUIRE(j);
    SL_CHECK_EQ(jl_num(j, "model.errors"), 1);
    const jl *list = jl_get(jl_get(j, "model"), "error_list");
    SL_REQUIRE(list && list->n == 1);
    SL_CHECK_EQ(jl_num(list->kids[0], "line"), 3);
    SL_CHECK(strstr(jl_str(list->kids[0], "message"), "overlaps an area the model holds live"));
    jl_free(j);
    sl_replay_destroy(r);

    /* An area past the unit. */
    t = "a-1 [000] ..... 1.1: percpu_alloc_percpu: reserved=0 is_atomic=0 size=16 align=8 base_addr=c0 off=70000 "
        "ptr=100\n";
    r = replay_text(t, &cfg, &rc);
    j = replay_tree(r);
    SL_CHECK(j && jl_num(j, "model.errors") == 1 &&
             strstr(jl_str(jl_get(jl_get(j, "model"), "error_list")->kids[0], "message"), "--pcpu-unit-size"));
    jl_free(j);
    sl_replay_destroy(r);

    /* A page zone too small for the trace: the first allocation that finds no page. */
    sl_strbuf big = {0};
    for (int i = 0; i < 40; i++)
        sl_strbuf_printf(&big,
                         "a-1 [000] ..... 1.%03d: kmem_cache_alloc: call_site=g ptr=%x name=names_cache bytes_req=4096 "
                         "bytes_alloc=4096 gfp_flags=GFP_KERNEL\n",
                         i, 0x1000 + i);
    sl_replay_config small = {.cpus = 1, .zone_bytes = 64 << 10};
    r = replay_text(big.data, &small, &rc);
    SL_REQUIRE(rc == SL_OK);
    j = replay_tree(r);
    SL_REQUIRE(j);
    list = jl_get(jl_get(j, "model"), "error_list");
    SL_REQUIRE(list && list->n >= 1);
    SL_CHECK_EQ(jl_num(list->kids[0], "line"), 17); /* 16 pages = two order-3 slabs of 8 objects */
    SL_CHECK(strstr(jl_str(list->kids[0], "message"), "raise --zone-mb"));
    jl_free(j);
    sl_replay_destroy(r);
    sl_strbuf_free(&big);
}

int main(void)
{
    SL_RUN(test_capture_fixture);
    SL_RUN(test_trace_cmd_formats_agree);
    SL_RUN(test_validate_after_every_event);
    SL_RUN(test_two_kernels_side_by_side);
    SL_RUN(test_kernel_eras);
    SL_RUN(test_cpu_slab_against_sheaves);
    SL_RUN(test_default_and_clamped_versions);
    SL_RUN(test_cache_filter_and_lookup);
    SL_RUN(test_percpu_chunk_fixture);
    SL_RUN(test_kmalloc_cache_names);
    SL_RUN(test_remote_free_takes_the_slow_path);
    SL_RUN(test_longest_partial_list);
    SL_RUN(test_untraced_frees_and_unknown_frees);
    SL_RUN(test_model_errors_name_their_line);
    return sl_check_summary();
}
