/*
 * test_slub_seed.c - sl_slub_seed (seed.c): a cache seeded from a described
 * state holds exactly that state (each list's slabs in order, each freelist
 * in order, the counters), validate() passes on it, the model goes on from
 * it (an allocation takes the CPU freelist's head, a free returns a seeded
 * object), in the eras whose lists differ (6.17, 6.6's frozen CPU partial
 * slabs, 7.0 without CPU slabs); and each kind of bad description is refused
 * with its own message, leaving the cache empty.  In the eras with sheaves
 * (6.18 opt-in, 7.0) the main, spare and rcu_free sheaves and the barn's full
 * sheaves hold the described objects in order, and bad sheaves are refused.
 */
#include "check.h"

#include "../src/slub/sheaves.h"
#include "../src/slub/slub_internal.h"

typedef struct world {
    sl_page_zone zone;
    sl_slub_cache *s;
} world;

static char msg[256];

/* A tracked cache of 256-byte objects (16 per order-0 slab) for 2 CPUs in kernel major.minor. */
static bool world_open(world *w, unsigned major, unsigned minor, size_t arena)
{
    memset(w, 0, sizeof *w);
    sl_slub_config cfg = {.object_size = 256, .flags = SL_SLUB_HWCACHE_ALIGN, .track = 1, .seed = 1};
    cfg.kernel.version = (sl_slub_kversion){(uint8_t)major, (uint8_t)minor};
    return sl_page_zone_init(&w->zone, arena, NULL) == SL_OK &&
           sl_slub_cache_create(&w->zone, NULL, 2, &cfg, &w->s) == SL_OK;
}

static void world_close(world *w)
{
    sl_slub_cache_destroy(w->s);
    sl_page_zone_destroy(&w->zone);
}

static int valid(world *w)
{
    int rc = sl_slub_validate(w->s, msg, sizeof msg);
    if (rc)
        fprintf(stderr, "  validate: %s\n", msg);
    return rc;
}

/* True if the chain from `head` is slab's objects idx[0..n-1] in that order, and ends there. */
static bool chain_is(world *w, const sli_slub_slab *slab, void *head, const uint32_t *idx, uint32_t n)
{
    void *o = head;
    for (uint32_t k = 0; k < n; k++, o = sli_get_fp(w->s, o))
        if (o != sli_obj_at(w->s, slab, idx[k]))
            return false;
    return o == NULL;
}

/* The description most tests use: every list, 16 objects per slab. */
static const uint32_t cpu0_slab_free[] = {5, 3}, cpu0_cpu_free[] = {7, 1, 9};
static const uint32_t p1a[] = {0, 15, 2}, p1b[] = {8};
static const uint32_t n0[] = {4, 6}, n1[] = {11, 10, 12, 13}, n2[] = {14};
static sl_slub_seed_slab slabs[] = {
    {.list = SL_SLUB_SEED_CPU_SLAB,
     .cpu = 0,
     .objects = 16,
     .inuse = 14,
     .nfree = 2,
     .free = cpu0_slab_free,
     .ncpu_free = 3,
     .cpu_free = cpu0_cpu_free},
    {.list = SL_SLUB_SEED_NODE_PARTIAL, .objects = 16, .inuse = 14, .nfree = 2, .free = n0},
    {.list = SL_SLUB_SEED_CPU_PARTIAL, .cpu = 1, .objects = 16, .inuse = 13, .nfree = 3, .free = p1a},
    {.list = SL_SLUB_SEED_NODE_PARTIAL, .objects = 16, .inuse = 12, .nfree = 4, .free = n1},
    {.list = SL_SLUB_SEED_CPU_PARTIAL, .cpu = 1, .objects = 16, .inuse = 15, .nfree = 1, .free = p1b},
    {.list = SL_SLUB_SEED_NODE_PARTIAL, .objects = 16, .inuse = 15, .nfree = 1, .free = n2},
    {.list = SL_SLUB_SEED_FULL, .objects = 16, .inuse = 16},
};
#define NSLABS (sizeof slabs / sizeof slabs[0])

/* Checks w's lists and freelists against `slabs` as an era with CPU slabs seeds them. */
static void check_seeded(world *w, bool frozen_cpu_partial)
{
    sl_slub_cache *s = w->s;
    sli_slub_cpu *c0 = &s->cpu[0], *c1 = &s->cpu[1];
    SL_REQUIRE(c0->slab && !s->cpu[1].slab && !c0->partial);
    SL_CHECK(sli_frozen(c0->slab->fc.hi));
    SL_CHECK_EQ(sli_inuse(c0->slab->fc.hi), 14);
    SL_CHECK(chain_is(w, c0->slab, (void *)c0->slab->fc.lo, cpu0_slab_free, 2));
    SL_CHECK(chain_is(w, c0->slab, (void *)sl_dw_read(&c0->fl_tid).lo, cpu0_cpu_free, 3));
    /* CPU 1's partial list: p1a then p1b, the head counting both. */
    sli_slub_slab *a = c1->partial;
    SL_REQUIRE(a && a->next && !a->next->next);
    SL_CHECK_EQ(a->slabs, 2);
    SL_CHECK_EQ(a->next->slabs, 1);
    SL_CHECK(chain_is(w, a, (void *)a->fc.lo, p1a, 3));
    SL_CHECK(chain_is(w, a->next, (void *)a->next->fc.lo, p1b, 1));
    SL_CHECK_EQ(sli_frozen(a->fc.hi), frozen_cpu_partial);
    SL_CHECK_EQ(sli_inuse(a->fc.hi), 13);
    /* The node list: n0, n1, n2. */
    const uint32_t *want[] = {n0, n1, n2};
    uint32_t len[] = {2, 4, 1}, k = 0;
    for (sli_slub_slab *p = sli_get_node(s, 0)->partial_head; p; p = p->lnext, k++) {
        SL_REQUIRE(k < 3);
        SL_CHECK(chain_is(w, p, (void *)p->fc.lo, want[k], len[k]));
        SL_CHECK_EQ(sli_inuse(p->fc.hi), 16 - len[k]);
    }
    SL_CHECK_EQ(k, 3);
    SL_CHECK_EQ(sl_slub_nr_partial(s), 3);
}

static void test_seed_6_17(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 6, 17, 4u << 20));
    sl_slub_seed_desc d = {.nslabs = NSLABS, .slabs = slabs, .full_slabs = 5, .max_full = 2};
    SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), 2);
    SL_CHECK_EQ(valid(&w), SL_OK);
    check_seeded(&w, false);
    /* 6 partial and CPU slabs, the listed full one, 2 of the 5 full slabs asked for (max_full). */
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 9);
    sl_slub_node_info ni;
    sl_slub_node_info_get(w.s, &ni);
    SL_CHECK_EQ(ni.total_objects, 9 * 16);
    SL_CHECK_EQ(ni.partial_free, 2 + 4 + 1);
    /* The model goes on from the seed: CPU 0 hands out its CPU freelist's head, object 7. */
    void *o;
    SL_REQUIRE(sl_slub_alloc(w.s, 0, &o) == SL_OK);
    SL_CHECK(o == sli_obj_at(w.s, w.s->cpu[0].slab, 7));
    /* An object the seed made allocated (object 0 of node slab n0) is freed, remotely, from CPU 1. */
    void *seeded = sli_obj_at(w.s, sli_get_node(w.s, 0)->partial_head, 0);
    SL_CHECK_EQ(sl_slub_free(w.s, 1, seeded), SL_OK);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_close(&w);
}

/* Before 6.8 a CPU partial slab is frozen; before 5.16 its pobjects count the chain's free objects. */
static void test_seed_6_6_and_5_15(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 6, 6, 4u << 20));
    sl_slub_seed_desc d = {.nslabs = NSLABS, .slabs = slabs, .full_slabs = 1, .max_full = 1};
    SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    check_seeded(&w, true);
    world_close(&w);
    SL_REQUIRE(world_open(&w, 5, 15, 4u << 20));
    SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), 1);
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_REQUIRE(w.s->cpu[1].partial);
    SL_CHECK_EQ(w.s->cpu[1].partial->pobjects, 3 + 1);
    /* Freeing into the chain works from the seed. */
    void *o;
    for (int i = 0; i < 8; i++)
        SL_CHECK_EQ(sl_slub_alloc(w.s, 1, &o), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_close(&w);
}

/* 7.0 has no per-CPU slab: node partial and full slabs seed, a CPU list is refused. */
static void test_seed_7_0(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 7, 0, 4u << 20));
    sl_slub_seed_desc d = {.nslabs = 3, .slabs = slabs + 3, .full_slabs = 0};
    SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), SL_EINVAL);
    SL_CHECK(strstr(msg, "no per-CPU slabs") != NULL);
    sl_slub_seed_slab node_only[] = {slabs[1], slabs[3], slabs[5], slabs[6]};
    d = (sl_slub_seed_desc){.nslabs = 4, .slabs = node_only, .full_slabs = 3, .max_full = 8};
    SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), 3);
    SL_CHECK_EQ(valid(&w), SL_OK);
    SL_CHECK_EQ(sl_slub_nr_partial(w.s), 3);
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 7);
    /* The first allocation takes the node list's first free object (through a sheaf's refill or not). */
    void *o;
    SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o), SL_OK);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_close(&w);
}

/* Seeds `bad` (one slab changed from slabs[]) into a fresh cache: refused with msg containing `says`. */
static void refused(const char *what, sl_slub_seed_slab bad, size_t at, const char *says)
{
    world w;
    SL_REQUIRE(world_open(&w, 6, 17, 4u << 20));
    sl_slub_seed_slab copy[NSLABS];
    memcpy(copy, slabs, sizeof copy);
    copy[at] = bad;
    sl_slub_seed_desc d = {.nslabs = NSLABS, .slabs = copy, .full_slabs = 2, .max_full = 2};
    int rc = sl_slub_seed(w.s, &d, msg, sizeof msg);
    if (rc != SL_EINVAL || !strstr(msg, says))
        fprintf(stderr, "  %s: rc %d, \"%s\" (wanted \"%s\")\n", what, rc, msg, says);
    SL_CHECK_EQ(rc, SL_EINVAL);
    SL_CHECK(strstr(msg, says) != NULL);
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_close(&w);
}

static void test_bad_descriptions(void)
{
    static const uint32_t outside[] = {4, 16}, twice[] = {4, 6, 4}, cross[] = {9, 3};
    sl_slub_seed_slab b;
    b = slabs[1], b.free = outside;
    refused("outside", b, 1, "outside the slab's 16 objects");
    b = slabs[3], b.nfree = 3, b.inuse = 13, b.free = twice;
    refused("repeated", b, 3, "object 4 is on its freelists twice");
    b = slabs[0], b.cpu_free = cross, b.ncpu_free = 2;
    refused("on both freelists", b, 0, "object 3 is on its freelists twice (cpu_free[1])");
    b = slabs[1], b.inuse = 13;
    refused("inuse disagrees", b, 1, "inuse 13 and 2 free objects do not make its 16");
    b = slabs[1], b.objects = 32, b.inuse = 30;
    refused("objects disagree", b, 1, "32 objects, but the cache's slabs hold 16");
    b = slabs[2], b.cpu = 2;
    refused("no such CPU", b, 2, "of CPU 2, but the cache has 2 CPUs");
    b = slabs[0];
    refused("two CPU slabs", b, 2, "a second CPU slab for CPU 0");
    b = slabs[1], b.ncpu_free = 3, b.cpu_free = cpu0_cpu_free;
    refused("CPU freelist elsewhere", b, 1, "a CPU freelist on a node partial slab");
    b = slabs[3], b.nfree = 0, b.inuse = 16;
    refused("partial without free", b, 3, "a node partial slab without free objects");
    b = slabs[6], b.nfree = 2, b.inuse = 14, b.free = n0;
    refused("full with free", b, 6, "a full slab with 2 free objects");
    b = slabs[5], b.list = 9;
    refused("unknown list", b, 5, "list 9 is none of");
    b = slabs[5], b.free = NULL;
    refused("length without objects", b, 5, "a freelist length without its objects");
}

/* A cache that has slabs, and an arena too small for the listed slabs, are refused; nothing changes. */
static void test_busy_and_no_room(void)
{
    world w;
    SL_REQUIRE(world_open(&w, 6, 17, 4u << 20));
    void *o;
    SL_REQUIRE(sl_slub_alloc(w.s, 0, &o) == SL_OK);
    sl_slub_seed_desc d = {.nslabs = NSLABS, .slabs = slabs};
    SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), SL_EBUSY);
    SL_CHECK(strstr(msg, "already has slabs") != NULL);
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 1);
    SL_CHECK_EQ(sl_slub_free(w.s, 0, o), SL_OK);
    world_close(&w);
    /* Four pages hold four of the seven listed slabs: refused, and the four given back. */
    SL_REQUIRE(world_open(&w, 6, 17, 4 * SL_PAGE_SIZE));
    SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), SL_ENOMEM);
    SL_CHECK(strstr(msg, "the arena holds only 4 of the 7 listed slabs") != NULL);
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 0);
    SL_CHECK_EQ(valid(&w), SL_OK);
    /* Full slabs stop where the arena does: the listed ones fit, no room is left for full ones. */
    sl_slub_seed_desc small = {.nslabs = 2, .slabs = slabs, .full_slabs = 10, .max_full = 10};
    SL_CHECK_EQ(sl_slub_seed(w.s, &small, msg, sizeof msg), 2);
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 4);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_close(&w);
    /* A debug cache is refused. */
    sl_slub_config cfg = {.object_size = 256, .flags = SL_SLUB_RED_ZONE, .track = 1};
    memset(&w, 0, sizeof w);
    SL_REQUIRE(sl_page_zone_init(&w.zone, 1u << 20, NULL) == SL_OK);
    SL_REQUIRE(sl_slub_cache_create(&w.zone, NULL, 1, &cfg, &w.s) == SL_OK);
    sl_slub_seed_desc none = {0};
    SL_CHECK_EQ(sl_slub_seed(w.s, &none, msg, sizeof msg), SL_EINVAL);
    SL_CHECK(strstr(msg, "debug cache") != NULL);
    world_close(&w);
}

/* A tracked cache as world_open's, with sheaves of capacity 4 (exact in 7.0 too). */
static bool world_open_sheaves(world *w, unsigned major, unsigned minor)
{
    memset(w, 0, sizeof *w);
    sl_slub_config cfg = {.object_size = 256,
                          .flags = SL_SLUB_HWCACHE_ALIGN,
                          .track = 1,
                          .seed = 1,
                          .sheaf_capacity = 4,
                          .sheaf_capacity_exact = 1};
    cfg.kernel.version = (sl_slub_kversion){(uint8_t)major, (uint8_t)minor};
    return sl_page_zone_init(&w->zone, 4u << 20, NULL) == SL_OK &&
           sl_slub_cache_create(&w->zone, NULL, 2, &cfg, &w->s) == SL_OK;
}

/* Slabs for the sheaf tests: a node partial slab (objects 4 and 6 free) and two full slabs. */
static const sl_slub_seed_slab sheaf_slabs[] = {
    {.list = SL_SLUB_SEED_NODE_PARTIAL, .objects = 16, .inuse = 14, .nfree = 2, .free = n0},
    {.list = SL_SLUB_SEED_FULL, .objects = 16, .inuse = 16},
    {.list = SL_SLUB_SEED_FULL, .objects = 16, .inuse = 16},
};
/* (slab, object) pairs, bottom first. */
static const uint32_t main0[] = {0, 0, 0, 1, 1, 5}, spare0[] = {1, 0, 1, 1, 1, 2, 1, 3}, rcu1[] = {1, 6, 1, 7},
                      barn_a[] = {2, 0, 2, 1, 2, 2, 2, 3}, barn_b[] = {2, 4, 2, 5, 2, 6, 2, 7};
static const sl_slub_seed_sheaf sheaves_desc[] = {
    {.place = SL_SLUB_SEED_MAIN, .cpu = 0, .size = 3, .objects = main0},
    {.place = SL_SLUB_SEED_SPARE, .cpu = 0, .size = 4, .objects = spare0},
    {.place = SL_SLUB_SEED_RCU_FREE, .cpu = 1, .size = 2, .objects = rcu1},
    {.place = SL_SLUB_SEED_BARN_FULL, .size = 4, .objects = barn_a},
    {.place = SL_SLUB_SEED_BARN_FULL, .size = 4, .objects = barn_b},
};
#define NSHEAVES (sizeof sheaves_desc / sizeof sheaves_desc[0])

/* True if sheaf holds described sheaf x's objects, in order, in w's slabs made from sheaf_slabs (list order). */
static bool sheaf_is(world *w, const sli_sheaf *sheaf, const sl_slub_seed_sheaf *x, sli_slub_slab *const *made)
{
    if (!sheaf || sheaf->size != x->size || sheaf->capacity != 4)
        return false;
    for (uint32_t k = 0; k < x->size; k++)
        if (sheaf->objects[k] != sli_obj_at(w->s, made[x->objects[2 * k]], x->objects[2 * k + 1]))
            return false;
    return true;
}

/* The slab holding object o (found by address). */
static sli_slub_slab *slab_of(world *w, void *o) { return sli_slab_lookup(w->s, o); }

/* Each era with sheaves: the seeded sheaves and barn equal the description; the model allocates from main. */
static void test_seed_sheaves(void)
{
    static const unsigned eras[][2] = {{6, 18}, {7, 0}};
    for (size_t e = 0; e < 2; e++) {
        world w;
        SL_REQUIRE(world_open_sheaves(&w, eras[e][0], eras[e][1]));
        sl_slub_seed_desc d = {.nslabs = 3,
                               .slabs = sheaf_slabs,
                               .full_slabs = 1,
                               .max_full = 1,
                               .nsheaves = NSHEAVES,
                               .sheaves = sheaves_desc};
        SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), 1);
        SL_CHECK_EQ(valid(&w), SL_OK);
        const sli_sheaves *sh = w.s->sheaves;
        SL_REQUIRE(sh && sh->pcs[0].main && sh->pcs[0].main->size == 3);
        /* The described slabs, found from main's bottom object, spare's and the barn's. */
        sli_slub_slab *made[3] = {slab_of(&w, sh->pcs[0].main->objects[0]), slab_of(&w, sh->pcs[0].spare->objects[0]),
                                  slab_of(&w, sh->barn[0].full->objects[0])};
        SL_REQUIRE(made[0] && made[1] && made[2]);
        SL_CHECK_EQ(sli_inuse(made[0]->fc.hi), 14);
        SL_CHECK_EQ(sli_inuse(made[1]->fc.hi), 16);
        SL_CHECK(sheaf_is(&w, sh->pcs[0].main, &sheaves_desc[0], made));
        SL_CHECK(sheaf_is(&w, sh->pcs[0].spare, &sheaves_desc[1], made));
        SL_CHECK(sh->pcs[0].rcu_free == NULL && sh->pcs[1].spare == NULL);
        SL_CHECK_EQ(sh->pcs[1].main->size, 0);
        SL_CHECK(sheaf_is(&w, sh->pcs[1].rcu_free, &sheaves_desc[2], made));
        SL_CHECK_EQ(sh->barn[0].nr_full, 2);
        SL_CHECK_EQ(sh->barn[0].nr_empty, 0);
        SL_CHECK(sheaf_is(&w, sh->barn[0].full, &sheaves_desc[3], made));
        SL_CHECK(sh->barn[0].full && sheaf_is(&w, sh->barn[0].full->next, &sheaves_desc[4], made));
        SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 4);
        /* CPU 0's next allocation pops main's top: slab 1's object 5. */
        void *o;
        SL_CHECK_EQ(sl_slub_alloc(w.s, 0, &o), SL_OK);
        SL_CHECK(o == sli_obj_at(w.s, made[1], 5));
        SL_CHECK_EQ(valid(&w), SL_OK);
        SL_CHECK_EQ(sl_slub_free(w.s, 0, o), SL_OK);
        SL_CHECK_EQ(valid(&w), SL_OK);
        world_close(&w);
    }
}

/* Seeds sheaf_slabs with sheaves_desc's sheaf `at` replaced by `bad` into a 6.18 cache: refused with `says`. */
static void sheaf_refused(const char *what, sl_slub_seed_sheaf bad, size_t at, const char *says)
{
    world w;
    SL_REQUIRE(world_open_sheaves(&w, 6, 18));
    sl_slub_seed_sheaf copy[NSHEAVES];
    memcpy(copy, sheaves_desc, sizeof copy);
    copy[at] = bad;
    sl_slub_seed_desc d = {.nslabs = 3, .slabs = sheaf_slabs, .nsheaves = NSHEAVES, .sheaves = copy};
    int rc = sl_slub_seed(w.s, &d, msg, sizeof msg);
    if (rc != SL_EINVAL || !strstr(msg, says))
        fprintf(stderr, "  %s: rc %d, \"%s\" (wanted \"%s\")\n", what, rc, msg, says);
    SL_CHECK_EQ(rc, SL_EINVAL);
    SL_CHECK(strstr(msg, says) != NULL);
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 0);
    SL_CHECK_EQ(w.s->sheaves->pcs[0].main->size, 0);
    SL_CHECK(w.s->sheaves->barn[0].full == NULL && w.s->sheaves->pcs[0].spare == NULL);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_close(&w);
}

/* A spare with 2 of 4 objects is seeded: 6.18's kmem_cache_return_sheaf makes a partly used prefilled sheaf the spare. */
static void test_half_spare(void)
{
    static const uint32_t half[] = {1, 0, 1, 1};
    world w;
    SL_REQUIRE(world_open_sheaves(&w, 6, 18));
    sl_slub_seed_sheaf copy[NSHEAVES];
    memcpy(copy, sheaves_desc, sizeof copy);
    copy[1].size = 2, copy[1].objects = half;
    sl_slub_seed_desc d = {.nslabs = 3, .slabs = sheaf_slabs, .nsheaves = NSHEAVES, .sheaves = copy};
    SL_CHECK(sl_slub_seed(w.s, &d, msg, sizeof msg) >= 0);
    const sli_sheaf *spare = w.s->sheaves->pcs[0].spare;
    SL_CHECK(spare && spare->size == 2);
    SL_CHECK_EQ(valid(&w), SL_OK);
    world_close(&w);
}

static void test_bad_sheaves(void)
{
    static const uint32_t on_freelist[] = {0, 4}, again[] = {1, 6, 0, 0}, outside[] = {3, 0},
                          five[] = {0, 0, 0, 1, 0, 2, 0, 3, 0, 5}, half[] = {1, 8, 1, 9};
    sl_slub_seed_sheaf b;
    b = sheaves_desc[0], b.size = 1, b.objects = on_freelist;
    sheaf_refused("on a freelist", b, 0, "object 4 of slab 0 is also on the slab's freelist");
    b = sheaves_desc[2], b.objects = again;
    sheaf_refused("in two sheaves", b, 2, "object 0 of slab 0 is in two places (also sheaf 0)");
    b = sheaves_desc[2], b.size = 1, b.objects = outside;
    sheaf_refused("outside the slabs", b, 2, "outside the 3 described slabs");
    b = sheaves_desc[0], b.size = 5, b.objects = five;
    sheaf_refused("over capacity", b, 0, "5 objects, over the sheaf capacity 4");
    b = sheaves_desc[2], b.size = 4, b.objects = barn_b;
    sheaf_refused("full rcu_free", b, 2, "a full rcu_free sheaf");
    b = sheaves_desc[3], b.size = 2, b.objects = half;
    sheaf_refused("half barn", b, 3, "a barn full sheaf with 2 of 4 objects");
    b = sheaves_desc[0];
    sheaf_refused("two mains", b, 2, "a second main sheaf for CPU 0");
    b = sheaves_desc[2], b.cpu = 2;
    sheaf_refused("no such CPU", b, 2, "a rcu_free sheaf of CPU 2, but the cache has 2 CPUs");
    b = sheaves_desc[2], b.place = 7;
    sheaf_refused("unknown place", b, 2, "place 7 is none of");
    /* An era without sheaves (6.17; 6.18 without a sheaf_capacity) refuses any. */
    world w;
    SL_REQUIRE(world_open(&w, 6, 17, 4u << 20));
    sl_slub_seed_desc d = {.nslabs = 3, .slabs = sheaf_slabs, .nsheaves = 1, .sheaves = sheaves_desc};
    SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), SL_EINVAL);
    SL_CHECK(strstr(msg, "but this cache has none") != NULL);
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 0);
    world_close(&w);
    SL_REQUIRE(world_open(&w, 6, 18, 4u << 20));
    SL_CHECK_EQ(sl_slub_seed(w.s, &d, msg, sizeof msg), SL_EINVAL);
    SL_CHECK(strstr(msg, "but this cache has none") != NULL);
    world_close(&w);
}

int main(void)
{
    SL_RUN(test_seed_6_17);
    SL_RUN(test_seed_6_6_and_5_15);
    SL_RUN(test_seed_7_0);
    SL_RUN(test_bad_descriptions);
    SL_RUN(test_busy_and_no_room);
    SL_RUN(test_seed_sheaves);
    SL_RUN(test_bad_sheaves);
    SL_RUN(test_half_spare);
    return sl_check_summary();
}
