"""What the task backend's tests share: the framework's names, whichever it is, and
running what is enqueued one scheduler pass at a time."""

from __future__ import annotations

from jobs.pytasks import framework
from jobs.runtime.scheduler import Scheduler

base = framework.part("base")
exceptions = framework.part("exceptions")
module = framework.framework()
InvalidTask = framework.invalid_task_error()
READY = base.TaskResultStatus.READY
RUNNING = base.TaskResultStatus.RUNNING
SUCCESSFUL = base.TaskResultStatus.SUCCESSFUL
FAILED = base.TaskResultStatus.FAILED


def backend():
    """The default task backend, as the framework holds it now."""
    return module.task_backends["default"]


def run_enqueued(*, workers: int = 1, queues: frozenset[str] | None = None) -> None:
    """One scheduler pass with its workers, waiting (boundedly) until what it started ends."""
    options = {"queues": queues} if queues is not None else {}
    scheduler = Scheduler(workers=workers, **options)
    scheduler.start_workers()
    try:
        scheduler.run_pass()
        assert scheduler.wait_idle(timeout=60), "the enqueued runs did not end within 60 s"
    finally:
        scheduler.shutdown()
