#!/usr/bin/python3
"""A loopback RTSP server for source.rtsp's tests, made with GStreamer's RTSP server library
(python3-gi, gir1.2-gst-rtsp-server-1.0).

    rtsp-server.py PORT FILE [--video h264|h265] [--audio aac|opus|none] [--user U --password P]
                   [--stall-after SECONDS] [--tls CERTIFICATE_AND_KEY.pem]

Serves FILE (an MP4 or Matroska file holding one video and at most one audio track) at
rtsp://127.0.0.1:PORT/stream, its packets as stored (parsed and payloaded, never re-encoded),
at their own pace, to each client from its start, over TCP or UDP as the client asks. At the
file's end the stream ends (RTCP BYE, which rtspsrc takes as its end of stream) a second after
the last packet was handed on: GStreamer's server sends its BYE at once while the last packets
wait for their time in the sinks, and a client then missed the tail (1 to 4 frames on a loaded
machine). With
--user and --password, only that user may play it (basic authentication); others get 401.
With --tls, it serves RTSPS (the whole session inside TLS) with that PEM file's certificate and
key. With --stall-after, the stream stalls that many seconds after its first packet, as a camera that
hangs does: nothing more is sent, while the connection stays open and requests are still
answered. Prints "ready" once it listens; SIGTERM or SIGINT stop it. Started and stopped by the tests
(LoopbackServer), by its PID.
"""
import argparse
import signal
import sys
import threading
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gio, GLib, Gst, GstRtspServer  # noqa: E402

VIDEO = {
    "h264": "h264parse ! rtph264pay name=pay0 pt=96 config-interval=-1",
    "h265": "h265parse ! rtph265pay name=pay0 pt=96 config-interval=-1",
}
AUDIO = {
    "aac": "aacparse ! rtpmp4gpay name=pay1 pt=97",
    "opus": "opusparse ! rtpopuspay name=pay1 pt=97",
}


def hold_end(pad, info):
    """Holds a payloader's end of stream a second, so the BYE it triggers follows its packets."""
    if info.get_event().type == Gst.EventType.EOS:
        time.sleep(1.0)
    return Gst.PadProbeReturn.OK


STALL_AFTER = None
FIRST_PACKET = []
NEVER = threading.Event()


def stall(pad, info):
    """Blocks the payloader's streaming thread for good once STALL_AFTER seconds have passed
    since the stream's first packet."""
    now = time.monotonic()
    if not FIRST_PACKET:
        FIRST_PACKET.append(now)
    if now - FIRST_PACKET[0] >= STALL_AFTER:
        NEVER.wait()
    return Gst.PadProbeReturn.OK


def configure(factory, media):
    bin_ = media.get_element()
    for name in ("pay0", "pay1"):
        pay = bin_.get_by_name(name)
        if pay is not None:
            pay.get_static_pad("src").add_probe(Gst.PadProbeType.EVENT_DOWNSTREAM, hold_end)
            if STALL_AFTER is not None:
                pay.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, stall)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("file")
    parser.add_argument("--video", choices=sorted(VIDEO), default="h264")
    parser.add_argument("--audio", choices=sorted(AUDIO) + ["none"], default="aac")
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--stall-after", type=float)
    parser.add_argument("--tls")
    args = parser.parse_args()
    global STALL_AFTER
    STALL_AFTER = args.stall_after

    Gst.init(None)
    demuxer = "matroskademux" if args.file.endswith((".mkv", ".webm")) else "qtdemux"
    launch = f'( filesrc location="{args.file}" ! {demuxer} name=d d.video_0 ! queue ! {VIDEO[args.video]}'
    if args.audio != "none":
        launch += f" d.audio_0 ! queue ! {AUDIO[args.audio]}"
    launch += " )"

    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(args.port))
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(launch)
    factory.set_shared(False)
    factory.connect("media-configure", configure)
    auth = None
    if args.user is not None or args.tls is not None:
        auth = GstRtspServer.RTSPAuth()
    if args.tls is not None:
        auth.set_tls_certificate(Gio.TlsCertificate.new_from_file(args.tls))
        if args.user is None:
            anyone = GstRtspServer.RTSPToken()
            anyone.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, "anyone")
            auth.set_default_token(anyone)
            factory.add_role_from_structure(Gst.Structure.new_from_string(
                "anyone, media.factory.access=(boolean)true, media.factory.construct=(boolean)true"))
    if args.user is not None:
        token = GstRtspServer.RTSPToken()
        token.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, "viewer")
        auth.add_basic(GstRtspServer.RTSPAuth.make_basic(args.user, args.password or ""), token)
        role = Gst.Structure.new_from_string(
            "viewer, media.factory.access=(boolean)true, media.factory.construct=(boolean)true")
        factory.add_role_from_structure(role)
    if auth is not None:
        server.set_auth(auth)
    server.get_mount_points().add_factory("/stream", factory)
    if server.attach(None) == 0:
        print(f"cannot listen on 127.0.0.1:{args.port}", file=sys.stderr)
        sys.exit(1)

    loop = GLib.MainLoop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, sig, loop.quit)
    print("ready", flush=True)
    loop.run()


if __name__ == "__main__":
    main()
