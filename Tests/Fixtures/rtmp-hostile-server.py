#!/usr/bin/python3
"""A loopback RTMP server that misbehaves in one of four ways.

    rtmp-hostile-server.py PORT MODE

MODE is one of:
  ping-flood   takes the stream as a server does (handshake, connect, createStream, publish),
               reads what is published, and sends ping requests as fast as it can
  bad-name     refuses the publish: onStatus NetStream.Publish.BadName, "stream already exists"
  silent       accepts the TCP connection and never sends a byte
  bad-amf      completes the handshake, then answers connect with a _result whose AMF is cut
               short

Listens on 127.0.0.1:PORT and prints "ready"; SIGTERM stops it. Started and stopped by the
tests (LoopbackServer), by its PID.
"""
import struct
import sys
import threading

from loopback_listener import serve_forever


def amf_string(s):
    b = s.encode()
    return b"\x02" + struct.pack(">H", len(b)) + b


def amf_number(n):
    return b"\x00" + struct.pack(">d", n)


def amf_object(items):
    out = b"\x03"
    for key, value in items:
        k = key.encode()
        out += struct.pack(">H", len(k)) + k + (amf_string(value) if isinstance(value, str) else amf_number(value))
    return out + b"\x00\x00\x09"


class Connection:
    def __init__(self, sock):
        self.sock = sock
        self.in_chunk = 128
        self.out_chunk = 128
        self.streams = {}  # chunk stream id: [timestamp, length, type, stream id, payload so far]
        self.lock = threading.Lock()

    def recv_exact(self, n):
        data = b""
        while len(data) < n:
            more = self.sock.recv(n - len(data))
            if not more:
                raise OSError("closed")
            data += more
        return data

    def send(self, csid, kind, payload, stream=0):
        header = bytes([csid]) + b"\x00\x00\x00" + struct.pack(">I", len(payload))[1:] + bytes([kind]) + struct.pack("<I", stream)
        out = header + payload[:self.out_chunk]
        for at in range(self.out_chunk, len(payload), self.out_chunk):
            out += bytes([0xC0 | csid]) + payload[at:at + self.out_chunk]
        with self.lock:
            self.sock.sendall(out)

    def message(self):
        """The next whole message from the client: (type, stream id, payload)."""
        while True:
            b = self.recv_exact(1)[0]
            fmt, csid = b >> 6, b & 0x3F
            if csid == 0:
                csid = 64 + self.recv_exact(1)[0]
            elif csid == 1:
                x = self.recv_exact(2)
                csid = 64 + x[0] + x[1] * 256
            state = self.streams.setdefault(csid, [0, 0, 0, 0, b""])
            if fmt <= 2:
                h = self.recv_exact([11, 7, 3][fmt])
                ts = int.from_bytes(h[0:3], "big")
                if fmt <= 1:
                    state[1] = int.from_bytes(h[3:6], "big")
                    state[2] = h[6]
                if fmt == 0:
                    state[3] = struct.unpack("<I", h[7:11])[0]
                if ts == 0xFFFFFF:
                    self.recv_exact(4)
            state[4] += self.recv_exact(min(self.in_chunk, state[1] - len(state[4])))
            if len(state[4]) >= state[1]:
                payload, state[4] = state[4], b""
                if state[2] == 1:
                    self.in_chunk = struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF
                    continue
                return state[2], state[3], payload


def command(payload):
    """An AMF0 command's name and transaction id."""
    if not payload or payload[0] != 2:
        return None, 0
    n = struct.unpack(">H", payload[1:3])[0]
    name = payload[3:3 + n].decode("latin-1")
    txn = struct.unpack(">d", payload[4 + n:12 + n])[0] if len(payload) >= 12 + n and payload[3 + n] == 0 else 0
    return name, txn


def serve(sock, mode):
    with sock:
        try:
            if mode == "silent":
                while sock.recv(65536):
                    pass
                return
            c = Connection(sock)
            c0c1 = c.recv_exact(1537)
            sock.sendall(b"\x03" + bytes(1536) + c0c1[1:])
            c.recv_exact(1536)
            while True:
                kind, stream, payload = c.message()
                if kind not in (20, 17):
                    continue
                name, txn = command(payload[1:] if kind == 17 else payload)
                if name == "connect":
                    if mode == "bad-amf":
                        c.send(3, 20, amf_string("_result") + amf_number(txn) + b"\x03\x00\x06fmsV")
                        continue
                    c.send(2, 5, struct.pack(">I", 2500000))
                    c.send(2, 6, struct.pack(">I", 2500000) + b"\x02")
                    c.send(2, 1, struct.pack(">I", 4096))
                    c.out_chunk = 4096
                    c.send(3, 20, amf_string("_result") + amf_number(txn) + amf_object([("fmsVer", "FMS/3,0,1,123")])
                           + amf_object([("level", "status"), ("code", "NetConnection.Connect.Success"), ("description", "ok")]))
                elif name == "createStream":
                    c.send(3, 20, amf_string("_result") + amf_number(txn) + b"\x05" + amf_number(1))
                elif name == "publish":
                    if mode == "bad-name":
                        c.send(5, 20, amf_string("onStatus") + amf_number(0) + b"\x05" + amf_object([
                            ("level", "error"), ("code", "NetStream.Publish.BadName"), ("description", "stream already exists")]), stream=1)
                        continue
                    c.send(5, 20, amf_string("onStatus") + amf_number(0) + b"\x05" + amf_object([
                        ("level", "status"), ("code", "NetStream.Publish.Start"), ("description", "publishing")]), stream=1)
                    if mode == "ping-flood":
                        threading.Thread(target=flood, args=(c,), daemon=True).start()
        except OSError:
            return


def flood(c):
    """User control messages (type 4), event 6: ping requests, 64 to a write."""
    ping = bytes([0x02]) + b"\x00\x00\x00" + struct.pack(">I", 6)[1:] + b"\x04" + struct.pack("<I", 0) + b"\x00\x06\x00\x00\x00\x01"
    burst = ping * 64
    try:
        while True:
            with c.lock:
                c.sock.sendall(burst)
    except OSError:
        return


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    serve_forever(port, lambda client: serve(client, mode))


if __name__ == "__main__":
    main()
