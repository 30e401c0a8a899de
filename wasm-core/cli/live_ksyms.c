/* live_ksyms.c - call-site names from /proc/kallsyms (live_ksyms.h). */
#include "live_ksyms.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_addr(const void *a, const void *b)
{
    const sl_ksym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

size_t sl_ksyms_load(sl_ksyms *k, const char *path)
{
    memset(k, 0, sizeof *k);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t cap = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char type, name[256];
        uint64_t addr;
        if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3 || addr == 0)
            continue;
        if (type != 't' && type != 'T')
            continue;
        if (k->n == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            sl_ksym *grown = realloc(k->syms, ncap * sizeof *grown);
            if (!grown)
                break;
            k->syms = grown;
            cap = ncap;
        }
        char *copy = strdup(name);
        if (!copy)
            break;
        k->syms[k->n].addr = addr;
        k->syms[k->n].name = copy;
        k->n++;
    }
    fclose(f);
    if (k->n) /* none without root: kallsyms shows every address as 0 (and qsort must not get NULL) */
        qsort(k->syms, k->n, sizeof *k->syms, by_addr);
    return k->n;
}

void sl_ksyms_name(const sl_ksyms *k, uint64_t addr, char *out, size_t outlen)
{
    size_t lo = 0, hi = k->n;
    while (lo < hi) { /* the first symbol above addr */
        size_t mid = lo + (hi - lo) / 2;
        if (k->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* A symbol more than 1 MiB below addr is not the function addr is in. */
    if (lo == 0 || addr - k->syms[lo - 1].addr > (1u << 20))
        snprintf(out, outlen, "0x%" PRIx64, addr);
    else
        snprintf(out, outlen, "%s+0x%" PRIx64, k->syms[lo - 1].name, addr - k->syms[lo - 1].addr);
}

void sl_ksyms_free(sl_ksyms *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->syms[i].name);
    free(k->syms);
    memset(k, 0, sizeof *k);
}
