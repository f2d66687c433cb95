"""Small builders shared by the API, metrics and alerts tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.utils import timezone
from rest_framework.test import APIClient

from jobs import engine
from jobs.access.permissions import JOB_ADMINS, JOB_VIEWERS
from jobs.models import Job, JobHistory
from jobs.runs import RunResult
from jobs.tests import factories
from jobs.tests.factories import WORKER


def make_user(username: str, *, staff: bool = False) -> Any:
    """A staff user is a Job admin, anyone else a Job viewer: what migration 0006 makes of
    the users that existed before permissions were checked."""
    return factories.make_user(username, JOB_ADMINS if staff else JOB_VIEWERS, staff=staff)


def token_client(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {factories.make_token(user)}")
    return client


def finish_run(
    job: Job,
    *,
    succeeded: bool,
    log: str = "$ echo hello\nexit status 1\n",
    duration: timedelta = timedelta(seconds=2),
    now: datetime | None = None,
) -> JobHistory:
    """Take one run of `job` through the engine: run now, start, finish."""
    now = now or timezone.now()
    run = engine.run_now(job, now=now)
    tickets = [t for t in engine.ready_tickets(now) if t.run_id == run.pk]
    started = engine.start(tickets, WORKER, now=now)
    assert [t.run_id for t in started] == [run.pk]
    engine.finish(
        [
            RunResult(
                ticket=started[0],
                succeeded=succeeded,
                log=log,
                started_at=now,
                finished_at=now + duration,
            )
        ],
        WORKER,
    )
    run.refresh_from_db()
    return run


@dataclass
class Hook:
    """What the local webhook server received and how it answers."""

    answers: list[int] = field(default_factory=list)  # status per request; then 200
    received: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)  # as sent, for signatures
    release: threading.Event = field(default_factory=threading.Event)
    got_one: threading.Event = field(default_factory=threading.Event)
    url: str = ""


@contextmanager
def webhook_server(answers: list[int] | None = None, *, hold: bool = False) -> Iterator[Hook]:
    """A real HTTP server on 127.0.0.1 in a thread. With `hold`, each request waits for
    `hook.release` before it is answered (to show the sender does not wait for it)."""
    hook = Hook(answers=list(answers or []))
    if not hold:
        hook.release.set()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            body = json.loads(raw or b"null")
            with lock:
                hook.received.append(body)
                hook.headers.append(dict(self.headers))
                hook.bodies.append(raw)
                status = hook.answers.pop(0) if hook.answers else 200
            hook.got_one.set()
            hook.release.wait(timeout=10)
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield hook
    finally:
        hook.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
