#!/usr/bin/env bash
# Runs every graph in graphs/ with GStreamer's leaks tracer (GST_TRACERS=leaks) on small test
# inputs, and fails if any GStreamer object is still alive when graphctl exits.
# Usage: scripts/leak-check.sh [path/to/graphctl]   (default: .build/debug/graphctl)
set -euo pipefail
cd "$(dirname "$0")/.."
graphctl=$(realpath "${1:-.build/debug/graphctl}")
graphs=$(pwd)/graphs
work=$(mktemp -d)
xvfb="" srt="" nginx="" rtsp="" whip=""
# A server that dies of the TERM makes `wait` say 143: under `set -e` that became the script's status.
stop() { [[ -n "$1" ]] || return 0; kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
trap 'stop "$xvfb"; stop "$srt"; stop "$nginx"; stop "$rtsp"; stop "$whip"; rm -rf "$work"' EXIT
cd "$work"
# sink.preview needs a display: an Xvfb of our own (on a display number it picks and writes to fd 3),
# so that no window opens on the user's screen; timeout ends it even if this script is killed. env
# unblocks SIGTERM, which a test runner's thread may have blocked for its children: the trap's kill
# would not end them otherwise. Its standard output is not ours: a caller reading ours to its end
# would wait for Xvfb too.
env --default-signal=TERM,INT timeout -k 5 900 Xvfb -displayfd 3 -screen 0 640x480x24 -nolisten tcp -noreset \
  3>display >/dev/null 2>xvfb.log &
xvfb=$!
for _ in $(seq 200); do [[ -s display ]] && break; sleep 0.05; done
[[ -s display ]] || { echo "leak-check: Xvfb did not start:" >&2; cat xvfb.log >&2; exit 1; }
export DISPLAY=":$(head -n 1 display)"
# Inputs made by GStreamer: 1 s of stereo tone in a WAV, and 1 s of 320x240 video with audio in an MP4.
gst-launch-1.0 -q audiotestsrc num-buffers=44 samplesperbuffer=1000 ! audio/x-raw,rate=44100,channels=2 ! wavenc ! filesink location=in.wav
gst-launch-1.0 -q -e videotestsrc num-buffers=30 ! video/x-raw,width=320,height=240,framerate=30/1 ! x264enc ! h264parse ! mp4mux name=m ! filesink location=in.mp4 \
  audiotestsrc num-buffers=44 samplesperbuffer=1000 ! audioconvert ! avenc_aac ! m.
gst-launch-1.0 -q -e videotestsrc num-buffers=30 ! video/x-raw,width=320,height=240,framerate=30/1 ! vp9enc deadline=1 ! webmmux name=w ! filesink location=in.webm \
  audiotestsrc num-buffers=44 samplesperbuffer=1000 ! audioconvert ! audioresample ! opusenc ! w.
# graphs/camera-srt.json sends to an SRT listener: srt-live-transmit (srt-tools) on a port the
# system picks, throwing what it receives away; stopped by its PID when this script ends.
srtport=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
env --default-signal=TERM,INT timeout -k 5 900 srt-live-transmit "srt://127.0.0.1:$srtport?mode=listener" file://con >/dev/null 2>srt.log &
srt=$!
# graphs/camera-rtmp.json pushes to an RTMP server: nginx with libnginx-mod-rtmp, in the
# foreground with a configuration of its own on a free port, throwing the stream away.
rtmpport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > nginx.conf <<CONF
load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
daemon off;
master_process off;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 64; }
rtmp { server { listen 127.0.0.1:$rtmpport; application live { live on; } } }
CONF
env --default-signal=TERM,INT timeout -k 5 900 nginx -c "$work/nginx.conf" -p "$work" >/dev/null 2>nginx.log &
nginx=$!
for _ in $(seq 250); do grep -q "$(printf '0100007F:%04X' "$rtmpport")" /proc/net/tcp && break; sleep 0.02; done
# graphs/rtsp-record.json, rtsp-segments.json and rtsp-hls.json record from an RTSP server: GStreamer's (python3-gi,
# Tests/Fixtures/rtsp-server.py) serving in.mp4 on a TCP port the system picks; stopped by its PID.
rtspport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
env --default-signal=TERM,INT timeout -k 5 900 /usr/bin/python3 "$graphs/../Tests/Fixtures/rtsp-server.py" "$rtspport" "$work/in.mp4" >rtsp.out 2>rtsp.log &
rtsp=$!
for _ in $(seq 200); do grep -q ready rtsp.out 2>/dev/null && break; sleep 0.05; done
grep -q ready rtsp.out || { echo "leak-check: the RTSP server did not start:" >&2; cat rtsp.log >&2; exit 1; }
# graphs/camera-whip.json sends over WebRTC to a WHIP endpoint: GStreamer's webrtcbin from Python
# (Tests/Fixtures/whip-server.py) on a TCP port the system picks; stopped by its PID.
whipport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
env --default-signal=TERM,INT timeout -k 5 900 /usr/bin/python3 "$graphs/../Tests/Fixtures/whip-server.py" --port "$whipport" --output "$work/whip" >whip.out 2>whip.log &
whip=$!
for _ in $(seq 200); do grep -q listening whip.out 2>/dev/null && break; sleep 0.05; done
grep -q listening whip.out || { echo "leak-check: the WHIP endpoint did not start:" >&2; cat whip.log >&2; exit 1; }
short=(--set camera.duration=1 --set camera.live=false --set camera.width=320 --set camera.height=240)
mic=(--set mic.duration=1 --set mic.live=false)
declare -A sets=(
  [frames]="--set frames.duration=1 --set frames.width=320 --set frames.height=240 --set file.path=fr.mov"
  [m4a]="${mic[*]} --set file.path=o.m4a"
  [record]="${short[*]} ${mic[*]} --set file.path=o.mp4"
  [camera-srt]="${short[*]} ${mic[*]} --set out.url=srt://127.0.0.1:$srtport"
  [camera-rtmp]="${short[*]} ${mic[*]} --set out.url=rtmp://127.0.0.1:$rtmpport/live/leakcheck"
  [camera-whip]="${short[*]} ${mic[*]} --set out.url=http://127.0.0.1:$whipport/whip"
  [record-preview]="${short[*]} ${mic[*]} --set file.path=p.mp4"
  [record-fragmented]="${short[*]} ${mic[*]} --set file.path=f.mp4 --set file.fragmentInterval=0.5"
  [record-waveform]="${mic[*]} --set file.path=w.m4a --set wave.json=w.json --set wave.png=w.png"
  [transcode-audio]="--set src.path=in.wav --set file.path=t.m4a"
  [transcode-video]="--set src.path=in.mp4 --set file.path=t.mp4"
  [transcode-hevc]="--set src.path=in.mp4 --set file.path=h.mp4"
  [remux]="--set src.path=in.mp4 --set file.path=r.mp4"
  [package-hls]="--set src.path=in.mp4 --set hls.folder=ph"
  [concat]='--set join.pieces=[{"path":"in.mp4"},{"path":"in.mp4","inpoint":0.5}] --set file.path=c.mp4'
  [remux-webm]="--set src.path=in.webm --set file.path=r.webm"
  [waveform]="--set src.path=in.wav --set wave.json=v.json --set wave.png=v.png"
  [rtsp-record]="--set camera.url=rtsp://127.0.0.1:$rtspport/stream --set file.path=rr.mp4"
  [rtsp-hls]="--set camera.url=rtsp://127.0.0.1:$rtspport/stream --set hls.folder=rtsp-live"
  [rtsp-segments]="--set camera.url=rtsp://127.0.0.1:$rtspport/stream --set camera.reconnect=0 --set files.path=rs/rec-%03d.mp4 --set files.segmentDuration=1"
  [record-hls]="${short[*]} ${mic[*]} --set hls.folder=live"
  [transcode-hls]="--set src.path=in.mp4 --set hls.folder=hls"
  [thumbnails]="--set thumbs.path=in.mp4 --set thumbs.count=3 --set thumbs.folder=th --set thumbs.sprite=th/s.jpg --set thumbs.vtt=th/s.vtt"
  [hls-ladder]="--set src.path=in.mp4 --set hls.folder=ladder --set hd.width=640 --set hd.height=480"
  [normalize]="--set src.path=in.mp4 --set norm.json=n.json --set file.path=n.m4a"
  [trim-silence]="--set src.path=in.wav --set trim.json=ts.json --set file.path=ts.m4a"
  [analyze]="--set src.path=in.mp4 --set loud.json=al.json --set silence.json=as.json --set black.json=ab.json --set scenes.json=ac.json --set scenes.vtt=ac.vtt"
)
failed=0
for graph in "$graphs"/*.json; do
  name=$(basename "$graph" .json)
  if [[ -z "${sets[$name]+x}" ]]; then echo "leak-check: no test inputs for graphs/$name.json; add them here" >&2; failed=1; continue; fi
  # shellcheck disable=SC2086
  if ! GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 GST_DEBUG_NO_COLOR=1 "$graphctl" run "$graph" --quiet ${sets[$name]} 2> log.txt; then
    echo "leak-check: graphs/$name.json failed to run:" >&2; grep -v GST_TRACER log.txt >&2 || true; failed=1; continue
  fi
  # GstDtlsAgent: dtlsdec makes one, with its generated certificate, once per process and keeps it
  # (gstdtlsdec.c's generated_cert_agent, g_once_init), so that WebRTC sessions do not each make a key.
  alive=$(grep 'object-alive, type-name=(string)[A-Za-z]' log.txt | grep -vc 'type-name=(string)GstDtlsAgent,' || true)
  if [[ "$alive" != 0 ]]; then
    echo "leak-check: graphs/$name.json: $alive GStreamer objects alive at exit:" >&2
    grep -o 'object-alive, type-name=(string)[A-Za-z0-9_]*, address=[^,]*, description=(string)[^,]*' log.txt | grep -v GstDtlsAgent | head -20 >&2 || true
    failed=1
  else
    echo "leak-check: graphs/$name.json: no GStreamer object alive at exit"
  fi
done
exit $failed
