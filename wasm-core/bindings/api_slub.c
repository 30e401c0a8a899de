/*
 * api_slub.c - the SLUB model for the browser bridge.  Every export is
 * documented in docs/snapshot-format.md ("Bridge API"), with the layouts of
 * the buffers it reads and writes.
 *
 * A world is one simulated machine: an event trace, a page zone (the arena)
 * and one SLUB cache, for 1..8 CPUs.  Operations name the acting CPU; the
 * worker that calls as CPU k must be the only one doing so (it owns CPU k's
 * per-CPU state), as in the C API.  Objects cross the bridge as (slab pfn,
 * object index) pairs, never as pointers.  Each CPU has its own scratch area
 * in the world for those pairs, so workers acting as different CPUs never
 * share a buffer.
 *
 * Free-running workloads (sl_api_slub_workload) run on the calling worker as
 * CPU k until they have done their operations or sl_api_slub_workload_stop
 * is called; objects handed to another CPU travel through one single-
 * producer single-consumer ring per ordered CPU pair.
 *
 * Acting as a CPU.  Every export that acts as CPU k claims it for the
 * calling thread (`actor[k]`, a thread id, set by compare-and-swap) and
 * releases it on return; the thread holding it may claim it again (the
 * free-run's threads hold theirs for the whole run).  A call from another
 * thread meanwhile gets SL_EBUSY, where it would otherwise have raced the
 * owner on CPU k's per-CPU state and corrupted it silently.  The driver
 * (`run`), `set_variant` and `validate` act as, or need quiet, every CPU.
 * `snapshot`, `drain` and the counters only read, and may run any time.
 */
#include "export.h"

#include "../src/sched/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCRATCH_PAIRS 4096
#define WL_RING 4096
#define WL_HELD 256

typedef struct wl_ring {
    atomic_uint head; /* producer: the sending CPU */
    atomic_uint tail; /* consumer: the receiving CPU */
    void *slot[WL_RING];
} wl_ring;

typedef struct sl_api_slub_world {
    sl_trace trace;
    sl_page_zone zone;
    sl_slub_cache *cache;
    unsigned ncpus;
    atomic_uint stop;
    char msg[256];
    uint32_t scratch[SL_SLUB_MAX_CPUS][2 * SCRATCH_PAIRS];
    void *ptrs[SL_SLUB_MAX_CPUS][SCRATCH_PAIRS];
    wl_ring *rings; /* rings[from * ncpus + to] */
    void *held[SL_SLUB_MAX_CPUS][WL_HELD];
    unsigned nheld[SL_SLUB_MAX_CPUS];
    _Atomic uint64_t actor[SL_SLUB_MAX_CPUS]; /* thread acting as the CPU, 0 none */
    unsigned claims[SL_SLUB_MAX_CPUS];        /* nested claims: the actor's only */
    sl_page **pinned;                         /* pages held to make the zone run short (fragment) */
    uint32_t npinned;
    sl_slub_sheaf *sheaf_slots[SL_SCHED_SHEAF_SLOTS]; /* prefilled sheaves out with the page (or a script) */
} sl_api_slub_world;

static int last_error;

/* The error of the last world_create that returned NULL. */
SL_EXPORT int sl_api_slub_last_error(void) { return last_error; }

/*
 * The kernel a cache lives in, as KERNEL_WORDS u32 (docs/snapshot-format.md):
 * slub_min_order, slub_max_order (KERNEL_UNSET: not given), slub_min_objects,
 * CONFIG_NR_CPUS (0: the CPU count), no CONFIG_PREEMPTION (0/1).  NULL: all
 * defaults.  False for a value out of range.
 */
enum { KERNEL_WORDS = 5 };
#define KERNEL_UNSET 0xffffffffu
static bool read_kernel(const uint32_t *k, sl_slub_kernel *out)
{
    memset(out, 0, sizeof *out);
    if (!k)
        return true;
    if (k[0] > SL_PAGE_MAX_ORDER || (k[1] != KERNEL_UNSET && k[1] > 255) || k[2] > 32767 || k[3] > 8192 || k[4] > 1)
        return false;
    out->boot.min_order = (uint8_t)k[0];
    out->boot.max_order_set = k[1] != KERNEL_UNSET;
    out->boot.max_order = out->boot.max_order_set ? (uint8_t)k[1] : 0;
    out->boot.min_objects = k[2];
    out->nr_cpus = (uint16_t)k[3];
    out->no_preempt = (uint8_t)k[4];
    return true;
}

/* A kernel version as the bridge passes it: major * 256 + minor, 0 for the default. */
static sl_slub_kversion version_of(uint32_t v) { return (sl_slub_kversion){(uint8_t)(v >> 8), (uint8_t)v}; }
static bool version_ok(uint32_t v) { return v == 0 || (v <= 0xffff && sl_slub_kversion_known(version_of(v))); }

/*
 * The core's one version reader (platform/kversion.h through eras.c), for
 * the page to agree with: major * 256 + minor, or -1 for text the model
 * does not take.
 */
SL_EXPORT int sl_api_slub_kversion_parse(const char *text)
{
    sl_slub_kversion v;
    return sl_slub_kversion_parse(text, &v, NULL) == SL_OK ? (int)(v.major << 8 | v.minor) : -1;
}

/* The notice of a version newer than the newest modelled (major * 256 + minor), or NULL.  Not reentrant. */
SL_EXPORT const char *sl_api_slub_kversion_notice(uint32_t v)
{
    static char notice[160];
    return v <= 0xffff && sl_slub_kversion_notice(version_of(v), notice, sizeof notice) ? notice : NULL;
}

/*
 * The version and sheaves of a world's cache as VERSION_WORDS u32: kernel
 * version (major * 256 + minor, 0: the default 6.17), sheaf_capacity (6.18:
 * the opt-in; 7.0: a floor), 1 to take sheaf_capacity as it is in 7.0 too
 * (small sheaves to watch), 1 for a cache created before
 * bootstrap_cache_sheaves (7.0), max_sheaves (0: no limit).  NULL: all 0.
 */
enum { VERSION_WORDS = 5 };
static bool read_version(const uint32_t *v, sl_slub_config *cfg)
{
    if (!v)
        return true;
    if (!version_ok(v[0]) || v[1] > 0xffff || v[2] > 1 || v[3] > 1 || v[4] > 0xffff)
        return false;
    cfg->kernel.version = version_of(v[0]);
    cfg->sheaf_capacity = (uint16_t)v[1];
    cfg->sheaf_capacity_exact = (uint8_t)v[2];
    cfg->early_boot = (uint8_t)v[3];
    cfg->max_sheaves = (uint16_t)v[4];
    return true;
}

/*
 * The NUMA topology of a world's cache as TOPOLOGY_WORDS u32 (sl_slub_config):
 * nr_nodes (0 or 1: one node; at most SL_SLUB_MAX_NODES), the mask of
 * memoryless nodes, the mask of CPUs that start offline, then each of the
 * SL_SLUB_MAX_CPUS CPUs' node.  NULL: one node.  The cache refuses a bad
 * topology (SL_EINVAL).
 */
enum { TOPOLOGY_WORDS = 3 + SL_SLUB_MAX_CPUS };
static bool read_topology(const uint32_t *t, sl_slub_config *cfg)
{
    if (!t)
        return true;
    if (t[0] > SL_SLUB_MAX_NODES || t[1] > 0xff || t[2] > 0xff)
        return false;
    cfg->nr_nodes = (uint8_t)t[0];
    cfg->memoryless = (uint8_t)t[1];
    cfg->offline_cpus = (uint8_t)t[2];
    for (unsigned c = 0; c < SL_SLUB_MAX_CPUS; c++) {
        if (t[3 + c] >= SL_SLUB_MAX_NODES)
            return false;
        cfg->cpu_node[c] = (uint8_t)t[3 + c];
    }
    return true;
}

static sl_api_slub_world *world_create(uint32_t arena_bytes, uint32_t ncpus, uint32_t object_size, uint32_t align,
                                       uint32_t flags, uint32_t fastpath, uint32_t bulk_free, uint32_t track,
                                       uint32_t seed, const uint32_t *kernel, const uint32_t *version,
                                       const uint32_t *topology);

/*
 * A world for ncpus CPUs with one cache in a kernel version with its
 * sheaves: `kernel` (may be 0) names the kernel's boot parameters and
 * options (read_kernel), `version` (may be 0) as read_version.  A bad
 * combination (a CPU-slab variant in 7.0, early boot before 7.0, an unknown
 * version) fails with last_error() SL_EINVAL.
 */
SL_EXPORT sl_api_slub_world *sl_api_slub_world_create_version(uint32_t arena_bytes, uint32_t ncpus,
                                                              uint32_t object_size, uint32_t align, uint32_t flags,
                                                              uint32_t fastpath, uint32_t bulk_free, uint32_t track,
                                                              uint32_t seed, const uint32_t *kernel,
                                                              const uint32_t *version)
{
    return world_create(arena_bytes, ncpus, object_size, align, flags, fastpath, bulk_free, track, seed, kernel,
                        version, NULL);
}

/* The same on NUMA nodes: `topology` (may be 0) as read_topology. */
SL_EXPORT sl_api_slub_world *sl_api_slub_world_create_topology(uint32_t arena_bytes, uint32_t ncpus,
                                                               uint32_t object_size, uint32_t align, uint32_t flags,
                                                               uint32_t fastpath, uint32_t bulk_free, uint32_t track,
                                                               uint32_t seed, const uint32_t *kernel,
                                                               const uint32_t *version, const uint32_t *topology)
{
    return world_create(arena_bytes, ncpus, object_size, align, flags, fastpath, bulk_free, track, seed, kernel,
                        version, topology);
}

static sl_api_slub_world *world_create(uint32_t arena_bytes, uint32_t ncpus, uint32_t object_size, uint32_t align,
                                       uint32_t flags, uint32_t fastpath, uint32_t bulk_free, uint32_t track,
                                       uint32_t seed, const uint32_t *kernel, const uint32_t *version,
                                       const uint32_t *topology)
{
    last_error = SL_EINVAL;
    sl_slub_kernel k;
    sl_slub_config cfg = {.object_size = object_size,
                          .align = align,
                          .flags = flags,
                          .fastpath = (uint8_t)fastpath,
                          .bulk_free = (uint8_t)bulk_free,
                          .track = (uint8_t)(track != 0),
                          .seed = seed,
                          .id = 1};
    if (ncpus < 1 || ncpus > SL_SLUB_MAX_CPUS || arena_bytes < SL_PAGE_SIZE || fastpath >= SL_SLUB_NR_FASTPATHS ||
        bulk_free > SL_SLUB_BULK_GENERIC || !read_kernel(kernel, &k) || !read_version(version, &cfg) ||
        !read_topology(topology, &cfg))
        return NULL;
    k.version = cfg.kernel.version;
    cfg.kernel = k;
    sl_api_slub_world *w = calloc(1, sizeof *w);
    if (!w) {
        last_error = SL_ENOMEM;
        return NULL;
    }
    w->ncpus = ncpus;
    int rc = sl_trace_init(&w->trace, ncpus, 1u << 15);
    if (rc == SL_OK)
        rc = sl_page_zone_init(&w->zone, arena_bytes, &w->trace);
    if (rc == SL_OK)
        rc = sl_slub_cache_create(&w->zone, &w->trace, ncpus, &cfg, &w->cache);
    if (rc == SL_OK && !(w->rings = calloc((size_t)ncpus * ncpus, sizeof(wl_ring))))
        rc = SL_ENOMEM;
    if (rc != SL_OK) {
        last_error = rc;
        if (w->cache)
            sl_slub_cache_destroy(w->cache);
        if (w->zone.base)
            sl_page_zone_destroy(&w->zone);
        sl_trace_destroy(&w->trace);
        free(w->rings);
        free(w);
        return NULL;
    }
    last_error = SL_OK;
    return w;
}

/* The same in the default version (6.17). */
SL_EXPORT sl_api_slub_world *sl_api_slub_world_create(uint32_t arena_bytes, uint32_t ncpus, uint32_t object_size,
                                                      uint32_t align, uint32_t flags, uint32_t fastpath,
                                                      uint32_t bulk_free, uint32_t track, uint32_t seed,
                                                      const uint32_t *kernel)
{
    return sl_api_slub_world_create_version(arena_bytes, ncpus, object_size, align, flags, fastpath, bulk_free, track,
                                            seed, kernel, NULL);
}

/* Call with no operation running on any CPU. */
SL_EXPORT void sl_api_slub_world_destroy(sl_api_slub_world *w)
{
    if (!w)
        return;
    sl_slub_cache_destroy(w->cache);
    sl_page_zone_destroy(&w->zone);
    sl_trace_destroy(&w->trace);
    free(w->rings);
    free(w->pinned);
    free(w);
}

/* Claims CPU cpu for the calling thread: SL_OK, or SL_EBUSY while another thread acts as it. */
SL_EXPORT int sl_api_slub_cpu_claim(sl_api_slub_world *w, uint32_t cpu)
{
    if (!w || cpu >= w->ncpus)
        return SL_EINVAL;
    uint64_t me = sl_thread_self_id(), none = 0;
    if (atomic_load_explicit(&w->actor[cpu], memory_order_acquire) != me &&
        !atomic_compare_exchange_strong_explicit(&w->actor[cpu], &none, me, memory_order_acquire, memory_order_relaxed))
        return SL_EBUSY;
    w->claims[cpu]++;
    return SL_OK;
}

/* Undoes one sl_api_slub_cpu_claim of the calling thread. */
SL_EXPORT void sl_api_slub_cpu_release(sl_api_slub_world *w, uint32_t cpu)
{
    if (w && cpu < w->ncpus && atomic_load_explicit(&w->actor[cpu], memory_order_relaxed) == sl_thread_self_id() &&
        --w->claims[cpu] == 0)
        atomic_store_explicit(&w->actor[cpu], 0, memory_order_release);
}

/* Claims every CPU, or none: SL_OK or SL_EBUSY. */
static int claim_all(sl_api_slub_world *w)
{
    for (uint32_t k = 0; k < w->ncpus; k++) {
        int rc = sl_api_slub_cpu_claim(w, k);
        if (rc != SL_OK) {
            while (k--)
                sl_api_slub_cpu_release(w, k);
            return rc;
        }
    }
    return SL_OK;
}

static void release_all(sl_api_slub_world *w)
{
    for (uint32_t k = 0; k < w->ncpus; k++)
        sl_api_slub_cpu_release(w, k);
}

/* The world's cache, for the other bindings (api_kernel.c seeds it); NULL for no world. */
sl_slub_cache *sl_api_slub_world_cache(sl_api_slub_world *w) { return w ? w->cache : NULL; }

SL_EXPORT uint32_t *sl_api_slub_scratch(sl_api_slub_world *w, uint32_t cpu)
{
    return w && cpu < w->ncpus ? w->scratch[cpu] : NULL;
}

SL_EXPORT uint32_t sl_api_slub_scratch_pairs(void) { return SCRATCH_PAIRS; }

static void put_ref(sl_api_slub_world *w, uint32_t *dst, void *obj)
{
    if (!obj || !sl_slub_object_index(w->cache, obj, &dst[0], &dst[1]))
        dst[0] = dst[1] = SL_NONE32;
}

static void *get_ref(sl_api_slub_world *w, const uint32_t *src)
{
    void *o = sl_slub_object_at(w->cache, src[0], src[1]);
    return o ? o : (void *)(uintptr_t)1; /* the model reports a foreign pointer */
}

SL_EXPORT int sl_api_slub_alloc(sl_api_slub_world *w, uint32_t cpu)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    void *o;
    rc = sl_slub_alloc(w->cache, cpu, &o);
    put_ref(w, w->scratch[cpu], rc == SL_OK ? o : NULL);
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

SL_EXPORT int sl_api_slub_free(sl_api_slub_world *w, uint32_t cpu, uint32_t pfn, uint32_t index)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    const uint32_t ref[2] = {pfn, index};
    rc = sl_slub_free(w->cache, cpu, get_ref(w, ref));
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

/*
 * kmem_cache_alloc_bulk in context gfp (sl_slub_gfp: 0 GFP_KERNEL, 1
 * GFP_ATOMIC, 2 GFP_NOWAIT; another is SL_EINVAL); the pairs go to the
 * CPU's scratch.  Returns n, 0 (no memory) or an error.
 */
SL_EXPORT int sl_api_slub_alloc_bulk_gfp(sl_api_slub_world *w, uint32_t cpu, uint32_t gfp, uint32_t n)
{
    if (n > SCRATCH_PAIRS)
        return SL_EINVAL;
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    int got = sl_slub_alloc_bulk_gfp(w->cache, cpu, (sl_slub_gfp)gfp, n, w->ptrs[cpu]);
    for (int i = 0; i < got; i++)
        put_ref(w, &w->scratch[cpu][2 * i], w->ptrs[cpu][i]);
    sl_api_slub_cpu_release(w, cpu);
    return got;
}

SL_EXPORT int sl_api_slub_alloc_bulk(sl_api_slub_world *w, uint32_t cpu, uint32_t n)
{
    return sl_api_slub_alloc_bulk_gfp(w, cpu, SL_SLUB_GFP_KERNEL, n);
}

/* Frees the n pairs in CPU cpu's scratch; returns the CAS count or the first error. */
SL_EXPORT int sl_api_slub_free_bulk(sl_api_slub_world *w, uint32_t cpu, uint32_t n)
{
    if (n > SCRATCH_PAIRS)
        return SL_EINVAL;
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    for (uint32_t i = 0; i < n; i++)
        w->ptrs[cpu][i] = get_ref(w, &w->scratch[cpu][2 * i]);
    rc = sl_slub_free_bulk(w->cache, cpu, n, w->ptrs[cpu], NULL);
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

SL_EXPORT int sl_api_slub_flush(sl_api_slub_world *w, uint32_t cpu)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    rc = sl_slub_flush_cpu(w->cache, cpu);
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

SL_EXPORT int sl_api_slub_set_variant(sl_api_slub_world *w, uint32_t fastpath, uint32_t bulk_free)
{
    if (!w || fastpath >= SL_SLUB_NR_FASTPATHS || bulk_free > SL_SLUB_BULK_GENERIC)
        return SL_EINVAL;
    int rc = claim_all(w);
    if (rc != SL_OK)
        return rc;
    sl_slub_set_fastpath(w->cache, (sl_slub_fastpath)fastpath);
    sl_slub_set_bulk_free(w->cache, (sl_slub_bulk_free)bulk_free);
    release_all(w);
    return SL_OK;
}

/* Runs a sysfs tunable (slub.h) with every CPU quiet: its result, SL_EINVAL or SL_EBUSY. */
static int tune(sl_api_slub_world *w, int (*store)(sl_slub_cache *, uint32_t), uint32_t value)
{
    int rc = w ? claim_all(w) : SL_EINVAL;
    if (rc != SL_OK)
        return rc;
    rc = store(w->cache, value);
    release_all(w);
    return rc;
}

SL_EXPORT int sl_api_slub_set_min_partial(sl_api_slub_world *w, uint32_t min_partial)
{
    return tune(w, sl_slub_set_min_partial, min_partial);
}

SL_EXPORT int sl_api_slub_set_cpu_partial(sl_api_slub_world *w, uint32_t objects)
{
    return tune(w, sl_slub_set_cpu_partial, objects);
}

/*
 * Makes the world's page allocator run short (on = 1): every free block is
 * split into pages and every other page is held, so no block above order 0
 * is free and a new slab of a higher order falls back (ORDER_FALLBACK);
 * on = 0 gives the held pages back.  Returns the pages held, or an error.
 * With every CPU quiet (SL_EBUSY otherwise).
 */
SL_EXPORT int sl_api_slub_fragment(sl_api_slub_world *w, uint32_t on)
{
    int rc = w ? claim_all(w) : SL_EINVAL;
    if (rc != SL_OK)
        return rc;
    if (on && !w->pinned && (w->pinned = malloc(sizeof(sl_page *) * w->zone.npages))) {
        uint32_t n = 0;
        sl_page *pg;
        while (n < w->zone.npages && (pg = sl_page_alloc(&w->zone, 0, 0)))
            w->pinned[n++] = pg;
        for (uint32_t i = 0; i < n; i++) { /* give back the even pfns: no two free pages are buddies */
            if (sl_page_pfn(&w->zone, w->pinned[i]) % 2 == 0)
                sl_page_free(&w->zone, w->pinned[i], 0);
            else
                w->pinned[w->npinned++] = w->pinned[i];
        }
    } else if (!on && w->pinned) {
        while (w->npinned)
            sl_page_free(&w->zone, w->pinned[--w->npinned], 0);
        free(w->pinned);
        w->pinned = NULL;
    }
    rc = on && !w->pinned ? SL_ENOMEM : (int)w->npinned;
    release_all(w);
    return rc;
}

/* shrink: returns 1 if the cache still has slabs, 0 if it has none, or an error. */
SL_EXPORT int sl_api_slub_shrink(sl_api_slub_world *w)
{
    int rc = w ? claim_all(w) : SL_EINVAL;
    if (rc != SL_OK)
        return rc;
    int remaining = 0;
    rc = sl_slub_shrink(w->cache, &remaining);
    release_all(w);
    return rc == SL_OK ? remaining : rc;
}

/*
 * Snapshot into buf: bytes written, or minus the bytes needed.  With every
 * CPU quiet it holds the sheaves; while another thread acts as a CPU (a free
 * run) it leaves them out (sl_slub_snapshot_running).
 */
SL_EXPORT int sl_api_slub_snapshot(sl_api_slub_world *w, void *buf, uint32_t cap)
{
    if (!w)
        return SL_EINVAL;
    if (claim_all(w) != SL_OK)
        return (int)sl_slub_snapshot_running(w->cache, buf, cap);
    long n = sl_slub_snapshot(w->cache, buf, cap);
    release_all(w);
    return (int)n;
}

SL_EXPORT uint32_t sl_api_slub_drain(sl_api_slub_world *w, uint32_t cpu, sl_event *out, uint32_t max)
{
    return w ? sl_trace_drain(&w->trace, cpu, out, max) : 0;
}

SL_EXPORT uint32_t sl_api_slub_events_dropped(sl_api_slub_world *w, uint32_t cpu)
{
    return w && cpu < w->ncpus ? atomic_load(&w->trace.rings[cpu].dropped) : 0;
}

/* Turns event recording on (1) or off (0), e.g. off for free-running speed. */
SL_EXPORT void sl_api_slub_trace_enable(sl_api_slub_world *w, uint32_t on)
{
    if (w)
        w->trace.enabled = on != 0;
}

SL_EXPORT uint32_t sl_api_slub_stat_count(void) { return SL_SLUB_NR_STATS; }
/* Counters 0 .. stat_kernel_count() - 1 are the kernel's (CONFIG_SLUB_STATS), the rest the model's. */
SL_EXPORT uint32_t sl_api_slub_stat_kernel_count(void) { return SL_SLUB_NR_KERNEL_STATS; }
SL_EXPORT const char *sl_api_slub_stat_name(uint32_t i) { return sl_slub_stat_name(i); }
/* Counter i of one CPU, or of all (cpu = -1); a double is exact up to 2^53. */
SL_EXPORT double sl_api_slub_stat(sl_api_slub_world *w, int32_t cpu, uint32_t i)
{
    return w ? (double)sl_slub_stat_get(w->cache, cpu, i) : 0;
}

/* The invariant checker; SL_EBUSY while another thread acts as a CPU (the state is not quiet). */
SL_EXPORT int sl_api_slub_validate(sl_api_slub_world *w)
{
    if (!w)
        return SL_EINVAL;
    int rc = claim_all(w);
    if (rc == SL_OK) {
        rc = sl_slub_validate(w->cache, w->msg, sizeof w->msg);
        release_all(w);
    } else {
        snprintf(w->msg, sizeof w->msg, "a CPU is in use by another thread: validate needs every CPU quiet");
    }
    return rc;
}
SL_EXPORT const char *sl_api_slub_validate_message(sl_api_slub_world *w) { return w ? w->msg : ""; }

/*
 * Geometry for the given inputs into out[14] (the sl_slub_geometry fields in
 * order) under the rules of kernel `version` (major * 256 + minor, 0: 6.17)
 * and the boot parameters of `kernel` (as world_create; may be 0).
 */
SL_EXPORT int sl_api_slub_geometry_version(uint32_t object_size, uint32_t align, uint32_t flags, uint32_t ncpus,
                                           uint32_t *out, const uint32_t *kernel, uint32_t version)
{
    sl_slub_geometry g;
    sl_slub_kernel k;
    if (!read_kernel(kernel, &k) || !version_ok(version))
        return SL_EINVAL;
    k.version = version_of(version);
    int rc = sl_slub_calculate_geometry(object_size, align, flags, ncpus, &k, &g);
    if (rc == SL_OK)
        memcpy(out, &g, sizeof g);
    _Static_assert(sizeof(sl_slub_geometry) == 14 * sizeof(uint32_t), "geometry() writes out[14]");
    return rc;
}

/* The same under the default version's rules (6.17). */
SL_EXPORT int sl_api_slub_geometry(uint32_t object_size, uint32_t align, uint32_t flags, uint32_t ncpus, uint32_t *out,
                                   const uint32_t *kernel)
{
    return sl_api_slub_geometry_version(object_size, align, flags, ncpus, out, kernel, 0);
}

/*
 * Runs a driver script (sched.h): ops (8-byte records), refs (pfn, index
 * pairs), irqs (16-byte records); stop_at = micro-step to snapshot at, 0 for
 * none.  results (nops int32, may be 0).  out[8] = {ops_done, microsteps,
 * snap_len, stop_op, irqs_fired, irq_result0, irq_result1, irq_result2}.
 */
SL_EXPORT int sl_api_slub_run(sl_api_slub_world *w, const sl_sched_op *ops, uint32_t nops, const sl_sched_ref *refs,
                              uint32_t nrefs, const sl_sched_irq *irqs, uint32_t nirqs, uint32_t stop_at,
                              void *snap_buf, uint32_t snap_cap, int32_t *results, int32_t *out)
{
    if (!w || !out)
        return SL_EINVAL;
    int claimed = claim_all(w);
    if (claimed != SL_OK)
        return claimed;
    sl_sched_run r = {.cache = w->cache,
                      .trace = &w->trace,
                      .ops = ops,
                      .nops = nops,
                      .refs = refs,
                      .nrefs = nrefs,
                      .irqs = irqs,
                      .nirqs = nirqs,
                      .stop_at_microstep = stop_at ? stop_at : SL_SCHED_NO_STOP,
                      .snap_buf = snap_buf,
                      .snap_cap = snap_cap,
                      .results = results,
                      .sheaf_slots = w->sheaf_slots};
    int rc = sl_sched_execute(&r);
    release_all(w);
    out[0] = (int32_t)r.ops_done;
    out[1] = (int32_t)r.microsteps;
    out[2] = (int32_t)r.snap_len;
    out[3] = (int32_t)r.stop_op;
    out[4] = (int32_t)r.irqs_fired;
    for (unsigned i = 0; i < 3; i++)
        out[5 + i] = r.irq_results[i];
    return rc;
}

/* ---- kernel versions, RCU, sheaves (6.18+) ------------------------------ */

/* The world's kernel version, major * 256 + minor, and its era (eras.h) in bits 16-23. */
SL_EXPORT uint32_t sl_api_slub_world_version(sl_api_slub_world *w)
{
    if (!w)
        return 0;
    const sl_slub_rules *r = sl_slub_cache_rules(w->cache);
    return (uint32_t)r->version.major << 8 | r->version.minor | (uint32_t)r->era << 16;
}

/* kfree_rcu of the object (pfn, index): it waits for a grace period in a sheaf or alone. */
SL_EXPORT int sl_api_slub_kfree_rcu(sl_api_slub_world *w, uint32_t cpu, uint32_t pfn, uint32_t index)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    const uint32_t ref[2] = {pfn, index};
    rc = sl_slub_kfree_rcu(w->cache, cpu, get_ref(w, ref));
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

/* The grace period ends for what CPU cpu queued; returns the objects freed. */
SL_EXPORT int sl_api_slub_rcu_grace_period(sl_api_slub_world *w, uint32_t cpu)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    rc = sl_slub_rcu_grace_period(w->cache, cpu);
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

/*
 * kmem_cache_alloc in the context gfp (0 GFP_KERNEL, 1 GFP_ATOMIC, 2
 * GFP_NOWAIT: sl_slub_gfp); the object goes to the CPU's scratch as
 * sl_api_slub_alloc's does.
 */
SL_EXPORT int sl_api_slub_alloc_gfp(sl_api_slub_world *w, uint32_t cpu, uint32_t gfp)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    void *o = NULL;
    rc = sl_slub_alloc_gfp(w->cache, cpu, (sl_slub_gfp)gfp, &o);
    put_ref(w, w->scratch[cpu], rc == SL_OK ? o : NULL);
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

/* kmalloc_nolock on the world's cache (6.18+); the object goes to the CPU's scratch. */
SL_EXPORT int sl_api_slub_kmalloc_nolock(sl_api_slub_world *w, uint32_t cpu)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    void *o = NULL;
    rc = sl_slub_kmalloc_nolock(w->cache, cpu, &o);
    put_ref(w, w->scratch[cpu], rc == SL_OK ? o : NULL);
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

/* kfree_nolock of the object (pfn, index) (6.18+): to this CPU's slab or sheaf, or deferred. */
SL_EXPORT int sl_api_slub_kfree_nolock(sl_api_slub_world *w, uint32_t cpu, uint32_t pfn, uint32_t index)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    const uint32_t ref[2] = {pfn, index};
    rc = sl_slub_kfree_nolock(w->cache, cpu, get_ref(w, ref));
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

/* kfree_rcu_nolock of the object (pfn, index) (7.3): the rcu sheaf without waiting for a lock, or deferred;
 * irqs_off nonzero: the caller runs with interrupts disabled. */
SL_EXPORT int sl_api_slub_kfree_rcu_nolock(sl_api_slub_world *w, uint32_t cpu, uint32_t pfn, uint32_t index,
                                           uint32_t irqs_off)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    const uint32_t ref[2] = {pfn, index};
    rc = sl_slub_kfree_rcu_nolock(w->cache, cpu, get_ref(w, ref), irqs_off != 0);
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

/* The CPU's irq_work: what kfree_nolock (7.3: and kfree_rcu_nolock) deferred on cpu; returns the objects. */
SL_EXPORT int sl_api_slub_irq_work(sl_api_slub_world *w, uint32_t cpu)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    rc = sl_slub_irq_work(w->cache, cpu);
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

/* slub_cpu_dead: cpu goes offline (its sheaves flushed, 7.x).  Objects flushed, or an error. */
SL_EXPORT int sl_api_slub_cpu_dead(sl_api_slub_world *w, uint32_t cpu)
{
    int rc = w ? claim_all(w) : SL_EINVAL;
    if (rc != SL_OK)
        return rc;
    rc = sl_slub_cpu_dead(w->cache, cpu);
    release_all(w);
    return rc;
}

/* slub_cpu_setup: cpu comes online (7.1: its node's barn if it had none).  1 if a barn was made, 0, or an error. */
SL_EXPORT int sl_api_slub_cpu_online(sl_api_slub_world *w, uint32_t cpu)
{
    int rc = w ? claim_all(w) : SL_EINVAL;
    if (rc != SL_OK)
        return rc;
    rc = sl_slub_cpu_online(w->cache, cpu);
    release_all(w);
    return rc;
}

/*
 * The topology as it is now into out[TOPOLOGY_STATE_WORDS]: nr_nodes, the
 * masks of nodes with memory, of nodes with a barn and of online CPUs,
 * remote_node_defrag_ratio (0..1000), then for each of the SL_SLUB_MAX_CPUS
 * CPUs its node, its memory node (numa_mem_id) and its barn's node
 * (get_barn).  0 or SL_EINVAL.
 */
enum { TOPOLOGY_STATE_WORDS = 5 + 3 * SL_SLUB_MAX_CPUS };
SL_EXPORT int sl_api_slub_topology(sl_api_slub_world *w, uint32_t *out)
{
    if (!w || !out)
        return SL_EINVAL;
    sl_slub_topology t;
    sl_slub_topology_get(w->cache, &t);
    out[0] = t.nr_nodes;
    out[1] = t.mem_nodes;
    out[2] = t.barn_nodes;
    out[3] = t.online_cpus;
    out[4] = t.remote_node_defrag_ratio;
    for (unsigned c = 0; c < SL_SLUB_MAX_CPUS; c++) {
        out[5 + c] = t.cpu_node[c];
        out[5 + SL_SLUB_MAX_CPUS + c] = t.cpu_mem_node[c];
        out[5 + 2 * SL_SLUB_MAX_CPUS + c] = t.cpu_barn_node[c];
    }
    return SL_OK;
}

/*
 * Node nid's state (every CPU quiet) into out[NODE_STATE_WORDS]: has memory,
 * has a barn, nr_partial, nr_slabs, total_objects, free objects on its
 * partial slabs, barn full sheaves, barn empty sheaves; and the pfns of its
 * partial slabs, head first, into pfns[0 .. cap-1].  Returns the number of
 * partial slabs (more than cap: only cap written), or an error.
 */
enum { NODE_STATE_WORDS = 8 };
SL_EXPORT int sl_api_slub_node_state(sl_api_slub_world *w, uint32_t nid, uint32_t *out, uint32_t *pfns, uint32_t cap)
{
    int rc = w && out ? claim_all(w) : SL_EINVAL;
    if (rc != SL_OK)
        return rc;
    sl_slub_node_info ni;
    sl_slub_barn_info barn;
    if (!sl_slub_node_info_node(w->cache, nid, &ni) || !sl_slub_barn_info_get(w->cache, nid, &barn)) {
        release_all(w);
        return SL_EINVAL;
    }
    sl_slub_topology t;
    sl_slub_topology_get(w->cache, &t);
    const uint32_t v[NODE_STATE_WORDS] = {(t.mem_nodes >> nid) & 1u, barn.present,    ni.nr_partial, ni.nr_slabs,
                                          ni.total_objects,          ni.partial_free, barn.nr_full,  barn.nr_empty};
    memcpy(out, v, sizeof v);
    rc = (int)sl_slub_node_partial_pfns(w->cache, nid, pfns, pfns ? cap : 0);
    release_all(w);
    return rc;
}

/* bootstrap_cache_sheaves of a 7.0 cache created early (every CPU quiet). */
SL_EXPORT int sl_api_slub_bootstrap_sheaves(sl_api_slub_world *w)
{
    int rc = w ? claim_all(w) : SL_EINVAL;
    if (rc != SL_OK)
        return rc;
    rc = sl_slub_bootstrap_sheaves(w->cache);
    release_all(w);
    return rc;
}

/*
 * The prefill API on sheaf slots 0..SL_SCHED_SHEAF_SLOTS-1 (shared with
 * `run`'s scripts).  Each call needs every CPU quiet (a sheaf out may be
 * used from any CPU): SL_EBUSY otherwise.  prefill fills an empty slot
 * (SL_EBUSY if it holds a sheaf); return empties it.
 */
static int slot_op(sl_api_slub_world *w, uint32_t cpu, uint32_t slot, int kind, uint32_t size, sl_slub_gfp gfp)
{
    if (!w || slot >= SL_SCHED_SHEAF_SLOTS || cpu >= w->ncpus)
        return SL_EINVAL;
    int rc = claim_all(w);
    if (rc != SL_OK)
        return rc;
    sl_slub_sheaf **s = &w->sheaf_slots[slot];
    void *o = NULL;
    switch (kind) {
    case SL_SCHED_PREFILL:
        rc = *s ? SL_EBUSY : sl_slub_prefill_sheaf_gfp(w->cache, cpu, gfp, size, s);
        break;
    case SL_SCHED_REFILL_SHEAF:
        rc = sl_slub_refill_sheaf_gfp(w->cache, cpu, gfp, s, size);
        break;
    case SL_SCHED_ALLOC_FROM_SHEAF:
        rc = sl_slub_alloc_from_sheaf(w->cache, cpu, *s, &o);
        put_ref(w, w->scratch[cpu], o);
        break;
    default:
        if ((rc = sl_slub_return_sheaf(w->cache, cpu, *s)) == SL_OK)
            *s = NULL;
    }
    release_all(w);
    return rc;
}

SL_EXPORT int sl_api_slub_prefill_sheaf(sl_api_slub_world *w, uint32_t cpu, uint32_t slot, uint32_t size)
{
    return slot_op(w, cpu, slot, SL_SCHED_PREFILL, size, SL_SLUB_GFP_KERNEL);
}
SL_EXPORT int sl_api_slub_refill_sheaf(sl_api_slub_world *w, uint32_t cpu, uint32_t slot, uint32_t size)
{
    return slot_op(w, cpu, slot, SL_SCHED_REFILL_SHEAF, size, SL_SLUB_GFP_KERNEL);
}
/* The same in context gfp (sl_slub_gfp: 0 GFP_KERNEL, 1 GFP_ATOMIC, 2 GFP_NOWAIT; another is SL_EINVAL). */
SL_EXPORT int sl_api_slub_prefill_sheaf_gfp(sl_api_slub_world *w, uint32_t cpu, uint32_t slot, uint32_t gfp,
                                            uint32_t size)
{
    return slot_op(w, cpu, slot, SL_SCHED_PREFILL, size, (sl_slub_gfp)gfp);
}
SL_EXPORT int sl_api_slub_refill_sheaf_gfp(sl_api_slub_world *w, uint32_t cpu, uint32_t slot, uint32_t gfp,
                                           uint32_t size)
{
    return slot_op(w, cpu, slot, SL_SCHED_REFILL_SHEAF, size, (sl_slub_gfp)gfp);
}
/* The object's pair goes to the CPU's scratch[0..1] (NONE, NONE when the sheaf is empty). */
SL_EXPORT int sl_api_slub_alloc_from_sheaf(sl_api_slub_world *w, uint32_t cpu, uint32_t slot)
{
    return slot_op(w, cpu, slot, SL_SCHED_ALLOC_FROM_SHEAF, 0, SL_SLUB_GFP_KERNEL);
}
SL_EXPORT int sl_api_slub_return_sheaf(sl_api_slub_world *w, uint32_t cpu, uint32_t slot)
{
    return slot_op(w, cpu, slot, SL_SCHED_RETURN_SHEAF, 0, SL_SLUB_GFP_KERNEL);
}
/* Objects in the sheaf of `slot`, or -1 for an empty slot. */
SL_EXPORT int sl_api_slub_sheaf_size(sl_api_slub_world *w, uint32_t slot)
{
    if (!w || slot >= SL_SCHED_SHEAF_SLOTS || !w->sheaf_slots[slot])
        return -1;
    return (int)sl_slub_sheaf_size(w->sheaf_slots[slot]);
}

/* out[6]: capacity, barn full, barn empty, sheaves, objects held, objects waiting for RCU (CPUs quiet). */
SL_EXPORT int sl_api_slub_sheaves_info(sl_api_slub_world *w, uint32_t *out)
{
    int rc = w && out ? claim_all(w) : SL_EINVAL;
    if (rc != SL_OK)
        return rc;
    sl_slub_sheaves_info info;
    sl_slub_sheaves_info_get(w->cache, &info);
    const uint32_t v[6] = {info.capacity, info.barn_full, info.barn_empty,
                           info.sheaves,  info.objects,   info.rcu_waiting};
    memcpy(out, v, sizeof v);
    release_all(w);
    return SL_OK;
}

/* The counters of kernel `version` (major * 256 + minor, 0: 6.17): how many, and each's name and counter. */
SL_EXPORT int sl_api_slub_kstat_count(uint32_t version)
{
    const sl_slub_kstat *t;
    return version_ok(version) ? (int)sl_slub_kstats(version ? version_of(version) : SL_SLUB_KVERSION_DEFAULT, &t)
                               : SL_EINVAL;
}
SL_EXPORT const char *sl_api_slub_kstat_name(uint32_t version, uint32_t i)
{
    const sl_slub_kstat *t;
    int n = sl_api_slub_kstat_count(version);
    return n > 0 && i < (uint32_t)n && sl_slub_kstats(version ? version_of(version) : SL_SLUB_KVERSION_DEFAULT, &t)
               ? t[i].name
               : NULL;
}
/* The snapshot counter index (sl_slub_stat) of the version's counter i, or SL_EINVAL. */
SL_EXPORT int sl_api_slub_kstat_stat(uint32_t version, uint32_t i)
{
    const sl_slub_kstat *t;
    int n = sl_api_slub_kstat_count(version);
    if (n < 0 || i >= (uint32_t)n)
        return SL_EINVAL;
    sl_slub_kstats(version ? version_of(version) : SL_SLUB_KVERSION_DEFAULT, &t);
    return t[i].stat;
}

/* calculate_sheaf_capacity of kernel `version` (7.0), or the opt-in request (6.18); 0 before. */
SL_EXPORT int sl_api_slub_sheaf_capacity(uint32_t version, uint32_t size, uint32_t flags, uint32_t requested)
{
    if (!version_ok(version))
        return SL_EINVAL;
    return (int)sl_slub_sheaf_capacity(version ? version_of(version) : SL_SLUB_KVERSION_DEFAULT, size, flags,
                                       requested);
}

/* ---- free-running workloads ------------------------------------------ */

enum { WL_LOCAL = 0, WL_PRODUCER_CONSUMER = 1, WL_BURSTS = 2 };

static bool ring_put(wl_ring *r, void *p)
{
    unsigned h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h - atomic_load_explicit(&r->tail, memory_order_acquire) == WL_RING)
        return false;
    r->slot[h % WL_RING] = p;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return true;
}

static void *ring_get(wl_ring *r)
{
    unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (t == atomic_load_explicit(&r->head, memory_order_acquire))
        return NULL;
    void *p = r->slot[t % WL_RING];
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return p;
}

/* Frees one object sent to `cpu` by any CPU; false if none is waiting. */
static bool free_incoming(sl_api_slub_world *w, unsigned cpu)
{
    for (unsigned from = 0; from < w->ncpus; from++) {
        void *p = ring_get(&w->rings[from * w->ncpus + cpu]);
        if (p) {
            sl_slub_free(w->cache, cpu, p);
            return true;
        }
    }
    return false;
}

/*
 * Runs `nops` operations of workload `kind` as CPU cpu on the calling worker
 * (0 local churn: alloc/free of its own objects; 1 producer/consumer: objects
 * go to the next CPU, which frees them remotely; 2 bursts: up to 64 allocs
 * then as many frees).  Returns the operations done (fewer after
 * sl_api_slub_workload_stop), or an error.  Objects it still holds stay
 * held for its next run; sl_api_slub_workload_drain frees them.
 */
static int run_workload(sl_api_slub_world *w, uint32_t cpu, uint32_t kind, uint32_t nops, uint32_t seed)
{
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 8) ^ cpu;
    void **held = w->held[cpu];
    unsigned *nheld = &w->nheld[cpu];
    unsigned peer = (cpu + 1) % w->ncpus;
    uint32_t done = 0;
    bool filling = true;
    while (done < nops && !atomic_load_explicit(&w->stop, memory_order_relaxed)) {
        rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
        unsigned r = (unsigned)((rng * 0x2545F4914F6CDD1Dull) >> 40) % 100;
        if (kind == WL_PRODUCER_CONSUMER && r < 50 && free_incoming(w, cpu)) {
            done++;
            continue;
        }
        if (kind == WL_BURSTS && (filling ? *nheld >= 64 : *nheld == 0))
            filling = !filling;
        bool alloc = kind == WL_BURSTS ? filling : (r % 2 == 0 || *nheld == 0);
        if (alloc && *nheld < WL_HELD) {
            void *p;
            if (sl_slub_alloc(w->cache, cpu, &p) != SL_OK) {
                filling = false;
                if (!*nheld && !free_incoming(w, cpu))
                    break; /* out of memory with nothing to give back */
                continue;
            }
            done++;
            if (kind == WL_PRODUCER_CONSUMER && w->ncpus > 1 && ring_put(&w->rings[cpu * w->ncpus + peer], p))
                continue;
            held[(*nheld)++] = p;
        } else if (*nheld) {
            sl_slub_free(w->cache, cpu, held[--*nheld]);
            done++;
        }
    }
    return (int)done;
}

SL_EXPORT int sl_api_slub_workload(sl_api_slub_world *w, uint32_t cpu, uint32_t kind, uint32_t nops, uint32_t seed)
{
    if (kind > WL_BURSTS)
        return SL_EINVAL;
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    rc = run_workload(w, cpu, kind, nops, seed);
    sl_api_slub_cpu_release(w, cpu);
    return rc;
}

SL_EXPORT void sl_api_slub_workload_stop(sl_api_slub_world *w, uint32_t stop)
{
    if (w)
        atomic_store(&w->stop, stop != 0);
}

/* Frees everything CPU cpu holds or was sent (call as that CPU, after the others stopped sending). */
SL_EXPORT int sl_api_slub_workload_drain(sl_api_slub_world *w, uint32_t cpu)
{
    int rc = sl_api_slub_cpu_claim(w, cpu);
    if (rc != SL_OK)
        return rc;
    int n = 0;
    while (w->nheld[cpu]) {
        sl_slub_free(w->cache, cpu, w->held[cpu][--w->nheld[cpu]]);
        n++;
    }
    while (free_incoming(w, cpu))
        n++;
    sl_api_slub_cpu_release(w, cpu);
    return n;
}
