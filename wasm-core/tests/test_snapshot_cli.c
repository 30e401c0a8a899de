/*
 * test_snapshot_cli.c - `slablab snapshot` against the real kernel of this
 * machine, through tests/cli/snapshot_cli_test.mjs, one named test per check
 * group: the counters agree with /proc/slabinfo and /sys/kernel/slab, the
 * decoded freelists stay in their slabs, tids fit their CPUs, holding files
 * open moves filp, --max-slabs and --cache, the snapshots a capture stores, a
 * ring buffer overflow, the other kernels' layouts (their BTF made from
 * this kernel's), bad arguments, and the refusal
 * without BPF permission.  Each group also checks that no snapshot program
 * is left loaded.  Where the machine cannot take a snapshot (not root, no
 * BPF, a kernel before 6.13, a build without libbpf) the group skips and
 * says why.
 */
#include "cli_test.h"

#define SNAPSHOT_GROUP(name) SL_CLI_SCRIPT_GROUP(snapshot, "snapshot_cli_test.mjs", name)

SNAPSHOT_GROUP(counters)
SNAPSHOT_GROUP(freelists)
SNAPSHOT_GROUP(tids)
SNAPSHOT_GROUP(filp)
SNAPSHOT_GROUP(limits)
SNAPSHOT_GROUP(capture)
SNAPSHOT_GROUP(overflow)
SNAPSHOT_GROUP(kernels)
SNAPSHOT_GROUP(args)
SNAPSHOT_GROUP(permission)

int main(void)
{
    SL_RUN(test_snapshot_counters);
    SL_RUN(test_snapshot_freelists);
    SL_RUN(test_snapshot_tids);
    SL_RUN(test_snapshot_filp);
    SL_RUN(test_snapshot_limits);
    SL_RUN(test_snapshot_capture);
    SL_RUN(test_snapshot_overflow);
    SL_RUN(test_snapshot_kernels);
    SL_RUN(test_snapshot_args);
    SL_RUN(test_snapshot_permission);
    return sl_check_summary();
}
