"""Benchmark scenarios, run by `manage.py benchmark` inside a throwaway database.

Each scenario builds its data with raw batched inserts (executemany in big transactions:
seconds for a million rows, where the ORM would take minutes), drives the real scheduler
code, and returns a dict of figures: scalars, plus a list of rows for a sub-table.

- burst: N jobs due at the same instant, one scheduler pass with instant simulation;
- steady: jobs whose intervals add up to a rate of runs per second, the real
  Scheduler.serve() loop in a thread for a set time: lag, CPU and memory;
- scale: 100,000 and 1,000,000 defined jobs, some due: the time of one pass;
- pages: server time of the screens and the admin with a million runs (the same data
  builder serves anyone who needs a big history: `build_history`), and pruning it.
"""

from __future__ import annotations

import math
import os
import platform
import random
import statistics
import subprocess
import sys
import threading
import time
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from jobs import engine
from jobs.engine import JOB_TABLE, RUN_TABLE, RunTicket, dialect, new_key
from jobs.executors import ExecutionContext, Outcome, SimulatedExecutor
from jobs.models import JobHistory
from jobs.runtime import retention
from jobs.runtime.scheduler import Scheduler
from jobs.sql.sqlite.wal import Checkpointer

Result = dict[str, Any]

# --- progress on stderr ------------------------------------------------------------------


class Progress:
    """A one-line text progress bar: `label [#####.....]  52%  3.1 s`, redrawn in place on
    a terminal; on a pipe or file, one line when a stage starts and one when it ends."""

    WIDTH = 30

    def __init__(self, stream: TextIO | None = None, *, silent: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.silent = silent
        self.tty = self.stream.isatty()
        self.label = ""
        self.total: float | None = None
        self.began = time.perf_counter()
        self._drawn = 0.0
        self._open = False

    def __call__(self, label: str, total: float | None = None) -> None:
        self.stage(label, total)

    def stage(self, label: str, total: float | None = None) -> None:
        self.end()
        self.label, self.total, self.began = label, total, time.perf_counter()
        if self.silent:
            return
        self._open = True
        if self.tty:
            self._draw(0)
        else:
            self.stream.write(f"{label} ...\n")
            self.stream.flush()

    def update(self, done: float) -> None:
        if self._open and self.tty and time.perf_counter() - self._drawn >= 0.1:
            self._draw(done)

    def end(self) -> None:
        if not self._open:
            return
        self._open = False
        elapsed = time.perf_counter() - self.began
        if self.tty:
            self._draw(self.total or 0)
            self.stream.write("\n")
        else:
            self.stream.write(f"{self.label}: done in {elapsed:.1f} s\n")
        self.stream.flush()

    def _draw(self, done: float) -> None:
        self._drawn = time.perf_counter()
        elapsed = self._drawn - self.began
        if self.total:
            fraction = min(1.0, max(0.0, done / self.total))
            filled = round(fraction * self.WIDTH)
            bar = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {fraction * 100:3.0f}%"
        else:
            bar = ""
        self.stream.write(f"\r{self.label:<44.44} {bar} {elapsed:6.1f} s")
        self.stream.flush()


# --- the machine -------------------------------------------------------------------------


def machine_info() -> Result:
    """What a figure depends on, to compare figures between commits and machines."""
    import django

    info: Result = {
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "django": django.get_version(),
        "database": connection.vendor,
        "git_commit": None,
        "git_dirty": None,
        "load_average": load_average(),
    }
    base = Path(settings.BASE_DIR)
    try:
        info["git_commit"] = _git(base, "rev-parse", "HEAD")
        info["git_dirty"] = bool(_git(base, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def _git(base: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=base, capture_output=True, text=True, timeout=10, check=True
    )
    return done.stdout.strip()


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def load_average() -> list[float] | None:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def database_version() -> str:
    if connection.vendor == "sqlite":
        import sqlite3

        return sqlite3.sqlite_version
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        return str(cursor.fetchone()[0])


# --- memory and CPU of this process ------------------------------------------------------


def rss_mb() -> float | None:
    """Resident memory now (Linux's /proc; None elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def cpu_seconds() -> float:
    """CPU time of this process, every thread, user and system."""
    times = os.times()
    return times.user + times.system


_sqlite_library: Any = None


def sqlite_memory_mb() -> float | None:
    """Memory SQLite's allocator holds in this process (its page caches, mostly), from
    sqlite3_memory_used() through ctypes; None where the library cannot be read (or is
    not the one Python's sqlite3 module uses, which then reports nothing)."""
    global _sqlite_library
    if connection.vendor != "sqlite":
        return None
    try:
        if _sqlite_library is None:
            import ctypes
            import ctypes.util

            _sqlite_library = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
            _sqlite_library.sqlite3_memory_used.restype = ctypes.c_int64
        used = _sqlite_library.sqlite3_memory_used()
    except (OSError, AttributeError, TypeError):
        return None
    return round(used / 2**20, 1) if used > 0 else None


class RssSampler:
    """Samples resident memory (and SQLite's share of it) every `every` seconds in a
    thread of its own, into arrays: the sampling itself hardly takes memory."""

    def __init__(self, every: float = 0.25) -> None:
        self.every = every
        self.times = array("d")  # time.monotonic()
        self.rss = array("d")  # MB
        self.sqlite = array("d")  # MB, or -1 when unknown
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _sample(self) -> None:
        value = rss_mb()
        if value is not None:
            self.times.append(time.monotonic())
            self.rss.append(value)
            sqlite = sqlite_memory_mb()
            self.sqlite.append(-1.0 if sqlite is None else sqlite)

    def _loop(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(self.every):
                return

    def max_between(self, start: float, end: float) -> float | None:
        values = [mb for at, mb in zip(self.times, self.rss, strict=True) if start <= at <= end]
        return max(values) if values else None

    def series(self, start: float, end: float, points: int = 20) -> list[tuple[float, float]]:
        """About `points` (RSS, SQLite) samples evenly spread over [start, end]."""
        every = max((end - start) / points, self.every)
        out: list[tuple[float, float]] = []
        next_at = start
        for at, rss, sqlite in zip(self.times, self.rss, self.sqlite, strict=True):
            if start <= at <= end and at >= next_at:
                out.append((rss, sqlite))
                next_at = at + every
        return out


# --- inserting data fast -----------------------------------------------------------------

_JOB_COLUMNS = (
    "id",
    "name",
    "description",
    "command",
    "schedule_type",
    "scheduled_at",
    "interval",
    "interval_unit",
    "misfire_policy",
    "max_retries",
    "retry_backoff_seconds",
    "is_active",
    "anchor_at",
    "last_run_at",
    "last_run_status",
    "next_run_at",
    "created_at",
    "updated_at",
)
_RUN_COLUMNS = (
    "id",
    "job_id",
    "scheduled_for",
    "attempt",
    "status",
    "trigger",
    "not_before",
    "started_at",
    "finished_at",
    "heartbeat_at",
    "log",
    "worker",
    "created_at",
)


def insert_rows(
    table: str,
    columns: Iterable[str],
    rows: Iterable[tuple],
    *,
    chunk: int = 20_000,
    on_chunk: Callable[[int], None] | None = None,
) -> int:
    """executemany in one transaction, `chunk` rows at a time; returns the rows inserted."""
    names = list(columns)
    sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))})"
    done = 0
    batch: list[tuple] = []
    with transaction.atomic(), connection.cursor() as cursor:
        for row in rows:
            batch.append(row)
            if len(batch) == chunk:
                cursor.executemany(sql, batch)
                done += len(batch)
                batch = []
                if on_chunk:
                    on_chunk(done)
        if batch:
            cursor.executemany(sql, batch)
            done += len(batch)
            if on_chunk:
                on_chunk(done)
    return done


def _job_row(
    d: engine.Dialect,
    key: str,
    name: str,
    *,
    every_seconds: int,
    first: datetime,
    now: datetime,
    active: bool = True,
    last_run_at: datetime | None = None,
    last_run_status: str = "",
) -> tuple:
    """An interval job (every `every_seconds` s) whose next occurrence, and anchor, is `first`."""
    db_now = d.dt(now)
    db_first = d.dt(first)
    return (
        key,
        name,
        "",
        f"echo {name}",
        "interval",
        None,
        every_seconds,
        "second",
        "coalesce",
        0,
        10,
        active,
        db_first,
        d.dt(last_run_at),
        last_run_status,
        db_first if active else None,
        db_now,
        db_now,
    )


def insert_interval_jobs(
    count: int,
    due_at: datetime,
    every: timedelta,
    *,
    prefix: str = "bench",
    progress: Progress | None = None,
) -> None:
    """`count` active interval jobs whose next occurrence is `due_at`, named
    `<prefix> 0000000`, `<prefix> 0000001`, ... (so that a range of names is a range of
    the name index)."""
    now = timezone.now()
    d = dialect()
    seconds = int(every.total_seconds())
    rows = (
        _job_row(d, new_key(), f"{prefix} {i:07d}", every_seconds=seconds, first=due_at, now=now)
        for i in range(count)
    )
    insert_rows(JOB_TABLE, _JOB_COLUMNS, rows, on_chunk=progress.update if progress else None)


# --- a big history: 10,000 jobs and a million runs ---------------------------------------

_WORDS = ("backup", "report", "sync", "cleanup", "import", "export", "billing", "mail")
# Runs in the last minute are still pending or running.
_IN_FLIGHT = timedelta(seconds=60)


def build_history(
    jobs: int = 10_000,
    runs: int = 1_000_000,
    *,
    days: float = 10.0,
    seed: int = 42,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> None:
    """A history like a real one: `jobs` jobs and `runs` runs over the last `days` days.

    Every 20th job is a one-off job still to come (no runs); every 10th is disabled; the
    others are interval jobs whose runs sit exactly on their grid, about the same number
    each (a million runs over 10,000 jobs and 10 days: 100 each, one every 2.4 hours).
    Runs are inserted oldest first, as a real history is written; 15% failed, and those
    of the last minute are still pending or running. Each job's last run fields match its
    latest finished run. Names are `<word>-<index:05d>` (backup-00000, report-00001, ...).
    """
    progress = progress or Progress(silent=True)
    rng = random.Random(seed)
    now = now or timezone.now()
    d = dialect()
    span = timedelta(days=days)
    keys = [new_key() for _ in range(jobs)]
    once = [i % 20 == 19 for i in range(jobs)]
    with_runs = [i for i in range(jobs) if not once[i]]
    each, extra = divmod(runs, len(with_runs)) if with_runs else (0, 0)
    per_job = {i: each + (1 if n < extra else 0) for n, i in enumerate(with_runs)}
    # Each job's grid: anchor + k * every, its last occurrence within the last `every`.
    grid: dict[int, tuple[datetime, int]] = {}
    last_finished: dict[int, tuple[datetime, str]] = {}
    statuses: dict[int, str] = {}
    for i in with_runs:
        count = per_job[i]
        every = max(1, int(span.total_seconds() / max(count, 1)))
        anchor = now - timedelta(seconds=every * count - rng.uniform(0, every))
        grid[i] = (anchor, every)
        statuses[i] = "failed" if rng.random() < 0.15 else "success"
        last_finished_k = count - 1
        while (
            last_finished_k >= 0
            and anchor + timedelta(seconds=every * last_finished_k) > now - _IN_FLIGHT
        ):
            last_finished_k -= 1
        if last_finished_k >= 0:
            at = anchor + timedelta(seconds=every * last_finished_k)
            last_finished[i] = (at + timedelta(milliseconds=5), statuses[i])

    progress(f"pages: inserting {jobs:,} jobs", jobs)
    job_rows = []
    for i, key in enumerate(keys):
        name = f"{_WORDS[i % len(_WORDS)]}-{i:05d}"
        if once[i]:
            at = now + timedelta(seconds=rng.uniform(60, 86400))
            db_at = d.dt(at)
            row = list(_job_row(d, key, name, every_seconds=1, first=at, now=now - span))
            row[4:8] = ["once", db_at, None, ""]
            row[12] = None  # anchor_at
            job_rows.append(tuple(row))
            continue
        anchor, every = grid[i]
        last_at, last_status = last_finished.get(i, (None, ""))
        job_rows.append(
            _job_row(
                d,
                key,
                name,
                every_seconds=every,
                first=anchor + timedelta(seconds=every * per_job[i]),
                now=now - span,
                active=i % 10 != 3,
                last_run_at=last_at,
                last_run_status=last_status,
            )
        )
    insert_rows(JOB_TABLE, _JOB_COLUMNS, job_rows, on_chunk=progress.update)
    del job_rows

    def run_rows() -> Iterator[tuple]:
        # Slot k holds every job's k-th run, so rows come out (nearly) oldest first.
        slots = max(per_job.values(), default=0)
        order = sorted(with_runs, key=lambda i: grid[i][0])
        for k in range(slots):
            for i in order:
                count = per_job[i]
                if k >= count:
                    continue
                anchor, every = grid[i]
                at = anchor + timedelta(seconds=every * k)
                if at > now - _IN_FLIGHT:
                    status = "running" if rng.random() < 0.5 else "pending"
                elif k == count - 1 or (i in last_finished and at == last_finished[i][0]):
                    status = statuses[i]
                else:
                    status = "failed" if rng.random() < 0.15 else "success"
                started = at + timedelta(milliseconds=5)
                finished = started + timedelta(seconds=rng.uniform(1, 5))
                db_at = d.dt(at)
                yield (
                    new_key(),
                    keys[i],
                    db_at,
                    1,
                    status,
                    "schedule",
                    db_at,
                    None if status == "pending" else d.dt(started),
                    d.dt(finished) if status in ("success", "failed") else None,
                    d.dt(started) if status == "running" else None,
                    f"$ echo job {i}\nsimulated run took {(finished - started).total_seconds():.3f}"
                    f" s\nexit status {0 if status == 'success' else 1}\n",
                    "" if status == "pending" else f"bench-host:{i % 4}/w{i % 8}",
                    db_at,
                )

    progress(f"pages: inserting {runs:,} runs", runs)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            # Random UUID keys land all over their index: a big page cache (for this
            # connection only, dropped below) keeps the load from thrashing.
            cursor.execute("PRAGMA cache_size = -1000000")
    insert_rows(RUN_TABLE, _RUN_COLUMNS, run_rows(), chunk=50_000, on_chunk=progress.update)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            # Fold the load into the file, as SQLite's automatic checkpoints do over time.
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        else:
            cursor.execute("ANALYZE")  # what autovacuum would soon do
    # The next connection has the settings' page cache, as a server would.
    connection.close()
    progress.end()


# --- lag statistics ----------------------------------------------------------------------


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


# --- burst -------------------------------------------------------------------------------


def burst(jobs: int, workers: int, progress: Progress | None = None) -> Result:
    """`jobs` jobs due at the same instant, instant simulation, one scheduler process."""
    progress = progress or Progress(silent=True)
    progress(f"burst: creating {jobs:,} jobs", jobs)
    insert_interval_jobs(
        jobs,
        timezone.now() + timedelta(days=1),
        timedelta(hours=1),
        progress=progress,
    )
    scheduler = Scheduler(workers=workers, executor=SimulatedExecutor(min_seconds=0, max_seconds=0))
    due_at = timezone.now()
    d = dialect()
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {JOB_TABLE} SET next_run_at = %s, anchor_at = %s",
            [d.dt(due_at), d.dt(due_at)],
        )
    progress(f"burst: running {jobs:,} jobs")
    rss_before = rss_mb()
    cpu_before = cpu_seconds()
    with RssSampler() as sampler:
        began = timezone.now()
        wall = time.perf_counter()
        scheduler.run_once()
        elapsed = time.perf_counter() - wall
    cpu = cpu_seconds() - cpu_before
    rss_after = rss_mb()  # before reading the runs back, which takes memory of its own
    rows = list(
        JobHistory.objects.values_list("scheduled_for", "started_at", "finished_at", "status")
    )
    started = [(s, st) for s, st, _, _ in rows if st is not None]
    lags = [(st - s).total_seconds() for s, st in started]
    finishes = [finished for _, _, finished, _ in rows if finished is not None]
    done_within = (max(finishes) - began).total_seconds() if finishes else 0.0
    unfinished = sum(1 for *_, status in rows if status not in ("success", "failed"))
    return {
        "jobs": jobs,
        "workers": workers,
        "runs": len(rows),
        "unfinished": unfinished,
        "skipped": jobs - len(rows),
        "all_done_within_s": round(done_within, 3),
        "runs_per_s": round(len(rows) / done_within, 1) if done_within else 0.0,
        "wall_s": round(elapsed, 3),
        "lag_p50_ms": round(percentile(lags, 0.50) * 1000, 1),
        "lag_p99_ms": round(percentile(lags, 0.99) * 1000, 1),
        "lag_max_ms": round(max(lags, default=0.0) * 1000, 1),
        "lag_mean_ms": round(statistics.fmean(lags) * 1000, 1) if lags else 0.0,
        "cpu_s": round(cpu, 2),
        "rss_before_mb": rss_before,
        "rss_after_mb": rss_after,
        "rss_max_mb": sampler.max_between(float("-inf"), float("inf")),
    }


# --- steady ------------------------------------------------------------------------------

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


def _occurrences_between(first: datetime, every: float, start: datetime, end: datetime) -> int:
    """How many of first + k * every (k >= 0) fall in [start, end)."""

    def before(moment: datetime) -> int:  # occurrences earlier than `moment`
        span = (moment - first).total_seconds()
        return 0 if span <= 0 else math.ceil(span / every)

    return before(end) - before(start)


def steady(
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
    d = dialect()
    now = timezone.now()
    t0 = now + timedelta(seconds=1)
    firsts = [
        t0 + timedelta(seconds=((i * _GOLDEN) % 1.0) * every) for i, every in enumerate(intervals)
    ]
    rows = (
        _job_row(d, new_key(), f"steady {i:07d}", every_seconds=every, first=firsts[i], now=now)
        for i, every in enumerate(intervals)
    )
    insert_rows(JOB_TABLE, _JOB_COLUMNS, rows)
    connection.close()  # the scheduler's thread has its own

    window_start = t0 + timedelta(seconds=warmup)
    window_end = window_start + timedelta(seconds=seconds)
    expected = sum(
        _occurrences_between(first, every, window_start, window_end)
        for first, every in zip(firsts, intervals, strict=True)
    )
    recorder = LagRecorder(window_start, window_end)
    # This process's pruning, replaced by a fresh one whose figures are read at the end.
    background = retention.BackgroundPruning()
    retention.prune_when_due = background
    scheduler = Scheduler(workers=workers, executor=recorder)
    thread = threading.Thread(target=scheduler.serve, name="scheduler", daemon=True)

    def at(moment: datetime) -> float:  # a wall-clock moment on the monotonic clock
        return time.monotonic() + (moment - timezone.now()).total_seconds()

    progress(
        f"steady: {exact_rate:,.0f} runs/s, {warmup:g} s warm-up + {seconds:g} s",
        warmup + seconds,
    )
    rss_at_start = rss_mb()
    with RssSampler() as sampler:
        thread.start()
        start_clock, end_clock = at(window_start), at(window_end)
        trace = None
        while time.monotonic() < start_clock:
            progress.update(seconds + warmup - (end_clock - time.monotonic()))
            time.sleep(min(0.2, max(0.0, start_clock - time.monotonic())))
        cpu_start = cpu_seconds()
        rss_start = rss_mb()
        sqlite_start = sqlite_memory_mb()
        if trace_memory:
            import tracemalloc

            tracemalloc.start(10)
            trace = tracemalloc.take_snapshot()
        rss_1min = None
        while time.monotonic() < end_clock:
            if rss_1min is None and time.monotonic() >= start_clock + 60:
                rss_1min = rss_mb()
            progress.update(seconds + warmup - (end_clock - time.monotonic()))
            time.sleep(min(0.2, max(0.0, end_clock - time.monotonic())))
        cpu = cpu_seconds() - cpu_start
        rss_end = rss_mb()
        sqlite_end = sqlite_memory_mb()
        if trace is not None:
            _report_growth(trace, progress)
        # Runs of the last instants of the window may still be on their way.
        time.sleep(1.0)
        scheduler.request_stop()
        thread.join(timeout=60)
    progress.end()
    history_rows = JobHistory.objects.count()
    series = sampler.series(start_clock, end_clock)
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
        "cpu_s": round(cpu, 2),
        "cpu_percent": round(cpu / seconds * 100, 1),
        "rss_at_scheduler_start_mb": rss_at_start,
        "rss_start_mb": rss_start,
        "rss_1min_mb": rss_1min,
        "rss_end_mb": rss_end,
        "rss_max_mb": sampler.max_between(start_clock, end_clock),
        "rss_series_mb": [rss for rss, _ in series],
        # What SQLite's allocator holds (page caches of the connections), within the RSS.
        "sqlite_memory_start_mb": sqlite_start,
        "sqlite_memory_end_mb": sqlite_end,
        "sqlite_memory_series_mb": [sqlite for _, sqlite in series if sqlite >= 0],
        "keep_per_job": retention.Policy.from_settings().keep_per_job,
        "history_rows_end": history_rows,
        "pruned_runs": pruner.stats.deleted if pruner else 0,
        "prune_longest_delete_ms": round(pruner.stats.longest_statement * 1000, 1)
        if pruner
        else 0.0,
    }


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


# --- scale -------------------------------------------------------------------------------


class _NoExecutor:
    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        return Outcome(succeeded=True, log="")


def scale(
    jobs: int,
    workers: int,
    progress: Progress | None = None,
    *,
    repeat_idle: int = 20,
    repeat_due: int = 3,
) -> Result:
    """The cost of a scheduler pass with `jobs` / 10, then `jobs`, defined jobs of which
    none, `jobs` / 1000 or `jobs` / 100 are due: it must follow the due jobs, not all jobs.

    Per case: `claim_ms`, engine.claim_due() in batches until nothing is due (what a pass
    writes); `pass_ms`, one Scheduler.run_pass() with its workers stopped (claim, queue,
    poll of ready runs, reap); `idle_loop_ms`, with none due, a pass plus the look-up of
    the next due time: one turn of an idle scheduler's loop. Medians of several tries.
    """
    progress = progress or Progress(silent=True)
    sizes = sorted({max(1, jobs // 10), jobs})
    dues = sorted({max(1, jobs // 1000), max(1, jobs // 100)})
    d = dialect()
    far = timezone.now() + timedelta(days=30)
    rows: list[Result] = []
    built = 0
    for size in sizes:
        progress(f"scale: creating jobs up to {size:,}", size - built)
        now = timezone.now()
        first_index = built
        insert_rows(
            JOB_TABLE,
            _JOB_COLUMNS,
            (
                _job_row(
                    d,
                    new_key(),
                    f"scale {i:07d}",
                    every_seconds=3600,
                    first=far + timedelta(milliseconds=i),
                    now=now,
                )
                for i in range(first_index, size)
            ),
            chunk=50_000,
            on_chunk=progress.update,
        )
        built = size
        if connection.vendor != "sqlite":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        for due in [0, *dues]:
            if due > size:
                continue
            progress(f"scale: {size:,} jobs, {due:,} due")
            rows.append(_measure_pass(size, due, workers, repeat_idle if not due else repeat_due))
    progress.end()
    headline = {(row["jobs"], row["due"]): row for row in rows}
    biggest_due = max(dues)
    return {
        "jobs": jobs,
        "due": biggest_due,
        "pass_ms": headline.get((jobs, biggest_due), {}).get("pass_ms"),
        "claim_ms": headline.get((jobs, biggest_due), {}).get("claim_ms"),
        "pass_none_due_ms": headline[(jobs, 0)]["pass_ms"],
        "idle_loop_ms": headline[(jobs, 0)]["idle_loop_ms"],
        "claim_batch": settings.JOBS_CLAIM_BATCH,
        "passes": rows,
    }


def _make_due(due: int, at: datetime) -> None:
    """The first `due` jobs by name come due at `at` (a range of index jobs_job_name)."""
    if not due:
        return
    d = dialect()
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {JOB_TABLE} SET next_run_at = %s, anchor_at = %s WHERE name < %s",
            [d.dt(at), d.dt(at), f"scale {due:07d}"],
        )


def _forget_runs() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {RUN_TABLE}")


def _measure_pass(size: int, due: int, workers: int, repeat: int) -> Result:
    claims, passes, idles = [], [], []
    for _ in range(repeat):
        now = timezone.now()
        _make_due(due, now - timedelta(seconds=1))
        began = time.perf_counter()
        claimed = 0
        batch = int(settings.JOBS_CLAIM_BATCH)
        while True:
            tickets = engine.claim_due(now, limit=batch)
            claimed += len(tickets)
            if len(tickets) < batch:
                break
        claims.append(time.perf_counter() - began)
        if claimed != due:
            raise RuntimeError(f"claimed {claimed} runs, expected {due}")
        _forget_runs()

        now = timezone.now()
        _make_due(due, now - timedelta(seconds=1))
        scheduler = Scheduler(workers=workers, executor=_NoExecutor(), use_huey=False)
        began = time.perf_counter()
        stats = scheduler.run_pass(now)
        passes.append(time.perf_counter() - began)
        engine.next_wake_at(now)
        idles.append(time.perf_counter() - began)
        if stats.claimed != due:
            raise RuntimeError(f"the pass claimed {stats.claimed} runs, expected {due}")
        scheduler.shutdown()
        _forget_runs()
    return {
        "jobs": size,
        "due": due,
        "claim_ms": round(statistics.median(claims) * 1000, 2),
        "pass_ms": round(statistics.median(passes) * 1000, 2),
        "pass_max_ms": round(max(passes) * 1000, 2),
        "idle_loop_ms": round(statistics.median(idles) * 1000, 2) if not due else None,
        "tries": repeat,
    }


# --- pages (and pruning a big history) ---------------------------------------------------


class QueryCounter:
    """A connection.execute_wrapper that counts the statements (what
    CaptureQueriesContext reports, without its log that each request empties)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        self.count += 1
        return execute(sql, params, many, context)


# The pages the target (median under 100 ms with a million runs) is for.
_HEADLINE_PAGES = {
    "dashboard": "dashboard",
    "job list": "job_list",
    "job page": "job_page",
    "history": "history",
    "admin job list": "admin_jobs",
    "admin run list": "admin_runs",
}


def pages(
    jobs: int,
    runs: int,
    progress: Progress | None = None,
    *,
    days: float = 10.0,
    repeat: int = 20,
    reuse: bool = False,
    prune: bool = True,
) -> Result:
    """Server time of the screens and the admin with `jobs` jobs and `runs` runs
    (build_history), each page requested `repeat` times through Django's test Client
    (the whole middleware stack, a logged-in superuser) after a warm-up.

    Then, unless `prune` is off, the cost of pruning that history: one round probing
    every job with nothing to delete (the default 1,000 per job), and one deleting down
    to 50 runs per job.
    """
    progress = progress or Progress(silent=True)
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.test.utils import override_settings
    from django.urls import reverse

    from jobs.admin import LIST_PER_PAGE
    from jobs.models import Job
    from jobs.web.pagination import Cursor

    # WhiteNoise warns that STATIC_ROOT was never collected; irrelevant to these timings.
    warnings.filterwarnings("ignore", message="No directory at")

    if not (reuse and Job.objects.exists()):
        build_history(jobs, runs, days=days, progress=progress)
    user_model = get_user_model()
    user = user_model.objects.filter(username="bench").first() or user_model.objects.create_user(
        "bench", is_staff=True, is_superuser=True
    )
    client = Client()
    client.force_login(user)

    newest = JobHistory.objects.newest_first().first()
    busiest = Job.objects.get(pk=newest.job_id) if newest else Job.objects.order_by("name").first()
    before = JobHistory.objects.newest_first()[min(1000, max(0, runs - 1))] if newest else None
    job_page = reverse("job_detail", args=[busiest.pk])
    admin_jobs = reverse("admin:jobs_job_changelist")
    admin_runs = reverse("admin:jobs_jobhistory_changelist")
    htmx = {"HTTP_HX_REQUEST": "true"}
    total_runs = JobHistory.objects.count()
    deep_page = max(1, min(50, total_runs // LIST_PER_PAGE))  # page 50 with a million
    year = newest.created_at.year if newest else 2026
    month = newest.created_at.month if newest else 1
    listing: list[tuple[str, str, dict]] = [
        ("dashboard", "/", {}),
        ("job list", "/jobs/", {}),
        ("job page", job_page, {}),
        ("history", "/history/", {}),
        ("admin job list", admin_jobs, {}),
        ("admin run list", admin_runs, {}),
        ("dashboard (htmx)", "/", htmx),
        ("job list (htmx)", "/jobs/", htmx),
        ("job page (htmx)", job_page, htmx),
        ("history (htmx)", "/history/", htmx),
        ("jobs: search + filters, page 3", "/jobs/?q=backup&state=failed&active=yes&page=3", {}),
        ("history: failed", "/history/?status=failed", {}),
        ("history: job name", "/history/?job_name=report-0", {}),
        ("history: one job", f"/history/?job={busiest.pk}", {}),
        (
            "history: 1,000 runs back",
            f"/history/?before={Cursor.of(before)}" if before else "/",
            {},
        ),
        ("history: empty dates", "/history/?date_from=2000-01-01&date_to=2000-01-02", {}),
        ("admin index", reverse("admin:index"), {}),
        ("admin jobs: state=failed", f"{admin_jobs}?state=failed", {}),
        ("admin jobs: search", f"{admin_jobs}?q=backup-0050", {}),
        ("admin runs: failed", f"{admin_runs}?status__exact=failed", {}),
        (f"admin runs: page {deep_page}", f"{admin_runs}?p={deep_page}", {}),
        ("admin runs: one job", f"{admin_runs}?job={busiest.pk}", {}),
        ("admin runs: a year", f"{admin_runs}?created_at__year={year}", {}),
        (
            "admin runs: a month",
            f"{admin_runs}?created_at__year={year}&created_at__month={month}",
            {},
        ),
        ("admin runs: search by job", f"{admin_runs}?q=backup-0050", {}),
        ("admin runs: search (all)", f"{admin_runs}?q=backup", {}),
        ("admin job page", reverse("admin:jobs_job_change", args=[busiest.pk]), {}),
    ]
    if newest:
        listing.append(
            ("admin run page", reverse("admin:jobs_jobhistory_change", args=[newest.pk]), {})
        )

    def measure(url: str, headers: dict) -> Result:
        # Warm-up (templates compiled, caches filled), counting the queries on the way.
        for _ in range(2 if repeat > 2 else 1):
            queries = QueryCounter()
            with connection.execute_wrapper(queries):
                response = client.get(url, **headers)
            if response.status_code != 200:
                raise RuntimeError(f"{url} answered {response.status_code}")
        times, cpu = [], []
        for _ in range(repeat):
            began, cpu_began = time.perf_counter(), time.process_time()
            client.get(url, **headers)
            times.append((time.perf_counter() - began) * 1000)
            cpu.append((time.process_time() - cpu_began) * 1000)
        return {
            "median_ms": round(statistics.median(times), 1),
            "p90_ms": round(percentile(times, 0.9), 1),
            "cpu_ms": round(statistics.median(cpu), 1),
            "queries": queries.count,
        }

    rows: list[Result] = []
    progress("pages: requesting", len(listing) + 1)
    for done, (label, url, headers) in enumerate(listing):
        rows.append({"page": label, **measure(url, headers)})
        progress.update(done + 1)
    # The dashboard when its cache of completed hours is cold: it counts the whole day.
    with override_settings(JOBS_DASHBOARD_CACHE_SECONDS=0):
        rows.append({"page": "dashboard, cold cache", **measure("/", {})})
    progress.end()

    day_ago = timezone.now() - timedelta(days=1)
    result: Result = {
        "jobs": Job.objects.count(),
        "runs": total_runs,
        "runs_last_24h": JobHistory.objects.filter(created_at__gte=day_ago).count(),
        "repeat": repeat,
    }
    by_label = {row["page"]: row for row in rows}
    for label, key in _HEADLINE_PAGES.items():
        result[f"{key}_median_ms"] = by_label[label]["median_ms"]
        result[f"{key}_p90_ms"] = by_label[label]["p90_ms"]
    # For comparison, what the lists never do: count every run.
    began = time.perf_counter()
    JobHistory.objects.count()
    result["count_all_runs_ms"] = round((time.perf_counter() - began) * 1000, 1)
    result["slowest_page"] = max(rows, key=lambda row: row["median_ms"])["page"]
    result["slowest_median_ms"] = max(row["median_ms"] for row in rows)
    if prune:
        result.update(_measure_pruning(progress))
    result["pages"] = rows
    return result


def _measure_pruning(progress: Progress) -> Result:
    """Prune the big history: a round with nothing to delete, then down to 50 per job."""
    jobs = int(
        JobHistory.objects.values("job_id").distinct().count()
    )  # jobs that have runs (probed)
    progress("pruning: a round, nothing to delete")
    probe = retention.Pruner(retention.Policy(keep_per_job=1000))
    began = time.perf_counter()
    probe.step()
    probe_s = time.perf_counter() - began
    progress("pruning: down to 50 runs per job")
    before = JobHistory.objects.count()
    cut = retention.Pruner(retention.Policy(keep_per_job=50))
    # As prunehistory does it: SQLite's log checkpointed beside the deletes (jobs/wal.py).
    with Checkpointer():
        began = time.perf_counter()
        cut.step()
        cut_s = time.perf_counter() - began
    progress.end()
    return {
        "prune_round_ms": round(probe_s * 1000, 1),
        "prune_probe_us_per_job": round(probe_s / max(jobs, 1) * 1e6, 1),
        "prune_keep50_deleted": cut.stats.deleted,
        "prune_keep50_s": round(cut_s, 2),
        "prune_rows_per_s": round(cut.stats.deleted / cut_s) if cut_s else 0,
        "prune_statements": cut.stats.statements,
        "prune_longest_delete_ms": round(cut.stats.longest_statement * 1000, 1),
        "runs_after_prune": before - cut.stats.deleted,
    }
