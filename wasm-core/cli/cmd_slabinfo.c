/*
 * cmd_slabinfo.c - `slablab slabinfo`: the report modes of the kernel's
 * tools/mm/slabinfo that make sense offline, over a capture's
 * /sys/kernel/slab (a .slabcap), a directory laid out like it, or a
 * /proc/slabinfo file: the cache listing (-l, the default), totals (-T),
 * extended totals (-X), aliases (-a), the single-cache report (-r), sorted
 * by size (-S), loss (-L) or partial slabs (-P), inverted (-i), with the
 * tool's filters (-z, -e, -U, -1, -f, -N, PATTERN) and figures (-B bytes).
 * The column layouts and the alias renaming follow tools/mm/slabinfo.c
 * (Linux 6.x).  Modes that change the running kernel (shrink, validate,
 * debug flags) or need it (NUMA, tracking, activity counters) are refused.
 */
#include "cli.h"

#include "../src/replay/replay.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int run_slabinfo(int argc, char **argv);
SL_CLI_COMMAND(slabinfo, .name = "slabinfo",
               .summary = "tools/mm/slabinfo's reports over a .slabcap, a sysfs copy or /proc/slabinfo",
               .usage =
                   "slablab slabinfo (FILE.slabcap | DIR | /proc/slabinfo) [-aBefilLPrSTUXz1] [-N K] [PATTERN]\n"
                   "  -a aliases  -B bytes  -e empty only  -f first alias  -i inverted  -l listing (default)\n"
                   "  -L sort by loss  -N K first K lines  -P sort by partial  -r report  -S sort by size\n"
                   "  -T totals  -U unreclaimable only  -X extended totals  -z include empty  -1 single-ref aliases",
               .run = run_slabinfo)

#define PAGE_SIZE_OFFLINE 4096ul

typedef struct opts {
    bool aliases, bytes, empty, first_alias, inverted, loss, partial, report, size, totals, unreclaim, xtotals;
    bool zero, single_ref;
    long lines;
} opts;

typedef struct slab {
    sl_slabinfo_cache *c;
    const char *name; /* after renaming to an alias */
    int refs;
} slab;

static opts o = {.lines = -1};
static sl_slabinfo_set set;
static slab *slabs;
static unsigned nslabs, actual;
static regex_t pattern;

/* tools/mm/slabinfo's store_size: K/M/G with one decimal unless -B. */
static void store_size(char *buf, unsigned long value)
{
    unsigned long divisor = 1;
    char trailer = 0;
    if (!o.bytes) {
        if (value > 1000000000ul) {
            divisor = 100000000ul;
            trailer = 'G';
        } else if (value > 1000000ul) {
            divisor = 100000ul;
            trailer = 'M';
        } else if (value > 1000ul) {
            divisor = 100;
            trailer = 'K';
        }
    }
    value /= divisor;
    int n = sprintf(buf, "%lu", value);
    if (trailer) {
        buf[n++] = trailer;
        buf[n] = 0;
    }
    if (divisor != 1) {
        memmove(buf + n - 2, buf + n - 3, 4);
        buf[n - 2] = '.';
    }
}

/* One slab's bytes; 0 for an order no kernel has (a damaged or hand-made capture: the shift would overflow). */
static unsigned long one_slab(const sl_slabinfo_cache *c) { return c->order < 32 ? PAGE_SIZE_OFFLINE << c->order : 0; }
static unsigned long slab_bytes(const sl_slabinfo_cache *c) { return c->slabs * one_slab(c); }
/* The bytes a slot holds beyond the object; 0 when slab_size is missing or smaller (never an underflow). */
static unsigned obj_loss(const sl_slabinfo_cache *c)
{
    return c->slab_size > c->object_size ? c->slab_size - c->object_size : 0;
}
/* a - b, or 0 when b is larger (counts from a capture need not be consistent). */
static unsigned long long minus(unsigned long long a, unsigned long long b) { return a > b ? a - b : 0; }
static unsigned long slab_waste(const sl_slabinfo_cache *c)
{
    unsigned long used = c->objects * c->object_size, total = slab_bytes(c);
    return total > used ? total - used : 0;
}

static slab *find(const char *name)
{
    for (unsigned i = 0; i < nslabs; i++)
        if (!strcmp(slabs[i].c->name, name))
            return &slabs[i];
    return NULL;
}

/* The alias a ':' cache is shown under: a kmalloc name at once, else the longest (as the tool does). */
static const char *one_alias(const slab *s)
{
    const char *best = NULL;
    for (unsigned i = 0; i < set.naliases; i++) {
        if (find(set.aliases[i].target) != s)
            continue;
        if (!best || strlen(best) < strlen(set.aliases[i].name)) {
            best = set.aliases[i].name;
            if (!strncmp(best, "kmall", 5))
                return best;
        }
    }
    return best;
}

static int cmp_slabs(const void *pa, const void *pb)
{
    const slab *a = pa, *b = pb;
    int r;
    unsigned long x, y;
    if (o.size) {
        x = slab_bytes(a->c);
        y = slab_bytes(b->c);
    } else if (o.loss) {
        x = slab_waste(a->c);
        y = slab_waste(b->c);
    } else if (o.partial) {
        x = a->c->partial;
        y = b->c->partial;
    } else {
        x = y = 0;
    }
    r = x != y ? (x < y ? 1 : -1) : strcasecmp(a->name, b->name);
    return o.inverted ? -r : r;
}

static void first_line(void)
{
    printf("Name                   Objects Objsize           %s Slabs/Part/Cpu  O/S O %%Fr %%Ef Flg\n",
           o.loss ? " Loss" : "Space");
}

static void report(const slab *s)
{
    const sl_slabinfo_cache *c = s->c;
    unsigned long slabsz = one_slab(c);
    printf("\nSlabcache: %-15s  Aliases: %2u Order : %2u Objects: %llu\n", s->name, c->aliases, c->order,
           (unsigned long long)c->objects);
    if (c->hwcache_align)
        printf("** Hardware cacheline aligned\n");
    if (c->cache_dma)
        printf("** Memory is allocated in a special DMA zone\n");
    if (c->destroy_by_rcu)
        printf("** Slabs are destroyed via RCU\n");
    if (c->reclaim_account)
        printf("** Reclaim accounting active\n");
    printf("\nSizes (bytes)     Slabs              Debug                Memory\n");
    printf("------------------------------------------------------------------------\n");
    printf("Object : %7u  Total  : %7llu   Sanity Checks : %s  Total: %7lu\n", c->object_size,
           (unsigned long long)c->slabs, c->sanity_checks ? "On " : "Off", slab_bytes(c));
    printf("SlabObj: %7u  Full   : %7lld   Redzoning     : %s  Used : %7llu\n", c->slab_size,
           (long long)minus(c->slabs, c->partial + c->cpu_slabs), c->red_zone ? "On " : "Off",
           (unsigned long long)(c->objects * c->object_size));
    printf("SlabSiz: %7lu  Partial: %7llu   Poisoning     : %s  Loss : %7lu\n", slabsz, (unsigned long long)c->partial,
           c->poison ? "On " : "Off", slab_waste(c));
    printf("Loss   : %7u  CpuSlab: %7llu   Tracking      : %s  Lalig: %7llu\n", obj_loss(c),
           (unsigned long long)c->cpu_slabs, c->store_user ? "On " : "Off",
           (unsigned long long)obj_loss(c) * c->objects);
    printf("Align  : %7u  Objects: %7u   Tracing       : %s  Lpadd: %7llu\n", c->align, c->objs_per_slab,
           c->trace ? "On " : "Off", minus(slabsz, (unsigned long long)c->objs_per_slab * c->slab_size) * c->slabs);
    printf("\n(kmem_cache operations, alloc/free tracking, NUMA and SLUB statistics are not part of a capture)\n");
}

static void slabcache(const slab *s, unsigned *line)
{
    const sl_slabinfo_cache *c = s->c;
    if (o.unreclaim && c->reclaim_account)
        return;
    if (actual == 1) {
        report(s);
        return;
    }
    if (!o.zero && !o.empty && !c->slabs)
        return;
    if (o.empty && c->slabs)
        return;
    char size[20], dist[40], flags[20], *p = flags;
    store_size(size, o.loss ? slab_waste(c) : slab_bytes(c));
    snprintf(dist, sizeof dist, "%llu/%llu/%llu", minus(c->slabs, c->cpu_slabs), (unsigned long long)c->partial,
             (unsigned long long)c->cpu_slabs);
    if (!(*line)++)
        first_line();
    if (c->aliases)
        *p++ = '*';
    if (c->cache_dma)
        *p++ = 'd';
    if (c->hwcache_align)
        *p++ = 'A';
    if (c->poison)
        *p++ = 'P';
    if (c->reclaim_account)
        *p++ = 'a';
    if (c->red_zone)
        *p++ = 'Z';
    if (c->sanity_checks)
        *p++ = 'F';
    if (c->store_user)
        *p++ = 'U';
    if (c->trace)
        *p++ = 'T';
    *p = 0;
    printf("%-21s %8llu %7u %15s %14s %4u %1u %3llu %3llu %s\n", s->name, (unsigned long long)c->objects,
           c->object_size, size, dist, c->objs_per_slab, c->order,
           (unsigned long long)(c->slabs ? c->partial * 100 / c->slabs : 100),
           (unsigned long long)(slab_bytes(c) ? c->objects * c->object_size * 100 / slab_bytes(c) : 100), flags);
}

static void output_slabs(void)
{
    long lines = o.lines;
    unsigned line = 0;
    for (unsigned i = 0; i < nslabs && lines != 0; i++) {
        if (!strcmp(slabs[i].name, "*"))
            continue;
        if (lines != -1)
            lines--;
        if (o.report)
            report(&slabs[i]);
        else
            slabcache(&slabs[i], &line);
    }
}

typedef struct range {
    unsigned long long min, max, total;
} range;
static void see(range *r, unsigned long long v)
{
    if (v < r->min)
        r->min = v;
    if (v > r->max)
        r->max = v;
    r->total += v;
}

/* One "Per Cache" row: average, minimum, maximum, total, each with `unit` ("" or "%"). */
static void row4(const char *label, unsigned long long avg, unsigned long long min, unsigned long long max,
                 unsigned long long total, const char *unit)
{
    char b1[24], b2[24], b3[24], b4[24];
    store_size(b1, avg);
    store_size(b2, min);
    store_size(b3, max);
    store_size(b4, total);
    bool pct = *unit;
    printf("%s%15s%s %15s%s %15s%s %15s%s\n", label, b1, pct ? unit : " ", b2, pct ? unit : " ", b3, pct ? unit : " ",
           b4, pct ? unit : "");
}

static void totals(void)
{
    const range init = {.min = ~0ull};
    range objsize = init, partial = init, nslab = init, size = init, used = init, waste = init, objects = init;
    range objwaste = init, memobj = init, ppart = init, partobj = init, ppartobj = init;
    unsigned used_slabs = 0;
    unsigned long long total_objwaste = 0, total_objsize = 0;
    for (unsigned i = 0; i < set.ncaches; i++) {
        const sl_slabinfo_cache *c = &set.caches[i];
        if (!c->slabs || !c->objects)
            continue;
        used_slabs++;
        unsigned long long sz = slab_bytes(c), u = c->objects * c->object_size;
        unsigned long long pp = c->partial * 100 / c->slabs, po = c->objects_partial * 100 / c->objects;
        see(&objsize, c->object_size);
        see(&partial, c->partial);
        see(&nslab, c->slabs);
        see(&size, sz);
        see(&used, u);
        see(&waste, sz > u ? sz - u : 0);
        see(&objects, c->objects);
        see(&objwaste, obj_loss(c));
        see(&memobj, c->slab_size);
        see(&ppart, pp > 100 ? 100 : pp);
        see(&partobj, c->objects_partial);
        see(&ppartobj, po > 100 ? 100 : po);
        total_objwaste += c->objects * obj_loss(c);
        total_objsize += c->objects * c->slab_size;
    }
    if (!objects.total) {
        printf("No objects\n");
        return;
    }
    unsigned aliases = set.naliases, targets = 0;
    for (unsigned i = 0; i < set.ncaches; i++)
        targets += set.caches[i].name[0] == ':';
    char b1[24], b2[24], b3[24];
    printf("Slabcache Totals\n----------------\n");
    printf("Slabcaches : %15u   Aliases  : %11u->%-3u  Active:    %3u\n", set.ncaches, aliases, targets, used_slabs);
    store_size(b1, size.total);
    store_size(b2, waste.total);
    store_size(b3, waste.total * 100 / (used.total ? used.total : 1));
    printf("Memory used: %15s   # Loss   : %15s   MRatio:%6s%%\n", b1, b2, b3);
    store_size(b1, objects.total);
    store_size(b2, partobj.total);
    store_size(b3, partobj.total * 100 / objects.total);
    printf("# Objects  : %15s   # PartObj: %15s   ORatio:%6s%%\n", b1, b2, b3);
    printf("\nPer Cache         Average              Min              Max            Total\n");
    printf("----------------------------------------------------------------------------\n");
    row4("#Objects  ", objects.total / used_slabs, objects.min, objects.max, objects.total, "");
    row4("#Slabs    ", nslab.total / used_slabs, nslab.min, nslab.max, nslab.total, "");
    row4("#PartSlab ", partial.total / used_slabs, partial.min, partial.max, partial.total, "");
    row4("%PartSlab", ppart.total / used_slabs, ppart.min, ppart.max, partial.total * 100 / nslab.total, "%");
    row4("PartObjs  ", partobj.total / used_slabs, partobj.min, partobj.max, partobj.total, "");
    row4("% PartObj", ppartobj.total / used_slabs, ppartobj.min, ppartobj.max, partobj.total * 100 / objects.total,
         "%");
    row4("Memory    ", size.total / used_slabs, size.min, size.max, size.total, "");
    row4("Used      ", used.total / used_slabs, used.min, used.max, used.total, "");
    row4("Loss      ", waste.total / used_slabs, waste.min, waste.max, waste.total, "");
    printf("\nPer Object        Average              Min              Max\n");
    printf("---------------------------------------------------------\n");
    char a[24], b[24], c[24];
    store_size(a, total_objsize / objects.total);
    store_size(b, memobj.min);
    store_size(c, memobj.max);
    printf("Memory    %15s  %15s  %15s\n", a, b, c);
    store_size(a, used.total / objects.total);
    store_size(b, objsize.min);
    store_size(c, objsize.max);
    printf("User      %15s  %15s  %15s\n", a, b, c);
    store_size(a, total_objwaste / objects.total);
    store_size(b, objwaste.min);
    store_size(c, objwaste.max);
    printf("Loss      %15s  %15s  %15s\n", a, b, c);
}

static int cmp_alias(const void *pa, const void *pb)
{
    const sl_slabinfo_alias *a = pa, *b = pb;
    bool by_target = o.aliases && !o.inverted;
    return strcasecmp(by_target ? a->target : a->name, by_target ? b->target : b->name);
}

static void alias_listing(void)
{
    qsort(set.aliases, set.naliases, sizeof *set.aliases, cmp_alias);
    const char *active = NULL;
    for (unsigned i = 0; i < set.naliases; i++) {
        const slab *s = find(set.aliases[i].target);
        if (!s || (!o.single_ref && s->refs == 1))
            continue;
        if (!o.inverted) {
            if (active && !strcmp(s->c->name, active)) {
                printf(" %s", set.aliases[i].name);
                continue;
            }
            printf("\n%-12s <- %s", s->c->name, set.aliases[i].name);
            active = s->c->name;
        } else {
            printf("%-15s -> %s\n", set.aliases[i].name, s->c->name);
        }
    }
    if (active)
        printf("\n");
}

static bool matches(const char *name) { return regexec(&pattern, name, 0, NULL, 0) == 0; }

static int run_slabinfo(int argc, char **argv)
{
    const char *input = NULL, *pat = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-N") && i + 1 < argc) {
            unsigned long n;
            if (!sl_cli_parse_ulong(argv[++i], 1, 1000000, &n))
                return sl_cli_usage_error(&sl_cli_cmd_slabinfo, "-N takes a number of lines");
            o.lines = (long)n;
        } else if (a[0] == '-' && a[1]) {
            for (const char *f = a + 1; *f; f++) {
                switch (*f) {
                case 'a':
                    o.aliases = true;
                    break;
                case 'B':
                    o.bytes = true;
                    break;
                case 'e':
                    o.empty = true;
                    break;
                case 'f':
                    o.first_alias = true;
                    break;
                case 'i':
                    o.inverted = true;
                    break;
                case 'l':
                    break;
                case 'L':
                    o.loss = true;
                    break;
                case 'P':
                    o.partial = true;
                    break;
                case 'r':
                    o.report = true;
                    break;
                case 'S':
                    o.size = true;
                    break;
                case 'T':
                    o.totals = true;
                    break;
                case 'U':
                    o.unreclaim = true;
                    break;
                case 'X':
                    o.xtotals = true;
                    o.bytes = true;
                    if (o.lines == -1)
                        o.lines = 1;
                    break;
                case 'z':
                    o.zero = true;
                    break;
                case '1':
                    o.single_ref = true;
                    break;
                case 's':
                case 'v':
                case 'd':
                case 'n':
                case 't':
                case 'o':
                case 'A':
                case 'D':
                    return sl_cli_usage_error(&sl_cli_cmd_slabinfo,
                                              "-%c needs the running kernel (shrink, validate, debug, NUMA, tracking, "
                                              "ops, activity): run the kernel's tools/mm/slabinfo on the machine",
                                              *f);
                default:
                    return sl_cli_usage_error(&sl_cli_cmd_slabinfo, "unknown option -%c", *f);
                }
            }
        } else if (!input) {
            input = a;
        } else if (!pat) {
            pat = a;
        } else {
            return sl_cli_usage_error(&sl_cli_cmd_slabinfo, "unexpected argument '%s'", a);
        }
    }
    if (!input)
        return sl_cli_usage_error(&sl_cli_cmd_slabinfo, "give a .slabcap, a /sys/kernel/slab-like directory or a "
                                                        "/proc/slabinfo file");
    if ((o.size + o.loss + o.partial) > 1)
        return sl_cli_usage_error(&sl_cli_cmd_slabinfo, "the sorting options -L, -S and -P exclude each other");
    if (regcomp(&pattern, pat ? pat : ".*", REG_ICASE | REG_NOSUB) != 0)
        return sl_cli_usage_error(&sl_cli_cmd_slabinfo, "'%s' is not a regular expression", pat);
    char err[256];
    if (sl_slabinfo_load(input, &set, err, sizeof err) != SL_OK) {
        fprintf(stderr, "slablab slabinfo: %s: %s\n", input, err);
        regfree(&pattern);
        return 1;
    }
    slabs = calloc(set.ncaches + 1, sizeof *slabs);
    for (unsigned i = 0; slabs && i < set.ncaches; i++) {
        sl_slabinfo_cache *c = &set.caches[i];
        if (c->name[0] != ':' && !matches(c->name))
            continue;
        slabs[nslabs++] = (slab){.c = c, .name = c->name};
    }
    unsigned keep = 0;
    for (unsigned i = 0; i < set.naliases; i++)
        if (matches(set.aliases[i].name))
            set.aliases[keep++] = set.aliases[i];
    set.naliases = keep;
    for (unsigned i = 0; i < set.naliases; i++) {
        slab *s = find(set.aliases[i].target);
        if (s)
            s->refs++;
    }
    if (!strcmp(set.source, "/proc/slabinfo"))
        printf("(from /proc/slabinfo: no partial or CPU slab counts, no aliases; Objsize is the slot size)\n");
    actual = nslabs;
    if (o.aliases) {
        alias_listing();
    } else {
        /* Show merged caches (":0000064") under one of their names, as the tool does. */
        for (unsigned i = 0; i < nslabs; i++) {
            if (slabs[i].c->name[0] != ':' || (slabs[i].refs > 1 && !o.first_alias))
                continue;
            const char *a = one_alias(&slabs[i]);
            if (a) {
                slabs[i].name = a;
            } else {
                slabs[i].name = "*";
                actual--;
            }
        }
        if (o.xtotals) {
            totals();
            static const char *const headings[3][2] = {
                {"\nSlabs sorted by size\n", "--------------------\n"},
                {"\nSlabs sorted by loss\n", "--------------------\n"},
                {"\nSlabs sorted by number of partial slabs\n", "---------------------------------------\n"}};
            for (int k = 0; k < 3; k++) {
                printf("%s%s", headings[k][0], headings[k][1]);
                o.size = k == 0;
                o.loss = k == 1;
                o.partial = k == 2;
                qsort(slabs, nslabs, sizeof *slabs, cmp_slabs);
                output_slabs();
            }
            printf("\n");
        } else if (o.totals) {
            totals();
        } else {
            qsort(slabs, nslabs, sizeof *slabs, cmp_slabs);
            output_slabs();
        }
    }
    free(slabs);
    sl_slabinfo_free(&set);
    regfree(&pattern);
    return 0;
}
