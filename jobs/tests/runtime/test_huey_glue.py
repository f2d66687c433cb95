"""The Huey path in this process, with Huey in immediate mode (tasks run when sent)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from huey.contrib.djhuey import HUEY

from jobs import engine
from jobs.huey.tasks import send_runs
from jobs.models import JobHistory, RunStatus
from jobs.runtime.pool import HueyHandoff
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import NOW


@pytest.fixture
def immediate_huey():
    was = HUEY.immediate
    HUEY.immediate = True
    yield HUEY
    HUEY.immediate = was


@pytest.mark.django_db(transaction=True)
def test_a_pass_in_huey_mode_hands_due_runs_to_huey_workers(
    make_job, clock, instant, immediate_huey
):
    for i in range(120):
        make_job(name=f"job {i}")
    clock.move_to(NOW + timedelta(seconds=10))
    stats = Scheduler(handoff=HueyHandoff(send_runs)).run_pass()
    assert stats.claimed == 120 and stats.fed == 120
    assert JobHistory.objects.filter(status=RunStatus.SUCCESS).count() == 120
    assert not JobHistory.objects.filter(dispatched_at__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_message_was_lost_is_handed_out_again_after_the_timeout(
    make_job, clock, settings, instant
):
    settings.JOBS_REDISPATCH_SECONDS = 60
    job = make_job()
    clock.move_to(job.next_run_at)
    # Claimed and stamped as handed out, but the message never reached a worker.
    lost = engine.claim_due(dispatched=True)
    assert engine.dispatch_ready() == []
    clock.shift(timedelta(seconds=61))
    again = engine.dispatch_ready()
    assert [t.run_key for t in again] == [t.run_key for t in lost]
    # Only one scheduler hands it out: the stamp moved.
    assert engine.dispatch_ready() == []


@pytest.mark.django_db(transaction=True)
def test_a_message_delivered_twice_starts_the_run_once(make_job, clock, instant, immediate_huey):
    from jobs.huey.tasks import execute_runs

    job = make_job()
    clock.move_to(job.next_run_at)
    keys = [t.run_key for t in engine.claim_due(dispatched=True)]
    execute_runs(keys)
    execute_runs(keys)
    run = JobHistory.objects.get()
    assert run.status == RunStatus.SUCCESS
    assert JobHistory.objects.count() == 1
