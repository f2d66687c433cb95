"""Chains through real processes: a scheduler hands runs to Huey over a real Redis, a
`run_huey` worker executes them, and a chain runs end to end."""

from __future__ import annotations

import secrets
from datetime import timedelta

import pytest
from django.utils import timezone

from jobs.models import Job, JobHistory, RunStatus, Trigger
from jobs.tests.processes import RedisServer, huey_worker, scheduler, wait_until

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]


def test_a_chain_runs_through_huey_workers_over_redis():
    report = Job(
        name="report",
        command="report.sh",
        schedule_type="interval",
        interval=1,
        interval_unit="day",
        is_active=True,
    )
    report.save()
    backup = Job(
        name="backup",
        command="backup.sh",
        schedule_type="interval",
        interval=1,
        interval_unit="day",
        scheduled_at=timezone.now() + timedelta(seconds=2),
    )
    backup.set_chains(on_success=[report], on_failure=[])
    backup.full_clean()
    backup.save()
    redis = RedisServer()  # a private one, as the other Huey tests start
    redis.start()
    env = {
        "REDIS_URL": redis.url,
        "HUEY_QUEUE": f"chains-{secrets.token_hex(6)}",
        "JOBS_SIM_MIN_SECONDS": 0,
        "JOBS_SIM_MAX_SECONDS": 0,
        "JOBS_SIM_FAILURE_RATE": 0,
    }
    procs = [scheduler("--tick", "0.2", **env), huey_worker(**env)]
    try:
        chained = JobHistory.objects.filter(job=report, trigger=Trigger.CHAIN)
        done = wait_until(lambda: chained.filter(status=RunStatus.SUCCESS).exists(), timeout=60)
        assert done, "\n".join(p.log() for p in procs)
    finally:
        for proc in procs:
            proc.stop()
            proc.cleanup()
        redis.stop()
    cause = JobHistory.objects.get(job=backup)
    run = chained.get()
    assert run.caused_by_id == cause.pk
    assert "/huey-" in run.worker and "/huey-" in cause.worker
