"""Tiny HTTP receivers on loopback that record what they are sent: an OTLP collector, a
Sentry ingest endpoint, a job's HTTP target."""

from __future__ import annotations

import gzip
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple


class Received(NamedTuple):
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """Records every request; answers 200 at once, or (hang=True) holds each request
    until `release()`, like a collector that accepted the connection and stalls."""

    def __init__(self, *, hang: bool = False) -> None:
        self.requests: list[Received] = []
        self.arrived = threading.Condition()
        self.released = threading.Event()
        if not hang:
            self.released.set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                encoding = (self.headers.get("Content-Encoding") or "").lower()
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver.arrived:
                    receiver.requests.append(Received(self.command, self.path, headers, body))
                    receiver.arrived.notify_all()
                receiver.released.wait(30)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_POST = do_GET = do_PUT = _record

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()

    def release(self) -> None:
        self.released.set()

    def wait_for(self, count: int, timeout: float = 20) -> list[Received]:
        """At least `count` requests (fails the test after `timeout` seconds)."""
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.requests) >= count, timeout):
                raise AssertionError(f"{len(self.requests)} requests, not {count}, in {timeout} s")
            return list(self.requests)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
