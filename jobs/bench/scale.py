"""The scale scenario: 100,000 and 1,000,000 defined jobs, some due: the time of one pass."""

from __future__ import annotations

import statistics
import time
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from jobs import conf, engine
from jobs.bench.data import JOB_TABLE, delete_runs, insert_far_jobs, set_due
from jobs.bench.progress import Progress
from jobs.bench.report import Result
from jobs.executors import ExecutionContext, Outcome
from jobs.models import Blackout, Calendar
from jobs.runs import RunTicket
from jobs.runtime.scheduler import Scheduler
from jobs.sql.bench import bench_support


class _NoExecutor:
    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        return Outcome(succeeded=True, log="")


def run(
    jobs: int,
    workers: int,
    progress: Progress | None = None,
    *,
    repeat_idle: int = 20,
    repeat_due: int = 3,
    calendars: bool = False,
) -> Result:
    """The cost of a scheduler pass with `jobs` / 10, then `jobs`, defined jobs of which
    none, `jobs` / 1000 or `jobs` / 100 are due: it must follow the due jobs, not all jobs.

    Per case: `claim_ms`, engine.claim_due() in batches until nothing is due (what a pass
    writes); `pass_ms`, one Scheduler.run_pass() with its workers stopped (claim, queue,
    poll of ready runs, reap); `idle_loop_ms`, with none due, a pass plus the look-up of
    the next due time: one turn of an idle scheduler's loop, the first of a new
    scheduler; `loop_turn_ms`, the turns after it (the reaper and the heartbeat are
    throttled); `paused_loop_ms`, those turns while the scheduler is paused with those
    jobs come due meanwhile (they stay due). Medians of several tries. `calendars`: one
    job in ten on a business calendar and a global blackout window (closed while
    measured: its cost is the check, as on most passes).
    """
    progress = progress or Progress(silent=True)
    sizes = sorted({max(1, jobs // 10), jobs})
    dues = sorted({max(1, jobs // 1000), max(1, jobs // 100)})
    far = timezone.now() + timedelta(days=30)
    rows: list[Result] = []
    built = 0
    for size in sizes:
        progress(f"scale: creating jobs up to {size:,}", size - built)
        _define_jobs(built, size, far, progress)
        built = size
        if calendars:
            _add_calendars()
        for due in [0, *dues]:
            if due > size:
                continue
            progress(f"scale: {size:,} jobs, {due:,} due")
            rows.append(_measure_pass(size, due, workers, repeat_idle if not due else repeat_due))
    progress.end()
    return {**_headline(rows, jobs, max(dues)), "passes": rows}


def _define_jobs(first: int, end: int, far: datetime, progress: Progress) -> None:
    """Jobs `scale <first>` up to `scale <end>` (excluded), due an hour apart from `far`
    on: none comes due on its own during the benchmark."""
    insert_far_jobs("scale", first, end, far, progress=progress)
    bench_support().refresh_statistics()


def _add_calendars() -> None:
    """One job in ten (names ending in 0) on a Japanese business calendar, and a
    blackout window for every job, open 30 minutes a day twelve hours from now."""
    calendar, _ = Calendar.objects.get_or_create(
        name="bench", defaults={"country": "JP", "timezone": "Asia/Tokyo"}
    )
    hour = (timezone.now() + timedelta(hours=12)).hour
    Blackout.objects.get_or_create(
        name="bench window",
        defaults={"cron_expression": f"0 {hour} * * *", "duration_minutes": 30, "timezone": "UTC"},
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {JOB_TABLE} SET calendar_id = %s WHERE name LIKE %s", [calendar.pk, "%0"]
        )


def _headline(rows: list[Result], jobs: int, biggest_due: int) -> Result:
    """The figures of the biggest size: with the most jobs due, and with none."""
    by_case = {(row["jobs"], row["due"]): row for row in rows}
    busiest = by_case.get((jobs, biggest_due), {})
    return {
        "jobs": jobs,
        "due": biggest_due,
        "pass_ms": busiest.get("pass_ms"),
        "claim_ms": busiest.get("claim_ms"),
        "pass_none_due_ms": by_case[(jobs, 0)]["pass_ms"],
        "idle_loop_ms": by_case[(jobs, 0)]["idle_loop_ms"],
        "paused_loop_ms": busiest.get("paused_loop_ms"),
        "claim_batch": conf.claim_batch(),
    }


def _make_due(due: int, at: datetime) -> None:
    """The first `due` jobs by name come due at `at` (a range of index jobs_job_name)."""
    if due:
        set_due(at, names_below=f"scale {due:07d}")


def _measure_pass(size: int, due: int, workers: int, repeat: int) -> Result:
    claims, passes, idles = [], [], []
    for _ in range(repeat):
        claims.append(_time_claims(due))
        pass_s, idle_s = _time_pass(due, workers)
        passes.append(pass_s)
        idles.append(idle_s)
    turns = max(repeat, 20)
    running = _time_turns(due, workers, turns, paused=False) if not due else None
    paused = _time_turns(due, workers, turns, paused=True)
    return {
        "jobs": size,
        "due": due,
        "claim_ms": round(statistics.median(claims) * 1000, 2),
        "pass_ms": round(statistics.median(passes) * 1000, 2),
        "pass_max_ms": round(max(passes) * 1000, 2),
        "idle_loop_ms": round(statistics.median(idles) * 1000, 2) if not due else None,
        "loop_turn_ms": round(statistics.median(running) * 1000, 3) if running else None,
        "paused_loop_ms": round(statistics.median(paused) * 1000, 3),
        "tries": repeat,
    }


def _time_claims(due: int) -> float:
    """Seconds to claim `due` due jobs with engine.claim_due(), batch after batch."""
    now = timezone.now()
    _make_due(due, now - timedelta(seconds=1))
    began = time.perf_counter()
    claimed = 0
    batch = int(conf.claim_batch())
    while True:
        tickets = engine.claim_due(now, limit=batch)
        claimed += len(tickets)
        if len(tickets) < batch:
            break
    elapsed = time.perf_counter() - began
    if claimed != due:
        raise RuntimeError(f"claimed {claimed} runs, expected {due}")
    delete_runs()
    return elapsed


def _time_pass(due: int, workers: int) -> tuple[float, float]:
    """Seconds of one scheduler pass with `due` jobs due, and of that pass plus the
    look-up of the next due time (an idle loop's turn)."""
    now = timezone.now()
    _make_due(due, now - timedelta(seconds=1))
    scheduler = Scheduler(workers=workers, executor=_NoExecutor())
    # As in the loop (Scheduler.serve): the look-up before the sleep comes first, and
    # tells the pass about the pause.
    scheduler.seconds_until_next_work()
    began = time.perf_counter()
    stats = scheduler.run_pass(now)
    pass_s = time.perf_counter() - began
    scheduler.seconds_until_next_work()
    idle_s = time.perf_counter() - began
    if stats.claimed != due:
        raise RuntimeError(f"the pass claimed {stats.claimed} runs, expected {due}")
    scheduler.shutdown()
    delete_runs()
    return pass_s, idle_s


def _time_turns(due: int, workers: int, repeat: int, *, paused: bool) -> list[float]:
    """Seconds of the loop turns (a pass, then the look-up before the sleep) of one
    scheduler after its first: what it costs again and again while idle, running with
    nothing due, or paused with `due` jobs come due during the pause."""
    if paused:
        engine.pause(note="benchmark")
    now = timezone.now()
    _make_due(due, now - timedelta(seconds=1))
    scheduler = Scheduler(workers=workers, executor=_NoExecutor())
    scheduler.seconds_until_next_work()
    scheduler.run_pass(now)  # the first turn reaps and beats; the others are throttled
    scheduler.seconds_until_next_work()
    turns = []
    for _ in range(repeat):
        began = time.perf_counter()
        stats = scheduler.run_pass(now)
        scheduler.seconds_until_next_work()
        turns.append(time.perf_counter() - began)
        if stats.claimed:
            raise RuntimeError(f"an idle pass claimed {stats.claimed} runs")
    scheduler.shutdown()
    if paused:
        engine.resume()
    if due:
        set_due(timezone.now() + timedelta(days=30), names_below=f"scale {due:07d}")
    return turns
