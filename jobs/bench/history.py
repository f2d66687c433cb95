"""A big history like a real one, for whoever needs one: 10,000 jobs and a million runs
(build_history), inserted as fast as the database takes them (jobs/bench/data.py)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from jobs.bench.data import RUN_COLUMNS, RUN_TABLE, Adapt, insert_jobs, insert_rows, job_row
from jobs.bench.progress import Progress
from jobs.runs import new_key
from jobs.sql import store
from jobs.sql.bench import bench_support

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
    plan = _History(
        rng=random.Random(seed),
        now=now or timezone.now(),
        span=timedelta(days=days),
        adapt=store().adapt_datetime,
    )
    plan.lay_out(jobs, runs)

    progress(f"pages: inserting {jobs:,} jobs", jobs)
    insert_jobs(plan.job_rows(), progress=progress)

    progress(f"pages: inserting {runs:,} runs", runs)
    support = bench_support()
    support.prepare_bulk_load()
    insert_rows(RUN_TABLE, RUN_COLUMNS, plan.run_rows(), chunk=50_000, on_chunk=progress.update)
    support.settle_bulk_load()
    # The next connection has the settings' page cache, as a server would.
    connection.close()
    progress.end()


@dataclass
class _History:
    """The jobs of a history and the grid of each one's runs, then their rows. Every
    random draw comes in a fixed order, so that a seed always gives the same history."""

    rng: random.Random
    now: datetime
    span: timedelta
    adapt: Adapt
    keys: list[str] = field(default_factory=list)
    once: list[bool] = field(default_factory=list)
    with_runs: list[int] = field(default_factory=list)
    per_job: dict[int, int] = field(default_factory=dict)
    # Each job's grid: anchor + k * every, its last occurrence within the last `every`.
    grid: dict[int, tuple[datetime, int]] = field(default_factory=dict)
    last_finished: dict[int, tuple[datetime, str]] = field(default_factory=dict)
    statuses: dict[int, str] = field(default_factory=dict)

    def lay_out(self, jobs: int, runs: int) -> None:
        self.keys = [new_key() for _ in range(jobs)]
        self.once = [i % 20 == 19 for i in range(jobs)]
        self.with_runs = [i for i in range(jobs) if not self.once[i]]
        each, extra = divmod(runs, len(self.with_runs)) if self.with_runs else (0, 0)
        self.per_job = {i: each + (1 if n < extra else 0) for n, i in enumerate(self.with_runs)}
        for i in self.with_runs:
            self._lay_out_job(i)

    def _lay_out_job(self, i: int) -> None:
        count = self.per_job[i]
        every = max(1, int(self.span.total_seconds() / max(count, 1)))
        anchor = self.now - timedelta(seconds=every * count - self.rng.uniform(0, every))
        self.grid[i] = (anchor, every)
        self.statuses[i] = "failed" if self.rng.random() < 0.15 else "success"
        last_finished_k = count - 1
        while (
            last_finished_k >= 0
            and anchor + timedelta(seconds=every * last_finished_k) > self.now - _IN_FLIGHT
        ):
            last_finished_k -= 1
        if last_finished_k >= 0:
            at = anchor + timedelta(seconds=every * last_finished_k)
            self.last_finished[i] = (at + timedelta(milliseconds=5), self.statuses[i])

    def job_rows(self) -> list[tuple]:
        return [self._job_row(i, key) for i, key in enumerate(self.keys)]

    def _job_row(self, i: int, key: str) -> tuple:
        name = f"{_WORDS[i % len(_WORDS)]}-{i:05d}"
        created = self.now - self.span
        if self.once[i]:
            at = self.now + timedelta(seconds=self.rng.uniform(60, 86400))
            row = list(job_row(self.adapt, key, name, every_seconds=1, first=at, now=created))
            row[4:8] = ["once", self.adapt(at), None, ""]
            row[12] = None  # anchor_at
            return tuple(row)
        anchor, every = self.grid[i]
        last_at, last_status = self.last_finished.get(i, (None, ""))
        return job_row(
            self.adapt,
            key,
            name,
            every_seconds=every,
            first=anchor + timedelta(seconds=every * self.per_job[i]),
            now=created,
            active=i % 10 != 3,
            last_run_at=last_at,
            last_run_status=last_status,
        )

    def run_rows(self) -> Iterator[tuple]:
        # Slot k holds every job's k-th run, so rows come out (nearly) oldest first.
        slots = max(self.per_job.values(), default=0)
        order = sorted(self.with_runs, key=lambda i: self.grid[i][0])
        for k in range(slots):
            for i in order:
                if k < self.per_job[i]:
                    yield self._run_row(i, k)

    def _run_status(self, i: int, k: int, at: datetime) -> str:
        if at > self.now - _IN_FLIGHT:
            return "running" if self.rng.random() < 0.5 else "pending"
        if k == self.per_job[i] - 1 or (i in self.last_finished and at == self.last_finished[i][0]):
            return self.statuses[i]
        return "failed" if self.rng.random() < 0.15 else "success"

    def _run_row(self, i: int, k: int) -> tuple:
        adapt = self.adapt
        anchor, every = self.grid[i]
        at = anchor + timedelta(seconds=every * k)
        status = self._run_status(i, k, at)
        started = at + timedelta(milliseconds=5)
        finished = started + timedelta(seconds=self.rng.uniform(1, 5))
        db_at = adapt(at)
        return (
            new_key(),
            self.keys[i],
            db_at,
            1,
            status,
            "schedule",
            db_at,
            None if status == "pending" else adapt(started),
            adapt(finished) if status in ("success", "failed") else None,
            adapt(started) if status == "running" else None,
            f"$ echo job {i}\nsimulated run took {(finished - started).total_seconds():.3f}"
            f" s\nexit status {0 if status == 'success' else 1}\n",
            "" if status == "pending" else f"bench-host:{i % 4}/w{i % 8}",
            db_at,
        )
