"""What the loopback fixtures share: listen on 127.0.0.1:PORT, say "ready", and serve each
connection on a thread of its own until SIGTERM (the tests' LoopbackServer stops them by PID);
and, for the RTSP ones, read a connection's requests."""
import re
import signal
import socket
import sys
import threading


def serve_forever(port, serve):
    """Calls serve(connection) on a thread for each connection to 127.0.0.1:port."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("ready", flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()


def rtsp_requests(client):
    """Yields (method, cseq, head) for each request that arrives on client (its head, up to the
    blank line), until the client closes the connection or a read fails. A request without a
    CSeq gets "0"."""
    pending = b""
    while True:
        try:
            data = client.recv(4096)
        except OSError:
            return
        if not data:
            return
        pending += data
        while b"\r\n\r\n" in pending:
            head, pending = pending.split(b"\r\n\r\n", 1)
            text = head.decode("latin-1")
            cseq = re.search(r"CSeq:\s*(\d+)", text, re.IGNORECASE)
            yield text.split(" ", 1)[0], cseq.group(1) if cseq else "0", head
