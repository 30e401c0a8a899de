/*
 * test_live_cli.c - `slablab serve` against the real kernel of this machine,
 * through tests/cli/live_cli_test.mjs, one named test per check group: the
 * security refusals (token, Origin, Host, method, paths outside the site),
 * a non-loopback --bind without the flag, the filp events of a workload,
 * snapshots of a watched cache, and every BPF program detached when the
 * page leaves, on SIGTERM and after SIGKILL, and the kernel's interrupt and
 * preempt-disabled work that runs while the server is current streamed.  Groups that need root and BPF
 * skip and say why where the machine lacks them.  Every server listens on
 * 127.0.0.1 on a kernel-picked port and stops by itself (--exit-after).
 */
#include "cli_test.h"

#define LIVE_GROUP(name) SL_CLI_SCRIPT_GROUP(live, "live_cli_test.mjs", name)

LIVE_GROUP(security)
LIVE_GROUP(bind)
LIVE_GROUP(stream)
LIVE_GROUP(snapshot)
LIVE_GROUP(detach)
LIVE_GROUP(ownwork)

int main(void)
{
    SL_RUN(test_live_security);
    SL_RUN(test_live_bind);
    SL_RUN(test_live_stream);
    SL_RUN(test_live_snapshot);
    SL_RUN(test_live_detach);
    SL_RUN(test_live_ownwork);
    return sl_check_summary();
}
