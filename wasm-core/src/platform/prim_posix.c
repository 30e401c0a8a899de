/*
 * prim_posix.c - threads, clocks and memory for native x86-64 Linux and for
 * Emscripten's pthreads (which implements the same POSIX calls on web
 * workers).  The single-threaded WebAssembly build compiles it without
 * __EMSCRIPTEN_PTHREADS__ and sl_thread_start() reports SL_ENOTHREADS.
 */
#include "platform.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if SL_HAVE_THREADS
#include <pthread.h>
#endif
#if SL_X86_64
#include <sched.h>
#include <sys/syscall.h>
#endif
#if SL_WASM
#include <emscripten.h>
#include <emscripten/threading.h>
#endif

uint64_t sl_time_ns(void)
{
#if SL_WASM
    return (uint64_t)(emscripten_get_now() * 1e6);
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

void sl_cpu_relax(void)
{
#if SL_X86_64
    __asm__ __volatile__("pause" ::: "memory");
#elif SL_HAVE_THREADS
    sched_yield();
#endif
}

int sl_thread_start(sl_thread *t, void *(*fn)(void *), void *arg)
{
#if SL_HAVE_THREADS
    pthread_t th;
    int rc = pthread_create(&th, NULL, fn, arg);
    if (rc != 0)
        return SL_ENOMEM;
    t->handle = (uintptr_t)th;
    return SL_OK;
#else
    (void)t;
    (void)fn;
    (void)arg;
    return SL_ENOTHREADS;
#endif
}

void sl_thread_join(sl_thread t)
{
#if SL_HAVE_THREADS
    pthread_join((pthread_t)t.handle, NULL);
#else
    (void)t;
#endif
}

void sl_thread_pin(unsigned cpu)
{
#if SL_X86_64
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % (unsigned)CPU_SETSIZE, &set);
    (void)sched_setaffinity(0, sizeof set, &set);
#else
    (void)cpu; /* a web worker is a CPU of its own; there is nothing to pin */
#endif
}

uint64_t sl_thread_self_id(void)
{
#if SL_X86_64
    return (uint64_t)syscall(SYS_gettid);
#elif SL_HAVE_THREADS
    return (uint64_t)(uintptr_t)pthread_self();
#else
    return 1;
#endif
}

unsigned sl_host_cpus(void)
{
#if SL_WASM
#if SL_HAVE_THREADS
    int n = emscripten_num_logical_cores();
    return n > 0 ? (unsigned)n : 1;
#else
    return 1;
#endif
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
#endif
}

void *sl_os_alloc_aligned(size_t size, size_t align)
{
    size = (size + align - 1) & ~(align - 1);
    return aligned_alloc(align, size);
}

void sl_os_free(void *p) { free(p); }
