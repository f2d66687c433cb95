"""The once scenario: a whole `manage.py runscheduler --once` process, from its start to
its exit, over many defined jobs of which some are due.

The burst and scale scenarios time the pass inside a process that is already running;
an operator (or a cron line running `--once`) waits for the whole process: Python and
Django starting, the settings, the apps, the command's checks, the sync of the schedules
in code, then the pass and the runs. This times that, with `time.perf_counter` around
the child's start and exit, and reads back when its runs started and finished.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

from django.db import connection
from django.utils import timezone

from jobs import conf
from jobs.bench.data import delete_runs, insert_far_jobs, set_due
from jobs.bench.progress import Progress
from jobs.bench.report import Result
from jobs.models import JobHistory
from jobs.sql.bench import bench_support

# The child runs its jobs with instant simulation, as every scenario does.
INSTANT = {"JOBS_SIM_MIN_SECONDS": "0", "JOBS_SIM_MAX_SECONDS": "0", "JOBS_SIM_FAILURE_RATE": "0"}
PREFIX = "once"


def run(
    jobs: int, due: int, workers: int, progress: Progress | None = None, *, tries: int = 3
) -> Result:
    """`jobs` defined jobs (an hour apart, a month from now), of which the first `due`
    by name are due; `tries` runscheduler --once processes over them (the due jobs made
    due again, and the runs deleted, between tries), then as many with nothing due.

    `process_s`: median of the processes' start to exit; `first_start_s` and
    `last_finish_s`: when the first run started and the last one finished, after the
    process was started (medians); `empty_process_s`: a process with nothing due, which
    is the start-up and the shut-down alone."""
    progress = progress or Progress(silent=True)
    due = min(due, jobs)
    progress(f"once: creating {jobs:,} jobs", jobs)
    _define_jobs(jobs)
    busy: list[Result] = []
    for attempt in range(tries):
        progress(f"once: runscheduler --once, {due:,} of {jobs:,} due ({attempt + 1}/{tries})")
        busy.append(_time_process(due, workers))
    idle: list[Result] = []
    for attempt in range(tries):
        progress(f"once: runscheduler --once, nothing due ({attempt + 1}/{tries})")
        idle.append(_time_process(0, workers))
    progress.end()

    def median(rows: list[Result], name: str) -> float | None:
        values = [row[name] for row in rows if row[name] is not None]
        return round(statistics.median(values), 3) if values else None

    return {
        "jobs": jobs,
        "due": due,
        "workers": workers,
        "tries": tries,
        "runs": busy[-1]["runs"],
        "unfinished": busy[-1]["unfinished"],
        "process_s": median(busy, "process_s"),
        "process_max_s": max(row["process_s"] for row in busy),
        "first_start_s": median(busy, "first_start_s"),
        "last_finish_s": median(busy, "last_finish_s"),
        "empty_process_s": median(idle, "process_s"),
        "processes": busy + idle,
    }


def _define_jobs(jobs: int) -> None:
    """Jobs `once 0000000`... due an hour apart from a month on: none comes due alone."""
    insert_far_jobs(PREFIX, 0, jobs, timezone.now() + timedelta(days=30))


def _time_process(due: int, workers: int) -> Result:
    """One runscheduler --once process with the first `due` jobs due a second ago."""
    delete_runs()
    if due:
        set_due(timezone.now() - timedelta(seconds=1), names_below=f"{PREFIX} {due:07d}")
    # As the database would be a while after the last pass (PostgreSQL: VACUUM ANALYZE).
    bench_support().tidy_after_updates()
    connection.close()  # the child must not wait behind a connection of ours
    command = [
        sys.executable,
        str(conf.project_dir() / "manage.py"),
        "runscheduler",
        "--once",
        "--workers",
        str(workers),
    ]
    env = {**os.environ, **INSTANT}
    started_at = datetime.now(UTC)
    began = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"runscheduler --once failed (exit {done.returncode}):\n{done.stderr}")
    rows = list(JobHistory.objects.values_list("started_at", "finished_at", "status"))
    if len(rows) != due:
        raise RuntimeError(f"runscheduler --once made {len(rows)} runs, expected {due}")
    starts = [start for start, _, _ in rows if start is not None]
    finishes = [finish for _, finish, _ in rows if finish is not None]

    def after(moment: datetime | None) -> float | None:
        return round((moment - started_at).total_seconds(), 3) if moment else None

    return {
        "due": due,
        "process_s": round(elapsed, 3),
        "first_start_s": after(min(starts, default=None)),
        "last_finish_s": after(max(finishes, default=None)),
        "runs": len(rows),
        "unfinished": sum(1 for *_, status in rows if status not in ("success", "failed")),
    }
