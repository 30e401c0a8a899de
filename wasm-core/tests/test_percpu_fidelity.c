/*
 * test_percpu_fidelity.c - what the percpu model does as the kernel does
 * beyond placing areas: the first chunk with its static, reserved and
 * dynamic regions; the reserved chunk; the scan-hint series' relegation of
 * chunks that fail a small fit; the balance step's empty populated pages
 * and when v4.14's count lags; the events a view draws from (brackets,
 * chunk ids, slot moves, memmoves, hint refreshes, scan counts); a
 * snapshot that is the same bytes for the same operations on a fresh
 * instance; and placement by a replayed trace (cfg.placed).
 */
#include "check.h"

#include "../src/percpu/pcpu_internal.h"

#define UNIT_SMALL (4 * SL_PAGE_SIZE)
#define EVENTS 65536

static const sl_pcpu_kind kinds[] = {SL_PCPU_AREAMAP, SL_PCPU_BITMAP, SL_PCPU_SCANHINT};

/* An instance with a one-CPU trace; the events since the last call come back in ev[0..*n). */
typedef struct traced {
    sl_trace tr;
    sl_pcpu pc;
    sl_event ev[EVENTS];
    unsigned n;
} traced;

static int traced_init(traced *t, sl_pcpu_config cfg)
{
    int rc = sl_trace_init(&t->tr, 1, EVENTS);
    if (rc != SL_OK)
        return rc;
    t->tr.enabled = true;
    cfg.trace = &t->tr;
    cfg.nr_units = 1;
    return sl_pcpu_init(&t->pc, &cfg);
}

static void traced_destroy(traced *t)
{
    sl_pcpu_destroy(&t->pc);
    sl_trace_destroy(&t->tr);
}

static void drain(traced *t) { t->n = sl_trace_drain(&t->tr, 0, t->ev, EVENTS); }

/* The i-th event of this kind drained (-1 for the last), or NULL. */
static const sl_event *find(const traced *t, unsigned kind, int nth)
{
    const sl_event *hit = NULL;
    for (unsigned i = 0; i < t->n; i++) {
        if (t->ev[i].kind != kind)
            continue;
        hit = &t->ev[i];
        if (nth-- == 0)
            return hit;
    }
    return nth < -1 ? hit : NULL;
}

static unsigned count(const traced *t, unsigned kind, uint32_t arg, unsigned which_arg)
{
    unsigned k = 0;
    for (unsigned i = 0; i < t->n; i++) {
        const sl_event *e = &t->ev[i];
        uint32_t a = which_arg == 0 ? e->arg0 : which_arg == 1 ? e->arg1 : e->arg2;
        k += e->kind == kind && (arg == SL_NONE32 || a == arg);
    }
    return k;
}

static uint32_t chunk_of_area(sl_pcpu *pc, void *p)
{
    uint32_t id = SL_NONE32, off;
    sl_pcpu_locate(pc, p, &id, &off);
    return id;
}

static uint32_t offset_of_area(sl_pcpu *pc, void *p)
{
    uint32_t id, off = SL_NONE32;
    sl_pcpu_locate(pc, p, &id, &off);
    return off;
}

/* Which slot list holds chunk id (-1 for none). */
static int slot_holding(const sl_pcpu *pc, uint32_t id)
{
    for (int s = 0; s < pc->nr_slots; s++)
        for (const sl_pcpu_list *l = pc->slots[s].next; l != &pc->slots[s]; l = l->next)
            if (((const sl_pcpu_chunk *)((const char *)l - offsetof(sl_pcpu_chunk, list)))->id == id)
                return s;
    return -1;
}

/*
 * A real x86-64 boot, "Embedded 54 pages/cpu s183296 r8192 d28672
 * u262144": the first dynamic allocations come from the first chunk's
 * dynamic region, reserved ones from the reserved chunk, the static region
 * and the unit's tail belong to no chunk, and the first chunk outlives
 * every empty chunk.
 */
static void test_first_chunk(void)
{
    enum { STATIC = 183296, RESERVED = 8192, DYN = 28672 };
    for (unsigned ki = 0; ki < 3; ki++) {
        sl_pcpu pc;
        sl_pcpu_config cfg = {
            .kind = kinds[ki], .nr_units = 2, .static_size = STATIC, .reserved_size = RESERVED, .dyn_size = DYN};
        SL_REQUIRE(sl_pcpu_init(&pc, &cfg) == SL_OK);
        SL_CHECK_EQ(pc.nr_chunks, 1);
        SL_CHECK_EQ(pc.first_chunk->id, 0);
        SL_REQUIRE(pc.reserved_chunk && pc.reserved_chunk->id == 1);
        /* pages 47..52 lie wholly in the dynamic region [191488, 220160); the reserved chunk's do not count */
        SL_CHECK_EQ(pc.nr_empty_pop_pages, 6);
        sl_pcpu_chunk_info info;
        SL_REQUIRE(sl_pcpu_chunk_info_get(&pc, 0, &info) == SL_OK);
        SL_CHECK_EQ(info.free_bytes, DYN);
        SL_CHECK_EQ(info.nr_populated, 64);
        SL_CHECK_EQ(info.nr_empty_pop_pages, 6);
        SL_REQUIRE(sl_pcpu_chunk_info_get(&pc, 1, &info) == SL_OK);
        SL_CHECK_EQ(info.free_bytes, RESERVED);
        SL_CHECK_EQ(info.nr_empty_pop_pages, 1); /* page 45 */
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);

        void *d, *r;
        SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 4, 4, &d) == SL_OK);
        SL_CHECK_EQ(chunk_of_area(&pc, d), 0);
        SL_CHECK_EQ(offset_of_area(&pc, d), STATIC + RESERVED);
        SL_REQUIRE(sl_pcpu_alloc_reserved(&pc, 1, 16, 8, &r) == SL_OK);
        SL_CHECK_EQ(chunk_of_area(&pc, r), 1);
        SL_CHECK_EQ(offset_of_area(&pc, r), STATIC);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        uint8_t g[4];
        SL_CHECK_EQ(sl_pcpu_chunk_granules(&pc, 0, g, 4), 4);
        SL_CHECK_EQ(g[0], SLI_PCPU_GRANULE_HIDDEN); /* the static region */

        /* Static variables and the unit's tail are in no chunk. */
        char *base = pc.first_chunk->base;
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, base + 100), SL_EFOREIGN);
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, base + STATIC + RESERVED + DYN + 8), SL_EFOREIGN);
        SL_CHECK(sl_pcpu_address(&pc, 1, STATIC) == r);

        /* The reserved chunk never grows: it fills up, and no chunk is created for it. */
        uint64_t created = pc.chunks_created;
        void *rr[RESERVED / 16];
        unsigned nr = 0;
        while (nr < RESERVED / 16 && sl_pcpu_alloc_reserved(&pc, 0, 16, 8, &rr[nr]) == SL_OK) {
            SL_CHECK_EQ(chunk_of_area(&pc, rr[nr]), 1);
            nr++;
        }
        SL_CHECK_EQ(nr, RESERVED / 16 - 1);
        void *x;
        SL_CHECK_EQ(sl_pcpu_alloc_reserved(&pc, 0, 16, 8, &x), SL_ENOMEM);
        SL_CHECK_EQ(pc.chunks_created, created);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);

        /* Past the dynamic region a chunk is created; emptied, it goes, the first chunk stays. */
        void *dd[DYN / 4];
        unsigned nd = 0;
        while (nd < DYN / 4) {
            SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 4, 4, &dd[nd]) == SL_OK);
            if (chunk_of_area(&pc, dd[nd++]) != 0)
                break;
        }
        SL_CHECK_EQ(nd, DYN / 4); /* the dynamic region held DYN / 4 - 1 more, then a new chunk */
        SL_CHECK(chunk_of_area(&pc, dd[nd - 1]) >= 2);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        for (unsigned i = 0; i < nd; i++)
            SL_REQUIRE(sl_pcpu_free(&pc, 0, dd[i]) == SL_OK);
        for (unsigned i = 0; i < nr; i++)
            SL_REQUIRE(sl_pcpu_free(&pc, 1, rr[i]) == SL_OK);
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, r), SL_OK);
        SL_CHECK(sl_pcpu_free(&pc, 0, r) != SL_OK);
        SL_CHECK_EQ(sl_pcpu_free(&pc, 0, d), SL_OK);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        /* The first chunk (never in the empty slot: its static region is never free) and one empty chunk. */
        SL_CHECK_EQ(pc.nr_chunks, 2);
        SL_CHECK(pc.first_chunk->nr_alloc == 0 && slot_holding(&pc, 0) >= 0);
        SL_CHECK_EQ(pc.nr_empty_pop_pages -
                        (pc.chunks[0] == pc.first_chunk ? pc.chunks[1] : pc.chunks[0])->nr_empty_pop_pages,
                    6);
        sl_pcpu_destroy(&pc);
    }
    /* The first chunk must have a dynamic region; sizes are in 4-byte granules. */
    sl_pcpu pc;
    sl_pcpu_config bad = {.kind = SL_PCPU_BITMAP, .nr_units = 1, .unit_size = UNIT_SMALL, .static_size = UNIT_SMALL};
    SL_CHECK_EQ(sl_pcpu_init(&pc, &bad), SL_EINVAL);
    bad.static_size = 6;
    SL_CHECK_EQ(sl_pcpu_init(&pc, &bad), SL_EINVAL);
    bad.static_size = 4;
    bad.dyn_size = UNIT_SMALL;
    SL_CHECK_EQ(sl_pcpu_init(&pc, &bad), SL_EINVAL);
    /* Without a reserved region a reserved allocation is a normal one. */
    bad.dyn_size = 0;
    SL_REQUIRE(sl_pcpu_init(&pc, &bad) == SL_OK);
    void *p;
    SL_CHECK_EQ(sl_pcpu_alloc_reserved(&pc, 0, 8, 4, &p), SL_OK);
    SL_CHECK_EQ(chunk_of_area(&pc, p), 0);
    SL_CHECK_EQ(offset_of_area(&pc, p), 4);
    sl_pcpu_destroy(&pc);
}

/*
 * A full chunk with one 4-byte hole at an odd granule, and 4-byte requests
 * aligned to 8 (seed 003's corner case).  The area map's contig_hint (4)
 * admits them, so every request rescans the chunk's whole map; v4.14's
 * chunk hint test includes the alignment and rejects the chunk without a
 * scan, but still tries it every time; the scan-hint series relegates it
 * to slot 0, so the second request does not even try it.  A later free
 * that leaves the chunk's slot unchanged leaves it relegated; one that
 * changes it brings it back.
 */
static void test_relegation(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        static traced t;
        SL_REQUIRE(traced_init(&t, (sl_pcpu_config){.kind = kinds[ki], .unit_size = UNIT_SMALL}) == SL_OK);
        static void *p[UNIT_SMALL / 4];
        for (unsigned i = 0; i < UNIT_SMALL / 4; i++) {
            SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 4, 4, &p[i]) == SL_OK);
            SL_REQUIRE(chunk_of_area(&t.pc, p[i]) == 0);
        }
        SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p[1]) == SL_OK);
        SL_CHECK_EQ(slot_holding(&t.pc, 0), 1);
        drain(&t);
        void *a, *b;
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 4, 8, &a) == SL_OK);
        SL_CHECK(chunk_of_area(&t.pc, a) != 0);
        drain(&t);
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 4, 8, &b) == SL_OK);
        drain(&t);
        const sl_event *scan = find(&t, SL_EV_PCPU_ALLOC_SCAN, 0);
        SL_REQUIRE(scan != NULL);
        if (kinds[ki] == SL_PCPU_AREAMAP) {
            SL_CHECK_EQ(scan->arg0, 2);
            SL_CHECK(scan->arg1 >= UNIT_SMALL / 4); /* every entry of chunk 0's map, again */
            SL_CHECK_EQ(slot_holding(&t.pc, 0), 1);
        } else if (kinds[ki] == SL_PCPU_BITMAP) {
            SL_CHECK_EQ(scan->arg0, 2); /* tried, rejected by its hint */
            SL_CHECK_EQ(slot_holding(&t.pc, 0), 1);
        } else {
            SL_CHECK_EQ(scan->arg0, 1); /* relegated: not tried at all */
            SL_CHECK_EQ(slot_holding(&t.pc, 0), 0);
        }
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);

        /* Freeing p[3] leaves the largest hole at 4 bytes (slot 1); p[2] and p[4] make it 16 (slot 2). */
        SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p[3]) == SL_OK);
        SL_CHECK_EQ(slot_holding(&t.pc, 0), kinds[ki] == SL_PCPU_SCANHINT ? 0 : 1);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);
        SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p[2]) == SL_OK);
        SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p[4]) == SL_OK);
        SL_CHECK_EQ(slot_holding(&t.pc, 0), 2);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);

        /* validate() accepts slot 0 only for a relegated scan-hint chunk. */
        sl_pcpu_chunk *c0 = t.pc.first_chunk;
        sl_pcpu_list *e = &c0->list, *head0 = &t.pc.slots[0];
        for (unsigned i = 5; i <= 8; i++)
            SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p[i]) == SL_OK); /* hole [4, 36): slot 3 */
        SL_CHECK_EQ(slot_holding(&t.pc, 0), 3);
        e->prev->next = e->next, e->next->prev = e->prev;
        e->next = head0->next, e->prev = head0, head0->next->prev = e, head0->next = e;
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_ECORRUPT); /* slot 3 is not below PCPU_SLOT_FAIL_THRESHOLD */
        traced_destroy(&t);
    }
}

/*
 * One-page units: after every allocation at least PCPU_EMPTY_POP_PAGES_LOW
 * empty pages are populated (the balance step populated pages of a chunk it
 * had to create, as pcpu_balance_workfn does), and once everything is freed
 * exactly PCPU_EMPTY_POP_PAGES_HIGH one-page chunks remain: the first, and
 * the three the balance step created after destroying the other empty ones.
 */
static void test_balance(void)
{
    enum { N = 3000 };
    for (unsigned ki = 0; ki < 3; ki++) {
        static traced t;
        SL_REQUIRE(traced_init(&t, (sl_pcpu_config){.kind = kinds[ki], .unit_size = SL_PAGE_SIZE}) == SL_OK);
        static void *p[N];
        unsigned by_balance = 0, populated_by_balance = 0;
        for (unsigned i = 0; i < N; i++) {
            SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 4, 4, &p[i]) == SL_OK);
            SL_REQUIRE(t.pc.nr_empty_pop_pages >= SL_PCPU_EMPTY_POP_PAGES_LOW);
            drain(&t);
            by_balance += count(&t, SL_EV_PCPU_CHUNK_CREATE, SLI_PCPU_BY_BALANCE, 1);
            populated_by_balance += count(&t, SL_EV_PCPU_POPULATE, SLI_PCPU_BY_BALANCE, 2);
        }
        SL_CHECK(by_balance >= 2);
        SL_CHECK(populated_by_balance >= 2);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);
        unsigned destroyed = 0;
        for (unsigned i = 0; i < N; i++) {
            SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p[i]) == SL_OK);
            drain(&t);
            destroyed += count(&t, SL_EV_PCPU_CHUNK_DESTROY, SL_NONE32, 0);
        }
        sl_pcpu_stats st;
        sl_pcpu_get_stats(&t.pc, &st);
        SL_CHECK_EQ(st.nr_chunks, SL_PCPU_EMPTY_POP_PAGES_HIGH);
        SL_CHECK_EQ(st.nr_empty_chunks, st.nr_chunks);
        SL_CHECK_EQ(st.nr_empty_pop_pages, SL_PCPU_EMPTY_POP_PAGES_HIGH);
        SL_CHECK_EQ(destroyed, st.chunks_destroyed);
        SL_CHECK(slot_holding(&t.pc, 0) >= 0);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);
        traced_destroy(&t);
    }
}

/*
 * Pages 1 and 3 of a 4-page first chunk are empty; a 4-byte allocation
 * lands at the start of page 1.  It does not break the chunk hint (the run
 * from page 2 on is longer), so v4.14 does not rescan and its count stays
 * at two; v4.13 (pcpu_count_occupied_pages) and v5.4 (the broken block's
 * full contig hint) count one.  Freeing it frees page 1 again, and v4.14's
 * rescan agrees again.
 */
static void test_empty_page_counts(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        sl_pcpu pc;
        sl_pcpu_config cfg = {.kind = kinds[ki], .nr_units = 1, .unit_size = UNIT_SMALL};
        SL_REQUIRE(sl_pcpu_init(&pc, &cfg) == SL_OK);
        void *a0, *a1, *a2, *x;
        SL_REQUIRE(sl_pcpu_alloc(&pc, 0, SL_PAGE_SIZE, 4, &a0) == SL_OK);
        SL_REQUIRE(sl_pcpu_alloc(&pc, 0, SL_PAGE_SIZE, 4, &a1) == SL_OK);
        SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 4, 4, &a2) == SL_OK);
        SL_REQUIRE(sl_pcpu_free(&pc, 0, a1) == SL_OK);
        sl_pcpu_chunk_info info;
        SL_REQUIRE(sl_pcpu_chunk_info_get(&pc, 0, &info) == SL_OK);
        SL_CHECK_EQ(info.nr_empty_pop_pages, 2);
        SL_REQUIRE(sl_pcpu_alloc(&pc, 0, 4, 4, &x) == SL_OK);
        SL_CHECK_EQ(offset_of_area(&pc, x), SL_PAGE_SIZE);
        SL_REQUIRE(sl_pcpu_chunk_info_get(&pc, 0, &info) == SL_OK);
        SL_CHECK_EQ(info.nr_empty_pop_pages, kinds[ki] == SL_PCPU_BITMAP ? 2 : 1);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        SL_REQUIRE(sl_pcpu_free(&pc, 0, x) == SL_OK);
        SL_REQUIRE(sl_pcpu_chunk_info_get(&pc, 0, &info) == SL_OK);
        SL_CHECK_EQ(info.nr_empty_pop_pages, 2);
        SL_CHECK_EQ(sl_pcpu_validate(&pc), SL_OK);
        sl_pcpu_destroy(&pc);
    }
}

/* Every operation is bracketed and its events name the chunk and the operation. */
static void test_event_brackets(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        static traced t;
        SL_REQUIRE(traced_init(&t, (sl_pcpu_config){.kind = kinds[ki], .unit_size = UNIT_SMALL}) == SL_OK);
        drain(&t);
        SL_CHECK_EQ(count(&t, SL_EV_PCPU_CHUNK_CREATE, SLI_PCPU_BY_BOOT, 1), 1); /* the first chunk */
        void *p;
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 24, 8, &p) == SL_OK);
        drain(&t);
        SL_REQUIRE(t.n >= 4);
        const sl_event *b = &t.ev[0], *e = &t.ev[t.n - 1], *a = find(&t, SL_EV_PCPU_ALLOC, 0);
        SL_CHECK(b->kind == SL_EV_OP_BEGIN && b->arg0 == 1 && b->arg1 == 24 && b->arg2 == 8 && b->flags == 0);
        SL_CHECK(e->kind == SL_EV_OP_END && e->arg0 == 1 && e->arg1 == 0 && e->slab == 0 && e->obj == 0);
        SL_REQUIRE(a != NULL);
        SL_CHECK(a->slab == 0 && a->arg0 == 0 && a->arg1 == 24 && a->arg2 == 8 && a->op == b->op);
        SL_CHECK(find(&t, SL_EV_PCPU_ALLOC_SCAN, 0) != NULL && find(&t, SL_EV_PCPU_ALLOC_SCAN, 0)->arg0 == 1);
        for (unsigned i = 0; i < t.n; i++)
            SL_CHECK_EQ(t.ev[i].op, b->op);
        uint32_t op = b->op;

        SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p) == SL_OK);
        drain(&t);
        SL_REQUIRE(t.n >= 3);
        SL_CHECK(t.ev[0].kind == SL_EV_OP_BEGIN && t.ev[0].arg0 == 2 && t.ev[0].slab == 0 && t.ev[0].obj == 0);
        SL_CHECK(t.ev[0].op == op + 1);
        SL_CHECK(find(&t, SL_EV_PCPU_FREE, 0) && find(&t, SL_EV_PCPU_FREE, 0)->arg1 == 24);
        SL_CHECK(t.ev[t.n - 1].kind == SL_EV_OP_END && t.ev[t.n - 1].arg1 == 0);

        SL_CHECK_EQ(sl_pcpu_free(&t.pc, 0, (void *)&t), SL_EFOREIGN);
        drain(&t);
        SL_REQUIRE(t.n == 3);
        SL_CHECK(t.ev[0].kind == SL_EV_OP_BEGIN && t.ev[0].slab == SL_NONE32);
        SL_CHECK(t.ev[1].kind == SL_EV_ERROR && (int32_t)t.ev[1].arg0 == SL_EFOREIGN);
        SL_CHECK(t.ev[2].kind == SL_EV_OP_END && (int32_t)t.ev[2].arg1 == SL_EFOREIGN);
        SL_CHECK_EQ(sl_pcpu_alloc(&t.pc, 0, 4, 12, &p), SL_EINVAL);
        drain(&t);
        SL_CHECK(t.n == 3 && t.ev[1].kind == SL_EV_ERROR && t.ev[2].slab == SL_NONE32);
        /* A CPU the instance does not have is refused before any event (its ring does not exist). */
        SL_CHECK_EQ(sl_pcpu_alloc(&t.pc, 1, 8, 8, &p), SL_EINVAL);
        SL_CHECK(p == NULL);
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 8, 8, &p) == SL_OK);
        drain(&t);
        SL_CHECK_EQ(sl_pcpu_free(&t.pc, 1, p), SL_EINVAL);
        SL_CHECK_EQ(sl_pcpu_free(&t.pc, 0, p), SL_OK);
        drain(&t);
        SL_CHECK(t.n >= 3 && t.ev[0].kind == SL_EV_OP_BEGIN && t.ev[0].arg0 == 2);
        SL_CHECK_EQ(count(&t, SL_EV_ERROR, SL_NONE32, 0), 0);
        traced_destroy(&t);
    }
}

/*
 * Who creates chunks and populates pages, on a 16-page unit: two 32 KiB
 * areas fill the first chunk and leave no empty page, so the balance step
 * creates chunk 1 and populates four of its pages; a 4-byte and a 32 KiB
 * area go there (the second populating pages for itself); the next 32 KiB
 * fits nowhere and no chunk is empty, so the allocation creates chunk 2.
 */
static void test_chunk_creation_and_population(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        static traced t;
        SL_REQUIRE(traced_init(&t, (sl_pcpu_config){.kind = kinds[ki], .unit_size = 16 * SL_PAGE_SIZE}) == SL_OK);
        void *a, *b, *c, *d, *e;
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 32768, 4, &a) == SL_OK);
        drain(&t);
        SL_CHECK_EQ(count(&t, SL_EV_PCPU_BALANCE, SL_NONE32, 0), 0);
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 32768, 4, &b) == SL_OK);
        drain(&t);
        const sl_event *cr = find(&t, SL_EV_PCPU_CHUNK_CREATE, 0), *bal = find(&t, SL_EV_PCPU_BALANCE, 0);
        SL_REQUIRE(cr && bal);
        SL_CHECK(cr->slab == 1 && cr->arg1 == SLI_PCPU_BY_BALANCE && cr->op == t.ev[0].op);
        SL_CHECK(bal->arg0 == 0 && bal->arg1 == 4 && bal->arg2 == 4);
        SL_CHECK_EQ(count(&t, SL_EV_PCPU_POPULATE, SLI_PCPU_BY_BALANCE, 2), 1);
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 4, 4, &c) == SL_OK);
        SL_CHECK_EQ(chunk_of_area(&t.pc, c), 1);
        drain(&t);
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 32768, 4, &d) == SL_OK);
        SL_CHECK_EQ(chunk_of_area(&t.pc, d), 1);
        drain(&t);
        const sl_event *pop = find(&t, SL_EV_PCPU_POPULATE, 0);
        SL_REQUIRE(pop != NULL);
        SL_CHECK(pop->slab == 1 && pop->arg2 == SLI_PCPU_BY_ALLOC && pop->arg1 == 4 && pop->arg0 == 5);
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 32768, 4, &e) == SL_OK);
        SL_CHECK_EQ(chunk_of_area(&t.pc, e), 2);
        drain(&t);
        cr = find(&t, SL_EV_PCPU_CHUNK_CREATE, 0);
        SL_REQUIRE(cr != NULL);
        SL_CHECK(cr->slab == 2 && cr->arg1 == SLI_PCPU_BY_ALLOC && cr->arg0 == 3);
        const sl_event *mv = find(&t, SL_EV_PCPU_SLOT_MOVE, 0);
        SL_CHECK(mv && mv->slab == 2 && mv->arg0 == SL_NONE32 && mv->arg1 == (uint32_t)t.pc.nr_slots - 1);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);
        traced_destroy(&t);
    }
}

/*
 * The area map's memmoves, counted as the kernel's memmove counts entries:
 * a split with a head and a tail moves the entries after the area right by
 * two; freeing an area next to a free one moves the rest of the map left by
 * one.
 */
static void test_area_map_memmove_events(void)
{
    static traced t;
    SL_REQUIRE(traced_init(&t, (sl_pcpu_config){.kind = SL_PCPU_AREAMAP, .unit_size = UNIT_SMALL}) == SL_OK);
    void *p[10], *q;
    SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 4, 4, &p[0]) == SL_OK);
    drain(&t);
    /* map {0|1, 4, end|1}: area 1 splits into head [4, 16), the area, tail: one entry (the sentinel) moves by 2 */
    SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 4, 16, &q) == SL_OK);
    drain(&t);
    const sl_event *m = find(&t, SL_EV_PCPU_MAP_MEMMOVE, 0);
    SL_REQUIRE(m != NULL);
    SL_CHECK(m->slab == 0 && m->arg0 == 1 && (int32_t)m->arg1 == 2 && m->arg2 == 2);
    SL_REQUIRE(sl_pcpu_free(&t.pc, 0, q) == SL_OK);
    SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p[0]) == SL_OK);

    /* Ten 4-byte areas: map {0|1, 4|1, ..., 36|1, 40, end|1}; free area 0, then area 1 merges into it. */
    for (unsigned i = 0; i < 10; i++)
        SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 4, 4, &p[i]) == SL_OK);
    SL_CHECK_EQ(t.pc.first_chunk->map_used, 11);
    drain(&t);
    SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p[0]) == SL_OK);
    drain(&t);
    SL_CHECK_EQ(count(&t, SL_EV_PCPU_MAP_MEMMOVE, SL_NONE32, 0), 0);
    SL_REQUIRE(sl_pcpu_free(&t.pc, 0, p[1]) == SL_OK);
    drain(&t);
    m = find(&t, SL_EV_PCPU_MAP_MEMMOVE, 0);
    SL_REQUIRE(m != NULL);
    SL_CHECK(m->arg0 == 10 && (int32_t)m->arg1 == -1 && m->arg2 == 2);
    SL_CHECK_EQ(t.pc.first_chunk->map_used, 10);
    traced_destroy(&t);
}

/*
 * Which hint refreshes each generation does, on a random run: v4.14 scans
 * blocks from first_free and chunks from first_bit only; the scan-hint
 * series also scans forward from a promoted scan hint, for blocks and for
 * the chunk; the area map has no hints to refresh.
 */
static void test_hint_refresh_events(void)
{
    for (unsigned ki = 0; ki < 3; ki++) {
        static traced t;
        SL_REQUIRE(traced_init(&t, (sl_pcpu_config){.kind = kinds[ki], .unit_size = 8 * SL_PAGE_SIZE}) == SL_OK);
        static void *live[128];
        unsigned by_kind[4] = {0};
        uint64_t rng = 42;
        for (unsigned s = 0; s < 3000; s++) {
            unsigned slot = (unsigned)(sl_test_rand(&rng) % 128);
            if (live[slot]) {
                SL_REQUIRE(sl_pcpu_free(&t.pc, 0, live[slot]) == SL_OK);
                live[slot] = NULL;
            } else {
                uint64_t x = sl_test_rand(&rng);
                SL_REQUIRE(sl_pcpu_alloc(&t.pc, 0, 4 + 4 * (x % 200), (size_t)4 << (x >> 40) % 5, &live[slot]) ==
                           SL_OK);
            }
            drain(&t);
            for (unsigned k = 0; k < 4; k++)
                by_kind[k] += count(&t, SL_EV_PCPU_HINT_REFRESH, k, 0);
        }
        if (kinds[ki] == SL_PCPU_AREAMAP)
            SL_CHECK(by_kind[0] + by_kind[1] + by_kind[2] + by_kind[3] == 0);
        else if (kinds[ki] == SL_PCPU_BITMAP)
            SL_CHECK(by_kind[SLI_PCPU_REFRESH_BLOCK] && by_kind[SLI_PCPU_REFRESH_CHUNK] &&
                     !by_kind[SLI_PCPU_REFRESH_BLOCK_FORWARD] && !by_kind[SLI_PCPU_REFRESH_CHUNK_FORWARD]);
        else
            SL_CHECK(by_kind[SLI_PCPU_REFRESH_BLOCK_FORWARD] && by_kind[SLI_PCPU_REFRESH_CHUNK_FORWARD] &&
                     by_kind[SLI_PCPU_REFRESH_CHUNK]);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);
        traced_destroy(&t);
        memset(live, 0, sizeof live);
    }
}

/* The same operations on two fresh instances: the same snapshot, byte for byte. */
static long script_snapshot(sl_pcpu_kind k, unsigned char *buf, size_t cap)
{
    static traced t;
    sl_pcpu_config cfg = {.kind = k, .unit_size = 8 * SL_PAGE_SIZE, .static_size = 4100, .reserved_size = 2048};
    if (traced_init(&t, cfg) != SL_OK)
        return SL_ENOMEM;
    void *live[64] = {0};
    uint64_t rng = 7;
    for (unsigned s = 0; s < 1500; s++) {
        unsigned slot = (unsigned)(sl_test_rand(&rng) % 64);
        uint64_t x = sl_test_rand(&rng);
        if (live[slot]) {
            sl_pcpu_free(&t.pc, 0, live[slot]);
            live[slot] = NULL;
        } else if (sl_pcpu_alloc_reserved(&t.pc, 0, 4 + 4 * (x % 300), (size_t)4 << (x >> 40) % 6, &live[slot]) ==
                   SL_OK) {
            if ((x >> 50) % 4) { /* most go back: then a dynamic area instead */
                sl_pcpu_free(&t.pc, 0, live[slot]);
                sl_pcpu_alloc(&t.pc, 0, 4 + 4 * (x % 3000), (size_t)4 << (x >> 40) % 6, &live[slot]);
            }
        }
    }
    long n = sl_pcpu_snapshot(&t.pc, buf, cap);
    traced_destroy(&t);
    return n;
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void test_snapshot(void)
{
    enum { CAP = 1 << 20 };
    static unsigned char a[CAP], b[CAP];
    for (unsigned ki = 0; ki < 3; ki++) {
        long na = script_snapshot(kinds[ki], a, CAP), nb = script_snapshot(kinds[ki], b, CAP);
        SL_REQUIRE(na > 0 && na == nb);
        SL_CHECK(memcmp(a, b, (size_t)na) == 0);
        SL_CHECK_EQ(get32(a), 0x55504350u);
        SL_CHECK_EQ(get32(a + 8), (uint32_t)na);
        SL_CHECK_EQ(get32(a + 12), kinds[ki]);
        uint32_t nchunks = get32(a + 32), nslots = get32(a + 28), lists = get32(a + 76);
        SL_CHECK_EQ(get32(a + 52), 1); /* the reserved chunk */
        /* Records in id order; the slot lists name every chunk but the reserved one, once. */
        uint32_t listed = 0, at = lists + 4 * nslots;
        for (uint32_t s = 0; s < nslots; s++) {
            uint32_t n = get32(a + lists + 4 * s);
            for (uint32_t i = 0; i < n; i++, at += 4) {
                uint32_t id = get32(a + at), r;
                for (r = 0; r < nchunks && get32(a + 128 + 112 * r) != id; r++)
                    ;
                SL_REQUIRE(r < nchunks);
                SL_CHECK(get32(a + 128 + 112 * r + 8) == s && get32(a + 128 + 112 * r + 16) == i);
            }
            listed += n;
        }
        SL_CHECK_EQ(listed, nchunks - 1);
        for (uint32_t r = 1; r < nchunks; r++)
            SL_CHECK(get32(a + 128 + 112 * r) > get32(a + 128 + 112 * (r - 1)));
        SL_CHECK_EQ(get32(a + 128 + 112 * 1 + 4), SLI_PCPU_CHUNK_RESERVED);
        SL_CHECK_EQ(get32(a + 128 + 112 * 1 + 8), SL_NONE32);
        SL_CHECK_EQ(get32(a + 128 + 4), SLI_PCPU_CHUNK_FIRST);
    }
    /* Too small a buffer: minus the bytes needed, nothing written. */
    sl_pcpu pc;
    sl_pcpu_config cfg = {.kind = SL_PCPU_SCANHINT, .nr_units = 1, .unit_size = UNIT_SMALL};
    SL_REQUIRE(sl_pcpu_init(&pc, &cfg) == SL_OK);
    long need = -sl_pcpu_snapshot(&pc, NULL, 0);
    SL_CHECK(need > 128 + 112);
    memset(a, 0xab, 8);
    SL_CHECK_EQ(sl_pcpu_snapshot(&pc, a, (size_t)need - 1), -need);
    SL_CHECK_EQ(a[0], 0xab);
    SL_CHECK_EQ(sl_pcpu_snapshot(&pc, a, (size_t)need), need);
    sl_pcpu_destroy(&pc);
}

/*
 * Placement by a replayed trace (cfg.placed), on an instance whose first
 * chunk hides a one-page static region: added chunks take the ids after
 * the first chunk; areas land exactly where asked, populate their pages
 * and keep every hint (validate after each step), bracketed as allocations
 * with the placed flag; overlapping, misaligned, hidden, past-the-unit and
 * unknown-chunk areas are refused and change nothing; a chunk emptied by
 * frees stays (no balance step) until removed, which only an empty chunk
 * that is not the first one may be; ids are never reused.  An ordinary
 * instance refuses the calls, a placed one refuses sl_pcpu_alloc, and a
 * placed area map is refused at init.
 */
static void test_placement(void)
{
    enum { PAGE = (int)SL_PAGE_SIZE };
    for (unsigned ki = 1; ki < 3; ki++) {
        static traced t;
        sl_pcpu_config cfg = {.kind = kinds[ki], .unit_size = UNIT_SMALL, .static_size = PAGE, .placed = true};
        SL_REQUIRE(traced_init(&t, cfg) == SL_OK);
        sl_pcpu_stats booted;
        sl_pcpu_get_stats(&t.pc, &booted);
        drain(&t);
        uint32_t a = SL_NONE32, b = SL_NONE32;
        SL_REQUIRE(sl_pcpu_chunk_add(&t.pc, &a) == SL_OK);
        SL_REQUIRE(sl_pcpu_chunk_add(&t.pc, &b) == SL_OK);
        SL_CHECK(a == 1 && b == 2);
        drain(&t);
        SL_CHECK_EQ(count(&t, SL_EV_PCPU_CHUNK_CREATE, SLI_PCPU_BY_TRACE, 1), 2);
        SL_CHECK(find(&t, SL_EV_PCPU_CHUNK_CREATE, 0)->slab == a && find(&t, SL_EV_PCPU_CHUNK_CREATE, 0)->op == 0);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);

        /* An area across a page boundary: both pages populated, no search. */
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 0, a, PAGE - 8, 16), SL_OK);
        drain(&t);
        SL_REQUIRE(t.n >= 4);
        SL_CHECK(t.ev[0].kind == SL_EV_OP_BEGIN && t.ev[0].flags == 2 && t.ev[0].arg0 == 1 && t.ev[0].arg1 == 16);
        const sl_event *al = find(&t, SL_EV_PCPU_ALLOC, 0), *pop = find(&t, SL_EV_PCPU_POPULATE, 0);
        SL_CHECK(al && al->slab == a && al->arg0 == (uint32_t)PAGE - 8 && al->arg1 == 16);
        SL_CHECK(pop && pop->slab == a && pop->arg0 == 2 && pop->arg1 == 0 && pop->arg2 == SLI_PCPU_BY_ALLOC);
        SL_CHECK(find(&t, SL_EV_PCPU_ALLOC_SCAN, 0) == NULL);
        const sl_event *end = &t.ev[t.n - 1];
        SL_CHECK(end->kind == SL_EV_OP_END && end->arg1 == 0 && end->slab == a && end->obj == (uint32_t)PAGE - 8);
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 0, a, 0, 6), SL_OK); /* rounded up to 8 */
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 0, b, 3 * PAGE, PAGE), SL_OK);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);
        sl_pcpu_chunk_info ci;
        SL_REQUIRE(sl_pcpu_chunk_info_get(&t.pc, a, &ci) == SL_OK);
        SL_CHECK(ci.nr_alloc == 2 && ci.free_bytes == UNIT_SMALL - 24 && ci.nr_populated == 2);
        static uint8_t g[UNIT_SMALL / SL_PCPU_MIN_ALLOC_SIZE];
        SL_REQUIRE(sl_pcpu_chunk_granules(&t.pc, a, g, sizeof g) == (int)sizeof g);
        SL_CHECK(g[0] == 1 && g[1] == 2 && g[2] == 0);
        SL_CHECK(g[PAGE / 4 - 3] == 0 && g[PAGE / 4 - 2] == 1 && g[PAGE / 4 + 1] == 2 && g[PAGE / 4 + 2] == 0);

        /* Refusals change nothing. */
        drain(&t);
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 0, a, PAGE - 12, 8), SL_EBUSY);
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 0, a, 4, 4), SL_EBUSY);
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 0, a, 2, 4), SL_EINVAL);
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 0, a, UNIT_SMALL - 4, 8), SL_EINVAL);
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 0, 7, 0, 4), SL_EINVAL);
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 0, 0, 0, 4), SL_EINVAL);  /* the first chunk's static region */
        SL_CHECK_EQ(sl_pcpu_alloc_at(&t.pc, 1, a, 64, 4), SL_EINVAL); /* one unit */
        drain(&t);
        SL_CHECK_EQ(count(&t, SL_EV_ERROR, SL_NONE32, 0), 6); /* the CPU that does not exist reports nothing */
        SL_CHECK_EQ(count(&t, SL_EV_PCPU_ALLOC, SL_NONE32, 0), 0);
        void *p;
        SL_CHECK_EQ(sl_pcpu_alloc(&t.pc, 0, 8, 8, &p), SL_EINVAL);
        SL_CHECK_EQ(sl_pcpu_chunk_remove(&t.pc, a), SL_EBUSY);
        SL_CHECK_EQ(sl_pcpu_chunk_remove(&t.pc, 0), SL_EINVAL);
        sl_pcpu_stats st;
        sl_pcpu_get_stats(&t.pc, &st);
        SL_CHECK(st.live_allocs == 3 && st.nr_chunks == 3);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);

        /* Emptied, chunk b stays until the trace removes it; its id is not given again. */
        SL_CHECK_EQ(sl_pcpu_free(&t.pc, 0, sl_pcpu_address(&t.pc, b, 3 * PAGE)), SL_OK);
        drain(&t);
        SL_CHECK_EQ(count(&t, SL_EV_PCPU_BALANCE, SL_NONE32, 0), 0);
        sl_pcpu_get_stats(&t.pc, &st);
        SL_CHECK(st.nr_chunks == 3 && st.chunks_destroyed == 0);
        SL_CHECK_EQ(sl_pcpu_chunk_remove(&t.pc, b), SL_OK);
        drain(&t);
        const sl_event *gone = find(&t, SL_EV_PCPU_CHUNK_DESTROY, 0);
        SL_CHECK(gone && gone->slab == b && gone->arg0 == 1);
        SL_CHECK_EQ(sl_pcpu_chunk_remove(&t.pc, b), SL_EINVAL);
        SL_CHECK(sl_pcpu_address(&t.pc, b, 0) == NULL);
        sl_pcpu_get_stats(&t.pc, &st);
        SL_CHECK(st.nr_chunks == 2 && st.chunks_destroyed == 1 && st.nr_populated == booted.nr_populated + 2);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);
        uint32_t c = SL_NONE32;
        SL_CHECK(sl_pcpu_chunk_add(&t.pc, &c) == SL_OK && c == 3);
        SL_CHECK_EQ(sl_pcpu_free(&t.pc, 0, sl_pcpu_address(&t.pc, a, 0)), SL_OK);
        SL_CHECK_EQ(sl_pcpu_free(&t.pc, 0, sl_pcpu_address(&t.pc, a, PAGE - 8)), SL_OK);
        SL_CHECK(sl_pcpu_chunk_remove(&t.pc, a) == SL_OK && sl_pcpu_chunk_remove(&t.pc, c) == SL_OK);
        sl_pcpu_get_stats(&t.pc, &st);
        SL_CHECK(st.nr_chunks == 1 && st.nr_populated == booted.nr_populated &&
                 st.nr_empty_pop_pages == booted.nr_empty_pop_pages);
        SL_CHECK_EQ(sl_pcpu_validate(&t.pc), SL_OK);
        traced_destroy(&t);
    }
    sl_pcpu pc;
    SL_REQUIRE(sl_pcpu_init(&pc, &(sl_pcpu_config){.kind = SL_PCPU_SCANHINT, .nr_units = 1}) == SL_OK);
    uint32_t id;
    SL_CHECK_EQ(sl_pcpu_chunk_add(&pc, &id), SL_EINVAL);
    SL_CHECK_EQ(sl_pcpu_alloc_at(&pc, 0, 0, 0, 4), SL_EINVAL);
    SL_CHECK_EQ(sl_pcpu_chunk_remove(&pc, 0), SL_EINVAL);
    sl_pcpu_destroy(&pc);
    SL_CHECK_EQ(sl_pcpu_init(&pc, &(sl_pcpu_config){.kind = SL_PCPU_AREAMAP, .nr_units = 1, .placed = true}),
                SL_EINVAL);
}

int main(void)
{
    SL_RUN(test_first_chunk);
    SL_RUN(test_relegation);
    SL_RUN(test_balance);
    SL_RUN(test_empty_page_counts);
    SL_RUN(test_event_brackets);
    SL_RUN(test_chunk_creation_and_population);
    SL_RUN(test_area_map_memmove_events);
    SL_RUN(test_hint_refresh_events);
    SL_RUN(test_snapshot);
    SL_RUN(test_placement);
    return sl_check_summary();
}
