/*
 * geometry.c - a cache's layout as Linux computes it (mm/slub.c:
 * calculate_alignment, calculate_sizes, calculate_order, calc_slab_order,
 * set_min_partial, set_cpu_partial / slub_set_cpu_partial; 7.0's
 * calculate_sheaf_capacity), under the boot parameters slub_min_order,
 * slub_max_order and slub_min_objects, and the rules of the kernel version
 * (eras.h): before 6.8 calculate_order lowers min_objects when no order up
 * to slub_max_order wastes at most a quarter (the loop as in 4.4 to 6.7;
 * 4.4's slab_order had a `reserved` tail, 0 on x86-64, left out), before
 * 5.7 the free pointer sits at offset 0 of the object, before 4.6 there is
 * no left red zone, before 5.17 struct track is 152 bytes, before 5.16
 * cpu_partial is 30 / 13 / 6 / 2 objects, and 7.0 has no CPU partial list
 * (sysfs cpu_partial reads 0).  The red-zone room for objects smaller than
 * a word and the kmalloc orig_size word are applied in every version.
 *
 * The code follows the kernel's line by line; the differences are inputs the
 * kernel has and sysfs does not show: freeptr_offset for RCU caches (6.13+
 * lets such a cache keep its free pointer inside the object; we assume it
 * does not) and KASAN's extra metadata (off in distribution kernels).
 * Word-sized quantities are those of x86-64 in every build, so that the
 * WebAssembly build predicts the same figures as a 64-bit kernel.
 */
#include "slub_internal.h"

#define MIN_PARTIAL 5
#define MAX_PARTIAL 10
#define MAX_OBJS_PER_PAGE 32767u /* the 15-bit objects field of the slab counters */
#define ARCH_SLAB_MINALIGN 8u    /* __alignof__(unsigned long long) */

static uint32_t align_up(uint32_t x, uint32_t a) { return (x + a - 1) & ~(a - 1); }
static uint32_t align_down(uint32_t x, uint32_t a) { return x & ~(a - 1); }

static unsigned fls32(uint32_t x) { return x ? 32 - (unsigned)__builtin_clz(x) : 0; }
static unsigned ilog2_32(uint32_t x) { return fls32(x) - 1; }

/* get_order(): the smallest order whose block holds `size` bytes. */
static unsigned get_order(uint64_t size)
{
    unsigned order = 0;
    while (((uint64_t)SL_PAGE_SIZE << order) < size)
        order++;
    return order;
}

static uint32_t order_objects(unsigned order, uint32_t size)
{
    return (uint32_t)(((uint64_t)SL_PAGE_SIZE << order) / size);
}

static uint32_t calculate_alignment(uint32_t flags, uint32_t align, uint32_t size)
{
    if (flags & SL_SLUB_HWCACHE_ALIGN) {
        uint32_t ralign = SL_SLUB_CACHE_LINE;
        while (size <= ralign / 2)
            ralign /= 2;
        align = align > ralign ? align : ralign;
    }
    if (align < ARCH_SLAB_MINALIGN)
        align = ARCH_SLAB_MINALIGN;
    return align_up(align, SL_SLUB_WORD);
}

/* calc_slab_order(): the first order in [min_order, max_order] wasting at most 1/fract. */
static unsigned calc_slab_order(uint32_t size, unsigned min_order, unsigned max_order, unsigned fract)
{
    unsigned order;
    for (order = min_order; order <= max_order; order++) {
        uint32_t slab_size = (uint32_t)(SL_PAGE_SIZE << order);
        if (slab_size % size <= slab_size / fract)
            break;
    }
    return order;
}

/* slub_min_order, slub_max_order, slub_min_objects after the __setup handlers ran. */
typedef struct boot_params {
    unsigned min_order, max_order, min_objects;
} boot_params;

/*
 * setup_slub_min_order (a min above the max raises the max), then
 * setup_slub_max_order (clamped to MAX_PAGE_ORDER; a min above it is
 * lowered).  False for an order the page allocator cannot have.
 */
static bool resolve_boot(const sl_slub_boot *b, boot_params *out)
{
    *out = (boot_params){.min_order = 0, .max_order = SL_SLUB_MAX_ORDER, .min_objects = 0};
    if (!b)
        return true;
    if (b->min_order > SL_PAGE_MAX_ORDER)
        return false;
    out->min_order = b->min_order;
    out->min_objects = b->min_objects;
    if (out->min_order > out->max_order)
        out->max_order = out->min_order;
    if (b->max_order_set) {
        out->max_order = b->max_order < SL_PAGE_MAX_ORDER ? b->max_order : SL_PAGE_MAX_ORDER;
        if (out->min_order > out->max_order)
            out->min_order = out->max_order;
    }
    return true;
}

/*
 * calc_slab_order before 6.8: the first order from
 * max(slub_min_order, get_order(min_objects * size)) up to max_order wasting
 * at most 1/fract.
 */
static unsigned calc_slab_order_legacy(uint32_t size, uint64_t min_objects, unsigned max_order, unsigned fract,
                                       const boot_params *b)
{
    if (order_objects(b->min_order, size) > MAX_OBJS_PER_PAGE)
        return get_order((uint64_t)size * MAX_OBJS_PER_PAGE) - 1;
    unsigned min_order = get_order(min_objects * size);
    if (min_order < b->min_order)
        min_order = b->min_order;
    return calc_slab_order(size, min_order, max_order, fract);
}

/*
 * calculate_order() of 4.4 to 6.7: waste of 1/16, 1/8, 1/4 at min_objects,
 * then min_objects - 1, ... down to 2; then one object per slab up to
 * slub_max_order, then up to the page allocator's limit.
 */
static int calculate_order_legacy(uint32_t size, uint64_t min_objects, const boot_params *b)
{
    uint32_t max_objects = order_objects(b->max_order, size);
    if (min_objects > max_objects)
        min_objects = max_objects;
    for (; min_objects > 1; min_objects--)
        for (unsigned fraction = 16; fraction >= 4; fraction /= 2) {
            unsigned order = calc_slab_order_legacy(size, min_objects, b->max_order, fraction, b);
            if (order <= b->max_order)
                return (int)order;
        }
    unsigned order = calc_slab_order_legacy(size, 1, b->max_order, 1, b);
    if (order <= b->max_order)
        return (int)order;
    order = calc_slab_order_legacy(size, 1, SL_PAGE_MAX_ORDER + 1, 1, b);
    return order <= SL_PAGE_MAX_ORDER ? (int)order : -1;
}

/* calculate_order(): 6.8+ (after the min_objects loop was removed), or the older loop. Returns -1 if none. */
static int calculate_order(uint32_t size, unsigned nr_cpus, const boot_params *b, const sl_slub_rules *r)
{
    /* nr_cpus <= 1 would use nr_cpu_ids: the same here. */
    uint64_t min_objects = b->min_objects ? b->min_objects : 4 * (fls32(nr_cpus) + 1);
    if (r->order_lowers_min_objects)
        return calculate_order_legacy(size, min_objects, b);
    uint32_t max_objects = order_objects(b->max_order, size);
    if (max_objects < 1)
        max_objects = 1;
    if (min_objects > max_objects)
        min_objects = max_objects;
    unsigned min_order = get_order(min_objects * size);
    if (min_order < b->min_order)
        min_order = b->min_order;
    if (order_objects(min_order, size) > MAX_OBJS_PER_PAGE)
        return (int)get_order((uint64_t)size * MAX_OBJS_PER_PAGE) - 1;
    for (unsigned fraction = 16; fraction > 1; fraction /= 2) {
        unsigned order = calc_slab_order(size, min_order, b->max_order, fraction);
        if (order <= b->max_order)
            return (int)order;
    }
    unsigned order = get_order(size);
    return order <= SL_PAGE_MAX_ORDER ? (int)order : -1;
}

bool sli_slub_kernel_rules(const sl_slub_kernel *k, sl_slub_rules *out)
{
    sl_slub_kversion v = k ? k->version : (sl_slub_kversion){0, 0};
    if (!v.major && !v.minor)
        v = SL_SLUB_KVERSION_DEFAULT;
    if (!sl_slub_kversion_known(v))
        return false;
    sl_slub_rules_for(v, out);
    return true;
}

/* kmalloc_size_roundup: the kmalloc bucket a request of n bytes lands in (96 and 192 among them). */
static uint32_t kmalloc_size_roundup(uint32_t n)
{
    static const uint32_t small[] = {8, 16, 32, 64, 96, 128, 192};
    for (unsigned i = 0; i < sizeof small / sizeof small[0]; i++)
        if (n <= small[i])
            return small[i];
    uint32_t size = 256;
    while (size < n)
        size <<= 1;
    return size;
}

#define SHEAF_HEADER 32 /* struct slab_sheaf before objects[] on x86-64 */

uint32_t sl_slub_sheaf_capacity(sl_slub_kversion v, uint32_t size, uint32_t flags, uint32_t requested)
{
    sl_slub_rules r;
    sl_slub_rules_for(v, &r);
    if (r.sheaves == SL_SLUB_SHEAVES_NONE || (flags & SL_SLUB_DEBUG_FLAGS))
        return 0;
    if (r.sheaf_exemptions && (flags & SL_SLUB_NO_SHEAVES))
        return 0; /* "bootstrap caches can't have sheaves for now", nor kmemleak's (recursion) */
    if (r.sheaves == SL_SLUB_SHEAVES_OPT_IN)
        return requested;
    /* "roughly similar formula (divided by two as there are two percpu sheaves)" as cpu_partial's */
    uint32_t capacity = size >= SL_PAGE_SIZE ? 4 : size >= 1024 ? 12 : size >= 256 ? 26 : 60;
    /* made a whole kmalloc bucket */
    capacity = (kmalloc_size_roundup(SHEAF_HEADER + SL_SLUB_WORD * capacity) - SHEAF_HEADER) / SL_SLUB_WORD;
    return capacity > requested ? capacity : requested;
}

int sl_slub_calculate_geometry(uint32_t object_size, uint32_t align, uint32_t flags, unsigned nr_cpus,
                               const sl_slub_kernel *k, sl_slub_geometry *g)
{
    boot_params b;
    sl_slub_rules r;
    if (object_size == 0 || object_size > (8u << 20) || (align & (align - 1)) || align > (1u << 22) || nr_cpus == 0 ||
        !resolve_boot(k ? &k->boot : NULL, &b) || !sli_slub_kernel_rules(k, &r))
        return SL_EINVAL;
    *g = (sl_slub_geometry){.object_size = object_size, .flags = flags};
    g->align = calculate_alignment(flags, align, object_size);

    /* calculate_sizes() */
    uint32_t size = align_up(object_size, SL_SLUB_WORD);
    if ((flags & SL_SLUB_RED_ZONE) && size == object_size)
        size += SL_SLUB_WORD; /* room for the right red zone */
    g->inuse = size;
    bool orig_size = (flags & SL_SLUB_STORE_USER) && (flags & SL_SLUB_KMALLOC); /* slub_debug_orig_size */
    if ((flags & SL_SLUB_TYPESAFE_BY_RCU) || (flags & SL_SLUB_POISON) || (flags & SL_SLUB_CTOR) ||
        ((flags & SL_SLUB_RED_ZONE) && (object_size < SL_SLUB_WORD || orig_size))) {
        g->offset = size; /* the free pointer may not overwrite the object: put it after */
        size += SL_SLUB_WORD;
    } else if (r.freeptr_at_zero) {
        g->offset = 0; /* the object's first word, before 5.7 */
    } else {
        g->offset = align_down(object_size / 2, SL_SLUB_WORD); /* middle of the object */
    }
    if (flags & SL_SLUB_STORE_USER) {
        size += 2 * r.track_size;
        if (flags & SL_SLUB_KMALLOC)
            size += 4; /* orig_size */
    }
    if (flags & SL_SLUB_RED_ZONE) {
        size += SL_SLUB_WORD;
        if (r.red_left_pad) {
            g->red_left_pad = align_up(SL_SLUB_WORD, g->align);
            size += g->red_left_pad;
        }
    }
    size = align_up(size, g->align);
    g->size = size;
    int order = calculate_order(size, nr_cpus, &b, &r);
    if (order < 0)
        return SL_EINVAL;
    g->order = (uint32_t)order;
    g->objects = order_objects(g->order, size);
    if (g->objects == 0)
        return SL_EINVAL;
    /* s->min = oo_make(get_order(size), size): never above order, which holds at least one object. */
    g->fallback_order = get_order(size);
    g->fallback_objects = order_objects(g->fallback_order, size);

    /* set_min_partial() */
    uint32_t mp = ilog2_32(size) / 2;
    g->min_partial = mp < MIN_PARTIAL ? MIN_PARTIAL : mp > MAX_PARTIAL ? MAX_PARTIAL : mp;

    /*
     * set_cpu_partial(): none for debug caches (kmem_cache_has_cpu_partial)
     * nor in 7.0; 5.16 raised the objects as the limit moved to slabs.
     */
    static const uint32_t objects_per_size[2][4] = {{6, 24, 52, 120}, {2, 6, 13, 30}};
    const uint32_t *by = objects_per_size[r.cpu_partial_by_objects];
    uint32_t nr;
    if ((flags & SL_SLUB_DEBUG_FLAGS) || !r.cpu_slab)
        nr = 0;
    else if (size >= SL_PAGE_SIZE)
        nr = by[0];
    else if (size >= 1024)
        nr = by[1];
    else if (size >= 256)
        nr = by[2];
    else
        nr = by[3];
    sli_slub_set_cpu_partial(g, nr);
    return SL_OK;
}

void sli_slub_set_cpu_partial(sl_slub_geometry *g, uint32_t objects)
{
    /* slub_set_cpu_partial: the limit is on slabs, each assumed half full. */
    g->cpu_partial = objects;
    g->cpu_partial_slabs = (uint32_t)(((uint64_t)objects * 2 + g->objects - 1) / g->objects);
}
