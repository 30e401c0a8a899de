/*
 * geometry.c - what __kmem_cache_create() of mm/slab.c decides for a cache,
 * for a kernel from 4.10 to 6.7, and enable_cpucache()'s tunables.
 *
 * Without CONFIG_DEBUG_SLAB, on x86-64 with 4 KiB pages: BYTES_PER_WORD 8,
 * cache_line_size() 64, freelist_idx_t one byte (PAGE_SIZE >> 8 <= 16), so
 * at most 255 objects per slab and objects of at least 16 bytes,
 * slab_max_order 1 (more than 32 MB of RAM), KMALLOC_MAX_ORDER 10.
 *
 * The choice, after b03a017bebc4, in __kmem_cache_create's order:
 *   1. set_objfreelist_slab_cache: refused with init_on_free (5.3 on), a
 *      ctor or TYPESAFE_BY_RCU, and when the array (num bytes) does not fit
 *      in one object (num > object_size); else the array lives in a free
 *      object, and the geometry is as if the array were elsewhere.
 *   2. set_off_slab_cache: geometry with the array off the slab; refused
 *      when no order passes calculate_slab_order's freelist-cache checks, or
 *      when the array would fit in the left-over bytes anyway.
 *   3. set_on_slab_cache: the array at the slab end, one index per object
 *      counted into each object's cost.
 * The rules before b03a017bebc4 (its parent commit) are the same without
 * step 1.  When step 3 decides, we classify by the layout chosen: if the
 * slab holds as many objects with the array on it as it would without,
 * the array sits in bytes that were left over anyway -- NORMAL(leftover),
 * seed 002's category -- else it costs objects: NORMAL.
 *
 * calculate_slab_order's OFF_SLAB checks ask kmalloc_slab() for the cache
 * that would hold the array, so the kmalloc caches' own geometry must be
 * known: sl_slab_kmalloc_table_init computes it in kmem_cache_init's
 * order, each cache seeing only the ones created before it, as at boot.
 *
 * Pure functions over caller-owned structs: no locks, no globals.
 */
#include "slab.h"

#include <stdio.h>
#include <string.h>

#define ALIGN_UP(x, a) (((x) + (a)-1) / (a) * (a))

static const char *const mgmt_names[SL_SLAB_NMGMT] = {"OBJFREELIST", "NORMAL(leftover)", "NORMAL", "OFF"};

const char *sl_slab_mgmt_name(sl_slab_mgmt m) { return (unsigned)m < SL_SLAB_NMGMT ? mgmt_names[m] : "?"; }

bool sl_slab_kernel_valid(unsigned v)
{
    unsigned major = v / 100, minor = v % 100;
    return (major == 4 && minor >= 10 && minor <= 20) || (major == 5 && minor <= 19) || (major == 6 && minor <= 7);
}

int sl_slab_kernel_parse(const char *s, unsigned *out)
{
    unsigned v[2] = {0, 0}, part = 0, digits = 0;
    for (const char *p = s; p && *p; p++) {
        if (*p == '.' && digits && part == 0) {
            part = 1;
            digits = 0;
        } else if (*p >= '0' && *p <= '9' && digits < 2) {
            v[part] = v[part] * 10 + (unsigned)(*p - '0');
            digits++;
        } else {
            return SL_EINVAL;
        }
    }
    if (part != 1 || !digits || !sl_slab_kernel_valid(SL_SLAB_KERNEL(v[0], v[1])))
        return SL_EINVAL;
    *out = SL_SLAB_KERNEL(v[0], v[1]);
    return SL_OK;
}

void sl_slab_kernel_name(unsigned v, char *buf, size_t len) { snprintf(buf, len, "%u.%u", v / 100, v % 100); }

int sl_slab_variant_resolve(sl_slab_variant *v)
{
    if (!v->kernel)
        v->kernel = SL_SLAB_KERNEL_LAST;
    if ((v->rules != SL_SLAB_RULES_BEFORE && v->rules != SL_SLAB_RULES_AFTER) || !sl_slab_kernel_valid(v->kernel) ||
        (v->init_on_free && v->kernel < SL_SLAB_KERNEL_INIT_ON_FREE))
        return SL_EINVAL;
    return SL_OK;
}

uint32_t sl_slab_kmalloc_size(unsigned i)
{
    static const uint32_t small[6] = {32, 64, 96, 128, 192, 256};
    if (i < 6)
        return small[i];
    return i < SL_SLAB_NKMALLOC ? 512u << (i - 6) : 0;
}

void sl_slab_kmalloc_name(unsigned i, char *buf, size_t len)
{
    uint32_t sz = sl_slab_kmalloc_size(i);
    if (sz >= (1u << 20))
        snprintf(buf, len, "kmalloc-%uM", sz >> 20);
    else if (sz >= 1024)
        snprintf(buf, len, "kmalloc-%uk", sz >> 10);
    else
        snprintf(buf, len, "kmalloc-%u", sz);
}

int sl_slab_kmalloc_index_of_name(const char *name)
{
    char buf[SL_SLAB_NAME_MAX];
    for (unsigned i = 0; i < SL_SLAB_NKMALLOC; i++) {
        sl_slab_kmalloc_name(i, buf, sizeof buf);
        if (!strcmp(buf, name))
            return (int)i;
    }
    return -1;
}

int sl_slab_kmalloc_index(size_t size)
{
    if (size == 0 || size > SL_SLAB_KMALLOC_MAX)
        return -1;
    if (size <= 32)
        return 0;
    if (size <= 64)
        return 1;
    if (size <= 96)
        return 2;
    if (size <= 128)
        return 3;
    if (size <= 192)
        return 4;
    if (size <= 256)
        return 5;
    /* fls(size - 1) - 9 + 6: 257..512 -> 6 */
    unsigned fls = 64u - (unsigned)__builtin_clzll((unsigned long long)(size - 1));
    return (int)(fls - 9 + 6);
}

/* mm/slab_common.c calculate_alignment() (the same from 4.10 to 6.7), ARCH_SLAB_MINALIGN 8. */
static uint32_t calculate_alignment(uint32_t flags, uint32_t align, uint32_t size)
{
    if (flags & SL_SLAB_HWCACHE_ALIGN) {
        uint32_t ralign = SL_SLAB_CACHE_LINE;
        while (size <= ralign / 2)
            ralign /= 2;
        if (align < ralign)
            align = ralign;
    }
    if (align < 8)
        align = 8;
    return ALIGN_UP(align, 8);
}

unsigned sl_slab_cache_estimate(unsigned order, size_t size, bool array_outside, size_t *left)
{
    size_t slab_size = SL_PAGE_SIZE << order;
    size_t per = array_outside ? size : size + SL_SLAB_IDX_SIZE;
    *left = slab_size % per;
    return (unsigned)(slab_size / per);
}

/* Where calculate_slab_order is asked to put the array. */
enum placement { ON_SLAB, OFF_SLAB, IN_OBJECT };

/*
 * calculate_slab_order(): sets *num and *order (num 0 when nothing fits)
 * and returns the left-over bytes of the accepted order.  `object_size` is
 * cachep->size at that point of __kmem_cache_create, i.e. still the
 * unaligned object size, which the off-slab benefit check compares with.
 */
static size_t calculate_slab_order(uint32_t object_size, size_t size, uint32_t flags, enum placement where,
                                   const sl_slab_kmalloc_table *kt, unsigned *num_out, unsigned *order_out)
{
    size_t left_over = 0;
    *num_out = 0;
    *order_out = 0;
    for (unsigned order = 0; order <= SL_SLAB_KMALLOC_MAX_ORDER; order++) {
        size_t remainder;
        unsigned num = sl_slab_cache_estimate(order, size, where != ON_SLAB, &remainder);
        if (!num)
            continue;
        if (num > SL_SLAB_OBJ_MAX_NUM)
            break;
        if (where == OFF_SLAB) {
            int fc = sl_slab_kmalloc_index((size_t)num * SL_SLAB_IDX_SIZE);
            if (fc < 0 || !(kt->created >> fc & 1))
                continue; /* kmalloc_slab() found no cache (yet) */
            if (kt->g[fc].mgmt == SL_SLAB_OFF)
                continue; /* would loop in cache_grow_begin() */
            if (kt->g[fc].size > object_size / 2)
                continue; /* not enough benefit */
        }
        *num_out = num;
        *order_out = order;
        left_over = remainder;
        if (flags & SL_SLAB_RECLAIM)
            break;
        if (order >= SL_SLAB_MAX_ORDER)
            break;
        if (left_over * 8 <= (SL_PAGE_SIZE << order))
            break;
    }
    return left_over;
}

static bool valid_align(uint32_t a) { return a <= SL_SLAB_KMALLOC_MAX && (a & (a - 1)) == 0; }

int sl_slab_geometry_compute(const sl_slab_spec *spec, const sl_slab_kmalloc_table *kt, sl_slab_geometry *out)
{
    if (!spec || !kt || !out || spec->object_size == 0 || spec->object_size > SL_SLAB_KMALLOC_MAX ||
        !valid_align(spec->align) || (spec->flags & ~SL_SLAB_FLAGS_ALL))
        return SL_EINVAL;
    uint32_t flags = spec->flags;
    uint32_t object_size = spec->object_size;
    uint32_t align = calculate_alignment(flags, spec->align, object_size);
    /* Word-sized first, then the alignment (at least BYTES_PER_WORD already). */
    size_t size = ALIGN_UP((size_t)object_size, 8);
    uint32_t colour_off = align > SL_SLAB_CACHE_LINE ? align : SL_SLAB_CACHE_LINE;
    size = ALIGN_UP(size, align);
    if (size < SL_SLAB_OBJ_MIN_SIZE)
        size = ALIGN_UP((size_t)SL_SLAB_OBJ_MIN_SIZE, align);

    unsigned num = 0, order = 0;
    size_t left = 0;
    sl_slab_mgmt mgmt;
    const sl_slab_variant *v = &kt->variant;

    if (v->rules == SL_SLAB_RULES_AFTER && !v->init_on_free && !(flags & (SL_SLAB_CTOR | SL_SLAB_TYPESAFE_RCU))) {
        left = calculate_slab_order(object_size, size, flags, IN_OBJECT, kt, &num, &order);
        if (num && (size_t)num * SL_SLAB_IDX_SIZE <= object_size) {
            mgmt = SL_SLAB_OBJFREELIST;
            goto done;
        }
    }
    if (!(flags & SL_SLAB_NOLEAKTRACE)) {
        left = calculate_slab_order(object_size, size, flags, OFF_SLAB, kt, &num, &order);
        if (num && left < (size_t)num * SL_SLAB_IDX_SIZE) {
            mgmt = SL_SLAB_OFF;
            goto done;
        }
    }
    left = calculate_slab_order(object_size, size, flags, ON_SLAB, kt, &num, &order);
    if (!num)
        return SL_ENOMEM;
    size_t left_without_array;
    mgmt = sl_slab_cache_estimate(order, size, true, &left_without_array) == num ? SL_SLAB_NORMAL_LEFTOVER
                                                                                 : SL_SLAB_NORMAL;

done:;
    size_t slab_bytes = SL_PAGE_SIZE << order;
    *out = (sl_slab_geometry){
        .mgmt = mgmt,
        .size = (uint32_t)size,
        .align = align,
        .order = order,
        .num = num,
        .left = (uint32_t)left,
        .freelist_size = num * SL_SLAB_IDX_SIZE,
        .colour_off = colour_off,
        .colour = (uint32_t)(left / colour_off),
    };
    if (mgmt == SL_SLAB_OFF)
        out->off_cache_size = kt->g[sl_slab_kmalloc_index(out->freelist_size)].size;
    out->waste = (uint32_t)(slab_bytes - (size_t)num * size) + out->off_cache_size;
    return SL_OK;
}

unsigned sl_slab_kmalloc_boot_index(unsigned step)
{
    return step == 0 ? SL_SLAB_KMALLOC_INDEX_NODE : step <= SL_SLAB_KMALLOC_INDEX_NODE ? step - 1 : step;
}

sl_slab_spec sl_slab_kmalloc_spec(const sl_slab_kmalloc_table *t, unsigned i)
{
    uint32_t size = sl_slab_kmalloc_size(i);
    /* ARCH_KMALLOC_MINALIGN (8, the minimum anyway), or from 5.4 the size of a power of two. */
    sl_slab_spec spec = {.object_size = size,
                         .flags = SL_SLAB_HWCACHE_ALIGN,
                         .align = t->variant.kernel >= SL_SLAB_KERNEL_POW2_ALIGN && !(size & (size - 1)) ? size : 0};
    sl_slab_kmalloc_name(i, spec.name, sizeof spec.name);
    return spec;
}

int sl_slab_kmalloc_table_init(sl_slab_kmalloc_table *t, const sl_slab_variant *v)
{
    *t = (sl_slab_kmalloc_table){.variant = *v};
    int rc = sl_slab_variant_resolve(&t->variant);
    if (rc != SL_OK)
        return rc;
    t->nkmalloc = t->variant.kernel >= SL_SLAB_KERNEL_KMALLOC_8K ? SL_SLAB_NKMALLOC_8K : SL_SLAB_NKMALLOC;
    for (unsigned step = 0; step < t->nkmalloc; step++) {
        unsigned i = sl_slab_kmalloc_boot_index(step);
        sl_slab_spec spec = sl_slab_kmalloc_spec(t, i);
        rc = sl_slab_geometry_compute(&spec, t, &t->g[i]);
        sl_assert(rc == SL_OK);
        (void)rc;
        t->created |= 1u << i;
    }
    return SL_OK;
}

size_t sl_slab_kmalloc_max_cache(const sl_slab_kmalloc_table *t) { return sl_slab_kmalloc_size(t->nkmalloc - 1); }

sl_slab_tunables sl_slab_tunables_for(uint32_t size, unsigned ncpus)
{
    uint32_t limit = size > 131072 ? 1 : size > SL_PAGE_SIZE ? 8 : size > 1024 ? 24 : size > 256 ? 54 : 120;
    return (sl_slab_tunables){
        .limit = limit, .batchcount = (limit + 1) / 2, .shared = size <= SL_PAGE_SIZE && ncpus > 1 ? 8 : 0};
}
