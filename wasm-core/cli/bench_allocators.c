/*
 * bench_allocators.c - the general-purpose allocators `compare` races:
 * glibc malloc (the process's own), and jemalloc, mimalloc and tcmalloc
 * loaded at run time with dlopen, so one that is not installed is reported
 * as such instead of failing the build or the run.
 *
 * Several mallocs in one process.  Each library is opened RTLD_LOCAL (its
 * symbols stay out of the global scope, so glibc keeps serving everybody
 * else, including this program) and RTLD_DEEPBIND (its own internal calls to
 * malloc/free bind to itself, not to glibc's).  We take each library's own
 * entry points - mi_malloc/mi_free, tc_malloc/tc_free, and jemalloc's
 * unprefixed malloc/free (Debian builds it without the je_ prefix) - and
 * check with dladdr() that the symbol really lives in that library, so a
 * pointer is always freed by the allocator that made it.  Sanitizer
 * runtimes refuse RTLD_DEEPBIND, so sanitizer builds compare glibc only.
 *
 * Static TLS.  The three libraries use initial-exec thread-locals, which a
 * dlopen must fit into glibc's small surplus of static TLS; jemalloc's
 * 2.6 KB do not ("cannot allocate memory in static TLS block").  glibc
 * sizes that surplus only at start-up, from the tunable
 * glibc.rtld.optional_static_tls, so sl_bench_allocators_prepare()
 * re-executes the program once with the tunable raised.
 */
#include "bench_allocators.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TLS_TUNABLE "glibc.rtld.optional_static_tls"
#define TLS_SURPLUS "16384"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

/* Fills a with soname's symbols; on failure leaves it unavailable with the reason. */
static void load(sl_bench_allocator *a, const char *name, const char *soname, const char *alloc_sym,
                 const char *free_sym)
{
    memset(a, 0, sizeof *a);
    a->name = name;
#if defined(SANITIZED)
    (void)soname;
    (void)alloc_sym;
    (void)free_sym;
    snprintf(a->reason, sizeof a->reason, "not loaded in sanitizer builds (RTLD_DEEPBIND)");
#else
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) {
        const char *err = dlerror();
        if (err && strstr(err, "static TLS"))
            snprintf(a->reason, sizeof a->reason, "%s: no static TLS left", soname);
        else
            snprintf(a->reason, sizeof a->reason, "not installed (%s)", soname);
        return;
    }
    void *fa = dlsym(h, alloc_sym), *ff = dlsym(h, free_sym);
    Dl_info ia, iff;
    if (!fa || !ff || !dladdr(fa, &ia) || !dladdr(ff, &iff) || !ia.dli_fname || !iff.dli_fname ||
        !strstr(ia.dli_fname, soname) || strcmp(ia.dli_fname, iff.dli_fname)) {
        snprintf(a->reason, sizeof a->reason, "%s lacks its own %s/%s", soname, alloc_sym, free_sym);
        dlclose(h);
        return;
    }
    a->alloc = (void *(*)(size_t))fa;
    a->free = (void (*)(void *))ff;
    a->available = true;
    snprintf(a->reason, sizeof a->reason, "%s", ia.dli_fname);
    /* Never dlclosed: objects and threads may still refer to it at exit. */
#endif
}

void sl_bench_allocators_prepare(void)
{
#if !defined(SANITIZED)
    const char *t = getenv("GLIBC_TUNABLES");
    if (t && strstr(t, TLS_TUNABLE))
        return;
    static char cmdline[65536];
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f)
        return;
    size_t n = fread(cmdline, 1, sizeof cmdline - 1, f);
    fclose(f);
    if (n == 0 || n >= sizeof cmdline - 1)
        return;
    cmdline[n] = '\0';
    char *argv[256];
    unsigned argc = 0;
    for (size_t i = 0; i < n && argc < 255; i += strlen(cmdline + i) + 1)
        argv[argc++] = cmdline + i;
    argv[argc] = NULL;
    char value[512];
    snprintf(value, sizeof value, "%s%s" TLS_TUNABLE "=" TLS_SURPLUS, t ? t : "", t ? ":" : "");
    if (setenv("GLIBC_TUNABLES", value, 1) != 0)
        return;
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* exec failed: carry on; jemalloc will be reported as not loadable */
#endif
}

void sl_bench_allocators_load(sl_bench_allocator out[SL_BENCH_NALLOCATORS])
{
    memset(&out[0], 0, sizeof out[0]);
    out[0].name = "glibc";
    out[0].alloc = malloc;
    out[0].free = free;
    out[0].available = true;
    snprintf(out[0].reason, sizeof out[0].reason, "the process's malloc");
    load(&out[1], "jemalloc", "libjemalloc.so.2", "malloc", "free");
    load(&out[2], "mimalloc", "libmimalloc.so.2", "mi_malloc", "mi_free");
    load(&out[3], "tcmalloc", "libtcmalloc_minimal.so.4", "tc_malloc", "tc_free");
}
