#!/bin/sh
# Issue 50's latency figure: camera -> SRT -> ffmpeg, glass to glass, on loopback. graphctl runs
# the test camera's `clock` pattern (the wall clock's milliseconds drawn into each frame as it
# leaves the source) -> encode.h264 -> sink.srt, a caller to 127.0.0.1:PORT, every node at its
# defaults (1280x720 30 fps BGRA; x264 veryfast, auto bit rate 9.3 Mb/s, no B-frames, a key frame
# every 60; SRT latency 120 ms). ffmpeg listens at its defaults and writes grey frames to
# scripts/srt-latency.py, which reads each frame's stamp: latency = arrival - stamp. Prints the
# median, p95 and max over SECONDS (default 30) after WARMUP (default 5), and the frames seen.
#
#   scripts/srt-latency.sh [SECONDS]
#     GRAPHCTL=path/to/graphctl   default: the release build (tools/graphctl/.build/release)
#     SET="h264.preset=ultrafast out.latency=20"   --set overrides of the graph, one a word
#     AUDIO=1                     with capture.audio -> encode.aac -> out.audio, as graphs/camera-srt.json
#     FFMPEG_INPUT="-fflags nobuffer -probesize 32 -analyzeduration 0"   ffmpeg's input options
#     FFMPEG_DECODE="-threads 1"  ffmpeg's decoder options (before -i)
#     FFMPEG_SRT="latency=20000"  options of ffmpeg's SRT URL (its latency is in microseconds)
#     WARMUP=5 CSV=file           warm-up seconds; each frame's arrival, stamp and latency to a file
# Every process is started and stopped by its PID; nothing leaves the loopback interface.
set -eu
seconds=${1:-30}
warmup=${WARMUP:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
graphctl=${GRAPHCTL:-$root/tools/graphctl/.build/release/graphctl}
work=$root/out/srt-latency
mkdir -p "$work"
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
width=1280 height=720 fps=30  # capture.video's defaults, or what SET gives them
for s in ${SET:-}; do
    case $s in camera.width=*) width=${s#*=} ;; camera.height=*) height=${s#*=} ;; camera.fps=*) fps=${s#*=} ;; esac
done

graph=$work/graph.json
if [ "${AUDIO:-0}" = 1 ]; then
    audio_nodes='"mic": { "type": "capture.audio" }, "aac": { "type": "encode.aac" },'
    audio_edges=', "mic.out -> aac.in", "aac.out -> out.audio"'
else
    audio_nodes= audio_edges=
fi
cat > "$graph" <<EOF
{ "version": 1, "name": "srt-latency",
  "nodes": {
    "camera": { "type": "capture.video", "params": { "pattern": "clock" } },
    "h264": { "type": "encode.h264" },
    $audio_nodes
    "out": { "type": "sink.srt", "params": { "url": "srt://127.0.0.1:$port" } } },
  "edges": [ "camera.out -> h264.in", "h264.out -> out.video"$audio_edges ] }
EOF
sets=
for s in ${SET:-}; do sets="$sets --set $s"; done

fifo=$work/frames
rm -f "$fifo"
mkfifo "$fifo"
receiver= reader= sender=
stop() {
    for pid in $sender $receiver $reader; do kill "$pid" 2>/dev/null || true; done
    rm -f "$fifo"
}
trap stop EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "graph: $graph${sets:+ with$sets}; ffmpeg: ${FFMPEG_DECODE:-} ${FFMPEG_INPUT:-} -i srt://127.0.0.1:$port?mode=listener${FFMPEG_SRT:+&$FFMPEG_SRT}"
# shellcheck disable=SC2086  # the options are words
ffmpeg -nostdin -v error ${FFMPEG_DECODE:-} ${FFMPEG_INPUT:-} -i "srt://127.0.0.1:$port?mode=listener${FFMPEG_SRT:+&$FFMPEG_SRT}" \
    -f rawvideo -pix_fmt gray - > "$fifo" 2> "$work/ffmpeg.log" &
receiver=$!
python3 "$root/scripts/srt-latency.py" "$width" "$height" --fps "$fps" --warmup "$warmup" --seconds "$seconds" \
    ${CSV:+--csv "$CSV"} < "$fifo" > "$work/result.txt" 2>&1 &
reader=$!
# The caller fails after SRT's connect timeout when nobody listens: wait for ffmpeg's socket.
i=0
until ss -Hlun "sport = :$port" | grep -q .; do
    i=$((i + 1)); [ $i -lt 100 ] || { echo "ffmpeg is not listening:"; cat "$work/ffmpeg.log"; exit 1; }; sleep 0.05
done
# shellcheck disable=SC2086
"$graphctl" run "$graph" $sets --quiet > "$work/graphctl.log" 2>&1 &
sender=$!
# The reader stops after its frames; ffmpeg, writing to it, then ends, and graphctl's caller
# with it (its log says its peer went away).
wait $reader || { cat "$work/result.txt"; echo "graphctl:"; cat "$work/graphctl.log"; echo "ffmpeg:"; cat "$work/ffmpeg.log"; exit 1; }
reader=
kill -INT $sender 2>/dev/null || true
wait $sender || true
sender=
kill $receiver 2>/dev/null || true
wait $receiver || true
receiver=
cat "$work/result.txt"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
