"""Pause all (maintenance mode): nothing is claimed while paused, a pause with `until`
ends by itself, and at the resume each job's misfire policy decides what runs.

The scheduler is driven one pass at a time under a frozen clock (time_machine)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs import engine
from jobs.models import (
    Channel,
    Job,
    JobHistory,
    RunStatus,
    SchedulerAction,
    SchedulerEvent,
    SchedulerState,
    acting,
)
from jobs.runs import RunTicket
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import NOW, make_user

pytestmark = pytest.mark.django_db


class Recorder:
    """A hand-off that keeps the claimed tickets (nothing executes them)."""

    dispatched = False
    queues = None  # every queue

    def __init__(self) -> None:
        self.tickets: list[RunTicket] = []

    def hand(self, tickets: Sequence[RunTicket]) -> int:
        self.tickets += tickets
        return len(tickets)

    def feed_ready(self, now: object, batch: int) -> int:
        return 0

    def start(self) -> None:
        pass

    def stop(self, grace: float) -> None:
        pass

    def wait_idle(self, timeout: float | None = None) -> bool:
        return True


def scheduler() -> Scheduler:
    return Scheduler(handoff=Recorder())  # type: ignore[arg-type]


def scheduled(job: Job) -> list:
    return list(job.runs.order_by("scheduled_for").values_list("scheduled_for", flat=True))


@pytest.mark.parametrize("looks_first", [False, True], ids=["pass alone", "as the loop"])
def test_a_paused_scheduler_claims_nothing_and_resumes_at_until_by_itself(
    make_job, clock, looks_first
):
    job = make_job(name="tick", interval=10, interval_unit="second")  # first at NOW + 10 s
    until = NOW + timedelta(minutes=1)
    engine.pause(until=until, note="database upgrade")
    loop = scheduler()

    def run_pass():  # type: ignore[no-untyped-def]
        if looks_first:  # the look-up before the sleep, a moment before the pass
            loop.seconds_until_next_work()
        return loop.run_pass()

    for moment in (NOW + timedelta(seconds=10), NOW + timedelta(seconds=59)):
        clock.move_to(moment)
        assert run_pass().claimed == 0
    assert engine.claim_due() == []  # the claim asks the switch itself too
    job.refresh_from_db()
    assert job.next_run_at == NOW + timedelta(seconds=10)  # left due, untouched
    assert not JobHistory.objects.exists()

    if looks_first:
        loop.seconds_until_next_work()  # it still sees the pause: the until is to come
    clock.move_to(until)
    assert loop.run_pass().claimed == 1
    # coalesce (the default): one run, for the latest occurrence, standing for the six.
    assert scheduled(job) == [until]
    job.refresh_from_db()
    assert job.next_run_at == until + timedelta(seconds=10)
    # The resume is recorded once, by the system, at the until.
    switch = SchedulerState.objects.get()
    assert (switch.paused_at, switch.paused_until, switch.resumed_at) == (None, None, until)
    events = list(
        SchedulerEvent.objects.order_by("created_at").values_list(
            "action", "channel", "created_at", "note"
        )
    )
    assert events == [
        (SchedulerAction.PAUSE, Channel.SYSTEM, NOW, "database upgrade"),
        (SchedulerAction.RESUME, Channel.SYSTEM, until, "database upgrade"),
    ]
    clock.move_to(until + timedelta(seconds=10))
    assert run_pass().claimed == 1
    assert SchedulerEvent.objects.count() == 2


@pytest.mark.parametrize(
    ("policy", "runs"),
    [
        ("coalesce", [NOW + timedelta(minutes=10)]),  # one run for the ten missed
        ("skip", []),  # the latest is 30 s late, beyond the 5 s grace: none
    ],
)
def test_the_misfire_policy_decides_what_came_due_during_the_pause(make_job, clock, policy, runs):
    job = make_job(interval=1, interval_unit="minute", misfire_policy=policy)  # NOW + 1 min
    engine.pause()
    loop = scheduler()
    clock.move_to(NOW + timedelta(minutes=10, seconds=30))
    assert loop.run_pass().claimed == 0
    assert engine.resume()
    loop.run_pass()
    assert scheduled(job) == runs
    job.refresh_from_db()
    assert job.next_run_at == NOW + timedelta(minutes=11)  # the next slot, no burst
    assert job.runs.count() == len(runs)


@pytest.mark.parametrize("policy", ["coalesce", "skip"])
def test_a_one_off_job_due_during_the_pause_runs_once_after_it(make_job, clock, policy):
    """A one-off job has no downtime policy (it is stored as the default, coalesce, whatever
    is asked): due during the pause, it runs once when the scheduler resumes."""
    job = make_job(
        schedule_type="once", scheduled_at=NOW + timedelta(minutes=1), misfire_policy=policy
    )
    engine.pause()
    clock.move_to(NOW + timedelta(hours=1))
    loop = scheduler()
    loop.run_pass()
    engine.resume()
    loop.run_pass()
    assert job.runs.count() == 1
    job.refresh_from_db()
    assert job.is_active is False
    assert job.misfire_policy == "coalesce"


def test_a_pause_within_the_grace_catches_up_like_a_scheduler_briefly_behind(make_job, clock):
    job = make_job(interval=1, interval_unit="second")  # NOW + 1 s, + 2 s, ...
    engine.pause()
    clock.move_to(NOW + timedelta(seconds=3))
    engine.resume()
    scheduler().run_pass()
    assert scheduled(job) == [NOW + timedelta(seconds=s) for s in (1, 2, 3)]


def test_pending_runs_made_before_or_during_the_pause_may_still_start(make_job, clock):
    job = make_job()
    engine.pause()
    run = engine.run_now(job)
    assert [t.run_id for t in engine.ready_tickets()] == [run.pk]


def test_a_paused_loop_turn_makes_no_statement_an_idle_one_does_not(make_job, clock):
    """The loop learns the pause from the look-up it makes before sleeping: a paused turn,
    with work come due meanwhile, costs no more statements than an idle turn with
    nothing due (the second turn of each: the heartbeat and the reaper are throttled)."""
    job = make_job(interval=10, interval_unit="second")  # due at NOW + 10 s
    loop = scheduler()

    def turn() -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            loop.run_pass()
            loop.seconds_until_next_work()
        return [query["sql"] for query in queries]

    loop.seconds_until_next_work()
    turn()
    idle = turn()
    clock.move_to(NOW + timedelta(minutes=5))
    engine.pause()
    loop.seconds_until_next_work()
    turn()
    paused = turn()
    assert len(paused) <= len(idle), (paused, idle)
    assert not [sql for sql in paused if "next_run_at <=" in sql]  # no claim at all
    # The pause is read by the look-up alone, no statement of its own.
    assert [sql for sql in paused if "jobs_schedulerstate" in sql] == [paused[-1]]
    assert "next_run_at IS NOT NULL" in paused[-1]
    job.refresh_from_db()
    assert job.next_run_at == NOW + timedelta(seconds=10)


def test_while_paused_the_loop_sleeps_until_the_until_not_until_the_due_jobs(make_job, clock):
    make_job(interval=10, interval_unit="second")
    clock.move_to(NOW + timedelta(seconds=30))
    assert engine.wake_up(timezone.now()).at == NOW + timedelta(seconds=10)  # overdue
    engine.pause(until=NOW + timedelta(minutes=5))
    wake = engine.wake_up(timezone.now())
    assert wake.at == NOW + timedelta(minutes=5)
    assert wake.pause.active(timezone.now())
    engine.pause()  # until a resume
    assert engine.wake_up(timezone.now()).at is None
    assert Scheduler(handoff=Recorder(), tick=2.0).seconds_until_next_work() == 2.0  # type: ignore[arg-type]


def test_a_claim_planned_before_the_pause_writes_nothing_after_it(make_job, clock, monkeypatch):
    """The plan is read, then the pause commits, then the claim applies: the claim's own
    check in its write transaction refuses (the jobs stay due, no run is inserted)."""
    from jobs.engine import claim

    job = make_job()
    clock.move_to(NOW + timedelta(seconds=10))
    planned = claim._plan

    def plan_then_pause(*args, **kwargs):  # type: ignore[no-untyped-def]
        made = planned(*args, **kwargs)
        engine.pause()
        return made

    monkeypatch.setattr(claim, "_plan", plan_then_pause)
    assert engine.claim_due() == []
    job.refresh_from_db()
    assert job.next_run_at == NOW + timedelta(seconds=10)
    assert not JobHistory.objects.exists()


def test_pausing_again_keeps_since_and_takes_the_new_until_note_and_author(clock):
    alice, bob = make_user("alice"), make_user("bob")
    with acting(alice, Channel.DASHBOARD):
        engine.pause(note="first")
    clock.shift(timedelta(minutes=5))
    with acting(bob, Channel.API):
        engine.pause(until=NOW + timedelta(hours=1), note="  second  ")
    switch = SchedulerState.objects.get()
    assert switch.paused_at == NOW
    assert (switch.paused_until, switch.note) == (NOW + timedelta(hours=1), "second")
    assert (switch.paused_by, switch.paused_by_name, switch.channel) == (bob, "bob", "api")
    assert list(SchedulerEvent.objects.order_by("id").values_list("username", "channel")) == [
        ("alice", "dashboard"),
        ("bob", "api"),
    ]


def test_resuming_when_not_paused_records_nothing():
    assert engine.resume() is False
    assert not SchedulerEvent.objects.exists()


@pytest.mark.parametrize(
    ("until", "note", "field"),
    [
        (NOW - timedelta(seconds=1), "", "until"),
        (NOW, "", "until"),
        (None, "x" * 501, "note"),
        (None, "deploy \x1b[31m", "note"),
        (None, "two\nlines", "note"),
        (None, "\u202eevil", "note"),
    ],
)
def test_a_bad_pause_is_refused_at_its_field_and_changes_nothing(clock, until, note, field):
    with pytest.raises(ValidationError) as refused:
        engine.pause(until=until, note=note)
    assert list(refused.value.message_dict) == [field]
    assert not SchedulerState.objects.exists()
    assert not SchedulerEvent.objects.exists()


def test_a_note_of_500_characters_is_kept(clock):
    engine.pause(note="n" * 500)
    assert SchedulerState.objects.get().note == "n" * 500


def test_runs_already_claimed_before_the_pause_stay_pending(make_job, clock):
    job = make_job()
    clock.move_to(NOW + timedelta(seconds=10))
    assert len(engine.claim_due()) == 1
    engine.pause()
    assert job.runs.get().status == RunStatus.PENDING
