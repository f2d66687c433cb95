"""The steady scenario: jobs whose intervals add up to a rate of runs per second, the real
Scheduler.serve() loop in a thread for a set time: lag, CPU and memory."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from jobs.bench.data import insert_jobs, job_row
from jobs.bench.lag import LagRecorder
from jobs.bench.machine import RssSampler, cpu_seconds, rss_mb, sqlite_memory_mb
from jobs.bench.progress import Progress
from jobs.bench.report import Result
from jobs.models import JobHistory
from jobs.runs import new_key
from jobs.runtime import retention
from jobs.runtime.scheduler import Scheduler
from jobs.sql import store

# Intervals of the steady scenario's jobs, in seconds: 1, 2, ... 10, in turn.
STEADY_INTERVALS = tuple(range(1, 11))
_GOLDEN = (math.sqrt(5) - 1) / 2


def steady_plan(rate: float) -> list[int]:
    """Intervals (s) of the fewest jobs, taking STEADY_INTERVALS in turn, whose runs add
    up to at least `rate` runs per second."""
    intervals: list[int] = []
    total = 0.0
    while total < rate:
        every = STEADY_INTERVALS[len(intervals) % len(STEADY_INTERVALS)]
        intervals.append(every)
        total += 1 / every
    return intervals


def occurrences_between(first: datetime, every: float, start: datetime, end: datetime) -> int:
    """How many of first + k * every (k >= 0) fall in [start, end)."""

    def before(moment: datetime) -> int:  # occurrences earlier than `moment`
        span = (moment - first).total_seconds()
        return 0 if span <= 0 else math.ceil(span / every)

    return before(end) - before(start)


@dataclass
class _Window:
    """The measured window, after the warm-up; on the monotonic clock once measured."""

    start: datetime
    end: datetime
    warmup: float
    seconds: float
    start_clock: float = 0.0
    end_clock: float = 0.0

    def elapsed(self) -> float:  # since the warm-up began, for the progress bar
        return self.seconds + self.warmup - (self.end_clock - time.monotonic())


@dataclass
class _Measured:
    """What this process used over the window (MB, seconds)."""

    rss_at_start: float | None = None
    rss_start: float | None = None
    rss_1min: float | None = None
    rss_end: float | None = None
    sqlite_start: float | None = None
    sqlite_end: float | None = None
    cpu: float = 0.0


def run(
    rate: float,
    seconds: float,
    workers: int,
    progress: Progress | None = None,
    *,
    warmup: float | None = None,
    keep_per_job: int | None = None,
    trace_memory: bool = False,
) -> Result:
    """Jobs that come due at `rate` runs per second in all, the real scheduler loop
    (Scheduler.serve) in a thread with instant simulation, measured for `seconds` after
    a warm-up: lag from scheduled_for to the start, runs per second, CPU and memory.

    Jobs run every 1, 2, ... 10 s in turn, their grids offset by the golden ratio so that
    their occurrences spread evenly over time. Pruning runs as in production (with
    `keep_per_job` in place of JOBS_HISTORY_KEEP_PER_JOB when given).
    """
    progress = progress or Progress(silent=True)
    warmup = warmup if warmup is not None else min(10.0, max(1.0, seconds / 10))
    if keep_per_job is not None:
        settings.JOBS_HISTORY_KEEP_PER_JOB = keep_per_job
    intervals = steady_plan(rate)
    exact_rate = sum(1 / every for every in intervals)
    progress(f"steady: creating {len(intervals):,} jobs", len(intervals))
    t0, firsts = _define_jobs(intervals)
    window_start = t0 + timedelta(seconds=warmup)
    window = _Window(window_start, window_start + timedelta(seconds=seconds), warmup, seconds)
    expected = sum(
        occurrences_between(first, every, window.start, window.end)
        for first, every in zip(firsts, intervals, strict=True)
    )
    recorder = LagRecorder(window.start, window.end)
    # This process's pruning, replaced by a fresh one whose figures are read at the end.
    background = retention.BackgroundPruning()
    retention.prune_when_due = background
    scheduler = Scheduler(workers=workers, executor=recorder)
    progress(
        f"steady: {exact_rate:,.0f} runs/s, {warmup:g} s warm-up + {seconds:g} s",
        warmup + seconds,
    )
    measured, sampler = _serve(scheduler, window, progress, trace_memory)
    progress.end()
    history_rows = JobHistory.objects.count()
    pruner = background.pruner
    return {
        "target_rate": round(exact_rate, 1),
        "jobs": len(intervals),
        "seconds": seconds,
        "warmup_s": warmup,
        "workers": workers,
        "expected_runs": expected,
        "runs": recorder.lags.count,
        "missed": expected - recorder.lags.count,
        "runs_per_s": round(recorder.lags.count / seconds, 1),
        **recorder.lags.figures(),
        "cpu_s": round(measured.cpu, 2),
        "cpu_percent": round(measured.cpu / seconds * 100, 1),
        **_memory_figures(measured, sampler, window),
        "keep_per_job": retention.Policy.from_settings().keep_per_job,
        "history_rows_end": history_rows,
        "pruned_runs": pruner.stats.deleted if pruner else 0,
        "prune_longest_delete_ms": round(pruner.stats.longest_statement * 1000, 1)
        if pruner
        else 0.0,
    }


def _define_jobs(intervals: list[int]) -> tuple[datetime, list[datetime]]:
    """A job per interval, their first occurrences spread over their interval from a
    second from now: that moment, and each job's first occurrence."""
    adapt = store().adapt_datetime
    now = timezone.now()
    t0 = now + timedelta(seconds=1)
    firsts = [
        t0 + timedelta(seconds=((i * _GOLDEN) % 1.0) * every) for i, every in enumerate(intervals)
    ]
    insert_jobs(
        job_row(adapt, new_key(), f"steady {i:07d}", every_seconds=every, first=firsts[i], now=now)
        for i, every in enumerate(intervals)
    )
    connection.close()  # the scheduler's thread has its own
    return t0, firsts


def _serve(
    scheduler: Scheduler, window: _Window, progress: Progress, trace_memory: bool
) -> tuple[_Measured, RssSampler]:
    """Run the scheduler in a thread through the warm-up and the window, then stop it."""
    thread = threading.Thread(target=scheduler.serve, name="scheduler", daemon=True)

    def at(moment: datetime) -> float:  # a wall-clock moment on the monotonic clock
        return time.monotonic() + (moment - timezone.now()).total_seconds()

    measured = _Measured(rss_at_start=rss_mb())
    with RssSampler() as sampler:
        thread.start()
        window.start_clock, window.end_clock = at(window.start), at(window.end)
        _wait_until(window.start_clock, window, progress)
        cpu_start = cpu_seconds()
        measured.rss_start = rss_mb()
        measured.sqlite_start = sqlite_memory_mb()
        trace = _start_tracing() if trace_memory else None

        def after_a_minute() -> None:
            if measured.rss_1min is None and time.monotonic() >= window.start_clock + 60:
                measured.rss_1min = rss_mb()

        _wait_until(window.end_clock, window, progress, each=after_a_minute)
        measured.cpu = cpu_seconds() - cpu_start
        measured.rss_end = rss_mb()
        measured.sqlite_end = sqlite_memory_mb()
        if trace is not None:
            _report_growth(trace, progress)
        # Runs of the last instants of the window may still be on their way.
        time.sleep(1.0)
        scheduler.request_stop()
        thread.join(timeout=60)
    return measured, sampler


def _wait_until(
    clock: float, window: _Window, progress: Progress, each: Callable[[], None] | None = None
) -> None:
    while time.monotonic() < clock:
        if each is not None:
            each()
        progress.update(window.elapsed())
        time.sleep(min(0.2, max(0.0, clock - time.monotonic())))


def _memory_figures(measured: _Measured, sampler: RssSampler, window: _Window) -> Result:
    series = sampler.series(window.start_clock, window.end_clock)
    return {
        "rss_at_scheduler_start_mb": measured.rss_at_start,
        "rss_start_mb": measured.rss_start,
        "rss_1min_mb": measured.rss_1min,
        "rss_end_mb": measured.rss_end,
        "rss_max_mb": sampler.max_between(window.start_clock, window.end_clock),
        "rss_series_mb": [rss for rss, _ in series],
        # What SQLite's allocator holds (page caches of the connections), within the RSS.
        "sqlite_memory_start_mb": measured.sqlite_start,
        "sqlite_memory_end_mb": measured.sqlite_end,
        "sqlite_memory_series_mb": [sqlite for _, sqlite in series if sqlite >= 0],
    }


def _start_tracing() -> Any:
    import tracemalloc

    tracemalloc.start(10)
    return tracemalloc.take_snapshot()


def _report_growth(before: Any, progress: Progress) -> None:
    """Where the memory allocated during the window went (tracemalloc), on stderr."""
    import tracemalloc

    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    stream = progress.stream
    stream.write("\ntracemalloc: biggest growth over the measured window\n")
    for stat in after.compare_to(before, "traceback")[:12]:
        stream.write(f"  {stat.size_diff / 1024:+10.1f} KiB {stat.count_diff:+8d} blocks\n")
        for line in stat.traceback.format()[-6:]:
            stream.write(f"      {line}\n")
    stream.flush()
