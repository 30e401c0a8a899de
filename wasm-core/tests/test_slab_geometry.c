/*
 * test_slab_geometry.c - SLAB cache geometry against hand-computed cases of
 * mm/slab.c (4 KiB pages, 1-byte freelist_idx_t, slab_max_order 1), the
 * --caches parser, the sysfs reader, and the captured 6.18 fixture.
 */
#include "check.h"

#include "../src/slab/slab.h"

#include <sys/stat.h>
#include <unistd.h>

static sl_slab_kmalloc_table before, after;

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

/* The kmalloc caches as the kernel created them at boot, both rules. */
static void test_kmalloc_caches(void)
{
    const sl_slab_geometry *a = after.g, *b = before.g;
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
    SL_CHECK_EQ(nb[SL_SLAB_OFF], 17);
    SL_CHECK_EQ(na[SL_SLAB_OBJFREELIST], 19);
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
    const char *ok = "# comment\n\n  inode 600 align=64 ctor reclaim  # trailing\r\nsock 1024 rcu hwcache\nx 8 noleaktrace";
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

static void fixture_dir(char *buf, size_t len)
{
    snprintf(buf, len, "%s", __FILE__);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, "/../../tests/fixtures/slab/sysfs-6.18");
}

/* The captured /sys/kernel/slab of the development machine (docs/slab.md). */
static void test_fixture_totals(void)
{
    char dir[4096], err[256] = "";
    fixture_dir(dir, sizeof dir);
    sl_slab_spec_list l = {0};
    int rc = sl_slab_caches_read_sysfs(dir, &l, err, sizeof err);
    if (rc != SL_OK)
        fprintf(stderr, "  %s\n", err);
    SL_REQUIRE(rc == SL_OK);
    SL_CHECK_EQ(l.n, 235);
    unsigned tot[2][SL_SLAB_NMGMT] = {{0}};
    const sl_slab_spec *dentry = NULL;
    for (unsigned i = 0; i < l.n; i++) {
        if (!strcmp(l.v[i].name, "dentry"))
            dentry = &l.v[i];
        if (i)
            SL_CHECK(strcmp(l.v[i - 1].name, l.v[i].name) < 0);
        for (unsigned r = 0; r < 2; r++) {
            sl_slab_geometry g;
            SL_REQUIRE(sl_slab_geometry_compute(&l.v[i], r ? &after : &before, &g) == SL_OK);
            tot[r][g.mgmt]++;
        }
    }
    SL_REQUIRE(dentry);
    SL_CHECK_EQ(dentry->object_size, 192);
    SL_CHECK_EQ(dentry->flags, SL_SLAB_RECLAIM);
    SL_CHECK_EQ(tot[0][0], 0);
    SL_CHECK_EQ(tot[0][1], 103);
    SL_CHECK_EQ(tot[0][2], 66);
    SL_CHECK_EQ(tot[0][3], 66);
    SL_CHECK_EQ(tot[1][0], 155);
    SL_CHECK_EQ(tot[1][1], 37);
    SL_CHECK_EQ(tot[1][2], 37);
    SL_CHECK_EQ(tot[1][3], 6);
    sl_slab_spec_list_free(&l);
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
    sl_slab_kmalloc_table_init(&before, SL_SLAB_RULES_BEFORE);
    sl_slab_kmalloc_table_init(&after, SL_SLAB_RULES_AFTER);
    SL_RUN(test_cache_estimate);
    SL_RUN(test_kmalloc_index);
    SL_RUN(test_kmalloc_caches);
    SL_RUN(test_ctor_and_rcu_refuse_objfreelist);
    SL_RUN(test_order_rules);
    SL_RUN(test_rejects_bad_specs);
    SL_RUN(test_geometry_invariants);
    SL_RUN(test_caches_parse);
    SL_RUN(test_fixture_totals);
    SL_RUN(test_sysfs_reader);
    return sl_check_summary();
}
