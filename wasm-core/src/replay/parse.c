/*
 * parse.c - one line of ftrace text into an event.
 *
 * The line formats this accepts (docs/replay.md has examples of each):
 *
 *   `trace`, `trace_pipe`:   TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: FIELDS
 *   `trace-cmd report`:      [INSTANCE:] TASK-PID [CPU] [FLAGS] TIMESTAMP: EVENT: [(func+off)] FIELDS
 *   `trace_pipe` without a task (interrupt context, some kernels): [CPU] FLAGS TIMESTAMP: ...
 *
 * Anchors, not columns: the task name may hold spaces, colons, dashes and
 * brackets (comm is any 15 bytes), the flags column is 4 or 5 characters
 * or absent, the event name may be padded.  So the parser looks for the
 * timestamp ("digits.digits: ") that is preceded by "[cpu]" (and optional
 * flags) and followed by "event_name:"; the first position where all three
 * hold is the one.  Fields are key=value tokens in any order; tokens
 * without '=' (trace-cmd's "(func+off)") are skipped; which fields exist
 * varies by kernel version, and only the ones the replay needs are
 * required.  Values: pointers in hex with or without 0x ("(null)" and
 * zero are NULL), numbers in decimal or 0x-hex (pfn is hex since 4.x,
 * decimal before), call sites as "sym+0xoff/0xlen", "sym+0xoff" or a raw
 * address, gfp flags as "GFP_A|__GFP_B" names or a hex number.  Lost
 * events: trace_pipe's "CPU:N [LOST M EVENTS]" and trace-cmd's
 * "CPU:N [M EVENTS DROPPED]".
 *
 * The event is described by pointers into the line, which must outlive
 * the caller's use of it.  No allocation; one pass over the bytes.
 */
#include "replay_internal.h"

#include <string.h>

#define EVENT_NAME(n, k)                                                                                               \
    {                                                                                                                  \
        n, sizeof n - 1, k                                                                                             \
    }
static const struct {
    const char *name;
    uint8_t len, kind;
} event_names[] = {
    EVENT_NAME("kmalloc", SLI_EV_KMALLOC),
    EVENT_NAME("kmalloc_node", SLI_EV_KMALLOC),
    EVENT_NAME("kmem_cache_alloc", SLI_EV_CACHE_ALLOC),
    EVENT_NAME("kmem_cache_alloc_node", SLI_EV_CACHE_ALLOC),
    EVENT_NAME("kfree", SLI_EV_KFREE),
    EVENT_NAME("kmem_cache_free", SLI_EV_CACHE_FREE),
    EVENT_NAME("mm_page_alloc", SLI_EV_PAGE_ALLOC),
    EVENT_NAME("mm_page_free", SLI_EV_PAGE_FREE),
    EVENT_NAME("mm_page_free_batched", SLI_EV_PAGE_FREE),
    EVENT_NAME("percpu_alloc_percpu", SLI_EV_PCPU_ALLOC),
    EVENT_NAME("percpu_free_percpu", SLI_EV_PCPU_FREE),
    EVENT_NAME("percpu_create_chunk", SLI_EV_PCPU_CREATE),
    EVENT_NAME("percpu_destroy_chunk", SLI_EV_PCPU_DESTROY),
    EVENT_NAME("percpu_alloc_percpu_fail", SLI_EV_PCPU_FAIL),
};

/*
 * s[0..n) == lit[0..n).  A loop, not memcmp: with a constant n the compiler
 * unrolls it into a few compares, where WebAssembly makes memcmp a call.
 */
static inline bool same(const char *s, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != lit[i])
            return false;
    return true;
}
/* s[0..n) is the literal `lit`, whole. */
#define IS(s, n, lit) ((n) == sizeof lit - 1 && same(s, lit, sizeof lit - 1))
/* s begins with the literal `lit` (s has at least its length). */
#define STARTS(s, lit) same(s, lit, sizeof lit - 1)

static uint8_t event_kind(const char *name, size_t len)
{
    for (unsigned k = 0; k < sizeof event_names / sizeof event_names[0]; k++)
        if (len == event_names[k].len && same(name, event_names[k].name, len))
            return event_names[k].kind;
    return SLI_EV_OTHER;
}

const char *sli_event_kind_name(unsigned kind)
{
    static const char *const names[SLI_EV_COUNT] = {
        [SLI_EV_KMALLOC] = "kmalloc",
        [SLI_EV_CACHE_ALLOC] = "kmem_cache_alloc",
        [SLI_EV_KFREE] = "kfree",
        [SLI_EV_CACHE_FREE] = "kmem_cache_free",
        [SLI_EV_PAGE_ALLOC] = "mm_page_alloc",
        [SLI_EV_PAGE_FREE] = "mm_page_free",
        [SLI_EV_PCPU_ALLOC] = "percpu_alloc_percpu",
        [SLI_EV_PCPU_FREE] = "percpu_free_percpu",
        [SLI_EV_PCPU_CREATE] = "percpu_create_chunk",
        [SLI_EV_PCPU_DESTROY] = "percpu_destroy_chunk",
        [SLI_EV_PCPU_FAIL] = "percpu_alloc_percpu_fail",
    };
    return kind < SLI_EV_COUNT && names[kind] ? names[kind] : "?";
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_space(char c) { return c == ' ' || c == '\t'; }
static bool is_name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_'; }
/* Each byte's hex digit value, or -1 (a table: a pointer is 16 digits, on most lines twice). */
static const int8_t hex_vals[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};
static int hex_val(char c) { return hex_vals[(uint8_t)c] - 1; }

/* Hex digits (an optional 0x first) filling s[0..n) exactly, at most 16. */
static bool parse_hex(const char *s, size_t n, uint64_t *out)
{
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        n -= 2;
    }
    if (n == 0 || n > 16)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = hex_val(s[i]);
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

/* A decimal (or 0x-hex) number filling s[0..n); a leading '-' allowed when `sign`. */
static bool parse_num(const char *s, size_t n, uint64_t *out, bool sign)
{
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return parse_hex(s, n, out);
    bool neg = false;
    if (sign && n && s[0] == '-') {
        neg = true;
        s++;
        n--;
    }
    if (n == 0 || n > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? (uint64_t) - (int64_t)v : v;
    return true;
}

/* A pointer: hex with or without 0x; "(null)" (older kernels) and "(nil)" (libtraceevent) are NULL. */
static bool parse_ptr(const char *s, size_t n, uint64_t *out)
{
    if (IS(s, n, "(null)") || IS(s, n, "(nil)")) {
        *out = 0;
        return true;
    }
    return parse_hex(s, n, out);
}

/*
 * gfp_flags= into ev: the flags that pick a kmalloc cache (include/linux/slab.h
 * kmalloc_type): __GFP_DMA, __GFP_RECLAIMABLE, __GFP_ACCOUNT (ev->gfp); and
 * the reclaim bits that give the allocation's context (ev->gfp_reclaim).
 * Named flags are matched as whole '|'-separated tokens (GFP_DMA32 is not
 * GFP_DMA), as show_gfp_flags prints them (include/trace/events/mmflags.h:
 * the combined names first, "none" for 0).  The combinations' reclaim bits
 * are include/linux/gfp_types.h's: GFP_KERNEL, GFP_KERNEL_ACCOUNT, GFP_NOFS,
 * GFP_NOIO, GFP_USER, GFP_HIGHUSER(_MOVABLE) and __GFP_RECLAIM have both,
 * GFP_TRANSHUGE only __GFP_DIRECT_RECLAIM, GFP_ATOMIC and GFP_NOWAIT only
 * __GFP_KSWAPD_RECLAIM, GFP_TRANSHUGE_LIGHT neither; before 4.4 blocking was
 * __GFP_WAIT (counted as direct reclaim).  A hex value is kept as it is
 * (ev->gfp_hex): its reclaim bits moved between kernel versions, so the
 * replay reads them knowing the capture's (slub_replay.c); its kmalloc type
 * uses the bits of Linux 4.10 to 6.x, where __GFP_DMA is bit 0,
 * __GFP_RECLAIMABLE bit 4 and __GFP_ACCOUNT bit 22.
 */
static void gfp_flags(const char *s, size_t n, sli_event *ev)
{
    uint64_t v;
    ev->have |= SLI_F_GFP;
    if (n > 2 && s[0] == '0' && s[1] == 'x' && parse_hex(s, n, &v)) {
        ev->gfp =
            (v & 0x1 ? SLI_GFP_DMA : 0) | (v & 0x10 ? SLI_GFP_RECLAIMABLE : 0) | (v & 0x400000 ? SLI_GFP_ACCOUNT : 0);
        ev->gfp_hex = v;
        ev->have |= SLI_F_GFP_HEX;
        return;
    }
    unsigned bits = 0, reclaim = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != '|')
            j++;
        const char *t = s + i;
        size_t l = j - i;
        if (IS(t, l, "GFP_DMA") || IS(t, l, "__GFP_DMA"))
            bits |= SLI_GFP_DMA;
        else if (IS(t, l, "__GFP_RECLAIMABLE"))
            bits |= SLI_GFP_RECLAIMABLE;
        else if (IS(t, l, "__GFP_ACCOUNT"))
            bits |= SLI_GFP_ACCOUNT;
        else if (IS(t, l, "GFP_KERNEL_ACCOUNT")) {
            bits |= SLI_GFP_ACCOUNT;
            reclaim |= SLI_RECLAIM_DIRECT | SLI_RECLAIM_KSWAPD;
        } else if (IS(t, l, "GFP_KERNEL") || IS(t, l, "GFP_NOFS") || IS(t, l, "GFP_NOIO") || IS(t, l, "GFP_USER") ||
                   IS(t, l, "GFP_HIGHUSER") || IS(t, l, "GFP_HIGHUSER_MOVABLE") || IS(t, l, "__GFP_RECLAIM"))
            reclaim |= SLI_RECLAIM_DIRECT | SLI_RECLAIM_KSWAPD;
        else if (IS(t, l, "GFP_TRANSHUGE") || IS(t, l, "__GFP_DIRECT_RECLAIM") || IS(t, l, "__GFP_WAIT"))
            reclaim |= SLI_RECLAIM_DIRECT;
        else if (IS(t, l, "GFP_ATOMIC") || IS(t, l, "GFP_NOWAIT") || IS(t, l, "__GFP_KSWAPD_RECLAIM"))
            reclaim |= SLI_RECLAIM_KSWAPD;
        i = j + 1;
    }
    ev->gfp = bits;
    ev->gfp_reclaim = reclaim;
}

/*
 * Finds "[cpu] FLAGS? TIMESTAMP: EVENT:" with the timestamp's colon at
 * `colon`.  Fills cpu, ts, event name and the field start on success.
 */
static bool anchor_at(const char *line, size_t len, size_t colon, sli_event *ev, size_t *fields)
{
    if (colon + 1 >= len || line[colon + 1] != ' ' || colon == 0 || !is_digit(line[colon - 1]))
        return false;
    /* digits '.' digits before the colon, then whitespace. */
    size_t i = colon;
    while (i > 0 && is_digit(line[i - 1]))
        i--;
    size_t frac_start = i, frac_len = colon - i;
    if (i == 0 || line[i - 1] != '.' || frac_len == 0)
        return false;
    i--;
    size_t sec_end = i;
    while (i > 0 && is_digit(line[i - 1]))
        i--;
    size_t sec_start = i;
    if (sec_start == sec_end || sec_end - sec_start > 12 || i == 0 || !is_space(line[i - 1]))
        return false;
    /*
     * Before it: "[cpu]", "[cpu] flags", or trace-cmd's latency format
     * (report -l) "cpuflags" as one token ("1d..2.": the flags start with
     * irqs-off, never a digit).
     */
    while (i > 0 && is_space(line[i - 1]))
        i--;
    if (i == 0)
        return false;
    size_t d, close;
    if (line[i - 1] != ']') {
        size_t f = i;
        while (f > 0 && !is_space(line[f - 1]) && line[f - 1] != ']' && line[f - 1] != '[')
            f--;
        if (i - f > 9 || (f > 0 && !is_space(line[f - 1])))
            return false;
        if (is_digit(line[f])) {
            d = f;
            close = f;
            while (close < i && is_digit(line[close]))
                close++;
            if (close - d > 4 || i - close < 4)
                return false;
            goto cpu_found;
        }
        i = f;
        while (i > 0 && is_space(line[i - 1]))
            i--;
        if (i == 0 || line[i - 1] != ']')
            return false;
    }
    close = i - 1;
    d = close;
    while (d > 0 && is_digit(line[d - 1]))
        d--;
    if (d == close || d == 0 || line[d - 1] != '[' || close - d > 5)
        return false;
cpu_found:;
    /* " EVENT:" after the timestamp. */
    size_t e = colon + 1;
    while (e < len && is_space(line[e]))
        e++;
    size_t name = e;
    while (e < len && is_name_char(line[e]))
        e++;
    if (e == name || e >= len || line[e] != ':')
        return false;

    uint64_t cpu = 0;
    for (size_t k = d; k < close; k++)
        cpu = cpu * 10 + (uint64_t)(line[k] - '0');
    ev->cpu = (uint32_t)cpu;
    uint64_t sec = 0, frac = 0;
    for (size_t k = sec_start; k < sec_end; k++)
        sec = sec * 10 + (uint64_t)(line[k] - '0');
    unsigned digits = frac_len > 9 ? 9 : (unsigned)frac_len;
    for (unsigned k = 0; k < digits; k++)
        frac = frac * 10 + (uint64_t)(line[frac_start + k] - '0');
    for (unsigned k = digits; k < 9; k++)
        frac *= 10;
    ev->ts_ns = sec * 1000000000ull + frac;
    ev->name = line + name;
    ev->name_len = (uint32_t)(e - name);
    *fields = e + 1;
    return true;
}

/* Lines that are not events: headers of `trace`, `trace-cmd report`, lost-event notes. */
static int classify_other(const char *line, size_t len, sli_event *ev)
{
    size_t i = 0;
    while (i < len && is_space(line[i]))
        i++;
    if (i == len)
        return SLI_LINE_HEADER;
    if (line[i] == '#') {
        /* "# entries-in-buffer/entries-written: 18187/18187   #P:2" */
        for (size_t k = i; k + 3 < len; k++) {
            if (line[k] == '#' && line[k + 1] == 'P' && line[k + 2] == ':') {
                uint64_t n = 0;
                size_t e = k + 3;
                while (e < len && is_digit(line[e]))
                    n = n * 10 + (uint64_t)(line[e++] - '0');
                if (e > k + 3 && n <= 4096)
                    ev->cpus_hint = (uint32_t)n;
            }
        }
        return SLI_LINE_HEADER;
    }
    /* trace-cmd report: "cpus=2", "version = 7", "CPU 0 is empty", "CPU:1 [LOST 12 EVENTS]". */
    uint64_t n;
    if (len - i > 5 && STARTS(line + i, "cpus=") && parse_num(line + i + 5, len - i - 5, &n, false)) {
        if (n <= 4096)
            ev->cpus_hint = (uint32_t)n;
        return SLI_LINE_HEADER;
    }
    if (len - i > 10 && STARTS(line + i, "version = ") && parse_num(line + i + 10, len - i - 10, &n, false))
        return SLI_LINE_HEADER;
    if (len - i >= 4 && STARTS(line + i, "CPU")) {
        /* trace_pipe: "CPU:1 [LOST 12 EVENTS]"; trace-cmd report: "CPU:1 [12 EVENTS DROPPED]". */
        const char *open = sli_find_byte(line + i, len - i, '[');
        if (open) {
            const char *p = open + 1, *end = line + len;
            bool lost_word = end - p > 5 && STARTS(p, "LOST ");
            if (lost_word)
                p += 5;
            uint64_t n = 0;
            const char *digits = p;
            while (p < end && is_digit(*p))
                n = n * 10 + (uint64_t)(*p++ - '0');
            if (p > digits && ((lost_word && end - p >= 8 && STARTS(p, " EVENTS]")) ||
                               (!lost_word && end - p >= 16 && STARTS(p, " EVENTS DROPPED]")))) {
                ev->lost = n;
                return SLI_LINE_LOST;
            }
        }
        for (size_t k = i; k + 8 <= len; k++)
            if (STARTS(line + k, "is empty"))
                return SLI_LINE_HEADER;
    }
    return -1;
}

int sli_parse_line(const char *line, size_t len, sli_event *ev)
{
    memset(ev, 0, sizeof *ev);
    if (sli_find_byte(line, len, 0)) {
        ev->reason = "binary data (a NUL byte) in the line";
        return SLI_LINE_BAD;
    }
    int other = classify_other(line, len, ev);
    if (other >= 0)
        return other;

    /*
     * The first anchor is the one, unless it names an unknown event and a
     * later one names a known event: then the first was inside the task
     * name (a comm may read "[1] 2.0: x:").
     */
    size_t fields = 0;
    bool any_ts = false;
    sli_event first = {0};
    size_t first_fields = 0;
    for (const char *c = sli_find_byte(line, len, ':'); c;
         c = sli_find_byte(c + 1, len - (size_t)(c + 1 - line), ':')) {
        size_t colon = (size_t)(c - line);
        if (anchor_at(line, len, colon, ev, &fields)) {
            ev->kind = event_kind(ev->name, ev->name_len);
            if (ev->kind != SLI_EV_OTHER)
                break;
            if (!first.kind) {
                first = *ev;
                first_fields = fields;
            }
            ev->kind = SLI_EV_NONE;
            continue;
        }
        if (colon + 1 < len && line[colon + 1] == ' ' && colon && is_digit(line[colon - 1]))
            any_ts = true;
    }
    if (!ev->kind && first.kind) {
        *ev = first;
        fields = first_fields;
    }
    if (!ev->kind) {
        ev->reason = any_ts ? "no [CPU] before the timestamp or no event name after it"
                            : "no timestamp (SECONDS.FRACTION:) found: not an ftrace event line";
        return SLI_LINE_BAD;
    }
    if (ev->cpu >= SLI_MAX_TRACE_CPUS) {
        ev->reason = "CPU number out of range (over 4095)";
        return SLI_LINE_BAD;
    }
    if (ev->kind == SLI_EV_OTHER)
        return SLI_LINE_OTHER_EVENT;

    /* key=value fields */
    size_t i = fields;
    while (i < len) {
        while (i < len && is_space(line[i]))
            i++;
        size_t start = i;
        while (i < len && !is_space(line[i]))
            i++;
        const char *tok = line + start;
        size_t tlen = i - start;
        const char *eq = sli_find_byte(tok, tlen, '=');
        if (!eq)
            continue; /* trace-cmd's "(func+off)" and the like */
        const char *key = tok, *val = eq + 1;
        size_t klen = (size_t)(eq - tok), vlen = tlen - klen - 1;
        bool ok = true;
        uint64_t v;
        switch (klen) {
        case 3:
            if (STARTS(key, "ptr")) {
                ok = parse_ptr(val, vlen, &ev->ptr);
                ev->have |= SLI_F_PTR;
            } else if (STARTS(key, "pfn")) {
                ok = parse_num(val, vlen, &ev->pfn, false);
                ev->have |= SLI_F_PFN;
            } else if (STARTS(key, "off")) {
                ok = parse_num(val, vlen, &v, false) && v < (1ull << 32);
                ev->off = (uint32_t)v;
                ev->have |= SLI_F_OFF;
            }
            break;
        case 4:
            if (STARTS(key, "name")) {
                ev->cache = val;
                ev->cache_len = (uint32_t)vlen;
                ev->have |= SLI_F_NAME;
                ok = vlen > 0 && vlen < 64;
            } else if (STARTS(key, "size")) {
                ok = parse_num(val, vlen, &v, false) && v < (1ull << 32);
                ev->size = (uint32_t)v;
                ev->have |= SLI_F_SIZE;
            } else if (STARTS(key, "page")) {
                ok = parse_ptr(val, vlen, &ev->page);
                ev->have |= SLI_F_PAGE;
            }
            break;
        case 5:
            if (STARTS(key, "order")) {
                ok = parse_num(val, vlen, &v, false) && v < 64;
                ev->order = (uint32_t)v;
                ev->have |= SLI_F_ORDER;
            } else if (STARTS(key, "align")) {
                ok = parse_num(val, vlen, &v, false) && v < (1ull << 32);
                ev->align = (uint32_t)v;
            }
            break;
        case 9:
            if (STARTS(key, "call_site")) {
                ev->site = val;
                ev->site_len = (uint32_t)vlen;
            } else if (STARTS(key, "bytes_req")) {
                ok = parse_num(val, vlen, &ev->bytes_req, false);
                ev->have |= SLI_F_BYTES_REQ;
            } else if (STARTS(key, "base_addr")) {
                ok = parse_ptr(val, vlen, &ev->base);
                ev->have |= SLI_F_BASE;
            } else if (STARTS(key, "accounted")) {
                ev->accounted = IS(val, vlen, "true") ? 1 : 0;
                ev->have |= SLI_F_ACCOUNTED;
            } else if (STARTS(key, "gfp_flags")) {
                gfp_flags(val, vlen, ev);
            }
            break;
        case 11:
            if (STARTS(key, "bytes_alloc")) {
                ok = parse_num(val, vlen, &ev->bytes_alloc, false);
                ev->have |= SLI_F_BYTES_ALLOC;
            }
            break;
        default:
            break;
        }
        if (!ok) {
            ev->reason = klen == 3 && STARTS(key, "ptr")         ? "a ptr= value that is not a hex pointer"
                         : klen == 9 && STARTS(key, "base_addr") ? "a base_addr= value that is not a hex pointer"
                         : klen == 4 && STARTS(key, "name")      ? "an empty or over-long cache name="
                                                                 : "a field value that is not a number";
            return SLI_LINE_BAD;
        }
    }

    /* What each kind needs. */
    static const uint32_t required[SLI_EV_COUNT] = {
        [SLI_EV_KMALLOC] = SLI_F_PTR | SLI_F_BYTES_ALLOC,
        [SLI_EV_CACHE_ALLOC] = SLI_F_PTR | SLI_F_BYTES_ALLOC,
        [SLI_EV_KFREE] = SLI_F_PTR,
        [SLI_EV_CACHE_FREE] = SLI_F_PTR,
        [SLI_EV_PAGE_ALLOC] = SLI_F_ORDER,
        [SLI_EV_PAGE_FREE] = SLI_F_ORDER,
        [SLI_EV_PCPU_ALLOC] = SLI_F_BASE | SLI_F_OFF | SLI_F_SIZE | SLI_F_PTR,
        [SLI_EV_PCPU_FREE] = SLI_F_BASE | SLI_F_OFF | SLI_F_PTR,
        [SLI_EV_PCPU_CREATE] = SLI_F_BASE,
        [SLI_EV_PCPU_DESTROY] = SLI_F_BASE,
        [SLI_EV_PCPU_FAIL] = 0,
    };
    uint32_t missing = required[ev->kind] & ~ev->have;
    if (missing) {
        ev->reason = missing & SLI_F_PTR           ? "an event without its ptr= field"
                     : missing & SLI_F_BYTES_ALLOC ? "an allocation without its bytes_alloc= field"
                     : missing & SLI_F_BASE        ? "a percpu event without its base_addr= field"
                     : missing & SLI_F_OFF         ? "a percpu event without its off= field"
                     : missing & SLI_F_SIZE        ? "a percpu allocation without its size= field"
                                                   : "a page event without its order= field";
        return SLI_LINE_BAD;
    }
    if ((ev->kind == SLI_EV_PAGE_ALLOC || ev->kind == SLI_EV_PAGE_FREE) && !(ev->have & (SLI_F_PFN | SLI_F_PAGE))) {
        ev->reason = "a page event without pfn= or page=";
        return SLI_LINE_BAD;
    }
    return SLI_LINE_EVENT;
}

size_t sli_site_key(const char *site, size_t len)
{
    /* "func+0x18a/0x1c70" -> "func+0x18a": the length of the function says nothing about the site. */
    const char *slash = sli_find_byte(site, len, '/');
    return slash ? (size_t)(slash - site) : len;
}
