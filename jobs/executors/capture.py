"""What a Python task prints or logs goes to its own run's log.

Several runs execute at once in one process (the scheduler's threads, a Huey worker's),
so sys.stdout cannot simply be swapped for a run's buffer. Instead, once per process,
sys.stdout and sys.stderr are wrapped by a stream that writes to the RunOutput of the run
the *calling thread* executes (a context variable), and to the original stream when it
executes none; and a logging handler on the root logger (and on the "jobs" logger, which
does not propagate) does the same for log records. A thread the task starts itself has
no run of its own: what it prints goes to the process's output.

Log records reach the handler when their logger lets them through: a task's logger
follows the root logger's level (WARNING in this project's LOGGING) unless configured.
"""

from __future__ import annotations

import contextvars
import io
import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from jobs.executors.output import RunOutput

_output: contextvars.ContextVar[RunOutput | None] = contextvars.ContextVar(
    "jobs_current_output", default=None
)
_install_lock = threading.Lock()

# The loggers the run handler sits on: the root, and those of LOGGING that do not
# propagate to it.
_LOGGERS = ("", "jobs")


class _RunStream(io.TextIOBase):
    """sys.stdout / sys.stderr: to the calling thread's run, else to the original."""

    def __init__(self, original: TextIO) -> None:
        self.original = original

    def write(self, text: str) -> int:
        output = _output.get()
        if output is None:
            return self.original.write(text)
        output.write(text)
        return len(text)

    def flush(self) -> None:
        if _output.get() is None:
            self.original.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False if _output.get() is not None else self.original.isatty()

    def fileno(self) -> int:
        return self.original.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.original, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


class _RunLogHandler(logging.Handler):
    """Log records of a thread executing a run, into that run's log."""

    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        output = _output.get()
        if output is None:
            return
        try:
            output.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)

    def handle(self, record: logging.LogRecord) -> bool:
        # Cheap for the records of threads that run no task (the scheduler's own).
        if _output.get() is None:
            return False
        return super().handle(record)


_handler = _RunLogHandler()


def install() -> None:
    """Wrap sys.stdout and sys.stderr and put the log handler on its loggers. Cheap when
    done already; done again when something replaced them since (logging configured
    again, a test runner's capture)."""
    if (
        isinstance(sys.stdout, _RunStream)
        and isinstance(sys.stderr, _RunStream)
        and all(_handler in logging.getLogger(name).handlers for name in _LOGGERS)
    ):
        return
    with _install_lock:
        if not isinstance(sys.stdout, _RunStream):
            sys.stdout = _RunStream(sys.stdout)  # type: ignore[assignment]
        if not isinstance(sys.stderr, _RunStream):
            sys.stderr = _RunStream(sys.stderr)  # type: ignore[assignment]
        for name in _LOGGERS:
            logger = logging.getLogger(name)
            if _handler not in logger.handlers:
                logger.addHandler(_handler)


@contextmanager
def capturing(output: RunOutput) -> Iterator[RunOutput]:
    """Send what the calling thread prints and logs to `output` for the code inside."""
    install()
    token = _output.set(output)
    try:
        yield output
    finally:
        _output.reset(token)
