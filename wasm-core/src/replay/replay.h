/*
 * replay.h - real kernels in: ftrace kmem/percpu traces replayed through
 * the SLUB and percpu models.  The one header of the replay layer, which
 * sits between the models (slub/, percpu/) and their users (the `slablab`
 * CLI and the browser bindings), so both run the same parser, pairing and
 * replay.
 *
 * The pipeline.  A session (sl_replay) is fed the bytes of a file in chunks
 * of any size and keeps bounded memory whatever the file's length:
 *
 *   bytes ─▶ sniff ─▶ gunzip (own inflate, when the file is gzip) ─▶ sniff
 *        ─▶ ustar reader (a .slabcap: metadata, sysfs, slabinfo, trace)
 *           or plain text ─▶ lines ─▶ parser ─▶ pairing ─▶ models
 *
 *   - sniff: gzip (1f 8b), ustar ("ustar" at 257), a binary trace-cmd
 *     trace.dat (refused: "run `trace-cmd report` first"), other known
 *     binary formats (zstd, xz, bzip2, zip: refused with what to run), and
 *     binary noise (refused); everything else is taken as text.
 *   - gunzip: a streaming DEFLATE decoder (RFC 1951/1952) with CRC-32 and
 *     length checks; several members may follow each other.  A stream that
 *     ends early is refused as truncated.
 *   - ustar: the .slabcap archive of `slablab capture` (docs/slabcap.md):
 *     slabcap.meta first (kernel release, CPUs, percpu unit size), then
 *     proc/slabinfo, sys/kernel/debug/percpu_stats, sys/kernel/slab/...
 *     (cache folders and alias symlinks) and last trace.txt.  Everything
 *     before the trace configures the models, so the trace streams.
 *   - lines: at most SL_REPLAY_MAX_LINE bytes each (longer lines are bad
 *     lines, skipped to their end); the last line may lack its newline.
 *   - parser: ftrace text as `trace`, `trace_pipe` and `trace-cmd report`
 *     write it, with every variation docs/replay.md lists.
 *   - pairing: allocations and frees pair by the pointer value (hashed per
 *     boot, stable within a trace); a kfree's cache is its allocation's;
 *     a kmalloc's cache comes from bytes_alloc and the gfp flags.
 *   - models: one SLUB model cache per real cache (geometry from the
 *     capture's sysfs attributes, or computed), the trace's CPUs as the
 *     model's CPUs (frees on another CPU than the object's slab's are
 *     remote frees, as in the kernel); percpu events rebuild the percpu
 *     model's chunks (chunks from base_addr, areas at off).  The model
 *     caches follow the SLUB rules of the kernel's version (eras.h: 4.x
 *     frozen CPU partial slabs, 6.8-6.17 the per-CPU slab, 6.18 sheaves for
 *     the caches that opt in, 7.0 sheaves for all); with two kernel
 *     versions (--kernel A,B) two model sets run side by side on the same
 *     events.
 *
 * Threading.  A session belongs to one thread (the CLI's, or the browser's
 * bridge worker); the models it drives run single-threaded.
 *
 * Errors.  Input that is not a trace is refused with a specific message
 * (sl_replay_error); lines that cannot be parsed are counted, the first
 * SL_REPLAY_BAD_LINES kept with their line number and reason; a model that
 * disagrees with the trace (an area the percpu model has live, a zone out
 * of pages) counts a model error naming the event's line.  Frees of
 * objects allocated before the trace began are "freed, allocated before
 * the trace", never errors.
 */
#ifndef SL_REPLAY_H
#define SL_REPLAY_H

#include "../percpu/percpu.h"
#include "../slub/slub.h"

#include <stdio.h>

/* ------------------------------------------------------------------ */
/* Growable byte buffers (JSON results, exports)                       */

typedef struct sl_strbuf {
    char *data; /* NUL-terminated while !failed */
    size_t len, cap;
    bool failed; /* an allocation failed: the content is incomplete */
} sl_strbuf;

bool sl_strbuf_append(sl_strbuf *b, const void *p, size_t n);
bool sl_strbuf_printf(sl_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s[0..n) as a JSON string literal, quotes included. */
bool sl_strbuf_json_string(sl_strbuf *b, const char *s, size_t n);
void sl_strbuf_free(sl_strbuf *b);

/* ------------------------------------------------------------------ */
/* ustar (POSIX.1-1988) members, as the .slabcap archive uses them     */

enum { SL_USTAR_BLOCK = 512 };
/*
 * Fills hdr with a ustar header for a regular file (type '0') or a
 * symbolic link (type '2', `link` its target): mode 0644 / 0777, owner 0,
 * the given size and mtime.  Names up to 255 bytes (split at a '/' into
 * prefix and name).  Returns SL_OK, or SL_EINVAL for a name or link that
 * does not fit.
 */
int sl_ustar_header(uint8_t hdr[SL_USTAR_BLOCK], const char *name, char type, uint64_t size, const char *link,
                    uint64_t mtime);
/* Zero bytes that follow a member of `size` bytes up to the next block. */
SL_INLINE size_t sl_ustar_padding(uint64_t size)
{
    return (size_t)((SL_USTAR_BLOCK - size % SL_USTAR_BLOCK) % SL_USTAR_BLOCK);
}

/* ------------------------------------------------------------------ */
/* Kernel versions                                                     */

enum { SL_REPLAY_MAX_KERNELS = 2 };

typedef struct sl_kernel_version {
    uint8_t major, minor;
} sl_kernel_version;

/*
 * Parses "X.Y" or "X.Y,X.Y" (X 2..9, Y 0..99) into v[0..n).  Returns the
 * count (1 or 2), or SL_EINVAL with a sentence in err naming what is wrong.
 */
int sl_kernel_versions_parse(const char *s, sl_kernel_version v[SL_REPLAY_MAX_KERNELS], char *err, size_t errlen);
/* The version a `uname -r` string starts with ("6.18.44-fc" -> 6.18); false if none. */
bool sl_kernel_version_from_release(const char *release, sl_kernel_version *v);

/* ------------------------------------------------------------------ */
/* Operations: what the replay applied, one record per event           */

enum sl_replay_op_kind {
    SL_REPLAY_OP_ALLOC = 1,        /* kmem_cache_alloc / kmalloc (and *_node) */
    SL_REPLAY_OP_FREE = 2,         /* kmem_cache_free / kfree of an object the trace allocated */
    SL_REPLAY_OP_FREE_UNKNOWN = 3, /* a free of an object allocated before the trace */
    SL_REPLAY_OP_PCPU_ALLOC = 4,   /* percpu_alloc_percpu; cache = chunk index */
    SL_REPLAY_OP_PCPU_FREE = 5,    /* percpu_free_percpu of an area the trace allocated */
    SL_REPLAY_OP_PCPU_FREE_UNKNOWN = 6,
    SL_REPLAY_OP_CHUNK_CREATE = 7, /* percpu_create_chunk */
    SL_REPLAY_OP_CHUNK_DESTROY = 8,
};
/* sl_replay_op.flags */
enum {
    SL_REPLAY_F_SLOWPATH = 1u << 0,    /* the model left its fast path (___slab_alloc, __slab_free) */
    SL_REPLAY_F_CROSS_CPU = 1u << 1,   /* freed on another CPU than the one that allocated it */
    SL_REPLAY_F_MODEL_ERROR = 1u << 2, /* the model refused the event (see model errors) */
    SL_REPLAY_F_NEW_SLAB = 1u << 3,    /* the model took a new slab from the page allocator */
    SL_REPLAY_F_SLAB_FREED = 1u << 4,  /* the model gave a slab back */
};

/*
 * One applied event, 64 bytes, little endian (the browser decodes it with
 * the offsets sl_replay_op_layout reports).  Model fields describe the
 * first kernel's model.
 */
typedef struct sl_replay_op {
    uint64_t ts_ns;       /* event time (the trace's clock) */
    uint64_t ptr;         /* the trace's pointer value (percpu: ptr; chunk events: base_addr) */
    uint64_t alloc_ts_ns; /* frees of known objects: when allocated; else 0 */
    uint32_t line;        /* input line of the event */
    uint32_t bytes;       /* bytes_alloc (percpu: size) */
    uint32_t live;        /* the cache's (chunk's) live objects after the event, as the trace counts */
    uint32_t slabs;       /* the model cache's slabs after the event */
    uint32_t partial;     /* ... and its node partial slabs */
    uint32_t obj_pfn;     /* the model object: its slab's pfn, or SL_NONE32 */
    uint32_t obj_index;   /* ... and its index there (percpu: byte offset in the chunk) */
    uint16_t cpu;         /* trace CPU */
    uint16_t alloc_cpu;   /* frees of known objects: the allocating CPU; else 0xffff */
    uint16_t cache;       /* cache index (percpu: chunk index), 0xffff for none */
    uint8_t kind;         /* enum sl_replay_op_kind */
    uint8_t flags;        /* SL_REPLAY_F_* */
    uint32_t event; /* the event's ordinal (1-based, as sl_replay_set_limit counts): the bindings fill it, else 0 */
} sl_replay_op;
_Static_assert(sizeof(sl_replay_op) == 64, "sl_replay_op is 64 bytes");

/* ------------------------------------------------------------------ */
/* Sessions                                                            */

enum {
    SL_REPLAY_MAX_LINE = 4096, /* longer lines are bad lines */
    SL_REPLAY_BAD_LINES = 20,  /* bad lines kept with their reason */
    SL_REPLAY_MODEL_ERRORS = 20,
    SL_REPLAY_PAUSED = 1, /* sl_replay_feed: the event limit was reached */
};
#if SL_WASM
#define SL_REPLAY_DEFAULT_ZONE ((size_t)96 << 20)
#else
#define SL_REPLAY_DEFAULT_ZONE ((size_t)256 << 20)
#endif
/* Percpu unit size when the input does not say (x86-64 commonly embeds 1 or 2 MiB units). */
#define SL_REPLAY_DEFAULT_PCPU_UNIT ((size_t)2 << 20)

typedef struct sl_replay_config {
    const char *kernel;    /* "X.Y" or "X.Y,X.Y"; NULL: the capture's release, else unknown */
    const char *cache;     /* only this cache goes through a model (all are still counted); NULL: all */
    unsigned cpus;         /* model CPUs; 0: the capture's, else the trace header's, else 8 */
    size_t zone_bytes;     /* page zone per kernel model; 0: SL_REPLAY_DEFAULT_ZONE */
    size_t pcpu_unit_size; /* 0: the capture's percpu_stats, else SL_REPLAY_DEFAULT_PCPU_UNIT */
    bool track;            /* model caches keep per-object state (snapshots name owners; slower) */
    bool validate_each;    /* validate the models after every event (tests: slow) */
    bool metadata_only;    /* read a .slabcap's metadata and sysfs, skip its trace (slablab slabinfo) */
    /* Called once per applied event (may be NULL). */
    void (*on_op)(void *user, const sl_replay_op *op);
    /* Called with the bytes of each archive member the replay does not read itself (the snapshots), then
     * once with end set (may be NULL). */
    void (*on_member)(void *user, const char *name, const void *data, size_t len, bool end);
    void *user;
} sl_replay_config;

typedef struct sl_replay sl_replay;

/* Returns SL_OK, SL_EINVAL (bad kernel string: sl_replay_config_error says why) or SL_ENOMEM. */
int sl_replay_create(const sl_replay_config *cfg, sl_replay **out);
void sl_replay_destroy(sl_replay *r);

/*
 * Feeds the next bytes of the file.  Returns SL_OK with *consumed = len,
 * SL_REPLAY_PAUSED with *consumed <= len when the event limit stopped it
 * (feed the rest again after raising the limit), or SL_EINVAL when the
 * input is refused (then and from then on; sl_replay_error says why).
 * consumed may be NULL.
 */
int sl_replay_feed(sl_replay *r, const void *data, size_t len, size_t *consumed);
/*
 * The end of the input: the last line without a newline is parsed, and a
 * gzip stream or archive that stops early is refused as truncated; then
 * the models are validated.  Returns SL_OK, SL_REPLAY_PAUSED (limit
 * reached before the end) or SL_EINVAL (refused).
 */
int sl_replay_finish(sl_replay *r);
/* Stop once `events` events have been applied (scrubbing); UINT64_MAX: no limit. */
void sl_replay_set_limit(sl_replay *r, uint64_t events);
/* Stops the session: later feeds are refused with "cancelled". */
void sl_replay_cancel(sl_replay *r);
/* Why the input was refused, or NULL. */
const char *sl_replay_error(const sl_replay *r);
/* Inside on_op: the event being applied, its ordinal (1-based) and its input line (not NUL-terminated). */
uint64_t sl_replay_current(const sl_replay *r, const char **line, size_t *len);

typedef struct sl_replay_progress {
    uint64_t bytes_in;   /* file bytes consumed */
    uint64_t text_bytes; /* trace text bytes (after gunzip and untar) */
    uint64_t lines;
    uint64_t events; /* events applied */
    uint64_t model_errors;
    double elapsed_s;  /* time spent in feed/finish: parse, pair, model (not the final validation) */
    double validate_s; /* the final validate() of every model */
    double cpu_s;      /* CPU time over the same spans as elapsed_s (what the replay's core did) */
    double events_per_cpu_s;
    double events_per_s;
    bool finished;
} sl_replay_progress;
void sl_replay_progress_get(const sl_replay *r, sl_replay_progress *p);

/* The parse accounting and pairing totals (the JSON's "events" and "pairs"). */
typedef struct sl_replay_summary {
    uint64_t lines, parsed, skipped, header_lines, other_events, bad_lines, lost_events;
    uint64_t matched, live_at_end, freed_unknown, null_frees, untraced_frees;
    /*
     * SLUB allocations by the context their gfp_flags give: [0] may block
     * (__GFP_DIRECT_RECLAIM, e.g. GFP_KERNEL), [1] may not (only
     * __GFP_KSWAPD_RECLAIM: GFP_ATOMIC, GFP_NOWAIT), [2] neither reclaim bit,
     * [3] unknown (no gfp_flags=, or a number from a kernel before 6.0).
     * The models run [1] and [2] as GFP_ATOMIC, [0] and [3] as GFP_KERNEL.
     */
    uint64_t alloc_contexts[4];
    uint64_t model_errors[SL_REPLAY_MAX_KERNELS];
    unsigned nkernels, model_cpus, nwarnings;
    bool preempt_rt; /* the capture's kernel is PREEMPT_RT: SLUB replays on its rt paths */
    const char *warnings[4];
    char kernel[SL_REPLAY_MAX_KERNELS][8]; /* "6.18", or "" when unknown */
} sl_replay_summary;
void sl_replay_summary_get(const sl_replay *r, sl_replay_summary *s);

/*
 * The results as JSON (docs/replay.md gives every field).  `extra` (may be
 * NULL) is inserted as further members of the top-level object, e.g.
 * "\"peak_rss_kb\": 1234".  Returns SL_OK or SL_ENOMEM.
 */
int sl_replay_json(sl_replay *r, sl_strbuf *out, const char *extra);

/* ---- results, for tables and the browser ---- */

typedef struct sl_replay_cache_info {
    const char *name;
    bool modelled;            /* false: large kmalloc (page allocator), unnamed, or filtered out */
    bool geometry_from_sysfs; /* object size, align and flags from the capture's sysfs */
    int geometry_matches;     /* 1 model = kernel's sysfs figures, 0 differs, -1 unknown */
    uint32_t object_size, size, order, objs_per_slab; /* the model's geometry (0 when not modelled) */
    uint64_t allocs, frees, freed_unknown;
    uint64_t untraced_frees;         /* allocated again while live: the free had no event */
    uint64_t bytes_req, bytes_alloc; /* over the allocations */
    uint64_t live, peak_live;        /* objects the trace allocated and did not free (yet) */
    uint64_t cross_cpu_frees;
    uint64_t lifetime_p50_ns, lifetime_p99_ns; /* of paired objects (log buckets, <= 1/16 error) */
    uint64_t lifetimes;                        /* paired objects measured */
    /* The model (kernel index k), zero when not modelled. */
    uint32_t sheaf_capacity;               /* the model cache's per-CPU sheaves (0: none; 6.18 opt-in, 7.0 all) */
    uint64_t sheaf_refills, sheaf_flushes; /* sheaves refilled from slabs, flushed to them */
    uint64_t alloc_slowpath, free_slowpath;
    uint64_t slabs_allocated, slabs_freed;
    uint32_t slabs, partial, max_partial;
} sl_replay_cache_info;

unsigned sl_replay_cache_count(const sl_replay *r);

/*
 * One kernel model of the replay: the version it was asked for (the
 * capture's `uname -r`, or --kernel) and the SLUB version whose rules its
 * caches follow (eras.h: the same, clamped to the model's 4.3 .. 7.x, 6.17
 * when the kernel is unknown), and its sheaves counters summed over the
 * caches (zero before 6.18).
 */
typedef struct sl_replay_model_info {
    char kernel[8];       /* "6.18", or "" when unknown */
    char slub_kernel[8];  /* "6.18" */
    const char *slub_era; /* sl_slub_era_name of slub_kernel's era */
    char notice[160];     /* sl_slub_kversion_notice for a kernel newer than the newest modelled, else "" */
    uint64_t errors;
    unsigned caches_modelled, caches_with_sheaves;
    uint64_t alloc_cpu_sheaf, free_cpu_sheaf, sheaf_refill, sheaf_flush, barn_get, barn_get_fail, barn_put,
        barn_put_fail;
} sl_replay_model_info;
/* Returns SL_OK, or SL_EINVAL for a bad kernel index. */
int sl_replay_model_info_get(const sl_replay *r, unsigned kernel, sl_replay_model_info *out);
/*
 * The order the reports use, as a malloc'd array of indexes (NULL when out
 * of memory): SL_REPLAY_ORDER_CACHES by allocations (most first),
 * SL_REPLAY_ORDER_SITES by bytes allocated.
 */
enum { SL_REPLAY_ORDER_CACHES, SL_REPLAY_ORDER_SITES };
unsigned *sl_replay_order(const sl_replay *r, int what);
/* Returns SL_OK, or SL_EINVAL for a bad index or kernel. */
int sl_replay_cache_info_get(const sl_replay *r, unsigned cache, unsigned kernel, sl_replay_cache_info *out);
/* The model cache (for snapshots), or NULL when the cache is not modelled. */
sl_slub_cache *sl_replay_model_cache(sl_replay *r, unsigned cache, unsigned kernel);
/*
 * The model object a live trace pointer maps to: its cache index and the
 * object's address in kernel `kernel`'s model.  Returns SL_OK, or
 * SL_EINVAL when the pointer is not live in the trace or not modelled.
 */
int sl_replay_lookup(const sl_replay *r, uint64_t ptr, unsigned kernel, unsigned *cache, void **obj);

typedef struct sl_replay_site_info {
    const char *site; /* "func+0xoff" (the /len dropped) or the raw address */
    uint64_t allocs, frees, bytes_req, bytes_alloc;
    uint64_t cross_cpu; /* its objects freed on another CPU (perf kmem's ping-pong) */
} sl_replay_site_info;
unsigned sl_replay_site_count(const sl_replay *r);
int sl_replay_site_info_get(const sl_replay *r, unsigned site, sl_replay_site_info *out);

typedef struct sl_replay_chunk_info {
    uint64_t base;         /* the trace's base_addr */
    bool created_in_trace; /* a percpu_create_chunk was seen (else it existed before) */
    bool destroyed;
    uint64_t allocs, frees, freed_unknown;
    uint32_t live; /* areas the trace allocated, live */
    /* The model (kernel 0): what the trace's areas leave of the chunk. */
    uint32_t free_bytes, contig_bytes, nr_populated;
} sl_replay_chunk_info;
unsigned sl_replay_chunk_count(const sl_replay *r);
int sl_replay_chunk_info_get(const sl_replay *r, unsigned chunk, sl_replay_chunk_info *out);
/* The percpu model of kernel `kernel` (granule maps), or NULL before any percpu event. */
sl_pcpu *sl_replay_pcpu(sl_replay *r, unsigned kernel);
/* Chunk `chunk`'s id in that model (for sl_pcpu_chunk_info_get / _granules), or SL_NONE32 once destroyed. */
uint32_t sl_replay_chunk_model_id(const sl_replay *r, unsigned chunk, unsigned kernel);

/* ------------------------------------------------------------------ */
/* The capture's sysfs, for `slablab slabinfo`                         */

/*
 * One cache folder of /sys/kernel/slab as the kernel's tools/mm/slabinfo
 * reads it (each attribute's leading number).
 */
typedef struct sl_slabinfo_cache {
    char name[64];
    bool has_sysfs; /* false: from /proc/slabinfo (partial, cpu_slabs unknown) */
    uint32_t aliases, align, object_size, slab_size, objs_per_slab, order;
    uint32_t cache_dma, destroy_by_rcu, hwcache_align, poison, reclaim_account, red_zone;
    uint32_t sanity_checks, store_user, trace;
    uint64_t objects, objects_partial, slabs, partial, cpu_slabs;
} sl_slabinfo_cache;

typedef struct sl_slabinfo_alias {
    char name[64], target[64];
} sl_slabinfo_alias;

typedef struct sl_slabinfo_set {
    sl_slabinfo_cache *caches;
    unsigned ncaches;
    sl_slabinfo_alias *aliases;
    unsigned naliases;
    char source[32]; /* "sysfs" or "/proc/slabinfo" */
} sl_slabinfo_set;

/*
 * Reads a .slabcap (plain or gzip; its sys/kernel/slab, else its
 * proc/slabinfo), a /sys/kernel/slab-like directory, or a /proc/slabinfo
 * file.  Returns SL_OK, or SL_EINVAL with a sentence in err.
 */
int sl_slabinfo_load(const char *path, sl_slabinfo_set *out, char *err, size_t errlen);
void sl_slabinfo_free(sl_slabinfo_set *set);

/* ------------------------------------------------------------------ */
/* Perfetto export (Chrome JSON trace event format)                    */

/* Receives output bytes; returns false on a write error. */
typedef bool (*sl_sink_fn)(void *user, const void *data, size_t len);

typedef struct sl_perfetto_config {
    sl_sink_fn sink;
    void *user;
    /* A cache's (or chunk's, for percpu kinds) display name; NULL -> "cache N". */
    const char *(*cache_name)(void *user, unsigned cache);
    void *names_user;
    /* Minimum trace time between two counter samples of one cache (0: every change). */
    uint64_t counter_interval_ns;
} sl_perfetto_config;

typedef struct sl_perfetto sl_perfetto;

/*
 * Starts a trace: a process "CPUs" with one thread track per CPU (each
 * operation a slice named after its cache, with its pointer, bytes and
 * path as arguments), a process "caches" with counter tracks per cache
 * (live objects, slabs, partial slabs), and a flow arrow from each
 * allocation to its free when the free ran on another CPU.  Returns NULL
 * when out of memory.
 */
sl_perfetto *sl_perfetto_begin(const sl_perfetto_config *cfg);
void sl_perfetto_op(sl_perfetto *p, const sl_replay_op *op);
/* Writes the closing part and frees p.  Returns SL_OK, or SL_EINVAL when the sink failed. */
int sl_perfetto_end(sl_perfetto *p);

#endif /* SL_REPLAY_H */
