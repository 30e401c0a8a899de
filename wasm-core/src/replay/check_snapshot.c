/*
 * check_snapshot.c - a slablab-snapshot/1 document (docs/snapshot.md) read
 * into what the check needs of each cache: its geometry, each listed slab
 * (first byte, list, CPU, counters, the indices of its free objects in
 * freelist order, its CPU freelist's for a CPU slab) and its sheaves'
 * objects.
 *
 * The JSON is tokenized once (a flat token array, each container knowing
 * where its subtree ends, so a key is found by skipping whole values);
 * nothing is unescaped, since the format's keys and numbers need none.
 * Addresses are hex strings, numbers plain.  Limits: SL_CHECK_MAX_JSON
 * bytes, nesting 64 deep.  A cache is read only when asked for
 * (sli_check_cache_read), so a check of one cache does not build them all.
 */
#include "check_internal.h"

#include "../platform/kversion.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TOK_OBJECT = 1, TOK_ARRAY, TOK_STRING, TOK_PRIMITIVE };

static void say(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t len, const char *fmt, ...)
{
    if (!err || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

/* Tokenizes json into snap->tok.  false with err. */
static bool tokenize(sl_check_snapshot *snap, char *err, size_t errlen)
{
    const char *p = snap->json;
    size_t n = snap->len, cap = 1024, ntok = 0;
    sli_tok *tok = malloc(cap * sizeof *tok);
    uint32_t stack[64];
    unsigned depth = 0;
    if (!tok) {
        say(err, errlen, "no memory to read the snapshot");
        return false;
    }
    for (size_t i = 0; i < n;) {
        char ch = p[i];
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t' || ch == ',' || ch == ':') {
            i++;
            continue;
        }
        if (ch == '}' || ch == ']') {
            if (!depth || tok[stack[depth - 1]].type != (ch == '}' ? TOK_OBJECT : TOK_ARRAY)) {
                say(err, errlen, "not JSON: an unmatched '%c' at byte %zu", ch, i);
                goto fail;
            }
            sli_tok *t = &tok[stack[--depth]];
            t->end = (uint32_t)i + 1;
            t->next = (uint32_t)ntok;
            i++;
            continue;
        }
        if (ntok == cap) {
            sli_tok *grown = realloc(tok, 2 * cap * sizeof *tok);
            if (!grown) {
                say(err, errlen, "no memory to read the snapshot");
                goto fail;
            }
            tok = grown, cap *= 2;
        }
        if (depth)
            tok[stack[depth - 1]].size++;
        sli_tok *t = &tok[ntok];
        *t = (sli_tok){.start = (uint32_t)i};
        if (ch == '{' || ch == '[') {
            if (depth == 64) {
                say(err, errlen, "not a snapshot: nested more than 64 deep at byte %zu", i);
                goto fail;
            }
            t->type = ch == '{' ? TOK_OBJECT : TOK_ARRAY;
            stack[depth++] = (uint32_t)ntok++;
            i++;
            continue;
        }
        if (ch == '"') {
            size_t j = i + 1;
            while (j < n && p[j] != '"')
                j += p[j] == '\\' ? 2 : 1;
            if (j >= n) {
                say(err, errlen, "not JSON: a string runs past the end (byte %zu)", i);
                goto fail;
            }
            t->type = TOK_STRING, t->start = (uint32_t)i + 1, t->end = (uint32_t)j;
            i = j + 1;
        } else if (ch == '-' || (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' || ch == 'n') {
            size_t j = i;
            while (j < n && !strchr(" \n\r\t,:]}", p[j]))
                j++;
            t->type = TOK_PRIMITIVE, t->end = (uint32_t)j;
            i = j;
        } else {
            say(err, errlen, "not JSON: unexpected byte 0x%02x at %zu", (unsigned char)ch, i);
            goto fail;
        }
        t->next = (uint32_t)++ntok;
    }
    if (depth || !ntok || tok[0].type != TOK_OBJECT) {
        say(err, errlen,
            depth ? "not JSON: the document ends inside an object or array" : "not a snapshot: no JSON object");
        goto fail;
    }
    snap->tok = tok, snap->ntok = (uint32_t)ntok;
    return true;
fail:
    free(tok);
    return false;
}

static bool tok_is(const sl_check_snapshot *s, uint32_t t, const char *str)
{
    size_t l = strlen(str);
    return s->tok[t].type == TOK_STRING && s->tok[t].end - s->tok[t].start == l &&
           !memcmp(s->json + s->tok[t].start, str, l);
}

/* The value of key in object t, or 0 (token 0 is the root object: never a value). */
static uint32_t tok_get(const sl_check_snapshot *s, uint32_t t, const char *key)
{
    if (t >= s->ntok || s->tok[t].type != TOK_OBJECT)
        return 0;
    uint32_t k = t + 1;
    for (uint32_t i = 0; i < s->tok[t].size / 2 && k + 1 < s->ntok; i++) {
        if (tok_is(s, k, key))
            return k + 1;
        k = s->tok[k + 1].next;
    }
    return 0;
}

/* Array t's i-th element by walking: the caller iterates with tok_first / tok_after. */
static uint32_t tok_first(const sl_check_snapshot *s, uint32_t t) { return t + 1 < s->ntok ? t + 1 : 0; }
static uint32_t tok_after(const sl_check_snapshot *s, uint32_t t) { return s->tok[t].next; }
static uint32_t tok_len(const sl_check_snapshot *s, uint32_t t)
{
    return t && s->tok[t].type == TOK_ARRAY ? s->tok[t].size : 0;
}

/* A number, or a hex string "0x..." (addresses, flags).  false for null or anything else. */
static bool tok_u64(const sl_check_snapshot *s, uint32_t t, uint64_t *v)
{
    if (!t)
        return false;
    const sli_tok *k = &s->tok[t];
    const char *p = s->json + k->start, *e = s->json + k->end;
    uint64_t x = 0;
    if (k->type == TOK_STRING && e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        for (p += 2; p < e; p++) {
            int d = *p >= '0' && *p <= '9'   ? *p - '0'
                    : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                    : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                             : -1;
            if (d < 0 || x >> 60)
                return false;
            x = x << 4 | (uint64_t)d;
        }
    } else if (k->type == TOK_PRIMITIVE && p < e && *p >= '0' && *p <= '9') {
        for (; p < e; p++) {
            if (*p < '0' || *p > '9' || x > UINT64_MAX / 10)
                return false;
            x = x * 10 + (uint64_t)(*p - '0');
        }
    } else {
        return false;
    }
    *v = x;
    return true;
}

static uint32_t get_u32(const sl_check_snapshot *s, uint32_t obj, const char *key, bool *ok)
{
    uint64_t v = 0;
    if (!tok_u64(s, tok_get(s, obj, key), &v) || v > UINT32_MAX)
        *ok = false;
    return (uint32_t)v;
}

static bool get_bool(const sl_check_snapshot *s, uint32_t obj, const char *key)
{
    uint32_t t = tok_get(s, obj, key);
    return t && s->tok[t].type == TOK_PRIMITIVE && s->json[s->tok[t].start] == 't';
}

static void copy_str(const sl_check_snapshot *s, uint32_t t, char *out, size_t cap)
{
    out[0] = 0;
    if (t && s->tok[t].type == TOK_STRING) {
        size_t l = s->tok[t].end - s->tok[t].start;
        snprintf(out, cap, "%.*s", (int)(l < cap ? l : cap - 1), s->json + s->tok[t].start);
    }
}

sl_check_snapshot *sl_check_snapshot_parse(const char *json, size_t len, char *err, size_t errlen)
{
    if (!json || !len) {
        say(err, errlen, "no snapshot (an empty document)");
        return NULL;
    }
    if (len > SL_CHECK_MAX_JSON) {
        say(err, errlen, "a snapshot of %zu bytes: at most %u are read", len, (unsigned)SL_CHECK_MAX_JSON);
        return NULL;
    }
    sl_check_snapshot *s = calloc(1, sizeof *s);
    if (s)
        s->json = malloc(len + 1);
    if (!s || !s->json) {
        free(s);
        say(err, errlen, "no memory to read the snapshot");
        return NULL;
    }
    memcpy(s->json, json, len);
    s->json[len] = 0;
    s->len = len;
    if (!tokenize(s, err, errlen)) {
        sl_check_snapshot_free(s);
        return NULL;
    }
    if (!tok_is(s, tok_get(s, 0, "format"), "slablab-snapshot/1")) {
        say(err, errlen, "not a slablab-snapshot/1 document (its \"format\" is missing or another)");
        sl_check_snapshot_free(s);
        return NULL;
    }
    uint32_t kernel = tok_get(s, 0, "kernel");
    bool ok = true;
    copy_str(s, tok_get(s, kernel, "release"), s->release, sizeof s->release);
    s->nr_cpus = get_u32(s, kernel, "nr_cpus", &ok);
    s->page_size = get_u32(s, kernel, "page_size", &ok);
    s->caches = tok_get(s, 0, "caches");
    if (!ok || !s->release[0] || !s->caches || s->tok[s->caches].type != TOK_ARRAY) {
        say(err, errlen, "not a snapshot: kernel.release, kernel.nr_cpus, kernel.page_size or caches[] missing");
        sl_check_snapshot_free(s);
        return NULL;
    }
    s->ncaches = tok_len(s, s->caches);
    s->cache_tok = calloc(s->ncaches ? s->ncaches : 1, sizeof *s->cache_tok);
    s->names = calloc(s->ncaches ? s->ncaches : 1, sizeof *s->names);
    if (!s->cache_tok || !s->names) {
        say(err, errlen, "no memory to read the snapshot");
        sl_check_snapshot_free(s);
        return NULL;
    }
    uint32_t t = tok_first(s, s->caches);
    for (uint32_t i = 0; i < s->ncaches; i++, t = tok_after(s, t)) {
        s->cache_tok[i] = t;
        copy_str(s, tok_get(s, t, "name"), s->names[i], sizeof s->names[i]);
    }
    return s;
}

void sl_check_snapshot_free(sl_check_snapshot *s)
{
    if (!s)
        return;
    free(s->json);
    free(s->tok);
    free(s->cache_tok);
    free(s->names);
    free(s);
}

const char *sl_check_snapshot_release(const sl_check_snapshot *s) { return s ? s->release : ""; }
unsigned sl_check_snapshot_cache_count(const sl_check_snapshot *s) { return s ? s->ncaches : 0; }
const char *sl_check_snapshot_cache_name(const sl_check_snapshot *s, unsigned i)
{
    return s && i < s->ncaches ? s->names[i] : NULL;
}

void sli_check_cache_free(sli_check_cache *c)
{
    free(c->slabs);
    free(c->idx);
    free(c->sheaves);
    free(c->sheaf_objs);
    memset(c, 0, sizeof *c);
}

/* Appends v to the cache's index pool; false without memory. */
static bool push_idx(sli_check_cache *c, uint32_t v)
{
    if (c->nidx == c->cap_idx) {
        size_t cap = c->cap_idx ? 2 * c->cap_idx : 1024;
        uint32_t *g = realloc(c->idx, cap * sizeof *g);
        if (!g)
            return false;
        c->idx = g, c->cap_idx = cap;
    }
    c->idx[c->nidx++] = v;
    return true;
}

/* The index of the object at addr in a slab at base, or -1 for no object slot. */
static long index_of(const sli_check_cache *c, uint64_t base, uint64_t addr)
{
    if (addr < base + c->red_left_pad)
        return -1;
    uint64_t off = addr - base - c->red_left_pad;
    if (off % c->size || off / c->size >= c->objects)
        return -1;
    return (long)(off / c->size);
}

/* Reads the addresses of array t as indices of slab x (base) into the pool; counts bad ones in x->bad. */
static bool read_indices(const sl_check_snapshot *s, sli_check_cache *c, sli_check_slab *x, uint32_t t, uint32_t *n)
{
    *n = 0;
    uint32_t k = tok_first(s, t);
    for (uint32_t i = 0; i < tok_len(s, t); i++, k = tok_after(s, k)) {
        uint64_t a;
        long idx = tok_u64(s, k, &a) ? index_of(c, x->base, a) : -1;
        if (idx < 0) {
            x->bad++;
            continue;
        }
        if (!push_idx(c, (uint32_t)idx))
            return false;
        (*n)++;
    }
    return true;
}

static bool add_slab(const sl_check_snapshot *s, sli_check_cache *c, uint32_t t, uint8_t list, uint8_t cpu,
                     uint32_t cpu_freelist)
{
    if (!t || s->tok[t].type != TOK_OBJECT)
        return true;
    uint64_t base;
    if (!tok_u64(s, tok_get(s, t, "base"), &base) || !base) {
        c->no_base++;
        return true;
    }
    if (c->nslabs == c->cap_slabs) {
        size_t cap = c->cap_slabs ? 2 * c->cap_slabs : 64;
        sli_check_slab *g = realloc(c->slabs, cap * sizeof *g);
        if (!g)
            return false;
        c->slabs = g, c->cap_slabs = cap;
    }
    sli_check_slab *x = &c->slabs[c->nslabs];
    bool ok = true;
    *x = (sli_check_slab){.base = base, .list = list, .cpu = cpu, .torn = get_bool(s, t, "torn")};
    x->objects = get_u32(s, t, "objects", &ok);
    x->inuse = get_u32(s, t, "inuse", &ok);
    x->free_at = (uint32_t)c->nidx;
    if (!read_indices(s, c, x, tok_get(s, t, "freelist"), &x->nfree))
        return false;
    x->cpu_free_at = (uint32_t)c->nidx;
    if (cpu_freelist && !read_indices(s, c, x, cpu_freelist, &x->ncpu_free))
        return false;
    if (!ok || x->objects != c->objects)
        x->torn = 1, c->odd++;
    c->nslabs++;
    return true;
}

static bool add_sheaf(const sl_check_snapshot *s, sli_check_cache *c, uint32_t t, uint8_t place, uint8_t cpu)
{
    if (!t || s->tok[t].type != TOK_OBJECT)
        return true;
    uint32_t objs = tok_get(s, t, "objects");
    if (c->nsheaves == c->cap_sheaves) {
        size_t cap = c->cap_sheaves ? 2 * c->cap_sheaves : 16;
        sli_check_sheaf *g = realloc(c->sheaves, cap * sizeof *g);
        if (!g)
            return false;
        c->sheaves = g, c->cap_sheaves = cap;
    }
    sli_check_sheaf *x = &c->sheaves[c->nsheaves++];
    *x = (sli_check_sheaf){.place = place, .cpu = cpu, .at = (uint32_t)c->nsheaf_objs};
    uint32_t k = tok_first(s, objs);
    for (uint32_t i = 0; i < tok_len(s, objs); i++, k = tok_after(s, k)) {
        uint64_t a;
        if (!tok_u64(s, k, &a))
            continue;
        if (c->nsheaf_objs == c->cap_sheaf_objs) {
            size_t cap = c->cap_sheaf_objs ? 2 * c->cap_sheaf_objs : 256;
            uint64_t *g = realloc(c->sheaf_objs, cap * sizeof *g);
            if (!g)
                return false;
            c->sheaf_objs = g, c->cap_sheaf_objs = cap;
        }
        c->sheaf_objs[c->nsheaf_objs++] = a;
        x->size++;
    }
    return true;
}

int sli_check_cache_read(const sl_check_snapshot *s, const char *name, sli_check_cache *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    uint32_t t = 0;
    for (uint32_t i = 0; i < s->ncaches && !t; i++)
        if (!strcmp(s->names[i], name))
            t = s->cache_tok[i];
    if (!t) {
        say(err, errlen, "no cache named '%s' in the snapshot", name);
        return SL_EINVAL;
    }
    bool ok = true;
    snprintf(c->name, sizeof c->name, "%s", name);
    c->object_size = get_u32(s, t, "object_size", &ok);
    c->size = get_u32(s, t, "size", &ok);
    c->inuse_bytes = get_u32(s, t, "inuse", &ok);
    c->red_left_pad = get_u32(s, t, "red_left_pad", &ok);
    c->order = get_u32(s, t, "order", &ok);
    c->objects = get_u32(s, t, "objects_per_slab", &ok);
    bool opt = true;
    c->sheaf_capacity = get_u32(s, t, "sheaf_capacity", &opt);
    bool tun = true;
    c->min_partial = get_u32(s, t, "min_partial", &tun);
    c->cpu_partial = get_u32(s, t, "cpu_partial", &tun);
    c->has_tunables = tun;
    if (!ok || !c->size || !c->objects || c->order > 10) {
        say(err, errlen, "cache '%s': size, order or objects_per_slab missing or out of range", name);
        return SL_EINVAL;
    }
    uint32_t cpus = tok_get(s, t, "cpus"), k = tok_first(s, cpus);
    bool mem = true;
    for (uint32_t i = 0; i < tok_len(s, cpus) && mem; i++, k = tok_after(s, k)) {
        bool cok = true;
        uint32_t cpu = get_u32(s, k, "cpu", &cok);
        if (!cok || cpu > 255)
            continue;
        mem = add_slab(s, c, tok_get(s, k, "slab"), SLI_CHECK_CPU_SLAB, (uint8_t)cpu, tok_get(s, k, "freelist"));
        uint32_t part = tok_get(s, k, "partial"), p = tok_first(s, part);
        for (uint32_t j = 0; j < tok_len(s, part) && mem; j++, p = tok_after(s, p))
            mem = add_slab(s, c, p, SLI_CHECK_CPU_PARTIAL, (uint8_t)cpu, 0);
        uint32_t sh = tok_get(s, k, "sheaves");
        if (mem && sh) {
            mem = add_sheaf(s, c, tok_get(s, sh, "main"), SL_SLUB_SEED_MAIN, (uint8_t)cpu) &&
                  add_sheaf(s, c, tok_get(s, sh, "spare"), SL_SLUB_SEED_SPARE, (uint8_t)cpu) &&
                  add_sheaf(s, c, tok_get(s, sh, "rcu_free"), SL_SLUB_SEED_RCU_FREE, (uint8_t)cpu);
        }
        if (cpu + 1 > c->cpus_seen)
            c->cpus_seen = cpu + 1;
    }
    uint32_t nodes = tok_get(s, t, "nodes");
    k = tok_first(s, nodes);
    for (uint32_t i = 0; i < tok_len(s, nodes) && mem; i++, k = tok_after(s, k)) {
        uint32_t part = tok_get(s, k, "partial"), p = tok_first(s, part);
        for (uint32_t j = 0; j < tok_len(s, part) && mem; j++, p = tok_after(s, p))
            mem = add_slab(s, c, p, SLI_CHECK_NODE_PARTIAL, 0, 0);
        bool nok = true;
        c->nr_slabs += get_u32(s, k, "nr_slabs", &nok);
        c->left_out += get_u32(s, k, "partial_left_out", &nok);
        uint32_t barn = tok_get(s, k, "barn"), full = tok_get(s, barn, "full"), b = tok_first(s, full);
        for (uint32_t j = 0; j < tok_len(s, full) && mem; j++, b = tok_after(s, b))
            mem = add_sheaf(s, c, b, SL_SLUB_SEED_BARN_FULL, 0);
        c->nnodes++;
    }
    if (!mem) {
        sli_check_cache_free(c);
        say(err, errlen, "no memory to read cache '%s'", name);
        return SL_ENOMEM;
    }
    return SL_OK;
}

bool sli_check_version(const sl_check_snapshot *s, sl_slub_kversion *v)
{
    uint8_t major = 0, minor = 0;
    if (!sl_kversion_scan(s->release, SL_KVERSION_RELEASE, &major, &minor))
        return false;
    *v = (sl_slub_kversion){major, minor};
    return true;
}
