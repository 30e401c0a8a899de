/*
 * bench_slub.h - the models' memory as the experiments want it: a SLUB
 * model cache on a zone of its own, set up the way the seeds' kernel
 * modules set theirs up (no debugging, no tracking), and zones whose pages
 * are all resident before anything is timed.  `bulk` and `fastpath` use
 * SLAB_HWCACHE_ALIGN as the seeds did; `compare` and `kmalloc` use
 * kmalloc-style caches (word alignment); sl_bench_slub_open prefaults its
 * zone (sl_page_zone_prefault).  Benchmark builds (SLABLAB_BENCH)
 * compile the model's tracing and preemption points out; the cache is given
 * no trace either way.
 */
#ifndef SL_BENCH_SLUB_H
#define SL_BENCH_SLUB_H

#include "../src/slub/slub.h"

typedef struct sl_bench_slub {
    sl_page_zone zone;
    sl_slub_cache *cache;
} sl_bench_slub;

/*
 * Creates a cache of `size`-byte objects with SL_SLUB_* `flags` for `ncpus`
 * CPUs on a new zone of zone_mb MiB, in kernel `kernel` ({0, 0}: 6.17)
 * with its sheaves (a 6.18 cache opts in with sheaf_capacity; 7.0's get
 * theirs whatever it is), with the given fast path and bulk-free form.
 * Returns 0, SL_EINVAL (a fast path other than cmpxchg in 7.0, which has no
 * per-CPU slab: sl_bench_slub_has_fastpath) or SL_ENOMEM.
 */
int sl_bench_slub_open(sl_bench_slub *b, unsigned ncpus, uint32_t size, uint32_t flags, sl_slub_kversion kernel,
                       uint16_t sheaf_capacity, sl_slub_fastpath fp, sl_slub_bulk_free bf, unsigned zone_mb);
/* The same on `nodes` NUMA nodes (1 to SL_SLUB_MAX_NODES), the CPUs split among them in blocks. */
int sl_bench_slub_open_nodes(sl_bench_slub *b, unsigned ncpus, unsigned nodes, uint32_t size, uint32_t flags,
                             sl_slub_kversion kernel, uint16_t sheaf_capacity, sl_slub_fastpath fp,
                             sl_slub_bulk_free bf, unsigned zone_mb);
/* False for a fast-path variant a version lacks (7.0: only the sheaves, named by the cmpxchg slot). */
bool sl_bench_slub_has_fastpath(sl_slub_kversion kernel, sl_slub_fastpath fp);
void sl_bench_slub_close(sl_bench_slub *b);
/* "cmpxchg", "locked", "plain" or "rt"; "sheaves" for cmpxchg in a version without a per-CPU slab. */
const char *sl_bench_slub_fastpath_name(sl_slub_kversion kernel, sl_slub_fastpath fp);

#endif
