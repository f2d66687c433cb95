"""Real processes: two schedulers see a pause within one tick and claim nothing after it;
two `checkhealth` probes at once alert a scheduler-down incident once."""

from __future__ import annotations

import re
import socket
import time
from datetime import datetime

import pytest

from jobs import engine, metrics
from jobs.models import JobHistory, SchedulerEvent, SchedulerHeartbeat, Trigger
from jobs.tests.api_helpers import webhook_server
from jobs.tests.processes import ManagedProcess, scheduler, wait_until
from jobs.tests.runtime.test_processes import INSTANT, make_interval_jobs

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

TICK = 0.5
# How late a process may log what it saw, beyond the tick: its own pass, the log's flush.
SLACK = 0.5
# The processes' log lines begin with their local time (LOGGING's "plain" format).
LOGGED_AT = r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*?"


def logged_at(log: str, words: str) -> float:
    """When a process logged `words` first, as a Unix time."""
    found = re.search(LOGGED_AT + re.escape(words), log, re.M)
    assert found, f"{words!r} not in the log:\n{log}"
    return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()


def scheduled_runs() -> int:
    return JobHistory.objects.filter(trigger=Trigger.SCHEDULE).count()


def recorded() -> list[str]:
    return list(SchedulerEvent.objects.order_by("id").values_list("action", flat=True))


def beat_after(proc: ManagedProcess, moment: float) -> bool:
    seen = (
        SchedulerHeartbeat.objects.filter(name=f"{socket.gethostname()}:{proc.pid}")
        .values_list("seen_at", flat=True)
        .first()
    )
    return seen is not None and seen.timestamp() > moment


def test_two_schedulers_see_a_pause_within_one_tick_and_claim_nothing_after_it():
    make_interval_jobs(5, every_seconds=1, start_in=1.0)
    procs = [scheduler("--workers", "2", "--tick", str(TICK), **INSTANT) for _ in range(2)]
    try:
        wait_until(lambda: scheduled_runs() >= 10, timeout=30)
        engine.pause(note="two processes")
        paused_at = time.time()
        claimed = scheduled_runs()  # final: the claims ask the switch under its lock
        wait_until(lambda: all("sees the pause" in proc.log() for proc in procs), timeout=10)
        for proc in procs:
            assert logged_at(proc.log(), "sees the pause") - paused_at <= TICK + SLACK
        # Both go on looping (their heartbeats come after the pause), claiming nothing,
        # though every job comes due each second.
        wait_until(lambda: all(beat_after(proc, paused_at + 1) for proc in procs), timeout=20)
        assert scheduled_runs() == claimed

        engine.resume()
        resumed_at = time.time()
        wait_until(lambda: all("sees the resume" in proc.log() for proc in procs), timeout=10)
        for proc in procs:
            assert logged_at(proc.log(), "sees the resume") - resumed_at <= TICK + SLACK
        wait_until(lambda: scheduled_runs() > claimed, timeout=10)
        for proc in procs:
            assert proc.stop(timeout=30) == 0, proc.log()
            assert "Traceback" not in proc.log(), proc.log()
    finally:
        for proc in procs:
            proc.cleanup()
    # One first attempt per occurrence, whoever claimed it.
    occurrences = list(JobHistory.objects.filter(attempt=1).values_list("job_id", "scheduled_for"))
    assert len(occurrences) == len(set(occurrences))
    assert recorded() == ["pause", "resume"]


def test_two_probes_at_once_alert_an_incident_once_and_its_recovery_once():
    with webhook_server() as hook:
        env = {
            "JOBS_ADMIN_ALERT_URL": hook.url,
            "JOBS_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
            "JOBS_ALERT_BACKOFF_SECONDS": 0,
        }
        # No scheduler has ever sent a heartbeat: down.
        probes = [ManagedProcess("checkhealth", **env) for _ in range(2)]
        try:
            assert [probe.wait(timeout=60) for probe in probes] == [1, 1]
            for probe in probes:  # its line on stdout (the log may say it too, on stderr)
                lines = probe.log().splitlines()
                assert "down: no scheduler process has ever sent a heartbeat" in lines, lines
        finally:
            for probe in probes:
                probe.cleanup()
        assert [body["event"] for body in hook.received] == ["scheduler_down"]

        metrics.scheduler_alive("host:recovered", every=0)
        probes = [ManagedProcess("checkhealth", **env) for _ in range(2)]
        try:
            assert [probe.wait(timeout=60) for probe in probes] == [0, 0]
            assert all("ok" in probe.log().splitlines() for probe in probes)
        finally:
            for probe in probes:
                probe.cleanup()
        assert [body["event"] for body in hook.received] == [
            "scheduler_down",
            "scheduler_recovered",
        ]
    assert recorded() == ["down", "recovered"]
