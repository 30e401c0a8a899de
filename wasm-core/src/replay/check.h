/*
 * check.h - the SLUB model kept in step with a real kernel: how far a real
 * snapshot, driven by the allocations and frees traced since, explains the
 * next real snapshot of the same cache.  The one implementation behind
 * `slablab replay CAPTURE.slabcap --check` and the live page's agreement
 * (bindings/api_check.c); docs/live.md says what it keeps in step, what it
 * corrects and what it simplifies.
 *
 * Use:
 *   sl_check_snapshot *a = sl_check_snapshot_parse(json_a, len_a, err, n);
 *   sl_check *c; sl_check_create(a, "filp", &c, err, n);   (seeds a model)
 *   sl_check_event(c, t_ns, cpu, alloc, address) ...       (in time order)
 *   sl_check_snapshot *b = ...;  sl_check_compare(c, b, &window, &result);
 *   sl_check_destroy(c); sl_check_snapshot_free(a); ...
 *
 * Memory: a snapshot holds its slabs' free object indices (about 4 bytes per
 * free object) and its sheaves' objects; a check holds one model cache
 * whose zone is sized from the snapshot (at most SL_CHECK_MAX_ZONE), a map
 * of the real slabs it has met (at most SL_CHECK_MAX_SLABS) and one byte per
 * object of those slabs.  Past those bounds events are counted, not applied.
 * Input is checked: a snapshot that is not a slablab-snapshot/1 document, a
 * cache the model cannot seed, or an event for a CPU the model lacks gets a
 * specific error or count, never a crash.
 */
#ifndef SL_REPLAY_CHECK_H
#define SL_REPLAY_CHECK_H

#include "replay.h"

enum {
    SL_CHECK_MAX_SLABS = 1 << 20,  /* real slabs a check maps */
    SL_CHECK_MAX_JSON = 256 << 20, /* bytes of snapshot JSON parsed */
    SL_CHECK_EXAMPLES = 20,
};
#if SL_WASM
#define SL_CHECK_MAX_ZONE ((size_t)64 << 20) /* the page's memory is real: a smaller bound */
#else
#define SL_CHECK_MAX_ZONE ((size_t)256 << 20)
#endif

/* The likely cause of a disagreement, in the order the rules try them (docs/live.md). */
typedef enum sl_check_cause {
    SL_CHECK_TORN = 0,           /* the snapshot was torn there (the slab, or an object claimed twice) */
    SL_CHECK_DURING_READ = 1,    /* an event on it fell within one of the snapshots' reads */
    SL_CHECK_LOST = 2,           /* events were lost in the window */
    SL_CHECK_UNLISTED = 3,       /* an untouched object of a slab the earlier snapshot did not list (guessed) */
    SL_CHECK_UNTRACED_FREE = 4,  /* really free, no free event (bulk frees, RCU batches, sheaf flushes) */
    SL_CHECK_UNTRACED_ALLOC = 5, /* really allocated, no allocation event (bulk allocations, sheaf refills) */
    SL_CHECK_LIST = 6,           /* a slab only: its objects agree, its list does not (the model moved it otherwise) */
    SL_CHECK_PLACE =
        7, /* a slab only: objects and list agree, inuse not (free in a sheaf or CPU freelist vs the slab's) */
    SL_CHECK_OTHER = 8, /* the model's state against the kind of the last event on the object */
    SL_CHECK_NR_CAUSES = 9,
} sl_check_cause;

/* The model's allocation path, for the prediction hit rate. */
enum { SL_CHECK_PATH_FAST = 0, SL_CHECK_PATH_SLOW = 1, SL_CHECK_PATH_SHEAF = 2, SL_CHECK_NR_PATHS = 3 };

/* The cause's short name ("torn", "during_read", ...), or NULL past the end. */
const char *sl_check_cause_name(unsigned cause);
/* The cause in words, for tables. */
const char *sl_check_cause_words(unsigned cause);

typedef struct sl_check_snapshot sl_check_snapshot;

/*
 * Parses a slablab-snapshot/1 document (docs/snapshot.md; with or without
 * --objects).  Returns the snapshot, or NULL with err naming the problem
 * (not JSON, not that format, too large, no memory).
 */
sl_check_snapshot *sl_check_snapshot_parse(const char *json, size_t len, char *err, size_t errlen);
void sl_check_snapshot_free(sl_check_snapshot *snap);
/* The kernel release ("6.18.44-..."); its caches' count and names, in the snapshot's order. */
const char *sl_check_snapshot_release(const sl_check_snapshot *snap);
unsigned sl_check_snapshot_cache_count(const sl_check_snapshot *snap);
const char *sl_check_snapshot_cache_name(const sl_check_snapshot *snap, unsigned i);

/* The window between the two snapshots, on the events' clock. */
typedef struct sl_check_window {
    bool timed;         /* false: no times (a capture: every event falls between the two reads) */
    uint64_t before[2]; /* [start, end] of the earlier snapshot's read */
    uint64_t after[2];  /* ... of the later one's */
    uint64_t lost;      /* events lost in the window (kernel ring, server, page), as counted */
} sl_check_window;

typedef struct sl_check_example {
    uint64_t base;    /* the real slab's first byte */
    uint32_t objects; /* objects disagreeing */
    uint8_t cause;    /* sl_check_cause */
    uint8_t list_agrees, inuse_agrees;
} sl_check_example;

typedef struct sl_check_result {
    char cache[64];
    char kernel[16]; /* whose SLUB rules the model followed ("6.18") */
    /* The later snapshot's listed slabs (with a first byte), compared with the model's. */
    uint32_t slabs_compared;
    uint32_t slabs_agreeing; /* list and inuse both match */
    uint32_t slabs_list_agreeing;
    uint32_t slabs_inuse_agreeing;
    uint32_t model_only_listed; /* slabs the model lists and the later snapshot does not */
    uint64_t objects_compared, objects_agreeing;
    uint64_t causes[SL_CHECK_NR_CAUSES];      /* disagreeing objects; they add up to compared - agreeing */
    uint64_t slab_causes[SL_CHECK_NR_CAUSES]; /* disagreeing slabs, by the cause of most of their objects */
    /* Allocations: the model's own choice against the kernel's. */
    uint64_t allocs, hits;
    uint64_t path_allocs[SL_CHECK_NR_PATHS], path_hits[SL_CHECK_NR_PATHS];
    /* Events the model could not follow as they were: frees of an object it held free, allocations of one it held allocated. */
    uint64_t frees;
    uint64_t free_misses[SL_CHECK_NR_CAUSES];
    uint64_t alloc_of_allocated[SL_CHECK_NR_CAUSES];
    uint64_t events_applied;
    uint64_t events_outside;   /* not an object slot of this cache's geometry, or a CPU the model lacks */
    uint64_t events_unapplied; /* past a bound, or refused by the model (model_errors) */
    uint64_t model_errors;
    uint64_t corrections;          /* objects taken out of the model's free places (sl_slub_steer_take) */
    uint64_t cpu_slab_corrections; /* CPU slabs changed to the kernel's (sl_slub_steer_cpu_slab) */
    uint64_t corrections_failed;   /* ... that could not be (a full sheaf with an empty main sheaf) */
    uint32_t slabs_seeded;         /* listed slabs of the earlier snapshot seeded */
    uint32_t slabs_adopted_full;   /* slabs first met in a free: full at the earlier snapshot */
    uint32_t slabs_adopted_new;    /* slabs first met in an allocation the model did not make on a new slab */
    uint32_t slabs_bound_new;      /* a new model slab paired with a new kernel slab */
    uint32_t nexamples;
    sl_check_example examples[SL_CHECK_EXAMPLES];
    uint32_t list_moves
        [3][5]; /* slabs whose list disagrees: [kernel's list][model's: its list, 4 = same list of another CPU] */
    uint32_t list_untouched; /* of those, slabs no event touched */
    /* Caches with sheaves: the free objects in the sheaves each side holds (CPU main, spare and
     * rcu_free sheaves, the barn's full ones); a difference shows as `place` (inuse) disagreements. */
    uint32_t sheaf_objects_kernel, sheaf_objects_model;
    char notes[512]; /* what the seed left out, in words */
} sl_check_result;

typedef struct sl_check sl_check;

/*
 * A model cache seeded from cache `name` of snapshot a: its geometry, its
 * kernel version's SLUB rules (the release, parsed by kversion.c), its
 * listed slabs with their freelists in order and its sheaves (sl_slub_seed).
 * Returns SL_OK, or SL_EINVAL with err (no such cache, a debug cache, a
 * geometry or version the model does not have, a description it refuses)
 * or SL_ENOMEM.
 */
int sl_check_create(const sl_check_snapshot *a, const char *name, sl_check **out, char *err, size_t errlen);
void sl_check_destroy(sl_check *c);
/*
 * One event of the cache, in time order: an allocation of the object at
 * `address` on `cpu` (the model allocates on cpu and its choice is compared)
 * or its free (through the model's free path on cpu).  Returns SL_OK, or
 * SL_EINVAL when the event could not be applied (it is counted).
 */
int sl_check_event(sl_check *c, uint64_t t_ns, unsigned cpu, bool alloc, uint64_t address);
/* The earlier snapshot's read, on the events' clock (live streams; a capture has none). */
void sl_check_set_earlier_read(sl_check *c, uint64_t start_ns, uint64_t end_ns);
/* sl_slub_validate of the check's model (tests: the corrections keep it consistent). */
int sl_check_validate(sl_check *c, char *msg, size_t len);
/* Does `address` fall in a slab this check knows (listed earlier, or met since)? */
bool sl_check_knows(const sl_check *c, uint64_t address);
/* The bytes of one of this cache's slabs (PAGE_SIZE << order); the first byte of address's slab is address - address % it. */
uint64_t sl_check_slab_bytes(const sl_check *c);
/* Is `address` the first byte of an object slot of this cache's slabs (its geometry only, whether or not a slab is known)? */
bool sl_check_object_slot(const sl_check *c, uint64_t address);
/*
 * Compares the model with the same cache in snapshot b.  Fills r (also
 * when the cache is absent from b: then no slab is compared and err says
 * so).  Returns SL_OK or SL_EINVAL.  May be called again after more events.
 */
int sl_check_compare(sl_check *c, const sl_check_snapshot *b, const sl_check_window *w, sl_check_result *r, char *err,
                     size_t errlen);
/* Appends r as a JSON object to out. */
bool sl_check_result_json(const sl_check_result *r, sl_strbuf *out);

#endif /* SL_REPLAY_CHECK_H */
