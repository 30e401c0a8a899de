/*
 * platform.h - the thin layer under every allocator model.
 *
 * Everything that differs between the three builds lives here and in
 * prim_<target>.c beside it: the double-word compare-and-swap, the cycle
 * counter, threads, and spin locks.  The models above include only this
 * header (and the headers of the layers between), never <pthread.h> or
 * intrinsics directly, so their sources are identical in the native,
 * wasm-threads and wasm-single builds.
 *
 * Double word.  SLUB keeps a CPU's freelist head and its transaction id in
 * one aligned pair of machine words and changes the pair only with a
 * double-word compare-and-swap.  On x86-64 that is CMPXCHG16B; on wasm32 a
 * pointer is 32 bits, so the pair is 64 bits and the CAS is the
 * i64.atomic.rmw.cmpxchg instruction.
 *
 *   sl_dw_cas_local()  the kernel's this_cpu_cmpxchg_double: atomic with
 *                      respect to interrupts on the owning CPU only.  On
 *                      x86-64 it is CMPXCHG16B *without* the LOCK prefix,
 *                      exactly what seed 001 measured.  WebAssembly has no
 *                      unlocked form; there it is the same as sl_dw_cas().
 *   sl_dw_cas()        a full cross-CPU atomic CAS (LOCK CMPXCHG16B), as
 *                      cmpxchg_double_slab() uses on a slab's
 *                      freelist+counters.
 *
 * Under ThreadSanitizer (SL_TSAN) both use the compiler's 16-byte atomic
 * builtin so the tool sees them.
 *
 * Cycles.  sl_tsc_start()/sl_tsc_stop() serialise like the seeds'
 * time_bench (CPUID;RDTSC and RDTSCP;CPUID).  WebAssembly has no TSC: there
 * they return nanoseconds from the host clock and sl_tsc_is_cycles() says
 * so.
 */
#ifndef SL_PLATFORM_H
#define SL_PLATFORM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__EMSCRIPTEN__)
#define SL_WASM 1
#if defined(__EMSCRIPTEN_PTHREADS__)
#define SL_HAVE_THREADS 1
#else
#define SL_HAVE_THREADS 0
#endif
#elif defined(__x86_64__)
#define SL_X86_64 1
#define SL_HAVE_THREADS 1
#else
#error "slablab supports x86-64 natively and wasm32 through Emscripten"
#endif

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SL_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SL_TSAN 1
#endif

#define SL_LIKELY(x) __builtin_expect(!!(x), 1)
#define SL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SL_NOINLINE __attribute__((noinline))
#define SL_INLINE static inline __attribute__((always_inline))
#define SL_CACHELINE 64
#define SL_PAGE_SHIFT 12
#define SL_PAGE_SIZE ((size_t)1 << SL_PAGE_SHIFT)

/*
 * Graded asserts, as mimalloc does: sl_assert() is cheap and on in debug
 * builds; sl_assert_expensive() walks structures and is on only when
 * SL_DEBUG >= 2.  Benchmark builds (SLABLAB_BENCH) turn both off.
 */
#if !defined(SL_DEBUG)
#if defined(SLABLAB_BENCH)
#define SL_DEBUG 0
#else
#define SL_DEBUG 1
#endif
#endif
void sl_assert_fail(const char *expr, const char *file, int line);
#if SL_DEBUG >= 1
#define sl_assert(x) ((x) ? (void)0 : sl_assert_fail(#x, __FILE__, __LINE__))
#else
#define sl_assert(x) ((void)0)
#endif
#if SL_DEBUG >= 2
#define sl_assert_expensive(x) sl_assert(x)
#else
#define sl_assert_expensive(x) ((void)0)
#endif

/*
 * Error codes every layer returns.  Negative, so an API that returns a count
 * or an index can return one of these instead.  sl_strerror() names them.
 */
typedef enum sl_err {
    SL_OK = 0,
    SL_ENOMEM = -1,      /* the arena (or an OS allocation) is exhausted */
    SL_EINVAL = -2,      /* an argument is out of range */
    SL_ENOTHREADS = -3,  /* this build has no threads */
    SL_EDOUBLEFREE = -4, /* the object is already free */
    SL_EFOREIGN = -5,    /* the pointer is not an object of this cache */
    SL_EMISALIGNED = -6, /* inside a slab of this cache, but not at an object start */
    SL_EPOISON = -7,     /* poison bytes were overwritten while the object was free */
    SL_EREDZONE = -8,    /* a red zone around the object was overwritten */
    SL_EFREELIST = -9,   /* a freelist is corrupt (cycle, or a pointer out of its slab) */
    SL_ECORRUPT = -10,   /* validate() found an inconsistency */
    SL_EBUSY = -11,      /* the object or resource is in use */
    SL_EBUDGET = -12,    /* a run exceeded its time budget */
} sl_err;
const char *sl_strerror(int err);

/*
 * Relaxed loads and stores.  A word another thread may read at any time (a
 * free pointer, a freelist head, a page's flags, a counter) is accessed with
 * relaxed atomics: on x86-64 a plain MOV.  WebAssembly has only sequentially
 * consistent atomics, so there the same C becomes i32/i64.atomic.store,
 * which engines compile to XCHG (a locked instruction, about 20 cycles), and
 * atomic loads that check their alignment first: the SLUB fast path's three
 * such stores made a WebAssembly alloc+free pair 1.6 times the cost it has
 * with plain ones (20.6 against 12.6 ns), and the loads' checks cost bulk
 * frees 14%.  On wasm32 sl_store_relaxed and sl_load_relaxed are volatile
 * aligned accesses, a single MOV as natively, which engines do not tear;
 * ordering comes, as for relaxed atomics, only from the atomic operations
 * (CAS, locks) that publish them.  Locks keep their real atomics (an
 * unlock's release store is an XCHG in WebAssembly: what PREEMPT_RT's fast
 * path and the percpu allocator's locks pay there).
 */
#if defined(__EMSCRIPTEN__)
#define sl_store_relaxed(p, v) ((void)(*(volatile __typeof__(*(p)) *)(p) = (v)))
#define sl_load_relaxed(p) (*(const volatile __typeof__(*(p)) *)(p))
#else
#define sl_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define sl_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#endif

/* ------------------------------------------------------------------ */
/* Double word                                                         */

typedef struct sl_dword {
    uintptr_t lo; /* SLUB: freelist head   (slab: freelist) */
    uintptr_t hi; /* SLUB: transaction id  (slab: counters) */
} __attribute__((aligned(2 * sizeof(uintptr_t)))) sl_dword;

#if SL_X86_64 && !defined(SL_TSAN)
SL_INLINE bool sl_dw_cas_local(sl_dword *p, sl_dword old, sl_dword new_)
{
    bool ok;
    __asm__ __volatile__("cmpxchg16b %1\n\tsetz %0"
                         : "=q"(ok), "+m"(*p), "+a"(old.lo), "+d"(old.hi)
                         : "b"(new_.lo), "c"(new_.hi)
                         : "memory", "cc");
    return ok;
}
SL_INLINE bool sl_dw_cas(sl_dword *p, sl_dword old, sl_dword new_)
{
    bool ok;
    __asm__ __volatile__("lock cmpxchg16b %1\n\tsetz %0"
                         : "=q"(ok), "+m"(*p), "+a"(old.lo), "+d"(old.hi)
                         : "b"(new_.lo), "c"(new_.hi)
                         : "memory", "cc");
    return ok;
}
/* A torn read is harmless: every use re-validates it with a CAS. */
SL_INLINE sl_dword sl_dw_read(const sl_dword *p)
{
    sl_dword v;
    v.lo = __atomic_load_n(&p->lo, __ATOMIC_RELAXED);
    v.hi = __atomic_load_n(&p->hi, __ATOMIC_RELAXED);
    return v;
}
SL_INLINE void sl_dw_write_plain(sl_dword *p, sl_dword v)
{
    __atomic_store_n(&p->hi, v.hi, __ATOMIC_RELAXED);
    __atomic_store_n(&p->lo, v.lo, __ATOMIC_RELAXED);
}
#else
#if SL_X86_64
typedef unsigned __int128 sl_dw_bits;
#else
typedef uint64_t sl_dw_bits;
#endif
_Static_assert(sizeof(sl_dw_bits) == sizeof(sl_dword), "double word size");
SL_INLINE sl_dw_bits sl_dw_pack(sl_dword v)
{
    sl_dw_bits b;
    __builtin_memcpy(&b, &v, sizeof b);
    return b;
}
SL_INLINE sl_dword sl_dw_unpack(sl_dw_bits b)
{
    sl_dword v;
    __builtin_memcpy(&v, &b, sizeof v);
    return v;
}
SL_INLINE bool sl_dw_cas(sl_dword *p, sl_dword old, sl_dword new_)
{
    sl_dw_bits expected = sl_dw_pack(old);
    return __atomic_compare_exchange_n((sl_dw_bits *)p, &expected, sl_dw_pack(new_), false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}
SL_INLINE bool sl_dw_cas_local(sl_dword *p, sl_dword old, sl_dword new_) { return sl_dw_cas(p, old, new_); }
SL_INLINE sl_dword sl_dw_read(const sl_dword *p) { return sl_dw_unpack(sl_load_relaxed((const sl_dw_bits *)p)); }
SL_INLINE void sl_dw_write_plain(sl_dword *p, sl_dword v) { sl_store_relaxed((sl_dw_bits *)p, sl_dw_pack(v)); }
#endif

/* ------------------------------------------------------------------ */
/* Cycle counter                                                       */

#if SL_X86_64
SL_INLINE uint64_t sl_tsc_start(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("cpuid\n\trdtsc" : "=a"(lo), "=d"(hi) : "a"(0) : "rbx", "rcx", "memory");
    return ((uint64_t)hi << 32) | lo;
}
SL_INLINE uint64_t sl_tsc_stop(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtscp\n\tmov %%eax, %0\n\tmov %%edx, %1\n\tcpuid"
                         : "=r"(lo), "=r"(hi)
                         :
                         : "rax", "rbx", "rcx", "rdx", "memory");
    return ((uint64_t)hi << 32) | lo;
}
SL_INLINE bool sl_tsc_is_cycles(void) { return true; }
#else
uint64_t sl_time_ns(void);
SL_INLINE uint64_t sl_tsc_start(void) { return sl_time_ns(); }
SL_INLINE uint64_t sl_tsc_stop(void) { return sl_time_ns(); }
SL_INLINE bool sl_tsc_is_cycles(void) { return false; }
#endif

/* Monotonic wall clock in nanoseconds. */
uint64_t sl_time_ns(void);

/* ------------------------------------------------------------------ */
/* Threads and locks                                                   */

typedef struct sl_thread {
    uintptr_t handle;
} sl_thread;

/* Returns 0, or SL_ENOTHREADS in the single-threaded build, or SL_ENOMEM. */
int sl_thread_start(sl_thread *t, void *(*fn)(void *), void *arg);
void sl_thread_join(sl_thread t);
/* Pins the calling thread to host CPU `cpu` where the host allows it. */
void sl_thread_pin(unsigned cpu);
/* A number that identifies the calling OS thread or web worker. */
uint64_t sl_thread_self_id(void);
/* CPUs the host has (natively: present CPUs; wasm: navigator.hardwareConcurrency). */
unsigned sl_host_cpus(void);

/*
 * A test-and-test-and-set spin lock: the model's node list_lock and the page
 * allocator's zone lock.  Kernel spin locks never sleep either.
 */
typedef struct sl_spinlock {
    atomic_uint locked;
} sl_spinlock;
#define SL_SPINLOCK_INIT                                                                                               \
    {                                                                                                                  \
        0                                                                                                              \
    }
void sl_spin_lock_slow(sl_spinlock *l);
SL_INLINE void sl_spin_lock(sl_spinlock *l)
{
    unsigned expected = 0;
    if (SL_LIKELY(atomic_compare_exchange_weak_explicit(&l->locked, &expected, 1, memory_order_acquire,
                                                        memory_order_relaxed)))
        return;
    sl_spin_lock_slow(l);
}
SL_INLINE bool sl_spin_trylock(sl_spinlock *l)
{
    unsigned expected = 0;
    return atomic_compare_exchange_strong_explicit(&l->locked, &expected, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}
SL_INLINE void sl_spin_unlock(sl_spinlock *l) { atomic_store_explicit(&l->locked, 0, memory_order_release); }
void sl_cpu_relax(void);

/* Page-aligned memory for arenas; never on a hot path. */
void *sl_os_alloc_aligned(size_t size, size_t align);
void sl_os_free(void *p);

#endif /* SL_PLATFORM_H */
