/*
 * live_own.c - finds and checks each CPU's __preempt_count for the live
 * event program (live_own.h).  Built only with libbpf.
 *
 * Why the places are trusted: on x86_64 a per-CPU variable is linked at its
 * offset in .data..percpu, so CPU n's copy is at that CPU's per-CPU offset
 * plus the variable's place.  Two variables whose values are known check
 * both numbers on every CPU: this_cpu_off holds the CPU's own per-CPU
 * offset, cpu_number its number.  If the linking rule ever changes (a
 * kernel whose per-CPU section is not zero-based) the reads land elsewhere,
 * the check fails and the program keeps the old rule.
 */
#include "live_own.h"

#if SLABLAB_HAVE_LIBBPF

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../bpf/live_records.h"
#include "slab_events.skel.h"

bool sl_live_own_find(sl_live_own_places *p, char *note, size_t notelen)
{
    memset(p, 0, sizeof *p);
    struct btf *btf = btf__load_vmlinux_btf();
    if (!btf) {
        snprintf(note, notelen, "the kernel's BTF could not be read (%s)", strerror(errno));
        return false;
    }
    bool ok = false;
    int id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
    if (id < 0) {
        snprintf(note, notelen, "the kernel's BTF has no .data..percpu section");
        goto out;
    }
    const struct btf_type *sec = btf__type_by_id(btf, (uint32_t)id);
    const struct btf_var_secinfo *v = btf_var_secinfos(sec);
    struct {
        const char *name;
        uint32_t size;
        uint64_t *place;
    } want[] = {{"this_cpu_off", 8, &p->this_cpu_off},
                {"cpu_number", 4, &p->cpu_number},
                {"__preempt_count", 4, &p->preempt_count},
                {"runqueues", 0, &p->runqueues}};
    unsigned found = 0;
    for (unsigned i = 0; i < btf_vlen(sec); i++, v++) {
        const struct btf_type *var = btf__type_by_id(btf, v->type);
        const char *name = var ? btf__name_by_offset(btf, var->name_off) : NULL;
        for (unsigned w = 0; name && w < sizeof want / sizeof want[0]; w++) {
            if (strcmp(name, want[w].name))
                continue;
            if (want[w].size && v->size != want[w].size) {
                snprintf(note, notelen, "%s in the kernel's BTF is %u bytes, not %u", name, v->size, want[w].size);
                goto out;
            }
            *want[w].place = v->offset;
            found |= 1u << w;
        }
    }
    for (unsigned w = 0; w < sizeof want / sizeof want[0]; w++)
        if (!(found & (1u << w))) {
            snprintf(note, notelen, "the kernel's BTF names no %s in .data..percpu", want[w].name);
            goto out;
        }
    /* Place 0 is what the program takes for "not found": a variable there is not expected. */
    ok = p->this_cpu_off && p->cpu_number && p->preempt_count && p->runqueues;
    if (!ok)
        snprintf(note, notelen, "a per-CPU variable at the section's first byte: not used");
out:
    btf__free(btf);
    return ok;
}

/* Reads an iterator link to its end (the program writes nothing to it). Returns 0 or -errno. */
static int run_iterator(struct bpf_link *link)
{
    int fd = bpf_iter_create(bpf_link__fd(link));
    if (fd < 0)
        return -errno;
    char buf[64];
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = -errno;
        if (n <= 0)
            break;
    }
    close(fd);
    return rc;
}

bool sl_live_own_check(struct slab_events *skel, unsigned nr_cpus, const sl_live_own_places *p, char *note,
                       size_t notelen)
{
    skel->bss->preempt_ok = 0;
    if (nr_cpus > LIVE_MAX_CPUS) {
        snprintf(note, notelen, "%u CPUs, more than the %d the program reads the preempt count of", nr_cpus,
                 LIVE_MAX_CPUS);
        return false;
    }
    struct bpf_map_info info;
    uint32_t info_len = sizeof info;
    memset(&info, 0, sizeof info);
    if (bpf_obj_get_info_by_fd(bpf_map__fd(skel->maps.lost), &info, &info_len)) {
        snprintf(note, notelen, "reading the per-CPU map's id failed (%s)", strerror(errno));
        return false;
    }
    skel->bss->probe_map_id = info.id;
    struct bpf_link *link = bpf_program__attach_iter(skel->progs.find_percpu_offsets, NULL);
    if (!link) {
        snprintf(note, notelen, "the bpf_map iterator could not be attached (%s)", strerror(errno));
        return false;
    }
    int e = run_iterator(link);
    bpf_link__destroy(link);
    if (e || skel->bss->probe_cpus < nr_cpus) {
        snprintf(note, notelen, "the per-CPU offsets were not found (%s; %u of %u CPUs)", e ? strerror(-e) : "no error",
                 skel->bss->probe_cpus, nr_cpus);
        return false;
    }
    if (skel->bss->probe_rq_cpu < 0 || (unsigned)skel->bss->probe_rq_cpu != skel->bss->probe_at_cpu) {
        snprintf(note, notelen, "the running task's runqueue is CPU %d's, but it ran on CPU %u",
                 skel->bss->probe_rq_cpu, skel->bss->probe_at_cpu);
        return false;
    }
    for (unsigned cpu = 0; cpu < nr_cpus; cpu++) {
        uint64_t off = skel->bss->probe_off[cpu];
        if (skel->bss->probe_this_cpu_off[cpu] != off || skel->bss->probe_cpu_number[cpu] != cpu) {
            snprintf(note, notelen,
                     "the per-CPU places did not check out on CPU %u (this_cpu_off read 0x%llx, its offset is 0x%llx; "
                     "cpu_number read %u)",
                     cpu, (unsigned long long)skel->bss->probe_this_cpu_off[cpu], (unsigned long long)off,
                     skel->bss->probe_cpu_number[cpu]);
            return false;
        }
    }
    for (unsigned cpu = 0; cpu < nr_cpus; cpu++)
        skel->bss->preempt_addr[cpu] = skel->bss->probe_off[cpu] + skel->bss->probe_base + p->preempt_count;
    skel->bss->preempt_ok = 1;
    snprintf(note, notelen,
             "process context only: __preempt_count at .data..percpu+%llu, the section linked at 0x%llx, checked on %u "
             "CPUs (this_cpu_off, cpu_number)",
             (unsigned long long)p->preempt_count, (unsigned long long)skel->bss->probe_base, nr_cpus);
    return true;
}

#endif /* SLABLAB_HAVE_LIBBPF */
