/*
 * snapshot_json.c - writes a snapshot in the format docs/snapshot.md
 * describes ("slablab-snapshot/1").  Addresses and other 64-bit kernel
 * values are hex strings ("0xffff..."): they do not fit a JavaScript number.
 * Counts are plain numbers.  The format only grows: a reader ignores
 * members it does not know.
 */
#include "cli.h"
#include "snapshot.h"

#include <inttypes.h>

static void hex(FILE *f, uint64_t v) { fprintf(f, "\"0x%" PRIx64 "\"", v); }

static void hex_or_null(FILE *f, uint64_t v)
{
    if (v)
        hex(f, v);
    else
        fputs("null", f);
}

static void hex_list(FILE *f, const sl_snap_words *w)
{
    fputc('[', f);
    for (size_t i = 0; i < w->n; i++) {
        if (i)
            fputc(',', f);
        hex(f, w->w[i]);
    }
    fputc(']', f);
}

static void error_or_null(FILE *f, const char *e)
{
    if (e && *e)
        sl_cli_json_string(f, e);
    else
        fputs("null", f);
}

static void write_slab(FILE *f, const sl_snap_slab *s, bool objects)
{
    fputs("{\"address\":", f);
    hex(f, s->rec.addr);
    fputs(",\"base\":", f);
    hex_or_null(f, s->base);
    fprintf(f, ",\"objects\":%u,\"inuse\":%u,\"frozen\":%s,\"freelist\":", s->objects, s->inuse,
            s->frozen ? "true" : "false");
    hex_list(f, &s->fl.objects);
    fputs(",\"freelist_error\":", f);
    error_or_null(f, s->fl.error);
    fprintf(f, ",\"torn\":%s,\"reads\":%u", (s->rec.flags & (SNAP_F_TORN | SNAP_F_FAULT)) ? "true" : "false",
            s->rec.attempts);
    if (objects) {
        fputs(",\"state\":", f);
        if (s->state)
            sl_cli_json_string(f, s->state);
        else
            fputs("null", f);
    }
    fputc('}', f);
}

static void write_sheaf(FILE *f, const sl_snap_sheaf *s)
{
    fputs("{\"address\":", f);
    hex(f, s->rec.addr);
    /* Not sheaf->capacity: it shares a union with the barn list and is only set for prefilled sheaves. */
    fprintf(f, ",\"size\":%u,\"node\":%d,\"objects\":", s->rec.size, (int)s->rec.node);
    hex_list(f, &s->objects);
    fprintf(f, ",\"torn\":%s}", (s->rec.flags & (SNAP_F_TORN | SNAP_F_FAULT)) ? "true" : "false");
}

static const sl_snap_sheaf *find_sheaf(const sl_snap_cache *c, uint32_t where, uint32_t owner)
{
    for (size_t i = 0; i < c->nsheaves; i++)
        if (c->sheaves[i].rec.where == where && c->sheaves[i].rec.owner == owner)
            return &c->sheaves[i];
    return NULL;
}

/* Writes the slabs found at (where, owner) as a JSON array; returns how many. */
static size_t write_slabs(FILE *f, const sl_snap_cache *c, uint32_t where, uint32_t owner, bool objects)
{
    size_t n = 0;
    fputc('[', f);
    for (size_t i = 0; i < c->nslabs; i++) {
        const sl_snap_slab *s = &c->slabs[i];
        if (s->rec.where != where || s->rec.owner != owner)
            continue;
        if (n++)
            fputc(',', f);
        write_slab(f, s, objects);
    }
    fputc(']', f);
    return n;
}

static void write_cpu(FILE *f, const sl_snapshot *snap, const sl_snap_cache *c, unsigned cpu)
{
    const sl_snap_cpu *k = &c->cpus[cpu];
    fprintf(f, "{\"cpu\":%u", cpu);
    if (snap->features & SNAP_FEAT_CPU_SLAB) {
        fputs(",\"tid\":", f);
        hex(f, k->rec.tid);
        fputs(",\"freelist_head\":", f);
        hex_or_null(f, k->rec.freelist);
        fputs(",\"freelist\":", f);
        hex_list(f, &k->fl.objects);
        fputs(",\"freelist_error\":", f);
        error_or_null(f, k->fl.error);
        fprintf(f,
                ",\"torn\":%s,\"reads\":%u,\"slab\":", (k->rec.flags & (SNAP_F_TORN | SNAP_F_FAULT)) ? "true" : "false",
                k->rec.attempts);
        const sl_snap_slab *slab = NULL;
        for (size_t i = 0; i < c->nslabs; i++)
            if (c->slabs[i].rec.where == SNAP_AT_CPU_SLAB && c->slabs[i].rec.owner == cpu)
                slab = &c->slabs[i];
        if (slab)
            write_slab(f, slab, snap->opt.objects);
        else
            fputs("null", f);
        fputs(",\"partial\":", f);
        write_slabs(f, c, SNAP_AT_CPU_PARTIAL, cpu, snap->opt.objects);
    }
    fputs(",\"sheaves\":", f);
    if (k->rec.sheaves) {
        static const struct {
            const char *name;
            uint32_t where;
        } kinds[] = {{"main", SNAP_AT_SHEAF_MAIN}, {"spare", SNAP_AT_SHEAF_SPARE}, {"rcu_free", SNAP_AT_SHEAF_RCU}};
        fputs("{\"address\":", f);
        hex(f, k->rec.sheaves);
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            fprintf(f, ",\"%s\":", kinds[i].name);
            const sl_snap_sheaf *s = find_sheaf(c, kinds[i].where, cpu);
            if (s)
                write_sheaf(f, s);
            else
                fputs("null", f);
        }
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputc('}', f);
}

static void write_node(FILE *f, const sl_snapshot *snap, const sl_snap_cache *c, const sl_snap_node *n)
{
    const struct snap_node *r = &n->rec;
    fprintf(f, "{\"node\":%u,\"address\":", r->node);
    hex(f, r->addr);
    fprintf(f, ",\"nr_partial\":%" PRIu64 ",\"nr_slabs\":%" PRIu64 ",\"total_objects\":%" PRIu64 ",\"partial\":",
            r->nr_partial, r->nr_slabs, r->total_objects);
    size_t listed = write_slabs(f, c, SNAP_AT_NODE_PARTIAL, r->node, snap->opt.objects);
    uint64_t left = r->list_end == SNAP_END_BOUND && r->nr_partial_again > listed ? r->nr_partial_again - listed : 0;
    fprintf(f, ",\"partial_listed\":%zu,\"partial_left_out\":%" PRIu64 ",\"list_end\":\"%s\",\"torn\":%s", listed, left,
            r->list_end == SNAP_END_NULL    ? "head"
            : r->list_end == SNAP_END_BOUND ? "max_slabs"
                                            : "fault",
            (r->flags & (SNAP_F_TORN | SNAP_F_FAULT)) ? "true" : "false");
    fputs(",\"barn\":", f);
    if (r->barn) {
        fputs("{\"address\":", f);
        hex(f, r->barn);
        fprintf(f, ",\"nr_full\":%u,\"nr_empty\":%u,\"full\":[", r->nr_full, r->nr_empty);
        size_t k = 0;
        for (size_t i = 0; i < c->nsheaves; i++) {
            const sl_snap_sheaf *s = &c->sheaves[i];
            if (s->rec.where != SNAP_AT_BARN_FULL || s->rec.owner != r->node)
                continue;
            if (k++)
                fputc(',', f);
            write_sheaf(f, s);
        }
        fputs("],\"empty\":[", f);
        k = 0;
        for (size_t i = 0; i < c->nsheaves; i++) {
            const sl_snap_sheaf *s = &c->sheaves[i];
            if (s->rec.where != SNAP_AT_BARN_EMPTY || s->rec.owner != r->node)
                continue;
            if (k++)
                fputc(',', f);
            hex(f, s->rec.addr);
        }
        fputs("]}", f);
    } else {
        fputs("null", f);
    }
    fputc('}', f);
}

static void write_cache(FILE *f, const sl_snapshot *snap, const sl_snap_cache *c)
{
    const struct snap_cache *r = &c->rec;
    fputs("{\"name\":", f);
    sl_cli_json_string(f, r->name);
    fputs(",\"address\":", f);
    hex(f, r->addr);
    fprintf(f,
            ",\"object_size\":%u,\"size\":%u,\"offset\":%u,\"align\":%u,\"inuse\":%u,\"red_left_pad\":%u,"
            "\"order\":%u,\"objects_per_slab\":%u,\"min_order\":%u,\"min_objects\":%u,\"flags\":\"0x%x\","
            "\"refcount\":%d,\"min_partial\":%" PRIu64 ",\"cpu_partial\":%u,\"cpu_partial_slabs\":%u,"
            "\"sheaf_capacity\":%u",
            r->object_size, r->size, r->offset, r->align, r->inuse, r->red_left_pad, sl_snap_oo_order(r->oo),
            sl_snap_oo_objects(r->oo), sl_snap_oo_order(r->min), sl_snap_oo_objects(r->min), r->flags, (int)r->refcount,
            r->min_partial, r->cpu_partial, r->cpu_partial_slabs, r->sheaf_capacity);
    /* s->random (the freelist key) is used to decode and not written: the file need not carry a kernel secret. */
    fputs(",\"cpus\":[", f);
    for (unsigned cpu = 0; cpu < snap->nr_cpus; cpu++) {
        if (cpu)
            fputc(',', f);
        write_cpu(f, snap, c, cpu);
    }
    fputs("],\"nodes\":[", f);
    for (size_t i = 0; i < c->nnodes; i++) {
        if (i)
            fputc(',', f);
        write_node(f, snap, c, &c->nodes[i]);
    }
    /* What may be torn: CPUs, slabs and node lists that changed while read, records lost. */
    fputs("],\"torn\":{\"cpus\":[", f);
    size_t k = 0;
    for (unsigned cpu = 0; cpu < snap->nr_cpus; cpu++)
        if (c->cpus[cpu].rec.flags & (SNAP_F_TORN | SNAP_F_FAULT))
            fprintf(f, "%s%u", k++ ? "," : "", cpu);
    fputs("],\"slabs\":[", f);
    k = 0;
    for (size_t i = 0; i < c->nslabs; i++)
        if (c->slabs[i].rec.flags & (SNAP_F_TORN | SNAP_F_FAULT)) {
            if (k++)
                fputc(',', f);
            hex(f, c->slabs[i].rec.addr);
        }
    fputs("],\"nodes\":[", f);
    k = 0;
    for (size_t i = 0; i < c->nnodes; i++)
        if (c->nodes[i].rec.flags & (SNAP_F_TORN | SNAP_F_FAULT))
            fprintf(f, "%s%u", k++ ? "," : "", c->nodes[i].rec.node);
    fprintf(f, "],\"dropped_records\":%u,\"complete\":%s}", c->dropped, c->ended && !c->dropped ? "true" : "false");

    /* Sums a reader would otherwise compute. */
    uint64_t free_listed = 0, cpu_free = 0, in_sheaves = 0, listed_objects = 0;
    for (size_t i = 0; i < c->nslabs; i++) {
        free_listed += c->slabs[i].fl.objects.n;
        listed_objects += c->slabs[i].objects;
    }
    for (unsigned cpu = 0; cpu < snap->nr_cpus; cpu++)
        cpu_free += c->cpus[cpu].fl.objects.n;
    for (size_t i = 0; i < c->nsheaves; i++)
        in_sheaves += c->sheaves[i].objects.n;
    fprintf(f,
            ",\"totals\":{\"listed_slabs\":%zu,\"listed_objects\":%" PRIu64 ",\"free_on_slab_freelists\":%" PRIu64
            ",\"on_cpu_freelists\":%" PRIu64 ",\"in_sheaves\":%" PRIu64 "}}",
            c->nslabs, listed_objects, free_listed, cpu_free, in_sheaves);
}

int sl_snapshot_write_json(const sl_snapshot *snap, FILE *f)
{
    uint32_t ft = snap->features;
    fprintf(f, "{\"format\":\"%s\",\"tool\":\"slablab snapshot\",\"kernel\":{\"release\":", SL_SNAP_FORMAT);
    sl_cli_json_string(f, snap->release);
    fputs(",\"version\":", f);
    sl_cli_json_string(f, snap->version);
    fputs(",\"machine\":", f);
    sl_cli_json_string(f, snap->machine);
    fprintf(f,
            ",\"nr_cpus\":%u,\"nr_nodes\":%u,\"page_size\":%u,\"page_struct_size\":%u,"
            "\"features\":{\"cpu_slab\":%s,\"cpu_partial\":%s,\"sheaves\":%s,\"barn_location\":%s,"
            "\"freelist_hardened\":%s},\"direct_map\":{\"ratio\":%u,\"offset\":",
            snap->nr_cpus, snap->nr_nodes, snap->page_size, snap->page_struct_size,
            ft & SNAP_FEAT_CPU_SLAB ? "true" : "false", ft & SNAP_FEAT_CPU_PARTIAL ? "true" : "false",
            ft & SNAP_FEAT_SHEAVES ? "true" : "false",
            ft & SNAP_FEAT_PER_NODE    ? "\"per_node\""
            : ft & SNAP_FEAT_BARN_NODE ? "\"node\""
                                       : "null",
            ft & SNAP_FEAT_HARDENED ? "true" : "false", snap->map_ratio);
    hex(f, snap->map_offset);
    fprintf(f, ",\"samples\":%u,\"agreeing\":%u}},\"taken_at\":\"%s\",\"duration_ns\":%" PRIu64, snap->map_samples,
            snap->map_agreeing, snap->taken_at, snap->duration_ns);
    fprintf(f, ",\"timing\":{\"load_ns\":%" PRIu64 ",\"percpu_ns\":%" PRIu64 ",\"iterate_ns\":%" PRIu64, snap->load_ns,
            snap->percpu_ns, snap->iterate_ns);
    /* The kernel counts a program's run time only with kernel.bpf_stats_enabled=1. */
    if (snap->prog_runs)
        fprintf(f, ",\"kernel_run_ns\":%" PRIu64 ",\"kernel_runs\":%" PRIu64 "}", snap->prog_run_ns, snap->prog_runs);
    else
        fputs(",\"kernel_run_ns\":null,\"kernel_runs\":null}", f);
    fprintf(f, ",\"records\":%" PRIu64 ",\"record_bytes\":%" PRIu64, snap->records, snap->bytes);
    fprintf(f, ",\"options\":{\"max_slabs\":%u,\"objects\":%s,\"caches\":", snap->opt.max_slabs,
            snap->opt.objects ? "true" : "false");
    if (snap->opt.names) {
        fputc('[', f);
        for (size_t i = 0; i < snap->opt.nnames; i++) {
            if (i)
                fputc(',', f);
            sl_cli_json_string(f, snap->opt.names[i]);
        }
        fputc(']', f);
    } else {
        fputs("null", f);
    }
    fputs("},\"caches\":[", f);
    for (size_t i = 0; i < snap->ncaches; i++) {
        fputs(i ? ",\n" : "\n", f);
        write_cache(f, snap, &snap->caches[i]);
    }
    fputs("\n]}\n", f);
    return ferror(f) ? -1 : 0;
}
