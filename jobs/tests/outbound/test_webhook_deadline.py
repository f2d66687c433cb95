"""A webhook whose answer the deadline cuts off in the middle of its headers was not
delivered: http.client takes the socket's end for the headers' end, so the deadline is
checked once they are read. A real loopback server sends a status line and half a header,
then stalls until the test ends."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from jobs import alerts
from jobs.alerts import InlineDispatcher
from jobs.models import NotificationAttempt
from jobs.tests.api_helpers import finish_run
from jobs.tests.factories import make_job

pytestmark = pytest.mark.django_db

TIMEOUT = 0.5
# What the deadline may overrun by on a busy machine; the server stalls far longer.
SLACK = 3.0
STALL = 30.0


@contextmanager
def stalling_server(answer: bytes) -> Iterator[int]:
    """Reads each request's headers, sends `answer`, then holds the connection open,
    silent, until the test ends."""
    server = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(answer)
                done.wait(STALL)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        done.set()
        server.close()
        thread.join(timeout=5)


PARTIAL_HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Trickle: aaa"


def test_a_webhook_cut_off_in_its_headers_is_not_delivered(settings):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_ALERT_TIMEOUT_SECONDS = TIMEOUT
    with stalling_server(PARTIAL_HEADERS) as port:
        began = time.monotonic()
        ok, code, error = alerts.post_webhook(f"http://127.0.0.1:{port}/", {"event": "x"})
        took = time.monotonic() - began
    assert (ok, code) == (False, None)
    assert error == f"timed out: no answer within {TIMEOUT:g} s"
    assert TIMEOUT <= took < TIMEOUT + SLACK


def test_the_attempt_is_recorded_failed_not_sent(settings, django_capture_on_commit_callbacks):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_ALERT_TIMEOUT_SECONDS = TIMEOUT
    settings.JOBS_ALERT_ATTEMPTS = 1
    previous = alerts.use_dispatcher(InlineDispatcher(wait=lambda seconds: False))
    try:
        with stalling_server(PARTIAL_HEADERS) as port:
            job = make_job(notify_on_failure=True, webhook_url=f"http://127.0.0.1:{port}/")
            with django_capture_on_commit_callbacks(execute=True):
                run = finish_run(job, succeeded=False)
    finally:
        alerts.use_dispatcher(previous)
    attempt = NotificationAttempt.objects.get(run=run)
    assert attempt.status != "sent"
    assert attempt.error.startswith("timed out")
