"""The Celery app of the celery executor's tests: a few tasks a real worker runs.

`celery -A jobs.tests.celery_tasks worker` runs them (jobs.tests.processes.CeleryWorker);
the broker and the result backend are the Redis that JOBS_TEST_CELERY_REDIS names (a
private redis-server per test module: database 0 the broker, 1 the results). Plain
Celery, no Django: the worker is the project's, not ours.

Every task a worker receives is written down (JOBS_TEST_CELERY_RECEIPTS, one task id a
line) by the worker itself, so a test can count how many times a task was delivered.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from celery import Celery
from celery.signals import task_received

app = Celery("jobs_tests")
# The scheduler's side (the test process, or a runscheduler it starts) sends with this
# app too, and shares the worker's view of the tasks.
app.conf.update(
    task_track_started=True,
    result_extended=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
)

# The same app with nothing listening where its broker should be: sending fails.
unreachable = Celery("jobs_tests_unreachable")
unreachable.conf.update(
    broker_url="redis://127.0.0.1:9/0",
    result_backend="redis://127.0.0.1:9/1",
    broker_connection_timeout=1,
    redis_socket_connect_timeout=1,
    redis_socket_timeout=1,
)

# The app without a result backend: runs succeed once the broker took the task.
unfollowed = Celery("jobs_tests_unfollowed")


def use_redis(url: str) -> None:
    """Point the apps at the Redis server of `url`: its database 0 the broker, 1 the
    results (before they first connect)."""
    server = url.rsplit("/", 1)[0]
    app.conf.update(broker_url=f"{server}/0", result_backend=f"{server}/1")
    unfollowed.conf.update(broker_url=f"{server}/0")


use_redis(os.environ.get("JOBS_TEST_CELERY_REDIS", "redis://127.0.0.1:6379/15"))


@task_received.connect
def _write_down_receipt(request=None, **_: object) -> None:
    path = os.environ.get("JOBS_TEST_CELERY_RECEIPTS")
    if path and request is not None:
        with open(path, "a") as receipts:
            receipts.write(f"{request.id}\n")


@app.task(name="jobs_tests.add")
def add(x: int, y: int = 1) -> int:
    """Add two numbers."""
    return x + y


@app.task(name="jobs_tests.fail")
def fail(message: str) -> None:
    raise ValueError(message)


@app.task(name="jobs_tests.sleep_then_write")
def sleep_then_write(seconds: float, path: str) -> str:
    """Write our pid to `path`.started, sleep, then write `path`: a task stopped midway
    never writes `path`."""
    Path(f"{path}.started").write_text(str(os.getpid()))
    time.sleep(seconds)
    Path(path).write_text("done")
    return "slept"


@app.task(name="jobs_tests.retry_until", bind=True, max_retries=None)
def retry_until(self, release: str) -> str:
    """Fail and be retried by Celery (0.3 s later) until the file `release` exists."""
    if not Path(release).exists():
        raise self.retry(countdown=0.3, exc=RuntimeError("not released yet"))
    return "released"


@app.task(name="jobs_tests.scheduled_for")
def report_scheduled_for(scheduled_for: str | None = None) -> str | None:
    """Return the scheduled_for the scheduler sent (None when it sent none)."""
    return scheduled_for
