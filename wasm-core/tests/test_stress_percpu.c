/*
 * test_stress_percpu.c - CPU threads allocating and freeing percpu areas
 * at once under the global lock, for each allocator, on an instance booted
 * with static and reserved regions: objects, some from the reserved chunk,
 * are handed between threads (freed by a CPU other than the one that
 * allocated them), each object's copies carry a tag that must survive until
 * its free, the balance step runs from allocations and frees on every
 * thread, and a per-CPU counter is bumped by each CPU on its own copy and
 * summed at the end.  validate() and snapshots run concurrently with the
 * workers, and validate() after them.
 */
#include "check.h"

#include "../src/percpu/percpu.h"

#define NTHREADS 4
#define MAILBOX 64

typedef struct shared {
    sl_pcpu pc;
    void *counter;
    _Atomic(void *) mailbox[MAILBOX];
    atomic_uint failures;
    atomic_uint running;
    atomic_uint progress; /* operations done by all workers */
    atomic_uint reserved_ok, reserved_full;
    unsigned ops;
} shared;

typedef struct worker {
    shared *sh;
    unsigned cpu;
} worker;

static void check_tag(shared *sh, void *p)
{
    uint64_t tag = *(uint64_t *)p;
    for (unsigned u = 1; u < NTHREADS; u++)
        if (*(uint64_t *)sl_pcpu_ptr(&sh->pc, p, u) != tag + u)
            atomic_fetch_add(&sh->failures, 1);
}

static void *work(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    void *mine[32] = {0};
    uint64_t rng = 0x1234567ull * (w->cpu + 1);
    for (unsigned i = 0; i < sh->ops; i++) {
        uint64_t r = sl_test_rand(&rng);
        unsigned slot = (unsigned)(r % 32);
        sl_pcpu_add(&sh->pc, sh->counter, w->cpu, 1);
        atomic_fetch_add_explicit(&sh->progress, 1, memory_order_relaxed);
        if (mine[slot]) {
            check_tag(sh, mine[slot]);
            /* Half the time trade with another CPU instead of freeing locally. */
            void *p = mine[slot];
            mine[slot] = NULL;
            if ((r >> 8) & 1)
                p = atomic_exchange_explicit(&sh->mailbox[(r >> 16) % MAILBOX], p, memory_order_acq_rel);
            if (p) {
                check_tag(sh, p);
                if (sl_pcpu_free(&sh->pc, w->cpu, p) != SL_OK)
                    atomic_fetch_add(&sh->failures, 1);
            }
        } else {
            size_t size = (r >> 20) & 1 ? 8 + ((r >> 24) % 64) * 8 : 8 + ((r >> 24) % 3000);
            size_t align = (size_t)8 << ((r >> 40) % 6);
            bool reserved = (r >> 50) % 8 == 0;
            void *p;
            int rc = (reserved ? sl_pcpu_alloc_reserved : sl_pcpu_alloc)(&sh->pc, w->cpu, size, align, &p);
            if (reserved && rc == SL_ENOMEM) {
                atomic_fetch_add(&sh->reserved_full, 1); /* the reserved chunk never grows */
                continue;
            }
            if (rc != SL_OK) {
                atomic_fetch_add(&sh->failures, 1);
                continue;
            }
            if (reserved)
                atomic_fetch_add(&sh->reserved_ok, 1);
            uint64_t tag = r & ~0xffull;
            for (unsigned u = 0; u < NTHREADS; u++)
                *(uint64_t *)sl_pcpu_ptr(&sh->pc, p, u) = tag + u;
            mine[slot] = p;
        }
    }
    for (unsigned s = 0; s < 32; s++)
        if (mine[s] && sl_pcpu_free(&sh->pc, w->cpu, mine[s]) != SL_OK)
            atomic_fetch_add(&sh->failures, 1);
    atomic_fetch_sub(&sh->running, 1);
    return NULL;
}

static void stress(sl_pcpu_kind kind)
{
    static shared sh;
    memset(&sh, 0, sizeof sh);
    sl_pcpu_config cfg = {.kind = kind,
                          .nr_units = NTHREADS,
                          .unit_size = 8 * SL_PAGE_SIZE,
                          .static_size = 2 * SL_PAGE_SIZE + 64,
                          .reserved_size = SL_PAGE_SIZE};
    SL_REQUIRE(sl_pcpu_init(&sh.pc, &cfg) == SL_OK);
    SL_REQUIRE(sl_pcpu_alloc(&sh.pc, 0, 8, 8, &sh.counter) == SL_OK);
    sh.ops = (unsigned)sl_test_scale(20000);
    atomic_store(&sh.running, NTHREADS);
    worker w[NTHREADS];
    sl_thread t[NTHREADS];
    for (unsigned i = 0; i < NTHREADS; i++) {
        w[i] = (worker){&sh, i};
        SL_REQUIRE(sl_thread_start(&t[i], work, &w[i]) == SL_OK);
    }
    /*
     * Validate and snapshot between bursts of work: back to back, they would
     * starve the workers of the lock.
     */
    static unsigned char snap[1 << 20];
    unsigned validations = 0, last = 0;
    while (atomic_load(&sh.running)) {
        unsigned now = atomic_load_explicit(&sh.progress, memory_order_relaxed);
        if (now - last < 1000) {
            sl_cpu_relax();
            continue;
        }
        last = now;
        SL_CHECK_EQ(sl_pcpu_validate(&sh.pc), SL_OK);
        long n = sl_pcpu_snapshot(&sh.pc, snap, sizeof snap);
        SL_CHECK(n > 0 && memcmp(snap, "PCPU", 4) == 0);
        validations++;
    }
    for (unsigned i = 0; i < NTHREADS; i++)
        sl_thread_join(t[i]);
    for (unsigned m = 0; m < MAILBOX; m++) {
        void *p = atomic_load(&sh.mailbox[m]);
        if (p) {
            check_tag(&sh, p);
            SL_CHECK_EQ(sl_pcpu_free(&sh.pc, 0, p), SL_OK);
        }
    }
    SL_CHECK_EQ(atomic_load(&sh.failures), 0);
    SL_CHECK_EQ(sl_pcpu_sum(&sh.pc, sh.counter), (int64_t)NTHREADS * sh.ops);
    SL_CHECK_EQ(sl_pcpu_validate(&sh.pc), SL_OK);
    SL_CHECK_EQ(sl_pcpu_free(&sh.pc, 0, sh.counter), SL_OK);
    sl_pcpu_stats st;
    sl_pcpu_get_stats(&sh.pc, &st);
    SL_CHECK_EQ(st.live_allocs, 0);
    SL_CHECK_EQ(st.nr_empty_chunks, st.nr_chunks);
    /* The first chunk (its static region keeps it out of the empty slot) and the one empty chunk kept. */
    SL_CHECK_EQ(st.nr_chunks, 2);
    SL_CHECK(st.chunks_created > 2);
    SL_CHECK(atomic_load(&sh.reserved_ok) > 0 && atomic_load(&sh.reserved_full) > 0);
    printf("  %s: %u ops x %d CPUs, %llu chunks created, %u reserved areas (%u refused), %u concurrent validations\n",
           sl_pcpu_kind_name(kind), sh.ops, NTHREADS, (unsigned long long)st.chunks_created,
           atomic_load(&sh.reserved_ok), atomic_load(&sh.reserved_full), validations);
    sl_pcpu_destroy(&sh.pc);
}

static void test_stress_areamap(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(SL_PCPU_AREAMAP);
}
static void test_stress_bitmap(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(SL_PCPU_BITMAP);
}
static void test_stress_scanhint(void)
{
    SL_SKIP_WITHOUT_THREADS();
    stress(SL_PCPU_SCANHINT);
}

int main(void)
{
    SL_RUN(test_stress_areamap);
    SL_RUN(test_stress_bitmap);
    SL_RUN(test_stress_scanhint);
    return sl_check_summary();
}
