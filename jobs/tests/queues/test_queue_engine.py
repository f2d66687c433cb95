"""The queue engine in one process: what a run's queue and priority are copied from,
which runs a process serves, priority order, limits counted by the database, the
statements' plans, and the settings and options refused."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.core.checks import run_checks
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jobs import engine
from jobs.executors import ExecutionContext, Outcome
from jobs.models import Job, JobHistory, OverlapPolicy, RunStatus, Trigger
from jobs.queues import settings as queues
from jobs.runs import RunResult, RunTicket
from jobs.runtime.pool import HueyHandoff
from jobs.runtime.scheduler import Scheduler
from jobs.sql import store
from jobs.tests.factories import NOW, WORKER

pytestmark = pytest.mark.django_db


class Recording:
    """Succeeds at once and remembers the order runs were executed in."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self._lock = threading.Lock()

    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        with self._lock:
            self.order.append(ticket.job_name)
        return Outcome(succeeded=True, log="ok\n")


def due_job(make_job, name: str, **fields) -> Job:
    return make_job(name=name, schedule_type="once", scheduled_at=NOW, **fields)


def finished(ticket: RunTicket, succeeded: bool = True) -> RunResult:
    return RunResult(ticket, succeeded, "", NOW, NOW + timedelta(seconds=1))


# --- every insert copies the job's queue and priority -----------------------------------


def test_a_claimed_run_has_its_jobs_queue_and_priority_and_so_does_its_ticket(make_job, clock):
    due_job(make_job, "report", queue="reports", priority=7)
    [ticket] = engine.claim_due(NOW)
    assert (ticket.queue, ticket.priority) == ("reports", 7)
    run = JobHistory.objects.get()
    assert (run.queue, run.priority) == ("reports", 7)


def test_a_retry_goes_to_the_queue_its_job_is_in_now(make_job, clock):
    job = due_job(make_job, "report", queue="reports", priority=7, max_retries=1)
    [ticket] = engine.claim_due(NOW)
    [started] = engine.start([ticket], WORKER, NOW)
    Job.objects.filter(pk=job.pk).update(queue="spare", priority=-3)
    engine.finish([finished(started, succeeded=False)], WORKER)
    retry = JobHistory.objects.get(attempt=2)
    assert (retry.trigger, retry.status) == (Trigger.RETRY, RunStatus.PENDING)
    assert (retry.queue, retry.priority) == ("spare", -3)


def test_a_reaped_runs_retry_and_an_operators_retry_copy_the_job_too(make_job, clock, settings):
    job = due_job(make_job, "report", queue="reports", priority=2, max_retries=1)
    [ticket] = engine.claim_due(NOW)
    engine.start([ticket], WORKER, NOW)
    assert engine.reap(NOW + timedelta(hours=1)) == 1
    reaped_retry = JobHistory.objects.get(attempt=2)
    assert (reaped_retry.queue, reaped_retry.priority) == ("reports", 2)
    JobHistory.objects.filter(pk=reaped_retry.pk).update(status=RunStatus.FAILED)
    Job.objects.filter(pk=job.pk).update(queue="spare", priority=9)
    manual = engine.retry_run(reaped_retry)
    assert (manual.queue, manual.priority) == ("spare", 9)


def test_run_now_skipped_and_chained_runs_copy_their_jobs(make_job, clock):
    # A recurring job: the overlap policy does not apply to a one-off job.
    forbid = make_job(
        name="forbid",
        interval=1,
        interval_unit="hour",
        queue="reports",
        priority=4,
        overlap_policy=OverlapPolicy.FORBID,
    )
    Job.objects.filter(pk=forbid.pk).update(next_run_at=NOW)
    forbid.refresh_from_db()
    now_run = engine.run_now(forbid, NOW - timedelta(seconds=1))
    assert (now_run.queue, now_run.priority) == ("reports", 4)
    engine.claim_due(NOW)  # the run now is pending: the occurrence is skipped
    skipped = JobHistory.objects.get(status=RunStatus.SKIPPED)
    assert (skipped.queue, skipped.priority) == ("reports", 4)

    after = make_job(
        name="after",
        queue="mail",
        priority=-5,
        schedule_type="once",
        scheduled_at=NOW + timedelta(days=1),
    )
    first = due_job(make_job, "first")
    first.on_success.add(after)
    [ticket] = [t for t in engine.claim_due(NOW + timedelta(seconds=1)) if t.job_name == "first"]
    [started] = engine.start([ticket], WORKER, NOW + timedelta(seconds=1))
    engine.finish([finished(started)], WORKER)
    chained = JobHistory.objects.get(trigger=Trigger.CHAIN)
    assert (chained.queue, chained.priority) == ("mail", -5)


# --- which runs a process serves, and in which order ------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_process_runs_only_the_queues_it_serves_and_the_others_wait_pending(
    make_job, instant, clock
):
    due_job(make_job, "report", queue="reports")
    due_job(make_job, "backup")
    recording = Recording()
    Scheduler(workers=2, executor=recording, queues={"reports"}).run_once()
    assert recording.order == ["report"]
    waiting = JobHistory.objects.get(job__name="backup")
    # Claimed by this process, all the same, and not failed: it waits for its workers.
    assert waiting.status == RunStatus.PENDING and waiting.queue == "default"
    assert engine.reap(NOW + timedelta(hours=1)) == 0
    waiting.refresh_from_db()
    assert waiting.status == RunStatus.PENDING
    Scheduler(workers=2, executor=recording, queues={"default"}).run_once()
    waiting.refresh_from_db()
    assert waiting.status == RunStatus.SUCCESS


@pytest.mark.django_db(transaction=True)
def test_under_a_backlog_higher_priority_runs_start_first(make_job, instant, clock):
    # Claimed while nobody runs them (no worker started): a backlog of pending runs.
    for index in range(4):
        due_job(make_job, f"low {index}", priority=0)
        due_job(make_job, f"high {index}", priority=10)
    engine.claim_due(NOW)
    assert JobHistory.objects.filter(status=RunStatus.PENDING).count() == 8
    recording = Recording()
    scheduler = Scheduler(workers=1, executor=recording)
    clock.shift(1)
    assert scheduler.run_pass().fed == 8  # the feed queues them in priority order
    scheduler.start_workers()
    try:
        assert scheduler.wait_idle(timeout=30)
    finally:
        scheduler.shutdown()
    assert [name.split()[0] for name in recording.order] == ["high"] * 4 + ["low"] * 4


@pytest.mark.django_db(transaction=True)
def test_claimed_runs_of_a_higher_priority_start_before_earlier_ones(make_job, instant, clock):
    for index in range(3):
        make_job(name=f"low {index}", schedule_type="once", scheduled_at=NOW - timedelta(seconds=5))
    for index in range(3):
        due_job(make_job, f"high {index}", priority=10)
    recording = Recording()
    scheduler = Scheduler(workers=1, executor=recording)
    scheduler.run_pass(NOW)  # claims all six (the lows are older), hands them over
    scheduler.start_workers()
    try:
        assert scheduler.wait_idle(timeout=30)
    finally:
        scheduler.shutdown()
    assert [name.split()[0] for name in recording.order] == ["high"] * 3 + ["low"] * 3


# --- limits -----------------------------------------------------------------------------


@pytest.fixture
def reports_limit(settings):
    settings.JOBS_QUEUE_LIMITS = "reports=2"
    return settings


def claimed_reports(make_job, count: int, **fields) -> list[RunTicket]:
    for index in range(count):
        due_job(make_job, f"report {index}", queue="reports", **fields)
    return engine.claim_due(NOW)


def test_a_start_over_the_limit_leaves_the_run_pending(make_job, clock, reports_limit):
    tickets = claimed_reports(make_job, 3)
    started = engine.start(tickets, WORKER, NOW)
    assert len(started) == 2
    assert JobHistory.objects.filter(status=RunStatus.PENDING).count() == 1
    # Another worker (another process, the same database) finds no room either.
    assert engine.start(tickets, "other-host:2/w1", NOW) == []
    assert engine.take("reports", "other-host:2/w1", now=NOW) == []


def test_a_freed_slot_goes_to_the_best_waiting_run(make_job, clock, reports_limit):
    due_job(make_job, "low", queue="reports", priority=0)
    due_job(make_job, "high", queue="reports", priority=5)
    due_job(make_job, "mid", queue="reports", priority=3)
    engine.claim_due(NOW)
    first = engine.take("reports", WORKER, most=5, now=NOW)
    assert sorted(t.job_name for t in first) == ["high", "mid"]  # two slots, best first
    assert engine.take("reports", WORKER, now=NOW) == []
    engine.finish([finished(first[0])], WORKER)
    [then] = engine.take("reports", WORKER, now=NOW)
    assert then.job_name == "low" and then.queue == "reports"


@pytest.mark.parametrize("how", ["finished", "cancelled", "reaped"])
def test_a_slot_is_freed_however_the_run_ends(make_job, clock, reports_limit, how):
    tickets = claimed_reports(make_job, 3)
    started = engine.start(tickets, WORKER, NOW)
    if how == "finished":
        engine.finish([finished(started[0])], WORKER)
    elif how == "cancelled":
        engine.cancel_run(JobHistory.objects.get(pk=started[0].run_id), by="alice")
    else:
        engine.reap(NOW + timedelta(hours=1))  # both were lost: both slots free
    assert len(engine.take("reports", WORKER, now=NOW + timedelta(hours=1))) == 1


def test_other_queues_are_not_limited_by_a_limited_one(make_job, clock, reports_limit):
    tickets = claimed_reports(make_job, 3)
    for index in range(3):
        due_job(make_job, f"backup {index}")
    tickets += engine.claim_due(NOW)
    started = engine.start(tickets, WORKER, NOW)
    assert sorted(t.queue for t in started) == ["default"] * 3 + ["reports"] * 2


@pytest.mark.django_db(transaction=True)
def test_a_pool_with_a_limited_queue_runs_everything_it_serves(
    make_job, instant, clock, reports_limit
):
    claimed_reports(make_job, 5)
    due_job(make_job, "backup")
    recording = Recording()
    clock.shift(1)
    Scheduler(workers=3, executor=recording).run_once()
    assert sorted(recording.order) == ["backup"] + [f"report {i}" for i in range(5)]
    assert not JobHistory.objects.exclude(status=RunStatus.SUCCESS).exists()


@pytest.mark.django_db(transaction=True)
def test_once_runs_every_run_of_many_limited_queues_to_the_end(make_job, instant, clock, settings):
    """`--once` waits for the takes of limited queues as for queued runs: the pool is
    never seen idle between a take and the next one it offers, which once ended the
    pass with hundreds of runs still pending (10 queues limited to 8, 10,000 runs)."""
    names = [f"q{index}" for index in range(10)]
    settings.JOBS_QUEUE_LIMITS = ",".join(f"{name}=1" for name in names)
    for index in range(1000):
        due_job(make_job, f"job {index}", queue=names[index % len(names)])
    clock.shift(1)
    Scheduler(workers=4).run_once()
    assert JobHistory.objects.count() == 1000
    assert not JobHistory.objects.exclude(status=RunStatus.SUCCESS).exists()


# --- Huey routing -----------------------------------------------------------------------


def test_huey_hand_off_routes_runs_by_queue_and_shell_runs_to_their_own(settings):
    sent: dict[str, list[str]] = {}

    def sender(name):
        def send(keys):
            sent.setdefault(name, []).extend(keys)
            return len(keys)

        return send

    routes = {"reports": sender("jobs-reports")}
    handoff = HueyHandoff(sender("jobs"), send_shell=sender("jobs-shell"), route=routes.get)
    tickets = [
        RunTicket("a" * 32, "1" * 32, "r", "", NOW, 1, 0, 0, queue="reports"),
        RunTicket("b" * 32, "1" * 32, "d", "", NOW, 1, 0, 0, queue="other"),
        RunTicket("c" * 32, "1" * 32, "s", "", NOW, 1, 0, 0, executor="shell", queue="reports"),
    ]
    assert handoff.hand(tickets) == 3
    assert sent == {"jobs-reports": ["a" * 32], "jobs": ["b" * 32], "jobs-shell": ["c" * 32]}


def test_huey_targets_are_named_after_the_prefix(settings):
    settings.HUEY_QUEUE = "jobs"
    settings.JOBS_HUEY_QUEUES = ["reports"]
    assert queues.huey_target("reports") == "jobs-reports"
    assert queues.huey_target("default") == "jobs"


def test_a_dispatcher_serving_some_queues_hands_out_only_theirs(make_job, clock):
    due_job(make_job, "report", queue="reports")
    due_job(make_job, "backup")
    sent: list[str] = []
    handoff = HueyHandoff(lambda keys: sent.extend(keys) or len(keys), queues={"reports"})
    Scheduler(handoff=handoff).run_pass(NOW)
    assert sent == [JobHistory.objects.get(job__name="report").pk.hex]
    backup = JobHistory.objects.get(job__name="backup")
    assert backup.dispatched_at is None  # for a dispatcher that serves it


# --- the statements' plans --------------------------------------------------------------


def plan_of(sql: str) -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
            return " ".join(str(row[-1]) for row in cursor.fetchall())
        # A test table is tiny: a sequential scan would win. Whether the index can serve
        # the statement is the question.
        if connection.vendor == "mysql":
            # The index chosen (`key`), the ones it could use (`possible_keys`), how.
            cursor.execute(f"EXPLAIN {sql}")
            return " ".join(str(value) for row in cursor.fetchall() for value in row)
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}")
        return " ".join(row[0] for row in cursor.fetchall())


def captured(call) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        call()
    return [q["sql"] for q in queries.captured_queries]


def test_the_queue_statements_walk_the_pending_queue_index(make_job, clock, reports_limit):
    claimed_reports(make_job, 3, priority=1)
    s = store()
    db_now = s.adapt_datetime(NOW)
    # One capture around the cursors: an engine cursor logs its statements only when it
    # was opened inside the capture (jobs/sql/cursor.py).
    with CaptureQueriesContext(connection) as queries:
        with s.reading() as ops:
            ops.ready_runs("reports", db_now, 10)
            ops.pending_queues()
            ops.undispatched_runs("reports", db_now, db_now, 10)
            ops.queue_room("reports", db_now, 5)
        with s.transaction() as ops:
            ops.take_runs("reports", 2, 1, WORKER, db_now)
    statements = [
        q["sql"]
        for q in queries.captured_queries
        if "jobs_jobhistory" in q["sql"] and not q["sql"].startswith(("SAVEPOINT", "RELEASE"))
    ]
    assert len(statements) >= 5, statements
    for sql in statements:
        plan = plan_of(sql)
        if connection.vendor == "mysql":
            # On a table of three rows InnoDB's optimizer scans and sorts rather than walk
            # an index, and MySQL has no switch like enable_seqscan to ask whether it
            # could: what holds there is that the index serves every read's predicate.
            # take_runs' UPDATE then takes the rows its locking read found by key.
            assert "jobs_run_pending_queue" in plan or sql.startswith("UPDATE"), (sql, plan)
            continue
        assert "jobs_run_pending_queue" in plan, (sql, plan)
        # In the index's order: no sort of the pending runs.
        assert "TEMP B-TREE" not in plan and "Sort" not in plan, (sql, plan)


def test_a_burst_without_limits_pays_no_statement_of_the_limits(make_job, clock, instant):
    due_job(make_job, "backup")
    [ticket] = engine.claim_due(NOW)
    statements = captured(lambda: engine.start([ticket], WORKER, NOW))
    writes = [sql for sql in statements if "SAVEPOINT" not in sql]
    if connection.vendor == "mysql":
        # Differs because InnoDB would deadlock two starts that lock through the status
        # index (jobs/sql/mysql/queries.sql, start_runs): the runs are first locked by key,
        # the only other statement, and it reads the runs, not a queue's limit.
        locking_read, *writes = writes
        assert locking_read.startswith("SELECT id FROM jobs_jobhistory FORCE INDEX (PRIMARY)")
        assert locking_read.endswith("FOR UPDATE")
        assert ticket.run_key in locking_read.replace("-", ""), locking_read
    assert len(writes) == 1 and writes[0].startswith("UPDATE"), writes


# --- bad settings and options -----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("reports", "not queue=limit"),
        ("reports=two", "must be a whole number"),
        ("reports=0", "must be a whole number from 1"),
        ("re ports=2", "not a queue name"),
        ("reports=2,reports=3", "named twice"),
    ],
)
def test_a_bad_queue_limit_is_refused_by_a_check(settings, value, says):
    settings.JOBS_QUEUE_LIMITS = value
    errors = [e for e in run_checks() if e.id == "jobs.E012"]
    assert len(errors) == 1 and says in errors[0].msg, errors


def test_good_queue_limits_pass_the_check_and_read_as_a_mapping(settings):
    settings.JOBS_QUEUE_LIMITS = " reports=2, default=20 ,"
    assert not [e for e in run_checks() if e.id == "jobs.E012"]
    assert queues.limits() == {"reports": 2, "default": 20}
    settings.JOBS_QUEUE_LIMITS = ""
    assert queues.limits() == {}


def test_a_consumed_huey_queue_must_be_listed(settings):
    settings.JOBS_HUEY_QUEUES = ["reports"]
    settings.JOBS_HUEY_CONSUME_QUEUE = "mail"
    assert [e.id for e in run_checks() if e.id.startswith("jobs.E01")] == ["jobs.E014"]


@pytest.mark.parametrize("value", ["re ports", "reports,", "", "a" * 51])
def test_runscheduler_refuses_a_bad_queue_name(value):
    with pytest.raises(CommandError, match="--queues"):
        call_command("runscheduler", "--once", "--queues", value)
    assert not JobHistory.objects.exists()
