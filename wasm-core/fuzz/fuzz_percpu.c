/*
 * fuzz_percpu.c - libFuzzer drives one percpu instance with a byte program:
 * byte 0 picks the allocator and the unit size, then every 4 bytes are one
 * operation (allocate a size and alignment, free a live area, free it
 * twice, free an interior or foreign address).  After each operation
 * validate() must pass, each live area's copies must keep their tags, and
 * every bad free must fail with an error that fits it.
 */
#include "../src/percpu/percpu.h"

#include <stdlib.h>
#include <string.h>

#define LIVE 64
#define UNITS 2

static void check(bool ok)
{
    if (!ok)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    sl_pcpu pc;
    sl_pcpu_config cfg = {.kind = (sl_pcpu_kind)(data[0] % 3), .nr_units = UNITS,
                          .unit_size = (size_t)(1 + (data[0] >> 2) % 8) * SL_PAGE_SIZE};
    check(sl_pcpu_init(&pc, &cfg) == SL_OK);
    void *live[LIVE] = {0};
    size_t len[LIVE] = {0};
    for (size_t i = 1; i + 4 <= size; i += 4) {
        const uint8_t *op = data + i;
        unsigned slot = op[1] % LIVE;
        switch (op[0] % 5) {
        case 0:
        case 1: { /* allocate */
            if (live[slot])
                break;
            size_t sz = 1 + (((size_t)op[2] << 8 | op[3]) % (op[0] & 8 ? 9000 : 256));
            size_t align = (size_t)1 << (op[0] >> 4) % 13;
            void *p;
            int rc = sl_pcpu_alloc(&pc, slot % UNITS, sz, align, &p);
            if (sz > (size_t)pc.unit_size) {
                check(rc == SL_EINVAL);
                break;
            }
            check(rc == SL_OK && (uintptr_t)p % align == 0);
            for (unsigned u = 0; u < UNITS; u++)
                memset(sl_pcpu_ptr(&pc, p, u), (int)(slot * UNITS + u), sz);
            live[slot] = p;
            len[slot] = sz;
            break;
        }
        case 2: /* free, checking the tags */
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
        case 3: /* an interior address of a live area */
            if (live[slot] && len[slot] > 4)
                check(sl_pcpu_free(&pc, 0, (char *)live[slot] + 4) == SL_EMISALIGNED);
            break;
        case 4: /* a foreign address */
            check(sl_pcpu_free(&pc, 0, (void *)&pc) == SL_EFOREIGN);
            break;
        }
        check(sl_pcpu_validate(&pc) == SL_OK);
    }
    sl_pcpu_destroy(&pc);
    return 0;
}
