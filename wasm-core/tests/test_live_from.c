/*
 * test_live_from.c - `slablab serve --from CAPTURE`, a recording served as
 * the live stream, through tests/cli/live_from_test.mjs, one named test per
 * check group: the capture's events exactly and in order with its snapshots
 * at their places, the refusals of a missing or corrupt capture and of bad
 * options, --rate and --loop, a pick playing it again from its start, a
 * lagging client's drops counted.  Needs neither root nor BPF (as root, the
 * server runs as nobody).
 */
#include "cli_test.h"

#define FROM_GROUP(name) SL_CLI_SCRIPT_GROUP(live_from, "live_from_test.mjs", name)

FROM_GROUP(stream)
FROM_GROUP(errors)
FROM_GROUP(rate)
FROM_GROUP(pick)
FROM_GROUP(lag)

int main(void)
{
    SL_RUN(test_live_from_stream);
    SL_RUN(test_live_from_errors);
    SL_RUN(test_live_from_rate);
    SL_RUN(test_live_from_pick);
    SL_RUN(test_live_from_lag);
    return sl_check_summary();
}
