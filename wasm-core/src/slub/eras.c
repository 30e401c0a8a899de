/*
 * eras.c - kernel versions and the SLUB rules in force in each (eras.h).
 *
 * The table below is the only place a version number turns into behaviour;
 * every breakpoint names the change that made it (docs/slub.md lists the
 * commits).
 */
#include "eras.h"

#include <stdio.h>

#define TRACK_SIZE_STACKTRACE 152 /* addr, addrs[16], cpu, pid, when (CONFIG_STACKTRACE) */
#define TRACK_SIZE_STACKDEPOT 32  /* addr, depot handle, cpu, pid, when */

int sl_slub_kversion_cmp(sl_slub_kversion a, sl_slub_kversion b)
{
    int x = a.major * 256 + a.minor, y = b.major * 256 + b.minor;
    return (x > y) - (x < y);
}

bool sl_slub_kversion_known(sl_slub_kversion v)
{
    return sl_slub_kversion_cmp(v, SL_SLUB_KVERSION_MIN) >= 0 && v.major <= 99;
}

int sl_slub_kversion_parse(const char *text, sl_slub_kversion *out, const char **why)
{
    const char *msg = NULL;
    uint8_t major = 0, minor = 0;
    const char *end = sl_kversion_scan(text, SL_KVERSION_STRICT, &major, &minor);
    if (!end || *end)
        msg = "a kernel version is written " SL_KVERSION_FORMS;
    else if (!sl_slub_kversion_known((sl_slub_kversion){major, minor}))
        msg = "the model knows SLUB from 4.3 (the first kmem_cache_free_bulk) on";
    if (why)
        *why = msg;
    if (msg)
        return SL_EINVAL;
    *out = (sl_slub_kversion){major, minor};
    return SL_OK;
}

bool sl_slub_kversion_notice(sl_slub_kversion v, char *buf, size_t len)
{
    if (sl_slub_kversion_cmp(v, SL_SLUB_KVERSION_NEWEST) <= 0)
        return false;
    sl_slub_kversion n = SL_SLUB_KVERSION_NEWEST;
    snprintf(buf, len, "Linux %u.%u is newer than the newest kernel the model follows (%u.%u): it gets %u.%u's rules",
             v.major, v.minor, n.major, n.minor, n.major, n.minor);
    return true;
}

char *sl_slub_kversion_format(sl_slub_kversion v, char *buf, size_t len)
{
    snprintf(buf, len, "%u.%u", v.major, v.minor);
    return buf;
}

/* True if v is at least major.minor. */
static bool since(sl_slub_kversion v, unsigned major, unsigned minor)
{
    return sl_slub_kversion_cmp(v, (sl_slub_kversion){(uint8_t)major, (uint8_t)minor}) >= 0;
}

void sl_slub_rules_for(sl_slub_kversion v, sl_slub_rules *r)
{
    if (!sl_slub_kversion_known(v))
        v = SL_SLUB_KVERSION_DEFAULT;
    *r = (sl_slub_rules){.version = v, .follows = v};
    if (sl_slub_kversion_cmp(v, SL_SLUB_KVERSION_NEWEST) > 0)
        r->follows = v = SL_SLUB_KVERSION_NEWEST; /* announced by sl_slub_kversion_notice */
    if (since(v, 7, 0))
        r->era = SL_SLUB_ERA_SHEAVES; /* "slab-for-7.0": sheaves replace the CPU slab */
    else if (since(v, 6, 18))
        r->era = SL_SLUB_ERA_OPT_IN_SHEAVES; /* "slab: add opt-in caching layer of percpu sheaves" */
    else if (since(v, 6, 8))
        r->era = SL_SLUB_ERA_CPU_SLAB; /* "slub: Delay freezing of partial slabs" */
    else
        r->era = SL_SLUB_ERA_FROZEN_PARTIAL;
    r->sheaves = r->era == SL_SLUB_ERA_SHEAVES          ? SL_SLUB_SHEAVES_ALL
                 : r->era == SL_SLUB_ERA_OPT_IN_SHEAVES ? SL_SLUB_SHEAVES_OPT_IN
                                                        : SL_SLUB_SHEAVES_NONE;
    r->cpu_slab = r->era != SL_SLUB_ERA_SHEAVES;
    r->frozen_cpu_partial = r->era == SL_SLUB_ERA_FROZEN_PARTIAL;
    r->bulk_free_irq_off = !since(v, 4, 4); /* 4.4: "slub: optimize bulk slowpath free by detached freelist" */
    r->cpu_partial_by_objects =
        !since(v, 5, 16); /* 5.16: "mm, slub: change percpu partial accounting from objects to pages" */
    r->deactivate_per_object =
        !since(v, 5, 12); /* 5.12: "mm, slub: splice cpu and page freelists in deactivate_slab()" */
    r->detached_marks_null = since(v, 4, 4) && !since(v, 5, 19); /* 5.19: "mm: slab: optimize memcg_slab_free_hook()" */
    r->order_lowers_min_objects = !since(v, 6, 8); /* 6.8: "mm/slub: remove min_objects loop from calculate_order()" */
    r->freeptr_at_zero = !since(v, 5, 7);          /* 5.7: "slub: relocate freelist pointer to middle of object" */
    r->red_left_pad = since(v, 4, 6);              /* 4.6: "mm/slub: support left redzone" */
    r->track_size = since(v, 5, 17) ? TRACK_SIZE_STACKDEPOT : TRACK_SIZE_STACKTRACE; /* 5.17: stack depot */
    /* 7.0's calculate_sheaf_capacity: no sheaves for SLAB_NO_OBJ_EXT (boot) and SLAB_NOLEAKTRACE caches */
    r->sheaf_exemptions = since(v, 7, 0);
    r->relock_trylock = since(v, 7, 1);
    r->barn_per_node = since(v, 7, 1);
    /* "slab-for-7.1": s->per_node[nid].barn, slab_barn_nodes */ /* __pcs_replace_empty_main: local_trylock, else barn_put_full_sheaf */
    /* "slab-for-7.2": "mm, slab: simplify returning slab in __refill_objects_node()", "mm, slab: add an
     * optimistic __slab_try_return_freelist()", "mm/slub: use empty sheaf helpers for oversized sheaves" */
    r->refill_return_tail = since(v, 7, 2);
    r->oversize_counted = since(v, 7, 2);
    r->try_return_locked = since(v, 7, 3); /* 7.3-rc: "take n->list_lock in __slab_try_return_freelist()" */
    r->nolock = since(v, 6, 18);           /* 6.18: "slab: Introduce kmalloc_nolock() and kfree_nolock()." */
    /* 6.18 and 7.0-rc1/rc2: can_alloc = gfpflags_allow_blocking(gfp); 7.0-rc3 on: allow_spin, fb1091febd66
     * "mm/slab: allow sheaf refill if blocking is not allowed" (docs/slub.md) */
    r->refill_nonblocking = since(v, 7, 0);
    /* 7.3: "mm/slab: introduce kfree_rcu_nolock()" (3bc999d9, branch slab/for-7.3/kfree_rcu_nolock) */
    r->kfree_rcu_nolock = since(v, 7, 3);
}

const char *sl_slub_era_name(unsigned era)
{
    switch (era) {
    case SL_SLUB_ERA_FROZEN_PARTIAL:
        return "4.3-6.7: per-CPU slab, frozen CPU partial slabs";
    case SL_SLUB_ERA_CPU_SLAB:
        return "6.8-6.17: per-CPU slab, unfrozen CPU partial slabs";
    case SL_SLUB_ERA_OPT_IN_SHEAVES:
        return "6.18: opt-in sheaves over the per-CPU slab";
    case SL_SLUB_ERA_SHEAVES:
        return "7.0-7.3: sheaves for every cache, no per-CPU slab";
    default:
        return NULL;
    }
}
