/*
 * test_stress_slab.c - SLAB with several CPU threads: local alloc/free,
 * objects handed to other CPUs and freed there (remote frees through kfree
 * on another CPU), drains, cache_reap runs (each CPU on its own clock, the
 * node timer shared), kmalloc_large blocks (6.7), init_on_free, and racing
 * double frees of slab objects and of kmalloc_large blocks.  Every object carries
 * a pattern checked before it is freed; afterwards sl_slab_validate() and
 * an empty page allocator once everything is freed and shrunk.
 */
#include "check.h"

#include "../src/slab/slab.h"

#include <sched.h>

#define NCPU 4
#define MiB ((size_t)1 << 20)
#define MAILBOX 256

typedef struct mailbox {
    sl_spinlock lock;
    unsigned n;
    void *p[MAILBOX];
    uint32_t size[MAILBOX];
} mailbox;

typedef struct stress {
    sl_slab *sl;
    sl_slab_cache *cache; /* a created cache (OFF_SLAB before, OBJFREELIST after) */
    mailbox box[NCPU];
    unsigned iters;
    atomic_uint bad;
    atomic_uint remote; /* objects freed on a CPU other than the allocating one */
    atomic_uint started;
} stress;

typedef struct worker {
    stress *st;
    unsigned cpu;
} worker;

static void stamp(void *p, uint32_t size)
{
    uint32_t n = size < 32 ? size : 32;
    for (uint32_t i = 0; i < n; i++)
        ((unsigned char *)p)[i] = (unsigned char)((uintptr_t)p >> 4) + (unsigned char)i;
}

static bool stamped(const void *p, uint32_t size)
{
    uint32_t n = size < 32 ? size : 32;
    for (uint32_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i] != (unsigned char)((unsigned char)((uintptr_t)p >> 4) + i))
            return false;
    return true;
}

/* Cache objects are tagged with size 0 in the mailbox. */
static void release(stress *st, unsigned cpu, void *p, uint32_t size)
{
    uint32_t check = size ? size : 256;
    if (!stamped(p, check))
        atomic_fetch_add(&st->bad, 1);
    int rc = size ? sl_slab_kfree(st->sl, cpu, p) : sl_slab_cache_free(st->cache, cpu, p);
    if (rc != SL_OK)
        atomic_fetch_add(&st->bad, 1);
}

static void *run(void *arg)
{
    worker *w = arg;
    stress *st = w->st;
    unsigned cpu = w->cpu;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (cpu + 1);
    enum { LOCAL = 64 };
    /* Start together, or the first thread may finish before the last one starts. */
    atomic_fetch_add(&st->started, 1);
    while (atomic_load(&st->started) < NCPU)
        sched_yield();
    void *mine[LOCAL];
    uint32_t mysize[LOCAL];
    unsigned nmine = 0;
    for (unsigned it = 0; it < st->iters; it++) {
        uint64_t r = sl_test_rand(&rng);
        if (nmine < LOCAL && (r & 3) != 0) {
            uint32_t size = (r >> 8) & 1 ? 0 : 1 + (uint32_t)((r >> 16) % ((r >> 40) % 16 ? 512 : 16384));
            void *p = size ? sl_slab_kmalloc(st->sl, cpu, size) : sl_slab_cache_alloc(st->cache, cpu);
            if (!p) {
                atomic_fetch_add(&st->bad, 1);
                break;
            }
            stamp(p, size ? size : 256);
            mine[nmine] = p;
            mysize[nmine++] = size;
        } else if (nmine) {
            unsigned i = (unsigned)((r >> 24) % nmine);
            void *p = mine[i];
            uint32_t size = mysize[i];
            mine[i] = mine[--nmine];
            mysize[i] = mysize[nmine];
            unsigned to = (unsigned)((r >> 32) % NCPU);
            mailbox *b = &st->box[to];
            bool sent = false;
            if (to != cpu) {
                sl_spin_lock(&b->lock);
                if (b->n < MAILBOX) {
                    b->p[b->n] = p;
                    b->size[b->n++] = size;
                    sent = true;
                    atomic_fetch_add(&st->remote, 1);
                }
                sl_spin_unlock(&b->lock);
            }
            if (!sent)
                release(st, cpu, p, size);
        }
        if ((it & 15) == 0) { /* remote frees: objects other CPUs allocated */
            mailbox *b = &st->box[cpu];
            void *p[MAILBOX];
            uint32_t size[MAILBOX];
            sl_spin_lock(&b->lock);
            unsigned n = b->n;
            memcpy(p, b->p, n * sizeof p[0]);
            memcpy(size, b->size, n * sizeof size[0]);
            b->n = 0;
            sl_spin_unlock(&b->lock);
            for (unsigned i = 0; i < n; i++)
                release(st, cpu, p[i], size[i]);
        }
        if ((it & 1023) == 512)
            sl_slab_drain_cpu(st->sl, cpu);
        if ((it & 255) == 128)
            sl_slab_reap(st->sl, cpu, (uint64_t)it * 16); /* node part races with the others' refills and flushes */
    }
    for (unsigned i = 0; i < nmine; i++)
        release(st, cpu, mine[i], mysize[i]);
    sl_slab_drain_cpu(st->sl, cpu);
    return NULL;
}

static void stress_variant(sl_slab_variant variant)
{
    SL_SKIP_WITHOUT_THREADS();
    static stress st;
    memset(&st, 0, sizeof st);
    sl_slab_config cfg = {.ncpus = NCPU, .arena_bytes = 64 * MiB, .variant = variant};
    SL_REQUIRE(sl_slab_create(&cfg, &st.sl) == SL_OK);
    sl_slab_spec spec = {.name = "stress-256", .object_size = 256};
    SL_REQUIRE(sl_slab_cache_create(st.sl, &spec, &st.cache) == SL_OK);
    st.iters = (unsigned)sl_test_scale(150000);
    worker w[NCPU];
    sl_thread t[NCPU];
    for (unsigned i = 0; i < NCPU; i++) {
        w[i] = (worker){.st = &st, .cpu = i};
        SL_REQUIRE(sl_thread_start(&t[i], run, &w[i]) == SL_OK);
    }
    for (unsigned i = 0; i < NCPU; i++)
        sl_thread_join(t[i]);
    /* What is left in mailboxes is freed here, on CPU 0. */
    for (unsigned c = 0; c < NCPU; c++)
        for (unsigned i = 0; i < st.box[c].n; i++)
            release(&st, 0, st.box[c].p[i], st.box[c].size[i]);
    SL_CHECK_EQ(atomic_load(&st.bad), 0);
    /* How many depends on scheduling (a full mailbox means a local free); there are always some. */
    printf("  %u remote frees\n", atomic_load(&st.remote));
    SL_CHECK(atomic_load(&st.remote) >= 256);
    char why[256];
    int rc = sl_slab_validate(st.sl, why, sizeof why);
    if (rc)
        fprintf(stderr, "  %s\n", why);
    SL_CHECK_EQ(rc, SL_OK);
    sl_slab_cache_info ci;
    sl_slab_cache_info_get(st.cache, &ci);
    SL_CHECK(ci.alloc_hit > 0 && ci.free_miss > 0);
    SL_CHECK_EQ(sl_slab_cache_destroy(st.cache), SL_OK);
    sl_slab_shrink(st.sl);
    SL_CHECK_EQ(sl_slab_validate(st.sl, why, sizeof why), SL_OK);
    sl_page_stats ps;
    sl_page_stats_get(sl_slab_zone(st.sl), &ps);
    SL_CHECK_EQ(ps.pages_free, ps.pages_total);
    sl_slab_destroy(st.sl);
}

static void test_stress_after(void) { stress_variant((sl_slab_variant){.rules = SL_SLAB_RULES_AFTER}); }
static void test_stress_before(void) { stress_variant((sl_slab_variant){.rules = SL_SLAB_RULES_BEFORE}); }
static void test_stress_init_on_free(void)
{
    stress_variant(
        (sl_slab_variant){.rules = SL_SLAB_RULES_AFTER, .kernel = SL_SLAB_KERNEL(5, 3), .init_on_free = true});
}

/*
 * Two CPUs free the same object at once: exactly one wins, the other gets
 * SL_EDOUBLEFREE -- or, for a kmalloc_large block whose pages the winner
 * already gave back, SL_EFOREIGN.
 */
typedef struct racer {
    sl_slab *sl;
    void *volatile target;
    atomic_uint go, done;
    atomic_uint ok, dbl;
    unsigned rounds;
} racer;

static racer race;

static void *race_run(void *arg)
{
    unsigned cpu = (unsigned)(uintptr_t)arg;
    for (unsigned r = 1; r <= race.rounds; r++) {
        while (atomic_load(&race.go) != r)
            sched_yield(); /* 3 threads on as few as 2 cores: spinning would starve the others */
        int rc = sl_slab_kfree(race.sl, cpu, race.target);
        if (rc != SL_OK && rc != SL_EDOUBLEFREE && rc != SL_EFOREIGN)
            atomic_fetch_add(&race.dbl, 1000000); /* any other answer fails the test */
        atomic_fetch_add(rc == SL_OK ? &race.ok : &race.dbl, 1);
        atomic_fetch_add(&race.done, 1);
    }
    return NULL;
}

static void racing_double_free(size_t size)
{
    SL_SKIP_WITHOUT_THREADS();
    if (!SL_DEBUG)
        SL_SKIP("benchmark build: no double-free detection");
    memset(&race, 0, sizeof race);
    sl_slab_config cfg = {.ncpus = 3, .arena_bytes = 16 * MiB, .variant = {.rules = SL_SLAB_RULES_AFTER}};
    SL_REQUIRE(sl_slab_create(&cfg, &race.sl) == SL_OK);
    race.rounds = (unsigned)sl_test_scale(1000);
    sl_thread t[2];
    for (unsigned i = 0; i < 2; i++)
        SL_REQUIRE(sl_thread_start(&t[i], race_run, (void *)(uintptr_t)(i + 1)) == SL_OK);
    for (unsigned r = 1; r <= race.rounds; r++) {
        race.target = sl_slab_kmalloc(race.sl, 0, size);
        atomic_store(&race.done, 0);
        atomic_store(&race.go, r);
        while (atomic_load(&race.done) != 2)
            sched_yield();
    }
    for (unsigned i = 0; i < 2; i++)
        sl_thread_join(t[i]);
    SL_CHECK_EQ(atomic_load(&race.ok), race.rounds);
    SL_CHECK_EQ(atomic_load(&race.dbl), race.rounds);
    SL_CHECK_EQ(sl_slab_validate(race.sl, NULL, 0), SL_OK);
    sl_slab_destroy(race.sl);
}

static void test_racing_double_free(void) { racing_double_free(64); }
static void test_racing_double_free_large(void) { racing_double_free(20000); }

int main(void)
{
    SL_RUN(test_stress_after);
    SL_RUN(test_stress_before);
    SL_RUN(test_stress_init_on_free);
    SL_RUN(test_racing_double_free);
    SL_RUN(test_racing_double_free_large);
    return sl_check_summary();
}
