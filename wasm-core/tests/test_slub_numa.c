/*
 * test_slub_numa.c - the SLUB model with more than one NUMA node
 * (docs/slub.md, "NUMA nodes"): the topology, new slabs on the CPU's memory
 * node, frees to the slab's own node, get_any_partial and
 * __refill_objects_any with remote_node_defrag_ratio, remote objects kept
 * off the sheaves (6.18+), the barns per era (7.0 in kmem_cache_node found
 * by numa_mem_id, 7.1 per online node found by numa_node_id, created when a
 * node's first CPU comes online) and validate across nodes.  Each test
 * fails on the one-node model.
 */
#include "sheaves_world.h"

#include "../src/sched/sched.h"
#include "../src/slub/sheaves.h"

#include <stdlib.h>

static const sl_slub_kversion V617 = {6, 17}, V618 = {6, 18}, V70 = {7, 0}, V71 = {7, 1}, V73 = {7, 3};

/*
 * A cache of 64-byte tracked objects (64 per order-0 slab) in kernel v for
 * two CPUs, CPU c on node cpu_node[c] of `nodes` nodes, `memoryless` the
 * nodes without memory, `offline` the CPUs that start offline; sheaves of
 * exactly 4 where v has them.
 */
static int open_numa_traced(world *w, sl_trace *tr, sl_slub_kversion v, unsigned nodes, const uint8_t *cpu_node,
                            uint8_t memoryless, uint8_t offline)
{
    memset(w, 0, sizeof *w);
    int rc = sl_page_zone_init(&w->zone, (size_t)8 << 20, NULL);
    if (rc)
        return rc;
    sl_slub_config cfg = {.object_size = 64,
                          .track = 1,
                          .seed = 7,
                          .sheaf_capacity = 4,
                          .sheaf_capacity_exact = 1,
                          .nr_nodes = (uint8_t)nodes,
                          .memoryless = memoryless,
                          .offline_cpus = offline};
    for (unsigned c = 0; c < 2; c++)
        cfg.cpu_node[c] = cpu_node[c];
    cfg.kernel.version = v;
    rc = sl_slub_cache_create(&w->zone, tr, 2, &cfg, &w->s);
    if (rc == SL_OK)
        w->sh = w->s->sheaves;
    return rc;
}

/* open_numa_traced without a trace. */
static int open_numa(world *w, sl_slub_kversion v, unsigned nodes, const uint8_t *cpu_node, uint8_t memoryless,
                     uint8_t offline)
{
    return open_numa_traced(w, NULL, v, nodes, cpu_node, memoryless, offline);
}

/* Two nodes with memory, CPU 0 on node 0 and CPU 1 on node 1. */
static const uint8_t CPU_PER_NODE[2] = {0, 1};

static void check_valid(world *w)
{
    char msg[256] = "";
    int rc = world_validate(w, msg, sizeof msg);
    if (rc != SL_OK)
        fprintf(stderr, "  validate: %s\n", msg);
    SL_CHECK_EQ(rc, SL_OK);
}

static unsigned slab_nid_of(world *w, void *obj)
{
    uint32_t pfn, index;
    if (!sl_slub_object_index(w->s, obj, &pfn, &index))
        return 0xff; /* no object of the cache: no node */
    return sli_slab_at(w->s, pfn)->nid;
}

static sl_slub_node_info node_info(world *w, unsigned nid)
{
    sl_slub_node_info ni;
    SL_CHECK(sl_slub_node_info_node(w->s, nid, &ni));
    return ni;
}

/* Bad topologies are refused; the default is one node; numa_mem_id is the nearest node with memory. */
static void test_topology(void)
{
    world w;
    sl_slub_topology t;
    SL_REQUIRE(open_numa(&w, V70, 0, (const uint8_t[]){0, 0}, 0, 0) == SL_OK);
    sl_slub_topology_get(w.s, &t);
    SL_CHECK(t.nr_nodes == 1 && t.mem_nodes == 1 && t.barn_nodes == 1 && t.online_cpus == 3);
    SL_CHECK_EQ(t.remote_node_defrag_ratio, 1000);
    world_close(&w);

    SL_CHECK_EQ(open_numa(&w, V70, SL_SLUB_MAX_NODES + 1, CPU_PER_NODE, 0, 0), SL_EINVAL);
    world_close(&w);
    SL_CHECK_EQ(open_numa(&w, V70, 2, (const uint8_t[]){0, 2}, 0, 0), SL_EINVAL);
    world_close(&w);
    SL_CHECK_EQ(open_numa(&w, V70, 2, CPU_PER_NODE, 3, 0), SL_EINVAL); /* no node with memory */
    world_close(&w);
    SL_CHECK_EQ(open_numa(&w, V70, 2, CPU_PER_NODE, 4, 0), SL_EINVAL); /* a memoryless node 2 of 2 */
    world_close(&w);

    /* Nodes 0 and 2 have memory; node 1, memoryless, is as near to both: the lower number wins. */
    SL_REQUIRE(open_numa(&w, V70, 3, (const uint8_t[]){1, 2}, 2, 0) == SL_OK);
    sl_slub_topology_get(w.s, &t);
    SL_CHECK(t.nr_nodes == 3 && t.mem_nodes == 5);
    SL_CHECK(t.cpu_node[0] == 1 && t.cpu_mem_node[0] == 0 && t.cpu_node[1] == 2 && t.cpu_mem_node[1] == 2);
    SL_CHECK_EQ(sl_slub_set_remote_node_defrag_ratio(w.s, 101), SL_EINVAL);
    SL_CHECK_EQ(sl_slub_set_remote_node_defrag_ratio(w.s, 30), SL_OK);
    sl_slub_topology_get(w.s, &t);
    SL_CHECK_EQ(t.remote_node_defrag_ratio, 300);
    world_close(&w);
}

/* allocate_slab(numa_mem_id()): each CPU's new slabs are its node's; a memoryless node's CPU gets the nearest's. */
static void test_new_slab_on_cpu_memory_node(void)
{
    const sl_slub_kversion vs[] = {V617, V70};
    for (unsigned i = 0; i < 2; i++) {
        world w;
        SL_REQUIRE(open_numa(&w, vs[i], 2, CPU_PER_NODE, 0, 0) == SL_OK);
        void *a = world_alloc(&w, 0), *b = world_alloc(&w, 1);
        SL_REQUIRE(a && b);
        SL_CHECK_EQ(slab_nid_of(&w, a), 0);
        SL_CHECK_EQ(slab_nid_of(&w, b), 1);
        SL_CHECK(node_info(&w, 0).nr_slabs == 1 && node_info(&w, 1).nr_slabs == 1);
        check_valid(&w);
        world_free(&w, 0, a);
        world_free(&w, 1, b);
        world_close(&w);

        /* Node 1 memoryless: CPU 1 allocates from node 0. */
        SL_REQUIRE(open_numa(&w, vs[i], 2, CPU_PER_NODE, 2, 0) == SL_OK);
        b = world_alloc(&w, 1);
        SL_REQUIRE(b);
        SL_CHECK_EQ(slab_nid_of(&w, b), 0);
        SL_CHECK(node_info(&w, 0).nr_slabs == 1 && node_info(&w, 1).nr_slabs == 0);
        check_valid(&w);
        world_free(&w, 1, b);
        world_close(&w);
    }
}

/*
 * 6.17: a slab of node 1 that CPU 0's free takes from full to partial goes
 * to CPU 0's partial list, and __put_partials (the flush) puts it on node
 * 1's list, not CPU 0's node's.
 */
static void test_put_partials_to_slab_node(void)
{
    world w;
    SL_REQUIRE(open_numa(&w, V617, 2, CPU_PER_NODE, 0, 0) == SL_OK);
    void *objs[64];
    for (unsigned i = 0; i < 64; i++)
        SL_REQUIRE((objs[i] = world_alloc(&w, 1)) != NULL); /* one full slab of node 1 */
    SL_REQUIRE(sl_slub_flush_cpu(w.s, 1) == SL_OK);         /* full: on no list */
    SL_REQUIRE(world_free(&w, 0, objs[0]) == SL_OK);
    SL_CHECK(w.s->cpu[0].partial != NULL);
    SL_REQUIRE(sl_slub_flush_cpu(w.s, 0) == SL_OK);
    SL_CHECK_EQ(node_info(&w, 1).nr_partial, 1);
    SL_CHECK_EQ(node_info(&w, 0).nr_partial, 0);
    check_valid(&w);
    for (unsigned i = 1; i < 64; i++)
        world_free(&w, 1, objs[i]);
    world_close(&w);
}

/*
 * 6.18+ slab_free: an object of a slab on another node than the freeing
 * CPU's memory node goes to its slab (FREE_SLOWPATH in 7.x), never onto the
 * CPU's sheaf; the slab, full until then, joins its own node's list.
 */
static void test_remote_free_bypasses_sheaves(void)
{
    const sl_slub_kversion vs[] = {V618, V70, V71};
    for (unsigned i = 0; i < 3; i++) {
        world w;
        SL_REQUIRE(open_numa(&w, vs[i], 2, CPU_PER_NODE, 0, 0) == SL_OK);
        SL_REQUIRE(w.sh);
        void *remote = world_alloc(&w, 1), *local = world_alloc(&w, 0);
        SL_REQUIRE(remote && local);
        uint32_t main0 = w.sh->pcs[0].main->size;
        uint64_t pcs_frees = ST(&w, FREE_PCS);
        SL_REQUIRE(world_free(&w, 0, remote) == SL_OK);
        SL_CHECK_EQ(w.sh->pcs[0].main->size, main0);
        SL_CHECK_EQ(ST(&w, FREE_PCS), pcs_frees);
        SL_REQUIRE(world_free(&w, 0, local) == SL_OK); /* the control: a local object does go on the sheaf */
        SL_CHECK_EQ(w.sh->pcs[0].main->size, main0 + 1);
        check_valid(&w);
        world_close(&w);
    }
}

/* free_to_pcs_bulk (7.0): the remote objects of a bulk free go to their slabs, the local ones onto sheaves. */
static void test_bulk_free_remote(void)
{
    world w;
    SL_REQUIRE(open_numa(&w, V70, 2, CPU_PER_NODE, 0, 0) == SL_OK);
    void *p[5];
    for (unsigned i = 0; i < 3; i++)
        SL_REQUIRE((p[i] = world_alloc(&w, 1)) != NULL);
    for (unsigned i = 3; i < 5; i++)
        SL_REQUIRE((p[i] = world_alloc(&w, 0)) != NULL);
    uint32_t main0 = w.sh->pcs[0].main->size;
    uint64_t slow = ST(&w, FREE_SLOWPATH);
    SL_CHECK(sl_slub_free_bulk(w.s, 0, 5, p, NULL) >= 0); /* the CASes run */
    SL_CHECK_EQ(w.sh->pcs[0].main->size, main0 + 2);
    SL_CHECK_EQ(ST(&w, FREE_SLOWPATH), slow + 3);
    check_valid(&w);
    world_close(&w);
}

/* kfree_rcu_sheaf: a remote object waits for RCU alone, a local one in the rcu_free sheaf. */
static void test_kfree_rcu_remote(void)
{
    world w;
    SL_REQUIRE(open_numa(&w, V70, 2, CPU_PER_NODE, 0, 0) == SL_OK);
    void *remote = world_alloc(&w, 1), *local = world_alloc(&w, 0);
    SL_REQUIRE(remote && local);
    SL_REQUIRE(sl_slub_kfree_rcu(w.s, 0, remote) == SL_OK);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF), 0);
    SL_CHECK(w.s->cpu[0].rcu_wait == remote);
    SL_REQUIRE(sl_slub_kfree_rcu(w.s, 0, local) == SL_OK);
    SL_CHECK_EQ(ST(&w, FREE_RCU_SHEAF), 1);
    check_valid(&w);
    world_close(&w);
}

/*
 * A node-1 partial slab and nothing on node 0: with remote_node_defrag_ratio
 * 100 CPU 0 takes it (get_any_partial; 7.0 __refill_objects_any and
 * get_from_any_partial) instead of a new node-0 slab; with 0 it never does.
 * min_partial 0, so one partial slab is "more than min_partial".
 */
static void make_node1_partial(world *w, void **held)
{
    *held = world_alloc(w, 1);
    SL_REQUIRE(*held);
    if (w->s->rules.cpu_slab)
        SL_REQUIRE(sl_slub_flush_cpu(w->s, 1) == SL_OK); /* deactivate_slab: to node 1's list */
    SL_REQUIRE(node_info(w, 1).nr_partial == 1);
}

static void test_get_any_partial(void)
{
    const sl_slub_kversion vs[] = {V617, V70, V73};
    for (unsigned i = 0; i < 3; i++) {
        for (unsigned ratio = 0; ratio <= 100; ratio += 100) {
            world w;
            SL_REQUIRE(open_numa(&w, vs[i], 2, CPU_PER_NODE, 0, 0) == SL_OK);
            SL_REQUIRE(sl_slub_set_min_partial(w.s, 0) == SL_OK);
            SL_REQUIRE(sl_slub_set_remote_node_defrag_ratio(w.s, ratio) == SL_OK);
            void *held, *got;
            make_node1_partial(&w, &held);
            got = world_alloc(&w, 0);
            SL_REQUIRE(got);
            SL_CHECK_EQ(slab_nid_of(&w, got), ratio ? 1 : 0);
            SL_CHECK_EQ(node_info(&w, 0).nr_slabs, ratio ? 0 : 1);
            check_valid(&w);
            world_free(&w, 1, held);
            world_free(&w, 0, got);
            world_close(&w);
        }
    }
    /*
     * 7.0's ___slab_alloc, reached by kmalloc_nolock (which refills no sheaf; a
     * GFP_ATOMIC allocation refills one from 7.0-rc3): get_from_partial, then
     * get_from_any_partial, node 1's list_lock trylocked and free.
     */
    world w;
    SL_REQUIRE(open_numa(&w, V70, 2, CPU_PER_NODE, 0, 0) == SL_OK);
    SL_REQUIRE(sl_slub_set_min_partial(w.s, 0) == SL_OK);
    void *held, *got;
    make_node1_partial(&w, &held);
    SL_REQUIRE(sl_slub_kmalloc_nolock(w.s, 0, &got) == SL_OK);
    SL_CHECK_EQ(ST(&w, SHEAF_REFILL), 4); /* CPU 1's refill only */
    SL_CHECK_EQ(slab_nid_of(&w, got), 1);
    SL_CHECK_EQ(node_info(&w, 0).nr_slabs, 0);
    check_valid(&w);
    world_close(&w);
}

/*
 * A memoryless node's CPU and the barns: 7.0 (barn in kmem_cache_node, by
 * numa_mem_id) shares node 0's barn with CPU 0; 7.1 (per_node[].barn by
 * numa_node_id, slab_barn_nodes has every online node) gives node 1 its own.
 */
static void test_memoryless_node_barn_per_era(void)
{
    const sl_slub_kversion vs[] = {V70, V71};
    for (unsigned i = 0; i < 2; i++) {
        bool v71 = i == 1;
        world w;
        SL_REQUIRE(open_numa(&w, vs[i], 2, CPU_PER_NODE, 2, 0) == SL_OK);
        sl_slub_topology t;
        sl_slub_topology_get(w.s, &t);
        SL_CHECK_EQ(t.barn_nodes, v71 ? 3 : 1);
        SL_CHECK_EQ(t.cpu_barn_node[1], v71 ? 1 : 0);
        void *objs[16];
        for (unsigned k = 0; k < 16; k++)
            SL_REQUIRE((objs[k] = world_alloc(&w, 1)) != NULL);
        for (unsigned k = 0; k < 16; k++) /* node-0 objects, CPU 1's memory node: onto its sheaves */
            SL_REQUIRE(world_free(&w, 1, objs[k]) == SL_OK);
        SL_CHECK(w.sh->barn[v71 ? 1 : 0].nr_full > 0);
        SL_CHECK_EQ(w.sh->barn[v71 ? 0 : 1].nr_full, 0);
        /* CPU 0 empties its sheaves, then finds a full sheaf in node 0's barn only in 7.0. */
        uint64_t get = ST(&w, BARN_GET);
        void *o = world_alloc(&w, 0);
        SL_REQUIRE(o);
        SL_CHECK_EQ(ST(&w, BARN_GET), get + (v71 ? 0 : 1));
        world_free(&w, 0, o);
        check_valid(&w);
        world_close(&w);
    }
}

/*
 * 7.1: a memoryless node whose CPUs are all offline has no barn: its CPU's
 * get_barn() is NULL and __pcs_replace_empty_main backs off to the slab
 * path; slub_cpu_setup creates the barn when that CPU comes online.  7.0:
 * the CPU uses node 0's barn and onlining creates nothing.
 */
static void test_barn_created_on_cpu_online(void)
{
    const sl_slub_kversion vs[] = {V70, V71};
    for (unsigned i = 0; i < 2; i++) {
        bool v71 = i == 1;
        world w;
        SL_REQUIRE(open_numa(&w, vs[i], 2, CPU_PER_NODE, 2, 2) == SL_OK);
        sl_slub_topology t;
        sl_slub_topology_get(w.s, &t);
        SL_CHECK_EQ(t.barn_nodes, 1);
        SL_CHECK(!sl_slub_cpu_is_online(w.s, 1));
        void *o = world_alloc(&w, 1); /* the model lets an offline CPU act: the barn's absence shows */
        SL_REQUIRE(o);
        SL_CHECK_EQ(ST(&w, SHEAF_REFILL), v71 ? 0 : 4);
        SL_CHECK_EQ(ST(&w, BARN_GET_FAIL), v71 ? 0 : 1);
        world_free(&w, 1, o);
        SL_CHECK_EQ(sl_slub_cpu_online(w.s, 1), v71 ? 1 : 0);
        SL_CHECK(sl_slub_cpu_is_online(w.s, 1));
        sl_slub_topology_get(w.s, &t);
        SL_CHECK_EQ(t.barn_nodes, v71 ? 3 : 1);
        SL_CHECK_EQ(sl_slub_cpu_online(w.s, 1), 0); /* already set up */
        check_valid(&w);
        /* Offline again (slub_cpu_dead): flushed, and the barn stays. */
        SL_CHECK(sl_slub_cpu_dead(w.s, 1) >= 0);
        SL_CHECK(!sl_slub_cpu_is_online(w.s, 1));
        sl_slub_topology_get(w.s, &t);
        SL_CHECK_EQ(t.barn_nodes, v71 ? 3 : 1);
        check_valid(&w);
        world_close(&w);
    }
}

/*
 * slub_cpu_dead before 7.0: __flush_cpu_slab deactivates the dead CPU's CPU
 * slab and moves its CPU partial list to the node lists (6.17); with 6.18's
 * sheaves, __pcs_flush_all_cpu empties them too.  The model did neither
 * before 7.0.
 */
static void test_cpu_dead_flushes_cpu_slab(void)
{
    const sl_slub_kversion vs[] = {V617, V618};
    for (unsigned i = 0; i < 2; i++) {
        world w;
        SL_REQUIRE(open_numa(&w, vs[i], 2, CPU_PER_NODE, 0, 0) == SL_OK);
        void *objs[80];
        for (unsigned k = 0; k < 80; k++)
            SL_REQUIRE((objs[k] = world_alloc(&w, 1)) != NULL);
        for (unsigned k = 0; k < 80; k += 2) /* frees into full slabs: a CPU partial list on CPU 1 */
            SL_REQUIRE(world_free(&w, 1, objs[k]) == SL_OK);
        SL_REQUIRE(w.s->cpu[1].slab != NULL);
        SL_CHECK(sl_slub_cpu_dead(w.s, 1) >= 0);
        SL_CHECK(w.s->cpu[1].slab == NULL && w.s->cpu[1].partial == NULL);
        if (w.sh)
            SL_CHECK(w.sh->pcs[1].main->size == 0 && w.sh->pcs[1].spare == NULL);
        SL_CHECK(node_info(&w, 1).nr_partial > 0);
        check_valid(&w);
        for (unsigned k = 1; k < 80; k += 2)
            world_free(&w, 0, objs[k]);
        world_close(&w);
    }
}

/*
 * CPU hotplug is an operation as the others are: OP_BEGIN/OP_END with the
 * driver's codes (SL_SCHED_CPU_ONLINE, SL_SCHED_CPU_DEAD) and the result, on
 * the CPU's ring, so a stepping view stops inside it: the dead CPU's sheaf
 * flush reaches its slab frees' preemption points (the driver's hook writes
 * PREEMPT_POINT there) inside the operation.
 */
typedef struct pp_seen {
    unsigned points;
    uint32_t op; /* the operation of the last point reached */
} pp_seen;

static void count_point(sl_trace *tr, unsigned cpu, unsigned point, unsigned line, const void *ctx, void *user)
{
    (void)tr, (void)cpu, (void)point, (void)line;
    pp_seen *seen = user;
    seen->points++;
    seen->op = ((const sl_slub_pp_ctx *)ctx)->op;
}

static void test_hotplug_is_an_operation(void)
{
    static sl_event ev[1 << 12];
    sl_trace tr;
    SL_REQUIRE(sl_trace_init(&tr, 2, 1 << 12) == SL_OK);
    tr.enabled = true;
    world w;
    SL_REQUIRE(open_numa_traced(&w, &tr, V71, 2, CPU_PER_NODE, 2, 2) == SL_OK);
    SL_CHECK_EQ(sl_slub_cpu_online(w.s, 1), 1);
    unsigned n = sl_trace_drain(&tr, 1, ev, 1 << 12);
    SL_REQUIRE(n == 2);
    SL_CHECK(ev[0].kind == SL_EV_OP_BEGIN && ev[0].arg0 == SL_SCHED_CPU_ONLINE);
    SL_CHECK(ev[1].kind == SL_EV_OP_END && ev[1].arg0 == SL_SCHED_CPU_ONLINE && ev[1].arg1 == 1);
    SL_CHECK_EQ(ev[0].op, ev[1].op);
    void *objs[6];
    for (unsigned k = 0; k < 6; k++)
        SL_REQUIRE((objs[k] = world_alloc(&w, 1)) != NULL);
    for (unsigned k = 0; k < 6; k++) /* into CPU 1's sheaves: main and spare hold them */
        SL_REQUIRE(world_free(&w, 1, objs[k]) == SL_OK);
    while (sl_trace_drain(&tr, 1, ev, 1 << 12)) {
    }
    pp_seen seen = {0, 0};
    sl_trace_set_preempt_hook(&tr, count_point, &seen);
    int flushed = sl_slub_cpu_dead(w.s, 1);
    sl_trace_set_preempt_hook(&tr, NULL, NULL);
    SL_CHECK(flushed > 0);
    n = sl_trace_drain(&tr, 1, ev, 1 << 12);
    SL_REQUIRE(n >= 3);
    SL_CHECK(ev[0].kind == SL_EV_OP_BEGIN && ev[0].arg0 == SL_SCHED_CPU_DEAD);
    SL_CHECK(ev[n - 1].kind == SL_EV_OP_END && ev[n - 1].arg0 == SL_SCHED_CPU_DEAD &&
             (int32_t)ev[n - 1].arg1 == flushed);
    unsigned flushes = 0;
    for (unsigned i = 1; i + 1 < n; i++) {
        SL_CHECK_EQ(ev[i].op, ev[0].op);
        flushes += ev[i].kind == SL_EV_SLUB_PCS_FLUSH;
    }
    SL_CHECK_EQ(flushes, 1);
    /* The slab frees of the flush are preemption points of this operation: the lab's micro-steps. */
    SL_CHECK(seen.points > 0);
    SL_CHECK_EQ(seen.op, ev[0].op);
    check_valid(&w);
    world_close(&w);
    sl_trace_destroy(&tr);
}

/* validate: a slab of one node on another node's list, and a sheaf in a barn that does not exist. */
static void test_validate_catches_wrong_node(void)
{
    world w;
    SL_REQUIRE(open_numa(&w, V617, 2, CPU_PER_NODE, 0, 0) == SL_OK);
    void *held;
    make_node1_partial(&w, &held);
    sli_slub_slab *slab = sli_get_node(w.s, 1)->partial_head;
    slab->nid = 0;
    char msg[256] = "";
    SL_CHECK_EQ(sl_slub_validate(w.s, msg, sizeof msg), SL_ECORRUPT);
    SL_CHECK(strstr(msg, "is on node 1's partial list") != NULL);
    slab->nid = 1;
    check_valid(&w);
    world_free(&w, 1, held);
    world_close(&w);

    SL_REQUIRE(open_numa(&w, V617, 2, CPU_PER_NODE, 2, 0) == SL_OK); /* node 1 memoryless */
    held = world_alloc(&w, 1);
    SL_REQUIRE(held);
    uint32_t pfn, index;
    SL_REQUIRE(sl_slub_object_index(w.s, held, &pfn, &index));
    sli_slab_at(w.s, pfn)->nid = 1; /* a slab on a node without memory */
    SL_CHECK_EQ(sl_slub_validate(w.s, msg, sizeof msg), SL_ECORRUPT);
    SL_CHECK(strstr(msg, "not a node with memory") != NULL);
    sli_slab_at(w.s, pfn)->nid = 0;
    check_valid(&w);
    world_free(&w, 1, held);
    world_close(&w);

    SL_REQUIRE(open_numa(&w, V71, 2, CPU_PER_NODE, 2, 2) == SL_OK); /* no barn on node 1 */
    w.sh->barn[1].nr_full = 1;
    SL_CHECK_EQ(sl_slub_validate(w.s, msg, sizeof msg), SL_ECORRUPT);
    SL_CHECK(strstr(msg, "node 1 has no barn") != NULL);
    w.sh->barn[1].nr_full = 0;
    check_valid(&w);
    world_close(&w);
}

/* show_slab_objects: "total N0=a N1=b" with more than one node, the total alone with one; the sums. */
static void test_per_node_counts(void)
{
    world w;
    SL_REQUIRE(open_numa(&w, V617, 2, CPU_PER_NODE, 0, 0) == SL_OK);
    SL_REQUIRE(sl_slub_set_min_partial(w.s, 0) == SL_OK);
    void *held;
    make_node1_partial(&w, &held);
    char buf[64];
    uint32_t partial[2] = {node_info(&w, 0).nr_partial, node_info(&w, 1).nr_partial};
    SL_CHECK(strcmp(sl_slub_format_per_node(w.s, partial, buf, sizeof buf), "1 N1=1") == 0);
    partial[0] = 2;
    SL_CHECK(strcmp(sl_slub_format_per_node(w.s, partial, buf, sizeof buf), "3 N0=2 N1=1") == 0);
    sl_slub_node_info all;
    sl_slub_node_info_get(w.s, &all);
    SL_CHECK(all.nr_partial == 1 && all.nr_slabs == 1 && sl_slub_nr_partial(w.s) == 1);
    world_free(&w, 1, held);
    world_close(&w);

    SL_REQUIRE(open_numa(&w, V617, 1, CPU_PER_NODE, 0, 0) != SL_OK); /* CPU 1 on node 1 of 1 */
    world_close(&w);
    SL_REQUIRE(open_numa(&w, V617, 1, (const uint8_t[]){0, 0}, 0, 0) == SL_OK);
    uint32_t one[1] = {3};
    SL_CHECK(strcmp(sl_slub_format_per_node(w.s, one, buf, sizeof buf), "3") == 0);
    world_close(&w);
}

/*
 * A snapshot of a two-node cache (format 2 has one node section,
 * docs/snapshot-format.md): every node's partial slabs in node order, the
 * counters summed.
 */
static void test_snapshot_sums_nodes(void)
{
    world w;
    SL_REQUIRE(open_numa(&w, V617, 2, CPU_PER_NODE, 0, 0) == SL_OK);
    void *a = world_alloc(&w, 0), *b = world_alloc(&w, 1);
    SL_REQUIRE(a && b);
    SL_REQUIRE(sl_slub_flush_cpu(w.s, 0) == SL_OK && sl_slub_flush_cpu(w.s, 1) == SL_OK); /* one partial slab each */
    long need = -sl_slub_snapshot(w.s, NULL, 0);
    SL_REQUIRE(need > 0);
    unsigned char *buf = malloc((size_t)need);
    SL_REQUIRE(buf && sl_slub_snapshot(w.s, buf, (size_t)need) == need);
    uint32_t node[3], nslabs, off_slab;
    memcpy(node, buf + 104 + 64, sizeof node); /* after the header (104) and the geometry (64) */
    SL_CHECK(node[0] == 2 && node[1] == 2 && node[2] == 128);
    memcpy(&nslabs, buf + 16, 4);
    memcpy(&off_slab, buf + 44, 4);
    SL_REQUIRE(nslabs == 2);
    unsigned seen = 0; /* each slab record's node (byte 30): one slab on each node */
    for (uint32_t i = 0; i < nslabs; i++)
        seen |= 1u << buf[off_slab + 32 * i + 30];
    SL_CHECK_EQ(seen, 3);
    free(buf);
    world_free(&w, 0, a);
    world_free(&w, 1, b);
    world_close(&w);
}

/* Shrink and destroy cover every node: slabs of both nodes go back. */
static void test_shrink_every_node(void)
{
    world w;
    SL_REQUIRE(open_numa(&w, V70, 2, CPU_PER_NODE, 0, 0) == SL_OK);
    void *a = world_alloc(&w, 0), *b = world_alloc(&w, 1);
    SL_REQUIRE(a && b);
    world_free(&w, 0, a);
    world_free(&w, 1, b);
    world_drain(&w);
    SL_CHECK_EQ(sl_slub_nr_slabs(w.s), 0);
    check_valid(&w);
    world_close(&w);
}

int main(void)
{
    SL_RUN(test_topology);
    SL_RUN(test_new_slab_on_cpu_memory_node);
    SL_RUN(test_put_partials_to_slab_node);
    SL_RUN(test_remote_free_bypasses_sheaves);
    SL_RUN(test_bulk_free_remote);
    SL_RUN(test_kfree_rcu_remote);
    SL_RUN(test_get_any_partial);
    SL_RUN(test_memoryless_node_barn_per_era);
    SL_RUN(test_barn_created_on_cpu_online);
    SL_RUN(test_cpu_dead_flushes_cpu_slab);
    SL_RUN(test_hotplug_is_an_operation);
    SL_RUN(test_validate_catches_wrong_node);
    SL_RUN(test_per_node_counts);
    SL_RUN(test_snapshot_sums_nodes);
    SL_RUN(test_shrink_every_node);
    return sl_check_summary();
}
