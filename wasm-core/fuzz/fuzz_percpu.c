/*
 * fuzz_percpu.c - libFuzzer drives one percpu instance with a byte program:
 * byte 0 picks the allocator and the unit size, byte 1 the first chunk's
 * static and reserved regions, then every 4 bytes are one operation
 * (allocate a size and alignment, from the reserved chunk or not, free a
 * live area, free it twice, free an interior, foreign or static address,
 * take a snapshot).  After each operation validate() must pass, each live
 * area's copies must keep their tags, a reserved area must come from the
 * reserved chunk, every bad free must fail with an error that fits it, and
 * a snapshot must fill exactly the buffer it asks for.
 */
#include "../src/percpu/pcpu_internal.h"

#include <stdlib.h>
#include <string.h>

#define LIVE 64
#define UNITS 2

static void check(bool ok)
{
    if (!ok)
        __builtin_trap();
}

/* A snapshot into exactly the bytes it asks for; one byte less is refused without writing. */
static void check_snapshot(sl_pcpu *pc)
{
    long need = -sl_pcpu_snapshot(pc, NULL, 0);
    check(need > 0);
    unsigned char *buf = malloc((size_t)need);
    check(buf != NULL);
    check(sl_pcpu_snapshot(pc, buf, (size_t)need - 1) == -need);
    check(sl_pcpu_snapshot(pc, buf, (size_t)need) == need && memcmp(buf, "PCPU", 4) == 0);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    sl_pcpu pc;
    size_t unit = (size_t)(1 + (data[0] >> 2) % 8) * SL_PAGE_SIZE;
    sl_pcpu_config cfg = {.kind = (sl_pcpu_kind)(data[0] % 3),
                          .nr_units = UNITS,
                          .unit_size = unit,
                          .static_size = (data[1] & 7) * unit / 16 / 4 * 4,
                          .reserved_size = ((data[1] >> 3) & 3) * unit / 16 / 4 * 4};
    check(sl_pcpu_init(&pc, &cfg) == SL_OK);
    void *live[LIVE] = {0};
    size_t len[LIVE] = {0};
    for (size_t i = 2; i + 4 <= size; i += 4) {
        const uint8_t *op = data + i;
        unsigned slot = op[1] % LIVE;
        switch (op[0] % 8) {
        case 0:
        case 1:
        case 2: { /* allocate; case 2 from the reserved chunk */
            if (live[slot])
                break;
            bool reserved = (op[0] % 8) == 2;
            size_t sz = 1 + (((size_t)op[2] << 8 | op[3]) % (op[0] & 8 ? 9000 : 256));
            size_t align = (size_t)1 << (op[0] >> 4) % 13;
            void *p;
            int rc = (reserved ? sl_pcpu_alloc_reserved : sl_pcpu_alloc)(&pc, slot % UNITS, sz, align, &p);
            if (sz > (size_t)pc.unit_size) {
                check(rc == SL_EINVAL);
                break;
            }
            if (reserved && pc.reserved_chunk && rc == SL_ENOMEM)
                break; /* the reserved chunk is full: it never grows */
            check(rc == SL_OK && (uintptr_t)p % align == 0);
            uint32_t id, off;
            check(sl_pcpu_locate(&pc, p, &id, &off) && sl_pcpu_address(&pc, id, off) == p);
            bool in_reserved = pc.reserved_chunk && id == pc.reserved_chunk->id;
            check(in_reserved == (reserved && pc.reserved_chunk));
            for (unsigned u = 0; u < UNITS; u++)
                memset(sl_pcpu_ptr(&pc, p, u), (int)(slot * UNITS + u), sz);
            live[slot] = p;
            len[slot] = sz;
            break;
        }
        case 3: /* free, checking the tags */
            if (!live[slot])
                break;
            for (unsigned u = 0; u < UNITS; u++) {
                const uint8_t *b = sl_pcpu_ptr(&pc, live[slot], u);
                for (size_t k = 0; k < len[slot]; k++)
                    check(b[k] == (uint8_t)(slot * UNITS + u));
            }
            check(sl_pcpu_free(&pc, op[2] % UNITS, live[slot]) == SL_OK);
            if (op[3] & 1) {
                /*
                 * And again.  The bitmaps still see the stale start (double
                 * free); the area map may have merged it away (misaligned);
                 * the chunk may be gone (foreign).  Never SL_OK.
                 */
                int rc = sl_pcpu_free(&pc, 0, live[slot]);
                check(rc == SL_EDOUBLEFREE || rc == SL_EMISALIGNED || rc == SL_EFOREIGN);
                check(cfg.kind == SL_PCPU_AREAMAP || rc != SL_EMISALIGNED);
            }
            live[slot] = NULL;
            break;
        case 4: /* an interior address of a live area */
            if (live[slot] && len[slot] > 4)
                check(sl_pcpu_free(&pc, 0, (char *)live[slot] + 4) == SL_EMISALIGNED);
            break;
        case 5: /* a foreign address */
            check(sl_pcpu_free(&pc, 0, (void *)&pc) == SL_EFOREIGN);
            break;
        case 6: /* a static variable of the first chunk: in no chunk */
            if (cfg.static_size)
                check(sl_pcpu_free(&pc, 0, pc.first_chunk->base + (op[2] * 4) % cfg.static_size) == SL_EFOREIGN);
            break;
        case 7:
            check_snapshot(&pc);
            break;
        }
        check(sl_pcpu_validate(&pc) == SL_OK);
    }
    sl_pcpu_destroy(&pc);
    return 0;
}
