#!/usr/bin/env bash
# Runs the whole test suite N times in a row under CPU load (stress --cpu 2 by default) and
# stops at the first failure, naming the run and the tests that failed. A flaky test shows up
# here long before it shows up on someone else's machine.
#
#   scripts/stress-test.sh N [--cpu K] [--filter TESTS] [--resume]     e.g. scripts/stress-test.sh 20
#
# --resume goes on with a series an earlier call left unfinished (stopped, or its session ended),
# from the run after the last that passed, when the tree is the same commit with nothing changed
# and the load and filter are the same; otherwise the series starts again from run 1. A failed
# run ends the series. Where it stands: .build/stress/series (commit, load, filter, runs passed).
#
# --filter runs only the matching tests (swift test --filter), many more times: the damaged-file
# cases, whose runs once stalled in about 1 in 30, loop with
#   scripts/stress-test.sh 300 --filter DamagedInputTests
#
# Logs: .build/stress/run-<i>.log. Each run has a 30-minute limit; a run that reaches it is a
# failure (a hang), reported as such.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: $0 N [--cpu K] [--filter TESTS] [--resume]" >&2; exit 64; }
[[ $# -ge 1 && "$1" =~ ^[1-9][0-9]*$ ]] || usage
runs=$1; shift
cpu=2
filter=()
resume=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpu) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || usage; cpu=$2; shift 2 ;;
    --filter) [[ $# -ge 2 ]] || usage; filter=(--filter "$2"); shift 2 ;;
    --resume) resume=1; shift ;;
    *) usage ;;
  esac
done
SWIFT=${SWIFT:-swift}
per_run_limit=${STRESS_RUN_LIMIT:-1800}

bash scripts/install-deps.sh --stress
make test-build  # what `make test` builds: the tests, graphctl and the plugins they load
export GRAPHCTL=$PWD/tools/graphctl/.build/debug/graphctl

logs=.build/stress
mkdir -p "$logs"
# The series: the same code (a commit with nothing changed beside it), load and filter.
series="$(git rev-parse HEAD 2>/dev/null || echo none) cpu=$cpu filter=${filter[*]:-all}"
[[ -z "$(git status --porcelain 2>/dev/null)" ]] || series="$series changed-tree-$(date +%s)"
first=1
if ((resume)) && [[ -f "$logs/series" ]]; then
  read -r recorded_passed recorded_series <"$logs/series" || true
  if [[ "$recorded_series" == "$series" && "$recorded_passed" =~ ^[0-9]+$ ]]; then
    first=$((recorded_passed + 1))
    echo "resuming the series at run $first ($recorded_passed passed before, same tree: $series)"
  else
    echo "no series to resume for this tree, load and filter: starting at run 1"
  fi
fi
if ((first == 1)); then
  rm -f "$logs"/run-*.log
  echo "0 $series" >"$logs/series"
fi

load_pid=""
stop_load() {
  if [[ -n "$load_pid" ]]; then
    kill -TERM -- "-$load_pid" 2>/dev/null || true  # stress and its workers: their own process group
    wait "$load_pid" 2>/dev/null || true
    load_pid=""
  fi
}
trap stop_load EXIT
trap 'exit 130' INT TERM
if ((cpu > 0)); then
  setsid stress --cpu "$cpu" >/dev/null 2>&1 &
  load_pid=$!
  echo "load: stress --cpu $cpu (process group $load_pid)"
fi

for ((i = first; i <= runs; i++)); do
  log="$logs/run-$i.log"
  start=$SECONDS
  status=0
  timeout --kill-after=30 "$per_run_limit" $SWIFT test --skip-build "${filter[@]}" >"$log" 2>&1 || status=$?
  if ((status == 0)); then
    echo "run $i of $runs: passed ($((SECONDS - start)) s, $(date +%H:%M))"
    echo "$i $series" >"$logs/series"
    continue
  fi
  rm -f "$logs/series"  # the series is broken: a resume starts again
  echo "run $i of $runs: FAILED (exit $status after $((SECONDS - start)) s); log: $log" >&2
  if ((status == 124 || status == 137)); then
    echo "  the run reached its ${per_run_limit} s limit (a hang); tests started but not finished:" >&2
    # swift-testing prints "◇ Test x() started." and "✔/✘ Test x() passed/failed ...".
    comm -23 <(sed -n 's/^◇ Test \(.*\) started\.$/\1/p' "$log" | sort -u) \
             <(sed -n 's/^[✔✘━] Test \([^ ]*\) .*/\1/p' "$log" | sort -u) | sed 's/^/    /' >&2
  fi
  # swift-testing and XCTest failures, and a crash's signal, as they appear in the log.
  grep -E '^✘ Test .*(recorded an issue|failed)|Test Case .* failed|error: |Fatal error|signal [0-9]+|Exited with' "$log" \
    | grep -v '^✘ Test run ' | sed 's/^/  /' | head -40 >&2 || true
  exit 1
done
earlier=""
((first > 1)) && earlier=" (runs 1 to $((first - 1)) in an earlier call, on the same tree)"
echo "all $runs runs passed under stress --cpu $cpu$earlier"
