#!/usr/bin/python3
"""A loopback RTSP server that misbehaves in one of five ways.

    rtsp-hostile-server.py PORT MODE

MODE is one of:
  mute             agrees to everything (one H.264 track, RTP interleaved over TCP, PLAY and
                   the keep-alives that follow) and never sends a packet: a camera that hangs
                   (GStreamer's rtspsrc then waits for ever over TCP)
  slow-headers     answers each request's status line, then one header line a second, for ever
                   (every read of the client's is answered within its timeout)
  endless-headers  answers each request's status line, then header lines as fast as it can
  redirect         answers every DESCRIBE with 302 Found to its own URL
  many-tracks      describes 1,000 H.264 tracks, and agrees to every SETUP

Listens on 127.0.0.1:PORT and prints "ready"; SIGTERM stops it. Started and stopped by the
tests (LoopbackServer), by its PID.
"""
import re
import signal
import socket
import sys
import threading
import time


def sdp(tracks):
    media = "".join(f"m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1\r\na=control:track{i}\r\n"
                    for i in range(tracks))
    return "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=hostile\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" + media


def reply(client, method, cseq, port, mode):
    if mode in ("slow-headers", "endless-headers"):
        client.sendall(f"RTSP/1.0 200 OK\r\nCSeq: {cseq}\r\n".encode())
        n = 0
        while True:
            n += 1
            client.sendall(f"X-Line-{n}: {'a' * 64}\r\n".encode())
            if mode == "slow-headers":
                time.sleep(1)
    head = f"RTSP/1.0 200 OK\r\nCSeq: {cseq}\r\n"
    body = ""
    if method == "OPTIONS":
        head += "Public: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER\r\n"
    elif method == "DESCRIBE" and mode == "redirect":
        head = f"RTSP/1.0 302 Found\r\nCSeq: {cseq}\r\nLocation: rtsp://127.0.0.1:{port}/stream\r\n"
    elif method == "DESCRIBE":
        body = sdp(1 if mode == "mute" else 1000)
        head += f"Content-Type: application/sdp\r\nContent-Base: rtsp://127.0.0.1:{port}/stream/\r\n"
    elif method == "SETUP":
        head += "Session: 31415926;timeout=60\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n"
    else:
        head += "Session: 31415926\r\n" + ("Range: npt=0-\r\n" if method == "PLAY" else "")
    client.sendall((head + f"Content-Length: {len(body)}\r\n\r\n" + body).encode())


def serve(client, port, mode):
    pending = b""
    with client:
        try:
            while True:
                data = client.recv(4096)
                if not data:
                    return
                pending += data
                while b"\r\n\r\n" in pending:
                    request, pending = pending.split(b"\r\n\r\n", 1)
                    text = request.decode("latin-1")
                    cseq = re.search(r"CSeq:\s*(\d+)", text, re.IGNORECASE)
                    reply(client, text.split(" ", 1)[0], cseq.group(1) if cseq else "0", port, mode)
        except OSError:
            return


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("ready", flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, port, mode), daemon=True).start()


if __name__ == "__main__":
    main()
