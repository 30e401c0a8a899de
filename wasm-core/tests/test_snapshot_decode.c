/*
 * test_snapshot_decode.c - what `slablab snapshot` works out in user space
 * (cli/snapshot_decode.c), on records built here as the BPF program sends
 * them: hardened freelists decoded (ptr ^ s->random ^ swab(address stored
 * at)), each slab's base from the direct map's majority offset, a cycle and
 * a pointer leaving its slab reported and cut, torn records that were read
 * again dropped with their words, every object classed, and malformed
 * records refused.  Runs in every build (no kernel needed).
 */
#include "check.h"

#include "../cli/snapshot_decode.c"

#define PAGE 4096u
#define VMEMMAP 0xffffea0000000000ull
#define DIRECT 0xffff888000000000ull
#define RANDOM 0x1234567890abcdefull
#define SIZE 64u
#define OFFSET 32u
#define PER_SLAB 64u

static uint64_t slab_of_pfn(uint64_t pfn) { return VMEMMAP + pfn * 64; }
static uint64_t obj(uint64_t pfn, unsigned i) { return DIRECT + pfn * PAGE + (uint64_t)i * SIZE; }
/* The stored form of `next` in the object at `at` (freelist_ptr_encode). */
static uint64_t encode(uint64_t at, uint64_t next) { return next ^ RANDOM ^ __builtin_bswap64(at + OFFSET); }

static sl_snapshot new_snapshot(bool objects)
{
    sl_snapshot s;
    memset(&s, 0, sizeof s);
    s.nr_cpus = 2;
    s.nr_nodes = 1;
    s.page_size = PAGE;
    s.opt.max_slabs = 100;
    s.opt.objects = objects;
    struct snap_cache c;
    memset(&c, 0, sizeof c);
    c.hdr.type = SNAP_REC_CACHE;
    c.hdr.size = sizeof c;
    c.addr = 0xffff888100045900ull;
    c.size = SIZE;
    c.object_size = SIZE;
    c.offset = OFFSET;
    c.oo = PER_SLAB; /* order 0 */
    c.min = PER_SLAB;
    c.random = RANDOM;
    c.features = SNAP_FEAT_CPU_SLAB | SNAP_FEAT_HARDENED;
    c.page_struct_size = 64;
    snprintf(c.name, sizeof c.name, "test-64");
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &c, sizeof c), 0);
    return s;
}

/* Sends the chain head -> objs[0..n) (each stored in the one before) as WORDS, then the SLAB record. */
static void add_slab(sl_snapshot *s, uint64_t pfn, const unsigned *chain, size_t n, uint64_t last_next, unsigned inuse,
                     uint32_t where, uint32_t flags, uint32_t end)
{
    struct snap_words w;
    memset(&w, 0, sizeof w);
    w.hdr.type = SNAP_REC_WORDS;
    for (size_t i = 0; i < n; i++)
        w.w[w.n++] = encode(obj(pfn, chain[i]), i + 1 < n ? obj(pfn, chain[i + 1]) : last_next);
    w.hdr.size = (uint32_t)(offsetof(struct snap_words, w) + w.n * 8);
    if (n)
        SL_CHECK_EQ(sl_snapshot_add_record(s, &w, w.hdr.size), 0);
    struct snap_slab r;
    memset(&r, 0, sizeof r);
    r.hdr.type = SNAP_REC_SLAB;
    r.hdr.size = sizeof r;
    r.where = where;
    r.addr = slab_of_pfn(pfn);
    r.freelist = n ? obj(pfn, chain[0]) : 0;
    r.counters = inuse | ((uint64_t)PER_SLAB << 16) | (where == SNAP_AT_CPU_SLAB ? 1ull << 31 : 0);
    r.flags = flags;
    r.end = end;
    r.attempts = 1;
    SL_CHECK_EQ(sl_snapshot_add_record(s, &r, sizeof r), 0);
}

static void end_cache(sl_snapshot *s)
{
    struct snap_end_rec e;
    memset(&e, 0, sizeof e);
    e.hdr.type = SNAP_REC_END;
    e.hdr.size = sizeof e;
    SL_CHECK_EQ(sl_snapshot_add_record(s, &e, sizeof e), 0);
}

static void test_hardened_freelist_and_base(void)
{
    sl_snapshot s = new_snapshot(true);
    const unsigned chain[] = {5, 2, 9};
    add_slab(&s, 0x400, chain, 3, 0, PER_SLAB - 3, SNAP_AT_NODE_PARTIAL, 0, SNAP_END_NULL);
    const unsigned other[] = {63};
    add_slab(&s, 0x1234, other, 1, 0, PER_SLAB - 1, SNAP_AT_NODE_PARTIAL, 0, SNAP_END_NULL);
    end_cache(&s);
    sl_snapshot_decode(&s);
    SL_REQUIRE(s.ncaches == 1 && s.caches[0].nslabs == 2);
    SL_CHECK_EQ(s.map_ratio, 64);
    SL_CHECK(s.map_offset == DIRECT - VMEMMAP * 64);
    SL_CHECK_EQ(s.map_samples, 2);
    SL_CHECK_EQ(s.map_agreeing, 2);
    sl_snap_slab *sl = &s.caches[0].slabs[0];
    SL_CHECK(sl->base == obj(0x400, 0));
    SL_CHECK_EQ(sl->fl.objects.n, 3);
    for (size_t i = 0; i < 3 && i < sl->fl.objects.n; i++)
        SL_CHECK(sl->fl.objects.w[i] == obj(0x400, chain[i]));
    SL_CHECK_EQ(sl->fl.error[0], '\0');
    SL_CHECK_EQ(sl->inuse, PER_SLAB - 3);
    SL_CHECK_EQ(sl->objects, PER_SLAB);
    SL_REQUIRE(sl->state && strlen(sl->state) == PER_SLAB);
    for (unsigned i = 0; i < PER_SLAB; i++)
        SL_CHECK_EQ(sl->state[i], (i == 5 || i == 2 || i == 9) ? SL_SNAP_OBJ_FREE : SL_SNAP_OBJ_ALLOCATED);
    SL_CHECK(s.caches[0].slabs[1].base == obj(0x1234, 0));
    sl_snapshot_free(&s);
}

static void test_cycle_and_stray_pointer(void)
{
    sl_snapshot s = new_snapshot(false);
    /* 1 -> 3 -> 1 -> ...: the program stops at its bound (objects + 1 words) and says so. */
    unsigned cycle[PER_SLAB + 1];
    for (unsigned i = 0; i <= PER_SLAB; i++)
        cycle[i] = i % 2 ? 3 : 1;
    add_slab(&s, 0x500, cycle, PER_SLAB + 1, obj(0x500, 3), 10, SNAP_AT_NODE_PARTIAL, 0, SNAP_END_BOUND);
    /* 7 -> an address in another page: the program did not follow it. */
    const unsigned stray[] = {7};
    add_slab(&s, 0x600, stray, 1, obj(0x999, 0), 10, SNAP_AT_NODE_PARTIAL, 0, SNAP_END_OUTSIDE);
    /* A good slab, so the direct map has a majority. */
    const unsigned good[] = {0, 1};
    add_slab(&s, 0x700, good, 2, 0, PER_SLAB - 2, SNAP_AT_NODE_PARTIAL, 0, SNAP_END_NULL);
    end_cache(&s);
    sl_snapshot_decode(&s);
    SL_REQUIRE(s.caches[0].nslabs == 3);
    sl_snap_freelist *c = &s.caches[0].slabs[0].fl;
    SL_CHECK_EQ(c->objects.n, 2); /* cut at the first repeat */
    SL_CHECK(strstr(c->error, "repeated: a cycle") != NULL);
    sl_snap_freelist *o = &s.caches[0].slabs[1].fl;
    SL_CHECK_EQ(o->objects.n, 1);
    SL_CHECK(strstr(o->error, "leaves the slab") != NULL);
    char want[32];
    snprintf(want, sizeof want, "0x%llx", (unsigned long long)obj(0x999, 0));
    SL_CHECK(strstr(o->error, want) != NULL);
    SL_CHECK_EQ(s.caches[0].slabs[2].fl.error[0], '\0');
    sl_snapshot_free(&s);
}

static void test_torn_retry_dropped(void)
{
    sl_snapshot s = new_snapshot(false);
    const unsigned first[] = {1, 2, 3};
    add_slab(&s, 0x800, first, 3, 0, PER_SLAB - 3, SNAP_AT_NODE_PARTIAL, SNAP_F_RETRY, SNAP_END_NULL);
    const unsigned second[] = {4};
    add_slab(&s, 0x800, second, 1, 0, PER_SLAB - 1, SNAP_AT_NODE_PARTIAL, SNAP_F_TORN, SNAP_END_NULL);
    end_cache(&s);
    sl_snapshot_decode(&s);
    SL_REQUIRE(s.caches[0].nslabs == 1);
    SL_CHECK_EQ(s.caches[0].slabs[0].fl.objects.n, 1);
    SL_CHECK(s.caches[0].slabs[0].fl.objects.w[0] == obj(0x800, 4));
    SL_CHECK(s.caches[0].slabs[0].rec.flags & SNAP_F_TORN);
    sl_snapshot_free(&s);
}

static void test_cpu_freelist_and_sheaf_classes(void)
{
    sl_snapshot s = new_snapshot(true);
    /* CPU 1's freelist: 10 -> 11 in its CPU slab (pfn 0x900), whose own freelist is empty. */
    struct snap_words w;
    memset(&w, 0, sizeof w);
    w.hdr.type = SNAP_REC_WORDS;
    w.w[w.n++] = encode(obj(0x900, 10), obj(0x900, 11));
    w.w[w.n++] = encode(obj(0x900, 11), 0);
    w.hdr.size = (uint32_t)(offsetof(struct snap_words, w) + w.n * 8);
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &w, w.hdr.size), 0);
    struct snap_cpu k;
    memset(&k, 0, sizeof k);
    k.hdr.type = SNAP_REC_CPU;
    k.hdr.size = sizeof k;
    k.cpu = 1;
    k.attempts = 1;
    k.tid = k.tid_again = 0x101;
    k.freelist = k.freelist_again = obj(0x900, 10);
    k.slab = slab_of_pfn(0x900);
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &k, sizeof k), 0);
    add_slab(&s, 0x900, NULL, 0, 0, PER_SLAB, SNAP_AT_CPU_SLAB, 0, SNAP_END_NULL);
    s.caches[0].slabs[0].rec.owner = 1;
    /* A node partial slab (so the direct map is found) with one object in CPU 0's main sheaf. */
    const unsigned free_ones[] = {0};
    add_slab(&s, 0xa00, free_ones, 1, 0, PER_SLAB - 1, SNAP_AT_NODE_PARTIAL, 0, SNAP_END_NULL);
    memset(&w, 0, sizeof w);
    w.hdr.type = SNAP_REC_WORDS;
    w.w[w.n++] = obj(0xa00, 40);
    w.w[w.n++] = obj(0xb00, 1); /* in a slab that is not listed (a full one): counted, not classed */
    w.hdr.size = (uint32_t)(offsetof(struct snap_words, w) + w.n * 8);
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &w, w.hdr.size), 0);
    struct snap_sheaf sh;
    memset(&sh, 0, sizeof sh);
    sh.hdr.type = SNAP_REC_SHEAF;
    sh.hdr.size = sizeof sh;
    sh.where = SNAP_AT_SHEAF_MAIN;
    sh.size = 2;
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &sh, sizeof sh), 0);
    end_cache(&s);
    sl_snapshot_decode(&s);
    sl_snap_cache *c = &s.caches[0];
    SL_CHECK_EQ(c->cpus[1].fl.objects.n, 2);
    SL_CHECK(c->cpus[1].present && !c->cpus[0].present);
    SL_REQUIRE(c->nslabs == 2 && c->slabs[0].state && c->slabs[1].state);
    SL_CHECK_EQ(c->slabs[0].state[10], SL_SNAP_OBJ_CPU);
    SL_CHECK_EQ(c->slabs[0].state[11], SL_SNAP_OBJ_CPU);
    SL_CHECK_EQ(c->slabs[0].state[12], SL_SNAP_OBJ_ALLOCATED);
    SL_CHECK_EQ(c->slabs[0].frozen, 1);
    SL_CHECK_EQ(c->slabs[1].state[0], SL_SNAP_OBJ_FREE);
    SL_CHECK_EQ(c->slabs[1].state[40], SL_SNAP_OBJ_SHEAF);
    SL_CHECK_EQ(c->nsheaves, 1);
    SL_CHECK_EQ(c->sheaves[0].objects.n, 2);
    sl_snapshot_free(&s);
}

static void test_malformed_records_refused(void)
{
    sl_snapshot s;
    memset(&s, 0, sizeof s);
    s.nr_cpus = 2;
    s.page_size = PAGE;
    struct snap_slab r;
    memset(&r, 0, sizeof r);
    r.hdr.type = SNAP_REC_SLAB;
    r.hdr.size = sizeof r;
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &r, sizeof r), -1); /* before any cache */
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &r, 4), -1);        /* shorter than a header */
    s = new_snapshot(false);
    r.hdr.size = sizeof r + 8;
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &r, sizeof r), -1); /* claims more than it has */
    struct snap_words w;
    memset(&w, 0, sizeof w);
    w.hdr.type = SNAP_REC_WORDS;
    w.hdr.size = sizeof w;
    w.n = SNAP_WORDS_MAX + 1;
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &w, sizeof w), -1);
    struct snap_cpu k;
    memset(&k, 0, sizeof k);
    k.hdr.type = SNAP_REC_CPU;
    k.hdr.size = sizeof k;
    k.cpu = 7; /* only 2 CPUs */
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &k, sizeof k), -1);
    struct snap_hdr h = {.type = 99, .size = sizeof h};
    SL_CHECK_EQ(sl_snapshot_add_record(&s, &h, sizeof h), -1);
    sl_snapshot_free(&s);
}

int main(void)
{
    SL_RUN(test_hardened_freelist_and_base);
    SL_RUN(test_cycle_and_stray_pointer);
    SL_RUN(test_torn_retry_dropped);
    SL_RUN(test_cpu_freelist_and_sheaf_classes);
    SL_RUN(test_malformed_records_refused);
    return sl_check_summary();
}
