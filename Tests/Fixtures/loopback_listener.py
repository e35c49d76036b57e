"""What the loopback fixtures share: listen on 127.0.0.1:PORT, say "ready", and serve each
connection on a thread of its own until SIGTERM (the tests' LoopbackServer stops them by PID)."""
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
