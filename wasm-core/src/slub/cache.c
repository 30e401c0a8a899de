/*
 * cache.c - creating and destroying a SLUB cache, making and discarding
 * slabs (allocate_slab with its order fallback, shuffle_freelist,
 * discard_slab), the node partial list (add_partial, remove_partial), the
 * debug processing run around every allocation and free, events and
 * counters.
 *
 * See slub_internal.h for which lock or atomic protects which field.
 *
 * Debug processing follows 6.8+ (checks) and 6.12+ (the disabled slab).
 * Poison and red zones are written whenever POISON or RED_ZONE is set
 * (init_object, as setup_object_debug / alloc_debug_processing /
 * free_debug_processing write them) but checked only with
 * CONSISTENCY_CHECKS (check_object runs from alloc_consistency_checks and
 * free_consistency_checks only).  Poison is written only when the cache has
 * __OBJECT_POISON: POISON without TYPESAFE_BY_RCU or a constructor
 * (calculate_sizes), whose objects their users may touch while free.
 * On allocation the check runs in the locked single-object path
 * (alloc.c, sli_slub_alloc_debug); a failure disables the slab and the
 * allocation goes on with the next one.  On free the checks run before the
 * free (sli_slub_free_hook): double-free detection by the object's tracked
 * state (the kernel's on_freelist), red zones; a failure leaves the object
 * out of every freelist (quarantined), as the kernel's "Object not freed".
 */
#include "sheaves.h"

#include <stdlib.h>
#include <string.h>

#define POISON_FREE 0x6b
#define POISON_END 0xa5
#define RED_INACTIVE 0xbb
#define RED_ACTIVE 0xcc

static const char *const stat_names[] = {
#define SL_SLUB_STAT_NAME(n, name) #name,
    SL_SLUB_STATS(SL_SLUB_STAT_NAME)
#undef SL_SLUB_STAT_NAME
};

const char *sl_slub_stat_name(unsigned stat) { return stat < SL_SLUB_NR_STATS ? stat_names[stat] : NULL; }

/* The kernels' enum stat_item, era by era (eras.h); sysfs names from STAT_ATTR. */
#define K(n, name) {#name, SL_SLUB_##n},
static const sl_slub_kstat kstats_cpu_slab[] = {SL_SLUB_KERNEL_STATS(K)}; /* 4.3 to 6.17 */
#undef K
/* 6.18, "slab: add opt-in caching layer of percpu sheaves" and "slab: sheaf prefilling for guaranteed allocations". */
#define K(n, name) {#name, SL_SLUB_##n},
static const sl_slub_kstat kstats_sheaves_opt_in[] = {
    K(ALLOC_PCS, alloc_cpu_sheaf) K(ALLOC_FASTPATH, alloc_fastpath) K(ALLOC_SLOWPATH, alloc_slowpath)
        K(FREE_PCS, free_cpu_sheaf) K(FREE_RCU_SHEAF, free_rcu_sheaf) K(FREE_RCU_SHEAF_FAIL, free_rcu_sheaf_fail)
            K(FREE_FASTPATH, free_fastpath) K(FREE_SLOWPATH, free_slowpath) K(FREE_FROZEN, free_frozen)
                K(FREE_ADD_PARTIAL, free_add_partial) K(FREE_REMOVE_PARTIAL, free_remove_partial) K(
                    ALLOC_FROM_PARTIAL, alloc_from_partial) K(ALLOC_SLAB, alloc_slab) K(ALLOC_REFILL, alloc_refill)
                    K(ALLOC_NODE_MISMATCH, alloc_node_mismatch) K(FREE_SLAB, free_slab) K(CPUSLAB_FLUSH, cpuslab_flush)
                        K(DEACTIVATE_FULL, deactivate_full) K(DEACTIVATE_EMPTY, deactivate_empty) K(
                            DEACTIVATE_TO_HEAD, deactivate_to_head) K(DEACTIVATE_TO_TAIL, deactivate_to_tail)
                            K(DEACTIVATE_REMOTE_FREES, deactivate_remote_frees) K(DEACTIVATE_BYPASS, deactivate_bypass)
                                K(ORDER_FALLBACK, order_fallback) K(CMPXCHG_DOUBLE_CPU_FAIL, cmpxchg_double_cpu_fail)
                                    K(CMPXCHG_DOUBLE_FAIL, cmpxchg_double_fail) K(CPU_PARTIAL_ALLOC, cpu_partial_alloc)
                                        K(CPU_PARTIAL_FREE, cpu_partial_free) K(CPU_PARTIAL_NODE, cpu_partial_node)
                                            K(CPU_PARTIAL_DRAIN, cpu_partial_drain) K(SHEAF_FLUSH, sheaf_flush)
                                                K(SHEAF_REFILL, sheaf_refill) K(SHEAF_ALLOC, sheaf_alloc)
                                                    K(SHEAF_FREE, sheaf_free) K(BARN_GET, barn_get)
                                                        K(BARN_GET_FAIL, barn_get_fail) K(BARN_PUT, barn_put)
                                                            K(BARN_PUT_FAIL, barn_put_fail) K(SHEAF_PREFILL_FAST,
                                                                                              sheaf_prefill_fast)
                                                                K(SHEAF_PREFILL_SLOW, sheaf_prefill_slow)
                                                                    K(SHEAF_PREFILL_OVERSIZE, sheaf_prefill_oversize)
                                                                        K(SHEAF_RETURN_FAST, sheaf_return_fast)
                                                                            K(SHEAF_RETURN_SLOW, sheaf_return_slow)};
#undef K
/*
 * 7.0 ("slab: remove the do_slab_free() fastpath" and the rest of
 * "slab-for-7.0"): the CPU-slab counters gone, alloc_fastpath and
 * free_fastpath counting the sheaves.
 */
static const sl_slub_kstat kstats_sheaves[] = {
    {"alloc_fastpath", SL_SLUB_ALLOC_PCS},
    {"alloc_slowpath", SL_SLUB_ALLOC_SLOWPATH},
    {"free_rcu_sheaf", SL_SLUB_FREE_RCU_SHEAF},
    {"free_rcu_sheaf_fail", SL_SLUB_FREE_RCU_SHEAF_FAIL},
    {"free_fastpath", SL_SLUB_FREE_PCS},
    {"free_slowpath", SL_SLUB_FREE_SLOWPATH},
    {"free_add_partial", SL_SLUB_FREE_ADD_PARTIAL},
    {"free_remove_partial", SL_SLUB_FREE_REMOVE_PARTIAL},
    {"alloc_slab", SL_SLUB_ALLOC_SLAB},
    {"alloc_node_mismatch", SL_SLUB_ALLOC_NODE_MISMATCH},
    {"free_slab", SL_SLUB_FREE_SLAB},
    {"order_fallback", SL_SLUB_ORDER_FALLBACK},
    {"cmpxchg_double_fail", SL_SLUB_CMPXCHG_DOUBLE_FAIL},
    {"sheaf_flush", SL_SLUB_SHEAF_FLUSH},
    {"sheaf_refill", SL_SLUB_SHEAF_REFILL},
    {"sheaf_alloc", SL_SLUB_SHEAF_ALLOC},
    {"sheaf_free", SL_SLUB_SHEAF_FREE},
    {"barn_get", SL_SLUB_BARN_GET},
    {"barn_get_fail", SL_SLUB_BARN_GET_FAIL},
    {"barn_put", SL_SLUB_BARN_PUT},
    {"barn_put_fail", SL_SLUB_BARN_PUT_FAIL},
    {"sheaf_prefill_fast", SL_SLUB_SHEAF_PREFILL_FAST},
    {"sheaf_prefill_slow", SL_SLUB_SHEAF_PREFILL_SLOW},
    {"sheaf_prefill_oversize", SL_SLUB_SHEAF_PREFILL_OVERSIZE},
    {"sheaf_return_fast", SL_SLUB_SHEAF_RETURN_FAST},
    {"sheaf_return_slow", SL_SLUB_SHEAF_RETURN_SLOW},
};

unsigned sl_slub_kstats(sl_slub_kversion v, const sl_slub_kstat **table)
{
    sl_slub_rules r;
    sl_slub_rules_for(v, &r);
    switch (r.era) {
    case SL_SLUB_ERA_SHEAVES:
        *table = kstats_sheaves;
        return sizeof kstats_sheaves / sizeof kstats_sheaves[0];
    case SL_SLUB_ERA_OPT_IN_SHEAVES:
        *table = kstats_sheaves_opt_in;
        return sizeof kstats_sheaves_opt_in / sizeof kstats_sheaves_opt_in[0];
    default:
        *table = kstats_cpu_slab;
        return sizeof kstats_cpu_slab / sizeof kstats_cpu_slab[0];
    }
}

#if !defined(SLABLAB_BENCH)
void sli_slub_event(const sli_act *a, unsigned kind, const sli_slub_slab *slab, const void *obj, uint32_t a0,
                    uint32_t a1, uint32_t a2)
{
    sl_trace *tr = a->s->trace;
    if (!tr || !tr->enabled)
        return;
    sl_event ev = {.op = a->op,
                   .cpu = a->cpu,
                   .kind = (uint16_t)kind,
                   .cache = a->s->id,
                   .flags = 0,
                   .slab = slab ? sli_slab_pfn(a->s, slab) : SL_NONE32,
                   .obj = slab && obj ? sli_obj_index(a->s, slab, obj) : SL_NONE32,
                   .arg0 = a0,
                   .arg1 = a1,
                   .arg2 = a2};
    sl_trace_emit(tr, &ev);
}
#endif

#if !defined(SLABLAB_BENCH)
void sli_slub_op_event(const sli_act *a, unsigned kind, unsigned opcode, int32_t arg1, const void *obj)
{
    sl_trace *tr = a->s->trace;
    if (tr && tr->enabled) {
        uint32_t pfn = SL_NONE32, idx = SL_NONE32;
        if (obj && !sl_slub_object_index(a->s, obj, &pfn, &idx))
            pfn = idx = SL_NONE32;
        sl_event ev = {.op = a->op,
                       .cpu = a->cpu,
                       .kind = (uint16_t)kind,
                       .cache = a->s->id,
                       .slab = pfn,
                       .obj = idx,
                       .arg0 = opcode,
                       .arg1 = (uint32_t)arg1};
        sl_trace_emit(tr, &ev);
    }
}
#endif

void sli_slub_error(sli_act *a, int err, const sli_slub_slab *slab, const void *obj)
{
    sli_stat(a, SL_SLUB_ERRORS, 1);
#if !defined(SLABLAB_BENCH)
    sl_trace *tr = a->s->trace;
    if (tr && tr->enabled) {
        sl_event ev = {.op = a->op,
                       .cpu = a->cpu,
                       .kind = SL_EV_ERROR,
                       .cache = a->s->id,
                       .slab = slab ? sli_slab_pfn(a->s, slab) : SL_NONE32,
                       .obj = slab && obj ? sli_obj_index(a->s, slab, obj) : SL_NONE32,
                       .arg0 = (uint32_t)err};
        sl_trace_emit(tr, &ev);
    }
#else
    (void)err, (void)slab, (void)obj;
#endif
}

static uint64_t xorshift(uint64_t *st)
{
    uint64_t x = *st;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *st = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/*
 * sl_slub_alloc / sl_slub_free try a leaf fast path first (alloc.c, free.c):
 * only for caches without debug hooks or hardened free pointers, and, except
 * in benchmark builds (where tracing is compiled out), without a trace, since
 * the leaf emits no events, numbers no operation and has no preemption point.
 * A cache with working sheaves takes the sheaf leaf; a 7.0 cache without
 * (the bootstrap sheaf, a debug cache) the complete operation.
 */
void sli_slub_set_leaf(sl_slub_cache *s)
{
    bool leaf = !s->debug_hooks && !(s->flags & SL_SLUB_FREELIST_HARDENED);
#if !defined(SLABLAB_BENCH)
    leaf = leaf && !s->trace;
#endif
    if (!leaf)
        s->leaf = SLI_LEAF_NONE;
    else if (s->sheaves)
        s->leaf = sli_sheaves_active(s->sheaves) ? SLI_LEAF_SHEAF : SLI_LEAF_NONE;
    else
        s->leaf = s->rules.cpu_slab ? (uint8_t)(1 + s->fastpath) : SLI_LEAF_NONE;
    s->alloc_fn = sli_slub_alloc_fn(s->leaf);
    /* With more than one node a free must test slab_nid first: the complete operation does. */
    s->free_fn = sli_slub_free_fn(s->leaf == SLI_LEAF_SHEAF && s->nr_nodes > 1 ? SLI_LEAF_NONE : s->leaf);
}

/* node_distance: 10 to the node itself, 10 more per step of node number (the model's line of nodes). */
static unsigned node_distance(unsigned a, unsigned b) { return 10 + 10 * (a > b ? a - b : b - a); }

/*
 * The topology of cfg (validated): each CPU's node, the nodes with memory,
 * each node's zonelist (its memory nodes nearest first, the lower number
 * first among equals) and each CPU's numa_mem_id (its zonelist's first).
 * Returns 0 or SL_EINVAL.
 */
static int set_topology(sl_slub_cache *s, const sl_slub_config *cfg, unsigned ncpus)
{
    unsigned nr = cfg->nr_nodes ? cfg->nr_nodes : 1;
    if (nr > SL_SLUB_MAX_NODES || (cfg->memoryless >> nr) || (cfg->offline_cpus >> ncpus))
        return SL_EINVAL;
    s->nr_nodes = (uint8_t)nr;
    s->mem_nodes = (uint8_t)(((1u << nr) - 1) & ~cfg->memoryless);
    if (!s->mem_nodes)
        return SL_EINVAL; /* some node must have memory */
    for (unsigned n = 0; n < nr; n++) {
        unsigned k = 0;
        for (unsigned d = 10; d < 10 + 10 * SL_SLUB_MAX_NODES; d += 10)
            for (unsigned m = 0; m < nr; m++)
                if (sli_node_has_mem(s, m) && node_distance(n, m) == d)
                    s->zonelist[n][k++] = (uint8_t)m;
        s->nr_mem_nodes = (uint8_t)k;
    }
    for (unsigned c = 0; c < ncpus; c++) {
        if (cfg->cpu_node[c] >= nr)
            return SL_EINVAL;
        s->cpu_nid[c] = cfg->cpu_node[c];
        s->cpu_mem_nid[c] = s->zonelist[cfg->cpu_node[c]][0];
        s->cpu[c].mem_nid = s->cpu_mem_nid[c];
    }
    s->online_cpus = (uint8_t)(((1u << ncpus) - 1) & ~cfg->offline_cpus);
    s->remote_node_defrag_ratio = 1000;
    return SL_OK;
}

bool sli_remote_defrag_allowed(sli_act *a)
{
    uint64_t cycles = xorshift(&a->c->defrag_rng);
    return a->s->remote_node_defrag_ratio && cycles % 1024 <= a->s->remote_node_defrag_ratio;
}

void sl_slub_topology_get(const sl_slub_cache *s, sl_slub_topology *out)
{
    memset(out, 0, sizeof *out);
    out->nr_nodes = s->nr_nodes;
    out->mem_nodes = s->mem_nodes;
    out->barn_nodes = s->sheaves ? s->sheaves->barn_nodes : 0;
    out->online_cpus = s->online_cpus;
    for (unsigned c = 0; c < s->ncpus; c++) {
        out->cpu_node[c] = s->cpu_nid[c];
        out->cpu_mem_node[c] = s->cpu_mem_nid[c];
        out->cpu_barn_node[c] = s->sheaves ? s->sheaves->barn_nid[c] : s->cpu_mem_nid[c];
    }
    out->remote_node_defrag_ratio = s->remote_node_defrag_ratio;
}

int sl_slub_set_remote_node_defrag_ratio(sl_slub_cache *s, unsigned percent)
{
    if (!s || percent > 100)
        return SL_EINVAL;
    s->remote_node_defrag_ratio = (uint16_t)(percent * 10);
    return SL_OK;
}

/* TID_STEP: roundup_pow_of_two(CONFIG_NR_CPUS) with CONFIG_PREEMPTION, else 1; 0 for a bad kernel. */
static uintptr_t tid_step(const sl_slub_kernel *k, unsigned ncpus)
{
    if (k->no_preempt)
        return 1;
    unsigned nr = k->nr_cpus ? k->nr_cpus : ncpus;
    if (nr < ncpus || nr > 8192)
        return 0;
    uintptr_t step = 1;
    while (step < nr)
        step <<= 1;
    return step;
}

int sl_slub_cache_create(sl_page_zone *zone, sl_trace *trace, unsigned ncpus, const sl_slub_config *cfg,
                         sl_slub_cache **out)
{
    *out = NULL;
    if (!zone || !cfg || ncpus == 0 || ncpus > SL_SLUB_MAX_CPUS || cfg->fastpath >= SL_SLUB_NR_FASTPATHS ||
        cfg->bulk_free > SL_SLUB_BULK_GENERIC || (trace && trace->ncpus < ncpus) || !tid_step(&cfg->kernel, ncpus))
        return SL_EINVAL;
    sl_slub_rules rules;
    if (!sli_slub_kernel_rules(&cfg->kernel, &rules) ||
        /* 7.0 has no CPU-slab fast path: only the plain kernel (cmpxchg) and PREEMPT_RT (rt) */
        (!rules.cpu_slab && cfg->fastpath != SL_SLUB_FP_CMPXCHG && cfg->fastpath != SL_SLUB_FP_RT) ||
        (cfg->early_boot && rules.era != SL_SLUB_ERA_SHEAVES))
        return SL_EINVAL;
    sl_slub_geometry g;
    int rc = sl_slub_calculate_geometry(cfg->object_size, cfg->align, cfg->flags, ncpus, &cfg->kernel, &g);
    if (rc != SL_OK)
        return rc;
    /* A slab must hold at least one object and its objects must be addressable in 16 bits. */
    if (g.order > SL_PAGE_MAX_ORDER || g.objects > SLI_INUSE_MASK || g.object_size < sizeof(uintptr_t))
        return SL_EINVAL;
    sl_slub_cache *s = sl_os_alloc_aligned(sizeof *s, SL_PAGE_SIZE); /* see SLI_CPU_LEAD */
    if (!s)
        return SL_ENOMEM;
    memset(s, 0, sizeof *s);
    s->g = g;
    s->id = cfg->id;
    s->fastpath = cfg->fastpath;
    s->bulk_free = cfg->bulk_free;
    s->flags = cfg->flags;
    s->ncpus = ncpus;
    s->rules = rules;
    s->recip = sli_reciprocal_value(g.size);
    s->info_stride = (SL_PAGE_SIZE + g.size - 1) / g.size;
    s->size_divc = sli_divisible_c(g.size);
    s->zone = zone;
    s->trace = trace;
    s->tid_step = tid_step(&cfg->kernel, ncpus);
    s->object_poison = (cfg->flags & SL_SLUB_POISON) && !(cfg->flags & (SL_SLUB_TYPESAFE_BY_RCU | SL_SLUB_CTOR));
    if (set_topology(s, cfg, ncpus) != SL_OK) {
        sl_os_free(s);
        return SL_EINVAL;
    }
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ cfg->seed;
    s->random = (uintptr_t)xorshift(&rng);
    if (cfg->flags & SL_SLUB_FREELIST_RANDOM) {
        /* init_cache_random_seq: a Fisher-Yates shuffle of the object indices. */
        s->random_seq = malloc(sizeof(uint32_t) * g.objects);
        if (!s->random_seq) {
            sl_os_free(s);
            return SL_ENOMEM;
        }
        for (uint32_t i = 0; i < g.objects; i++)
            s->random_seq[i] = i;
        for (uint32_t i = g.objects - 1; i > 0; i--) {
            uint32_t j = (uint32_t)(xorshift(&rng) % (i + 1)), t = s->random_seq[i];
            s->random_seq[i] = s->random_seq[j];
            s->random_seq[j] = t;
        }
    }
    if (cfg->track || (cfg->flags & SL_SLUB_CONSISTENCY_CHECKS)) {
        s->info_len = (size_t)zone->npages * s->info_stride;
        s->info = calloc(s->info_len ? s->info_len : 1, sizeof(sli_slub_objinfo));
        if (!s->info) {
            free(s->random_seq);
            sl_os_free(s);
            return SL_ENOMEM;
        }
    }
    s->debug_hooks = s->info || (cfg->flags & (SL_SLUB_POISON | SL_SLUB_RED_ZONE));
    for (unsigned c = 0; c < ncpus; c++) {
        s->cpu[c].fl_tid = (sl_dword){0, c}; /* init_tid(cpu) */
        s->cpu[c].rng = rng ^ (0x100000001B3ull * (c + 1));
        s->cpu[c].defrag_rng = (rng ^ 0xD6E8FEB86659FD93ull) * (c + 1) | 1; /* xorshift: never 0 */
    }
    rc = sli_slub_sheaves_create(s, cfg);
    if (rc != SL_OK) {
        free(s->info);
        free(s->random_seq);
        sl_os_free(s);
        return rc;
    }
    sli_slub_set_leaf(s);
    *out = s;
    return SL_OK;
}

const sl_slub_geometry *sl_slub_cache_geometry(const sl_slub_cache *s) { return &s->g; }
const sl_slub_rules *sl_slub_cache_rules(const sl_slub_cache *s) { return &s->rules; }
unsigned sl_slub_cache_ncpus(const sl_slub_cache *s) { return s->ncpus; }
unsigned long sl_slub_cache_tid_step(const sl_slub_cache *s) { return (unsigned long)s->tid_step; }
void sl_slub_set_fastpath(sl_slub_cache *s, sl_slub_fastpath fp)
{
    if (fp < SL_SLUB_NR_FASTPATHS && s->rules.cpu_slab) {
        s->fastpath = (uint8_t)fp;
        sli_slub_set_leaf(s);
    }
}
void sl_slub_set_bulk_free(sl_slub_cache *s, sl_slub_bulk_free form)
{
    if (form <= SL_SLUB_BULK_GENERIC)
        s->bulk_free = (uint8_t)form;
}

uint64_t sl_slub_stat_get(const sl_slub_cache *s, int cpu, unsigned stat)
{
    if (!s || stat >= SL_SLUB_NR_STATS || cpu >= (int)s->ncpus)
        return 0;
    if (cpu >= 0) /* the replay asks after every event: no loop for one CPU */
        return __atomic_load_n(&s->cpu[cpu].stat[stat], __ATOMIC_RELAXED);
    uint64_t sum = 0;
    for (unsigned c = 0; c < s->ncpus; c++)
        sum += __atomic_load_n(&s->cpu[c].stat[stat], __ATOMIC_RELAXED);
    return sum;
}

uint32_t sl_slub_nr_partial(const sl_slub_cache *s)
{
    uint32_t sum = 0;
    for (unsigned nid = 0; nid < s->nr_nodes; nid++)
        sum += __atomic_load_n(&sli_get_node(s, nid)->nr_partial, __ATOMIC_RELAXED);
    return sum;
}

uint32_t sl_slub_nr_slabs(const sl_slub_cache *s) { return sli_nr_slabs_all(s); }

bool sl_slub_node_info_node(sl_slub_cache *s, unsigned nid, sl_slub_node_info *out)
{
    memset(out, 0, sizeof *out);
    if (!s || nid >= s->nr_nodes)
        return false;
    sli_slub_node *n = sli_get_node(s, nid);
    out->nr_partial = __atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED);
    out->nr_slabs = atomic_load_explicit(&n->nr_slabs, memory_order_relaxed);
    out->total_objects = atomic_load_explicit(&n->total_objects, memory_order_relaxed);
    sl_spin_lock(&n->list_lock); /* count_partial(n, count_free) */
    for (sli_slub_slab *p = n->partial_head; p; p = p->lnext) {
        uintptr_t c = sl_dw_read(&p->fc).hi;
        out->partial_free += sli_objects(c) - sli_inuse(c);
    }
    sl_spin_unlock(&n->list_lock);
    return true;
}

uint32_t sl_slub_node_partial_pfns(const sl_slub_cache *s, unsigned nid, uint32_t *pfns, uint32_t cap)
{
    if (!s || nid >= s->nr_nodes)
        return 0;
    uint32_t n = 0;
    for (const sli_slub_slab *p = sli_get_node(s, nid)->partial_head; p && n < s->zone->npages; p = p->lnext, n++)
        if (n < cap)
            pfns[n] = sli_slab_pfn(s, p);
    return n;
}

void sl_slub_node_info_get(sl_slub_cache *s, sl_slub_node_info *out)
{
    sl_slub_node_info sum = {0}, one;
    for (unsigned nid = 0; nid < s->nr_nodes; nid++) { /* for_each_kmem_cache_node */
        sl_slub_node_info_node(s, nid, &one);
        sum.nr_partial += one.nr_partial;
        sum.nr_slabs += one.nr_slabs;
        sum.total_objects += one.total_objects;
        sum.partial_free += one.partial_free;
    }
    *out = sum;
    for (unsigned k = 0; k < s->ncpus; k++) { /* show_slab_objects(SO_CPU) */
        const sli_slub_cpu *c = &s->cpu[k];
        out->cpu_slabs += (c->slab != NULL) + (sli_is_our_slab(s, c->partial) ? c->partial->slabs : 0);
    }
}

/* ---- slabs ----------------------------------------------------------- */

static void set_redzones(const sl_slub_cache *s, unsigned char *obj, int red)
{
    memset(obj - s->g.red_left_pad, red, s->g.red_left_pad);
    memset(obj + s->g.object_size, red, s->g.inuse - s->g.object_size);
}

/*
 * init_object(): poison (a cache with __OBJECT_POISON) and red zones set to
 * `red` (inactive for a free object, active for an allocated one).  The
 * kernel writes the poison on allocation too; the user then overwrites it.
 */
static void init_object(const sl_slub_cache *s, unsigned char *obj, int red)
{
    if (s->object_poison) {
        memset(obj, POISON_FREE, s->g.object_size - 1);
        obj[s->g.object_size - 1] = POISON_END;
    }
    if (s->flags & SL_SLUB_RED_ZONE)
        set_redzones(s, obj, red);
}

/* next_freelist_entry: the shuffled sequence is the full slab's; a smaller slab skips indices past its end. */
static uint32_t next_shuffled(const sl_slub_cache *s, uint32_t *pos, uint32_t objects)
{
    uint32_t idx;
    do {
        idx = s->random_seq[*pos];
        *pos = *pos + 1 == s->g.objects ? 0 : *pos + 1;
    } while (idx >= objects);
    return idx;
}

/*
 * allocate_slab + shuffle_freelist: a new slab with every object on its
 * freelist, counters inuse 0, not frozen; nobody else can see it yet.  The
 * cache's order is tried first (the kernel's __GFP_NORETRY attempt); when
 * the zone has no such block, the fallback order s->min (ORDER_FALLBACK),
 * whose slab holds fewer objects.  Returns NULL when neither can be had.
 */
sli_slub_slab *sli_slub_new_slab(sli_act *a)
{
    sl_slub_cache *s = a->s;
    uint32_t order = s->g.order, n = s->g.objects;
    sl_page *pg = sl_page_alloc(s->zone, order, a->cpu);
    /* A retry at the same order cannot succeed: the model's page allocator does not reclaim. */
    if (!pg && s->g.fallback_order < order) {
        order = s->g.fallback_order;
        n = s->g.fallback_objects;
        pg = sl_page_alloc(s->zone, order, a->cpu);
        if (pg) {
            sli_stat(a, SL_SLUB_ORDER_FALLBACK, 1);
            SLI_EV(a, SLUB_ORDER_FALLBACK, SL_PAGE_PRIV(pg, sli_slub_slab), NULL, s->g.order, order, n);
        }
    }
    if (!pg)
        return NULL;
    sli_slub_slab *slab = SL_PAGE_PRIV(pg, sli_slub_slab);
    sl_store_relaxed(&slab->limit, n * s->g.size);
    if (s->object_poison || (s->flags & SL_SLUB_RED_ZONE))
        for (uint32_t i = 0; i < n; i++)
            init_object(s, sli_obj_at(s, slab, i), RED_INACTIVE);
    if (s->info)
        memset(sli_info(s, slab, 0), 0, sizeof(sli_slub_objinfo) * n);
    void *first;
    if (s->random_seq) {
        uint32_t pos = (uint32_t)(xorshift(&a->c->rng) % s->g.objects);
        first = sli_obj_at(s, slab, next_shuffled(s, &pos, n));
        void *cur = first;
        for (uint32_t k = 1; k < n; k++) {
            void *next = sli_obj_at(s, slab, next_shuffled(s, &pos, n));
            sli_set_fp(s, cur, next);
            cur = next;
        }
        sli_set_fp(s, cur, NULL);
    } else {
        first = sli_obj_at(s, slab, 0);
        for (uint32_t i = 0; i < n; i++)
            sli_set_fp(s, sli_obj_at(s, slab, i), i + 1 < n ? sli_obj_at(s, slab, i + 1) : NULL);
    }
    slab->fc = (sl_dword){(uintptr_t)first, sli_counters(0, n, 0)};
    slab->cpu = a->cpu;
    slab->nid = (uint8_t)sli_mem_nid(a); /* alloc_slab_page(..., numa_mem_id()): the CPU's memory node */
    atomic_fetch_add_explicit(&sli_slab_node(s, slab)->nr_slabs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&sli_slab_node(s, slab)->total_objects, n, memory_order_relaxed);
    __atomic_store_n(&slab->cache, s, __ATOMIC_RELEASE);
    return slab;
}

void sli_slub_discard_slab(sli_act *a, sli_slub_slab *slab)
{
    sl_slub_cache *s = a->s;
    SLI_EV(a, SLUB_DISCARD_SLAB, slab, NULL, sli_slab_order(slab), 0, 0);
    sli_slub_node *n = sli_slab_node(s, slab);
    atomic_fetch_sub_explicit(&n->nr_slabs, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&n->total_objects, sli_objects(slab->fc.hi), memory_order_relaxed);
    sl_store_relaxed(&slab->cache, NULL);
    sl_page_free(s->zone, sli_slab_page(slab), a->cpu);
}

bool sli_list_lock_ctx(sli_act *a, sli_slub_node *n, unsigned site)
{
    if (SL_LIKELY(sli_allow_spin(a))) {
        sli_list_lock(a, n);
        return true;
    }
    if (!sl_spin_trylock(&n->list_lock)) {
        SLI_EV(a, SLUB_TRYLOCK_BUSY, NULL, NULL, 0, site, 0);
        (void)site; /* benchmark builds have no events */
        return false;
    }
    sli_stat(a, SL_SLUB_MODEL_LIST_LOCK, 1);
    return true;
}

/* add_partial / remove_partial: the caller holds the node's list_lock. */
void sli_slub_add_partial(sli_act *a, sli_slub_slab *slab, bool tail)
{
    sli_slub_node *n = sli_slab_node(a->s, slab);
    slab->on_node_partial = 1;
    if (tail) {
        slab->lnext = NULL;
        slab->lprev = n->partial_tail;
        if (n->partial_tail)
            n->partial_tail->lnext = slab;
        else
            n->partial_head = slab;
        n->partial_tail = slab;
    } else {
        slab->lprev = NULL;
        slab->lnext = n->partial_head;
        if (n->partial_head)
            n->partial_head->lprev = slab;
        else
            n->partial_tail = slab;
        n->partial_head = slab;
    }
    sl_store_relaxed(&n->nr_partial, n->nr_partial + 1);
    SLI_EV(a, SLUB_NODE_PARTIAL_ADD, slab, NULL, tail, n->nr_partial, 0);
}

void sli_slub_remove_partial(sli_act *a, sli_slub_slab *slab)
{
    sli_slub_node *n = sli_slab_node(a->s, slab);
    if (slab->lprev)
        slab->lprev->lnext = slab->lnext;
    else
        n->partial_head = slab->lnext;
    if (slab->lnext)
        slab->lnext->lprev = slab->lprev;
    else
        n->partial_tail = slab->lprev;
    slab->lprev = slab->lnext = NULL;
    slab->on_node_partial = 0;
    sl_store_relaxed(&n->nr_partial, n->nr_partial - 1);
    SLI_EV(a, SLUB_NODE_PARTIAL_REMOVE, slab, NULL, 0, n->nr_partial, 0);
}

/* ---- debug hooks ----------------------------------------------------- */

static bool bytes_are(const unsigned char *p, int v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return false;
    return true;
}

/*
 * check_object(): the red zones must say `red`; a free object (red
 * inactive) of a cache with __OBJECT_POISON must still hold its poison.
 * (The kernel also checks the padding poison and the free pointer; the
 * model does not write padding poison, and finds bad free pointers by
 * bounding every freelist walk.)
 */
static int check_object(const sl_slub_cache *s, const unsigned char *obj, int red)
{
    if (s->flags & SL_SLUB_RED_ZONE) {
        if (!bytes_are(obj - s->g.red_left_pad, red, s->g.red_left_pad) ||
            !bytes_are(obj + s->g.object_size, red, s->g.inuse - s->g.object_size))
            return SL_EREDZONE;
    }
    if (red == RED_INACTIVE && s->object_poison) {
        if (!bytes_are(obj, POISON_FREE, s->g.object_size - 1) || obj[s->g.object_size - 1] != POISON_END)
            return SL_EPOISON;
    }
    return SL_OK;
}

static void quarantine(sli_act *a, sli_slub_slab *slab, void *obj, int err, uint8_t state)
{
    if (a->s->info)
        sl_store_relaxed(&sli_info(a->s, slab, sli_obj_index(a->s, slab, obj))->state, state);
    sli_slub_error(a, err, slab, obj);
    SLI_EV(a, SLUB_QUARANTINE, slab, obj, (uint32_t)err, 0, 0);
}

/*
 * alloc_debug_processing's "bad:" branch: "Marking all objects used", and
 * (6.12+, mm/slub: Avoid list corruption when removing a slab from the full
 * list) frozen as the mark of a slab taken out of use.  Under the node's
 * list_lock, where every change of a debug cache's slab happens: the CAS
 * cannot fail.  The slab's free objects leak; frees into it are refused.
 */
static void disable_slab(sli_act *a, sli_slub_slab *slab)
{
    sl_dword old = sl_dw_read(&slab->fc);
    uint32_t objects = sli_objects(old.hi);
    a->cas++;
    bool ok = sl_dw_cas(&slab->fc, old, (sl_dword){0, sli_counters(objects, objects, 1)});
    sl_assert(ok);
    (void)ok;
    SLI_EV(a, SLUB_SLAB_DISABLED, slab, NULL, objects - sli_inuse(old.hi), 0, 0);
}

bool sli_slub_alloc_debug(sli_act *a, sli_slub_slab *slab, void *obj)
{
    sl_slub_cache *s = a->s;
    if (s->flags & SL_SLUB_CONSISTENCY_CHECKS) {
        int rc = check_object(s, obj, RED_INACTIVE);
        if (rc != SL_OK) {
            quarantine(a, slab, obj, rc, rc == SL_EPOISON ? SLI_OBJ_POISON_BAD : SLI_OBJ_REDZONE_BAD);
            disable_slab(a, slab);
            return false;
        }
    }
    init_object(s, obj, RED_ACTIVE);
    return true;
}

int sli_slub_alloc_hook(sli_act *a, void *obj)
{
    sl_slub_cache *s = a->s;
    sli_slub_slab *slab = sli_slab_of(s, obj);
    if (!slab) {
        /* Only a corrupt CPU freelist (plain fast path) can hand out a non-object. */
        sli_slub_error(a, SL_EFREELIST, NULL, NULL);
        return SL_EFREELIST;
    }
    if (s->info) {
        sli_slub_objinfo *oi = sli_info(s, slab, sli_obj_index(s, slab, obj));
        uint8_t old = __atomic_exchange_n(&oi->state, SLI_OBJ_ALLOCATED, __ATOMIC_ACQ_REL);
        if (old != SLI_OBJ_FREE) {
            /* Handed out while allocated (or quarantined): the CPU freelist is corrupt. */
            sl_store_relaxed(&oi->state, SLI_OBJ_DUP);
            sli_slub_error(a, SL_EFREELIST, slab, obj);
            return SL_EFREELIST;
        }
        oi->alloc_op = a->op;
        oi->alloc_cpu = (uint8_t)a->cpu;
    }
    return SL_OK;
}

int sli_slub_bad_free(sli_act *a, int err, const sli_slub_slab *slab, const void *obj)
{
    sli_slub_error(a, err, slab, obj);
    return err;
}

/* kernel: set_freepointer (its CONFIG_SLAB_FREELIST_HARDENED BUG_ON) */
SLI_COLD void sli_slub_hardened_bug(sli_act *a, unsigned site, const sli_slub_slab *slab, const void *obj)
{
    sli_slub_error(a, SL_EDOUBLEFREE, slab, obj);
    SLI_EV(a, SLUB_HARDENED_DOUBLE_FREE, slab, obj, site, 0, 0);
    (void)site; /* benchmark builds have no events */
}

/*
 * free_debug_processing's checks, before the free: check_slab (a disabled
 * slab), then with CONSISTENCY_CHECKS the double free (the tracked state)
 * and check_object (red zones active).  CONSISTENCY_CHECKS forces tracking,
 * so every check below has the object's state.
 */
int sli_slub_free_hook(sli_act *a, sli_slub_slab *slab, void *obj)
{
    sl_slub_cache *s = a->s;
    if (SL_UNLIKELY(sli_slab_disabled(s, slab)))
        return sli_slub_bad_free(a, SL_ECORRUPT, slab, obj);
    if (s->info) {
        sli_slub_objinfo *oi = sli_info(s, slab, sli_obj_index(s, slab, obj));
        bool checks = s->flags & SL_SLUB_CONSISTENCY_CHECKS;
        if (checks && __atomic_load_n(&oi->state, __ATOMIC_ACQUIRE) != SLI_OBJ_ALLOCATED) {
            sli_slub_error(a, SL_EDOUBLEFREE, slab, obj);
            return SL_EDOUBLEFREE;
        }
        if (checks && (s->flags & SL_SLUB_RED_ZONE)) {
            int rc = check_object(s, obj, RED_ACTIVE);
            if (rc != SL_OK) {
                uint8_t expect = SLI_OBJ_ALLOCATED;
                if (__atomic_compare_exchange_n(&oi->state, &expect, SLI_OBJ_REDZONE_BAD, false, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE))
                    quarantine(a, slab, obj, rc, SLI_OBJ_REDZONE_BAD);
                else
                    sli_slub_error(a, rc = SL_EDOUBLEFREE, slab, obj);
                return rc;
            }
        }
        if (checks) {
            uint8_t expect = SLI_OBJ_ALLOCATED;
            if (!__atomic_compare_exchange_n(&oi->state, &expect, SLI_OBJ_FREE, false, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE)) {
                /* lost a race with another free of the same object */
                sli_slub_error(a, SL_EDOUBLEFREE, slab, obj);
                return SL_EDOUBLEFREE;
            }
        } else {
            __atomic_store_n(&oi->state, SLI_OBJ_FREE, __ATOMIC_RELEASE);
        }
        oi->free_op = a->op;
        oi->free_cpu = (uint8_t)a->cpu;
    }
    if (s->object_poison || (s->flags & SL_SLUB_RED_ZONE))
        init_object(s, obj, RED_INACTIVE);
    return SL_OK;
}

/* ---- object addressing ----------------------------------------------- */

bool sl_slub_object_index(const sl_slub_cache *s, const void *obj, uint32_t *pfn, uint32_t *index)
{
    sli_slub_slab *slab = obj ? sli_slab_of(s, obj) : NULL;
    uint32_t i;
    if (!slab || !sli_obj_start(s, slab, obj, &i))
        return false;
    *pfn = sli_slab_pfn(s, slab);
    *index = i;
    return true;
}

void *sl_slub_object_at(const sl_slub_cache *s, uint32_t pfn, uint32_t index)
{
    sl_page *pg = sl_page_from_pfn(s->zone, pfn);
    if (!pg || sl_page_from_addr(s->zone, sl_page_address(s->zone, pg)) != pg)
        return NULL;
    sli_slub_slab *slab = SL_PAGE_PRIV(pg, sli_slub_slab);
    return slab->cache == s && index < sli_slab_objects(slab) ? sli_obj_at(s, slab, index) : NULL;
}

/* ---- destroy ----------------------------------------------------------- */

int sl_slub_cache_destroy(sl_slub_cache *s)
{
    if (!s)
        return SL_EINVAL;
    for (unsigned c = 0; c < s->ncpus; c++) {
        sl_slub_irq_work(s, c); /* defer_free_barrier: kfree_nolock's deferred objects first */
        sl_slub_rcu_grace_period(s, c);
        sl_slub_flush_cpu(s, c);
    }
    sli_act a = {.s = s, .c = &s->cpu[0], .op = SL_OP_BEGIN(s->trace), .cpu = 0};
    sli_slub_sheaves_destroy(s, &a);
    /* Every slab is now on the node partial list or full; give them all back. */
    int rc = SL_OK;
    sl_page_zone *z = s->zone;
    for (uint32_t pfn = 0; pfn < z->npages; pfn++) {
        sl_page *pg = &z->pages[pfn];
        if (pg->flags != SL_PG_HEAD || SL_PAGE_PRIV(pg, sli_slub_slab)->cache != s)
            continue;
        sli_slub_slab *slab = SL_PAGE_PRIV(pg, sli_slub_slab);
        if (sli_inuse(slab->fc.hi))
            rc = SL_EBUSY;
        sli_slub_discard_slab(&a, slab);
    }
    free(s->info);
    free(s->random_seq);
    sl_os_free(s);
    return rc;
}
