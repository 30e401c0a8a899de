/* prim_common.c - the parts of the platform layer every target shares. */
#include "platform.h"

#include <stdio.h>
#include <stdlib.h>

void sl_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "slablab: assertion failed: %s (%s:%d)\n", expr, file, line);
    abort();
}

void sl_spin_lock_slow(sl_spinlock *l)
{
    for (;;) {
        while (atomic_load_explicit(&l->locked, memory_order_relaxed))
            sl_cpu_relax();
        if (sl_spin_trylock(l))
            return;
    }
}

const char *sl_strerror(int err)
{
    switch ((sl_err)err) {
    case SL_OK:
        return "ok";
    case SL_ENOMEM:
        return "out of memory: the arena is exhausted";
    case SL_EINVAL:
        return "invalid argument";
    case SL_ENOTHREADS:
        return "this build has no threads";
    case SL_EDOUBLEFREE:
        return "double free: the object is already free";
    case SL_EFOREIGN:
        return "foreign pointer: not an object of this cache";
    case SL_EMISALIGNED:
        return "misaligned pointer: not at the start of an object";
    case SL_EPOISON:
        return "poison overwritten: the object was written after it was freed";
    case SL_EREDZONE:
        return "red zone overwritten: a write ran past the object";
    case SL_EFREELIST:
        return "corrupt freelist";
    case SL_ECORRUPT:
        return "inconsistent allocator state";
    case SL_EBUSY:
        return "resource busy";
    case SL_EBUDGET:
        return "time budget exceeded";
    }
    return "unknown error";
}
