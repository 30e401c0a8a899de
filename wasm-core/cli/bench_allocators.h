/*
 * bench_allocators.h - glibc malloc, jemalloc, mimalloc and tcmalloc as
 * alloc/free function pairs for `compare` (see bench_allocators.c).
 */
#ifndef SL_BENCH_ALLOCATORS_H
#define SL_BENCH_ALLOCATORS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sl_bench_allocator {
    const char *name;
    void *(*alloc)(size_t);
    void (*free)(void *);
    bool available;
    char reason[96]; /* the library's path, or why it is not available */
} sl_bench_allocator;

#define SL_BENCH_NALLOCATORS 4

/* Re-executes this program once with glibc's optional static TLS raised so
 * the libraries can be dlopened (see bench_allocators.c); returns when that
 * is already done or impossible.  Call before any work or output. */
void sl_bench_allocators_prepare(void);

/* Fills out[] with glibc, jemalloc, mimalloc, tcmalloc in that order.  The
 * libraries stay loaded for the life of the process. */
void sl_bench_allocators_load(sl_bench_allocator out[SL_BENCH_NALLOCATORS]);

#endif
