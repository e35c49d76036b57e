#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets (Fuzz/Package.swift) with the address sanitizer and
# its leak checker into Fuzz/.build-fuzz (the ordinary build is untouched), runs each for
# FUZZ_SECONDS (default 600) and reports. Fails when a target found anything.
#
#   FUZZ_SECONDS=60 FUZZ_TARGETS="fuzz-graph" make fuzz
#
# Per target: the corpus it grows is Fuzz/.build-fuzz/corpus/TARGET (kept between runs), seeded
# from Fuzz/Corpus/ (and graphs/ for fuzz-graph); findings (crash-*, leak-*, timeout-*, oom-*:
# the input, to replay with `Fuzz/.build-fuzz/debug/TARGET FILE`) go to
# Fuzz/.build-fuzz/findings/TARGET/ (a run reports only its own), and libFuzzer's output to
# Fuzz/.build-fuzz/TARGET.log.
# fuzz-containers, fuzz-hls, fuzz-join, fuzz-probe and fuzz-edits (GraphKit's container library alone, no
# GStreamer) are built in release and without the address sanitizer, so that they read thousands
# of inputs a second: it is Swift,
# whose overflow and bounds checks stay on in release and trap (each trap a finding), and its
# two pointer loops run under the sanitizers in `make test-sanitize`.
# A hang is a finding twice over: fuzz-decode cancels a run that has not ended within
# FUZZ_RUN_SECONDS (default 10) and stops with the input, and libFuzzer's -timeout catches any
# other input that takes too long.
set -uo pipefail
cd "$(dirname "$0")"
SWIFT=${SWIFT:-swift}
seconds=${FUZZ_SECONDS:-600}
read -r -a targets <<<"${FUZZ_TARGETS:-fuzz-graph fuzz-decode fuzz-containers fuzz-hls fuzz-join fuzz-probe fuzz-edits}"
# The targets of the container library alone (Fuzz/Sources/ContainersUnderFuzz).
is_containers() { [[ $1 == fuzz-containers || $1 == fuzz-hls || $1 == fuzz-join || $1 == fuzz-probe || $1 == fuzz-edits ]]; }
scratch=.build-fuzz

# The container library's targets need only it (built below); the others, GraphKit.
graphkit_targets=() container_targets=()
for t in "${targets[@]}"; do if is_containers "$t"; then container_targets+=("$t"); else graphkit_targets+=("$t"); fi; done
if ((${#graphkit_targets[@]} > 0)); then
  echo "== building ${graphkit_targets[*]} in Fuzz/$scratch (libFuzzer, address sanitizer)"
  # The package depends on GraphKit by path: SwiftPM keeps its plan when a file is added there,
  # and then misses it (see the Makefile's replan).
  rm -f "$scratch/debug.yaml"
  # swiftc keeps only the last -sanitize flag it is given, and SwiftPM passes one per --sanitize:
  # the combined flag, last, instruments the Swift code for coverage and for the address
  # sanitizer both (the --sanitize flags do it for the C code and the link).
  $SWIFT build --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address --build-path "$scratch" 2>&1 \
    | grep -v "Cannot export local symbol '__asan"
  ((PIPESTATUS[0] == 0)) || { echo "fuzz: the build failed" >&2; exit 1; }
  # A target whose Swift code is not instrumented fuzzes blind: check that GraphKit's is.
  object=$scratch/debug/GraphKitCore.build/GraphLoader.swift.o
  # (grep -c, not -q: under pipefail, the early exit of -q would fail the pipeline with SIGPIPE.)
  if (($(readelf -SW "$object" | grep -c __sancov_cntrs) == 0 || $(nm "$object" | grep -c __asan_report) == 0)); then
    echo "fuzz: GraphKit's Swift code lacks coverage counters or address checks ($object)" >&2
    exit 1
  fi
fi
for t in "${container_targets[@]}"; do
  echo "== building $t in Fuzz/$scratch/release (libFuzzer)"
  rm -f "$scratch/release.yaml"
  $SWIFT build -c release --product "$t" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer --build-path "$scratch" \
    || { echo "fuzz: the build of $t failed" >&2; exit 1; }
  object=$scratch/release/ContainersUnderFuzz.build/BoxHeader.swift.o
  if (($(readelf -SW "$object" | grep -c __sancov_cntrs) == 0)); then
    echo "fuzz: the container library lacks coverage counters ($object)" >&2
    exit 1
  fi
done

# Swift's own crash backtracer reads the stack of a failed check in ways the address sanitizer
# reports as a second error: libFuzzer's report of the crash is the one wanted.
export SWIFT_BACKTRACE=enable=no
# Leaks are checked after each input that allocated more than it freed, and at exit.
asan="detect_leaks=1:malloc_context_size=40${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# The project's suppressions (make test-sanitize), and the fuzz targets' own (Fuzz/lsan.supp).
cat ../scripts/sanitizers/lsan.supp lsan.supp >"$scratch/lsan.supp"
export LSAN_OPTIONS="suppressions=$PWD/$scratch/lsan.supp:print_suppressions=0"

failed=()
summary=()
for t in "${targets[@]}"; do
  case "$t" in
    # The loader calls nothing below GraphKit: the fast unwinder sees every frame.
    fuzz-graph) seeds=(Corpus/graph ../graphs); options=(-max_len=8192 -timeout=10 -dict=graph.dict); unwind=1 ;;
    # Full unwinding, so that the suppressions see the frames below GLib's g_malloc (GLib and
    # its neighbours have no frame pointers); slower, and needed.
    fuzz-decode) seeds=(Corpus/media); options=(-max_len=16384 -timeout=60); unwind=0 ;;
    fuzz-containers|fuzz-hls|fuzz-join|fuzz-probe) seeds=(Corpus/containers Corpus/media); options=(-max_len=16384 -timeout=10); unwind=1 ;;
    # Its inputs end with the edit list's 21 bytes (FuzzEdits.swift): the seeds are the
    # corpus' MP4 and QuickTime files with such a tail (three edits on every track, at the
    # media's start; then 63: 1,100 of them), made here.
    fuzz-edits)
      seeds=("$scratch/seeds-edits")
      mkdir -p "${seeds[0]}"
      for f in Corpus/containers/*.{mp4,m4a,mov} Corpus/media/*.{mp4,m4a}; do
        [[ -f $f ]] || continue
        for tail in '\x00\x00\x00\x00\x00\x00\x03\xe8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x0f' \
                    '\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\xff'; do
          { cat "$f"; printf "$tail"; } >"${seeds[0]}/$(basename "$f").$(printf "$tail" | tail -c 1 | od -An -tx1 | tr -d ' ')"
        done
      done
      options=(-max_len=16384 -timeout=10); unwind=1 ;;
    *) echo "fuzz: unknown target $t (fuzz-graph, fuzz-decode, fuzz-containers, fuzz-hls, fuzz-join, fuzz-probe, fuzz-edits)" >&2; exit 64 ;;
  esac
  binary=$scratch/debug/$t
  is_containers "$t" && binary=$scratch/release/$t
  corpus=$scratch/corpus/$t findings=$scratch/findings/$t log=$scratch/$t.log
  mkdir -p "$corpus" "$findings"
  stamp=$scratch/$t.started
  touch "$stamp"
  echo "== $t: ${seconds} s (log: Fuzz/$log)"
  ASAN_OPTIONS="$asan:fast_unwind_on_malloc=$unwind" "$binary" "$corpus" "${seeds[@]}" "${options[@]}" \
    -max_total_time="$seconds" -rss_limit_mb=4096 -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1
  status=$?
  runs=$(grep -Eo '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$')
  speed=$(grep -Eo '^stat::average_exec_per_sec: *[0-9]+' "$log" | grep -Eo '[0-9]+$')
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1)
  found=$(find "$findings" -type f -newer "$stamp" | wc -l)   # this run's; earlier ones stay
  line="$t: ${runs:-?} runs in ${seconds} s (${speed:-?}/s), ${cov:-cov: ?}, corpus $(ls "$corpus" | wc -l) files, exit $status, $found finding(s) in Fuzz/$findings"
  summary+=("$line")
  if ((status != 0 || found > 0)); then
    failed+=("$t")
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*Fatal error|artifact_prefix)' "$log" | head -20
  fi
done

echo "== fuzz summary"
printf '%s\n' "${summary[@]}"
((${#failed[@]} == 0)) || { echo "fuzz: findings in ${failed[*]}" >&2; exit 1; }
