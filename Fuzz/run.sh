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
# fuzz-containers, fuzz-hls, fuzz-join, fuzz-probe, fuzz-edits and fuzz-mpegts (GraphKit's container library alone, no
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
read -r -a targets <<<"${FUZZ_TARGETS:-fuzz-graph fuzz-decode fuzz-containers fuzz-hls fuzz-join fuzz-probe fuzz-edits fuzz-mpegts fuzz-rtsp}"
# The targets of the container library alone (Fuzz/Sources/ContainersUnderFuzz).
is_containers() { [[ $1 == fuzz-containers || $1 == fuzz-hls || $1 == fuzz-join || $1 == fuzz-probe || $1 == fuzz-edits || $1 == fuzz-mpegts ]]; }
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
    # Its inputs spell a segment's samples (FuzzMPEGTS.swift): the seeds, made here, are an H.264
    # track with a real avcC and an AAC track, eight samples of each, at 25 and ~47 a second.
    fuzz-mpegts)
      seeds=("$scratch/seeds-mpegts")
      mkdir -p "${seeds[0]}"
      python3 - "${seeds[0]}/av" <<'PY'
import struct, sys
avcC = bytes([1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE])
out = bytes([1 | 2 | (16 << 2), len(avcC)]) + avcC + bytes([2, 0x11, 0x90]) + struct.pack(">I", 48000)
bodies = b""
for k in range(16):
    video = k % 2 == 0
    body = struct.pack(">I", 5) + bytes([0x65 if k == 0 else 0x41, 1, 2, 3, 4]) if video else bytes(6)
    time = (k // 2) * (3600 if video else 1024)
    out += bytes([(0 if video else 1) | (2 if k == 0 or not video else 0)]) + struct.pack(">HQi", len(body), time, 7200 if video else 0)
    bodies += body
open(sys.argv[1], "wb").write(out + bodies)
PY
      options=(-max_len=4096 -timeout=10); unwind=1 ;;
    # Its inputs are a server's replies and packets, split at ||| (FuzzRTSP.swift): the seed,
    # made here, is a camera's whole exchange (OPTIONS, DESCRIBE with an H.264 SDP, SETUP over
    # TCP, PLAY) and ten frames of 64x64 H.264 from ffmpeg, a NAL unit a packet. Full unwinding,
    # as fuzz-decode's.
    fuzz-rtsp)
      seeds=("$scratch/seeds-rtsp")
      mkdir -p "${seeds[0]}"
      ffmpeg -v error -y -f lavfi -i testsrc=size=64x64:rate=25:duration=0.4 -c:v libx264 -bf 0 -g 5 -f h264 "$scratch/seed-rtsp.h264"
      python3 - "$scratch/seed-rtsp.h264" "${seeds[0]}/camera" <<'PY'
import re, struct, sys
stream = open(sys.argv[1], "rb").read()
units = [u for u in re.split(b"\x00\x00\x00\x01|\x00\x00\x01", stream) if u]
sdp = ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=fuzz\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
       "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1\r\na=control:track0\r\n")
replies = [
    "RTSP/1.0 200 OK\r\nCSeq: CSEQ\r\nPublic: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN\r\n\r\n",
    f"RTSP/1.0 200 OK\r\nCSeq: CSEQ\r\nContent-Type: application/sdp\r\nContent-Length: {len(sdp)}\r\n\r\n{sdp}",
    "RTSP/1.0 200 OK\r\nCSeq: CSEQ\r\nSession: 12345678\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n",
    "RTSP/1.0 200 OK\r\nCSeq: CSEQ\r\nSession: 12345678\r\nRange: npt=0-\r\n\r\n",
]
packets, seq, frame = b"", 0, -1
for u in units:
    kind = u[0] & 0x1F
    if kind in (1, 5):
        frame += 1
    slice_ = kind in (1, 5)
    rtp = bytes([0x80, 0x60 | (0x80 if slice_ else 0)]) + struct.pack(">HII", seq, max(frame, 0) * 3600, 0x12345678) + u
    packets += b"$\x00" + struct.pack(">H", len(rtp)) + rtp
    seq += 1
open(sys.argv[2], "wb").write("|||".join(replies).encode() + b"|||" + packets)
PY
      options=(-max_len=16384 -timeout=30); unwind=0 ;;
    *) echo "fuzz: unknown target $t (fuzz-graph, fuzz-decode, fuzz-containers, fuzz-hls, fuzz-join, fuzz-probe, fuzz-edits, fuzz-mpegts, fuzz-rtsp)" >&2; exit 64 ;;
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
