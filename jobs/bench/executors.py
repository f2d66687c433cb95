"""The executors scenario: what each kind of job costs per run, and the live log.

- For simulated (instant), python (a task that returns at once) and shell (`true`):
  `runs` jobs due at once, one `runscheduler --once` in this process with `workers`
  threads, after a warm-up pass, three times (the median is reported). The cost per run
  is the workers' time per run (wall time x workers / runs); the overhead of a kind is
  its cost less the simulated one's.
- The live log: `chatty` runs at once (a python task printing a line every 10 ms for
  `chatty_seconds`), one worker thread each: how many live-log statements the process
  sent, how many runs' logs they wrote, and how long a statement took.
"""

from __future__ import annotations

import time
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from jobs import conf, engine
from jobs.bench.data import JOB_TABLE, delete_runs, insert_interval_jobs, set_due
from jobs.bench.progress import Progress
from jobs.bench.report import Result
from jobs.executors import SimulatedExecutor
from jobs.models import JobHistory, RunStatus
from jobs.pytasks import registry
from jobs.runtime.scheduler import Scheduler

NOOP_TASK = "bench.returns_at_once"
# Each kind is measured this many times; the median is reported.
REPEATS = 3
CHATTY_TASK = "bench.chatty"


def _returns_at_once() -> None:
    return None


def _chatty(seconds: float = 5.0) -> int:
    """Print a line every 10 ms for `seconds`."""
    lines = 0
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        print(f"line {lines}: " + "x" * 60)
        lines += 1
        time.sleep(0.01)
    return lines


def _register() -> None:
    registry.discover()
    if registry.get_task(NOOP_TASK) is None:
        registry.add(_returns_at_once, name=NOOP_TASK, description="Returns at once.")
    if registry.get_task(CHATTY_TASK) is None:
        registry.add(_chatty, name=CHATTY_TASK, description="Prints for a while.")


def _make_jobs(count: int, executor: str, command: str, arguments: str = "{}") -> None:
    delete_runs()
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {JOB_TABLE}")
    insert_interval_jobs(count, timezone.now() + timedelta(days=1), timedelta(hours=1))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {JOB_TABLE} SET executor = %s, command = %s, arguments = %s",
            [executor, command, arguments],
        )
    set_due(timezone.now())


def _per_run(kind: str, runs: int, workers: int) -> Result:
    scheduler = Scheduler(
        workers=workers, executor=SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=0)
    )
    wall = time.perf_counter()
    scheduler.run_once()
    elapsed = time.perf_counter() - wall
    statuses = list(JobHistory.objects.values_list("status", flat=True))
    return {
        "kind": kind,
        "runs": len(statuses),
        "succeeded": sum(1 for status in statuses if status == RunStatus.SUCCESS),
        "wall_s": round(elapsed, 3),
        "runs_per_s": round(len(statuses) / elapsed, 1) if elapsed else 0.0,
        "worker_ms_per_run": round(elapsed * workers / max(len(statuses), 1) * 1000, 3),
    }


def _live_log(chatty: int, seconds: float) -> Result:
    statements: list[tuple[int, float, int]] = []
    write = engine.write_live_logs

    def counted(rows):  # type: ignore[no-untyped-def]
        began = time.perf_counter()
        written = write(rows)
        statements.append((len(rows), time.perf_counter() - began, sum(len(r.log) for r in rows)))
        return written

    engine.write_live_logs = counted  # type: ignore[assignment]
    try:
        _make_jobs(chatty, "python", CHATTY_TASK, f'{{"seconds": {seconds}}}')
        scheduler = Scheduler(workers=chatty)
        wall = time.perf_counter()
        scheduler.run_once()
        elapsed = time.perf_counter() - wall
    finally:
        engine.write_live_logs = write  # type: ignore[assignment]
    rows = sum(count for count, _, _ in statements)
    total = sum(duration for _, duration, _ in statements)
    return {
        "chatty_runs": chatty,
        "run_seconds": seconds,
        "wall_s": round(elapsed, 2),
        "live_log_interval_s": conf.live_log_interval(),
        "live_log_statements": len(statements),
        "live_log_rows": rows,
        "rows_per_statement": round(rows / len(statements), 1) if statements else 0.0,
        "statements_per_s": round(len(statements) / elapsed, 2) if elapsed else 0.0,
        "rows_per_s": round(rows / elapsed, 1) if elapsed else 0.0,
        "ms_per_statement": round(total / len(statements) * 1000, 2) if statements else 0.0,
        "mb_per_s": round(sum(b for *_, b in statements) / elapsed / 1e6, 2) if elapsed else 0.0,
    }


def run(
    runs: int,
    workers: int,
    progress: Progress | None = None,
    *,
    shell_runs: int | None = None,
    chatty: int = 100,
    chatty_seconds: float = 5.0,
) -> Result:
    progress = progress or Progress(silent=True)
    settings.JOBS_SHELL_ENABLED = True
    _register()
    # A first pass warms the process up (imports, statement caches) for every kind.
    for executor, command in (("simulated", "true"), ("python", NOOP_TASK), ("shell", "true")):
        _make_jobs(min(runs, 50), executor, command)
        _per_run("warm-up", min(runs, 50), workers)
    kinds = []
    for kind, executor, command, count in (
        ("simulated (instant)", "simulated", "true", runs),
        ("python (returns at once)", "python", NOOP_TASK, runs),
        ("shell (true)", "shell", "true", shell_runs or runs),
    ):
        progress(f"executors: {count:,} {kind} runs, {REPEATS} times")
        tries = []
        for _ in range(REPEATS):
            _make_jobs(count, executor, command)
            tries.append(_per_run(kind, count, workers))
        # The median try by its time per run.
        kinds.append(sorted(tries, key=lambda row: row["worker_ms_per_run"])[REPEATS // 2])
    baseline = kinds[0]["worker_ms_per_run"]
    for row in kinds:
        row["overhead_ms_per_run"] = round(row["worker_ms_per_run"] - baseline, 3)
    progress(f"executors: {chatty} chatty runs for {chatty_seconds:g} s (the live log)")
    live = _live_log(chatty, chatty_seconds)
    return {"workers": workers, **live, "per_run": kinds}
