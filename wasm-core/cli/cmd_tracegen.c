/*
 * cmd_tracegen.c - `slablab trace-gen`: a trace of any length for the
 * replay benchmark (docs/replay.md), streamed to standard output, built by
 * repeating a real trace's text.
 *
 * Repetition k shifts every pointer the trace names (ptr=, and percpu
 * ptr=) by k << 40, so its objects are new objects, and every timestamp by
 * k times the trace's span plus a millisecond; CPUs, caches, sizes, call
 * sites, base_addr and off stay as recorded.  The objects the base trace
 * leaves live (allocated and never freed in it, including those whose
 * frees the kernel does not trace) are freed at the end of each
 * repetition by generated kfree / percpu_free_percpu lines, so the live
 * set, and with it the replay's memory, stays that of one repetition.
 * The pointer shift keeps the hashed 64-bit values distinct; the percpu
 * chunks are the trace's own, reused by every repetition.
 */
#include "cli.h"
#include "input.h"

#include "../src/replay/replay.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int run_tracegen(int argc, char **argv);
SL_CLI_COMMAND(
    tracegen, .name = "trace-gen",
    .summary = "a long trace for the replay benchmark: a real trace's text repeated, pointers shifted",
    .usage = "slablab trace-gen (TRACE.txt | -) [--bytes N[K|M|G] (default 1G, at most 1P)]   (writes to standard "
             "output; the base trace is held in memory, at most 256 MiB of it)",
    .run = run_tracegen)

typedef struct line {
    const char *text;
    size_t len;
    size_t ts_at, ts_len;   /* the timestamp's digits ("12.345678") */
    size_t ptr_at, ptr_len; /* the ptr= value, or ptr_len 0 */
    uint64_t ts_ns;
} line;

typedef struct live {
    uint64_t ptr;
    bool percpu;
    uint64_t base;
    unsigned off;
    unsigned cpu;
} live;

/* The largest --bytes: 1 PiB (a bound, not a limit anyone meets: the output is streamed). */
#define MAX_TARGET (1ull << 50)
/* The most of the base trace read into memory: it is repeated, so it is held whole. */
#define MAX_BASE (256ul << 20)

/* "N", "NK", "NM" or "NG" (a whole positive number, no sign) within 1 .. MAX_TARGET. */
static bool parse_size(const char *s, unsigned long long *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end || v == 0 || v > MAX_TARGET >> shift)
        return false;
    *out = v << shift;
    return true;
}

/*
 * The output: a buffer flushed to standard output when the next piece does
 * not fit; a piece larger than the buffer (a line of any length) is written
 * straight through.  ok turns false on the first write error.
 */
typedef struct outbuf {
    char data[1 << 20];
    size_t len;
    unsigned long long written;
    bool ok;
} outbuf;

static void out_flush(outbuf *o)
{
    if (o->len && o->ok && fwrite(o->data, 1, o->len, stdout) != o->len)
        o->ok = false;
    o->written += o->len;
    o->len = 0;
}

static void out_put(outbuf *o, const void *p, size_t n)
{
    if (o->len + n > sizeof o->data)
        out_flush(o);
    if (n > sizeof o->data) {
        if (o->ok && fwrite(p, 1, n, stdout) != n)
            o->ok = false;
        o->written += n;
        return;
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
}

static void out_printf(outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(outbuf *o, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    out_put(o, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* One pointer's event in the base trace, for finding what it leaves live. */
typedef struct ptr_event {
    uint64_t ptr;
    size_t index; /* the order of events */
    bool alloc;   /* an allocation (else a free) */
    live what;
} ptr_event;

static int by_ptr_then_index(const void *pa, const void *pb)
{
    const ptr_event *a = pa, *b = pb;
    if (a->ptr != b->ptr)
        return a->ptr < b->ptr ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int by_index(const void *pa, const void *pb)
{
    const ptr_event *a = pa, *b = pb;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Where " 12.345678: event:" starts: the first ": " preceded by digits '.' digits. */
static bool find_ts(const char *t, size_t n, size_t *at, size_t *len, uint64_t *ns)
{
    for (size_t i = 1; i + 1 < n; i++) {
        if (t[i] != ':' || t[i + 1] != ' ' || t[i - 1] < '0' || t[i - 1] > '9')
            continue;
        size_t e = i, s = i;
        while (s > 0 && ((t[s - 1] >= '0' && t[s - 1] <= '9') || t[s - 1] == '.'))
            s--;
        const char *dot = memchr(t + s, '.', e - s);
        if (!dot)
            continue;
        uint64_t sec = strtoull(t + s, NULL, 10), frac = 0;
        unsigned digits = 0;
        for (const char *p = dot + 1; p < t + e && digits < 9; p++, digits++)
            frac = frac * 10 + (uint64_t)(*p - '0');
        while (digits++ < 9)
            frac *= 10;
        *at = s;
        *len = e - s;
        *ns = sec * 1000000000ull + frac;
        return true;
    }
    return false;
}

static const char *field(const char *t, size_t n, const char *key, size_t *len)
{
    size_t k = strlen(key);
    for (size_t i = 0; i + k <= n; i++) {
        if ((i == 0 || t[i - 1] == ' ') && !memcmp(t + i, key, k)) {
            size_t e = i + k;
            while (e < n && t[e] != ' ')
                e++;
            *len = e - i - k;
            return t + i + k;
        }
    }
    return NULL;
}

static bool has(const char *t, size_t n, const char *s) { return memmem(t, n, s, strlen(s)) != NULL; }

static int run_tracegen(int argc, char **argv)
{
    const char *path = NULL;
    unsigned long long target = 1ull << 30;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
            if (!parse_size(argv[++i], &target))
                return sl_cli_usage_error(&sl_cli_cmd_tracegen, "--bytes takes a size from 1 to 1P such as 1G or 500M");
        } else if (!path && (argv[i][0] != '-' || !strcmp(argv[i], "-"))) {
            path = argv[i];
        } else {
            return sl_cli_usage_error(&sl_cli_cmd_tracegen, "unknown argument '%s'", argv[i]);
        }
    }
    if (!path)
        return sl_cli_usage_error(&sl_cli_cmd_tracegen, "give a plain-text trace (tar xzOf X.slabcap.gz trace.txt)");
    char err[512];
    sl_strbuf text = {0};
    if (sl_cli_read_input(path, MAX_BASE, &text.data, &text.len, err, sizeof err) != 0) {
        fprintf(stderr, "slablab trace-gen: %s\n", err);
        return 1;
    }
    if (!text.len) {
        fprintf(stderr, "slablab trace-gen: %s is empty\n", path);
        sl_strbuf_free(&text);
        return 1;
    }

    /* The event lines, and each pointer's events (to find what the base trace leaves live). */
    size_t nlines = 0, cap = 1024, nev = 0, ev_cap = 1024;
    line *lines = malloc(cap * sizeof *lines);
    ptr_event *ev = malloc(ev_cap * sizeof *ev);
    uint64_t first = 0, last = 0;
    int status = lines && ev ? 0 : 1;
    for (char *p = text.data, *end = text.data + text.len; !status && p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        line l = {.text = p, .len = len};
        p += len + 1;
        if (!find_ts(l.text, len, &l.ts_at, &l.ts_len, &l.ts_ns))
            continue;
        const char *ptr = field(l.text, len, "ptr=", &l.ptr_len);
        l.ptr_at = ptr ? (size_t)(ptr - l.text) : 0;
        if (ptr && (l.ptr_len != 16 || !strncmp(ptr, "0000000000000000", 16)))
            l.ptr_len = 0; /* 0x..., (nil), NULL: left as they are */
        if (!first)
            first = l.ts_ns;
        last = l.ts_ns;
        if (nlines == cap) {
            line *bigger = realloc(lines, (cap *= 2) * sizeof *lines);
            if (!bigger) {
                status = 1;
                break;
            }
            lines = bigger;
        }
        lines[nlines++] = l;
        if (!l.ptr_len)
            continue;
        bool alloc = has(l.text, len, ": kmalloc: ") || has(l.text, len, ": kmem_cache_alloc: ");
        bool pcpu_alloc = has(l.text, len, ": percpu_alloc_percpu: ");
        bool freed = has(l.text, len, ": kfree: ") || has(l.text, len, ": kmem_cache_free: ") ||
                     has(l.text, len, ": percpu_free_percpu: ");
        if (!freed && !alloc && !pcpu_alloc)
            continue;
        if (nev == ev_cap) {
            ptr_event *bigger = realloc(ev, (ev_cap *= 2) * sizeof *ev);
            if (!bigger) {
                status = 1;
                break;
            }
            ev = bigger;
        }
        ptr_event x = {.ptr = strtoull(ptr, NULL, 16), .index = nev, .alloc = alloc || pcpu_alloc};
        if (x.alloc) {
            size_t blen, olen;
            const char *b = pcpu_alloc ? field(l.text, len, "base_addr=", &blen) : NULL;
            const char *o = pcpu_alloc ? field(l.text, len, "off=", &olen) : NULL;
            const char *c = memchr(l.text, '[', len);
            x.what = (live){.ptr = x.ptr,
                            .percpu = pcpu_alloc,
                            .base = b ? strtoull(b, NULL, 16) : 0,
                            .off = o ? (unsigned)strtoul(o, NULL, 10) : 0,
                            .cpu = c ? (unsigned)strtoul(c + 1, NULL, 10) % 100000 : 0};
        }
        ev[nev++] = x;
    }
    if (status) {
        fprintf(stderr, "slablab trace-gen: out of memory reading %s\n", path);
        free(lines);
        free(ev);
        sl_strbuf_free(&text);
        return 1;
    }
    if (!nlines) {
        fprintf(stderr, "slablab trace-gen: no event lines in %s\n", path);
        free(lines);
        free(ev);
        sl_strbuf_free(&text);
        return 1;
    }
    /* Live at the end: a pointer whose last event is an allocation (sorting, not a scan per line: O(n log n)). */
    qsort(ev, nev, sizeof *ev, by_ptr_then_index);
    size_t nlive = 0;
    for (size_t i = 0; i < nev; i++)
        if ((i + 1 == nev || ev[i + 1].ptr != ev[i].ptr) && ev[i].alloc)
            ev[nlive++] = ev[i];
    qsort(ev, nlive, sizeof *ev, by_index);

    uint64_t span = last - first + 1000000;
    static outbuf out = {.ok = true};
    for (uint64_t rep = 0; out.written + out.len < target && out.ok; rep++) {
        uint64_t shift = rep << 40, dt = rep * span;
        for (size_t i = 0; i < nlines && out.written + out.len < target; i++) {
            const line *l = &lines[i];
            uint64_t ts = l->ts_ns + dt;
            out_put(&out, l->text, l->ts_at);
            out_printf(&out, "%llu.%06llu", (unsigned long long)(ts / 1000000000ull),
                       (unsigned long long)(ts % 1000000000ull / 1000));
            size_t from = l->ts_at + l->ts_len;
            if (l->ptr_len) {
                out_put(&out, l->text + from, l->ptr_at - from);
                out_printf(&out, "%016llx", (unsigned long long)(strtoull(l->text + l->ptr_at, NULL, 16) + shift));
                from = l->ptr_at + l->ptr_len;
            }
            out_put(&out, l->text + from, l->len - from);
            out_put(&out, "\n", 1);
        }
        /* Free what this repetition left live. */
        uint64_t ts = last + dt + 500000;
        for (size_t i = 0; i < nlive; i++) {
            const live *v = &ev[i].what;
            if (v->percpu)
                out_printf(&out,
                           "trace-gen-0 [%03u] ..... %llu.%06llu: percpu_free_percpu: base_addr=%016llx off=%u "
                           "ptr=%016llx\n",
                           v->cpu, (unsigned long long)(ts / 1000000000ull),
                           (unsigned long long)(ts % 1000000000ull / 1000), (unsigned long long)v->base, v->off,
                           (unsigned long long)(v->ptr + shift));
            else
                out_printf(&out, "trace-gen-0 [%03u] ..... %llu.%06llu: kfree: call_site=trace_gen ptr=%016llx\n",
                           v->cpu, (unsigned long long)(ts / 1000000000ull),
                           (unsigned long long)(ts % 1000000000ull / 1000), (unsigned long long)(v->ptr + shift));
        }
        out_flush(&out);
    }
    free(lines);
    free(ev);
    sl_strbuf_free(&text);
    if (!out.ok || fflush(stdout) != 0) {
        fprintf(stderr, "slablab trace-gen: writing the standard output failed: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
