#!/usr/bin/python3
"""A loopback RTSP server that misbehaves in one of twelve ways.

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
  huge-body        answers DESCRIBE with a Content-Length of 2,000,000,000 and sends it
  endless-fu-a     one H.264 track: after PLAY, an FU-A frame started and continued for ever
                   (slowly for its first second, then as fast as the connection takes it)
  flood            as endless-fu-a, as fast as it can from the first packet
  endless-aac      one AAC track (MPEG4-GENERIC): after PLAY, an access unit's fragments for
                   ever, none with the marker that ends it
  zero-clock       one H.264 track whose SDP says a clock rate of 0 (rtpmap H264/0); after
                   PLAY, a small key frame every 40 ms
  no-rtpmap        one H.264 track on a dynamic payload type (96) with no rtpmap to say what it
                   carries: no track a client can set up
  no-transport     as mute, but its SETUP reply chooses no transport (no Transport header)

Listens on 127.0.0.1:PORT and prints "ready"; SIGTERM stops it. Started and stopped by the
tests (LoopbackServer), by its PID.
"""
import sys
import threading
import time

from loopback_listener import rtsp_requests, serve_forever


def sdp(tracks, mode):
    if mode == "endless-aac":
        return ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=hostile\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
                "m=audio 0 RTP/AVP 97\r\na=rtpmap:97 MPEG4-GENERIC/48000/2\r\na=fmtp:97 streamtype=5;profile-level-id=1;"
                "mode=AAC-hbr;sizelength=13;indexlength=3;indexdeltalength=3;config=1190\r\na=control:track0\r\n")
    rate = 0 if mode == "zero-clock" else 90000
    rtpmap = "" if mode == "no-rtpmap" else f"a=rtpmap:96 H264/{rate}\r\n"
    media = "".join(f"m=video 0 RTP/AVP 96\r\n{rtpmap}a=fmtp:96 packetization-mode=1\r\na=control:track{i}\r\n"
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
    elif method == "DESCRIBE" and mode == "huge-body":
        client.sendall((head + "Content-Type: application/sdp\r\nContent-Length: 2000000000\r\n\r\n").encode())
        chunk = b"a=x-padding:" + b"x" * 65000 + b"\r\n"
        for _ in range(2000000000 // len(chunk)):
            client.sendall(chunk)
        return
    elif method == "DESCRIBE":
        body = sdp(1000 if mode == "many-tracks" else 1, mode)
        head += f"Content-Type: application/sdp\r\nContent-Base: rtsp://127.0.0.1:{port}/stream/\r\n"
    elif method == "SETUP":
        head += "Session: 31415926;timeout=60\r\n" + ("" if mode == "no-transport" else "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n")
    else:
        head += "Session: 31415926\r\n" + ("Range: npt=0-\r\n" if method == "PLAY" else "")
    client.sendall((head + f"Content-Length: {len(body)}\r\n\r\n" + body).encode())
    if method == "PLAY" and mode in ("endless-fu-a", "endless-aac", "flood", "zero-clock"):
        threading.Thread(target=flood, args=(client, mode), daemon=True).start()


def flood(client, mode):
    """RTP over the interleaved channel 0: one frame begun and never ended, 16 KB a packet."""
    chunk = bytes(16000)
    seq = 0
    while True:
        if mode == "zero-clock":
            # A whole IDR slice in one packet (single NAL unit, marker set), 25 a second.
            rtp = bytes([0x80, 0xE0, (seq >> 8) & 0xFF, seq & 0xFF]) + (seq * 3600).to_bytes(4, "big") \
                + bytes([0x12, 0x34, 0x56, 0x78, 0x65, 0x88, 0x84]) + bytes(200)
            try:
                client.sendall(b"$\x00" + len(rtp).to_bytes(2, "big") + rtp)
            except OSError:
                return
            seq = (seq + 1) & 0xFFFF
            time.sleep(0.04)
            continue
        if mode != "endless-aac":
            # FU indicator (NRI 3, type 28), FU header (start on the first, IDR).
            payload = bytes([0x7C, 0x85 if seq == 0 else 0x05]) + chunk
            pt = 96
        else:
            # AU-headers-length 16 bits, one AU-header: size 8191 (13 bits), index 0.
            payload = bytes([0x00, 0x10, 0xFF, 0xF8]) + chunk
            pt = 97
        rtp = bytes([0x80, pt, (seq >> 8) & 0xFF, seq & 0xFF, 0, 0, 0x10, 0, 0x12, 0x34, 0x56, 0x78]) + payload
        try:
            client.sendall(b"$\x00" + len(rtp).to_bytes(2, "big") + rtp)
        except OSError:
            return
        seq = (seq + 1) & 0xFFFF
        if mode != "flood" and seq < 100:
            time.sleep(0.01)


def serve(client, port, mode):
    with client:
        try:
            for method, cseq, _ in rtsp_requests(client):
                reply(client, method, cseq, port, mode)
        except OSError:
            return


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    serve_forever(port, lambda client: serve(client, port, mode))


if __name__ == "__main__":
    main()
