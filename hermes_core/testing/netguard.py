"""Refuse network access from one thread while a block of code runs.

Used to prove that a hook (``is_available``) touches no network: every
``connect``, ``connect_ex``, ``sendto`` and name lookup made *on the guarded
thread* is refused and recorded, loopback included. Other threads (a
provider's background workers started earlier) are left alone, so they are
never blamed for what the guarded call did not do.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["NetworkAttempt", "block_network"]


class NetworkAttempt(OSError):
    """Raised inside the guarded code in place of a network operation."""


@contextmanager
def block_network() -> Iterator[list[str]]:
    """Refuse network operations of the current thread; yields the list of attempts made."""
    attempts: list[str] = []
    guarded = threading.get_ident()
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_sendto = socket.socket.sendto
    real_getaddrinfo = socket.getaddrinfo
    real_gethostbyname = socket.gethostbyname

    def refuse(what: str) -> NetworkAttempt:
        attempts.append(what)
        return NetworkAttempt(f"network access refused by the conformance suite: {what}")

    def is_inet(sock: socket.socket) -> bool:
        return sock.family in (socket.AF_INET, socket.AF_INET6)

    def connect(sock: socket.socket, address: Any) -> Any:
        if threading.get_ident() == guarded and is_inet(sock):
            raise refuse(f"connect to {address!r}")
        return real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> Any:
        if threading.get_ident() == guarded and is_inet(sock):
            raise refuse(f"connect_ex to {address!r}")
        return real_connect_ex(sock, address)

    def sendto(sock: socket.socket, *args: Any) -> Any:
        if threading.get_ident() == guarded and is_inet(sock):
            raise refuse(f"sendto {args[-1]!r}")
        return real_sendto(sock, *args)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == guarded:
            raise refuse(f"DNS lookup of {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def gethostbyname(host: str) -> str:
        if threading.get_ident() == guarded:
            raise refuse(f"DNS lookup of {host!r}")
        return real_gethostbyname(host)

    socket.socket.connect = connect  # type: ignore[method-assign, assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign, assignment]
    socket.socket.sendto = sendto  # type: ignore[method-assign, assignment]
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    try:
        yield attempts
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]
        socket.socket.sendto = real_sendto  # type: ignore[method-assign]
        socket.getaddrinfo = real_getaddrinfo
        socket.gethostbyname = real_gethostbyname
