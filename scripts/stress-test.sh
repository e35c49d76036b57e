#!/usr/bin/env bash
# Runs the whole test suite N times in a row under CPU load (stress --cpu 2 by default) and
# stops at the first failure, naming the run and the tests that failed. A flaky test shows up
# here long before it shows up on someone else's machine.
#
#   scripts/stress-test.sh N [--cpu K] [--filter TESTS] [--resume]     e.g. scripts/stress-test.sh 20
#
# --resume goes on with a series an earlier call left unfinished (stopped, or its session ended),
# from the run after the last that passed, when the code is the same and so are the load and the
# filter; otherwise the series starts again from run 1. A failed run ends the series. "The same
# code" is every tracked file but those no test reads (BENCHMARKS.md, the sanitizers'
# suppression files, the record itself), with nothing changed beside them: a series survives a
# commit of its record or of figures, not of anything a test builds or reads. The record is
# .ci/stress-series (the series' key, then a line per run passed): commit it and a new checkout of
# the same code resumes from it.
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
source scripts/test-env.sh  # the suite runs as `make test` runs it

logs=.build/stress
mkdir -p "$logs"
record=.ci/stress-series
# The series: the same code, load and filter. The code is the tracked files' contents, less
# those no test reads; a change to any other file, committed or not, is another series.
unread=$'\t(BENCHMARKS\\.md|\\.ci/stress-series|scripts/sanitizers/[^/]*)$'
code=$( (git ls-tree -r HEAD 2>/dev/null || echo none) | grep -Ev "$unread" | sha256sum | cut -c1-16)
changed=$(git status --porcelain -- . ':!BENCHMARKS.md' ":!$record" ':!scripts/sanitizers' 2>/dev/null || echo unknown)
[[ -z "$changed" ]] || code="$code-changed-$(date +%s)"
series="code=$code cpu=$cpu filter=${filter[*]:-all} width=$SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"
passed=0
if ((resume)) && [[ -f "$record" ]]; then
  recorded_series=$(sed -n 's/^series //p' "$record")
  if [[ "$recorded_series" == "$series" ]]; then
    passed=$(grep -c '^run [0-9]* passed' "$record" || true)
    echo "resuming the series at run $((passed + 1)) ($passed passed before on the same code: $series)"
  else
    echo "no series to resume for this code, load and filter: starting at run 1"
  fi
fi
first=$((passed + 1))
if ((first == 1)); then
  rm -f "$logs"/run-*.log
  printf '# scripts/stress-test.sh: the series under way (its key), then each run that passed\nseries %s\n' \
    "$series" >"$record"
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
    echo "run $i passed $(date -u +%Y-%m-%dT%H:%MZ) $((SECONDS - start)) s commit $(git rev-parse --short HEAD 2>/dev/null)" >>"$record"
    continue
  fi
  echo "run $i FAILED $(date -u +%Y-%m-%dT%H:%MZ) exit $status: the series is broken" >>"$record"
  sed -i 's/^series /broken /' "$record"  # a resume starts again
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
((first > 1)) && earlier=" (runs 1 to $((first - 1)) in an earlier call, on the same code: $record)"
echo "all $runs runs passed under stress --cpu $cpu$earlier"
