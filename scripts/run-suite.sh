#!/usr/bin/env bash
# Runs the package's test bundle itself, Swift Testing's tests, and tees its output to a log:
#   scripts/run-suite.sh BIN_PATH LOG [ARGUMENTS…]   (BIN_PATH: `swift build --show-bin-path`)
#
# Not through `swift test`: on Debian 12, Swift 6.3.1's `swift test --skip-build` cut the
# runner's output short and exited 0 in five runs of the whole suite (no "Test run with …"
# line, 100 to 650 of the ~1,650 results missing), so a failure could pass unseen. The bundle
# run directly gives its whole output and its own exit status. A run that exits 0 without its
# summary line is counted as failed all the same. When it fails, the failing tests come last
# (scripts/test-failures.sh), where a CI's tail of the output shows them.
set -u
bin=$1 log=$2
shift 2
bundle="$bin/GraphKitPackageTests.xctest"
if [ ! -x "$bundle" ]; then
  echo "run-suite: no test bundle at $bundle: build the tests first (swift build --build-tests)" >&2
  exit 2
fi
# Without colours: run directly on a terminal (TERM set), Swift Testing colours its lines, and
# scripts/test-failures.sh finds the failing ones by their first character.
NO_COLOR=1 "$bundle" --testing-library swift-testing "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" = 0 ] && ! grep -aqE 'Test run with [0-9]+ tests? .*passed' "$log"; then
  echo "=== the suite exited 0 but its log ($log) has no summary line (\"Test run with …\"): its output was cut short; counted as failed"
  status=1
fi
bash "$(dirname "$0")/test-failures.sh" "$log" "$status"
exit "$status"
