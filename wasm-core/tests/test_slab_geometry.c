/*
 * test_slab_geometry.c - SLAB cache geometry against hand-computed cases of
 * mm/slab.c (4 KiB pages, 1-byte freelist_idx_t, slab_max_order 1): the
 * classification by the layout chosen, kmem_cache_init's boot order, each
 * kernel-version rule, the tunables; the --caches, /proc/slabinfo and sysfs
 * readers with their errors; and slab-types on the captured fixtures (this
 * machine's 6.18 sysfs tree, and a real 5.4 SLAB kernel's slabinfo).
 */
#include "check.h"

#include "../src/slab/slab.h"

#include <sys/stat.h>
#include <unistd.h>

/* Kernel 6.7 (the default) and 4.10 (kmalloc caches up to 4 MiB, no power-of-two alignment). */
static sl_slab_kmalloc_table before, after, before410, after410;

static void table(sl_slab_kmalloc_table *t, sl_slab_rules rules, unsigned kernel, bool init_on_free)
{
    sl_slab_variant v = {.rules = rules, .kernel = kernel, .init_on_free = init_on_free};
    int rc = sl_slab_kmalloc_table_init(t, &v);
    SL_CHECK_EQ(rc, SL_OK);
}

static sl_slab_geometry geo(const sl_slab_kmalloc_table *kt, uint32_t size, uint32_t align, uint32_t flags)
{
    sl_slab_spec s = {.object_size = size, .align = align, .flags = flags};
    sl_slab_geometry g = {0};
    int rc = sl_slab_geometry_compute(&s, kt, &g);
    SL_CHECK_EQ(rc, SL_OK);
    return g;
}

static void test_cache_estimate(void)
{
    size_t left;
    SL_CHECK_EQ(sl_slab_cache_estimate(0, 32, false, &left), 124); /* 4096 / 33 */
    SL_CHECK_EQ(left, 4);
    SL_CHECK_EQ(sl_slab_cache_estimate(0, 32, true, &left), 128);
    SL_CHECK_EQ(left, 0);
    SL_CHECK_EQ(sl_slab_cache_estimate(1, 1100, true, &left), 7); /* 8192 / 1100 */
    SL_CHECK_EQ(left, 492);
    SL_CHECK_EQ(sl_slab_cache_estimate(0, 8192, true, &left), 0);
}

static void test_kmalloc_index(void)
{
    SL_CHECK_EQ(sl_slab_kmalloc_index(0), -1);
    SL_CHECK_EQ(sl_slab_kmalloc_index(1), 0);
    SL_CHECK_EQ(sl_slab_kmalloc_index(32), 0);
    SL_CHECK_EQ(sl_slab_kmalloc_index(33), 1);
    SL_CHECK_EQ(sl_slab_kmalloc_index(96), 2);
    SL_CHECK_EQ(sl_slab_kmalloc_index(97), 3);
    SL_CHECK_EQ(sl_slab_kmalloc_index(129), 4);
    SL_CHECK_EQ(sl_slab_kmalloc_index(193), 5);
    SL_CHECK_EQ(sl_slab_kmalloc_index(257), 6);
    SL_CHECK_EQ(sl_slab_kmalloc_index(4096), 9);
    SL_CHECK_EQ(sl_slab_kmalloc_index(4097), 10);
    SL_CHECK_EQ(sl_slab_kmalloc_index((size_t)4 << 20), 19);
    SL_CHECK_EQ(sl_slab_kmalloc_index(((size_t)4 << 20) + 1), -1);
    for (unsigned i = 0; i < SL_SLAB_NKMALLOC; i++)
        SL_CHECK_EQ(sl_slab_kmalloc_index(sl_slab_kmalloc_size(i)), i);
}

/* The kmalloc caches of 4.10 as the kernel created them at boot, both rules. */
static void test_kmalloc_caches(void)
{
    const sl_slab_geometry *a = after410.g, *b = before410.g;
    SL_CHECK_EQ(after410.nkmalloc, 20);
    /* kmalloc-32: 128 indexes do not fit in 32 bytes; off-slab would need
     * kmalloc-128 which does not exist yet; on-slab 4096/33. */
    SL_CHECK_EQ(a[0].mgmt, SL_SLAB_NORMAL);
    SL_CHECK_EQ(a[0].num, 124);
    SL_CHECK_EQ(a[0].left, 4);
    SL_CHECK_EQ(a[0].waste, 128);
    SL_CHECK_EQ(b[0].mgmt, SL_SLAB_NORMAL);
    /* kmalloc-64: 64 indexes fit in one 64-byte object. */
    SL_CHECK_EQ(a[1].mgmt, SL_SLAB_OBJFREELIST);
    SL_CHECK_EQ(a[1].num, 64);
    SL_CHECK_EQ(a[1].waste, 0);
    SL_CHECK_EQ(b[1].mgmt, SL_SLAB_NORMAL); /* its own cache would hold the array */
    SL_CHECK_EQ(b[1].num, 63);
    SL_CHECK_EQ(b[1].left, 1);
    /* kmalloc-96 with HWCACHE_ALIGN: align 64, buffer 128. */
    SL_CHECK_EQ(a[2].size, 128);
    SL_CHECK_EQ(a[2].align, 64);
    SL_CHECK_EQ(a[2].mgmt, SL_SLAB_OBJFREELIST);
    SL_CHECK_EQ(b[2].mgmt, SL_SLAB_OFF); /* 32 indexes in kmalloc-32, 32 <= 96/2 */
    SL_CHECK_EQ(b[2].off_cache_size, 32);
    SL_CHECK_EQ(b[2].waste, 32);
    /* kmalloc-128 came first (kmem_cache_node): no kmalloc cache for its array existed yet. */
    SL_CHECK_EQ(b[3].mgmt, SL_SLAB_NORMAL);
    SL_CHECK_EQ(b[3].num, 31);
    SL_CHECK_EQ(a[3].mgmt, SL_SLAB_OBJFREELIST);
    /* kmalloc-192: 21 objects leave 64 bytes, enough for the array. */
    SL_CHECK_EQ(b[4].mgmt, SL_SLAB_NORMAL_LEFTOVER);
    SL_CHECK_EQ(b[4].num, 21); /* 4096 / 193 */
    SL_CHECK_EQ(b[4].left, 43);
    SL_CHECK_EQ(b[4].colour, 0);
    SL_CHECK_EQ(a[4].mgmt, SL_SLAB_OBJFREELIST);
    SL_CHECK_EQ(a[4].left, 64);
    SL_CHECK_EQ(a[4].colour, 1);
    /* kmalloc-4k .. 4M: one object per slab, order = size/4K. */
    for (unsigned i = 9; i < SL_SLAB_NKMALLOC; i++) {
        SL_CHECK_EQ(a[i].num, 1);
        SL_CHECK_EQ(a[i].order, i - 9);
        SL_CHECK_EQ(a[i].mgmt, SL_SLAB_OBJFREELIST);
        SL_CHECK_EQ(b[i].mgmt, SL_SLAB_OFF);
    }
    unsigned nb[SL_SLAB_NMGMT] = {0}, na[SL_SLAB_NMGMT] = {0};
    for (unsigned i = 0; i < SL_SLAB_NKMALLOC; i++)
        nb[b[i].mgmt]++, na[a[i].mgmt]++;
    SL_CHECK_EQ(nb[SL_SLAB_OBJFREELIST], 0);
    SL_CHECK_EQ(nb[SL_SLAB_OFF], 16);
    SL_CHECK_EQ(nb[SL_SLAB_NORMAL], 3);
    SL_CHECK_EQ(na[SL_SLAB_OBJFREELIST], 19);
}

/*
 * kmem_cache_init creates kmalloc-128 before any other kmalloc cache, so
 * under the rules before OBJFREELIST it cannot go off-slab: NORMAL.  A
 * 128-byte cache created later finds kmalloc-32 and goes off-slab.
 */
static void test_boot_order(void)
{
    SL_CHECK_EQ(sl_slab_kmalloc_boot_index(0), SL_SLAB_KMALLOC_INDEX_NODE);
    SL_CHECK_EQ(sl_slab_kmalloc_boot_index(1), 0);
    SL_CHECK_EQ(sl_slab_kmalloc_boot_index(3), 2);
    SL_CHECK_EQ(sl_slab_kmalloc_boot_index(4), 4);
    SL_CHECK_EQ(before.g[3].mgmt, SL_SLAB_NORMAL);
    SL_CHECK_EQ(before.g[3].num, 31);
    sl_slab_geometry later = geo(&before, 128, 0, SL_SLAB_HWCACHE_ALIGN);
    SL_CHECK_EQ(later.mgmt, SL_SLAB_OFF);
    SL_CHECK_EQ(later.num, 32);
    SL_CHECK_EQ(later.off_cache_size, 32);
    /* slab-types takes a cache named like a kmalloc cache from the boot table. */
    sl_slab_spec_list l = {0};
    sl_slab_spec k128 = {.name = "kmalloc-128", .object_size = 128, .flags = SL_SLAB_HWCACHE_ALIGN};
    sl_slab_spec other = k128;
    snprintf(other.name, sizeof other.name, "kmalloc-cg-128");
    SL_REQUIRE(sl_slab_spec_list_add(&l, &k128, NULL) == SL_OK && sl_slab_spec_list_add(&l, &other, NULL) == SL_OK);
    sl_slab_types t;
    sl_slab_variant v = {0};
    char err[128];
    SL_REQUIRE(sl_slab_types_compute(&l, &v, 2, &t, err, sizeof err) == SL_OK);
    SL_CHECK_EQ(t.g[0][0].mgmt, SL_SLAB_NORMAL);
    SL_CHECK_EQ(t.g[0][1].mgmt, SL_SLAB_OFF);
    SL_CHECK_EQ(sl_slab_kmalloc_index_of_name("kmalloc-1k"), 7);
    SL_CHECK_EQ(sl_slab_kmalloc_index_of_name("kmalloc-rcl-1k"), -1);
    sl_slab_types_free(&t);
    sl_slab_spec_list_free(&l);
}

/*
 * NORMAL(leftover) is decided by the layout chosen: the array fits in what
 * the slab leaves over anyway when it holds as many objects with the array
 * as without.  112 bytes: 36 objects either way (4096/113, 4096/112); no
 * off-slab order passes (the array would need kmalloc-64 or more, over
 * half of the object), which the classification once took for NORMAL.
 */
static void test_normal_leftover_by_layout(void)
{
    sl_slab_geometry g = geo(&before, 112, 0, 0);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_NORMAL_LEFTOVER);
    SL_CHECK_EQ(g.num, 36);
    SL_CHECK_EQ(g.left, 4096 - 36 * 113);
    g = geo(&after, 112, 0, SL_SLAB_CTOR); /* refused OBJFREELIST: the same layout */
    SL_CHECK_EQ(g.mgmt, SL_SLAB_NORMAL_LEFTOVER);
    g = geo(&after, 72, 0, SL_SLAB_TYPESAFE_RCU); /* 56 objects either way */
    SL_CHECK_EQ(g.mgmt, SL_SLAB_NORMAL_LEFTOVER);
    SL_CHECK_EQ(g.num, 56);
    /* 40 bytes: 99 objects with the array, 102 without: the array costs three. */
    g = geo(&before, 40, 0, 0);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_NORMAL);
    g = geo(&after, 40, 0, SL_SLAB_CTOR);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_NORMAL);
}

static void test_kernel_versions(void)
{
    unsigned v = 0;
    SL_CHECK_EQ(sl_slab_kernel_parse("6.7", &v), SL_OK);
    SL_CHECK_EQ(v, 607);
    SL_CHECK_EQ(sl_slab_kernel_parse("4.10", &v), SL_OK);
    SL_CHECK_EQ(v, 410);
    SL_CHECK_EQ(sl_slab_kernel_parse("5.19", &v), SL_OK);
    static const char *const bad[] = {"4.9", "6.8", "5.20",  "4.21", "7.0",  "",      "5",
                                      "5.",  ".4",  "5.4.1", "x.y",  "5.4x", "123.4", "5.123"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
        SL_CHECK_EQ(sl_slab_kernel_parse(bad[i], &v), SL_EINVAL);
    char name[16];
    sl_slab_kernel_name(SL_SLAB_KERNEL(4, 10), name, sizeof name);
    SL_CHECK(!strcmp(name, "4.10"));

    sl_slab_variant var = {.rules = SL_SLAB_RULES_AFTER};
    SL_CHECK_EQ(sl_slab_variant_resolve(&var), SL_OK);
    SL_CHECK_EQ(var.kernel, SL_SLAB_KERNEL_LAST);
    var = (sl_slab_variant){.kernel = SL_SLAB_KERNEL(5, 2), .init_on_free = true};
    SL_CHECK_EQ(sl_slab_variant_resolve(&var), SL_EINVAL); /* init_on_free came with 5.3 */
    var.kernel = SL_SLAB_KERNEL(5, 3);
    SL_CHECK_EQ(sl_slab_variant_resolve(&var), SL_OK);
    var = (sl_slab_variant){.rules = (sl_slab_rules)2};
    SL_CHECK_EQ(sl_slab_variant_resolve(&var), SL_EINVAL);
    sl_slab_kmalloc_table t;
    var = (sl_slab_variant){.kernel = SL_SLAB_KERNEL(4, 9)};
    SL_CHECK_EQ(sl_slab_kmalloc_table_init(&t, &var), SL_EINVAL);

    /* 6.1: kmalloc caches end at 8 KiB; 6.0 still has them up to 4 MiB. */
    table(&t, SL_SLAB_RULES_AFTER, SL_SLAB_KERNEL(6, 1), false);
    SL_CHECK_EQ(t.nkmalloc, 11);
    SL_CHECK_EQ(sl_slab_kmalloc_max_cache(&t), 8192);
    table(&t, SL_SLAB_RULES_AFTER, SL_SLAB_KERNEL(6, 0), false);
    SL_CHECK_EQ(t.nkmalloc, 20);
    SL_CHECK_EQ(sl_slab_kmalloc_max_cache(&t), 4u << 20);

    /* 5.4: power-of-two kmalloc caches aligned to their size, which sets the colour offset. */
    table(&t, SL_SLAB_RULES_AFTER, SL_SLAB_KERNEL(5, 4), false);
    SL_CHECK_EQ(t.g[5].align, 256);
    SL_CHECK_EQ(t.g[5].colour_off, 256);
    SL_CHECK_EQ(t.g[2].align, 64); /* kmalloc-96: not a power of two, cache-line aligned */
    SL_CHECK_EQ(t.g[4].align, 64);
    table(&t, SL_SLAB_RULES_AFTER, SL_SLAB_KERNEL(5, 3), false);
    SL_CHECK_EQ(t.g[5].align, 64);
    SL_CHECK_EQ(t.g[5].colour_off, 64);
    SL_CHECK_EQ(t.g[4].colour, 1); /* kmalloc-192: 64 bytes left, 64-byte colour offset */

    /* 5.3: init_on_free refuses OBJFREELIST; the rest of the choice is the rules before it. */
    table(&t, SL_SLAB_RULES_AFTER, SL_SLAB_KERNEL(5, 3), true);
    sl_slab_geometry g = geo(&t, 256, 0, 0);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_OFF);
    SL_CHECK_EQ(t.g[1].mgmt, SL_SLAB_NORMAL); /* kmalloc-64 */
    for (unsigned i = 0; i < t.nkmalloc; i++)
        SL_CHECK(t.g[i].mgmt != SL_SLAB_OBJFREELIST);
}

static void test_tunables(void)
{
    static const struct {
        uint32_t size;
        unsigned cpus;
        sl_slab_tunables want;
    } cases[] = {{32, 2, {120, 60, 8}},  {256, 2, {120, 60, 8}}, {257, 2, {54, 27, 8}}, {1024, 4, {54, 27, 8}},
                 {1025, 2, {24, 12, 8}}, {4096, 2, {24, 12, 8}}, {4097, 2, {8, 4, 0}},  {131072, 2, {8, 4, 0}},
                 {131073, 2, {1, 1, 0}}, {64, 1, {120, 60, 0}}};
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sl_slab_tunables t = sl_slab_tunables_for(cases[i].size, cases[i].cpus);
        SL_CHECK_EQ(t.limit, cases[i].want.limit);
        SL_CHECK_EQ(t.batchcount, cases[i].want.batchcount);
        SL_CHECK_EQ(t.shared, cases[i].want.shared);
    }
}

static void test_ctor_and_rcu_refuse_objfreelist(void)
{
    /* 256 bytes: 16 objects, array in kmalloc-32 (32 <= 128), no left-over. */
    sl_slab_geometry g = geo(&after, 256, 0, SL_SLAB_CTOR);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_OFF);
    SL_CHECK_EQ(g.num, 16);
    g = geo(&after, 256, 0, SL_SLAB_TYPESAFE_RCU);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_OFF);
    g = geo(&after, 256, 0, 0);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_OBJFREELIST);
    /* NOLEAKTRACE keeps it on the slab: 4096/257 = 15, 241 left, 3 colours. */
    g = geo(&before, 256, 0, SL_SLAB_NOLEAKTRACE);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_NORMAL);
    SL_CHECK_EQ(g.num, 15);
    SL_CHECK_EQ(g.left, 241);
    SL_CHECK_EQ(g.colour, 3);
    SL_CHECK_EQ(g.waste, 256);
}

static void test_order_rules(void)
{
    /* 1100 bytes: order 0 leaves 796 (> 4096/8), so order 1 (slab_max_order). */
    sl_slab_geometry g = geo(&after, 1100, 0, 0);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_OBJFREELIST);
    SL_CHECK_EQ(g.size, 1104);
    SL_CHECK_EQ(g.order, 1);
    SL_CHECK_EQ(g.num, 7);
    SL_CHECK_EQ(g.left, 8192 - 7 * 1104);
    /* RECLAIM_ACCOUNT takes the first acceptable order. */
    g = geo(&after, 1100, 0, SL_SLAB_RECLAIM);
    SL_CHECK_EQ(g.order, 0);
    SL_CHECK_EQ(g.num, 3);
    SL_CHECK_EQ(g.left, 4096 - 3 * 1104);
    SL_CHECK_EQ(g.colour, (4096 - 3 * 1104) / 64);
    /* 40 bytes, before: an off-slab array would need kmalloc-128 (> 20 bytes
     * of benefit) at order 0 and kmalloc-256 at order 1; order 2 exceeds 255
     * objects, so it stays on the slab. */
    g = geo(&before, 40, 0, 0);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_NORMAL);
    SL_CHECK_EQ(g.num, 99);
    SL_CHECK_EQ(g.left, 37);
    /* Tiny objects are raised to 16 bytes: 256 would exceed 255 objects. */
    g = geo(&after, 8, 0, 0);
    SL_CHECK_EQ(g.size, 16);
    SL_CHECK_EQ(g.mgmt, SL_SLAB_NORMAL);
    SL_CHECK_EQ(g.num, 240);
    /* Alignment: buffer and colour offset follow it. */
    g = geo(&after, 100, 128, 0);
    SL_CHECK_EQ(g.size, 128);
    SL_CHECK_EQ(g.colour_off, 128);
    g = geo(&after, 100, 0, SL_SLAB_HWCACHE_ALIGN);
    SL_CHECK_EQ(g.align, 64);
    SL_CHECK_EQ(g.size, 128);
    g = geo(&after, 20, 0, SL_SLAB_HWCACHE_ALIGN);
    SL_CHECK_EQ(g.align, 32);
}

static void test_rejects_bad_specs(void)
{
    sl_slab_geometry g;
    sl_slab_spec s = {.object_size = 0};
    SL_CHECK_EQ(sl_slab_geometry_compute(&s, &after, &g), SL_EINVAL);
    s.object_size = (4u << 20) + 1;
    SL_CHECK_EQ(sl_slab_geometry_compute(&s, &after, &g), SL_EINVAL);
    s.object_size = 64;
    s.align = 48;
    SL_CHECK_EQ(sl_slab_geometry_compute(&s, &after, &g), SL_EINVAL);
    s.align = 0;
    s.flags = 0x100;
    SL_CHECK_EQ(sl_slab_geometry_compute(&s, &after, &g), SL_EINVAL);
}

/* Every size and flag combination: the geometry adds up and obeys the rules. */
static void test_geometry_invariants(void)
{
    uint64_t rng = 42;
    unsigned n = (unsigned)sl_test_scale(20000);
    for (unsigned i = 0; i < n; i++) {
        uint64_t r = sl_test_rand(&rng);
        uint32_t size = i < 8192 ? i + 1 : 1 + (uint32_t)(r % (4u << 20));
        uint32_t align = (r >> 32) % 3 == 0 ? 1u << ((r >> 40) % 13) : 0;
        uint32_t flags = (uint32_t)(r >> 48) & SL_SLAB_FLAGS_ALL;
        for (unsigned rules = 0; rules < 2; rules++) {
            sl_slab_geometry g = geo(rules ? &after : &before, size, align, flags);
            size_t slab = SL_PAGE_SIZE << g.order;
            bool array_on_slab = g.mgmt == SL_SLAB_NORMAL || g.mgmt == SL_SLAB_NORMAL_LEFTOVER;
            SL_REQUIRE(g.num >= 1 && g.num <= SL_SLAB_OBJ_MAX_NUM);
            SL_REQUIRE(g.size >= size && g.size >= 16 && g.size % g.align == 0);
            SL_REQUIRE((size_t)g.num * g.size + (array_on_slab ? g.num : 0) + g.left == slab);
            SL_REQUIRE(g.colour == g.left / g.colour_off);
            SL_REQUIRE(g.waste == slab - (size_t)g.num * g.size + g.off_cache_size);
            SL_REQUIRE(g.freelist_size == g.num);
            size_t left_without_array;
            bool as_many = sl_slab_cache_estimate(g.order, g.size, true, &left_without_array) == g.num;
            if (g.mgmt == SL_SLAB_NORMAL_LEFTOVER || g.mgmt == SL_SLAB_NORMAL)
                SL_REQUIRE(as_many == (g.mgmt == SL_SLAB_NORMAL_LEFTOVER));
            if (g.mgmt == SL_SLAB_OBJFREELIST)
                SL_REQUIRE(rules == 1 && g.num <= size && !(flags & (SL_SLAB_CTOR | SL_SLAB_TYPESAFE_RCU)));
            if (g.mgmt == SL_SLAB_OFF) {
                SL_REQUIRE(!(flags & SL_SLAB_NOLEAKTRACE));
                SL_REQUIRE(g.off_cache_size <= size / 2);
                SL_REQUIRE(g.left < g.num);
            }
        }
    }
}

static void test_caches_parse(void)
{
    sl_slab_spec_list l = {0};
    char err[128];
    const char *ok =
        "# comment\n\n  inode 600 align=64 ctor reclaim  # trailing\r\nsock 1024 rcu hwcache\nx 8 noleaktrace";
    SL_REQUIRE(sl_slab_caches_parse(ok, strlen(ok), &l, err, sizeof err) == SL_OK);
    SL_REQUIRE(l.n == 3);
    SL_CHECK(!strcmp(l.v[0].name, "inode"));
    SL_CHECK_EQ(l.v[0].object_size, 600);
    SL_CHECK_EQ(l.v[0].align, 64);
    SL_CHECK_EQ(l.v[0].flags, SL_SLAB_CTOR | SL_SLAB_RECLAIM);
    SL_CHECK_EQ(l.v[1].flags, SL_SLAB_TYPESAFE_RCU | SL_SLAB_HWCACHE_ALIGN);
    SL_CHECK_EQ(l.v[2].flags, SL_SLAB_NOLEAKTRACE);
    sl_slab_spec_list_free(&l);

    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {"a 10\nb\n", "line 2: expected"},
        {"a 0\n", "line 1: object size"},
        {"a 4194305\n", "line 1: object size"},
        {"a 12x\n", "line 1: object size"},
        {"a 99999999999999999999\n", "line 1: object size"},
        {"a 64 align=48\n", "line 1: align"},
        {"a 64 align=\n", "line 1: unknown field"},
        {"\n\na 64 shiny\n", "line 3: unknown field 'shiny'"},
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        SL_CHECK_EQ(sl_slab_caches_parse(bad[i].text, strlen(bad[i].text), &l, err, sizeof err), SL_EINVAL);
        SL_CHECK(!strncmp(err, bad[i].msg, strlen(bad[i].msg)));
        sl_slab_spec_list_free(&l);
    }
}

/* The path of tests/fixtures/slab/<name>. */
static void fixture_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s", __FILE__);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, "/../../tests/fixtures/slab/%s", name);
}

/* The whole file, NUL-terminated (malloc'd), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = 0;
    *len = n;
    return buf;
}

/* The captured /sys/kernel/slab of the development machine (docs/slab.md), as slab-types counts it. */
static void test_fixture_totals(void)
{
    char dir[4096], err[256] = "";
    fixture_path(dir, sizeof dir, "sysfs-6.18");
    sl_slab_spec_list l = {0};
    int rc = sl_slab_caches_read_sysfs(dir, &l, err, sizeof err);
    if (rc != SL_OK)
        fprintf(stderr, "  %s\n", err);
    SL_REQUIRE(rc == SL_OK);
    SL_CHECK_EQ(l.n, 235);
    const sl_slab_spec *dentry = NULL;
    for (unsigned i = 0; i < l.n; i++) {
        if (!strcmp(l.v[i].name, "dentry"))
            dentry = &l.v[i];
        if (i)
            SL_CHECK(strcmp(l.v[i - 1].name, l.v[i].name) < 0);
    }
    SL_REQUIRE(dentry);
    SL_CHECK_EQ(dentry->object_size, 192);
    SL_CHECK_EQ(dentry->flags, SL_SLAB_RECLAIM);
    sl_slab_types t;
    sl_slab_variant v = {0};
    SL_REQUIRE(sl_slab_types_compute(&l, &v, 2, &t, err, sizeof err) == SL_OK);
    static const unsigned want[2][SL_SLAB_NMGMT] = {{0, 119, 50, 66}, {155, 39, 35, 6}};
    for (unsigned r = 0; r < 2; r++)
        for (unsigned m = 0; m < SL_SLAB_NMGMT; m++)
            SL_CHECK_EQ(t.totals[r][m], want[r][m]);
    SL_CHECK_EQ(t.compared, 0); /* a SLUB kernel says nothing of SLAB's choices */
    sl_slab_types_free(&t);
    sl_slab_spec_list_free(&l);
}

/*
 * /proc/slabinfo of a Linux 5.4.54 SLAB kernel (tests/fixtures/slab/README.md):
 * order, objects per slab and tunables as that kernel chose them, against
 * the model for 5.4.  The six caches that differ are the ones the file
 * cannot describe: RECLAIM_ACCOUNT caches (first acceptable order), and
 * objects smaller than their buffer or with a constructor (no OBJFREELIST).
 */
static void test_slabinfo_slab_kernel(void)
{
    char path[4096], err[256] = "";
    size_t len;
    fixture_path(path, sizeof path, "slabinfo-5.4.54-slab.txt");
    char *text = slurp(path, &len);
    SL_REQUIRE(text);
    sl_slab_spec_list l = {0};
    int rc = sl_slab_slabinfo_parse(text, len, &l, err, sizeof err);
    free(text);
    if (rc != SL_OK)
        fprintf(stderr, "  %s\n", err);
    SL_REQUIRE(rc == SL_OK);
    SL_CHECK_EQ(l.n, 175);
    SL_REQUIRE(l.reported);
    SL_CHECK(!strcmp(l.v[0].name, "nfs_direct_cache"));
    SL_CHECK_EQ(l.v[0].object_size, 224);
    SL_CHECK_EQ(l.reported[0].num, 18);
    SL_CHECK_EQ(l.reported[0].limit, 120);
    SL_CHECK(!strcmp(l.v[13].name, "raid6-md0"));
    SL_CHECK_EQ(l.reported[13].order, 1);
    SL_CHECK_EQ(l.reported[13].shared, 0);
    sl_slab_types t;
    sl_slab_variant v = {.kernel = SL_SLAB_KERNEL(5, 4)};
    SL_REQUIRE(sl_slab_types_compute(&l, &v, 2, &t, err, sizeof err) == SL_OK);
    SL_CHECK_EQ(t.compared, 175);
    SL_CHECK_EQ(t.matched, 173);
    /* The two whose object size slabinfo hides (a 64-byte buffer for a smaller, cache-aligned object). */
    static const char *const differ[] = {"iommu_iova", "fs_cache"};
    unsigned found = 0;
    for (unsigned i = 0; i < l.n; i++) {
        bool expected = false;
        for (unsigned k = 0; k < 2; k++)
            expected |= !strcmp(l.v[i].name, differ[k]);
        SL_CHECK_EQ(t.match[i], !expected);
        found += expected;
        /* The four whose creation flags the kernel's source names get them by name, and match. */
        SL_CHECK_EQ(l.v[i].flags, sl_slab_known_flags(l.v[i].name));
    }
    SL_CHECK_EQ(found, 2);
    SL_CHECK_EQ(sl_slab_known_flags("anon_vma"), SL_SLAB_TYPESAFE_RCU | SL_SLAB_CTOR);
    SL_CHECK_EQ(sl_slab_known_flags("dentry"), 0u);
    char *json = sl_slab_types_json(&l, &t, "5.4.54", 3);
    SL_REQUIRE(json);
    SL_CHECK(strstr(json, "\"kernel\":\"5.4\"") != NULL);
    SL_CHECK(strstr(json, "{\"name\":\"kmalloc-128\",\"object_size\":128") != NULL);
    SL_CHECK(strstr(json, "\"kernel\":{\"order\":0,\"objs_per_slab\":32,\"limit\":120,\"batchcount\":60,"
                          "\"shared\":8},\"match\":true}") != NULL);
    SL_CHECK(strstr(json, "\"compared\":175,\"matched\":173}") != NULL);
    free(json);
    sl_slab_types_free(&t);
    sl_slab_spec_list_free(&l);

    /* A SLUB kernel's file (this machine's): no tunables, so nothing to compare. */
    fixture_path(path, sizeof path, "slabinfo-6.18-slub.txt");
    text = slurp(path, &len);
    SL_REQUIRE(text);
    SL_CHECK_EQ(sl_slab_slabinfo_parse(text, len, &l, err, sizeof err), SL_OK);
    free(text);
    SL_CHECK_EQ(l.n, 235);
    SL_CHECK(l.reported == NULL);
    SL_REQUIRE(sl_slab_types_compute(&l, &v, 2, &t, err, sizeof err) == SL_OK);
    json = sl_slab_types_json(&l, &t, "6.18", 2);
    SL_REQUIRE(json);
    SL_CHECK(strstr(json, "\"kernel\":null,\"match\":null}") != NULL);
    SL_CHECK(strstr(json, "\"before\"") == NULL);
    free(json);
    sl_slab_types_free(&t);
    sl_slab_spec_list_free(&l);
}

static void test_slabinfo_errors(void)
{
#define HDR "slabinfo - version: 2.1\n# name <active_objs> ...\n"
#define LINE(name, size, per, pages, limit)                                                                            \
    name " 1 2 " size " " per " " pages " : tunables " limit " 60 8 : slabdata 1 1 0\n"
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {"", "line 1: not a /proc/slabinfo file (it is empty)"},
        {"\n\n", "line 1: not a /proc/slabinfo file (it is empty)"},
        {"name 1 2 3\n", "line 1: not a /proc/slabinfo file"},
        {"slabinfo - version: 2.0\n", "line 1: slabinfo version '2.0'; only 2.1 is read"},
        {HDR, "line 2: no caches after the header"},
        {HDR "dentry 1 2 192 21 1\n", "line 3: expected NAME and 5 numbers"},
        {HDR "dentry 1 2 192 21 1 : tunables 120 60 8 : slabinfo 1 1 0\n", "line 3: expected NAME"},
        {HDR "dentry 1 2 192 21 1 : tunables 120 60 8 : slabdata 1 1 0 extra\n", "line 3: expected NAME"},
        {HDR LINE("dentry", "19x", "21", "1", "120"), "line 3: objsize '19x' is not a number"},
        {HDR LINE("dentry", "192", "21", "1", "-1"), "line 3: limit '-1' is not a number"},
        {HDR LINE("dentry", "0", "21", "1", "120"), "line 3: objsize 0 is outside 1 .. 4194304"},
        {HDR LINE("dentry", "4194305", "1", "1024", "1"), "line 3: objsize 4194305 is outside"},
        {HDR LINE("dentry", "192", "21", "3", "120"), "line 3: pagesperslab 3 is not a power of two up to 1024"},
        {HDR LINE("dentry", "192", "21", "2048", "120"), "line 3: pagesperslab 2048"},
        {HDR LINE("a", "192", "21", "1", "120") "\n" LINE("b", "64", "64", "1", "0"),
         "line 5: tunables are 0 on line 5 but not on line 3"},
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sl_slab_spec_list l = {0};
        char err[256] = "";
        SL_CHECK_EQ(sl_slab_slabinfo_parse(bad[i].text, strlen(bad[i].text), &l, err, sizeof err), SL_EINVAL);
        if (strncmp(err, bad[i].msg, strlen(bad[i].msg)))
            fprintf(stderr, "  case %u: got '%s'\n", i, err);
        SL_CHECK(!strncmp(err, bad[i].msg, strlen(bad[i].msg)));
        SL_CHECK_EQ(l.n, 0);
        sl_slab_spec_list_free(&l);
    }
    /* Statistics groups after slabdata (CONFIG_DEBUG_SLAB) are read past; CRLF line ends too. */
    const char *ok = "slabinfo - version: 2.1\r\ndentry 1 2 192 21 1 : tunables 120 60 8 : slabdata 1 1 0 "
                     ": globalstat 1 2 3 4 5 6 7 8 9 : cpustat 1 2 3 4\r\n";
    sl_slab_spec_list l = {0};
    char err[256] = "";
    SL_CHECK_EQ(sl_slab_slabinfo_parse(ok, strlen(ok), &l, err, sizeof err), SL_OK);
    SL_CHECK_EQ(l.n, 1);
    SL_CHECK(l.reported && l.reported[0].batchcount == 60);
    sl_slab_spec_list_free(&l);
#undef LINE
#undef HDR
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_sysfs_reader(void)
{
    char dir[] = "/tmp/slablab-sysfs-XXXXXX", p[256], err[256];
    SL_REQUIRE(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/real", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/real/object_size", dir);
    write_file(p, "200\n");
    snprintf(p, sizeof p, "%s/real/ctor", dir);
    write_file(p, "init_once+0x0/0x40\n");
    snprintf(p, sizeof p, "%s/real/destroy_by_rcu", dir);
    write_file(p, "1\n");
    snprintf(p, sizeof p, "%s/alias", dir);
    SL_CHECK(symlink("real", p) == 0);
    sl_slab_spec_list l = {0};
    SL_CHECK_EQ(sl_slab_caches_read_sysfs(dir, &l, err, sizeof err), SL_OK);
    SL_REQUIRE(l.n == 1);
    SL_CHECK(!strcmp(l.v[0].name, "real"));
    SL_CHECK_EQ(l.v[0].flags, SL_SLAB_CTOR | SL_SLAB_TYPESAFE_RCU);
    SL_CHECK_EQ(l.v[0].align, 0);
    sl_slab_spec_list_free(&l);

    snprintf(p, sizeof p, "%s/broken", dir);
    mkdir(p, 0700);
    SL_CHECK_EQ(sl_slab_caches_read_sysfs(dir, &l, err, sizeof err), SL_EINVAL);
    SL_CHECK(strstr(err, "broken/object_size") != NULL);
    sl_slab_spec_list_free(&l);
    SL_CHECK_EQ(sl_slab_caches_read_sysfs("/nonexistent/slab", &l, err, sizeof err), SL_EINVAL);

    snprintf(p, sizeof p, "%s/broken", dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/alias", dir);
    unlink(p);
    const char *files[] = {"object_size", "ctor", "destroy_by_rcu"};
    for (unsigned i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/real/%s", dir, files[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/real", dir);
    rmdir(p);
    rmdir(dir);
}

int main(void)
{
    table(&before, SL_SLAB_RULES_BEFORE, 0, false);
    table(&after, SL_SLAB_RULES_AFTER, 0, false);
    table(&before410, SL_SLAB_RULES_BEFORE, SL_SLAB_KERNEL(4, 10), false);
    table(&after410, SL_SLAB_RULES_AFTER, SL_SLAB_KERNEL(4, 10), false);
    SL_RUN(test_cache_estimate);
    SL_RUN(test_kmalloc_index);
    SL_RUN(test_kmalloc_caches);
    SL_RUN(test_boot_order);
    SL_RUN(test_normal_leftover_by_layout);
    SL_RUN(test_kernel_versions);
    SL_RUN(test_tunables);
    SL_RUN(test_ctor_and_rcu_refuse_objfreelist);
    SL_RUN(test_order_rules);
    SL_RUN(test_rejects_bad_specs);
    SL_RUN(test_geometry_invariants);
    SL_RUN(test_caches_parse);
    SL_RUN(test_fixture_totals);
    SL_RUN(test_slabinfo_slab_kernel);
    SL_RUN(test_slabinfo_errors);
    SL_RUN(test_sysfs_reader);
    return sl_check_summary();
}
