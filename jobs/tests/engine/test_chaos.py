"""Chaos and failover with real processes: kill -9, restarts, outages.

Invariants checked after each: no occurrence has two first attempts, nothing is left
pending or running once the lease has passed, and each job's occurrences run from its
first to its last without a gap (or exactly as its misfire policy says, after an outage).
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from jobs import engine
from jobs.executors import SimulatedExecutor
from jobs.models import Job, JobHistory, RunStatus
from jobs.runtime.scheduler import Scheduler
from jobs.tests.processes import RedisServer, huey_worker, scheduler, wait_until
from jobs.tests.runtime.test_processes import (
    assert_gapless_single_first_attempts,
    make_interval_jobs,
)

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

_ENGINE = __import__("django").conf.settings.DATABASES["default"]["ENGINE"]
on_postgresql = pytest.mark.skipif(
    "postgresql" not in _ENGINE,
    reason="needs PostgreSQL (run with DATABASE_URL=postgres://...)",
)
on_mysql = pytest.mark.skipif(
    "mysql" not in _ENGINE, reason="needs MySQL/MariaDB (run with DATABASE_URL=mysql://...)"
)

LEASE = 3
CHAOS_ENV = {
    "JOBS_SIM_MIN_SECONDS": 0,
    "JOBS_SIM_MAX_SECONDS": 0.05,
    "JOBS_SIM_FAILURE_RATE": 0,
    "JOBS_LEASE_SECONDS": LEASE,
    "JOBS_SHUTDOWN_GRACE_SECONDS": 5,
    # However long a loaded machine stalls the schedulers, no occurrence is coalesced
    # as missed: the gapless check counts every one (the misfire test sets its own).
    "JOBS_MISFIRE_GRACE_SECONDS": 3600,
    "LOG_LEVEL": "WARNING",
}


def drain_and_check(jobs: list[Job], step: timedelta) -> int:
    """Stop scheduling, let the lease pass for whatever dead processes held, run what is
    left, then check the invariants. Returns the number of occurrences run."""
    connection.close()  # a fresh connection, in case the database was restarted
    Job.objects.update(is_active=False)
    after_lease = timezone.now() + timedelta(seconds=LEASE + 1)
    with (
        override_settings(JOBS_LEASE_SECONDS=LEASE, JOBS_MISFIRE_GRACE_SECONDS=3600),
        time_machine.travel(after_lease, tick=True),
    ):
        engine.reap()
        Scheduler(workers=4, executor=SimulatedExecutor(min_seconds=0, max_seconds=0)).run_once()
    leftovers = list(
        JobHistory.objects.filter(status__in=[RunStatus.PENDING, RunStatus.RUNNING]).values(
            "status", "worker", "scheduled_for", "not_before", "started_at", "heartbeat_at"
        )
    )
    assert leftovers == [], f"left pending or running (now {timezone.now()}): {leftovers[:5]}"
    return assert_gapless_single_first_attempts(jobs, step)


def chaos(procs: list, spawn: list, seconds: float, rng: random.Random, on_tick=None) -> int:
    """Every 2-3 s kill one random process with SIGKILL and start it again."""
    kills = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(rng.uniform(2.0, 3.0))
        victim = rng.randrange(len(procs))
        procs[victim].kill()
        procs[victim].cleanup()
        procs[victim] = spawn[victim]()
        kills += 1
        if on_tick:
            on_tick(kills)
    return kills


def first_attempts_at_least(count: int):  # type: ignore[no-untyped-def]
    return lambda: JobHistory.objects.filter(attempt=1).count() >= count


def stop_all(procs: list) -> None:
    for proc in procs:
        try:
            proc.stop(timeout=30)
        finally:
            proc.cleanup()


def test_chaos_on_the_test_database_with_three_schedulers():
    rng = random.Random(7)
    step = timedelta(seconds=1)
    jobs = make_interval_jobs(100, every_seconds=1, start_in=2.0)
    spawn = [lambda: scheduler("--workers", "2", **CHAOS_ENV) for _ in range(3)]
    procs = [make() for make in spawn]
    try:
        assert chaos(procs, spawn, seconds=18, rng=rng) >= 5
        # Enough occurrences claimed, however far a loaded machine let them fall behind.
        wait_until(first_attempts_at_least(100 * 12), 120, interval=0.5)
    finally:
        stop_all(procs)
    # The schedulers' idle workers had room: claims inserted runs running for them (the
    # ones a kill caught are reaped and retried like any run of a dead worker).
    assert JobHistory.objects.filter(worker__endswith="/claim").exists()
    total = drain_and_check(jobs, step)
    assert total >= 100 * 12


# Not yet on MySQL/MariaDB: there the Huey workers fell behind a claim of 100 runs a
# second (22 % of the runs, against more than 80 % on PostgreSQL), on a loaded machine.
@on_postgresql
def test_chaos_with_huey_workers_over_redis_restarted_once():
    rng = random.Random(11)
    redis = RedisServer()
    redis.start()
    env = {
        **CHAOS_ENV,
        "REDIS_URL": redis.url,
        "HUEY_QUEUE": f"chaos-{rng.randrange(10**9)}",
        "JOBS_REDISPATCH_SECONDS": 2,
    }
    step = timedelta(seconds=1)
    jobs = make_interval_jobs(100, every_seconds=1, start_in=2.0)
    spawn = [lambda: scheduler(**env) for _ in range(3)] + [
        lambda: huey_worker(**env) for _ in range(2)
    ]
    procs = [make() for make in spawn]

    def restart_redis_once(kills: int) -> None:
        if kills == 3:
            redis.stop()
            redis.start()

    try:
        assert chaos(procs, spawn, seconds=18, rng=rng, on_tick=restart_redis_once) >= 5
        wait_until(first_attempts_at_least(100 * 12), 120, interval=0.5)
        # No new occurrences from here: the Huey workers then empty the backlog, the ones
        # Redis lost included (redispatched), however far a loaded machine let them fall
        # behind the 100 runs a second (in one CI run, 30 s were not enough while the
        # schedulers went on adding them).
        Job.objects.update(is_active=False)
        wait_until(
            lambda: (
                not JobHistory.objects.filter(
                    status=RunStatus.PENDING, not_before__lt=timezone.now() - timedelta(seconds=5)
                ).exists()
            ),
            timeout=120,
            interval=0.5,
        )
        logs = "".join(proc.log() for proc in procs)
    finally:
        stop_all(procs)
        redis.stop()
    assert "Traceback" not in logs or "ConnectionError" in logs, logs
    total = drain_and_check(jobs, step)
    assert total >= 100 * 12
    # The Huey workers really did the work, not the final drain.
    by_huey = JobHistory.objects.filter(worker__contains="/huey-").count()
    assert by_huey > total * 0.8


def test_after_all_schedulers_were_down_missed_occurrences_follow_the_misfire_policy():
    # The schedulers come back more than the grace late for a grid point and must claim
    # before the next one: EVERY - GRACE - LATE (13 s) for a loaded machine to boot them,
    # and a running scheduler has the GRACE (5 s) to claim a point on time.
    every, grace, late = timedelta(seconds=20), 5, timedelta(seconds=7)
    env = {**CHAOS_ENV, "JOBS_MISFIRE_GRACE_SECONDS": grace}
    anchor = timezone.now() + timedelta(seconds=2)
    for policy in ("coalesce", "skip"):
        for i in range(10):
            Job(
                name=f"{policy} {i}",
                command="true",
                interval=every.seconds,
                interval_unit="second",
                scheduled_at=anchor,
                misfire_policy=policy,
            ).save()
    procs = [scheduler(**env) for _ in range(2)]
    try:
        wait_until(
            lambda: JobHistory.objects.filter(scheduled_for=anchor + every).count() == 20, 60
        )
    finally:
        stop_all(procs)
    stopped_at = timezone.now()
    # Down for at least one interval; come back LATE after a grid point.
    k = -((anchor - (stopped_at + every)) // every)
    latest_missed = anchor + k * every
    time.sleep(max(0.0, (latest_missed + late - timezone.now()).total_seconds()))
    procs = [scheduler(**env) for _ in range(2)]
    try:
        wait_until(
            lambda: JobHistory.objects.filter(scheduled_for=latest_missed + every).count() == 20,
            60,
        )
    finally:
        stop_all(procs)
    for job in Job.objects.all():
        ran = set(
            JobHistory.objects.filter(job=job, attempt=1).values_list("scheduled_for", flat=True)
        )
        assert len(ran) == JobHistory.objects.filter(job=job, attempt=1).count()
        during_outage = {t for t in ran if stopped_at < t < latest_missed}
        assert during_outage == set(), f"{job.name} ran an occurrence while nothing was up"
        if job.misfire_policy == "coalesce":
            assert latest_missed in ran, f"{job.name} did not run once for the missed ones"
        else:
            assert latest_missed not in ran, f"{job.name} ran a missed occurrence"
        assert latest_missed + every in ran


@on_postgresql
@pytest.mark.alone  # the restart cuts every connection to the server (conftest.py)
def test_schedulers_ride_out_a_database_restart():
    version = sorted(p.name for p in Path("/etc/postgresql").iterdir())[-1]
    _ride_out_a_restart(
        restart=lambda: subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],
            check=True,
            capture_output=True,
            timeout=60,
        )
    )


@on_mysql
def test_schedulers_ride_out_a_mariadb_restart(tmp_path):
    # A server of the test's own (jobs/tests/private_mariadb.py), restarted: the shared
    # one, which other tests and processes use, never is.
    from django.core.management import call_command

    from jobs.tests.private_mariadb import PrivateMariadb

    server = PrivateMariadb(tmp_path)
    server.start()
    try:
        with server.as_default_database("restarted"):
            call_command("migrate", verbosity=0)
            _ride_out_a_restart(restart=lambda: (server.stop(), server.start()))
    finally:
        server.stop()


def _ride_out_a_restart(restart: Callable[[], object]) -> None:
    """Two schedulers run 20 jobs a second; the database server restarts under them; both
    live on, run 40 more after it, stop cleanly, and the invariants hold."""
    step = timedelta(seconds=1)
    jobs = make_interval_jobs(20, every_seconds=1, start_in=1.0)
    procs = [scheduler("--workers", "2", **CHAOS_ENV) for _ in range(2)]
    try:
        wait_until(lambda: JobHistory.objects.filter(status=RunStatus.SUCCESS).count() >= 40, 30)
        connection.close()
        restart()
        restarted_at = timezone.now()
        wait_until(
            lambda: (
                JobHistory.objects.filter(
                    status=RunStatus.SUCCESS, scheduled_for__gt=restarted_at + timedelta(seconds=3)
                ).count()
                >= 40
            ),
            timeout=40,
            interval=0.5,
        )
        for proc in procs:
            assert proc.popen.poll() is None, "a scheduler died with the database:\n" + proc.log()
    finally:
        for proc in procs:
            proc.signal(signal.SIGTERM)
        codes = [proc.wait(timeout=30) for proc in procs]
        logs = [proc.log() for proc in procs]
        for proc in procs:
            proc.cleanup()
    assert codes == [0, 0], logs
    drain_and_check(jobs, step)
