#!/usr/bin/python3
"""A WHIP endpoint (RFC 9725) on 127.0.0.1 for sink.whip's tests, made with GStreamer's webrtcbin
(python3-gi, gir1.2-gst-plugins-bad-1.0, gstreamer1.0-nice): each POST of an SDP offer is a
session, answered 201 with the answer and a Location; what each session receives is recorded as
sent, the H.264 into PREFIX-video.mkv and the Opus into PREFIX-audio.mkv; a DELETE of the
Location ends it, the files complete. Prints one line per event: "session ID", "media KIND",
"deleted ID", "ended ID".

    whip-server.py --port PORT --output PREFIX [--token TOKEN] [--refuse STATUS] [--certificate PEM] [--answer-only]

--token: a POST without "Authorization: Bearer TOKEN" is answered 401. --refuse: every POST
is answered STATUS, with no SDP. --certificate: HTTPS, with the certificate and key in PEM. --answer-only: the session is
answered, then its webrtcbin stopped (it never connects); a DELETE still ends it. Run by /usr/bin/python3 (Debian's, which has gi).
"""
import argparse
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gi

gi.require_version('Gst', '1.0')
gi.require_version('GstWebRTC', '1.0')
gi.require_version('GstSdp', '1.0')
from gi.repository import Gst, GstSdp, GstWebRTC  # noqa: E402

Gst.init(None)


def say(line):
    print(line, flush=True)


class Session:
    def __init__(self, sid, prefix):
        self.sid, self.prefix = sid, prefix
        self.pipeline = Gst.Pipeline.new()
        self.webrtc = Gst.ElementFactory.make('webrtcbin')
        self.webrtc.set_property('bundle-policy', GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
        self.pipeline.add(self.webrtc)
        self.inputs, self.ended = [], []
        self.lock = threading.Lock()
        self.webrtc.connect('pad-added', self.on_pad)
        self.pipeline.set_state(Gst.State.PLAYING)

    def on_pad(self, _, pad):
        name = pad.get_current_caps().get_structure(0).get_string('encoding-name')
        kind, chain = {'H264': ('video', ['rtph264depay', 'h264parse']), 'OPUS': ('audio', ['rtpopusdepay', 'opusparse'])}.get(name, (None, None))
        if kind is None:
            return
        say('media ' + kind)
        elements = [Gst.ElementFactory.make(n) for n in chain + ['matroskamux', 'filesink']]
        elements[-1].set_property('location', '%s-%s.mkv' % (self.prefix, kind))
        if kind == 'video':
            # As a browser does: a key frame asked for (PLI) at the start and after a loss.
            elements[0].set_property('request-keyframe', True)
            elements[0].set_property('wait-for-keyframe', True)
        for e in elements:
            self.pipeline.add(e)
        for a, b in zip(elements, elements[1:]):
            a.link(b)
        done = threading.Event()
        elements[-1].get_static_pad('sink').add_probe(Gst.PadProbeType.EVENT_DOWNSTREAM,
                                                      lambda p, info: (info.get_event().type == Gst.EventType.EOS and done.set()) or Gst.PadProbeReturn.OK)
        for e in elements:
            e.sync_state_with_parent()
        pad.link(elements[0].get_static_pad('sink'))
        with self.lock:
            self.inputs.append(elements[0])
            self.ended.append(done)

    def answer(self, offer_text):
        _, sdp = GstSdp.SDPMessage.new_from_text(offer_text)
        offer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.OFFER, sdp)
        # Each promise and its reply are kept until done with: what a reply holds goes with them.
        remote = Gst.Promise.new()
        self.webrtc.emit('set-remote-description', offer, remote)
        remote.wait()
        made = Gst.Promise.new()
        self.webrtc.emit('create-answer', None, made)
        made.wait()
        reply = made.get_reply()
        answer = reply.get_value('answer')
        local = Gst.Promise.new()
        self.webrtc.emit('set-local-description', answer, local)
        local.wait()
        for _ in range(200):
            if self.webrtc.get_property('ice-gathering-state') == GstWebRTC.WebRTCICEGatheringState.COMPLETE:
                break
            time.sleep(0.05)
        return self.webrtc.get_property('local-description').sdp.as_text()

    def end(self):
        with self.lock:
            inputs, ended = list(self.inputs), list(self.ended)
        for depay in inputs:
            depay.get_static_pad('sink').send_event(Gst.Event.new_eos())
        for done in ended:
            done.wait(5)
        self.pipeline.set_state(Gst.State.NULL)
        say('ended ' + self.sid)


sessions = {}


class Endpoint(BaseHTTPRequestHandler):
    def reply(self, status, body=b'', headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        offer = self.rfile.read(int(self.headers.get('Content-Length', 0))).decode()
        if args.refuse:
            return self.reply(args.refuse)
        if args.token and self.headers.get('Authorization') != 'Bearer ' + args.token:
            return self.reply(401)
        if self.headers.get('Content-Type') != 'application/sdp' or 'm=' not in offer:
            return self.reply(415)
        sid = uuid.uuid4().hex
        session = Session(sid, args.output)
        answer = session.answer(offer).encode()
        if args.answer_only:
            session.pipeline.set_state(Gst.State.NULL)
        sessions[sid] = session
        say('session ' + sid)
        self.reply(201, answer, [('Content-Type', 'application/sdp'), ('Location', '/whip/session/' + sid)])

    def do_DELETE(self):
        sid = self.path.rsplit('/', 1)[-1]
        session = sessions.pop(sid, None)
        if session is None:
            return self.reply(404)
        say('deleted ' + sid)
        session.end()
        self.reply(200)

    def log_message(self, *_):
        pass


parser = argparse.ArgumentParser()
parser.add_argument('--port', type=int, required=True)
parser.add_argument('--output', required=True)
parser.add_argument('--token')
parser.add_argument('--refuse', type=int)
parser.add_argument('--certificate')
parser.add_argument('--answer-only', action='store_true')
args = parser.parse_args()
server = ThreadingHTTPServer(('127.0.0.1', args.port), Endpoint)
if args.certificate:
    import ssl
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(args.certificate)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
say('listening %d' % args.port)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
for s in list(sessions.values()):
    s.end()
sys.exit(0)
