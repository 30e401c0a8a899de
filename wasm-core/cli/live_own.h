/*
 * live_own.h - how the live event program (bpf/slab_events.bpf.c) tells the
 * server's own work from the kernel's work that merely runs while the
 * server is current: it reads the CPU's preempt count, at an address this
 * code finds without kallsyms and checks before the program may use it.
 *
 *   before load  sl_live_own_find: where this_cpu_off, cpu_number and
 *                __preempt_count sit in the per-CPU section (.data..percpu),
 *                from the running kernel's BTF (its DATASEC's variables);
 *   after load   sl_live_own_check: runs the program's find_percpu_offsets
 *                iterator (each CPU's per-CPU offset, measured on its own
 *                per-CPU map), checks that every CPU's this_cpu_off reads
 *                back as that offset and its cpu_number as the CPU, and only
 *                then hands the program each CPU's __preempt_count address.
 *
 * When any step fails the program keeps the old rule (every event of the
 * server's process is its own) and `note` says why; the events it leaves
 * out are counted either way (sl_live_source_own, live_source.h).
 */
#ifndef SL_LIVE_OWN_H
#define SL_LIVE_OWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The places of the three variables in .data..percpu (bytes from its start). */
typedef struct sl_live_own_places {
    uint64_t this_cpu_off, cpu_number, preempt_count, runqueues;
} sl_live_own_places;

/*
 * Finds the three variables in the running kernel's BTF.  Returns true with
 * *p set; false with note saying what is missing (no BTF, no per-CPU
 * section, a variable absent or of an unexpected size).
 */
bool sl_live_own_find(sl_live_own_places *p, char *note, size_t notelen);

struct slab_events; /* the program's libbpf skeleton (slab_events.skel.h) */

/*
 * With the skeleton loaded (its rodata held p's places and nr_cpus) and not
 * yet attached: measures each CPU's per-CPU offset, checks the places
 * against it, and on success sets the program's preempt_addr[] and
 * preempt_ok.  Returns true when the program may read the preempt count;
 * false with note saying which check failed (preempt_ok stays 0).
 */
bool sl_live_own_check(struct slab_events *skel, unsigned nr_cpus, const sl_live_own_places *p, char *note,
                       size_t notelen);

#endif /* SL_LIVE_OWN_H */
