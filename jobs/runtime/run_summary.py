"""One log line now and then about the runs this process finished, instead of two per run.

`runscheduler` counts the runs the engine records as finished here (its runs_finished
event: those its workers finished, and those its reaper failed) and, every `every`
seconds in which some finished, logs how many succeeded and failed. scripts/start turns
the per-run lines off (RUN_LOG_LEVEL=WARNING), so its terminal shows this line instead.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import NamedTuple

from jobs.engine import events
from jobs.runs import RunResult
from jobs.sql.base import Operations

logger = logging.getLogger(__name__)


class Tally(NamedTuple):
    succeeded: int
    failed: int


def describe(tally: Tally, seconds: float) -> str:
    """The summary line: "runs in the last 60 s: 12 succeeded, 3 failed"."""
    return f"runs in the last {seconds:g} s: {tally.succeeded} succeeded, {tally.failed} failed"


class RunSummary:
    """Counts finished runs (a runs_finished listener) and logs them every `every` s."""

    def __init__(self, every: float) -> None:
        if every <= 0:
            raise ValueError("every must be positive")
        self.every = every
        self._lock = threading.Lock()
        self._succeeded = 0
        self._failed = 0
        self._since = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="run-summary", daemon=True)

    def count(self, ops: Operations, finished: Sequence[RunResult]) -> None:
        """The listener: a sum, so that it costs nothing beside recording the runs."""
        succeeded = sum(1 for result in finished if result.succeeded)
        with self._lock:
            self._succeeded += succeeded
            self._failed += len(finished) - succeeded

    def take(self) -> tuple[Tally, float]:
        """The counts since the last take and the seconds they cover; starts again at zero."""
        with self._lock:
            tally = Tally(self._succeeded, self._failed)
            self._succeeded = self._failed = 0
            now = time.monotonic()
            seconds, self._since = now - self._since, now
        return tally, seconds

    def start(self) -> None:
        events.on_runs_finished(self.count)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and log what is left (the runs finished during the shutdown)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._log()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self._log()

    def _log(self) -> None:
        tally, seconds = self.take()
        if tally.succeeded or tally.failed:
            logger.info(describe(tally, max(round(seconds), 1)))
