/*
 * kversion.h - the one reader of Linux version strings in the core.
 *
 * Every place that takes a kernel version (the SLUB eras' `--kernel`, the
 * replay's `--kernel` and the capture's `uname -r`, the bindings) reads it
 * here, so they accept the same strings: "X.Y", a stable release "X.Y.Z",
 * a release candidate "X.Y-rcN" (each read as X.Y), optionally led by 'v'
 * as in a git tag; and, for a `uname -r` string, any distribution suffix
 * after that ("6.8.0-45-generic", "6.18.4+deb13-amd64").  It lives in the
 * platform layer, under every model, because the SLUB, SLAB and percpu
 * models and the replay all need it and none of them may include another.
 *
 * What a version *means* (which rules) is each model's business: the SLUB
 * model's eras.c, the replay's model choice.
 */
#ifndef SL_KVERSION_H
#define SL_KVERSION_H

#include <stdbool.h>
#include <stdint.h>

/* How much after "X.Y" sl_kversion_scan accepts. */
typedef enum sl_kversion_form {
    SL_KVERSION_STRICT = 0,  /* "X.Y", "X.Y.Z", "X.Y-rcN" (and a leading 'v'), nothing else */
    SL_KVERSION_RELEASE = 1, /* the same, then anything from a '-', '+', '.' or '_' on: `uname -r` */
} sl_kversion_form;

/*
 * Reads the version at the start of s into *major and *minor (X and Y of
 * at most three digits each, X 1..99, Y 0..255).  Returns a pointer just past
 * what it accepted (for SL_KVERSION_STRICT the caller checks that the
 * string, or its list item, ends there), or NULL if s does not start with a
 * version.
 */
const char *sl_kversion_scan(const char *s, sl_kversion_form form, uint8_t *major, uint8_t *minor);

/* The sentence a caller gives for a string sl_kversion_scan refused. */
#define SL_KVERSION_FORMS "X.Y, X.Y.Z or X.Y-rcN, e.g. 6.18, 6.8.12 or 7.3-rc2"

#endif /* SL_KVERSION_H */
