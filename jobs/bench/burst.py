"""The burst scenario: `jobs` jobs due at the same instant, one scheduler pass."""

from __future__ import annotations

import statistics
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from jobs.bench.data import insert_interval_jobs, set_due, spread_over_queues
from jobs.bench.lag import percentile
from jobs.bench.machine import RssSampler, cpu_seconds, rss_mb
from jobs.bench.progress import Progress
from jobs.bench.report import Result
from jobs.executors import SimulatedExecutor
from jobs.models import JobHistory
from jobs.runtime.scheduler import Scheduler


def run(
    jobs: int,
    workers: int,
    progress: Progress | None = None,
    *,
    queues: int = 1,
    queue_limit: int = 0,
) -> Result:
    """`jobs` jobs due at the same instant, instant simulation, one scheduler process.

    With `queues` > 1 the jobs are spread evenly over queues q0, q1...; with
    `queue_limit`, each of those queues has that limit (JOBS_QUEUE_LIMITS), so the runs
    are taken by the workers from the database rather than queued in memory."""
    progress = progress or Progress(silent=True)
    progress(f"burst: creating {jobs:,} jobs", jobs)
    insert_interval_jobs(
        jobs,
        timezone.now() + timedelta(days=1),
        timedelta(hours=1),
        progress=progress,
    )
    names = [f"q{index}" for index in range(queues)] if queues > 1 else ["default"]
    if queues > 1:
        spread_over_queues(names)
    if queue_limit:
        settings.JOBS_QUEUE_LIMITS = ",".join(f"{name}={queue_limit}" for name in names)
    scheduler = Scheduler(workers=workers, executor=SimulatedExecutor(min_seconds=0, max_seconds=0))
    set_due(timezone.now())
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
    return {
        "jobs": jobs,
        "workers": workers,
        "queues": queues,
        "queue_limit": queue_limit,
        **_runs_figures(rows, jobs, began),
        "wall_s": round(elapsed, 3),
        **_lag_figures(rows),
        "cpu_s": round(cpu, 2),
        "rss_before_mb": rss_before,
        "rss_after_mb": rss_after,
        "rss_max_mb": sampler.max_between(float("-inf"), float("inf")),
    }


def _runs_figures(rows: list[tuple], jobs: int, began: datetime) -> Result:
    """How many runs there are, and how soon after the pass began all were done."""
    finishes = [finished for _, _, finished, _ in rows if finished is not None]
    done_within = (max(finishes) - began).total_seconds() if finishes else 0.0
    return {
        "runs": len(rows),
        "unfinished": sum(1 for *_, status in rows if status not in ("success", "failed")),
        "skipped": jobs - len(rows),
        "all_done_within_s": round(done_within, 3),
        "runs_per_s": round(len(rows) / done_within, 1) if done_within else 0.0,
    }


def _lag_figures(rows: list[tuple]) -> Result:
    """From scheduled_for to started_at, of the runs that started."""
    started = [(scheduled, at) for scheduled, at, *_ in rows if at is not None]
    lags = [(at - scheduled).total_seconds() for scheduled, at in started]
    return {
        "lag_p50_ms": round(percentile(lags, 0.50) * 1000, 1),
        "lag_p99_ms": round(percentile(lags, 0.99) * 1000, 1),
        "lag_max_ms": round(max(lags, default=0.0) * 1000, 1),
        "lag_mean_ms": round(statistics.fmean(lags) * 1000, 1) if lags else 0.0,
    }
