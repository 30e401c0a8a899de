/*
 * kversion.c - reading Linux version strings (kversion.h).
 */
#include "kversion.h"

#include <stddef.h>

/* Reads 1..3 decimal digits at *p into *out; false if there are none or more than three. */
static bool read_number(const char **p, unsigned *out)
{
    unsigned v = 0, digits = 0;
    while (**p >= '0' && **p <= '9') {
        if (++digits > 3)
            return false;
        v = v * 10 + (unsigned)(**p - '0');
        (*p)++;
    }
    *out = v;
    return digits > 0;
}

const char *sl_kversion_scan(const char *s, sl_kversion_form form, uint8_t *major, uint8_t *minor)
{
    const char *p = s;
    unsigned x, y, z;
    if (!p)
        return NULL;
    if (*p == 'v')
        p++;
    if (!read_number(&p, &x) || *p != '.')
        return NULL;
    p++;
    if (!read_number(&p, &y) || x < 1 || x > 99 || y > 255)
        return NULL;
    *major = (uint8_t)x;
    *minor = (uint8_t)y;
    if (*p == '.') { /* a stable release: X.Y.Z */
        const char *q = p + 1;
        if (read_number(&q, &z))
            p = q;
        else if (form == SL_KVERSION_STRICT)
            return NULL;
    }
    if (p[0] == '-' && p[1] == 'r' && p[2] == 'c') { /* a release candidate: X.Y-rcN */
        const char *q = p + 3;
        if (read_number(&q, &z))
            p = q;
        else if (form == SL_KVERSION_STRICT)
            return NULL;
    }
    if (form == SL_KVERSION_RELEASE) {
        if (*p == '-' || *p == '+' || *p == '.' || *p == '_' || *p == '~')
            while (*p)
                p++;
    }
    return p;
}
