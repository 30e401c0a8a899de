/*
 * cachelist.c - lists of caches for the geometry: the --caches text format,
 * /proc/slabinfo files and /sys/kernel/slab-like directories.
 *
 * Input is untrusted (a user's file, a directory of any shape): every
 * number is range-checked, names are truncated to SL_SLAB_NAME_MAX - 1
 * bytes, and problems come back as SL_EINVAL with "line N: ..." or
 * "CACHE/FILE: ..." in the caller's buffer.  No globals, no locks.
 */
#include "slab.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void sl_slab_spec_list_free(sl_slab_spec_list *l)
{
    free(l->v);
    free(l->reported);
    *l = (sl_slab_spec_list){0};
}

int sl_slab_spec_list_add(sl_slab_spec_list *l, const sl_slab_spec *s, const sl_slab_reported *rep)
{
    if (rep && !l->reported && l->n)
        return SL_EINVAL; /* every entry reports, or none */
    if (l->n == l->cap || (rep && !l->reported)) {
        unsigned cap = l->n == l->cap ? (l->cap ? l->cap * 2 : 64) : l->cap;
        sl_slab_spec *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return SL_ENOMEM;
        l->v = v;
        if (rep || l->reported) {
            sl_slab_reported *r = realloc(l->reported, cap * sizeof *r);
            if (!r)
                return SL_ENOMEM;
            l->reported = r;
        }
        l->cap = cap;
    }
    if (l->reported) {
        if (!rep)
            return SL_EINVAL;
        l->reported[l->n] = *rep;
    }
    l->v[l->n++] = *s;
    return SL_OK;
}

/* Parses a whole decimal number in [min, max] from [s, s+len). */
static bool parse_u32(const char *s, size_t len, uint32_t min, uint32_t max, uint32_t *out)
{
    if (len == 0 || len > 10)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool word_is(const char *w, size_t n, const char *lit) { return strlen(lit) == n && !memcmp(w, lit, n); }

/* The whitespace-separated words of [p, end): up to `max`; returns the count, or max + 1 when there are more. */
static unsigned split_words(const char *p, const char *end, const char **words, size_t *lens, unsigned max)
{
    unsigned nw = 0;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p == end)
            break;
        const char *w = p;
        while (p < end && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        if (nw == max)
            return max + 1;
        words[nw] = w;
        lens[nw++] = (size_t)(p - w);
    }
    return nw;
}

static int parse_line(const char *p, const char *end, unsigned lineno, sl_slab_spec *spec, char *err, size_t errlen)
{
    const char *words[16];
    size_t lens[16];
    unsigned nw = split_words(p, end, words, lens, 16);
    if (nw > 16) {
        set_err(err, errlen, "line %u: too many fields", lineno);
        return SL_EINVAL;
    }
    if (nw < 2) {
        set_err(err, errlen, "line %u: expected NAME OBJECT_SIZE [align=N] [flags]", lineno);
        return SL_EINVAL;
    }
    *spec = (sl_slab_spec){0};
    size_t nlen = lens[0] < SL_SLAB_NAME_MAX - 1 ? lens[0] : SL_SLAB_NAME_MAX - 1;
    memcpy(spec->name, words[0], nlen);
    if (!parse_u32(words[1], lens[1], 1, (uint32_t)SL_SLAB_KMALLOC_MAX, &spec->object_size)) {
        set_err(err, errlen, "line %u: object size must be 1 to %zu", lineno, SL_SLAB_KMALLOC_MAX);
        return SL_EINVAL;
    }
    for (unsigned i = 2; i < nw; i++) {
        const char *w = words[i];
        size_t n = lens[i];
        if (n > 6 && !memcmp(w, "align=", 6)) {
            if (!parse_u32(w + 6, n - 6, 0, (uint32_t)SL_SLAB_KMALLOC_MAX, &spec->align) ||
                (spec->align & (spec->align - 1))) {
                set_err(err, errlen, "line %u: align must be 0 or a power of two up to %zu", lineno,
                        SL_SLAB_KMALLOC_MAX);
                return SL_EINVAL;
            }
        } else if (word_is(w, n, "hwcache")) {
            spec->flags |= SL_SLAB_HWCACHE_ALIGN;
        } else if (word_is(w, n, "rcu")) {
            spec->flags |= SL_SLAB_TYPESAFE_RCU;
        } else if (word_is(w, n, "ctor")) {
            spec->flags |= SL_SLAB_CTOR;
        } else if (word_is(w, n, "reclaim")) {
            spec->flags |= SL_SLAB_RECLAIM;
        } else if (word_is(w, n, "noleaktrace")) {
            spec->flags |= SL_SLAB_NOLEAKTRACE;
        } else {
            set_err(err, errlen, "line %u: unknown field '%.*s'", lineno, (int)(n > 40 ? 40 : n), w);
            return SL_EINVAL;
        }
    }
    return SL_OK;
}

int sl_slab_caches_parse(const char *text, size_t len, sl_slab_spec_list *out, char *err, size_t errlen)
{
    const char *p = text, *end = text + len;
    unsigned lineno = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        lineno++;
        const char *hash = memchr(p, '#', (size_t)(eol - p));
        const char *stop = hash ? hash : eol;
        const char *q = p;
        while (q < stop && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q < stop) {
            sl_slab_spec spec;
            int rc = parse_line(q, stop, lineno, &spec, err, errlen);
            if (rc == SL_OK)
                rc = sl_slab_spec_list_add(out, &spec, NULL);
            if (rc != SL_OK)
                return rc;
        }
        p = eol + (eol < end);
    }
    return SL_OK;
}

uint32_t sl_slab_known_flags(const char *name)
{
    static const struct {
        const char *name;
        uint32_t flags;
    } known[] = {
        {"anon_vma", SL_SLAB_TYPESAFE_RCU | SL_SLAB_CTOR},
        {"bdev_cache", SL_SLAB_HWCACHE_ALIGN | SL_SLAB_RECLAIM | SL_SLAB_CTOR},
        {"ext4_inode_cache", SL_SLAB_RECLAIM | SL_SLAB_CTOR},
        {"nfs_inode_cache", SL_SLAB_RECLAIM | SL_SLAB_CTOR},
    };
    for (unsigned i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(name, known[i].name))
            return known[i].flags;
    return 0;
}

/* The column names of a slabinfo 2.1 cache line, by word position (NULL: a literal). */
static const char *const slabinfo_columns[16] = {
    "name",  "active_objs", "num_objs",     "objsize", "objperslab", "pagesperslab", NULL,        NULL,
    "limit", "batchcount",  "sharedfactor", NULL,      NULL,         "active_slabs", "num_slabs", "sharedavail",
};

static int slabinfo_line(const char *p, const char *end, unsigned lineno, sl_slab_spec *spec, sl_slab_reported *rep,
                         char *err, size_t errlen)
{
    const char *w[64];
    size_t len[64];
    unsigned nw = split_words(p, end, w, len, 64);
    static const char *const literal[16] = {[6] = ":", [7] = "tunables", [11] = ":", [12] = "slabdata"};
    bool shape = nw >= 16 && nw <= 64 && (nw == 16 || word_is(w[16], len[16], ":"));
    for (unsigned i = 6; shape && i < 13; i++)
        if (literal[i] && !word_is(w[i], len[i], literal[i]))
            shape = false;
    if (!shape) {
        set_err(err, errlen,
                "line %u: expected NAME and 5 numbers, ': tunables' and 3 numbers, ': slabdata' and 3 numbers", lineno);
        return SL_EINVAL;
    }
    uint32_t num[16] = {0};
    for (unsigned i = 1; i < 16; i++) {
        if (!slabinfo_columns[i])
            continue;
        if (!parse_u32(w[i], len[i], 0, UINT32_MAX, &num[i])) {
            set_err(err, errlen, "line %u: %s '%.*s' is not a number", lineno, slabinfo_columns[i],
                    (int)(len[i] > 20 ? 20 : len[i]), w[i]);
            return SL_EINVAL;
        }
    }
    if (num[3] < 1 || num[3] > SL_SLAB_KMALLOC_MAX) {
        set_err(err, errlen, "line %u: objsize %u is outside 1 .. %zu", lineno, num[3], SL_SLAB_KMALLOC_MAX);
        return SL_EINVAL;
    }
    if (!num[5] || (num[5] & (num[5] - 1)) || num[5] > (1u << SL_SLAB_KMALLOC_MAX_ORDER)) {
        set_err(err, errlen, "line %u: pagesperslab %u is not a power of two up to %u", lineno, num[5],
                1u << SL_SLAB_KMALLOC_MAX_ORDER);
        return SL_EINVAL;
    }
    *spec = (sl_slab_spec){.object_size = num[3]};
    size_t nlen = len[0] < SL_SLAB_NAME_MAX - 1 ? len[0] : SL_SLAB_NAME_MAX - 1;
    memcpy(spec->name, w[0], nlen);
    spec->flags = sl_slab_known_flags(spec->name); /* what slabinfo does not show, known by name */
    *rep = (sl_slab_reported){.order = (uint32_t)__builtin_ctz(num[5]),
                              .num = num[4],
                              .limit = num[8],
                              .batchcount = num[9],
                              .shared = num[10]};
    return SL_OK;
}

int sl_slab_slabinfo_parse(const char *text, size_t len, sl_slab_spec_list *out, char *err, size_t errlen)
{
    const char *p = text, *end = text + len;
    unsigned lineno = 0, header = 0, slab_line = 0, slub_line = 0;
    sl_slab_spec_list l = {0};
    sl_slab_reported *rep = NULL;
    unsigned nrep = 0, caprep = 0;
    int rc = SL_OK;
    while (rc == SL_OK && p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        lineno++;
        const char *q = p;
        while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == eol || *q == '#') {
            /* blank or a comment */
        } else if (!header) {
            static const char want[] = "slabinfo - version: ";
            size_t n = (size_t)(eol - q);
            while (n && (q[n - 1] == '\r' || q[n - 1] == ' '))
                n--;
            if (n < sizeof want - 1 || memcmp(q, want, sizeof want - 1)) {
                set_err(err, errlen, "line %u: not a /proc/slabinfo file (it starts with 'slabinfo - version: 2.1')",
                        lineno);
                rc = SL_EINVAL;
            } else if (!word_is(q + sizeof want - 1, n - (sizeof want - 1), "2.1")) {
                set_err(err, errlen, "line %u: slabinfo version '%.*s'; only 2.1 is read", lineno,
                        (int)(n - (sizeof want - 1) > 16 ? 16 : n - (sizeof want - 1)), q + sizeof want - 1);
                rc = SL_EINVAL;
            }
            header = lineno;
        } else {
            sl_slab_spec spec;
            sl_slab_reported r;
            rc = slabinfo_line(q, eol, lineno, &spec, &r, err, errlen);
            if (rc == SL_OK) {
                unsigned *seen = r.limit ? &slab_line : &slub_line;
                if (!*seen)
                    *seen = lineno;
                if (slab_line && slub_line) {
                    set_err(err, errlen, "line %u: tunables are 0 on line %u but not on line %u", lineno, slub_line,
                            slab_line);
                    rc = SL_EINVAL;
                }
            }
            if (rc == SL_OK && nrep == caprep) {
                caprep = caprep ? caprep * 2 : 64;
                sl_slab_reported *bigger = realloc(rep, caprep * sizeof *rep);
                rc = bigger ? SL_OK : SL_ENOMEM;
                if (bigger)
                    rep = bigger;
            }
            if (rc == SL_OK) {
                rep[nrep++] = r;
                rc = sl_slab_spec_list_add(&l, &spec, NULL);
            }
        }
        p = eol + (eol < end);
    }
    if (rc == SL_OK && !header) {
        set_err(err, errlen, "line 1: not a /proc/slabinfo file (it is empty)");
        rc = SL_EINVAL;
    } else if (rc == SL_OK && !l.n) {
        set_err(err, errlen, "line %u: no caches after the header", lineno);
        rc = SL_EINVAL;
    }
    /* Only a SLAB kernel's file says what the kernel chose: tunables are 0 under SLUB. */
    for (unsigned i = 0; rc == SL_OK && i < l.n; i++)
        rc = sl_slab_spec_list_add(out, &l.v[i], slab_line ? &rep[i] : NULL);
    free(rep);
    sl_slab_spec_list_free(&l);
    return rc;
}

/*
 * Reads DIR/NAME/FILE into buf (NUL-terminated, trailing newline removed).
 * Returns true when the file exists and could be read.
 */
static bool read_attr(const char *dir, const char *name, const char *file, char *buf, size_t buflen)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s/%s", dir, name, file) >= sizeof path)
        return false;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, buflen - 1, f);
    bool ok = !ferror(f);
    fclose(f);
    buf[n] = 0;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = 0;
    return ok;
}

/* A 0/1 attribute; absent or unreadable means 0. */
static bool attr_flag(const char *dir, const char *name, const char *file)
{
    char buf[32];
    return read_attr(dir, name, file, buf, sizeof buf) && buf[0] == '1';
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const sl_slab_spec *)a)->name, ((const sl_slab_spec *)b)->name);
}

int sl_slab_caches_read_sysfs(const char *dir, sl_slab_spec_list *out, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        set_err(err, errlen, "%s: %s", dir, strerror(errno));
        return SL_EINVAL;
    }
    unsigned first = out->n;
    int rc = SL_OK;
    struct dirent *e;
    while (rc == SL_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path || lstat(path, &st) != 0 ||
            !S_ISDIR(st.st_mode))
            continue; /* symlinks are SLUB's aliases of merged caches */
        sl_slab_spec spec = {0};
        size_t nlen = strnlen(e->d_name, SL_SLAB_NAME_MAX - 1);
        memcpy(spec.name, e->d_name, nlen);
        char buf[256];
        if (!read_attr(dir, e->d_name, "object_size", buf, sizeof buf) ||
            !parse_u32(buf, strlen(buf), 1, (uint32_t)SL_SLAB_KMALLOC_MAX, &spec.object_size)) {
            set_err(err, errlen, "%s/object_size: missing or not a size of 1 to %zu", e->d_name, SL_SLAB_KMALLOC_MAX);
            rc = SL_EINVAL;
            break;
        }
        if (read_attr(dir, e->d_name, "align", buf, sizeof buf) &&
            (!parse_u32(buf, strlen(buf), 0, (uint32_t)SL_SLAB_KMALLOC_MAX, &spec.align) ||
             (spec.align & (spec.align - 1)))) {
            set_err(err, errlen, "%s/align: not a power of two up to %zu", e->d_name, SL_SLAB_KMALLOC_MAX);
            rc = SL_EINVAL;
            break;
        }
        /* SLUB prints the constructor's symbol, or nothing. */
        if (read_attr(dir, e->d_name, "ctor", buf, sizeof buf) && buf[0])
            spec.flags |= SL_SLAB_CTOR;
        if (attr_flag(dir, e->d_name, "destroy_by_rcu"))
            spec.flags |= SL_SLAB_TYPESAFE_RCU;
        if (attr_flag(dir, e->d_name, "hwcache_align"))
            spec.flags |= SL_SLAB_HWCACHE_ALIGN;
        if (attr_flag(dir, e->d_name, "reclaim_account"))
            spec.flags |= SL_SLAB_RECLAIM;
        rc = sl_slab_spec_list_add(out, &spec, NULL);
    }
    closedir(d);
    if (rc == SL_OK && out->n == first) {
        set_err(err, errlen, "%s: no cache directories", dir);
        rc = SL_EINVAL;
    }
    if (rc == SL_OK)
        qsort(out->v + first, out->n - first, sizeof *out->v, by_name);
    return rc;
}
