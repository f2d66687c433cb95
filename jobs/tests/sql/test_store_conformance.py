"""The store's contract, one operation at a time, on whatever database the suite runs on.

Every test goes through `store()`, never a vendor's class, so the same tests pin SQLite in
the normal run, PostgreSQL when DATABASE_URL points there, and any vendor added later:
a new vendor is done when this module passes on it. Each test says what one operation
returns, what it changes and what it leaves alone; a conditional update that loses its
race returns nothing and changes nothing.

Rows are built with jobs/tests/factories.py and read back through the ORM, so that a
test checks the database, not the store's own reading of it. Values go in as the engine
sends them: keys as 32 hex digits, datetimes adapted by the store (`db()`).

A few contracts are pinned again with two transactions at once, each on a connection of
its own, as two scheduler processes meet; and batches larger than one statement takes.

Each test names the operations it covers (`@contract(...)`); the last tests fail if a
public operation of `Operations`, or a method of `Store`, has no test here.
"""

from __future__ import annotations

import inspect
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.db.models import Count

from jobs.models import (
    ExecutorKind,
    Job,
    JobHistory,
    NotificationAttempt,
    RunStatus,
    SchedulerState,
    Trigger,
)
from jobs.runs import RunTicket
from jobs.sql import readings, store
from jobs.sql.base import (
    LIVE_LOGS_PER_STATEMENT,
    ROWS_PER_STATEMENT,
    Claimed,
    JobsMoved,
    Operations,
    Store,
)
from jobs.sql.rows import (
    ActiveRun,
    CancelledRun,
    ChainedRun,
    ChainLink,
    FailureStreak,
    FinishedRun,
    JobMove,
    JobOutcome,
    JobPageRow,
    JobStatus,
    LiveLog,
    NewRun,
    QueueRoom,
    Replacement,
    RetryRun,
    RunningLong,
    SkippedRun,
    TimelineJob,
    WakeUp,
    WatchedJob,
)
from jobs.tests.factories import NOW, WORKER, make_job, make_run

pytestmark = pytest.mark.django_db

PENDING, RUNNING = RunStatus.PENDING.value, RunStatus.RUNNING.value
SUCCESS, FAILED = RunStatus.SUCCESS.value, RunStatus.FAILED.value
SKIPPED, CANCELLED = RunStatus.SKIPPED.value, RunStatus.CANCELLED.value
OTHER_WORKER = "other-host:2/w1"
SIM = ExecutorKind.SIMULATED.value

# The names the tests below cover, filled by @contract as the module is read.
COVERED: list[str] = []

Test = TypeVar("Test", bound=Callable[..., Any])


def contract(*names: str) -> Callable[[Test], Test]:
    """Mark a test as pinning the contract of these operations or store methods."""

    def mark(test: Test) -> Test:
        COVERED.extend(names)
        return test

    return mark


@pytest.fixture(autouse=True)
def _at_now(clock):
    """Every test runs at NOW, frozen: the rows' times below are offsets from it."""
    return clock


@pytest.fixture
def s() -> Store:
    return store()


def at(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


def db(value: datetime | None) -> object:
    """A datetime as the engine passes it to an operation."""
    return store().adapt_datetime(value)


def key(row: Job | JobHistory) -> str:
    return row.pk.hex


def new_key() -> str:
    return uuid.uuid4().hex


def fresh(row: Any) -> Any:
    row.refresh_from_db()
    return row


def due_job(seconds: float, **fields: Any) -> Job:
    """A job whose next_run_at is `seconds` from NOW (negative: due)."""
    job = make_job(**fields)
    Job.objects.filter(pk=job.pk).update(next_run_at=at(seconds))
    return fresh(job)


def a_run(job: Job, seconds: float, status: str = SUCCESS, **fields: Any) -> JobHistory:
    """A run of `job` scheduled, due and created `seconds` from NOW (see make_run)."""
    return make_run(job, at=at(seconds), status=status, **fields)


def new_run(job: Job, seconds: float, **fields: Any) -> NewRun:
    """A pending first attempt as the claim builds it, values adapted."""
    when = db(at(seconds))
    values: dict[str, Any] = {
        "key": new_key(),
        "job_key": key(job),
        "scheduled_for": when,
        "attempt": 1,
        "status": PENDING,
        "trigger": Trigger.SCHEDULE.value,
        "not_before": when,
        "log": "",
        "worker": "",
        "created_at": db(NOW),
        "dispatched_at": None,
        "arguments": None,
        "queue": job.queue,
        "priority": job.priority,
        "started_at": None,
        "heartbeat_at": None,
    }
    values.update(fields)
    return NewRun(**values)


def statuses(*runs: JobHistory) -> list[str]:
    return [fresh(run).status for run in runs]


# --- claiming ---------------------------------------------------------------------------


@contract("due_jobs")
def test_due_jobs_are_the_active_jobs_whose_time_has_come_oldest_first(s):
    later_due = due_job(-10, name="later", queue="slow", priority=3)
    earliest = due_job(-20, name="earliest")
    due_job(60, name="future")
    due_job(-30, name="inactive", is_active=False)

    with s.reading() as ops:
        due = ops.due_jobs(db(NOW), 10)
        first = ops.due_jobs(db(NOW), 1)

    assert [job.key for job in due] == [key(earliest), key(later_due)]
    assert [job.key for job in first] == [key(earliest)]
    row = due[1]
    assert (row.name, row.next_run_at, row.queue, row.priority) == ("later", at(-10), "slow", 3)
    assert row.executor == ExecutorKind.SIMULATED.value
    assert (row.interval, row.interval_unit, row.schedule_type) == (10, "second", "interval")


@contract("move_jobs")
def test_move_jobs_moves_only_the_jobs_that_still_have_the_time_read(s):
    kept, moved_meanwhile, finished = due_job(-10), due_job(-10), due_job(-10)
    with s.reading() as ops:
        read = {job.key: job.read_next_run_at for job in ops.due_jobs(db(NOW), 10)}
    # Another scheduler claimed this one between the read and the write.
    Job.objects.filter(pk=moved_meanwhile.pk).update(next_run_at=at(50))

    with s.transaction() as ops:
        changed = ops.move_jobs(
            [
                JobMove(db(at(0)), True, key(kept), read[key(kept)]),
                JobMove(db(at(0)), True, key(moved_meanwhile), read[key(moved_meanwhile)]),
                JobMove(None, False, key(finished), read[key(finished)]),
            ]
        )

    assert changed == 2
    assert (fresh(kept).next_run_at, kept.is_active) == (at(0), True)
    assert fresh(moved_meanwhile).next_run_at == at(50)
    assert (fresh(finished).next_run_at, finished.is_active) == (None, False)


@contract("move_jobs")
def test_move_jobs_leaves_a_job_deactivated_since_the_read(s):
    job = due_job(-10)
    with s.reading() as ops:
        (read,) = ops.due_jobs(db(NOW), 10)
    Job.objects.filter(pk=job.pk).update(is_active=False)

    with s.transaction() as ops:
        assert ops.move_jobs([JobMove(db(at(0)), True, key(job), read.read_next_run_at)]) == 0
        assert ops.move_jobs([]) == 0

    assert (fresh(job).next_run_at, job.is_active) == (at(-10), False)


@contract("insert_runs", "adapt_json")
def test_insert_runs_returns_the_keys_it_inserted_with_every_field_written(s):
    job = make_job(executor=ExecutorKind.PYTHON, queue="slow", priority=4)
    pending = new_run(job, -10, arguments=s.adapt_json({"n": 1, "name": "ä"}))
    started = new_run(
        job,
        -5,
        status=RUNNING,
        worker=WORKER,
        started_at=db(NOW),
        heartbeat_at=db(NOW),
        dispatched_at=db(at(-1)),
    )

    with s.transaction() as ops:
        inserted = ops.insert_runs([pending, started])

    assert inserted == {pending.key, started.key}
    run = JobHistory.objects.get(pk=pending.key)
    assert (run.job_id, run.scheduled_for, run.not_before, run.attempt) == (
        job.pk,
        at(-10),
        at(-10),
        1,
    )
    assert (run.status, run.trigger, run.worker, run.log) == (PENDING, "schedule", "", "")
    assert (run.queue, run.priority, run.created_at) == ("slow", 4, NOW)
    assert run.arguments == {"n": 1, "name": "ä"}
    assert (run.started_at, run.heartbeat_at, run.dispatched_at) == (None, None, None)
    run = JobHistory.objects.get(pk=started.key)
    assert (run.status, run.worker, run.started_at, run.heartbeat_at) == (
        RUNNING,
        WORKER,
        NOW,
        NOW,
    )
    assert (run.dispatched_at, run.arguments) == (at(-1), None)
    assert s.adapt_json(None) is None


@contract("insert_runs")
def test_insert_runs_leaves_an_occurrence_that_has_its_first_attempt(s):
    job = make_job()
    first = new_run(job, -10)
    with s.transaction() as ops:
        ops.insert_runs([first])
    again = new_run(job, -10, log="a second claim")
    other = new_run(job, -9)

    with s.transaction() as ops:
        inserted = ops.insert_runs([again, other])

    assert inserted == {other.key}
    (run,) = JobHistory.objects.filter(job=job, scheduled_for=at(-10))
    assert (run.pk.hex, run.log) == (first.key, "")


@contract("insert_retry_runs")
def test_insert_retry_runs_adds_pending_attempts_in_the_queue_the_job_has_now(s):
    job = make_job(queue="default", priority=0)
    a_run(job, -60, status=FAILED)
    Job.objects.filter(pk=job.pk).update(queue="slow", priority=7)
    retry = RetryRun(
        new_key(), key(job), db(at(-60)), 2, db(at(30)), db(at(-1)), s.adapt_json({"x": [1]})
    )

    with s.transaction() as ops:
        assert ops.insert_retry_runs([retry]) is None
        # The same attempt again (a second reaper): nothing, and no error.
        ops.insert_retry_runs([retry._replace(key=new_key())])

    (run,) = JobHistory.objects.filter(job=job, attempt=2)
    assert run.pk.hex == retry.key
    assert (run.status, run.trigger, run.scheduled_for, run.not_before) == (
        PENDING,
        Trigger.RETRY.value,
        at(-60),
        at(30),
    )
    assert (run.queue, run.priority, run.created_at, run.arguments) == (
        "slow",
        7,
        at(-1),
        {"x": [1]},
    )
    assert (run.worker, run.log, run.started_at) == ("", "", None)


@contract("insert_skipped_runs")
def test_insert_skipped_runs_records_finished_skipped_occurrences_once(s):
    job = make_job()
    taken = a_run(job, -20, status=RUNNING)
    skipped = SkippedRun(new_key(), key(job), at(-10), "skipped: still running", "slow", 2)
    clash = SkippedRun(new_key(), key(job), at(-20), "clash", "slow", 2)

    with s.transaction() as ops:
        assert ops.insert_skipped_runs([skipped, clash], db(NOW)) is None

    run = JobHistory.objects.get(pk=skipped.key)
    assert (run.status, run.trigger, run.attempt, run.log) == (
        SKIPPED,
        "schedule",
        1,
        "skipped: still running",
    )
    assert (run.scheduled_for, run.not_before, run.created_at, run.finished_at) == (
        at(-10),
        at(-10),
        NOW,
        NOW,
    )
    assert (run.queue, run.priority, run.started_at) == ("slow", 2, None)
    assert not JobHistory.objects.filter(pk=clash.key).exists()
    assert fresh(taken).status == RUNNING


@contract("cancel_replaced")
def test_cancel_replaced_cancels_runs_still_pending_or_running_and_leaves_finished_ones(s):
    job = make_job()
    pending = a_run(job, -30, status=PENDING)
    running = a_run(job, -20, status=RUNNING, log="out\n")
    done = a_run(job, -10, status=SUCCESS, log="done\n")
    newer = new_key()

    with s.transaction() as ops:
        ops.cancel_replaced(
            [
                Replacement(key(run), key(job), "\nreplaced", newer)
                for run in (pending, running, done)
            ],
            db(NOW),
        )

    assert statuses(pending, running, done) == [CANCELLED, CANCELLED, SUCCESS]
    assert (pending.log, pending.finished_at) == ("\nreplaced", NOW)
    assert (running.log, running.finished_at) == ("out\n\nreplaced", NOW)
    assert (done.log, done.finished_at) == ("done\n", at(-8))


@contract("record_status_on_jobs")
def test_record_status_on_jobs_never_hides_a_later_outcome(s):
    never_ran = make_job()
    ran_before = make_job()
    ran_after = make_job()
    Job.objects.filter(pk=ran_before.pk).update(last_run_at=at(-60), last_run_status=SUCCESS)
    Job.objects.filter(pk=ran_after.pk).update(last_run_at=at(60), last_run_status=FAILED)

    with s.transaction() as ops:
        ops.record_status_on_jobs([])
        ops.record_status_on_jobs(
            [JobStatus(SKIPPED, key(job), db(NOW)) for job in (never_ran, ran_before, ran_after)]
        )

    assert [fresh(job).last_run_status for job in (never_ran, ran_before, ran_after)] == [
        SKIPPED,
        SKIPPED,
        FAILED,
    ]
    # last_run_at stays the last run that executed.
    assert (never_ran.last_run_at, ran_before.last_run_at) == (None, at(-60))


@contract("active_runs")
def test_active_runs_are_the_pending_and_running_runs_of_the_jobs_asked(s):
    busy, idle, unasked = make_job(), make_job(), make_job()
    pending = a_run(busy, -30, status=PENDING)
    running = a_run(busy, -20, status=RUNNING)
    a_run(busy, -10, status=SUCCESS)
    a_run(idle, -10, status=FAILED)
    a_run(unasked, -10, status=PENDING)

    with s.reading() as ops:
        active = ops.active_runs([key(busy), key(idle)])
        assert ops.active_runs([]) == {}

    assert set(active) == {key(busy)}
    assert sorted(active[key(busy)]) == sorted(
        [ActiveRun(key(pending), PENDING), ActiveRun(key(running), RUNNING)]
    )


# --- the life of a run ------------------------------------------------------------------


@contract("start_runs")
def test_start_runs_starts_the_ready_pending_runs_and_reports_the_races_it_won(s):
    job = make_job()
    ready = a_run(job, -30, status=PENDING)
    backing_off = a_run(job, -20, status=PENDING, not_before=at(30))
    taken = a_run(job, -10, status=RUNNING)
    keys = [key(ready), key(backing_off), key(taken)]

    with s.transaction() as ops:
        won = ops.start_runs(keys, "w2", db(NOW))
    with s.transaction() as ops:
        again = ops.start_runs(keys, "w3", db(NOW))

    assert (won, again) == ({key(ready)}, set())
    fresh(ready)
    assert (ready.status, ready.worker, ready.started_at, ready.heartbeat_at) == (
        RUNNING,
        "w2",
        NOW,
        NOW,
    )
    assert (fresh(backing_off).status, backing_off.worker) == (PENDING, "")
    assert (fresh(taken).worker, taken.started_at) == (WORKER, at(-10))


@contract("lock_queue")
def test_lock_queue_holds_a_queue_for_the_transaction_and_changes_no_row(s):
    job = make_job(queue="q")
    run = a_run(job, -10, status=PENDING, queue="q")
    with s.transaction() as ops:
        assert ops.lock_queue("q") is None
        ops.lock_queue("q")  # taken again by the same transaction: no wait
        ops.lock_queue("other")
        assert ops.start_limited_runs([key(run)], WORKER, db(NOW), "q", 1) == {key(run)}


def limited_queue(running: int = 1) -> tuple[Job, dict[str, JobHistory]]:
    """A job of queue "q" with `running` runs running, and pending runs of several
    priorities, one in its backoff, and one of the same job in queue "other"."""
    job = make_job(queue="q")
    runs = {f"running{i}": a_run(job, -100 + i, status=RUNNING, queue="q") for i in range(running)}
    runs["low"] = a_run(job, -50, status=PENDING, queue="q", priority=0)
    runs["high"] = a_run(job, -10, status=PENDING, queue="q", priority=9)
    runs["mid_late"] = a_run(job, -20, status=PENDING, queue="q", priority=5)
    runs["mid_early"] = a_run(job, -30, status=PENDING, queue="q", priority=5)
    runs["backing_off"] = a_run(job, -40, status=PENDING, queue="q", priority=9, not_before=at(60))
    runs["elsewhere"] = a_run(job, -60, status=PENDING, queue="other", priority=9)
    return job, runs


@contract("start_limited_runs")
def test_start_limited_runs_starts_the_best_runs_that_fit_under_the_limit(s):
    _, runs = limited_queue(running=1)
    pending = [key(run) for name, run in runs.items() if not name.startswith("running")]

    with s.transaction() as ops:
        ops.lock_queue("q")
        won = ops.start_limited_runs(pending, "w2", db(NOW), "q", 3)
    with s.transaction() as ops:
        ops.lock_queue("q")
        full = ops.start_limited_runs(pending, "w2", db(NOW), "q", 3)

    assert won == {key(runs["high"]), key(runs["mid_early"])}
    assert full == set()
    assert fresh(runs["high"]).worker == "w2"
    assert (
        statuses(runs["mid_late"], runs["low"], runs["backing_off"], runs["elsewhere"])
        == [PENDING] * 4
    )


@contract("start_limited_runs")
def test_start_limited_runs_starts_nothing_in_a_queue_over_its_limit(s):
    _, runs = limited_queue(running=3)
    with s.transaction() as ops:
        ops.lock_queue("q")
        assert ops.start_limited_runs([key(runs["high"])], "w2", db(NOW), "q", 2) == set()
    assert fresh(runs["high"]).status == PENDING


@contract("take_runs")
def test_take_runs_takes_the_best_waiting_runs_at_most_as_asked_and_as_there_is_room(s):
    _, runs = limited_queue(running=1)

    with s.transaction() as ops:
        ops.lock_queue("q")
        one = ops.take_runs("q", 10, 1, "w2", db(NOW))
    with s.transaction() as ops:
        ops.lock_queue("q")
        up_to_limit = ops.take_runs("q", 3, 10, "w3", db(NOW))
    with s.transaction() as ops:
        ops.lock_queue("q")
        none = ops.take_runs("q", 3, 10, "w4", db(NOW))

    assert one == {key(runs["high"])}
    assert up_to_limit == {key(runs["mid_early"])}
    assert none == set()
    assert (fresh(runs["high"]).worker, runs["high"].started_at) == ("w2", NOW)
    assert statuses(runs["low"], runs["backing_off"], runs["elsewhere"]) == [PENDING] * 3


@contract("queue_room")
def test_queue_room_counts_running_runs_and_ready_waiting_runs_up_to_the_cap(s):
    limited_queue(running=2)
    with s.reading() as ops:
        assert ops.queue_room("q", db(NOW), 100) == QueueRoom(2, 4)
        assert ops.queue_room("q", db(NOW), 3) == QueueRoom(2, 3)
        assert ops.queue_room("empty", db(NOW), 100) == QueueRoom(0, 0)


def expected_ticket(run: JobHistory, **fields: Any) -> RunTicket:
    job = run.job
    values: dict[str, Any] = {
        "run_key": key(run),
        "job_key": key(job),
        "job_name": job.name,
        "command": job.command,
        "scheduled_for": run.scheduled_for,
        "attempt": run.attempt,
        "max_retries": job.max_retries,
        "retry_backoff_seconds": job.retry_backoff_seconds,
        "timeout_seconds": job.timeout_seconds,
        "sim_failure_rate": job.sim_failure_rate,
        "sim_min_seconds": job.sim_min_seconds,
        "sim_max_seconds": job.sim_max_seconds,
        "executor": job.executor,
        "arguments": None,
        "queue": run.queue,
        "priority": run.priority,
    }
    values.update(fields)
    return RunTicket(**values)


@contract("started_tickets", "ticket")
def test_started_tickets_are_the_tickets_of_the_running_runs_asked(s):
    simulated = make_job(
        name="sim", max_retries=2, retry_backoff_seconds=5, timeout_seconds=30, sim_failure_rate=0.5
    )
    python = make_job(name="py", executor=ExecutorKind.PYTHON, arguments={"job": 1})
    sim_run = a_run(simulated, -10, status=RUNNING, attempt=2, queue="slow", priority=3)
    own_args = a_run(python, -10, status=RUNNING, arguments={"run": 2})
    job_args = a_run(python, -20, status=RUNNING)
    pending = a_run(python, -30, status=PENDING)

    with s.reading() as ops:
        tickets = ops.started_tickets([key(r) for r in (sim_run, own_args, job_args, pending)])

    assert sorted(tickets, key=lambda t: t.run_key) == sorted(
        [
            expected_ticket(sim_run),
            expected_ticket(own_args, arguments={"run": 2}),
            expected_ticket(job_args, arguments={"job": 1}),
        ],
        key=lambda t: t.run_key,
    )


@contract("release_runs")
def test_release_runs_hands_back_only_the_workers_own_running_runs(s):
    job = make_job()
    own = a_run(job, -30, status=RUNNING)
    someone_elses = a_run(job, -20, status=RUNNING, worker=OTHER_WORKER)
    pending = a_run(job, -10, status=PENDING)

    with s.transaction() as ops:
        released = ops.release_runs([key(own), key(someone_elses), key(pending)], WORKER)

    assert released == 1
    fresh(own)
    assert (own.status, own.worker, own.started_at, own.heartbeat_at) == (PENDING, "", None, None)
    assert (fresh(someone_elses).status, someone_elses.worker) == (RUNNING, OTHER_WORKER)
    assert fresh(pending).status == PENDING


@contract("heartbeat_runs")
def test_heartbeat_runs_refreshes_running_runs_only(s):
    job = make_job()
    running = a_run(job, -30, status=RUNNING)
    finished = a_run(job, -20, status=SUCCESS)

    with s.transaction() as ops:
        assert ops.heartbeat_runs([key(running), key(finished)], db(NOW)) == 1

    assert fresh(running).heartbeat_at == NOW
    assert fresh(finished).heartbeat_at == at(-20)


@contract("write_live_logs")
def test_write_live_logs_writes_only_where_the_worker_still_runs_the_run(s):
    job = make_job()
    own = a_run(job, -30, status=RUNNING, log="old")
    taken_over = a_run(job, -20, status=RUNNING, worker=OTHER_WORKER, log="theirs")
    finished = a_run(job, -10, status=FAILED, log="final")
    long_text = "line ☃\n" * 2000

    with s.transaction() as ops:
        written = ops.write_live_logs(
            [
                LiveLog(key(own), WORKER, long_text),
                LiveLog(key(taken_over), WORKER, "mine"),
                LiveLog(key(finished), WORKER, "late"),
            ]
        )
        assert ops.write_live_logs([]) == 0

    assert written == 1
    assert [fresh(r).log for r in (own, taken_over, finished)] == [long_text, "theirs", "final"]


@contract("owned_runs")
def test_owned_runs_are_the_runs_the_worker_still_runs(s):
    job = make_job()
    own = a_run(job, -30, status=RUNNING)
    reaped = a_run(job, -20, status=FAILED)
    other = a_run(job, -10, status=RUNNING, worker=OTHER_WORKER)
    with s.transaction() as ops:
        assert ops.owned_runs([key(own), key(reaped), key(other)], WORKER) == {key(own)}


@contract("finish_runs", "update_rows", "adapt_moment")
def test_finish_runs_writes_the_outcome_of_exactly_the_runs_named(s):
    job = make_job()
    one, two, untouched = (a_run(job, -30 + i, status=RUNNING, worker="sched/w1") for i in range(3))
    finished_at = datetime.now(UTC)
    rows = [
        FinishedRun(
            SUCCESS, db(at(-29)), s.adapt_moment(finished_at), "ok\n", None, None, key(one)
        ),
        FinishedRun(
            FAILED,
            db(at(-28)),
            s.adapt_moment(at(-1)),
            "boom\n",
            s.adapt_json({"error": {"exception_class_path": "builtins.ValueError"}}),
            "celery@web-3 via sched/w1",  # ran elsewhere: the worker says where
            key(two),
        ),
        FinishedRun(FAILED, db(at(-1)), db(NOW), "", None, None, new_key()),  # deleted meanwhile
    ]

    with s.transaction() as ops:
        assert ops.finish_runs(rows) == 2
        assert ops.finish_runs([]) == 0
        assert s.update_rows(ops.cursor, "finish_runs", []) == 0

    fresh(one)
    assert (one.status, one.started_at, one.finished_at, one.log) == (
        SUCCESS,
        at(-29),
        finished_at,
        "ok\n",
    )
    assert (fresh(two).status, two.finished_at, two.log) == (FAILED, at(-1), "boom\n")
    assert (one.result, two.result) == (
        None,
        {"error": {"exception_class_path": "builtins.ValueError"}},
    )
    assert (one.worker, two.worker) == ("sched/w1", "celery@web-3 via sched/w1")
    assert fresh(untouched).status == RUNNING


@contract("record_on_jobs")
def test_record_on_jobs_copies_an_outcome_unless_the_job_has_a_later_one(s):
    never_ran, behind, ahead = make_job(), make_job(), make_job()
    Job.objects.filter(pk=behind.pk).update(last_run_at=at(-60), last_run_status=SUCCESS)
    Job.objects.filter(pk=ahead.pk).update(last_run_at=at(60), last_run_status=SUCCESS)
    started = db(at(-5))

    with s.transaction() as ops:
        changed = ops.record_on_jobs(
            [JobOutcome(started, FAILED, key(job), started) for job in (never_ran, behind, ahead)]
        )

    assert changed == 2
    assert (fresh(never_ran).last_run_at, never_ran.last_run_status) == (at(-5), FAILED)
    assert (fresh(behind).last_run_at, behind.last_run_status) == (at(-5), FAILED)
    assert (fresh(ahead).last_run_at, ahead.last_run_status) == (at(60), SUCCESS)


@contract("watched_jobs")
def test_watched_jobs_are_the_jobs_that_alert_with_their_failures_in_a_row(s):
    failing = make_job(notify_on_failure=True, alert_after_failures=3)
    recovering = make_job(notify_on_recovery=True)
    quiet = make_job()
    Job.objects.filter(pk=failing.pk).update(consecutive_failures=2)

    with s.transaction() as ops:
        watched = ops.watched_jobs([key(failing), key(recovering), key(quiet)])

    assert sorted(watched) == sorted(
        [
            WatchedJob(key(failing), True, False, 3, 2),
            WatchedJob(key(recovering), False, True, recovering.alert_after_failures, 0),
        ]
    )


@contract("record_failure_streaks")
def test_record_failure_streaks_writes_each_jobs_count(s):
    one, two, other = make_job(), make_job(), make_job()
    Job.objects.filter(pk=other.pk).update(consecutive_failures=4)
    with s.transaction() as ops:
        changed = ops.record_failure_streaks(
            [FailureStreak(3, key(one)), FailureStreak(0, key(two))]
        )
    assert changed == 2
    assert [fresh(job).consecutive_failures for job in (one, two, other)] == [3, 0, 4]


# --- running long -----------------------------------------------------------------------


@contract("running_long_candidates")
def test_running_long_candidates_are_unmarked_running_runs_of_alerting_jobs(s):
    alerting = make_job(notify_on_failure=True, expected_seconds=60)
    quiet = make_job()
    older = a_run(alerting, -300, status=RUNNING)
    newer = a_run(alerting, -100, status=RUNNING)
    a_run(alerting, -200, status=RUNNING, running_long_at=at(-10))
    a_run(alerting, -50, status=PENDING)
    a_run(alerting, -400, status=FAILED)
    a_run(quiet, -500, status=RUNNING)

    with s.reading() as ops:
        found = ops.running_long_candidates(10)
        first = ops.running_long_candidates(1)

    assert found == [
        RunningLong(key(older), key(alerting), at(-300), 60),
        RunningLong(key(newer), key(alerting), at(-100), 60),
    ]
    assert first == found[:1]


@contract("mark_running_long")
def test_mark_running_long_is_true_for_the_one_caller_that_marked(s):
    job = make_job(notify_on_failure=True)
    running = a_run(job, -100, status=RUNNING)
    finished = a_run(job, -200, status=SUCCESS)

    with s.transaction() as ops:
        assert ops.mark_running_long(key(running), db(NOW)) is True
        assert ops.mark_running_long(key(running), db(at(5))) is False
        assert ops.mark_running_long(key(finished), db(NOW)) is False

    assert fresh(running).running_long_at == NOW
    assert fresh(finished).running_long_at is None


@contract("recent_durations")
def test_recent_durations_are_the_newest_outcomes_seconds_newest_first(s):
    job, other = make_job(), make_job()
    a_run(job, -300, status=SUCCESS, took=timedelta(seconds=1))
    a_run(job, -200, status=FAILED, took=timedelta(seconds=2.5))
    a_run(job, -100, status=SUCCESS, took=timedelta(seconds=4))
    a_run(job, -50, status=CANCELLED, finished_at=at(-40))
    a_run(job, -20, status=RUNNING)
    a_run(other, -10, status=SUCCESS, took=timedelta(seconds=99))

    with s.reading() as ops:
        durations = ops.recent_durations(key(job), 10)
        newest_two = ops.recent_durations(key(job), 2)
        assert ops.recent_durations(key(make_job()), 10) == []

    # To the millisecond: SQLite computes them from Julian days (a float of days).
    assert durations == pytest.approx([4.0, 2.5, 1.0], abs=1e-3)
    assert newest_two == pytest.approx([4.0, 2.5], abs=1e-3)


# --- reaping ----------------------------------------------------------------------------


@contract("lost_runs")
def test_lost_runs_are_running_runs_with_a_stale_heartbeat_stalest_first(s):
    job = make_job(max_retries=1)
    stale = a_run(job, -300, status=RUNNING, heartbeat_at=at(-120))
    staler = a_run(job, -200, status=RUNNING, heartbeat_at=at(-150), worker=OTHER_WORKER)
    a_run(job, -100, status=RUNNING, heartbeat_at=at(-5))
    a_run(job, -400, status=PENDING)
    a_run(job, -500, status=FAILED)

    with s.transaction() as ops:
        lost = ops.lost_runs(db(at(-60)), 10)
    with s.transaction() as ops:
        first = ops.lost_runs(db(at(-60)), 1)

    assert [run.ticket for run in lost] == [expected_ticket(staler), expected_ticket(stale)]
    assert [(run.worker, run.heartbeat_at, run.started_at) for run in lost] == [
        (OTHER_WORKER, at(-150), at(-200)),
        (WORKER, at(-120), at(-300)),
    ]
    assert first == lost[:1]


@contract("fail_lost_runs")
def test_fail_lost_runs_fails_only_runs_still_stale_and_returns_them(s):
    job = make_job()
    lost = a_run(job, -300, status=RUNNING, heartbeat_at=at(-120), log="out\n")
    revived = a_run(job, -200, status=RUNNING, heartbeat_at=at(-120))
    finished = a_run(job, -100, status=SUCCESS)
    # Between the reaper's read and its write, one worker beat again.
    JobHistory.objects.filter(pk=revived.pk).update(heartbeat_at=NOW)

    with s.transaction() as ops:
        failed = ops.fail_lost_runs(
            [key(lost), key(revived), key(finished)], db(NOW), "\nworker lost", db(at(-60))
        )

    assert failed == {key(lost)}
    assert (fresh(lost).status, lost.finished_at, lost.log) == (FAILED, NOW, "out\n\nworker lost")
    assert (fresh(revived).status, revived.finished_at) == (RUNNING, None)
    assert (fresh(finished).status, finished.log) == (SUCCESS, "")


@contract("timed_runs")
def test_timed_runs_are_running_runs_of_jobs_with_a_timeout_oldest_start_first(s):
    timed = make_job(timeout_seconds=30)
    untimed = make_job()
    newer = a_run(timed, -100, status=RUNNING)
    older = a_run(timed, -200, status=RUNNING)
    a_run(timed, -50, status=PENDING)
    a_run(timed, -300, status=FAILED)
    a_run(untimed, -400, status=RUNNING)

    with s.reading() as ops:
        runs = ops.timed_runs(10)
        first = ops.timed_runs(1)

    assert [(run.ticket, run.started_at) for run in runs] == [
        (expected_ticket(older), at(-200)),
        (expected_ticket(newer), at(-100)),
    ]
    assert first == runs[:1]


@contract("fail_running_run")
def test_fail_running_run_fails_a_running_run_once(s):
    job = make_job(timeout_seconds=1)
    running = a_run(job, -100, status=RUNNING, log="out\n")
    with s.transaction() as ops:
        assert ops.fail_running_run(key(running), db(NOW), "timed out\n") is True
        assert ops.fail_running_run(key(running), db(at(1)), "again\n") is False
    assert (fresh(running).status, running.finished_at, running.log) == (
        FAILED,
        NOW,
        "out\ntimed out\n",
    )


@contract("running_among")
def test_running_among_keeps_the_keys_of_running_runs(s):
    job = make_job()
    running = a_run(job, -30, status=RUNNING)
    pending = a_run(job, -20, status=PENDING)
    finished = a_run(job, -10, status=FAILED)
    with s.reading() as ops:
        assert ops.running_among([key(running), key(pending), key(finished), new_key()]) == {
            key(running)
        }
        assert ops.running_among([]) == set()


# --- finding work -----------------------------------------------------------------------


@contract("pending_queues")
def test_pending_queues_are_the_queues_with_pending_runs_in_name_order(s):
    with s.reading() as ops:
        assert ops.pending_queues() == []
    job = make_job()
    for seconds, queue in ((-10, "zeta"), (-20, "alpha"), (-30, "zeta"), (-40, "mid")):
        a_run(job, seconds, status=PENDING, queue=queue, not_before=at(600))
    a_run(job, -50, status=RUNNING, queue="busy")
    a_run(job, -60, status=SUCCESS, queue="done")
    with s.reading() as ops:
        assert ops.pending_queues() == ["alpha", "mid", "zeta"]


@contract("ready_runs")
def test_ready_runs_are_a_queues_pending_runs_that_may_start_best_first(s):
    _, runs = limited_queue(running=1)
    with s.reading() as ops:
        ready = ops.ready_runs("q", db(NOW), 10)
        best = ops.ready_runs("q", db(NOW), 1)
    assert [t.run_key for t in ready] == [
        key(runs[name]) for name in ("high", "mid_early", "mid_late", "low")
    ]
    assert ready[0] == expected_ticket(fresh(runs["high"]))
    assert [t.run_key for t in best] == [key(runs["high"])]


@contract("undispatched_runs")
def test_undispatched_runs_are_ready_runs_never_handed_out_or_handed_out_long_ago(s):
    job = make_job()
    never = a_run(job, -30, status=PENDING)
    long_ago = a_run(job, -20, status=PENDING, dispatched_at=at(-600))
    just_now = a_run(job, -10, status=PENDING, dispatched_at=at(-5))  # another's, in flight
    a_run(job, -40, status=PENDING, not_before=at(60))
    a_run(job, -50, status=PENDING, queue="other")
    with s.reading() as ops:
        found = ops.undispatched_runs("default", db(NOW), db(at(-300)), 10)
        first = ops.undispatched_runs("default", db(NOW), db(at(-300)), 1)
    assert [t.run_key for t in found] == [key(never), key(long_ago)]
    assert [t.run_key for t in first] == [key(never)]
    assert fresh(just_now).dispatched_at == at(-5)


@contract("stamp_dispatched")
def test_stamp_dispatched_stamps_only_runs_nobody_handed_out_since_the_cutoff(s):
    job = make_job()
    never = a_run(job, -30, status=PENDING)
    stamped_meanwhile = a_run(job, -20, status=PENDING, dispatched_at=at(-1))
    started = a_run(job, -10, status=RUNNING)
    with s.transaction() as ops:
        stamped = ops.stamp_dispatched(
            [key(never), key(stamped_meanwhile), key(started)], db(NOW), db(at(-300))
        )
    assert stamped == {key(never)}
    assert [fresh(r).dispatched_at for r in (never, stamped_meanwhile, started)] == [
        NOW,
        at(-1),
        None,
    ]


@contract("mark_dispatched")
def test_mark_dispatched_stamps_pending_runs_whatever_their_stamp(s):
    job = make_job()
    never = a_run(job, -30, status=PENDING)
    earlier = a_run(job, -20, status=PENDING, dispatched_at=at(-1))
    started = a_run(job, -10, status=RUNNING)
    with s.transaction() as ops:
        assert ops.mark_dispatched([key(never), key(earlier), key(started)], db(NOW)) is None
    assert [fresh(r).dispatched_at for r in (never, earlier, started)] == [NOW, NOW, None]


@contract("undispatch_runs")
def test_undispatch_runs_clears_the_stamp_of_pending_runs_only(s):
    job = make_job()
    pending = a_run(job, -30, status=PENDING, dispatched_at=at(-1))
    started = a_run(job, -10, status=RUNNING, dispatched_at=at(-2))
    with s.transaction() as ops:
        assert ops.undispatch_runs([key(pending), key(started)]) is None
    assert [fresh(r).dispatched_at for r in (pending, started)] == [None, at(-2)]


@contract("tickets_for")
def test_tickets_for_are_the_tickets_of_the_asked_runs_that_may_start_now(s):
    job = make_job(executor=ExecutorKind.PYTHON, arguments={"a": 1})
    ready = a_run(job, -30, status=PENDING)
    backing_off = a_run(job, -20, status=PENDING, not_before=at(60))
    started = a_run(job, -10, status=RUNNING)
    with s.reading() as ops:
        tickets = ops.tickets_for([key(ready), key(backing_off), key(started)], db(NOW))
    assert tickets == [expected_ticket(ready, arguments={"a": 1})]


@contract("wake_up")
def test_wake_up_gives_the_next_due_job_the_next_backoff_end_and_the_pause(s):
    SchedulerState.objects.filter(pk=1).delete()
    with s.reading() as ops:
        assert ops.wake_up(db(NOW)) == WakeUp(None, None, None, None)
    job = due_job(120)
    due_job(30, is_active=False)
    due_job(300)
    a_run(job, -10, status=PENDING, not_before=at(90))
    a_run(job, -20, status=PENDING, not_before=at(45))
    a_run(job, -30, status=PENDING)  # ready now: no reason to wake
    a_run(job, -40, status=FAILED, not_before=at(5))
    SchedulerState.objects.create(pk=1, paused_at=at(-60), paused_until=at(600))
    with s.reading() as ops:
        assert ops.wake_up(db(NOW)) == WakeUp(at(120), at(45), at(-60), at(600))


@contract("claims_paused")
def test_claims_paused_is_true_from_the_pause_until_its_end(s):
    SchedulerState.objects.filter(pk=1).delete()
    with s.transaction() as ops:
        assert ops.claims_paused(db(NOW)) is False
    SchedulerState.objects.create(pk=1)
    with s.transaction() as ops:
        assert ops.claims_paused(db(NOW)) is False
    SchedulerState.objects.filter(pk=1).update(paused_at=at(-60))
    with s.transaction() as ops:
        assert ops.claims_paused(db(NOW)) is True
    SchedulerState.objects.filter(pk=1).update(paused_until=at(60))
    with s.transaction() as ops:
        assert ops.claims_paused(db(NOW)) is True
        assert ops.claims_paused(db(at(60))) is False
        assert ops.claims_paused(db(at(61))) is False
        # The same rule as the screens' and the API's, in Python.
        window = SchedulerState.current_window()
        for moment in (at(-61), NOW, at(59.999999), at(60), at(61)):
            assert ops.claims_paused(db(moment)) is window.active(moment), moment


@contract("cancel_run")
def test_cancel_run_cancels_a_pending_or_running_run_once_and_says_whose(s):
    job = make_job()
    pending = a_run(job, -30, status=PENDING)
    running = a_run(job, -20, status=RUNNING, log="out\n")
    finished = a_run(job, -10, status=SUCCESS, log="done\n")

    with s.transaction() as ops:
        first = ops.cancel_run(key(pending), "alice", db(NOW), "\ncancelled", "$ cmd\ncancelled")
        second = ops.cancel_run(key(running), "bob", db(NOW), "\ncancelled", "$ cmd\ncancelled")
        again = ops.cancel_run(key(running), "carol", db(at(1)), "\nagain", "again")
        late = ops.cancel_run(key(finished), "dave", db(NOW), "\nlate", "late")

    assert first == CancelledRun(key(job), None, at(-30))
    assert second == CancelledRun(key(job), at(-20), at(-20))
    assert (again, late) == (None, None)
    fresh(pending)
    assert (pending.status, pending.cancelled_by, pending.finished_at, pending.log) == (
        CANCELLED,
        "alice",
        NOW,
        "$ cmd\ncancelled",
    )
    assert (fresh(running).cancelled_by, running.log) == ("bob", "out\n\ncancelled")
    assert (fresh(finished).status, finished.cancelled_by, finished.log) == (SUCCESS, "", "done\n")


# --- retention --------------------------------------------------------------------------


@contract("job_page")
def test_job_page_pages_through_every_job_in_key_order(s):
    jobs = [make_job(name=f"j{i}", is_active=i % 2 == 0) for i in range(5)]
    Job.objects.filter(pk=jobs[0].pk).update(last_run_at=at(-60))
    # The database's own order of keys: MariaDB orders its UUID type not as the hex
    # digits read (it compares the timestamp parts first), the others as they read.
    keys = [key(job) for job in Job.objects.order_by("pk")]

    with s.reading() as ops:
        first = ops.job_page(None, 2)
        second = ops.job_page(first[-1].key, 2)
        rest = ops.job_page(second[-1].key, 10)
        assert ops.job_page(keys[-1], 10) == []

    assert [row.key for row in first + second + rest] == keys
    assert JobPageRow(key(jobs[0]), at(-60)) in first + second + rest
    assert JobPageRow(key(jobs[1]), None) in first + second + rest


def history(job: Job, count: int, status: str = SUCCESS, step: int = 10) -> list[JobHistory]:
    """`count` runs of `job`, oldest first, `step` seconds apart, ending before NOW."""
    return [a_run(job, -(count - i) * step, status=status) for i in range(count)]


@contract("prune_edge")
def test_prune_edge_is_the_newest_run_beyond_those_kept(s):
    job = make_job()
    runs = history(job, 4)
    retry = a_run(job, -20, attempt=2)  # the same occurrence as runs[2], a later attempt

    with s.reading() as ops:
        edge = ops.prune_edge(key(job), 2)
        assert ops.prune_edge(key(job), 5) is None
        assert ops.prune_edge(key(make_job()), 0) is None

    assert edge is not None
    # Kept: retry (attempt 2) and runs[3]; the edge is runs[2]'s first attempt.
    assert (s.read_datetime(edge.scheduled_for), edge.attempt) == (runs[2].scheduled_for, 1)
    assert retry.scheduled_for == runs[2].scheduled_for


@contract("count_finished_before")
def test_count_finished_before_counts_finished_runs_created_before_the_cutoff(s):
    job = make_job()
    for i, status in enumerate((SUCCESS, FAILED, SKIPPED, CANCELLED, PENDING, RUNNING)):
        a_run(job, -100 - i, status=status)
    a_run(job, -10, status=SUCCESS)
    with s.reading() as ops:
        assert ops.count_finished_before(db(at(-50))) == 4
        assert ops.count_finished_before(db(at(-200))) == 0


def chained_from(cause: JobHistory) -> JobHistory:
    return a_run(make_job(name="next"), -1, status=PENDING, caused_by=cause, trigger="chain")


def notified(run: JobHistory) -> NotificationAttempt:
    return NotificationAttempt.objects.create(
        run=run, kind="failure", channel="webhook", status="sent"
    )


@contract("delete_finished_before")
def test_delete_finished_before_deletes_the_oldest_finished_runs_and_unlinks_their_chains(s):
    job = make_job()
    oldest, older, old = history(job, 3, status=FAILED, step=100)
    stuck = a_run(job, -400, status=RUNNING)
    recent = a_run(job, -5, status=SUCCESS)
    started_by_oldest = chained_from(oldest)
    alert = notified(oldest)
    kept_alert = notified(old)

    with s.transaction() as ops:
        deleted = ops.delete_finished_before(db(at(-50)), 2)
    with s.transaction() as ops:
        assert ops.delete_finished_before(db(at(-50)), 2) == 1
        assert ops.delete_finished_before(db(at(-50)), 2) == 0

    assert deleted == 2
    assert set(JobHistory.objects.filter(job=job).values_list("pk", flat=True)) == {
        stuck.pk,
        recent.pk,
    }
    assert fresh(started_by_oldest).caused_by_id is None
    assert not NotificationAttempt.objects.filter(pk__in=[alert.pk, kept_alert.pk]).exists()
    assert older.pk not in set(JobHistory.objects.values_list("pk", flat=True))


@contract("count_beyond")
def test_count_beyond_counts_finished_runs_at_or_before_the_edge(s):
    job, other = make_job(), make_job()
    runs = history(job, 4)
    a_run(job, -35, status=PENDING)  # before the edge, not finished
    history(other, 3)
    with s.reading() as ops:
        edge = ops.prune_edge(key(job), 2)  # runs[1]
        assert ops.count_beyond(key(job), edge, None) == 2
        # Created since runs[1]: only runs[1] itself, of those counted.
        assert ops.count_beyond(key(job), edge, db(runs[1].created_at)) == 1
        assert ops.count_beyond(key(job), edge, db(NOW)) == 0


@contract("delete_beyond")
def test_delete_beyond_deletes_the_oldest_finished_runs_at_or_before_the_edge(s):
    job, other = make_job(), make_job()
    runs = history(job, 5)
    waiting = a_run(job, -45, status=PENDING)
    others = history(other, 3)
    started_by_first = chained_from(runs[0])
    with s.reading() as ops:
        edge = ops.prune_edge(key(job), 2)  # runs[2]

    with s.transaction() as ops:
        first = ops.delete_beyond(key(job), edge, 2)
    with s.transaction() as ops:
        second = ops.delete_beyond(key(job), edge, 2)
        assert ops.delete_beyond(key(job), edge, 2) == 0

    assert (first, second) == (2, 1)
    left = set(JobHistory.objects.filter(job=job).values_list("pk", flat=True))
    assert left == {runs[3].pk, runs[4].pk, waiting.pk}
    assert JobHistory.objects.filter(pk__in=[r.pk for r in others]).count() == 3
    assert fresh(started_by_first).caused_by_id is None


# --- chains -----------------------------------------------------------------------------


@contract("any_chains")
def test_any_chains_says_whether_any_job_has_a_chain(s):
    first, second = make_job(), make_job()
    with s.reading() as ops:
        assert ops.any_chains() is False
    first.on_failure.add(second)
    with s.reading() as ops:
        assert ops.any_chains() is True
    first.on_failure.clear()
    second.on_success.add(first)
    with s.reading() as ops:
        assert ops.any_chains() is True


@contract("chaining_jobs")
def test_chaining_jobs_are_those_of_the_jobs_asked_that_have_a_chain(s):
    on_success, on_failure, both, plain, target = (make_job() for _ in range(5))
    on_success.on_success.add(target)
    on_failure.on_failure.add(target)
    both.on_success.add(target)
    both.on_failure.add(target)
    asked = [key(job) for job in (on_success, on_failure, both, plain, target)]
    with s.reading() as ops:
        assert ops.chaining_jobs(asked) == {key(on_success), key(on_failure), key(both)}
        assert ops.chaining_jobs([key(plain)]) == set()


@contract("chained_jobs")
def test_chained_jobs_are_the_jobs_runs_of_these_jobs_start_by_outcome(s):
    source, unasked = make_job(name="source"), make_job(name="unasked")
    report = make_job(name="report", queue="slow", priority=2, overlap_policy="forbid")
    cleanup = make_job(name="cleanup", is_active=False)
    source.on_success.add(report)
    source.on_failure.add(cleanup, report)
    unasked.on_success.add(cleanup)

    with s.transaction() as ops:
        links = ops.chained_jobs([key(source)])
        assert ops.chained_jobs([]) == []

    # The arguments come as the database gives them (JSON text or a decoded value).
    assert sorted(link._replace(arguments=None) for link in links) == sorted(
        [
            ChainLink(
                SUCCESS, key(source), key(report), "report", True, "forbid", "slow", 2, SIM, None
            ),
            ChainLink(
                FAILED, key(source), key(report), "report", True, "forbid", "slow", 2, SIM, None
            ),
            ChainLink(
                FAILED,
                key(source),
                key(cleanup),
                "cleanup",
                False,
                "allow",
                "default",
                0,
                SIM,
                None,
            ),
        ]
    )


@contract("insert_chained_runs")
def test_insert_chained_runs_inserts_linked_runs_except_on_a_taken_occurrence(s):
    source, started = make_job(), make_job()
    cause = a_run(source, -10, status=SUCCESS)
    taken = a_run(started, -5, status=RUNNING)
    pending = ChainedRun(
        new_key(),
        key(started),
        db(NOW),
        PENDING,
        db(NOW),
        "",
        db(NOW),
        None,
        key(cause),
        "slow",
        3,
        None,
    )
    skipped = ChainedRun(
        new_key(),
        key(started),
        db(at(1)),
        SKIPPED,
        db(at(1)),
        "skipped: running",
        db(NOW),
        db(NOW),
        key(cause),
        "slow",
        3,
        None,
    )
    clash = pending._replace(key=new_key(), scheduled_for=db(at(-5)))

    with s.transaction() as ops:
        inserted = ops.insert_chained_runs([pending, skipped, clash])

    assert inserted == {pending.key, skipped.key}
    run = JobHistory.objects.get(pk=pending.key)
    assert (run.status, run.trigger, run.attempt, run.caused_by_id, run.worker) == (
        PENDING,
        Trigger.CHAIN.value,
        1,
        cause.pk,
        "",
    )
    assert (run.scheduled_for, run.not_before, run.queue, run.priority) == (NOW, NOW, "slow", 3)
    assert run.finished_at is None
    run = JobHistory.objects.get(pk=skipped.key)
    assert (run.status, run.log, run.finished_at) == (SKIPPED, "skipped: running", NOW)
    assert fresh(taken).caused_by_id is None


# --- the Upcoming page ------------------------------------------------------------------


def micros(value: datetime | None) -> int | None:
    if value is None:
        return None
    return (value - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


@contract("timeline_jobs", "read_micros")
def test_timeline_jobs_reads_every_job_in_the_timeline_field_order(s):
    interval = due_job(30.000001, name="every")
    cron = make_job(
        name="nightly", schedule_type="cron", cron_expression="0 3 * * *", timezone="Europe/Paris"
    )
    once = make_job(
        name="once", schedule_type="once", scheduled_at=at(3600), interval=None, is_active=False
    )

    with s.reading() as ops:
        rows = ops.timeline_jobs()

    read = s.read_micros
    jobs = {row[0]: TimelineJob(*row[:7], bool(row[7]), read(row[8]), read(row[9])) for row in rows}
    assert set(jobs) == {key(interval), key(cron), key(once)}
    assert jobs[key(interval)] == TimelineJob(
        key(interval),
        "every",
        "interval",
        10,
        "second",
        "",
        interval.timezone,
        True,
        micros(at(30.000001)),
        None,
    )
    assert jobs[key(cron)][:8] == (
        key(cron),
        "nightly",
        "cron",
        cron.interval,
        cron.interval_unit,
        "0 3 * * *",
        "Europe/Paris",
        True,
    )
    assert jobs[key(cron)].next_run_us == micros(fresh(cron).next_run_at)
    assert jobs[key(once)].scheduled_at_us == micros(at(3600))
    assert jobs[key(once)].is_active is False
    # Then the calendar, its policy, the jitter, the queue and the interval's anchor.
    raw = {row[0]: row for row in rows}
    assert raw[key(interval)][10:14] == (None, "skip", 0, "default")
    assert read(raw[key(interval)][14]) == micros(fresh(interval).anchor_at)
    assert raw[key(once)][10:14] == (None, "skip", 0, "default")
    assert read(raw[key(once)][14]) is None


# --- a run's processes ------------------------------------------------------------------


@contract("record_processes")
def test_record_processes_records_where_a_running_runs_processes_are_while_its_worker_runs_it(s):
    job = make_job()
    own = a_run(job, -30, status=RUNNING)
    taken_over = a_run(job, -20, status=RUNNING, worker=OTHER_WORKER)
    finished = a_run(job, -10, status=FAILED)

    with s.transaction() as ops:
        assert ops.record_processes(key(own), WORKER, "host-a", 4242) is True
        assert ops.record_processes(key(taken_over), WORKER, "host-a", 4243) is False
        assert ops.record_processes(key(finished), WORKER, "host-a", 4244) is False
        assert ops.record_processes(new_key(), WORKER, "host-a", 4245) is False

    assert (fresh(own).process_host, own.process_group) == ("host-a", 4242)
    for run in (taken_over, finished):
        assert (fresh(run).process_host, run.process_group) == ("", None)


@contract("append_run_log")
def test_append_run_log_adds_to_any_runs_log_and_names_its_job(s):
    job = make_job()
    running = a_run(job, -20, status=RUNNING, log="out\n")
    finished = a_run(job, -10, status=FAILED, log="")

    with s.transaction() as ops:
        assert ops.append_run_log(key(running), "killed 2 processes\n") == key(job)
        assert ops.append_run_log(key(finished), "late line\n") == key(job)
        assert ops.append_run_log(new_key(), "lost\n") is None

    assert (fresh(running).log, running.status) == ("out\nkilled 2 processes\n", RUNNING)
    assert (fresh(finished).log, finished.status) == ("late line\n", FAILED)


@contract("lost_runs")
def test_a_lost_run_says_where_its_processes_are(s):
    job = make_job()
    with_processes = a_run(
        job, -300, status=RUNNING, heartbeat_at=at(-120), process_host="host-a", process_group=7
    )
    without = a_run(job, -200, status=RUNNING, heartbeat_at=at(-110))

    with s.transaction() as ops:
        lost = {run.ticket.run_key: run for run in ops.lost_runs(db(at(-60)), 10)}

    assert (lost[key(with_processes)].process_host, lost[key(with_processes)].process_group) == (
        "host-a",
        7,
    )
    assert (lost[key(without)].process_host, lost[key(without)].process_group) == ("", None)


# --- between two connections -----------------------------------------------------------
# The same contracts with two transactions at once, each on a connection of its own (a
# thread), committed data and all: what a second scheduler or worker process does. The
# outcome is asserted, whichever transaction goes first; the barrier only makes them
# start together, and its timeout only keeps a broken store from hanging the suite.

Result = TypeVar("Result")


def at_once(*calls: Callable[[], Result]) -> list[Result]:
    """Each call in a thread of its own, released together; their results, in order."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def run(index: int, call: Callable[[], Result]) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = call()
        except BaseException as exc:  # reported by the test's thread
            errors.append(exc)
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=item) for item in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a transaction never ended"
    assert not errors, errors
    return results


def in_transaction(work: Callable[[Operations], Result]) -> Callable[[], Result]:
    def call() -> Result:
        with store().transaction() as ops:
            return work(ops)

    return call


@contract("start_runs")
@pytest.mark.django_db(transaction=True)
def test_two_connections_starting_the_same_runs_each_win_different_ones():
    job = make_job()
    keys = [key(a_run(job, -100 + i, status=PENDING)) for i in range(40)]

    won = at_once(
        *(
            in_transaction(lambda ops, w=worker: ops.start_runs(keys, w, db(NOW)))
            for worker in ("w1", "w2")
        )
    )

    assert won[0] | won[1] == set(keys)
    assert not won[0] & won[1]
    for worker, runs in zip(("w1", "w2"), won, strict=True):
        assert set(JobHistory.objects.filter(worker=worker).values_list("pk", flat=True)) == {
            uuid.UUID(k) for k in runs
        }


@contract("insert_runs")
@pytest.mark.django_db(transaction=True)
def test_two_connections_inserting_the_same_occurrences_insert_each_once():
    job = make_job()
    batches = [[new_run(job, -100 + i) for i in range(40)] for _ in range(2)]

    inserted = at_once(
        *(in_transaction(lambda ops, runs=batch: ops.insert_runs(runs)) for batch in batches)
    )

    assert len(inserted[0]) + len(inserted[1]) == 40
    assert JobHistory.objects.filter(job=job).count() == 40
    assert set(JobHistory.objects.values_list("pk", flat=True)) == {
        uuid.UUID(k) for k in inserted[0] | inserted[1]
    }


@contract("lock_queue", "start_limited_runs")
@pytest.mark.django_db(transaction=True)
def test_two_connections_starting_runs_of_a_limited_queue_never_pass_its_limit():
    job = make_job(queue="q")
    keys = [key(a_run(job, -100 + i, status=PENDING, queue="q")) for i in range(20)]

    def start(worker: str) -> Callable[[], set[str]]:
        def work(ops: Operations) -> set[str]:
            ops.lock_queue("q")
            return ops.start_limited_runs(keys, worker, db(NOW), "q", 3)

        return in_transaction(work)

    for round_ in range(3):  # each round frees the slots again: more chances to collide
        won = at_once(start("w1"), start("w2"))
        assert len(won[0]) + len(won[1]) == 3, round_
        assert JobHistory.objects.filter(status=RUNNING).count() == 3
        JobHistory.objects.filter(status=RUNNING).update(status=SUCCESS)


@contract("claim", "due_jobs", "move_jobs")
@pytest.mark.django_db(transaction=True)
def test_two_connections_claiming_at_once_claim_each_occurrence_once():
    jobs = [due_job(-10 - i) for i in range(30)]
    s = store()

    def plan(ops: Operations) -> list | None:
        return ops.due_jobs(db(NOW), 100) or None

    def apply(ops: Operations, due: list, all_or_nothing: bool) -> set[str]:
        moved = ops.move_jobs([JobMove(db(at(3600)), True, j.key, j.read_next_run_at) for j in due])
        if all_or_nothing and moved != len(due):
            raise JobsMoved
        return ops.insert_runs(
            [new_run(Job(pk=uuid.UUID(j.key)), 0, scheduled_for=db(j.next_run_at)) for j in due]
        )

    claims = at_once(lambda: s.claim(plan, apply), lambda: s.claim(plan, apply))

    inserted = [claim.inserted for claim in claims if claim is not None]
    assert sum(len(keys) for keys in inserted) == 30
    assert JobHistory.objects.count() == 30
    assert sorted(JobHistory.objects.values_list("scheduled_for", flat=True)) == sorted(
        job.next_run_at for job in jobs
    )
    assert set(Job.objects.values_list("next_run_at", flat=True)) == {at(3600)}


# --- readings built in the vendor layer (the /metrics histograms) ------------------------


def test_recent_buckets_group_runs_finished_since_by_status_attempt_and_buckets():
    job = make_job()
    # Finished since the moment: durations 0.5 s, 3 s, 30 s and none; lags 0, 2 s and none.
    a_run(job, -100, status=SUCCESS, took=timedelta(seconds=0.5))
    a_run(job, -90, status=SUCCESS, took=timedelta(seconds=5), started_at=at(-88))
    a_run(job, -80, status=FAILED, attempt=2, took=timedelta(seconds=30))
    a_run(job, -70, status=SKIPPED, finished_at=at(-70), started_at=None)
    a_run(job, -500, status=SUCCESS)  # finished before the moment
    a_run(job, -10, status=RUNNING)

    rows = readings.recent_buckets(at(-200), [1.0, 10.0], [1.0])

    def bucket(row: readings.RecentBucket) -> tuple:
        return (row.status, row.first_attempt, row.duration_bucket, row.lag_bucket, row.count)

    assert sorted(map(bucket, rows)) == sorted(
        [
            (SUCCESS, True, 0, 0, 1),  # 0.5 s, started on time
            (SUCCESS, True, 1, 1, 1),  # 3 s, started 2 s late
            (FAILED, False, 2, 0, 1),  # 30 s: beyond the last bound
            (SKIPPED, True, -1, -1, 1),  # never started: no duration, no lag
        ]
    )
    (late,) = (row for row in rows if row.lag_bucket == 1)
    assert (late.duration_sum, late.lag_sum) == (
        pytest.approx(3, abs=1e-3),
        pytest.approx(2, abs=1e-3),
    )


# --- the store itself -------------------------------------------------------------------


@contract("adapt_datetime", "read_datetime", "datetime_as_text")
def test_a_datetime_goes_in_and_comes_back_as_the_same_aware_moment(s):
    job = make_job()
    paris = datetime(2026, 3, 29, 3, 30, 15, 123456, tzinfo=ZoneInfo("Europe/Paris"))
    run = a_run(job, 0, status=PENDING)
    assert s.adapt_datetime(None) is None
    assert s.read_datetime(None) is None
    assert s.adapt_datetime(paris) == s.adapt_datetime(paris.astimezone(UTC))

    with s.transaction() as ops:
        ops.cursor.execute(
            "UPDATE jobs_jobhistory SET not_before = %s WHERE id = %s",
            [s.adapt_datetime(paris), key(run)],
        )
        ops.cursor.execute(
            f"SELECT {s.datetime_as_text('not_before')} FROM jobs_jobhistory WHERE id = %s",
            [key(run)],
        )
        (value,) = ops.cursor.fetchone()

    assert s.read_datetime(value) == paris
    assert s.read_datetime(value).utcoffset() == timedelta(0)
    assert fresh(run).not_before == paris


@contract("read_key", "driver_cursor")
def test_an_id_a_statement_returns_reads_as_32_hex_digits(s):
    job = make_job()
    with s.driver_cursor() as cursor:
        cursor.execute("SELECT id FROM jobs_job WHERE id = %s", [key(job)])
        (value,) = cursor.fetchone()
        cursor.execute("SELECT id FROM jobs_job WHERE id = %s", [new_key()])
        assert cursor.fetchall() == []
    assert s.read_key(value) == key(job)


@contract("transaction", "writer_lock")
def test_a_transaction_keeps_its_writes_or_none_of_them(s):
    job = make_job()
    kept, dropped = new_run(job, -10), new_run(job, -20)
    with s.transaction() as ops:
        ops.insert_runs([kept])
    with pytest.raises(RuntimeError), s.transaction() as ops:
        ops.insert_runs([dropped])
        ops.heartbeat_runs([kept.key], db(NOW))
        raise RuntimeError("the engine failed half-way")
    assert list(JobHistory.objects.values_list("pk", flat=True)) == [uuid.UUID(kept.key)]
    # The lock is free again: the next write transaction goes ahead.
    with s.writer_lock():
        pass
    with s.transaction() as ops:
        assert ops.running_among([kept.key]) == set()


@contract("writing")
def test_writing_keeps_the_orm_writes_of_its_block_or_none_of_them(s):
    job = make_job()
    with s.writing():
        Job.objects.filter(pk=job.pk).update(name="renamed")
    with pytest.raises(RuntimeError), s.writing():
        Job.objects.filter(pk=job.pk).update(name="half-way")
        raise RuntimeError
    assert fresh(job).name == "renamed"


@contract("reading")
def test_reading_gives_operations_that_see_what_was_written(s):
    job = make_job()
    run = a_run(job, -10, status=PENDING)
    with s.reading() as ops:
        assert isinstance(ops, Operations)
        assert [t.run_key for t in ops.tickets_for([key(run)], db(NOW))] == [key(run)]


def _one_run_plan(job: Job) -> Callable[[Operations], NewRun]:
    def plan(ops: Operations) -> NewRun:
        return new_run(job, -10)

    return plan


@contract("claim")
def test_claim_applies_the_plan_in_one_transaction_and_gives_back_what_was_inserted(s):
    job = make_job()
    calls: list[bool] = []

    def apply(ops: Operations, planned: NewRun, all_or_nothing: bool) -> set[str]:
        calls.append(all_or_nothing)
        return ops.insert_runs([planned])

    claimed = s.claim(_one_run_plan(job), apply)

    assert isinstance(claimed, Claimed)
    assert claimed.inserted == {claimed.plan.key}
    assert JobHistory.objects.get(job=job).pk.hex == claimed.plan.key
    assert len(calls) == 1


@contract("claim")
def test_claim_with_nothing_planned_applies_nothing(s):
    applied = []
    assert s.claim(lambda ops: None, lambda *args: applied.append(args) or set()) is None
    assert applied == []


@contract("claim")
def test_claim_plans_again_when_a_job_moved_and_keeps_no_write_of_the_failed_apply(s):
    job = make_job()

    def apply(ops: Operations, planned: NewRun, all_or_nothing: bool) -> set[str]:
        inserted = ops.insert_runs([planned])
        if all_or_nothing:
            raise JobsMoved  # as an apply finding a job moved since the plan read it
        return inserted

    claimed = s.claim(_one_run_plan(job), apply)

    assert claimed is not None
    (run,) = JobHistory.objects.filter(job=job)
    assert claimed.inserted == {run.pk.hex} == {claimed.plan.key}


@contract("update_rows")
def test_update_rows_runs_a_row_statement_once_per_row_and_counts_the_rows_changed(s):
    jobs = [make_job() for _ in range(3)]
    with s.transaction() as ops:
        changed = s.update_rows(
            ops.cursor,
            "record_failure_streaks",
            [FailureStreak(i + 1, key(job)) for i, job in enumerate(jobs)]
            + [FailureStreak(9, new_key())],
        )
    assert changed == 3
    assert [fresh(job).consecutive_failures for job in jobs] == [1, 2, 3]


@contract(
    "insert_runs",
    "start_runs",
    "started_tickets",
    "heartbeat_runs",
    "write_live_logs",
    "finish_runs",
    "insert_retry_runs",
)
def test_a_batch_larger_than_one_statement_takes_is_handled_whole(s):
    """Batches go in chunks (ROWS_PER_STATEMENT rows, a hundred live logs), within every
    vendor's bound on a statement's parameters; a chunk's edge loses no row."""
    job = make_job()
    count = ROWS_PER_STATEMENT + 100
    runs = [new_run(job, -count + i) for i in range(count)]
    keys = [run.key for run in runs]

    with s.transaction() as ops:
        assert ops.insert_runs(runs) == set(keys)
        assert ops.start_runs(keys, WORKER, db(NOW)) == set(keys)
        assert len(ops.started_tickets(keys)) == count
        assert ops.heartbeat_runs(keys, db(at(1))) == count
        logs = [LiveLog(k, WORKER, "so far") for k in keys[: LIVE_LOGS_PER_STATEMENT + 50]]
        assert ops.write_live_logs(logs) == len(logs)
        assert JobHistory.objects.filter(job=job, log="so far").count() == len(logs)
        done = db(at(2))
        assert (
            ops.finish_runs([FinishedRun(FAILED, db(NOW), done, "", None, None, k) for k in keys])
            == count
        )
        ops.insert_retry_runs(
            [RetryRun(new_key(), key(job), run.scheduled_for, 2, done, done, None) for run in runs]
        )

    assert JobHistory.objects.filter(job=job, status=FAILED).count() == count
    assert JobHistory.objects.filter(job=job, attempt=2, status=PENDING).count() == count


@contract("active_runs", "watched_jobs", "chaining_jobs", "chained_jobs")
def test_a_batch_of_jobs_larger_than_one_statement_takes_is_handled_whole(s):
    """Statements naming each job twice, or locking them, take half a chunk of jobs."""
    count = ROWS_PER_STATEMENT // 2 + 50
    target = make_job(name="target")
    jobs = Job.objects.bulk_create(
        Job(
            name=f"j{i}",
            command="true",
            interval=10,
            interval_unit="second",
            notify_on_failure=True,
        )
        for i in range(count)
    )
    Job.on_success.through.objects.bulk_create(
        Job.on_success.through(from_job_id=job.pk, to_job_id=target.pk) for job in jobs
    )
    keys = [key(job) for job in jobs]
    with s.transaction() as ops:
        ops.insert_runs([new_run(job, -10) for job in jobs])
        active = ops.active_runs(keys)
        watched = ops.watched_jobs(keys)
        chaining = ops.chaining_jobs(keys)
        links = ops.chained_jobs(keys)

    assert set(active) == set(keys)
    assert sorted(w.key for w in watched) == sorted(keys)
    assert chaining == set(keys)
    assert sorted(link.from_key for link in links) == sorted(keys)


@contract("seconds_between")
def test_seconds_between_is_computed_by_the_database(s):
    job = make_job()
    run = a_run(job, -10, status=SUCCESS, took=timedelta(seconds=2.25))
    expression = s.seconds_between("finished_at", "started_at")
    with s.reading() as ops:
        ops.cursor.execute(f"SELECT {expression} FROM jobs_jobhistory WHERE id = %s", [key(run)])
        (seconds,) = ops.cursor.fetchone()
    assert float(seconds) == pytest.approx(2.25)


@contract("hour_of")
def test_hour_of_groups_a_datetime_column_by_its_utc_hour(s):
    job = make_job()
    for seconds in (5 * 60, 40 * 60, 70 * 60, -1):
        a_run(job, seconds)
    groups = (
        JobHistory.objects.annotate(hour=s.hour_of("created_at"))
        .values("hour")
        .annotate(n=Count("id"))
        .order_by("hour")
    )
    assert [group["n"] for group in groups] == [1, 2, 1]


@contract("checkpointer")
def test_the_checkpointer_runs_beside_writes_and_stops_when_told(s):
    """As the scheduler uses it (start, then stop, once or twice on the way out) and
    the pruning (a with-block around its writes)."""
    job = make_job()
    checkpointer = s.checkpointer()
    checkpointer.start()
    try:
        with s.transaction() as ops:
            ops.insert_runs([new_run(job, -10)])
    finally:
        checkpointer.stop()
    checkpointer.stop()
    assert not getattr(checkpointer, "running", False)
    with s.checkpointer(), s.transaction() as ops:
        ops.insert_runs([new_run(job, -20)])
    assert JobHistory.objects.filter(job=job).count() == 2


@contract("lock_queue")
def test_the_stores_lock_queue_is_what_the_operation_calls(s):
    with s.transaction() as ops:
        assert s.lock_queue(ops, "q") is None


# --- nothing untested -------------------------------------------------------------------


def _public_methods(cls: type) -> set[str]:
    return {
        name
        for name, value in inspect.getmembers(cls)
        if not name.startswith("_") and callable(value) and name not in dir(object)
    }


def test_every_operation_has_a_conformance_test():
    missing = _public_methods(Operations) - set(COVERED)
    assert not missing, f"operations without a conformance test here: {sorted(missing)}"


def test_every_store_method_has_a_conformance_test():
    missing = _public_methods(Store) - set(COVERED)
    assert not missing, f"store methods without a conformance test here: {sorted(missing)}"


def test_every_name_covered_is_an_operation_or_a_store_method():
    unknown = set(COVERED) - _public_methods(Operations) - _public_methods(Store)
    assert not unknown, f"covered names that are no operation: {sorted(unknown)}"
