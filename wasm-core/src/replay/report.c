/*
 * report.c - a session's results: the accessors the CLI's tables and the
 * browser use, and the JSON document (docs/replay.md lists its fields),
 * built here once so the CLI and the browser show the same numbers.
 */
#include "replay_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- byte buffers ------------------------------------------------------ */

static bool reserve(sl_strbuf *b, size_t more)
{
    if (b->failed)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *n = realloc(b->data, cap);
    if (!n) {
        b->failed = true;
        return false;
    }
    b->data = n;
    b->cap = cap;
    return true;
}

bool sl_strbuf_append(sl_strbuf *b, const void *p, size_t n)
{
    if (!reserve(b, n))
        return false;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
    return true;
}

bool sl_strbuf_printf(sl_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return false;
    if ((size_t)n < sizeof small)
        return sl_strbuf_append(b, small, (size_t)n);
    if (!reserve(b, (size_t)n))
        return false;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return true;
}

/*
 * The length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or 0 when the
 * bytes there are not one.
 */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

/* Escapes as JSON wants, and keeps the output valid UTF-8 whatever the bytes: each byte that does not start a
   well-formed sequence (a cache name or call site from a hostile trace) becomes U+FFFD. */
bool sl_strbuf_json_string(sl_strbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n * 6 + 2))
        return false;
    char *o = b->data + b->len;
    *o++ = '"';
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        size_t len = utf8_sequence(u + i, n - i);
        if (!len) {
            /* U+FFFD as its UTF-8 bytes, not "\\ufffd": readers that take only ASCII escapes take it too. */
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        } else if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            o += sprintf(o, "\\u%04x", c);
            i++;
        } else {
            memcpy(o, u + i, len);
            o += len;
            i += len;
        }
    }
    *o++ = '"';
    *o = 0;
    b->len = (size_t)(o - b->data);
    return true;
}

void sl_strbuf_free(sl_strbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* ---- accessors --------------------------------------------------------- */

unsigned sl_replay_cache_count(const sl_replay *r) { return r->ncaches; }

int sl_replay_cache_info_get(const sl_replay *r, unsigned cache, unsigned kernel, sl_replay_cache_info *out)
{
    if (cache >= r->ncaches || kernel >= r->nkernels)
        return SL_EINVAL;
    const sli_cache *c = &r->caches[cache];
    memset(out, 0, sizeof *out);
    out->name = c->name;
    out->geometry_from_sysfs = c->geometry_from_sysfs;
    out->geometry_matches = c->geometry_matches;
    out->allocs = c->allocs;
    out->frees = c->frees;
    out->freed_unknown = c->freed_unknown;
    out->untraced_frees = c->untraced_frees;
    out->bytes_req = c->bytes_req;
    out->bytes_alloc = c->bytes_alloc;
    out->live = c->live;
    out->peak_live = c->peak_live;
    out->cross_cpu_frees = c->cross_cpu;
    out->lifetimes = c->life ? c->life->n : 0;
    out->lifetime_p50_ns = sli_hist_quantile(c->life, 0.5);
    out->lifetime_p99_ns = sli_hist_quantile(c->life, 0.99);
    sl_slub_cache *s = c->m[kernel].s;
    out->modelled = s != NULL;
    if (!s)
        return SL_OK;
    const sl_slub_geometry *g = sl_slub_cache_geometry(s);
    out->object_size = g->object_size;
    out->size = g->size;
    out->order = g->order;
    out->objs_per_slab = g->objects;
    out->sheaf_capacity = sl_slub_cache_sheaf_capacity(s);
    out->sheaf_refills = sl_slub_stat_get(s, -1, SL_SLUB_SHEAF_REFILL);
    out->sheaf_flushes = sl_slub_stat_get(s, -1, SL_SLUB_SHEAF_FLUSH);
    out->alloc_slowpath = sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_SLOWPATH);
    out->free_slowpath = sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLOWPATH);
    out->slabs_allocated = sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_SLAB);
    out->slabs_freed = sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLAB);
    sl_slub_node_info ni;
    sl_slub_node_info_get(s, &ni);
    out->slabs = ni.nr_slabs;
    out->partial = ni.nr_partial;
    out->max_partial = c->m[kernel].max_partial;
    return SL_OK;
}

int sl_replay_model_info_get(const sl_replay *r, unsigned kernel, sl_replay_model_info *out)
{
    if (kernel >= r->nkernels)
        return SL_EINVAL;
    const sli_model *m = &r->models[kernel];
    memset(out, 0, sizeof *out);
    if (m->kv.major)
        snprintf(out->kernel, sizeof out->kernel, "%u.%u", m->kv.major, m->kv.minor);
    sl_slub_kversion v = sli_slub_version(m->kv);
    sl_slub_kversion_format(v, out->slub_kernel, sizeof out->slub_kernel);
    sl_slub_rules rules;
    sl_slub_rules_for(v, &rules);
    out->slub_era = sl_slub_era_name(rules.era);
    if (m->kv.major)
        sl_slub_kversion_notice((sl_slub_kversion){m->kv.major, m->kv.minor}, out->notice, sizeof out->notice);
    out->errors = m->errors;
    for (unsigned c = 0; c < r->ncaches; c++) {
        sl_slub_cache *s = r->caches[c].m[kernel].s;
        if (!s)
            continue;
        out->caches_modelled++;
        out->caches_with_sheaves += sl_slub_cache_sheaf_capacity(s) != 0;
        out->alloc_cpu_sheaf += sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_PCS);
        out->free_cpu_sheaf += sl_slub_stat_get(s, -1, SL_SLUB_FREE_PCS);
        out->sheaf_refill += sl_slub_stat_get(s, -1, SL_SLUB_SHEAF_REFILL);
        out->sheaf_flush += sl_slub_stat_get(s, -1, SL_SLUB_SHEAF_FLUSH);
        out->barn_get += sl_slub_stat_get(s, -1, SL_SLUB_BARN_GET);
        out->barn_get_fail += sl_slub_stat_get(s, -1, SL_SLUB_BARN_GET_FAIL);
        out->barn_put += sl_slub_stat_get(s, -1, SL_SLUB_BARN_PUT);
        out->barn_put_fail += sl_slub_stat_get(s, -1, SL_SLUB_BARN_PUT_FAIL);
    }
    return SL_OK;
}

sl_slub_cache *sl_replay_model_cache(sl_replay *r, unsigned cache, unsigned kernel)
{
    return cache < r->ncaches && kernel < r->nkernels ? r->caches[cache].m[kernel].s : NULL;
}

int sl_replay_lookup(const sl_replay *r, uint64_t ptr, unsigned kernel, unsigned *cache, void **obj)
{
    const sli_obj *o = ptr ? sli_map_get(&r->objs, ptr) : NULL;
    if (!o || kernel >= r->nkernels || !o->model[kernel])
        return SL_EINVAL;
    *cache = o->cache;
    *obj = o->model[kernel];
    return SL_OK;
}

unsigned sl_replay_site_count(const sl_replay *r) { return r->nsites; }

int sl_replay_site_info_get(const sl_replay *r, unsigned site, sl_replay_site_info *out)
{
    if (site >= r->nsites)
        return SL_EINVAL;
    const sli_site *s = &r->sites[site];
    *out = (sl_replay_site_info){.site = r->strings.data + s->name_off,
                                 .allocs = s->allocs,
                                 .frees = s->frees,
                                 .bytes_req = s->bytes_req,
                                 .bytes_alloc = s->bytes_alloc,
                                 .cross_cpu = s->cross_cpu};
    return SL_OK;
}

unsigned sl_replay_chunk_count(const sl_replay *r) { return r->nchunks; }

int sl_replay_chunk_info_get(const sl_replay *r, unsigned chunk, sl_replay_chunk_info *out)
{
    if (chunk >= r->nchunks)
        return SL_EINVAL;
    const sli_chunk *c = &r->chunks[chunk];
    *out = (sl_replay_chunk_info){.base = c->base,
                                  .created_in_trace = c->created_in_trace,
                                  .destroyed = c->destroyed,
                                  .allocs = c->allocs,
                                  .frees = c->frees,
                                  .freed_unknown = c->freed_unknown,
                                  .live = c->live};
    sl_pcpu_chunk_info ci;
    if (r->models[0].pcpu_ready && c->model_id[0] != SL_NONE32 &&
        sl_pcpu_chunk_info_get((sl_pcpu *)&r->models[0].pcpu, c->model_id[0], &ci) == SL_OK) {
        out->free_bytes = ci.free_bytes;
        out->contig_bytes = ci.contig_bytes;
        out->nr_populated = ci.nr_populated;
    }
    return SL_OK;
}

uint32_t sl_replay_chunk_model_id(const sl_replay *r, unsigned chunk, unsigned kernel)
{
    return chunk < r->nchunks && kernel < r->nkernels ? r->chunks[chunk].model_id[kernel] : SL_NONE32;
}

sl_pcpu *sl_replay_pcpu(sl_replay *r, unsigned kernel)
{
    return kernel < r->nkernels && r->models[kernel].pcpu_ready ? &r->models[kernel].pcpu : NULL;
}

void sl_replay_summary_get(const sl_replay *r, sl_replay_summary *s)
{
    memset(s, 0, sizeof *s);
    s->lines = r->lines;
    s->parsed = r->parsed;
    s->skipped = r->lines - r->parsed;
    s->header_lines = r->header_lines;
    s->other_events = r->other_events;
    s->bad_lines = r->bad;
    s->lost_events = r->lost_events;
    s->preempt_rt = r->preemption == SLI_PREEMPT_RT;
    s->matched = r->matched;
    s->live_at_end = r->objs.count;
    s->freed_unknown = r->freed_unknown;
    s->null_frees = r->null_frees;
    s->untraced_frees = r->untraced_frees;
    for (unsigned i = 0; i < SLI_CTX_GFP_N; i++)
        s->alloc_contexts[i] = r->alloc_ctx[i];
    s->nkernels = r->nkernels;
    s->model_cpus = r->model_cpus;
    for (unsigned k = 0; k < r->nkernels; k++) {
        s->model_errors[k] = r->models[k].errors;
        if (r->models[k].kv.major)
            snprintf(s->kernel[k], sizeof s->kernel[k], "%u.%u", r->models[k].kv.major, r->models[k].kv.minor);
    }
    s->nwarnings = r->nwarnings;
    for (unsigned i = 0; i < r->nwarnings; i++)
        s->warnings[i] = r->warnings[i];
}

/* ---- JSON -------------------------------------------------------------- */

static double frac(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0; }

static void json_key_str(sl_strbuf *b, const char *key, const char *val)
{
    sl_strbuf_printf(b, "\"%s\": ", key);
    if (val)
        sl_strbuf_json_string(b, val, strlen(val));
    else
        sl_strbuf_append(b, "null", 4);
}

static int by_allocs_desc(const void *pa, const void *pb, void *ctx)
{
    const sl_replay *r = ctx;
    const sli_cache *a = &r->caches[*(const unsigned *)pa], *b = &r->caches[*(const unsigned *)pb];
    if (a->allocs != b->allocs)
        return a->allocs < b->allocs ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int by_bytes_desc(const void *pa, const void *pb, void *ctx)
{
    const sl_replay *r = ctx;
    const sli_site *a = &r->sites[*(const unsigned *)pa], *b = &r->sites[*(const unsigned *)pb];
    if (a->bytes_alloc != b->bytes_alloc)
        return a->bytes_alloc < b->bytes_alloc ? 1 : -1;
    return strcmp(r->strings.data + a->name_off, r->strings.data + b->name_off);
}

/* 0..n-1 ordered by cmp (an insertion sort with a context: qsort_r is not in C11 nor in every libc here). */
static unsigned *sorted(unsigned n, int (*cmp)(const void *, const void *, void *), const sl_replay *r)
{
    unsigned *v = malloc((n + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (unsigned i = 0; i < n; i++) {
        unsigned j = i;
        while (j > 0 && cmp(&v[j - 1], &i, (void *)r) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = i;
    }
    return v;
}

unsigned *sl_replay_order(const sl_replay *r, int what)
{
    return what == SL_REPLAY_ORDER_SITES ? sorted(r->nsites, by_bytes_desc, r) : sorted(r->ncaches, by_allocs_desc, r);
}

/* model.rules.slub: the era of the version the model's caches follow, with the capture's fast paths. */
static void slub_rules(const sl_replay *r, const sl_replay_model_info *mi, char *out, size_t n)
{
    sl_slub_kversion v;
    sl_slub_rules rules;
    sl_slub_kversion_parse(mi->slub_kernel, &v, NULL);
    sl_slub_rules_for(v, &rules);
    const char *fast = !rules.cpu_slab ? "no per-CPU slab: allocations and frees through the per-CPU sheaves, refilled "
                                         "from and flushed to slabs"
                       : r->preemption == SLI_PREEMPT_RT
                           ? "PREEMPT_RT as the capture's uname -v says (every allocation through ___slab_alloc and "
                             "every free under the CPU's local_lock)"
                           : "lockless fast paths";
    snprintf(out, n, "Linux %s SLUB (%s): %s%s.", mi->slub_kernel, mi->slub_era, fast,
             rules.sheaves == SL_SLUB_SHEAVES_OPT_IN ? "; sheaves for the caches created with a sheaf_capacity "
                                                       "(vm_area_struct, maple_node: 32)"
             : rules.sheaves == SL_SLUB_SHEAVES_ALL  ? "; sheaves for every cache"
                                                     : "; no sheaves");
}

const char *sli_pcpu_rules(sl_kernel_version v)
{
    if (sli_pcpu_kind_for(v) == SL_PCPU_SCANHINT)
        return "v5.2+ bitmap allocator with the 2019 scan hints";
    if (v.major < 4 || (v.major == 4 && v.minor < 14))
        return "v4.14 bitmap allocator (this kernel had the area map, which cannot take the trace's placed areas)";
    return "v4.14-v5.1 bitmap allocator (2017)";
}

static void json_model(sl_strbuf *b, const sl_replay *r, unsigned k)
{
    const sli_model *m = &r->models[k];
    sl_strbuf_printf(b, "{");
    if (m->kv.major)
        sl_strbuf_printf(b, "\"kernel\": \"%u.%u\", ", m->kv.major, m->kv.minor);
    else
        sl_strbuf_printf(b, "\"kernel\": null, ");
    sl_strbuf_printf(b, "\"kernel_source\": \"%s\", ",
                     r->kernel_source == 2   ? "option"
                     : r->kernel_source == 1 ? "capture"
                                             : "unknown");
    sl_replay_model_info mi;
    sl_replay_model_info_get(r, k, &mi);
    if (mi.notice[0]) {
        json_key_str(b, "notice", mi.notice);
        sl_strbuf_printf(b, ", ");
    }
    sl_strbuf_printf(b, "\"kernel_switch\": true, \"slub_kernel\": \"%s\", \"rules\": {", mi.slub_kernel);
    char rules[400];
    slub_rules(r, &mi, rules, sizeof rules);
    json_key_str(b, "slub", rules);
    sl_strbuf_printf(b, ", ");
    json_key_str(b, "percpu", sli_pcpu_rules(m->kv));
    sl_strbuf_printf(b, ", ");
    json_key_str(b, "kmalloc_types",
                 m->kv.major == 0 || m->kv.major > 5 || (m->kv.major == 5 && m->kv.minor >= 14)
                     ? "kmalloc-N, kmalloc-cg-N (__GFP_ACCOUNT), kmalloc-rcl-N (__GFP_RECLAIMABLE), dma-kmalloc-N "
                       "(__GFP_DMA); as named by the first kernel's version"
                     : "kmalloc-N, kmalloc-rcl-N (4.20+), dma-kmalloc-N; no kmalloc-cg before 5.14");
    unsigned modelled = 0;
    for (unsigned c = 0; c < r->ncaches; c++)
        modelled += r->caches[c].m[k].s != NULL;
    sl_page_stats ps = {0};
    if (m->ready)
        sl_page_stats_get((sl_page_zone *)&m->zone, &ps);
    sl_strbuf_printf(b,
                     "}, \"cpus\": %u, \"cpus_folded_events\": %llu, \"caches_modelled\": %u, \"zone_mb\": %zu, "
                     "\"zone_pages_in_use\": %llu, \"percpu_allocator\": %s%s%s, \"errors\": %llu, \"error_list\": [",
                     r->model_cpus, (unsigned long long)r->cpus_folded, modelled, r->cfg.zone_bytes >> 20,
                     (unsigned long long)(ps.pages_total - ps.pages_free), m->pcpu_ready ? "\"" : "",
                     m->pcpu_ready ? sl_pcpu_kind_name(m->pcpu_kind) : "null", m->pcpu_ready ? "\"" : "",
                     (unsigned long long)m->errors);
    for (unsigned i = 0; i < m->nerror_msgs; i++) {
        sl_strbuf_printf(b, "%s{\"line\": %llu, \"message\": ", i ? ", " : "",
                         (unsigned long long)m->error_msgs[i].line);
        sl_strbuf_json_string(b, m->error_msgs[i].msg, strlen(m->error_msgs[i].msg));
        sl_strbuf_printf(b, "}");
    }
    sl_strbuf_printf(
        b,
        "], \"sheaves\": {\"caches\": %u, \"alloc_cpu_sheaf\": %llu, \"free_cpu_sheaf\": %llu, "
        "\"sheaf_refill\": %llu, \"sheaf_flush\": %llu, \"barn_get\": %llu, \"barn_get_fail\": %llu, "
        "\"barn_put\": %llu, \"barn_put_fail\": %llu}}",
        mi.caches_with_sheaves, (unsigned long long)mi.alloc_cpu_sheaf, (unsigned long long)mi.free_cpu_sheaf,
        (unsigned long long)mi.sheaf_refill, (unsigned long long)mi.sheaf_flush, (unsigned long long)mi.barn_get,
        (unsigned long long)mi.barn_get_fail, (unsigned long long)mi.barn_put, (unsigned long long)mi.barn_put_fail);
}

static void json_cache_model(sl_strbuf *b, const sl_replay_cache_info *ci)
{
    uint64_t ops = ci->allocs + ci->frees;
    uint64_t slow = ci->alloc_slowpath + ci->free_slowpath;
    sl_strbuf_printf(b,
                     "\"fastpath_share\": %.4f, \"alloc_fastpath_share\": %.4f, \"free_fastpath_share\": %.4f, "
                     "\"slabs_allocated\": %llu, \"slabs_freed\": %llu, \"slabs_at_end\": %u, "
                     "\"partial_at_end\": %u, \"max_partial\": %u, \"sheaf_capacity\": %u, \"sheaf_refills\": %llu, "
                     "\"sheaf_flushes\": %llu",
                     ci->modelled ? 1.0 - frac(slow, ops) : 0,
                     ci->modelled ? 1.0 - frac(ci->alloc_slowpath, ci->allocs) : 0,
                     ci->modelled && ci->frees ? 1.0 - frac(ci->free_slowpath, ci->frees) : 0,
                     (unsigned long long)ci->slabs_allocated, (unsigned long long)ci->slabs_freed, ci->slabs,
                     ci->partial, ci->max_partial, ci->sheaf_capacity, (unsigned long long)ci->sheaf_refills,
                     (unsigned long long)ci->sheaf_flushes);
}

static void json_cache(sl_strbuf *b, const sl_replay *r, unsigned idx)
{
    const sli_cache *c = &r->caches[idx];
    sl_replay_cache_info ci;
    sl_replay_cache_info_get(r, idx, 0, &ci);
    static const char *const types[] = {"named", "kmalloc", "kmalloc-large", "unnamed"};
    sl_strbuf_printf(b, "{\"name\": ");
    sl_strbuf_json_string(b, c->name, strlen(c->name));
    sl_strbuf_printf(b, ", \"index\": %u, \"type\": \"%s\", \"modelled\": %s, \"geometry\": ", idx, types[c->type],
                     ci.modelled ? "true" : "false");
    if (ci.modelled)
        sl_strbuf_printf(b,
                         "{\"source\": \"%s\", \"object_size\": %u, \"slab_size\": %u, \"order\": %u, "
                         "\"objs_per_slab\": %u, \"matches_kernel\": %s}",
                         c->geometry_from_sysfs ? "sysfs" : "computed", ci.object_size, ci.size, ci.order,
                         ci.objs_per_slab,
                         c->geometry_matches == 1   ? "true"
                         : c->geometry_matches == 0 ? "false"
                                                    : "null");
    else
        sl_strbuf_printf(b, "null");
    sl_strbuf_printf(b,
                     ", \"allocs\": %llu, \"frees\": %llu, \"freed_unknown\": %llu, \"untraced_frees\": %llu, "
                     "\"bytes_req\": %llu, \"bytes_alloc\": %llu, \"internal_frag\": %.4f, \"live_at_end\": %llu, "
                     "\"peak_live\": %llu, "
                     "\"cross_cpu_frees\": %llu, \"lifetimes\": %llu, \"lifetime_p50_us\": %.3f, "
                     "\"lifetime_p99_us\": %.3f, ",
                     (unsigned long long)ci.allocs, (unsigned long long)ci.frees, (unsigned long long)ci.freed_unknown,
                     (unsigned long long)ci.untraced_frees, (unsigned long long)ci.bytes_req,
                     (unsigned long long)ci.bytes_alloc, 1.0 - frac(ci.bytes_req, ci.bytes_alloc),
                     (unsigned long long)ci.live, (unsigned long long)ci.peak_live,
                     (unsigned long long)ci.cross_cpu_frees, (unsigned long long)ci.lifetimes,
                     (double)ci.lifetime_p50_ns / 1e3, (double)ci.lifetime_p99_ns / 1e3);
    json_cache_model(b, &ci);
    if (r->nkernels > 1) {
        sl_strbuf_printf(b, ", \"by_kernel\": [");
        for (unsigned k = 0; k < r->nkernels; k++) {
            sl_replay_cache_info ck;
            sl_replay_cache_info_get(r, idx, k, &ck);
            sl_strbuf_printf(b, "%s{\"kernel\": \"%u.%u\", ", k ? ", " : "", r->models[k].kv.major,
                             r->models[k].kv.minor);
            json_cache_model(b, &ck);
            sl_strbuf_printf(b, "}");
        }
        sl_strbuf_printf(b, "]");
    }
    sl_strbuf_printf(b, "}");
}

static void json_events(sl_strbuf *b, const sl_replay *r)
{
    sl_strbuf_printf(b,
                     "\"events\": {\"lines\": %llu, \"parsed\": %llu, \"skipped\": %llu, \"skipped_by_reason\": "
                     "{\"header\": %llu, \"other_event\": %llu, \"bad\": %llu}, \"lost\": %llu, \"by_kind\": {",
                     (unsigned long long)r->lines, (unsigned long long)r->parsed,
                     (unsigned long long)(r->lines - r->parsed), (unsigned long long)r->header_lines,
                     (unsigned long long)r->other_events, (unsigned long long)r->bad,
                     (unsigned long long)r->lost_events);
    bool first = true;
    for (unsigned k = 1; k < SLI_EV_OTHER; k++) {
        if (!r->by_kind[k])
            continue;
        sl_strbuf_printf(b, "%s\"%s\": %llu", first ? "" : ", ", sli_event_kind_name(k),
                         (unsigned long long)r->by_kind[k]);
        first = false;
    }
    for (unsigned i = 0; i < r->nother_names; i++) {
        sl_strbuf_printf(b, "%s", first ? "" : ", ");
        sl_strbuf_json_string(b, r->other_names[i].name, strlen(r->other_names[i].name));
        sl_strbuf_printf(b, ": %llu", (unsigned long long)r->other_names[i].n);
        first = false;
    }
    if (r->other_names_overflow)
        sl_strbuf_printf(b, "%s\"(other)\": %llu", first ? "" : ", ", (unsigned long long)r->other_names_overflow);
    sl_strbuf_printf(b, "}, \"bad_lines\": [");
    for (unsigned i = 0; i < r->nbad_lines; i++) {
        sl_strbuf_printf(b, "%s{\"line\": %llu, \"reason\": ", i ? ", " : "", (unsigned long long)r->bad_lines[i].line);
        sl_strbuf_json_string(b, r->bad_lines[i].reason, strlen(r->bad_lines[i].reason));
        sl_strbuf_printf(b, "}");
    }
    sl_strbuf_printf(b, "], \"first_ts_s\": %.6f, \"last_ts_s\": %.6f, \"duration_s\": %.6f, \"out_of_order\": %llu}",
                     (double)r->first_ts / 1e9, (double)r->last_ts / 1e9, (double)(r->last_ts - r->first_ts) / 1e9,
                     (unsigned long long)r->ts_backwards);
}

static void json_percpu(sl_strbuf *b, const sl_replay *r)
{
    const sli_model *m = &r->models[0];
    sl_strbuf_printf(b, "\"percpu\": {\"allocator\": ");
    if (m->pcpu_ready)
        sl_strbuf_printf(b, "\"%s\", \"unit_size\": %d, \"units\": %u", sl_pcpu_kind_name(m->pcpu_kind),
                         m->pcpu.unit_size, m->pcpu.cfg.nr_units);
    else
        sl_strbuf_printf(b, "null, \"unit_size\": null, \"units\": null");
    uint64_t live = 0;
    for (unsigned i = 0; i < r->nchunks; i++)
        live += r->chunks[i].live;
    sl_strbuf_printf(b,
                     ", \"allocs\": %llu, \"frees\": %llu, \"freed_unknown\": %llu, \"fails\": %llu, "
                     "\"untraced_frees\": %llu, \"live_at_end\": %llu, \"chunks\": [",
                     (unsigned long long)r->pcpu_allocs, (unsigned long long)r->pcpu_frees,
                     (unsigned long long)r->pcpu_freed_unknown, (unsigned long long)r->pcpu_fails,
                     (unsigned long long)r->pcpu_untraced_frees, (unsigned long long)live);
    for (unsigned i = 0; i < r->nchunks; i++) {
        sl_replay_chunk_info ci;
        sl_replay_chunk_info_get(r, i, &ci);
        sl_strbuf_printf(
            b,
            "%s{\"base\": \"%016llx\", \"seen\": \"%s\", \"destroyed\": %s, \"allocs\": %llu, "
            "\"frees\": %llu, \"freed_unknown\": %llu, \"live\": %u, \"model_free_bytes\": %u, "
            "\"model_contig_bytes\": %u, \"model_populated_pages\": %u}",
            i ? ", " : "", (unsigned long long)ci.base, ci.created_in_trace ? "created" : "before the trace",
            ci.destroyed ? "true" : "false", (unsigned long long)ci.allocs, (unsigned long long)ci.frees,
            (unsigned long long)ci.freed_unknown, ci.live, ci.free_bytes, ci.contig_bytes, ci.nr_populated);
    }
    sl_strbuf_printf(b, "]}");
}

/* The caches the timeline names apart, the busiest first; the others add up as "other". */
#define TIMELINE_SERIES 8

static void json_bins(sl_strbuf *b, const char *key, const uint32_t *counts, unsigned n)
{
    sl_strbuf_printf(b, "\"%s\": [", key);
    for (unsigned i = 0; i < n; i++)
        sl_strbuf_printf(b, "%s%u", i ? ", " : "", counts[i]);
    sl_strbuf_printf(b, "]");
}

static void json_series(sl_strbuf *b, const char *name, const uint32_t *row, unsigned n)
{
    sl_strbuf_printf(b, "\n  {\"name\": ");
    sl_strbuf_json_string(b, name, strlen(name));
    sl_strbuf_printf(b, ", ");
    json_bins(b, "allocs", row, n);
    sl_strbuf_printf(b, ", ");
    json_bins(b, "frees", row + SLI_TIMELINE_BINS, n);
    sl_strbuf_printf(b, "}");
}

/* "timeline": allocations and frees per bin of the busiest caches and of the others together. */
static void json_timeline(sl_strbuf *b, const sl_replay *r)
{
    const sli_timeline *t = &r->timeline;
    unsigned n = t->started ? t->bins : 0;
    sl_strbuf_printf(b, "\"timeline\": {\"t0_s\": %.9f, \"bin_s\": %.9f, \"bins\": %u, \"series\": [",
                     t->started ? (double)t->t0_ns / 1e9 : 0.0,
                     (double)(t->started ? t->width_ns : SLI_TIMELINE_FIRST_NS) / 1e9, n);
    unsigned top[TIMELINE_SERIES];
    uint64_t top_total[TIMELINE_SERIES];
    unsigned ntop = 0, nrest = 0;
    for (unsigned i = 0; i < r->ncaches; i++) {
        const uint32_t *row = r->caches[i].timeline;
        if (!row)
            continue;
        uint64_t total = 0;
        for (unsigned k = 0; k < n; k++)
            total += (uint64_t)row[k] + row[SLI_TIMELINE_BINS + k];
        /* Insertion into the busiest so far; what falls off the end is "other". */
        unsigned at = ntop;
        while (at > 0 && top_total[at - 1] < total)
            at--;
        if (at == TIMELINE_SERIES) {
            nrest++;
            continue;
        }
        if (ntop == TIMELINE_SERIES)
            nrest++;
        else
            ntop++;
        memmove(top + at + 1, top + at, (ntop - 1 - at) * sizeof *top);
        memmove(top_total + at + 1, top_total + at, (ntop - 1 - at) * sizeof *top_total);
        top[at] = i;
        top_total[at] = total;
    }
    for (unsigned s = 0; s < ntop; s++) {
        sl_strbuf_printf(b, "%s", s ? "," : "");
        json_series(b, r->caches[top[s]].name, r->caches[top[s]].timeline, n);
    }
    if (nrest) {
        uint32_t *other = calloc(2 * SLI_TIMELINE_BINS, sizeof *other);
        if (!other) {
            b->failed = true;
            return;
        }
        for (unsigned i = 0; i < r->ncaches; i++) {
            const uint32_t *row = r->caches[i].timeline;
            bool named = false;
            for (unsigned s = 0; s < ntop; s++)
                named |= top[s] == i;
            if (!row || named)
                continue;
            for (unsigned k = 0; k < 2 * SLI_TIMELINE_BINS; k++)
                other[k] += row[k];
        }
        sl_strbuf_printf(b, ",");
        json_series(b, "other", other, n);
        free(other);
    }
    sl_strbuf_printf(b, "]}");
}

int sl_replay_json(sl_replay *r, sl_strbuf *out, const char *extra)
{
    sl_strbuf *b = out;
    sl_strbuf_printf(b, "{\"format\": \"slablab-replay/1\", \"status\": \"%s\", ",
                     r->refused    ? "refused"
                     : r->finished ? "ok"
                                   : "in progress");
    json_key_str(b, "error", r->refused ? r->error : NULL);
    sl_strbuf_printf(b, ", \"warnings\": [");
    for (unsigned i = 0; i < r->nwarnings; i++) {
        sl_strbuf_printf(b, "%s", i ? ", " : "");
        sl_strbuf_json_string(b, r->warnings[i], strlen(r->warnings[i]));
    }
    sl_strbuf_printf(b,
                     "],\n\"input\": {\"bytes\": %llu, \"gzip\": %s, \"archive\": %s, \"text_bytes\": %llu, "
                     "\"members_skipped\": %llu},\n\"capture\": ",
                     (unsigned long long)r->bytes_in, r->input == SLI_IN_GZIP ? "true" : "false",
                     r->text == SLI_TEXT_TAR ? "true" : "false", (unsigned long long)r->text_bytes,
                     (unsigned long long)r->members_skipped);
    if (r->saw_meta) {
        sl_strbuf_printf(b, "{");
        json_key_str(b, "kernel_release", r->release[0] ? r->release : NULL);
        static const char *const preemption[] = {NULL, "none", "preempt", "rt"};
        sl_strbuf_printf(b, ", ");
        json_key_str(b, "preemption", preemption[r->preemption]);
        sl_strbuf_printf(b,
                         ", \"cpus_possible\": %u, \"cpus_present\": %u, \"percpu_unit_size\": %llu, "
                         "\"sysfs_caches\": %u}",
                         r->cpus_possible, r->cpus_present, (unsigned long long)r->pcpu_unit_size, r->sysfs.ncaches);
    } else {
        sl_strbuf_printf(b, "null");
    }
    sl_strbuf_printf(b, ",\n");
    json_events(b, r);
    sl_strbuf_printf(
        b,
        ",\n\"pairs\": {\"matched\": %llu, \"live_at_end\": %llu, \"freed_unknown\": %llu, "
        "\"null_frees\": %llu, \"alloc_failed\": %llu, \"zero_size\": %llu, \"untraced_frees\": %llu, "
        "\"cache_mismatch\": %llu},\n\"alloc_contexts\": {\"blocking\": %llu, \"nonblocking\": %llu, "
        "\"no_reclaim\": %llu, \"unknown\": %llu},\n\"caches\": [",
        (unsigned long long)r->matched, (unsigned long long)r->objs.count, (unsigned long long)r->freed_unknown,
        (unsigned long long)r->null_frees, (unsigned long long)r->alloc_failed, (unsigned long long)r->zero_size,
        (unsigned long long)r->untraced_frees, (unsigned long long)r->cache_mismatch,
        (unsigned long long)r->alloc_ctx[SLI_CTX_GFP_BLOCK], (unsigned long long)r->alloc_ctx[SLI_CTX_GFP_NONBLOCK],
        (unsigned long long)r->alloc_ctx[SLI_CTX_GFP_NORECLAIM], (unsigned long long)r->alloc_ctx[SLI_CTX_GFP_UNKNOWN]);
    unsigned *order = sl_replay_order(r, SL_REPLAY_ORDER_CACHES);
    for (unsigned i = 0; order && i < r->ncaches; i++) {
        sl_strbuf_printf(b, "%s\n  ", i ? "," : "");
        json_cache(b, r, order[i]);
    }
    free(order);
    sl_strbuf_printf(b, "],\n\"callsites\": [");
    order = sl_replay_order(r, SL_REPLAY_ORDER_SITES);
    for (unsigned i = 0; order && i < r->nsites; i++) {
        const sli_site *s = &r->sites[order[i]];
        sl_strbuf_printf(b, "%s\n  {\"site\": ", i ? "," : "");
        const char *name = r->strings.data + s->name_off;
        sl_strbuf_json_string(b, name, strlen(name));
        sl_strbuf_printf(b,
                         ", \"allocs\": %llu, \"frees\": %llu, \"bytes_req\": %llu, \"bytes_alloc\": %llu, "
                         "\"cross_cpu\": %llu, \"frag\": %.4f}",
                         (unsigned long long)s->allocs, (unsigned long long)s->frees, (unsigned long long)s->bytes_req,
                         (unsigned long long)s->bytes_alloc, (unsigned long long)s->cross_cpu,
                         1.0 - frac(s->bytes_req, s->bytes_alloc));
    }
    free(order);
    sl_strbuf_printf(b, "],\n\"callsites_overflow\": %llu,\n", (unsigned long long)r->sites_overflow);
    json_percpu(b, r);
    sl_strbuf_printf(b, ",\n\"pages\": {\"allocs\": %llu, \"frees\": %llu, \"alloc_by_order\": [",
                     (unsigned long long)r->page_allocs, (unsigned long long)r->page_frees);
    for (unsigned o = 0; o <= 10; o++)
        sl_strbuf_printf(b, "%s%llu", o ? ", " : "", (unsigned long long)r->page_alloc_by_order[o]);
    sl_strbuf_printf(b, "], \"free_by_order\": [");
    for (unsigned o = 0; o <= 10; o++)
        sl_strbuf_printf(b, "%s%llu", o ? ", " : "", (unsigned long long)r->page_free_by_order[o]);
    sl_strbuf_printf(b, "]},\n");
    json_timeline(b, r);
    sl_strbuf_printf(b, ",\n\"model\": ");
    json_model(b, r, 0);
    sl_strbuf_printf(b, ",\n\"models\": [");
    for (unsigned k = 0; k < r->nkernels; k++) {
        sl_strbuf_printf(b, "%s", k ? ", " : "");
        json_model(b, r, k);
    }
    sl_replay_progress p;
    sl_replay_progress_get(r, &p);
    sl_strbuf_printf(b,
                     "],\n\"elapsed_s\": %.6f, \"events_per_s\": %.0f, \"cpu_s\": %.6f, \"events_per_cpu_s\": %.0f, "
                     "\"validate_s\": %.6f",
                     p.elapsed_s, p.events_per_s, p.cpu_s, p.events_per_cpu_s, p.validate_s);
    if (extra && *extra)
        sl_strbuf_printf(b, ", %s", extra);
    sl_strbuf_printf(b, "}\n");
    return b->failed ? SL_ENOMEM : SL_OK;
}
