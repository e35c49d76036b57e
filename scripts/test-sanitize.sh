#!/usr/bin/env bash
# `make test-sanitize`: the test suite under the address sanitizer (with its leak checker) and,
# separately, under the thread sanitizer, each built in its own scratch folder (.build-asan,
# .build-tsan) so the ordinary build is untouched.
#
#   scripts/test-sanitize.sh [address] [thread]     (default: both)
#
# Every process the tests start (graphctl too) is instrumented and writes its reports to
# <scratch>/sanitizer-logs/ rather than to standard error, so the tests' checks of what graphctl
# prints and of its exit status stay as they are (exitcode=0: a report does not change a status).
# A kind passes when the tests pass AND no report was written. Suppressions, each with its
# reason: scripts/sanitizers/{lsan,tsan}.supp.
#
# The test targets run one after another (their tests in parallel within each), not all at once:
# instrumented, the whole suite started together on 2 cores left hundreds of tests queued past
# their 10-minute time limits (stop 41's address run: 569 passed; what failed were time limits,
# their knock-on cancellations, and a stop-within-a-second check at the sanitizer's speed).
# SANITIZE_TARGETS="AssetsTests NodesTests" runs only those.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
kinds=("$@")
((${#kinds[@]} > 0)) || kinds=(address thread)

summarize() {  # the distinct report headlines, most frequent first, then where the logs are
  local logs=$1
  cat "$logs"/* | grep -E '^SUMMARY: ' | sed -E 's/ \(pid=[0-9]+\)//; s/ in \$s[^ ]*//' | sort | uniq -c | sort -rn | head -40
  echo "  (full reports: $logs/; $(ls "$logs" | wc -l) processes reported)"
}

# GLib 2.74 (Debian 12) hands out small blocks (a GstBuffer's struct, its memory's) from
# per-thread magazines behind a GMutex, where the sanitizers cannot see a block freed by one
# thread and reused by another: the thread run reported writes to a new buffer's fields as
# races with reads of the freed one's. Plain malloc, which both sanitizers follow, instead.
export G_SLICE=always-malloc

failed=()
for kind in "${kinds[@]}"; do
  case "$kind" in
    address)
      scratch=.build-asan
      defines=()
      # Full unwinding: GLib and its neighbours have no frame pointers, and the suppressions
      # must see the frames below g_malloc.
      # handle_segv=0: a segmentation fault stays a signal, as BatchTests' deliberately crashing
      # worker needs (ASan would report it and exit with exitcode, 0, instead); the sanitizer's
      # own checks are of shadow memory, not of SIGSEGV.
      export ASAN_OPTIONS="log_path=$PWD/$scratch/sanitizer-logs/asan:exitcode=0:detect_leaks=1:fast_unwind_on_malloc=0:malloc_context_size=40:handle_segv=0"
      export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
      ;;
    thread)
      scratch=.build-tsan
      # GraphKit's locks (Guarded) tell the sanitizer what they do only in this build: Swift's
      # Mutex locks inside the uninstrumented runtime, which TSan cannot see (Guarded.swift).
      defines=(-Xswiftc -DGRAPHKIT_TSAN)
      # handle_segv=0: as for the address run (BatchTests' crashing worker must die of the signal).
      export TSAN_OPTIONS="log_path=$PWD/$scratch/sanitizer-logs/tsan:exitcode=0:handle_segv=0:suppressions=$PWD/scripts/sanitizers/tsan.supp"
      ;;
    *) echo "usage: $0 [address] [thread]" >&2; exit 64 ;;
  esac
  echo "== $kind sanitizer: building in $scratch"
  # ld.gold warns about every sanitizer check symbol it cannot export: noise, left out.
  $SWIFT build --build-tests --sanitize="$kind" "${defines[@]}" --scratch-path "$scratch" 2>&1 | grep -v "Cannot export local symbol '__[at]san"
  if ((PIPESTATUS[0] != 0)); then
    failed+=("$kind (build)")
    continue
  fi
  # graphctl, which the tests run, is built by its own package against GraphKit's shared
  # library: the same sanitizer there, in a scratch folder of its own.
  rm -f "tools/graphctl/$scratch/debug.yaml"
  $SWIFT build --package-path tools/graphctl --sanitize="$kind" "${defines[@]}" --scratch-path "tools/graphctl/$scratch" 2>&1 \
    | grep -v "Cannot export local symbol '__[at]san"
  if ((PIPESTATUS[0] != 0)); then
    failed+=("$kind (graphctl build)")
    continue
  fi
  export GRAPHCTL=$PWD/tools/graphctl/$scratch/debug/graphctl
  source scripts/test-env.sh  # the suite runs as `make test` runs it
  logs=$scratch/sanitizer-logs
  rm -rf "$logs"
  mkdir -p "$logs"
  echo "== $kind sanitizer: running the tests (log: $scratch/test.log)"
  : >"$scratch/test.log"
  status=0
  for target in ${SANITIZE_TARGETS:-$(sed -nE 's/.*\.testTarget\(name: "([A-Za-z]+Tests)".*/\1/p' Package.swift)}; do
    echo "   $target"
    $SWIFT test --skip-build --sanitize="$kind" --scratch-path "$scratch" --filter "^$target\\." >>"$scratch/test.log" 2>&1 || status=$?
  done
  unset ASAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS
  grep -E '^✘ Test .*(recorded an issue|failed)|Test Case .* failed|^✔ Test run|^✘ Test run|^━ Test run' "$scratch/test.log" | head -20
  if ((status != 0)); then failed+=("$kind (tests, exit $status)"); fi
  if compgen -G "$logs/*" >/dev/null; then
    echo "== $kind sanitizer: reports"
    summarize "$logs"
    failed+=("$kind (reports)")
  else
    echo "== $kind sanitizer: no reports"
  fi
done

if ((${#failed[@]} > 0)); then
  echo "test-sanitize: not clean: ${failed[*]}" >&2
  exit 1
fi
echo "test-sanitize: clean (${kinds[*]})"
