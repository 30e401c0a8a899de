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

#include "../src/replay/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int run_tracegen(int argc, char **argv);
SL_CLI_COMMAND(tracegen, .name = "trace-gen",
               .summary = "a long trace for the replay benchmark: a real trace's text repeated, pointers shifted",
               .usage = "slablab trace-gen TRACE.txt [--bytes N[K|M|G] (default 1G)]   (writes to standard output)",
               .run = run_tracegen)

typedef struct line {
    const char *text;
    size_t len;
    size_t ts_at, ts_len;       /* the timestamp's digits ("12.345678") */
    size_t ptr_at, ptr_len;     /* the ptr= value, or ptr_len 0 */
    uint64_t ts_ns;
} line;

typedef struct live {
    uint64_t ptr;
    bool percpu;
    uint64_t base;
    unsigned off;
    unsigned cpu;
} live;

static bool parse_size(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    else if (*end == 'G' || *end == 'g')
        v <<= 30, end++;
    *out = v;
    return *end == 0 && v > 0;
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
                return sl_cli_usage_error(&sl_cli_cmd_tracegen, "--bytes takes a size such as 1G or 500M");
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            return sl_cli_usage_error(&sl_cli_cmd_tracegen, "unknown argument '%s'", argv[i]);
        }
    }
    if (!path)
        return sl_cli_usage_error(&sl_cli_cmd_tracegen, "give a plain-text trace (tar xzOf X.slabcap.gz trace.txt)");
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "slablab trace-gen: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    sl_strbuf text = {0};
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sl_strbuf_append(&text, buf, n);
    fclose(f);
    if (text.failed || !text.len) {
        fprintf(stderr, "slablab trace-gen: %s is empty or too big\n", path);
        sl_strbuf_free(&text);
        return 1;
    }

    /* The event lines, and what the base trace leaves live. */
    size_t nlines = 0, cap = 1024, nlive = 0, live_cap = 1024;
    line *lines = malloc(cap * sizeof *lines);
    live *lv = malloc(live_cap * sizeof *lv);
    uint64_t first = 0, last = 0;
    for (char *p = text.data, *end = text.data + text.len; p < end;) {
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
        if (nlines == cap)
            lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[nlines++] = l;
        if (!l.ptr_len)
            continue;
        uint64_t v = strtoull(ptr, NULL, 16);
        bool alloc = has(l.text, len, ": kmalloc: ") || has(l.text, len, ": kmem_cache_alloc: ");
        bool pcpu_alloc = has(l.text, len, ": percpu_alloc_percpu: ");
        bool freed = has(l.text, len, ": kfree: ") || has(l.text, len, ": kmem_cache_free: ") ||
                     has(l.text, len, ": percpu_free_percpu: ");
        if (freed || alloc || pcpu_alloc) {
            for (size_t i = 0; i < nlive; i++)
                if (lv[i].ptr == v) {
                    lv[i] = lv[--nlive];
                    break;
                }
        }
        if (alloc || pcpu_alloc) {
            if (nlive == live_cap)
                lv = realloc(lv, (live_cap *= 2) * sizeof *lv);
            live x = {.ptr = v, .percpu = pcpu_alloc};
            size_t blen, olen;
            const char *b = pcpu_alloc ? field(l.text, len, "base_addr=", &blen) : NULL;
            const char *o = pcpu_alloc ? field(l.text, len, "off=", &olen) : NULL;
            const char *c = memchr(l.text, '[', len);
            x.base = b ? strtoull(b, NULL, 16) : 0;
            x.off = o ? (unsigned)strtoul(o, NULL, 10) : 0;
            x.cpu = c ? (unsigned)strtoul(c + 1, NULL, 10) : 0;
            lv[nlive++] = x;
        }
    }
    if (!nlines) {
        fprintf(stderr, "slablab trace-gen: no event lines in %s\n", path);
        return 1;
    }
    uint64_t span = last - first + 1000000;
    unsigned long long written = 0;
    static char out[1 << 20];
    size_t olen = 0;
#define FLUSH()                                                                                    \
    do {                                                                                           \
        if (olen && fwrite(out, 1, olen, stdout) != olen)                                          \
            return 1;                                                                              \
        written += olen;                                                                           \
        olen = 0;                                                                                  \
    } while (0)
    for (uint64_t rep = 0; written < target; rep++) {
        uint64_t shift = rep << 40, dt = rep * span;
        for (size_t i = 0; i < nlines && written + olen < target; i++) {
            const line *l = &lines[i];
            if (olen + l->len + 64 > sizeof out)
                FLUSH();
            uint64_t ts = l->ts_ns + dt;
            memcpy(out + olen, l->text, l->ts_at);
            olen += l->ts_at;
            olen += (size_t)sprintf(out + olen, "%llu.%06llu", (unsigned long long)(ts / 1000000000ull),
                                    (unsigned long long)(ts % 1000000000ull / 1000));
            size_t from = l->ts_at + l->ts_len;
            if (l->ptr_len) {
                memcpy(out + olen, l->text + from, l->ptr_at - from);
                olen += l->ptr_at - from;
                olen += (size_t)sprintf(out + olen, "%016llx",
                                        (unsigned long long)(strtoull(l->text + l->ptr_at, NULL, 16) + shift));
                from = l->ptr_at + l->ptr_len;
            }
            memcpy(out + olen, l->text + from, l->len - from);
            olen += l->len - from;
            out[olen++] = '\n';
        }
        /* Free what this repetition left live. */
        uint64_t ts = last + dt + 500000;
        for (size_t i = 0; i < nlive; i++) {
            if (olen + 256 > sizeof out)
                FLUSH();
            if (lv[i].percpu)
                olen += (size_t)sprintf(out + olen,
                                        "trace-gen-0 [%03u] ..... %llu.%06llu: percpu_free_percpu: base_addr=%016llx "
                                        "off=%u ptr=%016llx\n",
                                        lv[i].cpu, (unsigned long long)(ts / 1000000000ull),
                                        (unsigned long long)(ts % 1000000000ull / 1000), (unsigned long long)lv[i].base,
                                        lv[i].off, (unsigned long long)(lv[i].ptr + shift));
            else
                olen += (size_t)sprintf(out + olen,
                                        "trace-gen-0 [%03u] ..... %llu.%06llu: kfree: call_site=trace_gen ptr=%016llx\n",
                                        lv[i].cpu, (unsigned long long)(ts / 1000000000ull),
                                        (unsigned long long)(ts % 1000000000ull / 1000),
                                        (unsigned long long)(lv[i].ptr + shift));
        }
        FLUSH();
    }
#undef FLUSH
    free(lines);
    free(lv);
    sl_strbuf_free(&text);
    return fflush(stdout) == 0 ? 0 : 1;
}
