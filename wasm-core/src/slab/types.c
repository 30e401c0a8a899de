/*
 * types.c - seed 002's table for a kernel's caches: each cache's management
 * type, order, objects per slab and waste under the rules before and after
 * OBJFREELIST_SLAB, the array-cache tunables enable_cpucache would give it,
 * the totals in the seed's form TOTAL = OBJFREELIST + NORMAL(leftover) +
 * NORMAL + OFF, and, for a SLAB kernel's /proc/slabinfo, whether the model
 * agrees with what that kernel chose.  One implementation for the CLI
 * (`slablab slab-types`) and the browser (bindings/api_slab.c), which both
 * print the JSON document below.
 *
 * Pure functions over caller-owned memory: no locks, no globals.
 */
#include "slab.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sl_slab_types_free(sl_slab_types *t)
{
    free(t->g[0]);
    free(t->g[1]);
    free(t->tun);
    free(t->match);
    *t = (sl_slab_types){0};
}

/* Does the model's "after" geometry and tunables agree with what the kernel reported? */
static bool agrees(const sl_slab_geometry *g, const sl_slab_tunables *t, const sl_slab_reported *r)
{
    return g->order == r->order && g->num == r->num && t->limit == r->limit && t->batchcount == r->batchcount &&
           t->shared == r->shared;
}

int sl_slab_types_compute(const sl_slab_spec_list *l, const sl_slab_variant *v, unsigned ncpus, sl_slab_types *out,
                          char *err, size_t errlen)
{
    *out = (sl_slab_types){.ncpus = ncpus, .n = l->n};
    sl_slab_kmalloc_table kt[2];
    for (unsigned r = 0; r < 2; r++) {
        sl_slab_variant rv = *v;
        rv.rules = (sl_slab_rules)r;
        if (sl_slab_kmalloc_table_init(&kt[r], &rv) != SL_OK || ncpus < 1 || ncpus > 8192) {
            snprintf(err, errlen, "a kernel from 4.10 to 6.7 (init_on_free from 5.3) and 1 to 8192 CPUs");
            return SL_EINVAL;
        }
    }
    out->kernel = kt[0].variant.kernel;
    out->init_on_free = kt[0].variant.init_on_free;
    size_t n = l->n ? l->n : 1;
    out->g[0] = calloc(n, sizeof *out->g[0]);
    out->g[1] = calloc(n, sizeof *out->g[1]);
    out->tun = calloc(n, sizeof *out->tun);
    out->match = calloc(n, sizeof *out->match);
    if (!out->g[0] || !out->g[1] || !out->tun || !out->match) {
        sl_slab_types_free(out);
        return SL_ENOMEM;
    }
    for (unsigned i = 0; i < l->n; i++) {
        int k = sl_slab_kmalloc_index_of_name(l->v[i].name);
        for (unsigned r = 0; r < 2; r++) {
            int rc = SL_OK;
            if (k >= 0 && (unsigned)k < kt[r].nkmalloc)
                out->g[r][i] = kt[r].g[k]; /* created at boot, before the kmalloc caches above it */
            else
                rc = sl_slab_geometry_compute(&l->v[i], &kt[r], &out->g[r][i]);
            if (rc != SL_OK) {
                snprintf(err, errlen, "cache %s: %s", l->v[i].name, sl_strerror(rc));
                sl_slab_types_free(out);
                return rc == SL_ENOMEM ? SL_EINVAL : rc;
            }
            out->totals[r][out->g[r][i].mgmt]++;
        }
        out->tun[i] = sl_slab_tunables_for(out->g[1][i].size, ncpus);
        out->match[i] = -1;
        if (l->reported) {
            out->match[i] = agrees(&out->g[1][i], &out->tun[i], &l->reported[i]);
            out->compared++;
            out->matched += (unsigned)out->match[i];
        }
    }
    return SL_OK;
}

/* A growing string; `failed` once an allocation failed (later appends do nothing). */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

static void put_json_string(sbuf *b, const char *s)
{
    put(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            put(b, "\\%c", c);
        else if (c < 0x20)
            put(b, "\\u%04x", c);
        else
            put(b, "%c", c);
    }
    put(b, "\"");
}

static void put_geometry(sbuf *b, const sl_slab_geometry *g)
{
    put(b,
        "{\"type\":\"%s\",\"order\":%u,\"objs_per_slab\":%u,\"size\":%u,\"align\":%u,\"left\":%u,"
        "\"freelist_size\":%u,\"off_cache_size\":%u,\"colour_off\":%u,\"colour\":%u,\"waste\":%u}",
        sl_slab_mgmt_name(g->mgmt), g->order, g->num, g->size, g->align, g->left, g->freelist_size, g->off_cache_size,
        g->colour_off, g->colour, g->waste);
}

static const char *const rules_names[2] = {"before", "after"};

char *sl_slab_types_json(const sl_slab_spec_list *l, const sl_slab_types *t, const char *source, unsigned rules_mask)
{
    sbuf b = {0};
    char kernel[16];
    sl_slab_kernel_name(t->kernel, kernel, sizeof kernel);
    put(&b, "{\"source\":");
    put_json_string(&b, source);
    put(&b, ",\"kernel\":\"%s\",\"init_on_free\":%s,\"cpus\":%u,\"caches\":[", kernel,
        t->init_on_free ? "true" : "false", t->ncpus);
    for (unsigned i = 0; i < l->n; i++) {
        const sl_slab_spec *s = &l->v[i];
        put(&b, "%s\n{\"name\":", i ? "," : "");
        put_json_string(&b, s->name);
        put(&b, ",\"object_size\":%u,\"align\":%u,\"flags\":%u", s->object_size, s->align, s->flags);
        if (l->reported && sl_slab_known_flags(s->name))
            put(&b, ",\"flags_known_by_name\":true"); /* slabinfo does not show them: the kernel's source does */
        for (unsigned r = 0; r < 2; r++)
            if (rules_mask >> r & 1) {
                put(&b, ",\"%s\":", rules_names[r]);
                put_geometry(&b, &t->g[r][i]);
            }
        put(&b, ",\"limit\":%u,\"batchcount\":%u,\"shared\":%u,\"kernel\":", t->tun[i].limit, t->tun[i].batchcount,
            t->tun[i].shared);
        if (l->reported) {
            const sl_slab_reported *k = &l->reported[i];
            put(&b, "{\"order\":%u,\"objs_per_slab\":%u,\"limit\":%u,\"batchcount\":%u,\"shared\":%u},\"match\":%s}",
                k->order, k->num, k->limit, k->batchcount, k->shared, t->match[i] ? "true" : "false");
        } else {
            put(&b, "null,\"match\":null}");
        }
    }
    put(&b, "],\n\"totals\":{");
    bool first = true;
    for (unsigned r = 0; r < 2; r++) {
        if (!(rules_mask >> r & 1))
            continue;
        const unsigned *n = t->totals[r];
        put(&b, "%s\"%s\":{\"total\":%u,\"objfreelist\":%u,\"normal_leftover\":%u,\"normal\":%u,\"off\":%u}",
            first ? "" : ",", rules_names[r], t->n, n[SL_SLAB_OBJFREELIST], n[SL_SLAB_NORMAL_LEFTOVER],
            n[SL_SLAB_NORMAL], n[SL_SLAB_OFF]);
        first = false;
    }
    put(&b, "},\"compared\":%u,\"matched\":%u}\n", t->compared, t->matched);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
