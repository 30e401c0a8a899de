/*
 * slub_replay.c - kmem events through the SLUB model: caches, pairing of
 * allocations and frees, statistics per cache and per call site.
 *
 * Caches.  Each real cache the trace names becomes an sli_cache, created
 * on first sight: kmem_cache_alloc/free name it (name=, since 6.0; a merged
 * cache is reported under its first name, which the capture's sysfs
 * resolves through its alias links); a kmalloc names none, so its cache is
 * derived as the kernel's kmalloc_type() and kmalloc_slab() do: the size
 * class from bytes_alloc (kmalloc-8 ... kmalloc-8k), the type from the gfp
 * flags (__GFP_DMA: dma-kmalloc-N; __GFP_RECLAIMABLE: kmalloc-rcl-N, 4.20+;
 * __GFP_ACCOUNT or accounted=true: kmalloc-cg-N, 5.14+; else kmalloc-N).
 * Above 8 KiB kmalloc goes to the page allocator: counted under
 * "kmalloc-large", not modelled.  Without name= (before 6.0) a
 * kmem_cache_alloc is counted by object size and not modelled.
 *
 * Model caches.  Per kernel model, a cache gets an sl_slub_cache on its
 * first allocation, following the SLUB rules of the model's kernel version
 * (sli_slub_version: the era of eras.h, e.g. 7.0's sheaves for every
 * cache), with the sheaf_capacity its creator asks for by name (6.18's
 * opt-in: vm_area_struct and maple_node, 32), and with object_size, align
 * and flags from the capture's
 * sysfs (the same attributes `slablab geometry` reads), or computed: kmalloc
 * caches as create_kmalloc_caches does (align = the largest power of two
 * dividing the size), others from bytes_req (the object size) and
 * bytes_alloc (the slot).  The fast paths are the lockless ones, or
 * PREEMPT_RT's local_lock paths when the capture's uname -v says
 * PREEMPT_RT.  The model's CPUs are the trace's CPUs, so a free
 * on another CPU than the one whose slab holds the object takes the
 * model's remote path (__slab_free), as it would in the kernel.
 *
 * Pairing.  `objs` maps each live pointer the trace allocated to its cache,
 * CPU, time, call site and model objects.  A free finds it there (its
 * cache is the allocation's), or it is a free of an object allocated
 * before the trace ("freed_unknown"), which never touches a model.  An
 * allocation of a pointer that is still live means its free is not in the
 * trace: kmem_cache_free_bulk() emits no event (the maple tree's bulk
 * frees, kfree_rcu()'s batches through kfree_bulk(), sheaf flushes), and a
 * full ring buffer loses events.  It is counted in untraced_frees (per
 * cache too) and the old object is freed in the models first, on the
 * allocating CPU.
 *
 * Context.  Each allocation runs in the model in the context its gfp flags
 * give (alloc_context): GFP_KERNEL-like flags (__GFP_DIRECT_RECLAIM) as
 * GFP_KERNEL, GFP_ATOMIC / GFP_NOWAIT-like ones (__GFP_KSWAPD_RECLAIM
 * alone) as GFP_ATOMIC, so that where the era says so (6.18, 7.0) an
 * atomic allocation that finds no object in the CPU's sheaves takes the
 * slab path instead of refilling a sheaf.  Flags with neither reclaim bit
 * run as GFP_ATOMIC too (the model's kmalloc in such a context: see
 * docs/replay.md); an event without gfp_flags= (or with a number whose
 * bits the capture's version does not let the replay read) as GFP_KERNEL.
 * Each is counted (alloc_ctx, the JSON's "alloc_contexts").
 */
#include "replay_internal.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t kmalloc_sizes[] = {8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192};
#define NKMALLOC (sizeof kmalloc_sizes / sizeof kmalloc_sizes[0])
#define KMALLOC_MAX_CACHE_SIZE 8192
enum { KM_NORMAL, KM_CGROUP, KM_RECLAIM, KM_DMA };

static bool version_at_least(const sl_replay *r, unsigned major, unsigned minor)
{
    const sl_kernel_version v = r->models[0].kv;
    if (v.major == 0) /* unknown: assume a current kernel */
        return true;
    return v.major > major || (v.major == major && v.minor >= minor);
}

/*
 * The context of an allocation event (SLI_CTX_GFP_*).  Named flags say it
 * (parse.c).  A number carries the raw bits of the capture's kernel: Linux
 * 6.0 to 7.x (include/linux/gfp_types.h, read at 6.4: ___GFP_DIRECT_RECLAIM
 * 0x400, ___GFP_KSWAPD_RECLAIM 0x800; unchanged when 6.3 freed 0x200 and
 * when the bits became an enum) have these; older kernels had them
 * elsewhere (4.4 to 4.x: 0x400000 and 0x2000000, then 0x1000000), so a
 * number from a capture older than 6.0 leaves the context unknown.  The
 * capture's version is its kernel_release, else the first --kernel; with
 * neither it is taken to be a current kernel, as kmalloc_cache does.
 */
static unsigned alloc_context(sl_replay *r, const sli_event *ev)
{
    if (!(ev->have & SLI_F_GFP))
        return SLI_CTX_GFP_UNKNOWN;
    unsigned reclaim = ev->gfp_reclaim;
    if (ev->have & SLI_F_GFP_HEX) {
        if (!r->gfp_kv_set) {
            if (!r->release[0] || !sl_kernel_version_from_release(r->release, &r->gfp_kv))
                r->gfp_kv = r->models[0].kv;
            r->gfp_kv_set = true;
        }
        if (r->gfp_kv.major && r->gfp_kv.major < 6)
            return SLI_CTX_GFP_UNKNOWN;
        reclaim = (ev->gfp_hex & 0x400 ? SLI_RECLAIM_DIRECT : 0) | (ev->gfp_hex & 0x800 ? SLI_RECLAIM_KSWAPD : 0);
    }
    return reclaim & SLI_RECLAIM_DIRECT   ? SLI_CTX_GFP_BLOCK
           : reclaim & SLI_RECLAIM_KSWAPD ? SLI_CTX_GFP_NONBLOCK
                                          : SLI_CTX_GFP_NORECLAIM;
}

static uint16_t new_cache(sl_replay *r, const char *name, size_t len, uint8_t type)
{
    if (r->ncaches >= SLI_MAX_CACHES)
        return SLI_NONE16;
    if (!sli_grow(&r->caches, &r->caches_cap, r->ncaches, sizeof *r->caches, 64))
        return SLI_NONE16;
    bool existed;
    uint32_t *slot = sli_map_put(&r->cache_by_name, sli_hash_str(name, len), &existed);
    if (!slot)
        return SLI_NONE16;
    *slot = r->ncaches;
    sli_cache *c = &r->caches[r->ncaches];
    memset(c, 0, sizeof *c);
    if (len >= sizeof c->name)
        len = sizeof c->name - 1;
    memcpy(c->name, name, len);
    c->name[len] = 0;
    c->type = type;
    c->geometry_matches = -1;
    c->wanted =
        (!r->cfg.cache || !strcmp(r->cfg.cache, c->name)) && (type == SLI_CACHE_NAMED || type == SLI_CACHE_KMALLOC);
    return (uint16_t)r->ncaches++;
}

static uint16_t cache_by_name(sl_replay *r, const char *name, size_t len, uint8_t type)
{
    uint32_t *idx = sli_map_get(&r->cache_by_name, sli_hash_str(name, len));
    return idx ? (uint16_t)*idx : new_cache(r, name, len, type);
}

static uint16_t kmalloc_cache(sl_replay *r, const sli_event *ev)
{
    if (ev->bytes_alloc > KMALLOC_MAX_CACHE_SIZE) {
        if (r->large_cache == SLI_NONE16)
            r->large_cache = cache_by_name(r, "kmalloc-large", 13, SLI_CACHE_LARGE);
        return r->large_cache;
    }
    bool account = ev->have & SLI_F_ACCOUNTED ? ev->accounted : (ev->gfp & SLI_GFP_ACCOUNT) != 0;
    unsigned type = ev->gfp & SLI_GFP_DMA                                           ? KM_DMA
                    : (ev->gfp & SLI_GFP_RECLAIMABLE) && version_at_least(r, 4, 20) ? KM_RECLAIM
                    : account && version_at_least(r, 5, 14)                         ? KM_CGROUP
                                                                                    : KM_NORMAL;
    unsigned cls = 0;
    while (cls < NKMALLOC && kmalloc_sizes[cls] != ev->bytes_alloc)
        cls++;
    if (cls < NKMALLOC && r->kmalloc_idx[type][cls] != SLI_NONE16)
        return r->kmalloc_idx[type][cls];
    char size[16], name[48];
    uint32_t b = (uint32_t)ev->bytes_alloc;
    if (b >= 1024 && b % 1024 == 0)
        snprintf(size, sizeof size, "%uk", b / 1024);
    else
        snprintf(size, sizeof size, "%u", b);
    static const char *const prefix[4] = {"kmalloc-", "kmalloc-cg-", "kmalloc-rcl-", "dma-kmalloc-"};
    int len = snprintf(name, sizeof name, "%s%s", prefix[type], size);
    uint16_t ci = cache_by_name(r, name, (size_t)len, SLI_CACHE_KMALLOC);
    if (ci != SLI_NONE16) {
        r->caches[ci].kmalloc_size = b;
        if (cls < NKMALLOC)
            r->kmalloc_idx[type][cls] = ci;
    }
    return ci;
}

static uint16_t named_cache(sl_replay *r, const sli_event *ev)
{
    if (ev->cache)
        return cache_by_name(r, ev->cache, ev->cache_len, SLI_CACHE_NAMED);
    char name[48];
    int len = snprintf(name, sizeof name, "(unnamed, %llu bytes)", (unsigned long long)ev->bytes_alloc);
    return cache_by_name(r, name, (size_t)len, SLI_CACHE_UNNAMED);
}

/* The geometry inputs for c: from the capture's sysfs, or computed.  Returns 1 from sysfs, 0 computed. */
int sli_replay_cache_geometry(const sl_replay *r, const sli_cache *c, sl_slub_kcache *k)
{
    const sl_slub_kcache *sys = sli_sysfs_lookup(r, c->name, strlen(c->name));
    if (sys && sys->object_size) {
        *k = *sys;
        return 1;
    }
    sl_slub_kcache_init(k, c->name);
    if (c->type == SLI_CACHE_KMALLOC) {
        uint32_t n = c->kmalloc_size;
        k->object_size = n;
        k->align = n & -n;
        if (!strncmp(c->name, "dma-", 4))
            k->flags |= SL_SLUB_KMALLOC | SL_SLUB_CACHE_DMA;
        if (!strncmp(c->name, "kmalloc-rcl-", 12))
            k->flags |= SL_SLUB_RECLAIM_ACCOUNT;
    }
    return 0;
}

sl_slub_kversion sli_slub_version(sl_kernel_version v)
{
    sl_slub_kversion sv = {v.major, v.minor};
    if (v.major == 0)
        return SL_SLUB_KVERSION_DEFAULT;
    if (sl_slub_kversion_cmp(sv, SL_SLUB_KVERSION_MIN) < 0)
        return SL_SLUB_KVERSION_MIN; /* older than the first bulk API: the nearest era the model has */
    return sl_slub_kversion_cmp(sv, SL_SLUB_KVERSION_NEWEST) > 0 ? SL_SLUB_KVERSION_NEWEST : sv;
}

/* Creates c's model cache in kernel k on its first allocation; false when it is not modelled. */
static bool ensure_model(sl_replay *r, sli_cache *c, uint16_t ci, unsigned k, const sli_event *ev)
{
    sli_cache_model *m = &c->m[k];
    if (m->s)
        return true;
    if (!c->wanted || m->failed)
        return false;
    sli_model *md = &r->models[k];
    if (!md->ready) {
        int rc = sl_page_zone_init(&md->zone, r->cfg.zone_bytes, NULL);
        if (rc != SL_OK) {
            m->failed = true;
            sli_model_error(r, k, "no memory for the model's page zone (%zu MiB): %s", r->cfg.zone_bytes >> 20,
                            sl_strerror(rc));
            return false;
        }
        md->ready = true;
    }
    sl_slub_kcache kc;
    c->geometry_from_sysfs = sli_replay_cache_geometry(r, c, &kc) == 1;
    if (!c->geometry_from_sysfs && c->type == SLI_CACHE_NAMED) {
        /* bytes_req is the object size and bytes_alloc the slot: find inputs that give that slot. */
        sl_slub_geometry g;
        uint32_t req = (uint32_t)(ev->have & SLI_F_BYTES_REQ ? ev->bytes_req : ev->bytes_alloc);
        kc.object_size = req ? req : (uint32_t)ev->bytes_alloc;
        if (sl_slub_calculate_geometry(kc.object_size, 8, 0, r->model_cpus, NULL, &g) != SL_OK ||
            g.size != ev->bytes_alloc) {
            if (sl_slub_calculate_geometry(kc.object_size, 8, SL_SLUB_HWCACHE_ALIGN, r->model_cpus, NULL, &g) ==
                    SL_OK &&
                g.size == ev->bytes_alloc)
                kc.flags |= SL_SLUB_HWCACHE_ALIGN;
            else
                kc.object_size = (uint32_t)ev->bytes_alloc;
        }
    }
    sl_slub_config cfg = {
        .object_size = kc.object_size,
        .align = kc.align,
        .flags = kc.flags,
        .fastpath = r->preemption == SLI_PREEMPT_RT ? SL_SLUB_FP_RT : SL_SLUB_FP_CMPXCHG,
        .bulk_free = SL_SLUB_BULK_DETACHED,
        .track = r->cfg.track,
        .seed = 1,
        .id = ci,
        .kernel = {.no_preempt = r->preemption == SLI_PREEMPT_NONE, .version = sli_slub_version(md->kv)},
        .sheaf_capacity = (uint16_t)sl_slub_sheaf_request(c->name),
    };
    int rc = sl_slub_cache_create(&md->zone, NULL, r->model_cpus, &cfg, &m->s);
    if (rc != SL_OK) {
        m->failed = true;
        m->s = NULL;
        sli_model_error(r, k, "%s: the model cannot build this cache (object size %u, align %u): %s", c->name,
                        kc.object_size, kc.align, sl_strerror(rc));
        return false;
    }
    if (c->geometry_from_sysfs && k == 0) {
        sl_slub_geometry g;
        uint32_t model[SL_SLUB_NR_KFIGS];
        int cmp = sl_slub_kcache_compare(&kc, r->model_cpus, &cfg.kernel, &g, model);
        c->geometry_matches = cmp == 1 ? 1 : cmp == 0 ? 0 : -1;
    }
    return true;
}

static uint32_t site_index(sl_replay *r, const sli_event *ev)
{
    if (!ev->site || !ev->site_len)
        return UINT32_MAX;
    size_t len = sli_site_key(ev->site, ev->site_len);
    bool existed;
    uint32_t *slot = sli_map_put(&r->site_by_name, sli_hash_str(ev->site, len), &existed);
    if (!slot)
        return UINT32_MAX;
    if (existed)
        return *slot;
    if (r->nsites >= SLI_MAX_SITES) {
        sli_map_del(&r->site_by_name, sli_hash_str(ev->site, len));
        r->sites_overflow++;
        return UINT32_MAX;
    }
    if (!sli_grow(&r->sites, &r->sites_cap, r->nsites, sizeof *r->sites, 256)) {
        sli_map_del(&r->site_by_name, sli_hash_str(ev->site, len));
        return UINT32_MAX;
    }
    sli_site *s = &r->sites[r->nsites];
    memset(s, 0, sizeof *s);
    s->name_off = (uint32_t)r->strings.len;
    sl_strbuf_append(&r->strings, ev->site, len);
    sl_strbuf_append(&r->strings, "", 1);
    *slot = r->nsites;
    return r->nsites++;
}

/* Fills the model part of an op from kernel 0's cache after the event. */
static void model_fields(sli_cache *c, void *obj, sl_replay_op *op)
{
    op->obj_pfn = SL_NONE32;
    op->obj_index = SL_NONE32;
    sl_slub_cache *s = c->m[0].s;
    if (!s)
        return;
    op->slabs = sl_slub_nr_slabs(s);
    op->partial = sl_slub_nr_partial(s);
    if (obj)
        sl_slub_object_index(s, obj, &op->obj_pfn, &op->obj_index);
}

/* After every model operation: the longest node partial list seen (one counter read). */
static void track_partial(sli_cache *c, unsigned k)
{
    uint32_t nr_partial = sl_slub_nr_partial(c->m[k].s);
    if (nr_partial > c->m[k].max_partial)
        c->m[k].max_partial = nr_partial;
}

/* Frees a model object of cache c in every kernel model (a pairing free or a lost one). */
static void model_free(sl_replay *r, sli_cache *c, const sli_obj *o, unsigned mcpu, uint8_t *flags)
{
    for (unsigned k = 0; k < r->nkernels; k++) {
        sl_slub_cache *s = c->m[k].s;
        if (!s || !o->model[k])
            continue;
        uint64_t slow = sl_slub_stat_get(s, (int)mcpu, SL_SLUB_FREE_SLOWPATH);
        uint64_t slabs_freed = k == 0 && r->cfg.on_op ? sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLAB) : 0;
        int rc = sl_slub_free(s, mcpu, o->model[k]);
        if (rc != SL_OK) {
            sli_model_error(r, k, "%s: the model refused the free (allocated at line %u): %s", c->name, o->line,
                            sl_strerror(rc));
            *flags |= SL_REPLAY_F_MODEL_ERROR;
            continue;
        }
        bool took_slow = sl_slub_stat_get(s, (int)mcpu, SL_SLUB_FREE_SLOWPATH) != slow;
        track_partial(c, k);
        if (k == 0 && r->cfg.on_op) {
            if (took_slow)
                *flags |= SL_REPLAY_F_SLOWPATH;
            if (sl_slub_stat_get(s, -1, SL_SLUB_FREE_SLAB) != slabs_freed)
                *flags |= SL_REPLAY_F_SLAB_FREED;
        }
    }
}

/* Halves the timeline's resolution: each pair of bins becomes one. */
static void timeline_widen(sl_replay *r)
{
    sli_timeline *t = &r->timeline;
    for (unsigned i = 0; i < r->ncaches; i++) {
        uint32_t *row = r->caches[i].timeline;
        if (!row)
            continue;
        for (unsigned half = 0; half < 2; half++, row += SLI_TIMELINE_BINS) {
            for (unsigned b = 0; b < SLI_TIMELINE_BINS / 2; b++)
                row[b] = row[2 * b] + row[2 * b + 1];
            memset(row + SLI_TIMELINE_BINS / 2, 0, SLI_TIMELINE_BINS / 2 * sizeof *row);
        }
    }
    t->width_ns *= 2;
    t->bins = (t->bins + 1) / 2;
    t->cur_end = t->cur_start; /* the next event recomputes its bin */
}

/* Counts an allocation (or a free) of cache ci at ts_ns in its time bin. */
static void timeline_add(sl_replay *r, uint16_t ci, uint64_t ts_ns, bool alloc)
{
    sli_timeline *t = &r->timeline;
    sli_cache *c = &r->caches[ci];
    if (!c->timeline && !(c->timeline = calloc(2 * SLI_TIMELINE_BINS, sizeof *c->timeline)))
        return; /* no memory: the chart lacks this cache, the counts are still right */
    if (!t->started) {
        *t = (sli_timeline){.started = true,
                            .t0_ns = ts_ns,
                            .width_ns = SLI_TIMELINE_FIRST_NS,
                            .bins = 1,
                            .cur_start = ts_ns,
                            .cur_end = ts_ns + SLI_TIMELINE_FIRST_NS};
    }
    if (ts_ns < t->cur_start || ts_ns >= t->cur_end) {
        /* Events a little out of order (CPU buffers merged) before the first land in bin 0. */
        uint64_t b = ts_ns > t->t0_ns ? (ts_ns - t->t0_ns) / t->width_ns : 0;
        while (b >= SLI_TIMELINE_BINS) {
            timeline_widen(r);
            b /= 2;
        }
        t->cur = (uint32_t)b;
        t->cur_start = b ? t->t0_ns + b * t->width_ns : 0;
        t->cur_end = t->t0_ns + (b + 1) * t->width_ns;
        if (t->cur >= t->bins)
            t->bins = t->cur + 1;
    }
    c->timeline[(alloc ? 0 : SLI_TIMELINE_BINS) + t->cur]++;
}

static void slub_alloc(sl_replay *r, const sli_event *ev)
{
    if (ev->ptr == 0) {
        r->alloc_failed++;
        return;
    }
    if (ev->bytes_alloc == 0) {
        r->zero_size++;
        return;
    }
    uint16_t ci = ev->kind == SLI_EV_KMALLOC ? kmalloc_cache(r, ev) : named_cache(r, ev);
    if (ci == SLI_NONE16) {
        sli_model_error(r, 0, "more than %d caches, or no memory: the allocation is not counted", SLI_MAX_CACHES);
        return;
    }
    unsigned ctx = alloc_context(r, ev);
    r->alloc_ctx[ctx]++;
    sl_slub_gfp gfp =
        ctx == SLI_CTX_GFP_NONBLOCK || ctx == SLI_CTX_GFP_NORECLAIM ? SL_SLUB_GFP_ATOMIC : SL_SLUB_GFP_KERNEL;
    unsigned mcpu = sli_model_cpu(r, ev->cpu);
    bool existed;
    sli_obj *o = sli_map_put(&r->objs, ev->ptr, &existed);
    if (!o) {
        sli_model_error(r, 0, "no memory for the table of live objects");
        return;
    }
    uint8_t flags = 0;
    if (existed) {
        /* Allocated again while live: the trace lost its free.  Free the old object first. */
        r->untraced_frees++;
        r->touched[1] = o->cache;
        sli_cache *old = &r->caches[o->cache];
        old->live--;
        old->untraced_frees++;
        model_free(r, old, o, mcpu, &flags);
    }
    sli_cache *c = &r->caches[ci];
    r->touched[0] = ci;
    c->allocs++;
    timeline_add(r, ci, ev->ts_ns, true);
    c->bytes_req += ev->have & SLI_F_BYTES_REQ ? ev->bytes_req : ev->bytes_alloc;
    c->bytes_alloc += ev->bytes_alloc;
    if (++c->live > c->peak_live)
        c->peak_live = c->live;
    uint32_t site = site_index(r, ev);
    if (site != UINT32_MAX) {
        r->sites[site].allocs++;
        r->sites[site].bytes_req += ev->have & SLI_F_BYTES_REQ ? ev->bytes_req : ev->bytes_alloc;
        r->sites[site].bytes_alloc += ev->bytes_alloc;
    }
    *o = (sli_obj){.ts_ns = ev->ts_ns, .site = site, .line = (uint32_t)r->lines, .cache = ci, .cpu = (uint16_t)ev->cpu};
    for (unsigned k = 0; k < r->nkernels; k++) {
        if (!ensure_model(r, c, ci, k, ev))
            continue;
        sl_slub_cache *s = c->m[k].s;
        uint64_t slow = sl_slub_stat_get(s, (int)mcpu, SL_SLUB_ALLOC_SLOWPATH);
        uint64_t slabs = k == 0 && r->cfg.on_op ? sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_SLAB) : 0;
        int rc = sl_slub_alloc_gfp(s, mcpu, gfp, &o->model[k]);
        if (rc != SL_OK) {
            o->model[k] = NULL;
            flags |= SL_REPLAY_F_MODEL_ERROR;
            sli_model_error(r, k, "%s: the model could not allocate: %s%s", c->name, sl_strerror(rc),
                            rc == SL_ENOMEM ? " (its page zone is full: raise --zone-mb)" : "");
            continue;
        }
        bool took_slow = sl_slub_stat_get(s, (int)mcpu, SL_SLUB_ALLOC_SLOWPATH) != slow;
        track_partial(c, k);
        if (k == 0 && r->cfg.on_op) {
            if (took_slow)
                flags |= SL_REPLAY_F_SLOWPATH;
            if (sl_slub_stat_get(s, -1, SL_SLUB_ALLOC_SLAB) != slabs)
                flags |= SL_REPLAY_F_NEW_SLAB;
        }
    }
    if (r->cfg.on_op) {
        sl_replay_op op = {.ts_ns = ev->ts_ns,
                           .ptr = ev->ptr,
                           .line = (uint32_t)r->lines,
                           .bytes = (uint32_t)ev->bytes_alloc,
                           .live = (uint32_t)c->live,
                           .cpu = (uint16_t)ev->cpu,
                           .alloc_cpu = SLI_NONE16,
                           .cache = ci,
                           .kind = SL_REPLAY_OP_ALLOC,
                           .flags = flags};
        model_fields(c, o->model[0], &op);
        r->cfg.on_op(r->cfg.user, &op);
    }
}

static void slub_free(sl_replay *r, const sli_event *ev)
{
    if (ev->ptr == 0) {
        r->null_frees++;
        return;
    }
    sli_obj *found = sli_map_get(&r->objs, ev->ptr);
    if (!found) {
        r->freed_unknown++;
        uint16_t ci = ev->cache ? named_cache(r, ev) : SLI_NONE16;
        if (ci != SLI_NONE16) {
            r->caches[ci].freed_unknown++;
            timeline_add(r, ci, ev->ts_ns, false);
        }
        if (r->cfg.on_op) {
            sl_replay_op op = {.ts_ns = ev->ts_ns,
                               .ptr = ev->ptr,
                               .line = (uint32_t)r->lines,
                               .cpu = (uint16_t)ev->cpu,
                               .alloc_cpu = SLI_NONE16,
                               .cache = ci,
                               .kind = SL_REPLAY_OP_FREE_UNKNOWN,
                               .obj_pfn = SL_NONE32,
                               .obj_index = SL_NONE32};
            r->cfg.on_op(r->cfg.user, &op);
        }
        return;
    }
    sli_obj o = *found;
    sli_map_del(&r->objs, ev->ptr);
    sli_cache *c = &r->caches[o.cache];
    r->touched[0] = o.cache;
    if (ev->cache) {
        uint32_t *named = sli_map_get(&r->cache_by_name, sli_hash_str(ev->cache, ev->cache_len));
        if (!named || *named != o.cache)
            r->cache_mismatch++;
    }
    r->matched++;
    c->frees++;
    timeline_add(r, o.cache, ev->ts_ns, false);
    c->live--;
    bool cross = ev->cpu != o.cpu;
    c->cross_cpu += cross;
    if (!c->life)
        c->life = calloc(1, sizeof *c->life);
    if (c->life)
        sli_hist_add(c->life, ev->ts_ns >= o.ts_ns ? ev->ts_ns - o.ts_ns : 0);
    if (o.site != UINT32_MAX) {
        r->sites[o.site].frees++;
        r->sites[o.site].cross_cpu += cross;
    }
    uint8_t flags = cross ? SL_REPLAY_F_CROSS_CPU : 0;
    sl_replay_op op = {0};
    if (r->cfg.on_op)
        model_fields(c, o.model[0], &op); /* where the object was, before the free */
    model_free(r, c, &o, sli_model_cpu(r, ev->cpu), &flags);
    if (r->cfg.on_op) {
        uint32_t pfn = op.obj_pfn, idx = op.obj_index;
        op = (sl_replay_op){.ts_ns = ev->ts_ns,
                            .ptr = ev->ptr,
                            .alloc_ts_ns = o.ts_ns,
                            .line = (uint32_t)r->lines,
                            .live = (uint32_t)c->live,
                            .cpu = (uint16_t)ev->cpu,
                            .alloc_cpu = o.cpu,
                            .cache = o.cache,
                            .kind = SL_REPLAY_OP_FREE,
                            .flags = flags};
        model_fields(c, NULL, &op);
        op.obj_pfn = pfn;
        op.obj_index = idx;
        r->cfg.on_op(r->cfg.user, &op);
    }
}

void sli_replay_slub_event(sl_replay *r, const sli_event *ev)
{
    if (ev->kind == SLI_EV_KMALLOC || ev->kind == SLI_EV_CACHE_ALLOC)
        slub_alloc(r, ev);
    else
        slub_free(r, ev);
}

void sli_replay_free_caches(sl_replay *r)
{
    for (unsigned i = 0; i < r->ncaches; i++) {
        for (unsigned k = 0; k < SL_REPLAY_MAX_KERNELS; k++)
            if (r->caches[i].m[k].s)
                sl_slub_cache_destroy(r->caches[i].m[k].s); /* SL_EBUSY: live objects, expected */
        free(r->caches[i].life);
        free(r->caches[i].timeline);
    }
    free(r->caches);
    r->caches = NULL;
    r->ncaches = 0;
}
