#!/bin/sh
# Issue 50's memory figure: graphs/rtsp-record.json recording the loopback RTSP server
# (Tests/Fixtures/rtsp-server.py, GStreamer's RTSP server library) for MINUTES minutes (default 60),
# the graphctl process's RSS read every minute from /proc. Prints each sample, then RSS at the
# end against RSS at 10 minutes (the goal: at most 1.1). The camera is a file of 640x360 25 fps
# H.264 (a key frame every 2 s, 1 Mb/s) + AAC, made here and served at its own pace.
#
#   scripts/rtsp-soak.sh [MINUTES]     GRAPHCTL=path/to/graphctl (default: the release build)
set -eu
minutes=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
graphctl=${GRAPHCTL:-$root/tools/graphctl/.build/release/graphctl}
work=$root/out/rtsp-soak
mkdir -p "$work"
camera=$work/camera-$((minutes + 5))min.mp4
if [ ! -f "$camera" ]; then
    ffmpeg -v error -y -f lavfi -i "testsrc2=size=640x360:rate=25:duration=$(( (minutes + 5) * 60 ))" \
        -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$(( (minutes + 5) * 60 ))" \
        -c:v libx264 -preset ultrafast -b:v 1M -g 50 -pix_fmt yuv420p -c:a aac -b:a 64k "$camera"
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
: > "$work/server.log"
/usr/bin/python3 "$root/Tests/Fixtures/rtsp-server.py" "$port" "$camera" > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; [ -n "${run:-}" ] && kill -INT $run 2>/dev/null || true' EXIT
i=0
until grep -q ready "$work/server.log"; do i=$((i + 1)); [ $i -lt 100 ] || { echo "server did not start"; exit 1; }; sleep 0.1; done
rm -f "$work/record.mp4"
"$graphctl" run "$root/graphs/rtsp-record.json" --set "camera.url=rtsp://127.0.0.1:$port/stream" \
    --set "file.path=$work/record.mp4" --quiet > "$work/run.log" 2>&1 &
run=$!
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$run/status"; }
at10=
for m in $(seq 1 "$minutes"); do
    sleep 60
    kill -0 $run 2>/dev/null || { echo "graphctl ended early:"; cat "$work/run.log"; exit 1; }
    now=$(rss)
    echo "minute $m: RSS $((now / 1024)) MB ($now kB)"
    [ "$m" -eq 10 ] && at10=$now
done
end=$(rss)
kill -INT $run
wait $run || true
run=
echo "RSS at $minutes min / at 10 min: $end / ${at10:-?} kB = $(awk "BEGIN { if (\"${at10:-0}\" > 0) printf \"%.3f\", $end / ${at10:-1}; else print \"?\" }")"
ffprobe -v error -count_packets -show_entries stream=codec_name,nb_read_packets -of compact "$work/record.mp4"
