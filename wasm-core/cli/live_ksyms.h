/*
 * live_ksyms.h - kernel text addresses to "function+0xoffset", from
 * /proc/kallsyms (text symbols are there even without KALLSYMS_ALL; as root
 * their addresses are real).  Used to name the call sites of events.
 */
#ifndef SL_LIVE_KSYMS_H
#define SL_LIVE_KSYMS_H

#include <stddef.h>
#include <stdint.h>

typedef struct sl_ksym {
    uint64_t addr;
    char *name;
} sl_ksym;

typedef struct sl_ksyms {
    sl_ksym *syms; /* sorted by address */
    size_t n;
} sl_ksyms;

/* Reads the text symbols of path (normally /proc/kallsyms). Returns the count read (0 when none or unreadable). */
size_t sl_ksyms_load(sl_ksyms *k, const char *path);

/* Writes "function+0xoff" for addr into out, or "0x<addr>" when no symbol covers it. */
void sl_ksyms_name(const sl_ksyms *k, uint64_t addr, char *out, size_t outlen);

void sl_ksyms_free(sl_ksyms *k);

#endif /* SL_LIVE_KSYMS_H */
