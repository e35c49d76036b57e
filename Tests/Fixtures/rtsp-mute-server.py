#!/usr/bin/python3
"""A loopback RTSP server that agrees to everything and sends nothing: a camera that hangs.

    rtsp-mute-server.py PORT

Answers OPTIONS, DESCRIBE (one H.264 track), SETUP (RTP interleaved over TCP), PLAY and the
keep-alives that follow with 200 OK, on 127.0.0.1:PORT, and never sends a packet. GStreamer's
rtspsrc then waits for ever over TCP (its timeouts cover the requests, not the stream), so
source.rtsp's own watch is what ends the wait. Prints "ready" once it listens; SIGTERM stops it.
Started and stopped by the tests (LoopbackServer), by its PID.
"""
import re
import signal
import socket
import sys
import threading

SDP = ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=mute\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
       "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1\r\n"
       "a=control:track0\r\n")


def answer(method, cseq, port):
    head = f"RTSP/1.0 200 OK\r\nCSeq: {cseq}\r\n"
    body = ""
    if method == "OPTIONS":
        head += "Public: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER\r\n"
    elif method == "DESCRIBE":
        body = SDP
        head += f"Content-Type: application/sdp\r\nContent-Base: rtsp://127.0.0.1:{port}/stream/\r\n"
    elif method == "SETUP":
        head += "Session: 31415926;timeout=60\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n"
    else:
        head += "Session: 31415926\r\n" + ("Range: npt=0-\r\n" if method == "PLAY" else "")
    return (head + f"Content-Length: {len(body)}\r\n\r\n" + body).encode()


def serve(client, port):
    pending = b""
    with client:
        while True:
            data = client.recv(4096)
            if not data:
                return
            pending += data
            while b"\r\n\r\n" in pending:
                request, pending = pending.split(b"\r\n\r\n", 1)
                text = request.decode("latin-1")
                cseq = re.search(r"CSeq:\s*(\d+)", text, re.IGNORECASE)
                client.sendall(answer(text.split(" ", 1)[0], cseq.group(1) if cseq else "0", port))


def main():
    port = int(sys.argv[1])
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("ready", flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, port), daemon=True).start()


if __name__ == "__main__":
    main()
