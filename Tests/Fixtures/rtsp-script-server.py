#!/usr/bin/python3
"""A loopback RTSP server that plays a script: what fuzz-rtsp found, replayed as it was found.

    rtsp-script-server.py PORT FILE

FILE is a fuzz-rtsp input (Fuzz/Sources/fuzz-rtsp/FuzzRTSP.swift): pieces split at "|||"; the
first ones answer the client's requests in turn, "CSEQ" in each replaced by the request's
CSeq; the last one is sent right after the reply before it. Nothing more is answered; the
connection stays open. Listens on 127.0.0.1:PORT and prints "ready"; SIGTERM stops it.
"""
import sys

from loopback_listener import rtsp_requests, serve_forever


def serve(client, pieces):
    answered = 0
    with client:
        try:
            for _, cseq, _ in rtsp_requests(client):
                if answered >= len(pieces) - 1:
                    continue
                client.sendall(pieces[answered].replace(b"CSEQ", cseq.encode()))
                answered += 1
                if answered == len(pieces) - 1:
                    client.sendall(pieces[answered])
        except OSError:
            return


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    pieces = open(path, "rb").read().split(b"|||")
    serve_forever(port, lambda client: serve(client, pieces))


if __name__ == "__main__":
    main()
