"""Outbound HTTP to vetted addresses within one deadline: what webhooks and HTTP jobs share.

- The host is resolved once and every address is checked (jobs/outbound/rules.py); the
  connection goes to the checked address itself, never to a second lookup, so a name
  that changes its answer (DNS rebinding) cannot send the request elsewhere. The Host
  header, and for https the SNI name and the certificate check, are the URL's host.
- A Deadline bounds the whole exchange (connecting, TLS, sending, the answer): a timer
  shuts the socket when it passes, so a server that trickles its answer a byte at a
  time is cut off too.
- http.client follows no redirects and never reads HTTP_PROXY / HTTPS_PROXY.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from jobs.outbound import rules as outbound

T = TypeVar("T")


class Deadline:
    """A total time limit for one delivery: shuts every socket it watches when it passes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def remaining(self) -> float:
        left = self.ends - time.monotonic()
        if left <= 0 or self.expired:
            raise TimeoutError("deadline passed")
        return left

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def expire(self) -> None:
        """End it now: what it watches is shut (a stopped run's request)."""
        self._expire()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    # shutdown() wakes a thread blocked reading the socket (close() would not); the plain
    # socket's, also for a TLS socket, whose own shutdown() would first talk TLS.
    with contextlib.suppress(OSError):  # not connected yet, or already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to vetted addresses (not to a fresh lookup of self.host)."""

    def __init__(
        self,
        host: str,
        port: int | None,
        *,
        destinations: list[outbound.Destination],
        deadline: Deadline,
    ) -> None:
        super().__init__(host, port, timeout=deadline.remaining())
        self.destinations = destinations
        self.deadline = deadline

    def open_socket(self) -> socket.socket:
        error: OSError = OSError(f"no address to connect to for {self.host}")
        for destination in self.destinations:
            sock = socket.socket(destination.family, destination.type, destination.proto)
            self.deadline.watch(sock)
            try:
                sock.settimeout(self.deadline.remaining())
                sock.connect(destination.sockaddr)
            except OSError as exc:
                sock.close()
                error = exc
                if isinstance(exc, TimeoutError) or self.deadline.expired:
                    break
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        raise error

    def connect(self) -> None:
        self.sock = self.open_socket()


class PinnedHTTPSConnection(PinnedHTTPConnection):
    default_port = http.client.HTTPS_PORT

    def __init__(self, *args: Any, context: ssl.SSLContext | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.context = context or ssl.create_default_context()

    def connect(self) -> None:
        sock = self.open_socket()
        # SNI and the certificate check are for the URL's host, not the address.
        tls = self.context.wrap_socket(sock, server_hostname=self.host)
        self.deadline.watch(tls)
        tls.settimeout(self.deadline.remaining())
        self.sock = tls


def within(deadline: Deadline, function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` in a helper thread, given up on when the deadline passes: the
    system resolver (getaddrinfo) has no timeout of its own to set."""
    outcome: dict[str, Any] = {}

    def call() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed to the caller
            outcome["error"] = exc

    helper = threading.Thread(target=call, name="outbound-resolve", daemon=True)
    helper.start()
    helper.join(deadline.remaining())
    if helper.is_alive():
        raise TimeoutError("name lookup did not finish in time")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
