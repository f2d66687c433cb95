"""Lag statistics: from a run's scheduled time to its start."""

from __future__ import annotations

import math
import threading
from array import array
from datetime import UTC, datetime

from jobs.bench.report import Result
from jobs.executors import ExecutionContext, Outcome, SimulatedExecutor
from jobs.runs import RunTicket


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


class LagHistogram:
    """Lags in 0.1 ms buckets up to 10 s (the rest in the last one), in a fixed array:
    counting a run allocates nothing, so it cannot disturb a memory measurement."""

    RESOLUTION = 0.0001
    BUCKETS = 100_001

    def __init__(self) -> None:
        self.counts = array("L", bytes(array("L").itemsize * self.BUCKETS))
        self.count = 0
        self.total = 0.0
        self.max = 0.0
        self._lock = threading.Lock()

    def add(self, seconds: float) -> None:
        seconds = max(seconds, 0.0)
        index = min(int(seconds / self.RESOLUTION), self.BUCKETS - 1)
        with self._lock:
            self.counts[index] += 1
            self.count += 1
            self.total += seconds
            if seconds > self.max:
                self.max = seconds

    def percentile_ms(self, fraction: float) -> float:
        if not self.count:
            return 0.0
        rank = max(1, math.ceil(fraction * self.count))
        seen = 0
        for index, count in enumerate(self.counts):
            seen += count
            if seen >= rank:
                return round(min((index + 1) * self.RESOLUTION, self.max) * 1000, 1)
        return round(self.max * 1000, 1)

    def figures(self) -> Result:
        return {
            "lag_p50_ms": self.percentile_ms(0.50),
            "lag_p90_ms": self.percentile_ms(0.90),
            "lag_p99_ms": self.percentile_ms(0.99),
            "lag_max_ms": round(self.max * 1000, 1),
            "lag_mean_ms": round(self.total / self.count * 1000, 1) if self.count else 0.0,
        }


class LagRecorder:
    """An instant executor (the simulated one, with no duration) that also records, for
    runs scheduled in [start, end), the lag from scheduled_for to the moment it runs.

    worker.execute() stamps started_at just before calling the executor, so this lag is
    the one the database records, to a few microseconds; reading it here rather than from
    the table afterwards lets pruning delete the runs meanwhile."""

    def __init__(self, start: datetime, end: datetime) -> None:
        self.start, self.end = start, end
        self.lags = LagHistogram()
        self.inner = SimulatedExecutor(min_seconds=0, max_seconds=0)

    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        if self.start <= ticket.scheduled_for < self.end:
            self.lags.add((datetime.now(UTC) - ticket.scheduled_for).total_seconds())
        return self.inner.execute(ticket, context)
