#!/usr/bin/env bash
# After a suite: when it failed (exit status $2), the failing tests and what they recorded, from
# its log ($1), last, where a CI's tail of the output shows them (the log runs to 50,000 lines).
log=$1 status=$2
[ "$status" = 0 ] && exit 0
[ -f "$log" ] || exit 0
echo "=== the suite failed (exit $status); what failed, from $log:"
grep -a '^✘ Test\|^✘ Suite' "$log" | grep -av 'known issue' | cut -c1-600 | head -40
