"""``TCPProxy``: a loopback TCP forwarder a test can cut and restore, to play a network outage.

Tests point a client (a PostgreSQL session store, say) at the proxy's port;
:meth:`TCPProxy.stop` closes the listening socket and every forwarded
connection at once, so the port refuses connections and open ones drop, as when
the database server or the network between goes away; :meth:`TCPProxy.start`
binds the same port again. The bytes are forwarded unchanged to the real server.
"""

from __future__ import annotations

import contextlib
import socket
import threading

__all__ = ["TCPProxy"]

_CHUNK = 65536


class TCPProxy:
    """Forward ``127.0.0.1:<port>`` to *target_host*:*target_port* until stopped."""

    def __init__(self, target_host: str, target_port: int, *, port: int = 0) -> None:
        self.target = (target_host, target_port)
        self.port = port
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()

    def start(self) -> TCPProxy:
        """Listen (on the same port as before, after a :meth:`stop`) and forward."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Refuse new connections and drop every open one."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def __enter__(self) -> TCPProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # stopped
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # stopped meanwhile
                    client.close()
                    upstream.close()
                    return
                self._sockets.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(_CHUNK):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)
