/*
 * replay_internal.h - what the files of the replay layer share: the gzip
 * decoder, the ustar reader, the ftrace line parser and the session.
 * Nothing here is visible outside src/replay/ (prefix sli_).
 */
#ifndef SLI_REPLAY_INTERNAL_H
#define SLI_REPLAY_INTERNAL_H

#include "replay.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* gunzip (inflate.c)                                                  */

/*
 * Output window: the last 32 KiB are kept for back-references, the rest is
 * output the reader has not taken yet.  The decoder stops (returns without
 * consuming more input) when the reader leaves no room.
 */
#define SLI_GZ_HISTORY 32768
#define SLI_GZ_WINDOW (SLI_GZ_HISTORY + 131072 + 512)
#define SLI_GZ_LENS_TABLE 2048  /* root 10 bits + subtables (zlib's ENOUGH for 286 codes is 1332) */
#define SLI_GZ_DISTS_TABLE 1024 /* root 8 bits + subtables (enough: 402) */

typedef struct sli_gunzip {
    int state;       /* where the decoder stands (inflate.c) */
    uint64_t bitbuf; /* input bits not yet used, LSB first */
    unsigned bitcnt;
    /* The block being decoded. */
    bool last_block;
    uint32_t stored_left;                /* bytes left in a stored block */
    unsigned hlit, hdist, hclen, ncodes; /* dynamic header progress */
    uint8_t lens[320];
    uint32_t copy_len, copy_dist; /* a match interrupted by a full window */
    /* gzip member header / trailer */
    uint8_t flags;
    unsigned hdr_need; /* bytes of the current header field still to skip */
    uint32_t crc, member_len;
    uint64_t members, total_out;
    /* Output window: [rd, wr) not yet read; [0, wr) history. */
    uint8_t *win;
    size_t rd, wr;
    const char *error;
    uint32_t lens_table[SLI_GZ_LENS_TABLE];
    uint32_t dists_table[SLI_GZ_DISTS_TABLE];
    uint32_t crc_table[8][256];
} sli_gunzip;

enum {
    SLI_GZ_NEED_INPUT = 0, /* all input consumed (or the window is full: read some output) */
    SLI_GZ_ERROR = -1,     /* corrupt: z->error says how */
};

int sli_gunzip_init(sli_gunzip *z);
void sli_gunzip_fini(sli_gunzip *z);
/*
 * Decodes from in[0..len) into the window; *used gets the input bytes
 * consumed (fewer than len only when the window filled up).  Returns
 * SLI_GZ_NEED_INPUT or SLI_GZ_ERROR.
 */
int sli_gunzip_run(sli_gunzip *z, const uint8_t *in, size_t len, size_t *used);
/* Output not yet read: *p, returns the count.  sli_gunzip_take marks n bytes read. */
SL_INLINE size_t sli_gunzip_pending(const sli_gunzip *z, const uint8_t **p)
{
    *p = z->win + z->rd;
    return z->wr - z->rd;
}
SL_INLINE void sli_gunzip_take(sli_gunzip *z, size_t n) { z->rd += n; }
/* True when the input so far ends exactly after a complete member. */
bool sli_gunzip_at_member_end(const sli_gunzip *z);

/* CRC-32 (the gzip/zlib polynomial), for tests and the capture writer. */
uint32_t sli_crc32(const uint32_t table[8][256], uint32_t crc, const uint8_t *p, size_t n);
void sli_crc32_table(uint32_t table[8][256]);

/* ------------------------------------------------------------------ */
/* ustar reader (archive.c)                                            */

enum { SLI_TAR_HEADER, SLI_TAR_DATA, SLI_TAR_PAD, SLI_TAR_END };
enum {
    SLI_TAR_MORE = 0,           /* the input is used up: feed more */
    SLI_TAR_MEMBER = 1,         /* a member starts: name, type, size are set */
    SLI_TAR_DATA_RUN = 2,       /* data[0..len) of the current member (not yet consumed) */
    SLI_TAR_MEMBER_END = 3,     /* the current member's data is complete */
    SLI_TAR_END_OF_ARCHIVE = 4, /* two zero blocks */
    SLI_TAR_ERROR = -1,         /* t->error says why */
};

typedef struct sli_tar {
    int state;
    uint8_t hdr[SL_USTAR_BLOCK];
    size_t hdr_have;
    unsigned zero_blocks;
    char name[260], link[101];
    char type;           /* '0' file, '2' symlink, '5' directory, ... */
    uint64_t size, left; /* the member's size and the data bytes not yet taken */
    size_t pad;
    uint64_t members;
    const char *error;
} sli_tar;

void sli_tar_init(sli_tar *t);
/*
 * Advances over p[0..n): *used gets the bytes it consumed.  For
 * SLI_TAR_DATA_RUN, (*data, *len) is member data that is not consumed yet:
 * the caller calls sli_tar_took with what it used and adds that to *used.
 */
int sli_tar_next(sli_tar *t, const uint8_t *p, size_t n, size_t *used, const uint8_t **data, size_t *len);
void sli_tar_took(sli_tar *t, size_t n);

/* ------------------------------------------------------------------ */
/* ftrace lines (parse.c)                                              */

/*
 * memchr, eight bytes a step: the first p[i] == c in p[0..n), or NULL.
 * The replay's hottest loop (every byte of a trace passes it twice: the
 * line's end, then the NUL check).  WebAssembly's memchr (musl's) reads
 * four bytes a step; this one is as fast as glibc's on these short lines
 * (docs/replay.md, "Speed and memory").  The lowest byte the zero-byte
 * test flags is exact (a borrow only spills upwards): little-endian only.
 */
SL_INLINE const char *sli_find_byte(const char *p, size_t n, char c)
{
    _Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "sli_find_byte reads words little-endian");
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const uint64_t pattern = ones * (uint8_t)c;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        w ^= pattern;
        uint64_t zero = (w - ones) & ~w & highs;
        if (zero)
            return p + i + ((unsigned)__builtin_ctzll(zero) >> 3);
    }
    for (; i < n; i++)
        if (p[i] == c)
            return p + i;
    return NULL;
}

enum sli_event_kind {
    SLI_EV_NONE = 0,
    SLI_EV_KMALLOC,     /* kmalloc, kmalloc_node (before 6.1) */
    SLI_EV_CACHE_ALLOC, /* kmem_cache_alloc, kmem_cache_alloc_node */
    SLI_EV_KFREE,
    SLI_EV_CACHE_FREE,
    SLI_EV_PAGE_ALLOC, /* mm_page_alloc */
    SLI_EV_PAGE_FREE,  /* mm_page_free, mm_page_free_batched */
    SLI_EV_PCPU_ALLOC,
    SLI_EV_PCPU_FREE,
    SLI_EV_PCPU_CREATE,
    SLI_EV_PCPU_DESTROY,
    SLI_EV_PCPU_FAIL,
    SLI_EV_OTHER, /* an event the replay does not use */
    SLI_EV_COUNT
};
const char *sli_event_kind_name(unsigned kind);

/* Fields present (sli_event.have). */
enum {
    SLI_F_PTR = 1u << 0,
    SLI_F_NAME = 1u << 1,
    SLI_F_BYTES_REQ = 1u << 2,
    SLI_F_BYTES_ALLOC = 1u << 3,
    SLI_F_BASE = 1u << 4,
    SLI_F_OFF = 1u << 5,
    SLI_F_SIZE = 1u << 6,
    SLI_F_PFN = 1u << 7,
    SLI_F_PAGE = 1u << 8,
    SLI_F_ORDER = 1u << 9,
    SLI_F_ACCOUNTED = 1u << 10,
    SLI_F_GFP = 1u << 11,     /* gfp_flags= present */
    SLI_F_GFP_HEX = 1u << 12, /* ... as a number (gfp_hex): its bits are the capture kernel's */
};
/* The gfp flags that choose a kmalloc cache. */
enum { SLI_GFP_DMA = 1u << 0, SLI_GFP_RECLAIMABLE = 1u << 1, SLI_GFP_ACCOUNT = 1u << 2 };
/* The reclaim bits named in gfp_flags (sli_event.gfp_reclaim): what decide the allocation's context. */
enum { SLI_RECLAIM_DIRECT = 1u << 0, SLI_RECLAIM_KSWAPD = 1u << 1 };
/*
 * An allocation's context as its gfp flags give it (the replay's count and
 * the model's sl_slub_gfp): __GFP_DIRECT_RECLAIM may block (GFP_KERNEL);
 * __GFP_KSWAPD_RECLAIM alone may spin but not block (GFP_ATOMIC,
 * GFP_NOWAIT); neither bit: may not even spin (gfpflags_allow_spinning
 * false); unknown: no gfp_flags=, or a number whose bits the capture's
 * kernel version does not let the replay read.
 */
enum { SLI_CTX_GFP_BLOCK = 0, SLI_CTX_GFP_NONBLOCK = 1, SLI_CTX_GFP_NORECLAIM = 2, SLI_CTX_GFP_UNKNOWN = 3 };
#define SLI_CTX_GFP_N 4

#define SLI_MAX_TRACE_CPUS 4096

typedef struct sli_event {
    uint8_t kind; /* enum sli_event_kind */
    uint32_t cpu;
    uint64_t ts_ns;
    const char *name; /* the event name as written */
    uint32_t name_len;
    uint32_t have; /* SLI_F_* */
    uint64_t ptr, base, page, pfn, bytes_req, bytes_alloc;
    uint32_t off, size, align, order;
    const char *cache; /* name= (kmem_cache_*), or NULL */
    uint32_t cache_len;
    const char *site; /* call_site=, or NULL */
    uint32_t site_len;
    unsigned gfp;         /* SLI_GFP_* */
    unsigned gfp_reclaim; /* SLI_RECLAIM_* named in gfp_flags= (not set for a number) */
    uint64_t gfp_hex;     /* gfp_flags= as a number (SLI_F_GFP_HEX) */
    int accounted;        /* accounted= (6.0+): 1 true, 0 false */
    /* Not events: */
    uint32_t cpus_hint; /* header lines: "#P:N", "cpus=N" */
    uint64_t lost;      /* "[LOST N EVENTS]" */
    const char *reason; /* SLI_LINE_BAD: why */
} sli_event;

enum {
    SLI_LINE_EVENT = 0,       /* a kind the replay uses, all required fields present */
    SLI_LINE_OTHER_EVENT = 1, /* a well-formed event of another kind (name set) */
    SLI_LINE_HEADER = 2,      /* comment, blank, trace-cmd header lines (cpus_hint may be set) */
    SLI_LINE_LOST = 3,        /* "CPU:N [LOST M EVENTS]" (lost set) */
    SLI_LINE_BAD = 4,         /* reason set */
};
/* Parses line[0..len) (no newline).  Returns SLI_LINE_*. */
int sli_parse_line(const char *line, size_t len, sli_event *ev);
/* The part of a call site that names it ("func+0xoff" without "/0xlen"). */
size_t sli_site_key(const char *site, size_t len);

/* ------------------------------------------------------------------ */
/* Hash maps with 64-bit keys (replay.c)                               */

/*
 * Open addressing, linear probing, backward-shift deletion (no
 * tombstones), at most half full.  Every key is storable: trace values
 * are untrusted, and a pointer or base_addr of 0 is as valid a key as any.
 * Key 0 marks an empty slot of keys[], so key 0 itself lives in a slot of
 * its own past the table (vals[capacity], present when has_zero).
 *
 * Slots come from a 64-bit mixer of the key xor a per-map seed, so every
 * key bit moves the slot (pointers that differ only in their high bits,
 * `i << 48`, spread as well as any) and a trace cannot be written to
 * collide without knowing the seed: the expected probe length stays O(1)
 * and the longest O(log n) whatever the trace holds.  The seed changes only
 * the layout, never a result: nothing the replay reports depends on the
 * order of a map's slots.
 *
 * Values are fixed-size records kept beside the keys; pointers to them are
 * valid until the next put or del.
 */
typedef struct sli_map {
    uint64_t *keys;
    uint8_t *vals; /* capacity + 1 records: the last is key 0's */
    size_t esize;
    size_t mask;  /* capacity - 1 */
    size_t count; /* keys stored, key 0 included */
    uint64_t seed;
    bool has_zero;
} sli_map;

int sli_map_init(sli_map *m, size_t esize);
void sli_map_fini(sli_map *m);
void *sli_map_get(const sli_map *m, uint64_t key);
/* The record for key, created zeroed if absent (*existed says which); NULL when out of memory. */
void *sli_map_put(sli_map *m, uint64_t key, bool *existed);
/* The longest distance of a stored key from its home slot (a test's view of clustering). */
size_t sli_map_longest_probe(const sli_map *m);
bool sli_map_del(sli_map *m, uint64_t key);
/*
 * Makes room for element `n` of the array *v (esize bytes each, *cap
 * allocated), doubling from `first`.  False when out of memory (*v stays).
 */
bool sli_grow(void *v, unsigned *cap, unsigned n, size_t esize, unsigned first);
/* FNV-1a of a string, never 0 (a map key). */
uint64_t sli_hash_str(const char *s, size_t n);

/* ------------------------------------------------------------------ */
/* The session                                                         */

#define SLI_NONE16 0xffffu
#define SLI_HIST_SUB 16 /* sub-buckets per power of two */
#define SLI_HIST_BUCKETS (64 * SLI_HIST_SUB)
#define SLI_MAX_CACHES 4096
#define SLI_MAX_SITES 65536
/*
 * Percpu chunks a replay models.  Each costs every percpu model a chunk's
 * memory (units x unit size, plus bitmaps): natively that is address space
 * committed only where areas land, in WebAssembly it is linear memory at
 * once.  A trace naming a new base_addr on every line once took 2.8 GB
 * natively and aborted the WebAssembly build; real kernels have tens to
 * hundreds of chunks.  Events of chunks past the cap are counted, not
 * modelled (sli_pcpu_max_chunks: the count, or the bytes if they bind first).
 */
#define SLI_MAX_CHUNKS 1024
#ifdef __EMSCRIPTEN__
#define SLI_PCPU_CHUNK_BUDGET ((uint64_t)512 << 20)
#else
#define SLI_PCPU_CHUNK_BUDGET ((uint64_t)64 << 30)
#endif
#define SLI_MAX_OTHER_NAMES 64

/* A lifetime histogram: log-linear buckets of nanoseconds. */
typedef struct sli_hist {
    uint64_t n;
    uint32_t b[SLI_HIST_BUCKETS];
} sli_hist;
void sli_hist_add(sli_hist *h, uint64_t v);
/* The q-quantile (0..1) as its bucket's midpoint; 0 when empty. */
uint64_t sli_hist_quantile(const sli_hist *h, double q);

enum sli_cache_type {
    SLI_CACHE_NAMED,   /* kmem_cache_alloc name= */
    SLI_CACHE_KMALLOC, /* kmalloc-N, kmalloc-cg-N, kmalloc-rcl-N, dma-kmalloc-N */
    SLI_CACHE_LARGE,   /* kmalloc above KMALLOC_MAX_CACHE_SIZE: the page allocator's, not modelled */
    SLI_CACHE_UNNAMED, /* kmem_cache_alloc without name= (before 6.0): by object size, not modelled */
};

typedef struct sli_cache_model {
    sl_slub_cache *s; /* NULL: not created (filtered, failed, not modelled) */
    bool failed;      /* creation failed: counted once as a model error */
    uint32_t max_partial;
} sli_cache_model;

typedef struct sli_cache {
    char name[64];
    uint8_t type; /* enum sli_cache_type */
    bool wanted;  /* passes the --cache filter */
    bool geometry_from_sysfs;
    int geometry_matches;  /* 1, 0, -1 unknown */
    uint32_t kmalloc_size; /* kmalloc caches: N */
    uint64_t allocs, frees, freed_unknown, untraced_frees, bytes_req, bytes_alloc, live, peak_live, cross_cpu;
    sli_hist *life;     /* allocated on the first paired free */
    uint32_t *timeline; /* per time bin: allocations, then frees (2 x SLI_TIMELINE_BINS); NULL until its first */
    sli_cache_model m[SL_REPLAY_MAX_KERNELS];
} sli_cache;

/*
 * Allocations and frees per cache over time, in bins that double in width
 * to stay under SLI_TIMELINE_BINS (the JSON's "timeline": the browser's
 * overview chart).  Counted as the events are applied, so a pass needs no
 * record of each operation to draw it.
 */
#define SLI_TIMELINE_BINS 1024
#define SLI_TIMELINE_FIRST_NS 1000000ull /* a bin's width before any doubling: 1 ms */
typedef struct sli_timeline {
    bool started;
    uint64_t t0_ns, width_ns;
    uint32_t bins; /* in use: the last event's bin + 1 */
    /* The bin of the last event, [cur_start, cur_end): most events land in it (no division). */
    uint32_t cur;
    uint64_t cur_start, cur_end;
} sli_timeline;

typedef struct sli_site {
    uint32_t name_off; /* into the session's string arena */
    uint64_t allocs, frees, bytes_req, bytes_alloc, cross_cpu;
} sli_site;

/* A live object the trace allocated (sli_map record, keyed by the trace's pointer). */
typedef struct sli_obj {
    uint64_t ts_ns;
    void *model[SL_REPLAY_MAX_KERNELS];
    uint32_t site; /* UINT32_MAX: none */
    uint32_t line;
    uint16_t cache;
    uint16_t cpu;
} sli_obj;

/* A live percpu area the trace allocated (keyed by the percpu pointer). */
typedef struct sli_area {
    uint64_t ts_ns;
    uint32_t chunk, off, size;
    uint16_t cpu;
} sli_area;

typedef struct sli_chunk {
    uint64_t base;
    bool created_in_trace, destroyed;
    uint64_t allocs, frees, freed_unknown;
    uint32_t live;
    uint32_t model_id[SL_REPLAY_MAX_KERNELS]; /* its chunk id in each percpu model, SL_NONE32 when none */
} sli_chunk;

typedef struct sli_model {
    sl_kernel_version kv;
    bool ready; /* zone set up */
    sl_page_zone zone;
    bool pcpu_ready, pcpu_failed;
    sl_pcpu pcpu;
    sl_pcpu_kind pcpu_kind;
    uint64_t errors;
    unsigned nerror_msgs;
    struct {
        uint64_t line;
        char msg[192];
    } error_msgs[SL_REPLAY_MODEL_ERRORS];
} sli_model;

/* The capture's /sys/kernel/slab: geometry inputs by cache name, aliases resolved. */
typedef struct sli_sysfs {
    sl_slub_kcache *caches;
    sl_slabinfo_cache *info; /* beside caches[]: what tools/mm/slabinfo reads */
    unsigned ncaches, cap;
    sli_map folders;          /* folder name hash -> uint64 index into caches */
    sli_map aliases;          /* alias link name hash -> its target's name hash */
    sl_slabinfo_alias *links; /* the alias links as names */
    unsigned nlinks, links_cap;
    sl_strbuf proc_slabinfo; /* the archive's proc/slabinfo */
} sli_sysfs;

enum sli_input { SLI_IN_SNIFF, SLI_IN_GZIP, SLI_IN_PLAIN };
enum sli_text { SLI_TEXT_SNIFF, SLI_TEXT_TAR, SLI_TEXT_LINES };
enum sli_member {
    SLI_MEMBER_SKIP,
    SLI_MEMBER_META,
    SLI_MEMBER_SYSFS,
    SLI_MEMBER_PCPU_STATS,
    SLI_MEMBER_SLABINFO,
    SLI_MEMBER_TRACE
};

struct sl_replay {
    sl_replay_config cfg;
    char cache_filter[64];
    unsigned nkernels;
    int kernel_source; /* 0 unknown, 1 capture, 2 option */
    char kernel_option[32];
    sli_model models[SL_REPLAY_MAX_KERNELS];

    /* Input stages. */
    int input, text;
    uint8_t raw_sniff[16];
    size_t raw_sniff_len, raw_sniff_pos;
    uint8_t text_sniff[512];
    size_t text_sniff_len, text_sniff_pos;
    sli_gunzip *gz;
    sli_tar tar;
    int member;
    char member_name[260];
    sl_strbuf member_buf; /* small members, whole */
    bool saw_trace_member, saw_meta;
    uint64_t members_skipped;
    char line[SL_REPLAY_MAX_LINE + 1];
    size_t line_len;
    bool line_too_long, line_ready;
    const char *cur_line; /* the line apply_event is applying (sl_replay_current) */
    size_t cur_len;

    /* Status. */
    bool refused, cancelled, finished, paused;
    char error[320];
    uint64_t limit;
    uint64_t elapsed_ns;  /* in feed and finish, but for the final validation */
    uint64_t cpu_us;      /* this process's CPU time over the same spans (clock()) */
    uint64_t validate_ns; /* the final validation */
    uint64_t bytes_in, text_bytes;
    char warnings[4][200];
    unsigned nwarnings;

    /* The capture's metadata. */
    char release[128];
    uint8_t preemption; /* SLI_PREEMPT_*, from kernel_version (uname -v) */
    unsigned cpus_possible, cpus_present, cpus_hint;
    uint64_t pcpu_unit_size;
    sli_sysfs sysfs;

    /* Parse accounting. */
    uint64_t lines, parsed, header_lines, other_events, bad, lost_events, events;
    uint64_t by_kind[SLI_EV_COUNT];
    struct {
        char name[48];
        uint64_t n;
    } other_names[SLI_MAX_OTHER_NAMES];
    unsigned nother_names;
    uint64_t other_names_overflow;
    struct {
        uint64_t line;
        const char *reason;
    } bad_lines[SL_REPLAY_BAD_LINES];
    unsigned nbad_lines;
    uint64_t first_ts, last_ts;
    bool have_ts;
    uint64_t ts_backwards; /* events older than the one before (trace_pipe merges CPUs loosely) */

    /* Pairing. */
    unsigned model_cpus;  /* decided at the first event */
    uint64_t cpus_folded; /* events on a CPU >= model_cpus */
    uint32_t max_cpu_seen;
    sli_map objs; /* ptr -> sli_obj */
    uint64_t matched, freed_unknown, null_frees, zero_size, alloc_failed, untraced_frees, cache_mismatch;
    uint64_t alloc_ctx[SLI_CTX_GFP_N]; /* SLUB allocations by their context (SLI_CTX_GFP_*) */
    sl_kernel_version gfp_kv;          /* whose gfp bit values a numeric gfp_flags= has (slub_replay.c) */
    bool gfp_kv_set;
    sli_cache *caches;
    unsigned ncaches, caches_cap;
    sli_map cache_by_name;       /* name hash -> uint32 cache index */
    uint16_t kmalloc_idx[4][16]; /* [type][size class] -> cache index (SLI_NONE16: not yet) */
    uint16_t large_cache;
    uint16_t touched[2]; /* the caches the current event changed (validate_each) */
    sli_site *sites;
    unsigned nsites, sites_cap;
    uint64_t sites_overflow;
    sli_map site_by_name;
    sl_strbuf strings; /* site names, NUL-separated */
    sli_timeline timeline;

    /* percpu */
    sli_map areas; /* percpu ptr -> sli_area */
    sli_chunk *chunks;
    unsigned nchunks, chunks_cap;
    bool chunks_capped;    /* a base past SLI_MAX_CHUNKS was seen (reported once) */
    sli_map chunk_by_base; /* base_addr -> uint32 chunk index + 1 */
    uint64_t pcpu_allocs, pcpu_frees, pcpu_freed_unknown, pcpu_fails, pcpu_untraced_frees;

    /* Page allocator events (counted, not replayed). */
    uint64_t page_allocs, page_frees;
    uint64_t page_alloc_by_order[11], page_free_by_order[11];
};

/*
 * The preemption model uname -v names (scripts/mkcompile_h, 5.18+ also
 * init/Makefile: "PREEMPT_RT", else "PREEMPT_DYNAMIC" or "PREEMPT" for
 * CONFIG_PREEMPT_BUILD, else nothing).  The SLUB model follows it: rt's
 * local_lock paths, and TID_STEP 1 without CONFIG_PREEMPTION.
 */
enum { SLI_PREEMPT_UNKNOWN = 0, SLI_PREEMPT_NONE, SLI_PREEMPT_FULL, SLI_PREEMPT_RT };

/* report.c */
const char *sli_pcpu_rules(sl_kernel_version v);
/* slabinfo.c */
void sli_slabinfo_attr(sl_slabinfo_cache *c, const char *attr, const char *value);
/* slub_replay.c */
void sli_replay_slub_event(sl_replay *r, const sli_event *ev);
/* The SLUB version whose rules a model of kernel v follows (eras.h; unknown: the default). */
sl_slub_kversion sli_slub_version(sl_kernel_version v);
int sli_replay_cache_geometry(const sl_replay *r, const sli_cache *c, sl_slub_kcache *k);
void sli_replay_free_caches(sl_replay *r);
/* pcpu_replay.c */
sl_pcpu_kind sli_pcpu_kind_for(sl_kernel_version v);
void sli_replay_pcpu_event(sl_replay *r, const sli_event *ev);
void sli_replay_free_pcpu(sl_replay *r);
/* The percpu chunks this session models at most (SLI_MAX_CHUNKS, or fewer by SLI_PCPU_CHUNK_BUDGET). */
unsigned sli_pcpu_max_chunks(const sl_replay *r);
/* replay.c */
const sl_slub_kcache *sli_sysfs_lookup(const sl_replay *r, const char *name, size_t len);
void sli_model_error(sl_replay *r, unsigned k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
unsigned sli_model_cpu(sl_replay *r, uint32_t cpu);
void sli_warn(sl_replay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* SLI_REPLAY_INTERNAL_H */
