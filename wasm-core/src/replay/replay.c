/*
 * replay.c - the session: input stages, the capture's metadata, line
 * accounting, and dispatch of events to the SLUB and percpu replays.
 *
 * Input stages (see replay.h for the picture).  Each stage consumes all
 * the bytes it is given unless the session pauses (event limit) or refuses
 * the input, so "consumed" is exact at any byte:
 *
 *   raw_in    sniffs the first 16 bytes (gzip, trace.dat, other binary
 *             formats) into raw_sniff, then passes bytes through, or
 *             through the gunzip window, to text_in;
 *   text_in   sniffs the first 512 bytes of text (ustar, trace.dat inside
 *             gzip, binary noise) into text_sniff, then routes to the tar
 *             reader or straight to lines_in;
 *   lines_in  cuts lines; a line split between chunks is assembled in
 *             `line` (at most SL_REPLAY_MAX_LINE bytes: longer ones are bad
 *             lines, skipped to their newline);
 *   process_line  pauses before a line once `limit` events were applied
 *             (the line waits in `line`, `line_ready`), parses it, counts
 *             it, and applies events.
 *
 * Accounting invariant: lines = parsed + header_lines + lost-event notes +
 * other_events + bad, and skipped = lines - parsed.
 */
#include "replay_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- hash maps --------------------------------------------------------- */

/* murmur3's 64-bit finalizer: a bijection in which every input bit flips each output bit with probability ~1/2. */
SL_INLINE uint64_t mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

/* A seed per map: the clock and a counter, mixed (unknown to whoever wrote the trace). */
static uint64_t new_seed(void)
{
    static uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    counter += 0x9E3779B97F4A7C15ull;
    return mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ counter ^ (uint64_t)(uintptr_t)&counter);
}

int sli_map_init(sli_map *m, size_t esize)
{
    *m = (sli_map){.esize = esize, .mask = 63, .seed = new_seed()};
    m->keys = calloc(m->mask + 1, sizeof *m->keys);
    m->vals = calloc(m->mask + 2, esize);
    return m->keys && m->vals ? SL_OK : SL_ENOMEM;
}

void sli_map_fini(sli_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

SL_INLINE size_t slot_of(const sli_map *m, uint64_t key) { return (size_t)mix64(key ^ m->seed) & m->mask; }

SL_INLINE void *zero_val(const sli_map *m) { return m->vals + (m->mask + 1) * m->esize; }

void *sli_map_get(const sli_map *m, uint64_t key)
{
    if (!key)
        return m->has_zero ? zero_val(m) : NULL;
    for (size_t i = slot_of(m, key);; i = (i + 1) & m->mask) {
        if (m->keys[i] == key)
            return m->vals + i * m->esize;
        if (m->keys[i] == 0)
            return NULL;
    }
}

static bool grow(sli_map *m)
{
    sli_map n = {.esize = m->esize, .mask = m->mask * 2 + 1, .seed = m->seed, .has_zero = m->has_zero};
    n.keys = calloc(n.mask + 1, sizeof *n.keys);
    n.vals = malloc((n.mask + 2) * n.esize);
    if (!n.keys || !n.vals) {
        free(n.keys);
        free(n.vals);
        return false;
    }
    for (size_t i = 0; i <= m->mask; i++) {
        if (!m->keys[i])
            continue;
        size_t j = slot_of(&n, m->keys[i]);
        while (n.keys[j])
            j = (j + 1) & n.mask;
        n.keys[j] = m->keys[i];
        memcpy(n.vals + j * n.esize, m->vals + i * m->esize, m->esize);
    }
    memcpy(zero_val(&n), zero_val(m), m->esize);
    n.count = m->count;
    free(m->keys);
    free(m->vals);
    *m = n;
    return true;
}

void *sli_map_put(sli_map *m, uint64_t key, bool *existed)
{
    if (!key) {
        *existed = m->has_zero;
        if (!m->has_zero) {
            m->has_zero = true;
            memset(zero_val(m), 0, m->esize);
            m->count++;
        }
        return zero_val(m);
    }
    if ((m->count + 1) * 2 > m->mask + 1 && !grow(m))
        return NULL;
    size_t i = slot_of(m, key);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & m->mask;
    *existed = m->keys[i] == key;
    if (!*existed) {
        m->keys[i] = key;
        memset(m->vals + i * m->esize, 0, m->esize);
        m->count++;
    }
    return m->vals + i * m->esize;
}

bool sli_map_del(sli_map *m, uint64_t key)
{
    if (!key) {
        if (!m->has_zero)
            return false;
        m->has_zero = false;
        m->count--;
        return true;
    }
    size_t i = slot_of(m, key);
    while (m->keys[i] != key) {
        if (!m->keys[i])
            return false;
        i = (i + 1) & m->mask;
    }
    /* Backward shift: move later entries of the probe run into the hole. */
    for (size_t j = (i + 1) & m->mask; m->keys[j]; j = (j + 1) & m->mask) {
        size_t home = slot_of(m, m->keys[j]);
        /* j's entry may move to i only if its home is not in (i, j]. */
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between)
            continue;
        m->keys[i] = m->keys[j];
        memcpy(m->vals + i * m->esize, m->vals + j * m->esize, m->esize);
        i = j;
    }
    m->keys[i] = 0;
    m->count--;
    return true;
}

size_t sli_map_longest_probe(const sli_map *m)
{
    size_t longest = 0;
    for (size_t i = 0; i <= m->mask; i++)
        if (m->keys[i]) {
            size_t d = (i - slot_of(m, m->keys[i])) & m->mask;
            longest = d > longest ? d : longest;
        }
    return longest;
}

bool sli_grow(void *v, unsigned *cap, unsigned n, size_t esize, unsigned first)
{
    if (n < *cap)
        return true;
    unsigned ncap = *cap ? *cap * 2 : first;
    void *nv = realloc(*(void **)v, (size_t)ncap * esize);
    if (!nv)
        return false;
    *(void **)v = nv;
    *cap = ncap;
    return true;
}

uint64_t sli_hash_str(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

/* ---- lifetime histograms ----------------------------------------------- */

/* Bucket: values below SLI_HIST_SUB exactly; above, 16 sub-buckets per power of two. */
static unsigned hist_bucket(uint64_t v)
{
    if (v < SLI_HIST_SUB)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= 4 */
    unsigned sub = (unsigned)(v >> (e - 4)) & (SLI_HIST_SUB - 1);
    return (e - 3) * SLI_HIST_SUB + sub;
}

static uint64_t bucket_mid(unsigned b)
{
    if (b < SLI_HIST_SUB)
        return b;
    unsigned e = b / SLI_HIST_SUB + 3, sub = b % SLI_HIST_SUB;
    uint64_t lo = ((uint64_t)(SLI_HIST_SUB + sub)) << (e - 4);
    return lo + (((uint64_t)1 << (e - 4)) >> 1);
}

void sli_hist_add(sli_hist *h, uint64_t v)
{
    h->b[hist_bucket(v)]++;
    h->n++;
}

uint64_t sli_hist_quantile(const sli_hist *h, double q)
{
    if (!h || !h->n)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)(h->n - 1)), seen = 0;
    for (unsigned b = 0; b < SLI_HIST_BUCKETS; b++) {
        seen += h->b[b];
        if (seen > rank)
            return bucket_mid(b);
    }
    return bucket_mid(SLI_HIST_BUCKETS - 1);
}

/* ---- kernel versions --------------------------------------------------- */

/* The core's one version reader (platform/kversion.h). */
static const char *parse_one_version(const char *s, sl_kversion_form form, sl_kernel_version *v)
{
    return sl_kversion_scan(s, form, &v->major, &v->minor);
}

int sl_kernel_versions_parse(const char *s, sl_kernel_version v[SL_REPLAY_MAX_KERNELS], char *err, size_t errlen)
{
    int n = 0;
    const char *p = s ? s : "";
    for (;;) {
        const char *e = parse_one_version(p, SL_KVERSION_STRICT, &v[n]);
        if (!e || (*e && *e != ',')) {
            snprintf(err, errlen,
                     "--kernel takes one version or two separated by a comma (" SL_KVERSION_FORMS
                     "; e.g. 4.4,6.18); got '%s'",
                     s ? s : "");
            return SL_EINVAL;
        }
        n++;
        if (!*e)
            return n;
        if (n == SL_REPLAY_MAX_KERNELS) {
            snprintf(err, errlen, "--kernel takes at most two versions (X.Y,X.Y); got '%s'", s);
            return SL_EINVAL;
        }
        p = e + 1;
    }
}

bool sl_kernel_version_from_release(const char *release, sl_kernel_version *v)
{
    const char *e = parse_one_version(release, SL_KVERSION_RELEASE, v);
    return e && !*e;
}

/* ---- session ----------------------------------------------------------- */

/* CPU time of this process in microseconds: the replay runs on one thread, so this is its core's work. */
static uint64_t cpu_us(void) { return (uint64_t)clock() * 1000000u / CLOCKS_PER_SEC; }

void sli_warn(sl_replay *r, const char *fmt, ...)
{
    if (r->nwarnings == sizeof r->warnings / sizeof r->warnings[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->warnings[r->nwarnings++], sizeof r->warnings[0], fmt, ap);
    va_end(ap);
}

void sli_model_error(sl_replay *r, unsigned k, const char *fmt, ...)
{
    sli_model *m = &r->models[k];
    m->errors++;
    if (m->nerror_msgs == SL_REPLAY_MODEL_ERRORS)
        return;
    m->error_msgs[m->nerror_msgs].line = r->lines;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->error_msgs[m->nerror_msgs].msg, sizeof m->error_msgs[0].msg, fmt, ap);
    va_end(ap);
    m->nerror_msgs++;
}

static int refuse(sl_replay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(sl_replay *r, const char *fmt, ...)
{
    if (!r->refused) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->error, sizeof r->error, fmt, ap);
        va_end(ap);
        r->refused = true;
    }
    return SL_EINVAL;
}

int sl_replay_create(const sl_replay_config *cfg, sl_replay **out)
{
    *out = NULL;
    sl_kernel_version kv[SL_REPLAY_MAX_KERNELS] = {{0, 0}};
    int nk = 0;
    char err[200];
    if (cfg->kernel && (nk = sl_kernel_versions_parse(cfg->kernel, kv, err, sizeof err)) < 0)
        return SL_EINVAL;
    if (cfg->cache && strlen(cfg->cache) >= 64)
        return SL_EINVAL;
    sl_replay *r = calloc(1, sizeof *r);
    if (!r)
        return SL_ENOMEM;
    r->cfg = *cfg;
    if (cfg->cache) {
        snprintf(r->cache_filter, sizeof r->cache_filter, "%s", cfg->cache);
        r->cfg.cache = r->cache_filter;
    }
    r->cfg.kernel = NULL;
    if (cfg->kernel)
        snprintf(r->kernel_option, sizeof r->kernel_option, "%s", cfg->kernel);
    if (!r->cfg.zone_bytes)
        r->cfg.zone_bytes = SL_REPLAY_DEFAULT_ZONE;
    r->nkernels = nk > 0 ? (unsigned)nk : 1;
    r->kernel_source = nk > 0 ? 2 : 0;
    for (unsigned k = 0; k < r->nkernels; k++)
        r->models[k].kv = kv[k];
    r->limit = UINT64_MAX;
    r->large_cache = SLI_NONE16;
    memset(r->kmalloc_idx, 0xff, sizeof r->kmalloc_idx);
    int rc = SL_OK;
    if (sli_map_init(&r->objs, sizeof(sli_obj)) || sli_map_init(&r->cache_by_name, sizeof(uint32_t)) ||
        sli_map_init(&r->site_by_name, sizeof(uint32_t)) || sli_map_init(&r->areas, sizeof(sli_area)) ||
        sli_map_init(&r->chunk_by_base, sizeof(uint32_t)) || sli_map_init(&r->sysfs.folders, sizeof(uint64_t)) ||
        sli_map_init(&r->sysfs.aliases, sizeof(uint64_t)))
        rc = SL_ENOMEM;
    if (rc != SL_OK) {
        sl_replay_destroy(r);
        return rc;
    }
    *out = r;
    return SL_OK;
}

void sl_replay_destroy(sl_replay *r)
{
    if (!r)
        return;
    sli_replay_free_caches(r);
    sli_replay_free_pcpu(r);
    for (unsigned k = 0; k < r->nkernels; k++)
        if (r->models[k].ready)
            sl_page_zone_destroy(&r->models[k].zone);
    sli_map_fini(&r->objs);
    sli_map_fini(&r->cache_by_name);
    sli_map_fini(&r->site_by_name);
    sli_map_fini(&r->areas);
    sli_map_fini(&r->chunk_by_base);
    sli_map_fini(&r->sysfs.folders);
    sli_map_fini(&r->sysfs.aliases);
    free(r->sysfs.caches);
    free(r->sysfs.info);
    free(r->sysfs.links);
    sl_strbuf_free(&r->sysfs.proc_slabinfo);
    free(r->sites);
    sl_strbuf_free(&r->strings);
    sl_strbuf_free(&r->member_buf);
    if (r->gz) {
        sli_gunzip_fini(r->gz);
        free(r->gz);
    }
    free(r);
}

void sl_replay_set_limit(sl_replay *r, uint64_t events) { r->limit = events; }

uint64_t sl_replay_current(const sl_replay *r, const char **line, size_t *len)
{
    *line = r->cur_line;
    *len = r->cur_len;
    return r->events;
}
void sl_replay_cancel(sl_replay *r)
{
    r->cancelled = true;
    refuse(r, "cancelled");
}
const char *sl_replay_error(const sl_replay *r) { return r->refused ? r->error : NULL; }

unsigned sli_model_cpu(sl_replay *r, uint32_t cpu)
{
    if (cpu > r->max_cpu_seen)
        r->max_cpu_seen = cpu;
    if (cpu < r->model_cpus)
        return cpu;
    r->cpus_folded++;
    return cpu % r->model_cpus;
}

/* The model CPUs and kernel versions are fixed when the first event arrives. */
static void decide_models(sl_replay *r)
{
    unsigned cpus = r->cfg.cpus ? r->cfg.cpus : r->cpus_possible ? r->cpus_possible : r->cpus_hint;
    if (!cpus) {
        cpus = SL_SLUB_MAX_CPUS;
        sli_warn(r,
                 "the trace does not say how many CPUs the machine had (no capture metadata, no #P: or cpus= "
                 "header): the model runs %u; pass --cpus N",
                 cpus);
    }
    if (cpus > SL_SLUB_MAX_CPUS) {
        sli_warn(r, "the machine had %u CPUs; the SLUB model has at most %u, so CPU n replays as CPU n mod %u", cpus,
                 SL_SLUB_MAX_CPUS, SL_SLUB_MAX_CPUS);
        cpus = SL_SLUB_MAX_CPUS;
    }
    r->model_cpus = cpus;
    if (r->kernel_source == 0) {
        sl_kernel_version v;
        if (r->release[0] && sl_kernel_version_from_release(r->release, &v)) {
            r->models[0].kv = v;
            r->kernel_source = 1;
        }
    }
}

/* ---- the capture's members --------------------------------------------- */

static void meta_line(sl_replay *r, const char *key, const char *val)
{
    unsigned long v = strtoul(val, NULL, 10);
    if (!strcmp(key, "kernel_release"))
        snprintf(r->release, sizeof r->release, "%s", val);
    else if (!strcmp(key, "kernel_version"))
        r->preemption = strstr(val, "PREEMPT_RT") ? SLI_PREEMPT_RT
                        : strstr(val, "PREEMPT")  ? SLI_PREEMPT_FULL
                                                  : SLI_PREEMPT_NONE;
    else if (!strcmp(key, "cpus_possible"))
        r->cpus_possible = v <= SLI_MAX_TRACE_CPUS ? (unsigned)v : 0;
    else if (!strcmp(key, "cpus_present"))
        r->cpus_present = v <= SLI_MAX_TRACE_CPUS ? (unsigned)v : 0;
    else if (!strcmp(key, "percpu_unit_size") && v % SL_PAGE_SIZE == 0 && v <= (1ul << 28))
        r->pcpu_unit_size = v;
}

/* key=value lines (slabcap.meta), or "  unit_size : 1048576" (percpu_stats). */
static void parse_member_lines(sl_replay *r, char *text, bool pcpu_stats)
{
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        if (pcpu_stats) {
            unsigned long v;
            if (sscanf(line, " unit_size : %lu", &v) == 1 && !r->pcpu_unit_size && v % SL_PAGE_SIZE == 0 &&
                v <= (1ul << 28))
                r->pcpu_unit_size = v;
            continue;
        }
        char *eq = strchr(line, '=');
        if (eq) {
            *eq = 0;
            meta_line(r, line, eq + 1);
        }
    }
}

static sl_slub_kcache *sysfs_cache(sl_replay *r, const char *name, size_t len)
{
    sli_sysfs *sf = &r->sysfs;
    uint64_t *idx = sli_map_get(&sf->folders, sli_hash_str(name, len));
    if (idx)
        return &sf->caches[*idx];
    if (len >= sizeof sf->caches->name)
        return NULL;
    unsigned info_cap = sf->cap;
    if (!sli_grow(&sf->info, &info_cap, sf->ncaches, sizeof *sf->info, 256) ||
        !sli_grow(&sf->caches, &sf->cap, sf->ncaches, sizeof *sf->caches, 256))
        return NULL;
    bool existed;
    uint64_t *slot = sli_map_put(&sf->folders, sli_hash_str(name, len), &existed);
    if (!slot)
        return NULL;
    *slot = sf->ncaches;
    char buf[64];
    memcpy(buf, name, len);
    buf[len] = 0;
    sl_slub_kcache_init(&sf->caches[sf->ncaches], buf);
    memset(&sf->info[sf->ncaches], 0, sizeof sf->info[0]);
    snprintf(sf->info[sf->ncaches].name, sizeof sf->info[0].name, "%s", buf);
    sf->info[sf->ncaches].has_sysfs = true;
    return &sf->caches[sf->ncaches++];
}

const sl_slub_kcache *sli_sysfs_lookup(const sl_replay *r, const char *name, size_t len)
{
    const sli_sysfs *sf = &r->sysfs;
    uint64_t h = sli_hash_str(name, len);
    const uint64_t *target = sli_map_get(&sf->aliases, h);
    const uint64_t *idx = sli_map_get(&sf->folders, target ? *target : h);
    return idx ? &sf->caches[*idx] : NULL;
}

/* sys/kernel/slab/CACHE/ATTR (a file) or sys/kernel/slab/ALIAS (a link to a folder). */
static void sysfs_member(sl_replay *r, const char *rest, char type, const char *link, const char *value)
{
    const char *slash = strchr(rest, '/');
    if (type == '2' && !slash) {
        const char *target = strrchr(link, '/');
        target = target ? target + 1 : link;
        bool existed;
        uint64_t *slot = sli_map_put(&r->sysfs.aliases, sli_hash_str(rest, strlen(rest)), &existed);
        if (slot)
            *slot = sli_hash_str(target, strlen(target));
        sli_sysfs *sf = &r->sysfs;
        if (!sli_grow(&sf->links, &sf->links_cap, sf->nlinks, sizeof *sf->links, 256))
            return;
        snprintf(sf->links[sf->nlinks].name, sizeof sf->links->name, "%s", rest);
        snprintf(sf->links[sf->nlinks].target, sizeof sf->links->target, "%s", target);
        sf->nlinks++;
        return;
    }
    if (!slash || strchr(slash + 1, '/'))
        return;
    sl_slub_kcache *k = sysfs_cache(r, rest, (size_t)(slash - rest));
    if (k) {
        sl_slub_kcache_attr(k, slash + 1, value);
        sli_slabinfo_attr(&r->sysfs.info[k - r->sysfs.caches], slash + 1, value);
    }
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int member_begin(sl_replay *r)
{
    const char *name = r->tar.name;
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    snprintf(r->member_name, sizeof r->member_name, "%s", name);
    r->member_buf.len = 0;
    r->member = SLI_MEMBER_SKIP;
    const char *base = basename_of(name);
    if (!strcmp(name, "slabcap.meta")) {
        r->member = SLI_MEMBER_META;
        r->saw_meta = true;
    } else if (!strncmp(name, "sys/kernel/slab/", 16)) {
        if (r->tar.type == '2')
            sysfs_member(r, name + 16, '2', r->tar.link, NULL);
        else if (r->tar.type == '0')
            r->member = SLI_MEMBER_SYSFS;
    } else if (!strcmp(name, "sys/kernel/debug/percpu_stats")) {
        r->member = SLI_MEMBER_PCPU_STATS;
    } else if (!strcmp(name, "proc/slabinfo")) {
        r->member = SLI_MEMBER_SLABINFO;
    } else if (!strcmp(base, "trace.txt") || !strcmp(base, "trace")) {
        r->member = r->cfg.metadata_only ? SLI_MEMBER_SKIP : SLI_MEMBER_TRACE;
        r->saw_trace_member = true;
    } else if (!strcmp(base, "trace.dat")) {
        return refuse(r,
                      "the archive holds a binary trace-cmd %s: run `trace-cmd report` on it first and replay "
                      "the text",
                      name);
    } else {
        r->members_skipped++;
    }
    return SL_OK;
}

static void member_end(sl_replay *r)
{
    if (r->member == SLI_MEMBER_SKIP || r->member == SLI_MEMBER_TRACE || r->member_buf.failed)
        return;
    sl_strbuf_append(&r->member_buf, "", 1); /* NUL */
    if (r->member_buf.failed)
        return;
    char *text = r->member_buf.data;
    if (r->member == SLI_MEMBER_SLABINFO) {
        r->sysfs.proc_slabinfo.len = 0;
        sl_strbuf_append(&r->sysfs.proc_slabinfo, text, r->member_buf.len - 1);
    } else if (r->member == SLI_MEMBER_META || r->member == SLI_MEMBER_PCPU_STATS) {
        parse_member_lines(r, text, r->member == SLI_MEMBER_PCPU_STATS);
    } else if (r->member == SLI_MEMBER_SYSFS) {
        text[strcspn(text, "\n")] = 0;
        sysfs_member(r, r->member_name + 16, '0', NULL, text);
    }
}

/* ---- lines ------------------------------------------------------------- */

static void count_other(sl_replay *r, const sli_event *ev)
{
    size_t n = ev->name_len < sizeof r->other_names[0].name - 1 ? ev->name_len : sizeof r->other_names[0].name - 1;
    for (unsigned i = 0; i < r->nother_names; i++) {
        if (!strncmp(r->other_names[i].name, ev->name, n) && r->other_names[i].name[n] == 0) {
            r->other_names[i].n++;
            return;
        }
    }
    if (r->nother_names == SLI_MAX_OTHER_NAMES) {
        r->other_names_overflow++;
        return;
    }
    memcpy(r->other_names[r->nother_names].name, ev->name, n);
    r->other_names[r->nother_names].name[n] = 0;
    r->other_names[r->nother_names++].n = 1;
}

static void bad_line(sl_replay *r, const char *reason)
{
    r->bad++;
    if (r->nbad_lines < SL_REPLAY_BAD_LINES) {
        r->bad_lines[r->nbad_lines].line = r->lines;
        r->bad_lines[r->nbad_lines++].reason = reason;
    }
}

static void validate_cache(sl_replay *r, unsigned k, unsigned c, const char *when)
{
    char msg[160];
    sl_slub_cache *s = r->caches[c].m[k].s;
    if (s && sl_slub_validate(s, msg, sizeof msg) != SL_OK)
        sli_model_error(r, k, "%s: validate()%s: %s", r->caches[c].name, when, msg);
}

static void validate_pcpu(sl_replay *r, unsigned k, const char *when)
{
    if (r->models[k].pcpu_ready && sl_pcpu_validate(&r->models[k].pcpu) != SL_OK)
        sli_model_error(r, k, "percpu: validate()%s failed (stderr has the detail)", when);
}

/* Every model cache and percpu model (at the end of the input). */
static void validate_models(sl_replay *r)
{
    for (unsigned k = 0; k < r->nkernels; k++) {
        for (unsigned c = 0; c < r->ncaches; c++)
            validate_cache(r, k, c, " at the end");
        validate_pcpu(r, k, " at the end");
    }
}

/* After one event (validate_each): what it touched. */
static void validate_touched(sl_replay *r, const sli_event *ev)
{
    for (unsigned k = 0; k < r->nkernels; k++) {
        if (ev->kind >= SLI_EV_PCPU_ALLOC)
            validate_pcpu(r, k, "");
        for (unsigned t = 0; t < 2; t++)
            if (r->touched[t] != SLI_NONE16)
                validate_cache(r, k, r->touched[t], "");
    }
}

static void apply_event(sl_replay *r, sli_event *ev)
{
    if (!r->model_cpus)
        decide_models(r);
    if (r->have_ts && ev->ts_ns < r->last_ts)
        r->ts_backwards++;
    if (!r->have_ts) {
        r->first_ts = ev->ts_ns;
        r->have_ts = true;
    }
    if (ev->ts_ns > r->last_ts)
        r->last_ts = ev->ts_ns;
    r->touched[0] = r->touched[1] = SLI_NONE16;
    switch (ev->kind) {
    case SLI_EV_KMALLOC:
    case SLI_EV_CACHE_ALLOC:
    case SLI_EV_KFREE:
    case SLI_EV_CACHE_FREE:
        sli_replay_slub_event(r, ev);
        break;
    case SLI_EV_PAGE_ALLOC:
    case SLI_EV_PAGE_FREE: {
        bool alloc = ev->kind == SLI_EV_PAGE_ALLOC;
        (*(alloc ? &r->page_allocs : &r->page_frees))++;
        if (ev->order <= 10)
            (alloc ? r->page_alloc_by_order : r->page_free_by_order)[ev->order]++;
        break;
    }
    default:
        sli_replay_pcpu_event(r, ev);
        break;
    }
    if (r->cfg.validate_each)
        validate_touched(r, ev);
}

/* One complete line (no newline).  Returns SL_OK or SL_REPLAY_PAUSED (the line then waits in r->line). */
static int process_line(sl_replay *r, const char *line, size_t len)
{
    if (r->events >= r->limit) {
        if (line != r->line) {
            memcpy(r->line, line, len);
            r->line_len = len;
        }
        r->line_ready = true;
        r->paused = true;
        return SL_REPLAY_PAUSED;
    }
    r->line_ready = false;
    r->line_len = 0;
    r->lines++;
    if (len && line[len - 1] == '\r')
        len--;
    sli_event ev;
    switch (sli_parse_line(line, len, &ev)) {
    case SLI_LINE_EVENT:
        r->parsed++;
        r->events++;
        r->by_kind[ev.kind]++;
        r->cur_line = line;
        r->cur_len = len;
        apply_event(r, &ev);
        break;
    case SLI_LINE_OTHER_EVENT:
        r->other_events++;
        count_other(r, &ev);
        break;
    case SLI_LINE_HEADER:
        r->header_lines++;
        if (ev.cpus_hint && !r->cpus_hint)
            r->cpus_hint = ev.cpus_hint;
        break;
    case SLI_LINE_LOST:
        r->header_lines++;
        r->lost_events += ev.lost;
        break;
    default:
        bad_line(r, ev.reason);
        break;
    }
    return SL_OK;
}

static int lines_in(sl_replay *r, const uint8_t *p, size_t n, size_t *used)
{
    size_t i = 0;
    int rc = SL_OK;
    r->text_bytes += n;
    while (i < n && rc == SL_OK) {
        const uint8_t *nl = (const uint8_t *)sli_find_byte((const char *)p + i, n - i, '\n');
        size_t end = nl ? (size_t)(nl - p) : n;
        if (r->line_len || r->line_too_long || !nl) {
            /* Assemble in r->line (a line split between chunks). */
            size_t k = end - i;
            if (!r->line_too_long && r->line_len + k <= SL_REPLAY_MAX_LINE) {
                memcpy(r->line + r->line_len, p + i, k);
                r->line_len += k;
            } else {
                r->line_too_long = true;
            }
            i = nl ? end + 1 : n;
            if (!nl)
                break;
            if (r->line_too_long) {
                r->lines++;
                bad_line(r, "a line longer than 4096 bytes");
                r->line_too_long = false;
                r->line_len = 0;
                continue;
            }
            rc = process_line(r, r->line, r->line_len);
        } else {
            if (end - i > SL_REPLAY_MAX_LINE) {
                r->lines++;
                bad_line(r, "a line longer than 4096 bytes");
                i = end + 1;
                continue;
            }
            rc = process_line(r, (const char *)p + i, end - i);
            i = end + 1;
        }
    }
    if (rc != SL_OK)
        r->text_bytes -= n - i;
    *used = i;
    return rc;
}

/* A last line without its newline (at the end of the input or of the trace member). */
static int flush_last_line(sl_replay *r)
{
    if (r->line_too_long) {
        r->line_too_long = false;
        r->line_len = 0;
        r->lines++;
        bad_line(r, "a line longer than 4096 bytes");
        return SL_OK;
    }
    return r->line_len && !r->line_ready ? process_line(r, r->line, r->line_len) : SL_OK;
}

static int tar_in(sl_replay *r, const uint8_t *p, size_t n, size_t *used)
{
    *used = 0;
    while (*used < n || r->tar.state == SLI_TAR_DATA) {
        size_t u;
        const uint8_t *data;
        size_t len;
        int ev = sli_tar_next(&r->tar, p + *used, n - *used, &u, &data, &len);
        *used += u;
        switch (ev) {
        case SLI_TAR_ERROR:
            return refuse(r, "corrupt .slabcap archive: %s", r->tar.error);
        case SLI_TAR_MEMBER:
            if (member_begin(r) != SL_OK)
                return SL_EINVAL;
            break;
        case SLI_TAR_DATA_RUN: {
            size_t took = len;
            int rc = SL_OK;
            if (r->member == SLI_MEMBER_TRACE) {
                rc = lines_in(r, data, len, &took);
            } else if (r->member != SLI_MEMBER_SKIP) {
                if (r->member_buf.len + len <= (r->member == SLI_MEMBER_SYSFS ? 4096 : 1 << 20))
                    sl_strbuf_append(&r->member_buf, data, len);
            } else if (r->cfg.on_member) {
                r->cfg.on_member(r->cfg.user, r->member_name, data, len, false);
            }
            sli_tar_took(&r->tar, took);
            *used += took;
            if (rc != SL_OK)
                return rc;
            break;
        }
        case SLI_TAR_MEMBER_END:
            if (r->member == SLI_MEMBER_TRACE) {
                int rc = flush_last_line(r);
                if (rc != SL_OK) {
                    r->tar.state = SLI_TAR_DATA; /* come back to the member's end */
                    return rc;
                }
            }
            if (r->member == SLI_MEMBER_SKIP && r->cfg.on_member)
                r->cfg.on_member(r->cfg.user, r->member_name, NULL, 0, true);
            member_end(r);
            break;
        case SLI_TAR_END_OF_ARCHIVE:
            *used = n;
            return SL_OK;
        default: /* SLI_TAR_MORE */
            if (*used == n)
                return SL_OK;
            break;
        }
    }
    return SL_OK;
}

static bool looks_binary(const uint8_t *p, size_t n)
{
    size_t odd = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == 0)
            return true;
        odd += p[i] < 0x09 || (p[i] > 0x0d && p[i] < 0x20) || p[i] == 0x7f;
    }
    return odd * 10 > n;
}

/* Refuses known binary formats by their magic; SL_OK for anything else. */
static int check_magic(sl_replay *r, const uint8_t *p, size_t n, bool inside_gzip)
{
    static const struct {
        const char *magic;
        size_t len;
        const char *what;
    } formats[] = {
        {"\x17\x08\x44tracing", 10,
         "a binary trace-cmd trace.dat file: run `trace-cmd report -i FILE > trace.txt` first and replay the text"},
        {"\x28\xb5\x2f\xfd", 4, "zstd-compressed data: decompress it first (zstd -d FILE)"},
        {"\xfd"
         "7zXZ\0",
         6, "xz-compressed data: decompress it first (xz -d FILE)"},
        {"BZh", 3, "bzip2-compressed data: decompress it first (bunzip2 FILE)"},
        {"PK\x03\x04", 4, "a zip archive: unpack it and replay the trace inside"},
        {"PERFILE2", 8, "a perf.data file: slablab reads ftrace text (record with `slablab capture`)"},
        {"\x7f"
         "ELF",
         4, "an executable (ELF), not a trace"},
    };
    for (unsigned i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (n >= formats[i].len && !memcmp(p, formats[i].magic, formats[i].len))
            return refuse(r, "%s%s", inside_gzip ? "gzip holding " : "", formats[i].what);
    return SL_OK;
}

static int text_route(sl_replay *r, const uint8_t *p, size_t n, size_t *used)
{
    return r->text == SLI_TEXT_TAR ? tar_in(r, p, n, used) : lines_in(r, p, n, used);
}

/* Decides what the text stream is from its first bytes (all of them at the end of input). */
static int text_decide(sl_replay *r)
{
    const uint8_t *p = r->text_sniff;
    size_t n = r->text_sniff_len;
    if (check_magic(r, p, n, r->input == SLI_IN_GZIP) != SL_OK)
        return SL_EINVAL;
    if (n >= 263 && !memcmp(p + 257, "ustar", 5)) {
        r->text = SLI_TEXT_TAR;
        return SL_OK;
    }
    if (looks_binary(p, n))
        return refuse(r, "not a trace: binary data (it starts %02x %02x %02x %02x)", n > 0 ? p[0] : 0, n > 1 ? p[1] : 0,
                      n > 2 ? p[2] : 0, n > 3 ? p[3] : 0);
    r->text = SLI_TEXT_LINES;
    return SL_OK;
}

static int text_in(sl_replay *r, const uint8_t *p, size_t n, size_t *used)
{
    *used = 0;
    if (r->text == SLI_TEXT_SNIFF) {
        size_t k = sizeof r->text_sniff - r->text_sniff_len;
        if (k > n)
            k = n;
        memcpy(r->text_sniff + r->text_sniff_len, p, k);
        r->text_sniff_len += k;
        *used = k;
        if (r->text_sniff_len < sizeof r->text_sniff)
            return SL_OK;
        if (text_decide(r) != SL_OK)
            return SL_EINVAL;
    }
    if (r->text_sniff_pos < r->text_sniff_len) {
        size_t u;
        int rc = text_route(r, r->text_sniff + r->text_sniff_pos, r->text_sniff_len - r->text_sniff_pos, &u);
        r->text_sniff_pos += u;
        if (rc != SL_OK)
            return rc;
    }
    size_t u;
    int rc = text_route(r, p + *used, n - *used, &u);
    *used += u;
    return rc;
}

/* Hands the gunzip window's output to the text stage until it is empty or the text stage stops. */
static int drain_gzip(sl_replay *r)
{
    const uint8_t *o;
    size_t k = sli_gunzip_pending(r->gz, &o);
    if (!k)
        return SL_OK;
    size_t u;
    int rc = text_in(r, o, k, &u);
    sli_gunzip_take(r->gz, u);
    return rc;
}

static int raw_route(sl_replay *r, const uint8_t *p, size_t n, size_t *used)
{
    if (r->input == SLI_IN_PLAIN)
        return text_in(r, p, n, used);
    *used = 0;
    for (;;) {
        int rc = drain_gzip(r);
        if (rc != SL_OK)
            return rc;
        if (*used == n)
            return SL_OK;
        size_t u;
        if (sli_gunzip_run(r->gz, p + *used, n - *used, &u) == SLI_GZ_ERROR)
            return refuse(r, "corrupt gzip data: %s (after %llu bytes of output)", r->gz->error,
                          (unsigned long long)r->gz->total_out);
        *used += u;
    }
}

static int raw_decide(sl_replay *r)
{
    if (check_magic(r, r->raw_sniff, r->raw_sniff_len, false) != SL_OK)
        return SL_EINVAL;
    if (r->raw_sniff_len >= 2 && r->raw_sniff[0] == 0x1f && r->raw_sniff[1] == 0x8b) {
        r->gz = malloc(sizeof *r->gz);
        if (!r->gz || sli_gunzip_init(r->gz) != SL_OK)
            return refuse(r, "out of memory for the gzip decoder");
        r->input = SLI_IN_GZIP;
    } else {
        r->input = SLI_IN_PLAIN;
    }
    return SL_OK; /* the sniffed bytes are routed next, from raw_sniff_pos */
}

int sl_replay_feed(sl_replay *r, const void *data, size_t len, size_t *consumed)
{
    size_t dummy;
    if (!consumed)
        consumed = &dummy;
    *consumed = 0;
    if (r->refused)
        return SL_EINVAL;
    if (r->finished)
        return refuse(r, "data fed after the end of the input");
    uint64_t t0 = sl_time_ns(), c0 = cpu_us();
    const uint8_t *p = data;
    int rc = SL_OK;
    r->paused = false;
    if (r->line_ready)
        rc = process_line(r, r->line, r->line_len);
    if (rc == SL_OK && r->input == SLI_IN_SNIFF) {
        size_t k = sizeof r->raw_sniff - r->raw_sniff_len;
        if (k > len)
            k = len;
        memcpy(r->raw_sniff + r->raw_sniff_len, p, k);
        r->raw_sniff_len += k;
        *consumed = k;
        if (r->raw_sniff_len == sizeof r->raw_sniff)
            rc = raw_decide(r);
    }
    if (rc == SL_OK && r->input != SLI_IN_SNIFF && r->raw_sniff_pos < r->raw_sniff_len) {
        size_t u;
        rc = raw_route(r, r->raw_sniff + r->raw_sniff_pos, r->raw_sniff_len - r->raw_sniff_pos, &u);
        r->raw_sniff_pos += u;
    }
    if (rc == SL_OK && r->input != SLI_IN_SNIFF) {
        size_t u;
        rc = raw_route(r, p + *consumed, len - *consumed, &u);
        *consumed += u;
    }
    r->bytes_in += *consumed;
    r->elapsed_ns += sl_time_ns() - t0;
    r->cpu_us += cpu_us() - c0;
    return rc == SL_OK || rc == SL_REPLAY_PAUSED ? rc : SL_EINVAL;
}

int sl_replay_finish(sl_replay *r)
{
    if (r->refused)
        return SL_EINVAL;
    if (r->finished)
        return SL_OK;
    uint64_t t0 = sl_time_ns(), c0 = cpu_us();
    int rc = SL_OK;
    r->paused = false;
    if (r->line_ready)
        rc = process_line(r, r->line, r->line_len);
    if (rc == SL_OK && r->input == SLI_IN_SNIFF) {
        if (r->raw_sniff_len == 0)
            rc = refuse(r, "empty input: the file has no bytes");
        else
            rc = raw_decide(r);
    }
    if (rc == SL_OK && r->raw_sniff_pos < r->raw_sniff_len) {
        size_t u;
        rc = raw_route(r, r->raw_sniff + r->raw_sniff_pos, r->raw_sniff_len - r->raw_sniff_pos, &u);
        r->raw_sniff_pos += u;
    }
    if (rc == SL_OK && r->input == SLI_IN_GZIP) {
        rc = drain_gzip(r);
        if (rc == SL_OK && !sli_gunzip_at_member_end(r->gz))
            rc = refuse(r,
                        "truncated gzip: the compressed stream ends before its end marker (after %llu bytes of "
                        "output)",
                        (unsigned long long)r->gz->total_out);
    }
    if (rc == SL_OK && r->text == SLI_TEXT_SNIFF) {
        if (r->text_sniff_len == 0)
            rc = refuse(r, "empty input: no text%s", r->input == SLI_IN_GZIP ? " inside the gzip stream" : "");
        else
            rc = text_decide(r);
    }
    if (rc == SL_OK && r->text_sniff_pos < r->text_sniff_len) {
        size_t u;
        rc = text_route(r, r->text_sniff + r->text_sniff_pos, r->text_sniff_len - r->text_sniff_pos, &u);
        r->text_sniff_pos += u;
    }
    if (rc == SL_OK && r->text == SLI_TEXT_TAR) {
        size_t u;
        rc = tar_in(r, (const uint8_t *)"", 0, &u); /* a member end still due */
        if (rc == SL_OK && r->tar.state == SLI_TAR_DATA && r->tar.left)
            rc = refuse(r, "truncated archive: it ends inside member %s (%llu of %llu bytes)", r->member_name,
                        (unsigned long long)(r->tar.size - r->tar.left), (unsigned long long)r->tar.size);
        else if (rc == SL_OK && r->tar.state == SLI_TAR_HEADER && r->tar.hdr_have)
            rc = refuse(r, "truncated archive: it ends inside a member header");
        else if (rc == SL_OK && !r->saw_trace_member)
            rc = refuse(r, "the archive has no trace.txt member (is it a .slabcap from `slablab capture`?)");
    }
    if (rc == SL_OK && r->text == SLI_TEXT_LINES)
        rc = flush_last_line(r);
    if (rc == SL_OK) {
        r->finished = true;
        if (r->cfg.metadata_only)
            ;
        else if (r->lines == 0)
            rc = refuse(r, "empty input: no lines of text");
        else if (r->parsed == 0 && r->other_events == 0)
            rc = refuse(r, "not an ftrace trace: none of its %llu lines is a trace event%s%s%s",
                        (unsigned long long)r->lines, r->nbad_lines ? " (the first: " : "",
                        r->nbad_lines ? r->bad_lines[0].reason : "", r->nbad_lines ? ")" : "");
        else if (r->parsed == 0)
            sli_warn(r, "no kmem or percpu events in the trace: enable events/kmem and events/percpu (slablab "
                        "capture does)");
        r->elapsed_ns += sl_time_ns() - t0;
        r->cpu_us += cpu_us() - c0;
        t0 = sl_time_ns();
        if (rc == SL_OK) {
            if (r->lost_events)
                sli_warn(r,
                         "the kernel lost %llu events while tracing (a bigger buffer helps): some allocations "
                         "and frees are missing",
                         (unsigned long long)r->lost_events);
            validate_models(r);
        }
        r->validate_ns = sl_time_ns() - t0;
        return rc == SL_OK ? SL_OK : SL_EINVAL;
    }
    r->elapsed_ns += sl_time_ns() - t0;
    r->cpu_us += cpu_us() - c0;
    return rc == SL_OK || rc == SL_REPLAY_PAUSED ? rc : SL_EINVAL;
}

void sl_replay_progress_get(const sl_replay *r, sl_replay_progress *p)
{
    uint64_t model_errors = 0;
    for (unsigned k = 0; k < r->nkernels; k++)
        model_errors += r->models[k].errors;
    *p = (sl_replay_progress){
        .bytes_in = r->bytes_in,
        .text_bytes = r->text_bytes,
        .lines = r->lines,
        .events = r->events,
        .model_errors = model_errors,
        .elapsed_s = (double)r->elapsed_ns / 1e9,
        .validate_s = (double)r->validate_ns / 1e9,
        .events_per_s = r->elapsed_ns ? (double)r->events * 1e9 / (double)r->elapsed_ns : 0,
        .cpu_s = (double)r->cpu_us / 1e6,
        .events_per_cpu_s = r->cpu_us ? (double)r->events * 1e6 / (double)r->cpu_us : 0,
        .finished = r->finished,
    };
}
