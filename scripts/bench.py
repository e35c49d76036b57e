#!/usr/bin/env python3
"""GraphKit benchmarks: graphctl against gst-launch-1.0 and ffmpeg doing the same job, in the
same run, alternated, on generated media. Release build with the Swift runtime linked
statically (as the CLI ships). Prints a Markdown table per job; `make bench` runs it.

Usage: scripts/bench.py [--runs N] [--jobs aac10,aac60,validate,av,transcode,batch,hls,ladder,livehls10,livehls60,trim,export720,hdrexport,composition,thumbs,metadata,photo,join,graphcopy,remuxlong,hevc,opus,flac,loudness10,loudness60,scenes,effects,cifilter]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "out", "bench")
GRAPHCTL = os.environ.get("GRAPHCTL") or os.path.join(ROOT, "tools", "graphctl", ".build", "release", "graphctl")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def measure(cmd):
    """Wall seconds (to the microsecond, around the whole process) and peak RSS (MB, by
    /usr/bin/time, whose own wall figure has only 10 ms steps) of one command."""
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit(f"benchmark command failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    rss_kb = r.stderr.strip().splitlines()[-1]
    return wall, int(rss_kb) / 1024.0


def cpu_seconds(cmd):
    """User plus system CPU seconds of one command (its children included), by /usr/bin/time."""
    r = subprocess.run(["/usr/bin/time", "-f", "%U %S"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"benchmark command failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    user, system = r.stderr.strip().splitlines()[-1].split()
    return float(user) + float(system)


def wav(path, minutes):
    if os.path.exists(path):
        return
    buffers = minutes * 60 * 100  # 441-frame buffers at 44.1 kHz
    sh(["gst-launch-1.0", "-q", "audiotestsrc", f"num-buffers={buffers}", "samplesperbuffer=441", "wave=sine",
        "!", "audio/x-raw,format=S16LE,rate=44100,channels=2", "!", "wavenc", "!", "filesink", f"location={path}"])


def fresh(cmd, path):
    """`cmd` run after removing `path`: each round writes a new file (an export never replaces one)."""
    return ["sh", "-c", f'rm -f "{path}" && exec "$0" "$@"'] + cmd


def alternate(contenders, runs, before=None):
    """Runs each contender once per round, `runs` rounds; returns per contender the median wall
    and RSS, the number of runs, and every round's wall (for ratios taken round by round).
    `before(name)`, when given, runs untimed before each of a contender's runs."""
    samples = {name: [] for name, _ in contenders}
    for _ in range(runs):
        for name, cmd in contenders:
            if before:
                before(name)
            samples[name].append(measure(cmd))
    return {name: (statistics.median(w for w, _ in s), statistics.median(m for _, m in s), len(s), [w for w, _ in s])
            for name, s in samples.items()}


def table(title, command_lines, results, anchor):
    print(f"\n### {title}\n")
    for name, line in command_lines:
        print(f"- {name}: `{line}`")
    # The last column divides each round's wall by the anchor's in the same round and takes the
    # median: steadier than the ratio of medians when the machine's speed drifts during a job.
    print("\n| tool | wall (s, median) | peak RSS (MB, median) | wall / " + anchor + " | RSS − " + anchor +
          " (MB) | runs | wall / " + anchor + ", per round (median) |")
    print("|---|---|---|---|---|---|---|")
    aw, am, _, arounds = results[anchor]
    for name, (w, m, n, rounds) in results.items():
        paired = statistics.median(x / y for x, y in zip(rounds, arounds))
        print(f"| {name} | {w:.3f} | {m:.1f} | {w / aw:.3f} | {m - am:+.1f} | {n} | {paired:.3f} |")
    sys.stdout.flush()


def aac_job(minutes, runs, with_ffmpeg):
    src = os.path.join(BENCH, f"{minutes}min.wav")
    wav(src, minutes)
    out = lambda name: os.path.join(BENCH, f"{name}-{minutes}.m4a")
    ours = [GRAPHCTL, "run", os.path.join(ROOT, "graphs", "transcode-audio.json"), "--quiet",
            "--set", f"src.path={src}", "--set", f"file.path={out('graphctl')}", "--set", "file.faststart=false"]
    # aac-ms=0 as GraphKit sets it: gst-libav 1.24+ refuses "false" (an enum there), 1.22 takes both.
    gst = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "wavparse", "!", "audioconvert", "!",
           "avenc_aac", "aac-ms=0", "bitrate=96000", "!", "mp4mux", "!", "filesink", f"location={out('gst')}"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-c:a", "aac", "-b:a", "96k", out("ffmpeg")]
    contenders = [("graphctl", ours), ("gst-launch-1.0", gst)] + ([("ffmpeg", ff)] if with_ffmpeg else [])
    results = alternate(contenders, runs)
    table(f"{minutes}-minute 44.1 kHz stereo WAV → AAC 96 kb/s M4A", [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders],
          results, "gst-launch-1.0")
    return results


def mp3(wav_path, path):
    if not os.path.exists(path):
        sh(["gst-launch-1.0", "-q", "filesrc", f"location={wav_path}", "!", "wavparse", "!", "audioconvert", "!",
            "lamemp3enc", "target=bitrate", "bitrate=192", "cbr=true", "!", "filesink", f"location={path}"])


def waveform_job(minutes, runs):
    """graphs/waveform.json as it ships (JSON + a 1,000-px PNG, 256 samples per pixel) against the
    decode-only floor, with its variants: an SVG instead of the PNG, 20,000-px-wide pictures (a
    zoomable waveform's), and the JSON alone. The WAV's tone is as loud throughout, so its picture
    is a plain band; the same on a WAV whose loudness changes all along (ten of audiotestsrc's
    signals at different volumes, in turn) gives a picture of every column's own height. On the
    MP3, the graph as shipped and the JSON alone."""
    src_wav = os.path.join(BENCH, f"{minutes}min.wav")
    wav(src_wav, minutes)
    src_mp3 = os.path.join(BENCH, f"{minutes}min.mp3")
    mp3(src_wav, src_mp3)
    src_varied = os.path.join(BENCH, f"{minutes}min-varied.wav")
    if not os.path.exists(src_varied):
        caps = "audio/x-raw,format=S16LE,rate=44100,channels=2,layout=interleaved"
        # Signal, volume, and per cent of the length.
        signals = [("sine freq=220", 0.2, 7), ("pink-noise", 0.7, 13), ("silence", 0, 5), ("ticks", 1.0, 15), ("red-noise", 0.4, 9),
                   ("square freq=50", 0.05, 7), ("gaussian-noise", 0.3, 11), ("sine freq=3000", 0.9, 8), ("white-noise", 0.15, 13),
                   ("saw freq=5", 0.6, 12)]
        parts = []
        for wave, volume, share in signals:
            buffers = minutes * 60 * 441 * share // 1000  # of 1,000 frames
            parts += ["audiotestsrc", f"wave={wave.split()[0]}", *wave.split()[1:], f"volume={volume}", f"num-buffers={buffers}",
                      "samplesperbuffer=1000", "!", caps, "!", "c."]
        sh(["gst-launch-1.0", "-q", "concat", "name=c", "!", caps, "!", "wavenc", "!", "filesink", f"location={src_varied}"] + parts)
    out = lambda name: os.path.join(BENCH, f"waveform-{name}")
    results = {}
    for label, src in (("WAV", src_wav), ("WAV of varied loudness", src_varied), ("MP3 192 kb/s", src_mp3)):
        def ours(*sets):
            cmd = [GRAPHCTL, "run", os.path.join(ROOT, "graphs", "waveform.json"), "--quiet", "--set", f"src.path={src}",
                   "--set", f"wave.json={out('data.json')}"]
            for s in sets:
                cmd += ["--set", s]
            return cmd
        floor = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "decodebin", "!", "audioconvert", "!", "fakesink"]
        contenders = [("graphctl, JSON + PNG (as shipped)", ours(f"wave.png={out('1000.png')}"))]
        if label.startswith("WAV"):
            contenders += [("graphctl, JSON + SVG", ours("wave.png=", f"wave.svg={out('1000.svg')}")),
                           ("graphctl, JSON + PNG 20,000 px", ours(f"wave.png={out('20000.png')}", "wave.imageWidth=20000")),
                           ("graphctl, JSON + SVG 20,000 px", ours("wave.png=", f"wave.svg={out('20000.svg')}", "wave.imageWidth=20000"))]
        contenders += [("graphctl, JSON only", ours("wave.png=")), ("decode floor", floor)]
        if label.startswith("MP3"):
            # decodebin breaks the tie of rank between libav's MP3 decoder and mpg123's by name
            # and takes libav's; graphctl's decode prefers mpg123's. The floor with that decoder
            # is the like-for-like measure of graphctl's own cost.
            contenders.append(("decode floor, mpg123", ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "mpegaudioparse", "!",
                                                        "mpg123audiodec", "!", "audioconvert", "!", "fakesink"]))
        r = alternate(contenders, runs)
        table(f"{minutes}-minute 44.1 kHz stereo {label} → waveform JSON and pictures (graphs/waveform.json, 256 samples per pixel)",
              [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, "decode floor")
        # Issue 16's goals, for each picture of the WAV: at most 1.6 times the floor's wall, at
        # most 20 MB more than its peak RSS. Every round's ratio is listed, so that noise shows.
        _, floor_rss, _, floor_rounds = r["decode floor"]
        for name, (_, rss, _, rounds) in r.items():
            if label.startswith("WAV") and ("PNG" in name or "SVG" in name):
                ratios = [w / f for w, f in zip(rounds, floor_rounds)]
                met = statistics.median(ratios) <= 1.6 and rss - floor_rss <= 20
                print(f"- {name}: per round {', '.join(f'{x:.2f}' for x in ratios)}; RSS {rss - floor_rss:+.1f} MB "
                      f"(goals ≤ 1.6×, ≤ +20 MB: {'met' if met else 'not met'})")
        sys.stdout.flush()
        results[label] = r
    return results


def effects_job():
    print("\n### Effect throughput, 1920×1080 BGRA, offline (frames/s, median of 5 × 300 frames)\n")
    print("- graphctl effects: `.build/release/graphkit-bench` (each effect's process() on a uniquely held frame, in place, and on a frame also held elsewhere, written into another frame; and a memcpy of the same frame, timed the same way in the same rounds; × memcpy is the median of the rounds' ratios)\n")
    print("| effect | in place, frames/s | × memcpy | shared frame, frames/s | × memcpy | memcpy in its rounds, frames/s |\n|---|---|---|---|---|---|")
    sys.stdout.flush()
    sh([os.path.join(ROOT, ".build", "release", "graphkit-bench")])
    n = 300
    print("\nGStreamer's own elements on the same frames in gst-launch-1.0 (frames/s, median of 5; the source's cost included, measured alone as `identity`):\n")
    print("| pipeline | frames/s |\n|---|---|")
    src = ["videotestsrc", f"num-buffers={n}", "pattern=black", "!", "video/x-raw,format=BGRA,width=1920,height=1080"]
    for label, element in (("identity (source alone)", ["identity"]), ("videobalance saturation=0", ["videobalance", "saturation=0"]),
                           ("videoflip method=horizontal-flip", ["videoflip", "method=horizontal-flip"])):
        walls = [measure(["gst-launch-1.0", "-q"] + src + ["!"] + element + ["!", "fakesink"])[0] for _ in range(5)]
        print(f"| `{label}` | {n / statistics.median(walls):.0f} |")
    # ffmpeg's colorchannelmixer is the counterpart of effect.colorMatrix (a 4×4 matrix on RGB);
    # its frames come from a raw file of 10 frames read 30 times, the source's cost measured alone.
    raw = os.path.join(BENCH, "frames-1080p-bgra.raw")
    if not os.path.exists(raw):
        sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30", "-frames:v", "10",
            "-pix_fmt", "bgra", "-f", "rawvideo", raw])
    sepia = "colorchannelmixer=.393:.769:.189:0:.349:.686:.168:0:.272:.534:.131:0"
    print("\nffmpeg's own filters on the same size and format, 300 frames (frames/s, median of 5; the source's cost included, measured alone as `null`), "
          f"each as `ffmpeg -loglevel error -filter_threads N -stream_loop 29 -f rawvideo -pix_fmt bgra -s 1920x1080 -i {os.path.relpath(raw, ROOT)} -vf FILTER -f null -`:\n")
    print("| filter | frames/s |\n|---|---|")
    for label, vf, threads in (("null (source alone)", "null", "1"), (f"{sepia}, -filter_threads 1", sepia, "1"),
                               (f"{sepia}, -filter_threads 2", sepia, "2"), ("hflip, -filter_threads 1", "hflip", "1")):
        cmd = ["ffmpeg", "-loglevel", "error", "-filter_threads", threads, "-stream_loop", "29", "-f", "rawvideo", "-pix_fmt", "bgra",
               "-s", "1920x1080", "-i", raw, "-vf", vf, "-f", "null", "-"]
        walls = [measure(cmd)[0] for _ in range(5)]
        print(f"| `{label}` | {n / statistics.median(walls):.0f} |")
    sys.stdout.flush()


def cifilter_job():
    """Issue 52: CIFilter.colorMatrix() rendered by a CIContext between two 1080p BGRA pixel
    buffers, against effect.colorMatrix's process() doing the same into another frame, five
    rounds in one process (graphkit-bench cifilter)."""
    print("\n### CoreImage's colour matrix against the engine's, 1920×1080 BGRA (`.build/release/graphkit-bench cifilter 300`)\n")
    sys.stdout.flush()
    sh([os.path.join(ROOT, ".build", "release", "graphkit-bench"), "cifilter", "300"])


def av_job(runs):
    """graphctl and gst-launch-1.0 draw the pattern in I420, as ffmpeg's lavfi source draws
    yuv420p: nothing is converted. The BGRA rows draw packed RGB and convert it (graphctl with
    gkrgbtoi420, ffmpeg with swscale). All encode with the same x264 settings (veryfast, average
    9.3 Mb/s, keyframes every 60, no B-frames, high profile) and AAC 96 kb/s."""
    out = os.path.join(BENCH, "av")
    ours = [GRAPHCTL, "run", os.path.join(ROOT, "scripts", "bench-av.json"), "--quiet", "--set", f"file.path={out}-graphctl.mp4"]
    gst = ["gst-launch-1.0", "-q", "-e", "mp4mux", "name=m", "!", "filesink", f"location={out}-gst.mp4",
           "videotestsrc", "num-buffers=300", "pattern=smpte", "horizontal-speed=4", "!",
           "video/x-raw,format=I420,width=1280,height=720,framerate=30/1", "!", "videoconvert", "!",
           "x264enc", "bitrate=9308", "key-int-max=60", "speed-preset=veryfast", "bframes=0", "vbv-buf-capacity=0", "!",
           "video/x-h264,profile=high", "!", "m.",
           "audiotestsrc", "num-buffers=431", "samplesperbuffer=1024", "!", "audio/x-raw,format=S16LE,rate=44100,channels=1", "!",
           "audioconvert", "!", "avenc_aac", "aac-ms=0", "bitrate=96000", "!", "m."]
    def ff(source, name):
        return ["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", source,
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=10", "-c:v", "libx264", "-preset", "veryfast",
                "-b:v", "9308k", "-g", "60", "-bf", "0", "-profile:v", "high", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", f"{out}-{name}.mp4"]
    # GStreamer's SMPTE bars carry a patch of fresh random noise in every frame, which x264 cannot
    # predict; ffmpeg's testsrc2 has none. The last row gives ffmpeg the very pictures graphctl
    # draws (videotestsrc's, drawn once into a file it reads, reading included).
    smpte = os.path.join(BENCH, "smpte-720p-10s.y4m")
    if not os.path.exists(smpte):
        sh(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=300", "pattern=smpte", "horizontal-speed=4", "!",
            "video/x-raw,format=I420,width=1280,height=720,framerate=30/1", "!", "y4menc", "!", "filesink", f"location={smpte}"])
    ff_smpte = ff("testsrc2", "ffmpeg-smpte")
    ff_smpte[ff_smpte.index("lavfi"):ff_smpte.index("lavfi") + 3] = ["yuv4mpegpipe", "-i", smpte]
    contenders = [("graphctl", ours), ("gst-launch-1.0", gst), ("ffmpeg", ff("testsrc2=size=1280x720:rate=30:duration=10", "ffmpeg")),
                  ("graphctl, BGRA frames", ours[:-2] + ["--set", "camera.pixelFormat=bgra", "--set", f"file.path={out}-graphctl-bgra.mp4"]),
                  ("ffmpeg, BGRA frames", ff("testsrc2=size=1280x720:rate=30:duration=10,format=bgra", "ffmpeg-bgra")),
                  ("ffmpeg, graphctl's SMPTE frames", ff_smpte)]
    r = alternate(contenders, runs)
    table("Offline A/V encode: 1280×720 30 fps 10 s test pattern + 44.1 kHz tone → H.264 (veryfast, 9.3 Mb/s) + AAC MP4",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, "ffmpeg")
    # The patterns differ (GStreamer's scrolling SMPTE bars, ffmpeg's testsrc2) and x264 spends
    # more on the bars; the same job on the very same frames, drawn once into a file both read:
    frames = os.path.join(BENCH, "testsrc2-720p-10s.y4m")
    if not os.path.exists(frames):
        sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=10", "-pix_fmt", "yuv420p", frames])
    same = [("graphctl", [GRAPHCTL, "run", os.path.join(ROOT, "scripts", "bench-av-frames.json"), "--quiet",
                          "--set", f"src.path={frames}", "--set", f"file.path={out}-frames-graphctl.mp4"]),
            ("ffmpeg", ["ffmpeg", "-y", "-loglevel", "error", "-i", frames, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=10",
                        "-c:v", "libx264", "-preset", "veryfast", "-b:v", "9308k", "-g", "60", "-bf", "0", "-profile:v", "high",
                        "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", f"{out}-frames-ffmpeg.mp4"])]
    r = alternate(same, runs)
    table("Offline A/V encode, the same frames for both: 1280×720 30 fps 10 s I420 .y4m + 44.1 kHz tone → H.264 (veryfast, 9.3 Mb/s) + AAC MP4",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in same], r, "ffmpeg")


def transcode_source():
    """20 s of 1920×1080 30 fps H.264 (a keyframe every 2 s) + AAC, made once: the transcode
    job's input, which the HEVC job shares."""
    src = os.path.join(BENCH, "in-1080p-20s.mp4")
    if not os.path.exists(src):
        sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30:duration=20",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=20", "-c:v", "libx264", "-preset", "veryfast",
            "-b:v", "8M", "-g", "60", "-c:a", "aac", "-b:a", "128k", src])
    return src


def transcode_job(runs):
    """graphs/transcode-video.json on a 1080p 30 fps 20 s H.264 + AAC file, against ffmpeg doing
    the same (-vf hflip, libx264 veryfast at the graph's automatic bit rate, keyframes every 60,
    no B-frames, high profile, AAC 96 kb/s). The index goes after the media for both, as ffmpeg
    writes it by default (the graph's default is before: faststart)."""
    src = transcode_source()
    out = os.path.join(BENCH, "transcode")
    kbps = round(1920 * 1080 * 10.1 / 1000)  # encode.h264's bitrate "auto" at 1080p
    ours = [GRAPHCTL, "run", os.path.join(ROOT, "graphs", "transcode-video.json"), "--quiet",
            "--set", f"src.path={src}", "--set", f"file.path={out}-graphctl.mp4", "--set", "file.faststart=false"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-vf", "hflip", "-c:v", "libx264", "-preset", "veryfast",
          "-b:v", f"{kbps}k", "-g", "60", "-bf", "0", "-profile:v", "high", "-c:a", "aac", "-b:a", "96k", f"{out}-ffmpeg.mp4"]
    contenders = [("graphctl", ours), ("ffmpeg", ff)]
    r = alternate(contenders, runs)
    table("Transcode: 1920×1080 30 fps 20 s H.264 + AAC → mirrored, H.264 (veryfast, auto bit rate) + AAC 96 kb/s (graphs/transcode-video.json)",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, "ffmpeg")


def codec_graph(name, nodes, edges):
    """Writes a graph for a codec job into the bench folder and returns its path."""
    import json
    path = os.path.join(BENCH, f"{name}.json")
    with open(path, "w") as f:
        json.dump({"version": 1, "name": name, "nodes": nodes, "edges": edges}, f)
    return path


def hevc_job(runs, preset="ultrafast", kbps=5000, keyint=60):
    """encode.hevc on the 1080p 30 fps 20 s H.264 file (decoded to I420, video only, audio not
    decoded), against ffmpeg's libx265 at the same settings: the same preset, average bit rate
    (x265's ABR, no VBV) and keyframe interval, x265 tuning for nothing (x265enc defaults to
    tune=ssim; encode.hevc sets none, as ffmpeg), and x265's own thread pool on both sides (x265
    sizes it to the machine: neither tool passes pools or frame-threads). ultrafast keeps a run
    near half a minute on this shared 2-core machine."""
    src = transcode_source()
    out = os.path.join(BENCH, "hevc")
    graph = codec_graph("hevc", {
        "src": {"type": "source.file", "params": {"path": src}},
        "dec": {"type": "decode", "params": {"pixelFormat": "i420"}},
        "hevc": {"type": "encode.hevc", "params": {"preset": preset, "bitrate": kbps * 1000, "keyframeInterval": keyint}},
        "file": {"type": "sink.mp4", "params": {"path": f"{out}-graphctl.mp4", "faststart": False}},
    }, ["src.out -> dec.in", "dec.video -> hevc.in", "hevc.out -> file.video"])
    ours = [GRAPHCTL, "run", graph, "--quiet"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-an", "-c:v", "libx265", "-preset", preset, "-b:v", f"{kbps}k",
          "-g", str(keyint), "-tag:v", "hvc1", "-x265-params", "log-level=none", f"{out}-ffmpeg.mp4"]
    contenders = [("graphctl", ours), ("ffmpeg", ff)]
    r = alternate(contenders, runs)
    table(f"HEVC encode: 1920×1080 30 fps 20 s H.264 → HEVC (x265 {preset}, {kbps} kb/s, keyframes every {keyint}), MP4",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, "ffmpeg")


def opus_job(runs, minutes=10, kbps=96):
    """encode.opus on a 10-minute 44.1 kHz stereo WAV (resampled to Opus's 48 kHz by both), into
    MP4, against ffmpeg's libopus at the same settings: 96 kb/s VBR, complexity 10, 20 ms
    frames (ffmpeg's and libopus's defaults, set on both sides)."""
    src = os.path.join(BENCH, f"{minutes}min.wav")
    wav(src, minutes)
    out = os.path.join(BENCH, "opus")
    graph = codec_graph("opus", {
        "src": {"type": "source.file", "params": {"path": src}},
        "dec": {"type": "decode"},
        "opus": {"type": "encode.opus", "params": {"bitrate": kbps * 1000, "bitrateMode": "vbr", "complexity": 10, "frameDuration": 20}},
        "file": {"type": "sink.mp4", "params": {"path": f"{out}-graphctl.mp4", "faststart": False}},
    }, ["src.out -> dec.in", "dec.audio -> opus.in", "opus.out -> file.audio"])
    ours = [GRAPHCTL, "run", graph, "--quiet"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-c:a", "libopus", "-b:a", f"{kbps}k", "-vbr", "on",
          "-compression_level", "10", "-frame_duration", "20", f"{out}-ffmpeg.mp4"]
    contenders = [("graphctl", ours), ("ffmpeg", ff)]
    r = alternate(contenders, runs)
    table(f"Opus encode: {minutes}-minute 44.1 kHz stereo WAV → Opus {kbps} kb/s VBR (48 kHz), MP4",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, "ffmpeg")


def flac_job(runs, minutes=10, level=5):
    """encode.flac on a 10-minute 44.1 kHz stereo WAV against ffmpeg's FLAC encoder at the same
    compression level (5, both tools' default). FLAC goes into no MP4 on GStreamer 1.22, so the
    graph writes Matroska or Ogg: it needs sink.mkv or sink.ogg (the containers work), and the
    job says so and measures nothing when graphctl has neither."""
    src = os.path.join(BENCH, f"{minutes}min.wav")
    wav(src, minutes)
    out = os.path.join(BENCH, "flac")
    sink = next((s for s in ("sink.mkv", "sink.ogg")
                 if subprocess.run([GRAPHCTL, "inspect", s], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0), None)
    if sink is None:
        print(f"\n### FLAC encode: {minutes}-minute WAV → FLAC\n\n- not measured: graphctl has no sink.mkv or sink.ogg to write FLAC into")
        return
    ext = "mkv" if sink == "sink.mkv" else "ogg"
    graph = codec_graph("flac", {
        "src": {"type": "source.file", "params": {"path": src}},
        "dec": {"type": "decode"},
        "flac": {"type": "encode.flac", "params": {"compressionLevel": level}},
        "file": {"type": sink, "params": {"path": f"{out}-graphctl.{ext}"}},
    }, ["src.out -> dec.in", "dec.audio -> flac.in", "flac.out -> file.audio"])
    ours = [GRAPHCTL, "run", graph, "--quiet"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-c:a", "flac", "-compression_level", str(level), f"{out}-ffmpeg.{ext}"]
    contenders = [("graphctl", ours), ("ffmpeg", ff)]
    r = alternate(contenders, runs)
    table(f"FLAC encode: {minutes}-minute 44.1 kHz stereo WAV → FLAC level {level}, {ext}",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, "ffmpeg")


def ten_minute_1080p(seconds=600):
    """10 minutes (or `seconds`) of 1920×1080 25 fps H.264 (a key frame every 2 s, B-frames) + AAC, made once."""
    src = os.path.join(BENCH, "in-1080p-10min.mp4" if seconds == 600 else f"in-1080p-{seconds}s.mp4")
    if not os.path.exists(src):
        sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", f"testsrc2=size=1920x1080:rate=25:duration={seconds}",
            "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={seconds}", "-c:v", "libx264", "-preset", "ultrafast",
            "-b:v", "6M", "-g", "50", "-bf", "2", "-c:a", "aac", "-b:a", "128k", src + ".partial.mp4"])
        os.rename(src + ".partial.mp4", src)
    return src


def hls_job(runs):
    """An MP4 packaged for HLS without re-encoding (issue 32): `graphctl hls`, and the same as a graph
    (graphs/package-hls.json, on the container path), against ffmpeg's HLS muxer with -c copy, all
    writing fragmented-MP4 segments of 6 s and a VOD playlist."""
    src = ten_minute_1080p()
    ours_dir, ff_dir, graph_dir = (os.path.join(BENCH, d) for d in ("hls-graphctl", "hls-ffmpeg", "hls-graph"))
    ours = [GRAPHCTL, "hls", src, ours_dir, "--segment-duration", "6", "--quiet"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-c", "copy", "-f", "hls", "-hls_time", "6", "-hls_segment_type", "fmp4",
          "-hls_playlist_type", "vod", "-hls_fmp4_init_filename", "init.mp4", "-hls_segment_filename", os.path.join(ff_dir, "segment%d.m4s"),
          os.path.join(ff_dir, "playlist.m3u8")]
    graph = [GRAPHCTL, "run", os.path.join(ROOT, "graphs", "package-hls.json"), "--quiet", "--set", f"src.path={src}",
             "--set", f"hls.folder={graph_dir}"]
    contenders = [("graphctl hls", ours), ("graphctl run package-hls.json", graph), ("ffmpeg", ff)]
    folders = {"graphctl hls": ours_dir, "graphctl run package-hls.json": graph_dir, "ffmpeg": ff_dir}

    def empty_folder(name):
        # 1.2 GB each: every command writes into an empty folder, its earlier package removed
        # and flushed untimed. (Removing it in the timed run made whoever ran first after
        # ffmpeg 1.5-2 s slower, whichever tool that was.)
        if os.path.exists(folders[name]):
            shutil.rmtree(folders[name])
        os.makedirs(folders[name])
        subprocess.run(["sync"], check=True)

    # Every command is timed to its `sync`, so that no contender pays for the writeback of the
    # one before (GraphKit flushes each segment before listing it; ffmpeg does not).
    timed = [(n, ["sh", "-c", '"$0" "$@" && sync'] + c) for n, c in contenders]
    r = alternate(timed, runs, before=empty_folder)
    table("HLS packaging, passthrough: 10-minute 1920×1080 H.264 + AAC MP4 → fMP4 segments of 6 s + VOD playlist, each timed to its `sync`",
          [(n, " ".join(c).replace(ROOT + "/", "") + " && sync") for n, c in contenders], r, "ffmpeg")


def sixty_second_1080p():
    """60 s of the same (ten_minute_1080p's kind), made once."""
    return ten_minute_1080p(seconds=60)


def ladder_job(runs):
    """graphs/hls-ladder.json (one decode, three x264 encodes, sink.hls with a multivariant
    playlist) against ffmpeg doing the same: split + scale + three libx264 encodes into an HLS
    ladder of fMP4 segments. x264 settings matched: preset veryfast, no tune, profile high,
    keyint 50 (x264's own minimum and scene cut), no B-frames, ABR at the bit rates encode.h264
    chooses itself (10.1 bits per pixel per second from 640×480 up, 4.05 below: 20,943, 9,308 and
    933 kbit/s) without a VBV, threads chosen by x264 (auto); the same bilinear scaling
    (GStreamer's videoscale default); AAC 96 kb/s by ffmpeg's own encoder (avenc_aac in GraphKit),
    encoded once and muxed into each rung in GraphKit, once per rung in ffmpeg (its HLS muxer
    takes no stream twice)."""
    src = sixty_second_1080p()
    ours_dir, ff_dir = os.path.join(BENCH, "ladder-graphctl"), os.path.join(BENCH, "ladder-ffmpeg")
    os.makedirs(ff_dir, exist_ok=True)
    ours = [GRAPHCTL, "run", os.path.join(ROOT, "graphs", "hls-ladder.json"), "--quiet", "--set", f"src.path={src}", "--set", f"hls.folder={ours_dir}"]
    rates = ["20943k", "9308k", "933k"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-filter_complex",
          "[0:v]split=3[v0][v1][v2];[v1]scale=1280:720:flags=bilinear[v1o];[v2]scale=640:360:flags=bilinear[v2o]",
          "-map", "[v0]", "-map", "[v1o]", "-map", "[v2o]", "-map", "0:a", "-map", "0:a", "-map", "0:a",
          "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-bf", "0", "-g", "50", "-threads", "0",
          "-b:v:0", rates[0], "-b:v:1", rates[1], "-b:v:2", rates[2], "-c:a", "aac", "-b:a", "96k",
          "-f", "hls", "-hls_time", "6", "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4", "-master_pl_name", "master.m3u8",
          "-var_stream_map", "v:0,a:0 v:1,a:1 v:2,a:2", "-hls_segment_filename", os.path.join(ff_dir, "v%v", "segment%d.m4s"),
          os.path.join(ff_dir, "v%v", "playlist.m3u8")]
    contenders = [("graphctl run graphs/hls-ladder.json", ours), ("ffmpeg", ff)]
    r = alternate(contenders, runs)
    table("3-rung HLS ladder (1920×1080, 1280×720, 640×360 H.264 + AAC, 6 s fMP4 segments) from a 60-second 1080p file",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, "ffmpeg")
    print("- goal: at most 1.0× ffmpeg")


def live_hls_job(minutes, results_path=None):
    """graphs/record-hls.json (test camera 1280×720 30 fps and test microphone, live, 2-second
    segments, a window of six) run for `minutes`, then stopped as Ctrl-C stops it. Every segment
    is seen: the playlist is read twice a second (the window lists 12 s), and each new segment's
    duration recorded by its media sequence number; the run's RSS is sampled every 5 s. Checks
    that every segment but the last lasts the target within one frame (1/30 s)."""
    import json
    import re
    import signal
    folder = os.path.join(BENCH, f"live-hls-{minutes}")
    shutil.rmtree(folder, ignore_errors=True)
    cmd = [GRAPHCTL, "run", os.path.join(ROOT, "graphs", "record-hls.json"), "--quiet", "--set", f"hls.folder={folder}"]
    proc = subprocess.Popen(cmd)
    start = time.monotonic()
    durations, rss, hwm = {}, [], 0
    playlist = os.path.join(folder, "playlist.m3u8")
    last_rss = 0.0

    def read_playlist():
        try:
            text = open(playlist).read()
        except OSError:
            return
        seq = int(re.search(r"#EXT-X-MEDIA-SEQUENCE:(\d+)", text).group(1))
        for k, d in enumerate(re.findall(r"#EXTINF:([0-9.]+),", text)):
            durations.setdefault(seq + k, float(d))

    while time.monotonic() - start < minutes * 60 and proc.poll() is None:
        read_playlist()
        now = time.monotonic() - start
        if now - last_rss >= 5:
            last_rss = now
            try:
                status = open(f"/proc/{proc.pid}/status").read()
                kb = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
                hwm = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))
                rss.append((round(now), kb / 1024.0))
            except (OSError, AttributeError):
                pass
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    code = proc.wait()
    read_playlist()
    seqs = sorted(durations)
    missed = [n for n in range(seqs[0], seqs[-1] + 1) if n not in durations] if seqs else []
    body = [durations[n] for n in seqs[:-1]]
    target, frame = 2.0, 1 / 30
    worst = max((abs(d - target) for d in body), default=0)
    off = [(n, durations[n]) for n in seqs[:-1] if abs(durations[n] - target) > frame + 1e-6]
    result = {"minutes": minutes, "exit": code, "segments": len(seqs), "missed": len(missed), "worstDeviation": worst,
              "outsideOneFrame": off[:20], "outsideCount": len(off), "peakRSSMB": hwm / 1024.0, "rss": rss,
              "durations": [durations[n] for n in seqs]}
    if results_path:
        json.dump(result, open(results_path, "w"))
    at = lambda m: next((r for t, r in rss if t >= m * 60 - 5), None)
    print(f"\n### Live HLS, graphs/record-hls.json, {minutes} minutes (test camera 1280×720 30 fps + test microphone)\n")
    print(f"- `{' '.join(cmd).replace(ROOT + '/', '')}`, stopped by SIGINT after {minutes} min: exit {code}")
    print(f"- segments seen: {len(seqs)} (missed by the poll: {len(missed)}); every one but the last within one frame "
          f"(1/30 s) of 2 s: {code == 0 and len(seqs) > 1 and len(off) == 0} (worst deviation {worst * 1000:.2f} ms, {len(off)} outside)")
    print(f"- RSS: peak {hwm / 1024.0:.1f} MB; at 1 min {at(1)}, 10 min {at(10)}, end {rss[-1][1] if rss else None} MB")
    return result


def composition_job(runs, minutes=1):
    """An export with a video composition, as Apple's export code writes one: the centre 1280×720
    of a 1-minute 1080p H.264 + AAC file, faded in over the first second and out over the last,
    with AVAssetExportPresetHighestQuality (H.264 veryfast at encode.h264's automatic bit rate for
    1280×720, keyframes every 60, no B-frames, high profile; AAC 128 kb/s; the index last, as an
    export session writes it by default), through AVFoundation's names and through Assets' own
    values (the engine without the layer), against ffmpeg's crop and fade at the same settings."""
    src = export_source(minutes)
    out = os.path.join(BENCH, "composition")
    kbps = round(1280 * 720 * 10.1 / 1000)
    last = minutes * 60 - 1
    avf = [os.path.join(ROOT, ".build", "release", "graphkit-avf-bench"), "composition", src, f"{out}-avf.mp4"]
    assets = [os.path.join(ROOT, ".build", "release", "graphkit-api-bench"), "composition", src, f"{out}-assets.mp4"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-vf", f"crop=1280:720:320:180,fade=t=in:st=0:d=1,fade=t=out:st={last}:d=1",
          "-c:v", "libx264", "-preset", "veryfast", "-b:v", f"{kbps}k", "-g", "60", "-bf", "0", "-profile:v", "high",
          "-c:a", "aac", "-b:a", "128k", f"{out}-ffmpeg.mp4"]
    contenders = [("AVAssetExportSession + AVMutableVideoComposition", fresh(avf, avf[-1])),
                  ("AssetExportSession + VideoComposition", fresh(assets, assets[-1])), ("ffmpeg", ff)]
    r = alternate(contenders, runs)
    table(f"Export with a video composition: a {minutes}-minute 1920×1080 30 fps H.264 + AAC MP4 → its centre 1280×720, faded in and out, "
          f"H.264 (veryfast, {kbps} kb/s) + AAC 128 kb/s",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in zip([n for n, _ in contenders], [avf, assets, ff])], r, "ffmpeg")
    a, e = r["AVAssetExportSession + AVMutableVideoComposition"], r["AssetExportSession + VideoComposition"]
    print(f"- AVFoundation names / Assets, wall per round (median): {statistics.median(x / y for x, y in zip(a[3], e[3])):.3f} (goal: at most 1.02)")
    print("- goal: at most 1.05× ffmpeg")


def swift_api_job(runs):
    """The Swift API against gst-launch-1.0 doing the same job: 600 drawn 1280×720 frames
    through the pixel-buffer adaptor into H.264, and every sample of a 10-minute WAV through
    AssetReader's copyNextSampleBuffer() (the decode-only floor)."""
    bench = os.path.join(ROOT, ".build", "release", "graphkit-api-bench")
    avf_bench = os.path.join(ROOT, ".build", "release", "graphkit-avf-bench")
    out = os.path.join(BENCH, "adaptor")
    for fmt, caps in (("bgra", "BGRA"), ("i420", "I420")):
        ours = [bench, "adaptor", f"{out}-{fmt}.mp4", fmt]
        gst = ["gst-launch-1.0", "-q", "-e", "videotestsrc", "num-buffers=600", "!", f"video/x-raw,format={caps},width=1280,height=720,framerate=30/1",
               "!", "videoconvert", "!", "x264enc", "speed-preset=veryfast", "bitrate=2048", "key-int-max=250", "bframes=0", "vbv-buf-capacity=0", "!",
               "video/x-h264,profile=high", "!", "mp4mux", "!", "filesink", f"location={out}-{fmt}-gst.mp4"]
        # The same job through AVFoundation's names (issue 30), in the same alternated run: the
        # compat layer's cost is its wall over the Assets one's, round by round.
        compat = [avf_bench, "adaptor", f"{out}-{fmt}-avf.mp4", fmt]
        contenders = [("AssetWriter + adaptor", ours), ("AVAssetWriter + adaptor (AVFoundation names)", compat), ("gst-launch-1.0", gst)]
        r = alternate(contenders, runs)
        table(f"600 drawn 1280×720 {caps} frames → H.264 (veryfast, 2,048 kb/s) MP4 through AssetWriterInputPixelBufferAdaptor",
              [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, "gst-launch-1.0")
        print("- " + subprocess.run(ours, capture_output=True, text=True, check=True).stdout.strip())
        a, c = r["AssetWriter + adaptor"], r["AVAssetWriter + adaptor (AVFoundation names)"]
        print(f"- AVFoundation names / Assets, wall per round (median): {statistics.median(x / y for x, y in zip(c[3], a[3])):.3f}"
              f" (goal: at most 1.02); medians {c[0]:.3f} s / {a[0]:.3f} s")
        # CPU time (user + system) as well: on a machine other work shares, wall time carries
        # its load, and the layer's own cost is compute.
        cpu = {name: [] for name in ("assets", "compat")}
        for _ in range(runs):
            for name, cmd in (("assets", ours), ("compat", compat)):
                cpu[name].append(cpu_seconds(cmd))
        print(f"- AVFoundation names / Assets, CPU time (user + system) per round (median): "
              f"{statistics.median(x / y for x, y in zip(cpu['compat'], cpu['assets'])):.3f}; "
              f"medians {statistics.median(cpu['compat']):.3f} s / {statistics.median(cpu['assets']):.3f} s")
    path = os.path.join(BENCH, "wave-10min.wav")
    wav(path, 10)
    ours = [bench, "reader", path]
    gst = ["gst-launch-1.0", "-q", "filesrc", f"location={path}", "!", "decodebin", "!", "audioconvert", "!",
           "audio/x-raw,format=S16LE", "!", "fakesink"]
    contenders = [("AssetReader copyNextSampleBuffer()", ours), ("gst-launch-1.0", gst)]
    r = alternate(contenders, max(runs, 10))
    table("Every sample of a 10-minute 44.1 kHz stereo WAV through AssetReaderTrackOutput.copyNextSampleBuffer(), against the decode-only floor",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, "gst-launch-1.0")
    print("- " + subprocess.run(ours, capture_output=True, text=True, check=True).stdout.strip())


def join_sources(files):
    """Ten 1920×1080 30 fps 10 s H.264 8 Mb/s + AAC files (made once), and ffmpeg's concat list of them."""
    sources = []
    for n in range(files):
        src = os.path.join(BENCH, f"join-{n}.mp4")
        if not os.path.exists(src):
            sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", f"testsrc2=size=1920x1080:rate=30:duration=10",
                "-f", "lavfi", "-i", f"sine=frequency={220 + 55 * n}:sample_rate=48000:duration=10", "-c:v", "libx264", "-preset", "veryfast",
                "-b:v", "8M", "-g", "60", "-c:a", "aac", "-b:a", "128k", src])
        sources.append(src)
    listing = os.path.join(BENCH, "join-list.txt")
    with open(listing, "w") as f:
        f.writelines(f"file '{src}'\n" for src in sources)
    return sources, listing


def graph_copy_jobs(runs, files=10, minutes=10, start=240, duration=60):
    """A join, a trim and a remux run as graphs on the container path (graphs/concat.json,
    `source.concat → sink.mp4`; graphs/remux.json, `source.file → demux → sink.mp4`), against ffmpeg
    with -c copy: the ten files of the join job, 60 s from 240 s of the 10-minute 1080p file of the
    trim job, and that file whole. All write the index first."""
    sources, listing = join_sources(files)
    graph = os.path.join(ROOT, "graphs", "concat.json")
    out = os.path.join(BENCH, "graphjoin")
    pieces = json.dumps([{"path": src} for src in sources])
    ours = [GRAPHCTL, "run", graph, "--quiet", "--set", f"join.pieces={pieces}", "--set", f"file.path={out}-graphctl.mp4"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-f", "concat", "-safe", "0", "-i", listing, "-c", "copy", "-movflags", "+faststart", f"{out}-ffmpeg.mp4"]
    r = alternate([("graphctl run concat.json", fresh(ours, f"{out}-graphctl.mp4")), ("ffmpeg concat demuxer -c copy", ff)], runs)
    short = lambda c: " ".join(c).replace(ROOT + "/", "").replace(BENCH + "/", "out/bench/")
    table(f"Join as a graph: {files} files of 1920×1080 30 fps 10 s H.264 8 Mb/s + AAC, index first (goal: at most 1.0× ffmpeg)",
          [("graphctl run concat.json", short(ours)), ("ffmpeg concat demuxer -c copy", short(ff))], r, "ffmpeg concat demuxer -c copy")
    src = export_source(minutes)
    out = os.path.join(BENCH, "graphtrim")
    piece = json.dumps([{"path": src, "inpoint": start, "duration": duration}])
    ours = [GRAPHCTL, "run", graph, "--quiet", "--set", f"join.pieces={piece}", "--set", f"file.path={out}-graphctl.mp4"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-ss", str(start), "-t", str(duration), "-i", src, "-c", "copy", "-movflags", "+faststart", f"{out}-ffmpeg.mp4"]
    r = alternate([("graphctl run concat.json", fresh(ours, f"{out}-graphctl.mp4")), ("ffmpeg -c copy", ff)], runs)
    table(f"Trim as a graph: {duration} s from {start} s of a {minutes}-minute 1920×1080 30 fps H.264 + AAC MP4, index first (goal: at most 1.0× ffmpeg)",
          [("graphctl run concat.json", short(ours)), ("ffmpeg -c copy", short(ff))], r, "ffmpeg -c copy")
    # The whole file (1.2 GB): the kernel's writeback of one round's output lands in the next
    # unless each command's time includes it, so each ends with `sync`, and the output is removed
    # before it starts.
    def synced(cmd, path):
        return ["sh", "-c", f'rm -f "{path}" && "$0" "$@" && sync'] + cmd
    out = os.path.join(BENCH, "graphremux")
    for first in (True, False):
        ours = [GRAPHCTL, "run", os.path.join(ROOT, "graphs", "remux.json"), "--quiet", "--set", f"src.path={src}", "--set", f"file.path={out}-graphctl.mp4",
                "--set", f"file.faststart={'true' if first else 'false'}"]
        ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-c", "copy"] + (["-movflags", "+faststart"] if first else []) + [f"{out}-ffmpeg.mp4"]
        subprocess.run(["sync"], check=True)
        r = alternate([("graphctl run remux.json", synced(ours, f"{out}-graphctl.mp4")), ("ffmpeg -c copy", synced(ff, f"{out}-ffmpeg.mp4"))], runs)
        table(f"Remux as a graph: the {minutes}-minute 1920×1080 30 fps H.264 + AAC MP4 whole, index {'first' if first else 'last'}, each timed to its `sync` (goal: at most 1.0× ffmpeg)",
              [("graphctl run remux.json", short(ours) + " && sync"), ("ffmpeg -c copy", short(ff) + " && sync")], r, "ffmpeg -c copy")


def long_mp4(minutes):
    """A `minutes`-long 160×120 30 fps H.264 (B-frames, a key frame every 2 s) + AAC MP4: ten
    minutes encoded once, then copied end to end by ffmpeg's concat demuxer (the index of a long
    recording, few bytes)."""
    path = os.path.join(BENCH, f"long-{minutes}min.mp4")
    if os.path.exists(path):
        return path
    ten = os.path.join(BENCH, "long-10min.mp4")
    if not os.path.exists(ten):
        sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=30", "-f", "lavfi", "-i", "sine=f=440:r=48000",
            "-t", "600", "-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-bf", "2", "-c:a", "aac", "-b:a", "64k", ten])
    if minutes != 10:
        listing = os.path.join(BENCH, f"long-{minutes}.txt")
        with open(listing, "w") as f:
            f.write(f"file '{ten}'\n" * (minutes // 10))
        sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "concat", "-safe", "0", "-i", listing, "-c", "copy", path])
    return path


def remux_long_job(runs, lengths=(10, 60, 180)):
    """The remux graph (graphs/remux.json, the container path, index last) on long files, against
    ffmpeg -c copy: the wall and peak RSS at each length, and how they grow (issue 71: a 3-hour
    remux at most 3.3× a 1-hour one, memory flat)."""
    out = os.path.join(BENCH, "remuxlong")
    rows = {}
    for minutes in lengths:
        src = long_mp4(minutes)
        ours = [GRAPHCTL, "run", os.path.join(ROOT, "graphs", "remux.json"), "--quiet", "--set", f"src.path={src}",
                "--set", f"file.path={out}-graphctl.mp4", "--set", "file.faststart=false"]
        ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-c", "copy", f"{out}-ffmpeg.mp4"]
        rows[minutes] = alternate([("graphctl run remux.json", fresh(ours, f"{out}-graphctl.mp4")), ("ffmpeg -c copy", ff)], runs)
    print(f"\n### Remux of long files: 160×120 30 fps H.264 + AAC 64 kb/s, index last, {runs} rounds\n")
    print("| minutes | graphctl wall (s) | ffmpeg wall (s) | ratio | graphctl RSS (MB) | ffmpeg RSS (MB) |")
    print("|---|---|---|---|---|---|")
    for minutes, r in rows.items():
        (gw, gm, _, _), (fw, fm, _, _) = r["graphctl run remux.json"], r["ffmpeg -c copy"]
        print(f"| {minutes} | {gw:.3f} | {fw:.3f} | {gw / fw:.3f} | {gm:.1f} | {fm:.1f} |")
    first, last = lengths[0], lengths[-1]
    for name in ("graphctl run remux.json", "ffmpeg -c copy"):
        (w0, m0, _, _), (w1, m1, _, _) = rows[first][name], rows[last][name]
        print(f"- {name}: {last} min against {first} min: wall {w1 / w0:.2f}x for {last / first:.0f}x the length, RSS {m1 / m0:.3f}x")
    if 60 in rows and 180 in rows:
        print(f"- graphctl, 180 min against 60 min: wall {rows[180]['graphctl run remux.json'][0] / rows[60]['graphctl run remux.json'][0]:.2f}x (goal: at most 3.3x)")
    sys.stdout.flush()


def join_job(runs, files=10):
    """A passthrough join of ten 1920×1080 30 fps 10 s H.264 + AAC files (issue 31): a MutableComposition
    exported by AssetExportSession with the passthrough preset (the container library's MP4Join: byte
    ranges copied, an edit per piece), against ffmpeg's concat demuxer with -c copy. The runner is graphkit-api-bench's
    `join OUT IN...` (GRAPHKIT_JOIN_BENCH names another binary that takes the same arguments)."""
    bench = os.environ.get("GRAPHKIT_JOIN_BENCH") or os.path.join(ROOT, ".build", "release", "graphkit-api-bench")
    sources, listing = join_sources(files)
    out = os.path.join(BENCH, "join")
    ours = [bench, "join", f"{out}-graphkit.mp4"] + sources
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-f", "concat", "-safe", "0", "-i", listing, "-c", "copy", f"{out}-ffmpeg.mp4"]
    contenders = [("MutableComposition → AssetExportSession (passthrough)", ours), ("ffmpeg concat demuxer -c copy", ff)]
    r = alternate([(contenders[0][0], fresh(ours, f"{out}-graphkit.mp4")), contenders[1]], runs)
    table(f"Passthrough join of {files} files, 1920×1080 30 fps 10 s H.264 8 Mb/s + AAC 128 kb/s each (goal: at most 1.0× ffmpeg)",
          [(n, " ".join(c).replace(ROOT + "/", "").replace(BENCH + "/", "out/bench/")) for n, c in contenders], r, "ffmpeg concat demuxer -c copy")
    # The output is checked, not only timed: every video packet of every source, in order.
    probe = ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=size,data_hash", "-show_data_hash", "md5", "-of", "csv=p=0"]
    joined = subprocess.run(probe + [f"{out}-graphkit.mp4"], capture_output=True, text=True, check=True).stdout
    expected = "".join(subprocess.run(probe + [src], capture_output=True, text=True, check=True).stdout for src in sources)
    print(f"- video packets of the join equal the sources' in order: {joined == expected} ({joined.count(chr(10))} packets)")


def live_job():
    stats = os.path.join(BENCH, "live-stats.json")
    sh([GRAPHCTL, "run", os.path.join(ROOT, "graphs", "record.json"), "--quiet", "--set", "camera.width=1280", "--set", "camera.height=720",
        "--set", f"file.path={os.path.join(BENCH, 'live.mp4')}", "--stats", stats])
    import json
    r = json.load(open(stats))
    captured = next(n["buffersOut"] for n in r["nodes"] if n["id"] == "camera")
    dropped = sum(e["drops"] for e in r["edges"] if e["from"] == "camera.out")
    print(f"\n### Live record, 1280×720 30 fps, 10 s, default preset (graphs/record.json)\n")
    print(f"- `graphctl run graphs/record.json --set camera.width=1280 --set camera.height=720 --stats …`: "
          f"{captured} frames captured, {dropped} dropped (goal: 0), {r['wallSeconds']:.2f} s wall")


def batch_job(runs, files=200):
    """`graphctl batch` over 200 five-second MP3s through graphs/waveform.json (JSON and PNG per
    input), against the hand-written alternative: xargs over `graphctl run`, one process per
    input. Each contender writes into an empty folder of its own every round."""
    folder = os.path.join(BENCH, "batch")
    inputs = os.path.join(folder, "in")
    os.makedirs(inputs, exist_ok=True)
    for i in range(files):
        path = os.path.join(inputs, f"in{i:03d}.mp3")
        if not os.path.exists(path):
            sh(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", f"sine=frequency={200 + i * 5}:duration=5:sample_rate=44100",
                "-ac", "2", "-b:a", "128k", path])
    graph = os.path.join(ROOT, "graphs", "waveform.json")
    def out(name):
        return os.path.join(folder, f"out-{name}")
    def batch(name, *extra):
        return [GRAPHCTL, "batch", graph, "--quiet", "--inputs", inputs, "--map", "src.path={input}",
                "--map", f"wave.json={out(name)}/{{stem}}.json", "--map", f"wave.png={out(name)}/{{stem}}.png"] + list(extra)
    def xargs(name, jobs):
        return ["sh", "-c", f"mkdir -p {out(name)} && ls {inputs} | xargs -P {jobs} -I@ {GRAPHCTL} run {graph} --quiet "
                f"--set src.path={inputs}/@ --set wave.json={out(name)}/@.json --set wave.png={out(name)}/@.png"]
    contenders = [
        ("batch --jobs 1", "j1", batch("j1", "--jobs", "1")),
        ("batch --jobs 2", "j2", batch("j2", "--jobs", "2")),
        ("batch --jobs 2, a process per input", "j2p", batch("j2p", "--jobs", "2", "--runs-per-worker", "1")),
        ("xargs -P 1 graphctl run", "x1", xargs("x1", 1)),
        ("xargs -P 2 graphctl run", "x2", xargs("x2", 2)),
    ]
    samples = {name: [] for name, _, _ in contenders}
    for _ in range(runs):
        for name, key, cmd in contenders:
            for d in os.listdir(folder):
                if d.startswith("out-"):
                    shutil.rmtree(os.path.join(folder, d))
            samples[name].append(measure(cmd)[0])
            written = len(os.listdir(out(key)))
            if written != 2 * files:
                sys.exit(f"{name}: wrote {written} files, not {2 * files}")
    print(f"\n### {files} five-second MP3s → waveform JSON + PNG each (graphs/waveform.json), {os.cpu_count()} cores\n")
    for name, _, cmd in contenders:
        print(f"- {name}: `{' '.join(cmd).replace(ROOT + '/', '')}`")
    print("\n| contender | wall (s, median) | inputs/s | throughput / batch --jobs 1 | wall / xargs -P 2, per round (median) | runs |")
    print("|---|---|---|---|---|---|")
    base = statistics.median(samples["batch --jobs 1"])
    for name, _, _ in contenders:
        w = statistics.median(samples[name])
        paired = statistics.median(x / y for x, y in zip(samples[name], samples["xargs -P 2 graphctl run"]))
        print(f"| {name} | {w:.3f} | {files / w:.1f} | {base / w:.2f}x | {paired:.3f} | {len(samples[name])} |")
    scaling = statistics.median(a / b for a, b in zip(samples["batch --jobs 1"], samples["batch --jobs 2"]))
    rounds = ", ".join(f"{a / b:.2f}" for a, b in zip(samples["batch --jobs 1"], samples["batch --jobs 2"]))
    print(f"\n- --jobs 2 against --jobs 1, per round (median): {scaling:.2f}x the throughput (goal: at least 1.8x); "
          f"by medians {base / statistics.median(samples['batch --jobs 2']):.2f}x; rounds: {rounds}")
    sys.stdout.flush()


def thumbs_job(runs):
    """Ten pictures evenly spaced through a 10-minute 1080p H.264 file (2 s GOP), 320 pixels wide,
    written as JPEG: graphs/thumbnails.json (one process, a pipeline a picture) against ten ffmpeg
    processes seeking in the same file, and against decoding the whole file. Default tolerance
    (the keyframe at or before each time) against ffmpeg's `-ss T -i` (which by default decodes
    on from the keyframe to T: accurate seek) and against `-ss T -noaccurate_seek -i` (the
    keyframe, as ours: the like-for-like figure); `exact` against `-ss T -i` (input seeking with
    accurate seek: the same frame, decoded from the keyframe before it, which is ffmpeg's fastest
    exact way; `-ss` after `-i` would decode from the start)."""
    video = os.path.join(BENCH, "thumbs-10min-1080p.mp4")
    if not os.path.exists(video):
        sh(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25:duration=600", "-c:v", "libx264",
            "-preset", "ultrafast", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p", video + ".tmp.mp4"])
        os.rename(video + ".tmp.mp4", video)
    out = os.path.join(BENCH, "thumbs")

    def ffmpeg_loop(extra, folder, count):
        os.makedirs(folder, exist_ok=True)
        times = [600 * i / count for i in range(count)]
        return ["sh", "-c", "; ".join(f"ffmpeg -v error -y -ss {t:.3f} {extra}-i {video} -frames:v 1 -vf scale=320:-2 -q:v 3 "
                                      f"{folder}/{i + 1:04d}.jpg" for i, t in enumerate(times))]

    def ours(exact, folder, count):
        return [GRAPHCTL, "run", os.path.join(ROOT, "graphs", "thumbnails.json"), "--quiet", "--set", f"thumbs.path={video}",
                "--set", f"thumbs.count={count}", "--set", "thumbs.width=320", "--set", f"thumbs.exact={'true' if exact else 'false'}",
                "--set", f"thumbs.folder={folder}", "--set", f"thumbs.sprite={folder}/sprite.jpg", "--set", f"thumbs.vtt={folder}/sprite.vtt"]

    def shown(name, cmd):
        # The ffmpeg loops are long: one run of each, with T for the time.
        line = " ".join(cmd).replace(ROOT + "/", "")
        if cmd[0] == "sh":
            first = cmd[2].split("; ")[0].replace(ROOT + "/", "")
            line = "for each T: " + first.replace("-ss 0.000", "-ss T").replace("0001.jpg", "NNNN.jpg")
        return (name, line)

    per_round = lambda a, b: statistics.median(x / y for x, y in zip(a[3], b[3]))
    # 10 pictures at i × 60 s: every time is a keyframe (2 s GOP), so exact and keyframe pictures
    # are the same frames there; 11 pictures at i × 54.5 s fall inside GOPs, where exact decodes
    # from the keyframe before each time (up to 49 frames), as ffmpeg's accurate seek does.
    for count in (10, 11):
        contenders = [("graphctl run graphs/thumbnails.json (keyframe)", ours(False, f"{out}-{count}-key", count)),
                      ("ffmpeg -ss T -noaccurate_seek -i, per picture", ffmpeg_loop("-noaccurate_seek ", f"{out}-{count}-ffkey", count)),
                      ("ffmpeg -ss T -i, per picture", ffmpeg_loop("", f"{out}-{count}-ff", count)),
                      ("graphctl run graphs/thumbnails.json (exact)", ours(True, f"{out}-{count}-exact", count))]
        r = alternate(contenders, runs)
        table(f"{count} thumbnails (320 px JPEG, sprite sheet, WebVTT) evenly spaced through a 10-minute 1080p H.264 file, 2 s GOP"
              + (" (every time a keyframe)" if count == 10 else " (times inside GOPs)"),
              [shown(n, c) for n, c in contenders], r, "ffmpeg -ss T -i, per picture")
        key, ff, ffkey, exact = (r["graphctl run graphs/thumbnails.json (keyframe)"], r["ffmpeg -ss T -i, per picture"],
                                 r["ffmpeg -ss T -noaccurate_seek -i, per picture"], r["graphctl run graphs/thumbnails.json (exact)"])
        print(f"- default tolerance / ffmpeg -ss T -i: {per_round(key, ff):.3f} (goal: at most 1.0); "
              f"/ ffmpeg -ss T -noaccurate_seek -i: {per_round(key, ffkey):.3f}")
        print(f"- exact / ffmpeg -ss T -i (accurate seek): {per_round(exact, ff):.3f} (goal: at most 1.2)")
        if count == 10:
            keyframe_wall = key[0]
    whole = ["ffmpeg", "-v", "error", "-i", video, "-map", "0:v", "-f", "null", "-"]
    w = alternate([("decode the whole file", whole)], max(1, min(runs, 2)))
    wall = w["decode the whole file"][0]
    print(f"- decoding the whole file, `{' '.join(whole).replace(ROOT + '/', '')}`: {wall:.2f} s (median of {w['decode the whole file'][2]}); "
          f"/ 10 thumbnails at default tolerance: {wall / keyframe_wall:.1f}× (goal: at least 10×)")


def validate_job(runs):
    graphs = sorted(os.path.join(ROOT, "graphs", g) for g in os.listdir(os.path.join(ROOT, "graphs")) if g.endswith(".json"))
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        sh([GRAPHCTL, "validate"] + graphs, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    print(f"\n### graphctl validate on the {len(graphs)} example graphs\n")
    print(f"- `graphctl validate graphs/*.json`: median {statistics.median(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms over {runs} runs (goal: under 50 ms)")


def export_source(minutes):
    """A `minutes`-long 1080p 30 fps H.264 + AAC MP4 with a keyframe every 2 s, as a camera or
    an editor writes one (ultrafast, so that making it takes less time than the jobs)."""
    src = os.path.join(BENCH, f"in-1080p-{minutes}min.mp4")
    if not os.path.exists(src):
        seconds = int(minutes * 60)
        sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", f"testsrc2=size=1920x1080:rate=30:duration={seconds}",
            "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={seconds}", "-c:v", "libx264", "-preset", "ultrafast",
            "-g", "60", "-keyint_min", "60", "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", src])
    return src


def trim_job(runs, minutes=10, start=240, duration=60):
    """`graphctl export --preset passthrough` of 1 minute from the middle of a 10-minute 1080p
    H.264 + AAC file, against `ffmpeg -ss -t -c copy`: both copy the samples from the keyframe at
    or before the start, and both write the index first (an export of a range always does)."""
    src = export_source(minutes)
    out = os.path.join(BENCH, "trim")
    ours = [GRAPHCTL, "export", src, f"{out}-graphctl.mp4", "--preset", "passthrough", "--start", str(start), "--duration", str(duration), "--quiet"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-ss", str(start), "-t", str(duration), "-i", src, "-c", "copy", "-movflags", "+faststart", f"{out}-ffmpeg.mp4"]
    contenders = [("graphctl export (passthrough)", fresh(ours, f"{out}-graphctl.mp4")), ("ffmpeg -c copy", ff)]
    r = alternate(contenders, runs)
    table(f"Passthrough trim: {duration} s from {start} s of a {minutes}-minute 1920×1080 30 fps H.264 + AAC MP4 (keyframe every 2 s), index first",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in zip([n for n, _ in contenders], [ours, ff])], r, "ffmpeg -c copy")
    # The two outputs' streams as ffprobe describes them (codec, profile, size, rate, channels,
    # frames and packets): the goal asks for streams identical to ffmpeg's.
    fields = "stream=index,codec_name,profile,width,height,pix_fmt,sample_rate,channels,nb_frames"
    def streams(path):
        return subprocess.run(["ffprobe", "-v", "error", "-show_entries", fields, "-of", "compact", path],
                              capture_output=True, text=True, check=True).stdout.strip().splitlines()
    a, b = streams(f"{out}-graphctl.mp4"), streams(f"{out}-ffmpeg.mp4")
    print("- streams (ffprobe " + fields + "): " + ("identical" if a == b else "DIFFERENT:\n  " + "\n  ".join(a) + "\n  against\n  " + "\n  ".join(b)))
    print("- goal: at most 1.0× ffmpeg")


def export720_job(runs, minutes=1):
    """`graphctl export --preset 1280x720` of a 1-minute 1080p H.264 + AAC file, against ffmpeg
    at the preset's settings: x264 veryfast at encode.h264's automatic bit rate for 1280×720
    (10.1 bits a pixel a second), keyframes every 60 frames, no B-frames, high profile; AAC
    128 kb/s, the source's channels (stereo at most: the source's tone is mono); the index first."""
    src = export_source(minutes)
    out = os.path.join(BENCH, "export720")
    kbps = round(1280 * 720 * 10.1 / 1000)
    ours = [GRAPHCTL, "export", src, f"{out}-graphctl.mp4", "--preset", "1280x720", "--quiet"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-vf", "scale=1280:720", "-c:v", "libx264", "-preset", "veryfast",
          "-b:v", f"{kbps}k", "-g", "60", "-bf", "0", "-profile:v", "high", "-c:a", "aac", "-b:a", "128k",
          "-movflags", "+faststart", f"{out}-ffmpeg.mp4"]
    contenders = [("graphctl export (1280x720)", fresh(ours, f"{out}-graphctl.mp4")), ("ffmpeg", ff)]
    r = alternate(contenders, runs)
    table(f"Export with the 1280x720 preset: a {minutes}-minute 1920×1080 30 fps H.264 + AAC MP4 → 1280×720 H.264 (veryfast, {kbps} kb/s) + AAC 128 kb/s, index first",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in zip([n for n, _ in contenders], [ours, ff])], r, "ffmpeg")
    print("- goal: at most 1.05× ffmpeg")


def hlg_source(seconds=20):
    """A `seconds`-long 1080p 30 fps HEVC Main 10 HLG (BT.2020) + AAC MP4, as a phone records:
    testsrc2 made HLG by zscale, x265 ultrafast with a keyframe every second, tagged."""
    src = os.path.join(BENCH, f"hlg-1080p-{seconds}s.mp4")
    if not os.path.exists(src):
        sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", f"testsrc2=size=1920x1080:rate=30:duration={seconds}",
            "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={seconds}",
            "-vf", "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=arib-std-b67:p=bt2020:m=bt2020nc:r=tv,format=yuv420p10le",
            "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:keyint=30",
            "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc", "-color_range", "tv",
            "-tag:v", "hvc1", "-c:a", "aac", "-b:a", "128k", src])
    return src


def hdr_export_job(runs, seconds=20):
    """Issue 49's figure: an SDR 720p export of a 20 s 1080p HLG clip. `graphctl export --preset
    1280x720` (10-bit HEVC decode, gktonemap to BT.709, scale, x264) against ffmpeg doing the same
    job: 10-bit HEVC decode, zscale + tonemap (hable) to BT.709, scale, x264 at the preset's
    settings (veryfast, encode.h264's automatic rate for 1280×720, keyframes every 60 frames, no
    B-frames, high profile), AAC 128 kb/s, the index first."""
    src = hlg_source(seconds)
    out = os.path.join(BENCH, "hdrexport")
    kbps = round(1280 * 720 * 10.1 / 1000)
    ours = [GRAPHCTL, "export", src, f"{out}-graphctl.mp4", "--preset", "1280x720", "--quiet"]
    ff = ["ffmpeg", "-y", "-loglevel", "error", "-i", src, "-vf",
          "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0,"
          "zscale=t=bt709:m=bt709:r=tv,format=yuv420p,scale=1280:720",
          "-c:v", "libx264", "-preset", "veryfast", "-b:v", f"{kbps}k", "-g", "60", "-bf", "0", "-profile:v", "high",
          "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709",
          "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", f"{out}-ffmpeg.mp4"]
    # The same job with the picture scaled first (in zscale's first step): 44% of the pixels
    # tone-mapped, as an ffmpeg user who knows the chain would write it.
    ff_scaled = [a.replace("zscale=t=linear:npl=100,", "zscale=w=1280:h=720:t=linear:npl=100,").replace(",scale=1280:720", "") for a in ff]
    ff_scaled[-1] = f"{out}-ffmpeg-scaled.mp4"
    contenders = [("graphctl export (1280x720)", fresh(ours, f"{out}-graphctl.mp4")), ("ffmpeg", ff), ("ffmpeg, scaled first", ff_scaled)]
    r = alternate(contenders, runs)
    table(f"SDR export of HDR: a {seconds} s 1920×1080 30 fps HEVC Main 10 HLG + AAC MP4 → 1280×720 BT.709 H.264 (veryfast, {kbps} kb/s) + AAC 128 kb/s, index first",
          [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in zip([n for n, _ in contenders], [ours, ff, ff_scaled])], r, "ffmpeg")
    print("- goal: at most 1.0× ffmpeg")


def metadata_job(runs, files=1000):
    """Tags of 1,000 files read in one process (issue 31): graphkit-api-bench metadata (the
    container library, as Asset.metadata and graphctl probe read them) against ffprobe
    -show_format once per file, as a script would run it. The files: 1,000 one-second M4As,
    each with its own title, artist and album (ffmpeg -c copy of one encode)."""
    folder = os.path.join(BENCH, "tagged")
    paths = [os.path.join(folder, f"{i:04}.m4a") for i in range(files)]
    if not os.path.exists(paths[-1]):
        os.makedirs(folder, exist_ok=True)
        base = os.path.join(folder, "base.m4a")
        sh(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", base])
        for i, p in enumerate(paths):
            sh(["ffmpeg", "-y", "-loglevel", "error", "-i", base, "-c", "copy", "-metadata", f"title=Song {i}",
                "-metadata", "artist=GraphKit", "-metadata", "album=Bench", p])
    bench = os.path.join(ROOT, ".build", "release", "graphkit-api-bench")
    ours = [bench, "metadata"] + paths
    listing = os.path.join(BENCH, "tagged.txt")
    with open(listing, "w") as f:
        f.write("\n".join(paths) + "\n")
    ff = ["sh", "-c", f"xargs -n 1 ffprobe -v error -show_format < {listing} > /dev/null"]
    contenders = [("graphkit-api-bench metadata (one process)", ours), ("ffprobe -show_format, once per file", ff)]
    r = alternate(contenders, runs)
    table(f"Tags of {files} M4A files (title, artist, album each)",
          [(n, " ".join(c[:2] + ["FILE…"]) if c is ours else " ".join(c)) for n, c in contenders], r, "ffprobe -show_format, once per file")
    print("- goal: at most 1.0× ffprobe")


def compared(title, contenders, runs, anchor, goals):
    """Runs `contenders` alternated, prints their table (command lines from the repository's root)
    and the goals, and returns the results."""
    r = alternate(contenders, runs)
    table(title, [(n, " ".join(c).replace(ROOT + "/", "")) for n, c in contenders], r, anchor)
    print(f"- {goals}")
    return r


def loudness_job(minutes, runs):
    """EBU R128 measurement of a long stereo WAV (issue 51): `graphctl analyze --only loudness`
    (integrated, range, true peak) against ffmpeg's ebur128 filter, with and without its true
    peak (`peak=true` is the like-for-like job), and the decode-only floor. Goals: at most 1.0×
    ffmpeg's `-af ebur128`, within 1.2× the floor."""
    src = os.path.join(BENCH, f"{minutes}min.wav")
    wav(src, minutes)
    ours = [GRAPHCTL, "analyze", src, "--only", "loudness", "--json"]
    ff = ["ffmpeg", "-nostats", "-loglevel", "error", "-i", src, "-af", "ebur128", "-f", "null", "-"]
    ff_peak = ["ffmpeg", "-nostats", "-loglevel", "error", "-i", src, "-af", "ebur128=peak=true", "-f", "null", "-"]
    floor = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "decodebin", "!", "audioconvert", "!", "fakesink"]
    contenders = [("graphctl analyze --only loudness", ours), ("ffmpeg -af ebur128", ff), ("ffmpeg -af ebur128=peak=true", ff_peak),
                  ("decode floor", floor)]
    return compared(f"{minutes}-minute 44.1 kHz stereo WAV → EBU R128 loudness (integrated, range, true peak)", contenders, runs,
                    "ffmpeg -af ebur128", "goals: at most 1.0× ffmpeg -af ebur128, within 1.2× the decode floor")


def scene_cuts_1080p(seconds=600, shot=30):
    """10 minutes of 1920×1080 25 fps H.264 (x264 ultrafast, 6 Mb/s, a key frame every 2 s) made of
    `shot`-second shots of six test patterns in turn (moving, still, gradients, a counter, life,
    colour bars): a cut every 30 s, made once."""
    src = os.path.join(BENCH, f"scenes-1080p-{seconds}s.mp4")
    if os.path.exists(src):
        return src
    patterns = ["testsrc2", "smptehdbars", "gradients=speed=0.02", "testsrc",
                "life=mold=10:ratio=0.3:death_color=#202020:life_color=#e0e0e0", "rgbtestsrc"]
    shots = seconds // shot
    parts = [f"{p}{':' if '=' in p else '='}s=1920x1080:r=25,trim=duration={shot},setpts=PTS-STARTPTS,format=yuv420p[v{i}]"
             for i, p in ((i, patterns[i % len(patterns)]) for i in range(shots))]
    graph = ";".join(parts) + ";" + "".join(f"[v{i}]" for i in range(shots)) + f"concat=n={shots}:v=1:a=0[out]"
    sh(["ffmpeg", "-y", "-loglevel", "error", "-filter_complex", graph, "-map", "[out]", "-c:v", "libx264", "-preset", "ultrafast",
        "-b:v", "6M", "-g", "50", src + ".partial.mp4"])
    os.rename(src + ".partial.mp4", src)
    return src


def scenes_job(runs, threshold=10):
    """Scene detection on 10 minutes of 1080p with cuts (issue 51): `graphctl analyze --only scenes`
    against ffmpeg's scdet at the same threshold (the same score: scdet's rule), and the decode
    floors (ffmpeg, GStreamer's decodebin, and GraphKit's gkavdec decoding alone). Goal: at most
    1.0× scdet."""
    src = scene_cuts_1080p()
    ours = [GRAPHCTL, "analyze", src, "--only", "scenes", "--scene-threshold", str(threshold), "--json"]
    ff = ["ffmpeg", "-nostats", "-loglevel", "error", "-i", src, "-vf", f"scdet=threshold={threshold}", "-f", "null", "-"]
    ff_floor = ["ffmpeg", "-nostats", "-loglevel", "error", "-i", src, "-f", "null", "-"]
    gst_floor = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "decodebin", "!", "fakesink"]
    # GraphKit's decoder alone (the graphkit plugin as built in out/gstreamer-1.0): fakevideosink
    # reads video metas, so its frames go on uncopied, as into analyze's nodes.
    gk_floor = ["env", f"GST_PLUGIN_PATH={os.path.join(ROOT, 'out', 'gstreamer-1.0')}", "gst-launch-1.0", "-q", "filesrc",
                f"location={src}", "!", "qtdemux", "!", "h264parse", "!", "gkavdec", "!", "fakevideosink", "sync=false"]
    contenders = [("graphctl analyze --only scenes", ours), ("ffmpeg -vf scdet", ff), ("ffmpeg decode floor", ff_floor),
                  ("gst-launch decode floor", gst_floor), ("gst-launch gkavdec floor", gk_floor)]
    return compared(f"10-minute 1080p25 H.264 with a cut every 30 s → scene cuts (threshold {threshold})", contenders, runs,
                    "ffmpeg -vf scdet", "goal: at most 1.0× ffmpeg -vf scdet")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--jobs", default="validate,aac10,aac60,wave10,wave60,effects,cifilter,av,transcode,live,swiftapi,batch,hls,trim,export720,composition,thumbs,metadata,photo,join,graphcopy,remuxlong")
    a = p.parse_args()
    os.makedirs(BENCH, exist_ok=True)
    if not os.path.exists(GRAPHCTL):
        sys.exit("build first: swift build -c release --static-swift-stdlib")
    # Warm the GStreamer registry so that no contender pays for the plugin scan.
    sh(["gst-inspect-1.0", "avenc_aac"], stdout=subprocess.DEVNULL)
    for tool in ("gst-launch-1.0", "ffmpeg"):
        print(f"- {tool}: {shutil.which(tool)}")
    # `gst-launch-1.0 --version`'s second line is "GStreamer 1.22.0".
    print(f"- machine: {os.cpu_count()} cores; " +
          subprocess.run(["gst-launch-1.0", "--version"], capture_output=True, text=True).stdout.splitlines()[1])
    jobs = a.jobs.split(",")
    if "validate" in jobs:
        validate_job(max(10, a.runs))
    ten = aac_job(10, a.runs, True) if "aac10" in jobs else None
    if "aac60" in jobs:
        sixty = aac_job(60, a.runs, False)
        if ten:
            m10, m60 = ten["graphctl"][1], sixty["graphctl"][1]
            print(f"\n- graphctl peak RSS, 60 min against 10 min: {m60:.1f} MB / {m10:.1f} MB = {m60 / m10:.3f} (goal: within 10%)")
    if "effects" in jobs:
        effects_job()
    if "cifilter" in jobs:
        cifilter_job()
    if "av" in jobs:
        av_job(a.runs)
    if "transcode" in jobs:
        transcode_job(a.runs)
    if "live" in jobs:
        live_job()
    if "join" in jobs:
        join_job(a.runs)
    if "graphcopy" in jobs:
        graph_copy_jobs(a.runs)
    if "remuxlong" in jobs:
        remux_long_job(a.runs)
    if "swiftapi" in jobs:
        swift_api_job(a.runs)
    if "wave10" in jobs:
        waveform_job(10, a.runs)
    if "wave60" in jobs:
        waveform_job(60, a.runs)
    if "batch" in jobs:
        batch_job(a.runs)
    if "hls" in jobs:
        hls_job(a.runs)
    if "ladder" in jobs:
        ladder_job(a.runs)
    for m in (10, 60):
        if f"livehls{m}" in jobs:
            live_hls_job(m, os.path.join(BENCH, f"live-hls-{m}.json"))
    if "trim" in jobs:
        trim_job(a.runs)
    if "composition" in jobs:
        composition_job(a.runs)
    if "export720" in jobs:
        export720_job(a.runs)
    if "hdrexport" in jobs:
        hdr_export_job(a.runs)
    if "thumbs" in jobs:
        thumbs_job(a.runs)
    if "metadata" in jobs:
        metadata_job(a.runs)
    if "photo" in jobs:
        import bench_photos
        bench_photos.photo_job(a.runs, BENCH, ROOT, compared)
    if "hevc" in jobs:
        hevc_job(a.runs)
    if "opus" in jobs:
        opus_job(a.runs)
    for m in (10, 60):
        if f"loudness{m}" in jobs:
            loudness_job(m, a.runs)
    if "flac" in jobs:
        flac_job(a.runs)
    if "scenes" in jobs:
        scenes_job(a.runs)


if __name__ == "__main__":
    main()
