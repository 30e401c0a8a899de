/*
 * spsc_ring.h - the stress tests' single-producer single-consumer ring: one
 * CPU thread puts the objects another CPU is to free, that CPU takes them.
 * The producer owns head, the consumer tail; a slot is published by the
 * release store of head and taken after the acquire load of it.
 * SL_TEST_RING slots (a power of two; define it before including).
 */
#ifndef SL_TEST_SPSC_RING_H
#define SL_TEST_SPSC_RING_H

#include "check.h"

typedef struct ring {
    _Alignas(64) atomic_uint head; /* producer */
    _Alignas(64) atomic_uint tail; /* consumer */
    void *slot[SL_TEST_RING];
} ring;

/* False when the ring is full. */
static inline bool ring_put(ring *r, void *p)
{
    unsigned h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h - atomic_load_explicit(&r->tail, memory_order_acquire) == SL_TEST_RING)
        return false;
    r->slot[h % SL_TEST_RING] = p;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return true;
}

/* The oldest object put, or NULL when the ring is empty. */
static inline void *ring_get(ring *r)
{
    unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (t == atomic_load_explicit(&r->head, memory_order_acquire))
        return NULL;
    void *p = r->slot[t % SL_TEST_RING];
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return p;
}

#endif
