"""What the scheduler's loop does before and beside the claim of a job due now: nothing
it can leave for later (the heartbeat after the claims, the health check in a thread)."""

from __future__ import annotations

import threading
import time

import pytest

from jobs import engine, metrics
from jobs.alerts import health
from jobs.runtime import scheduler as loop_module
from jobs.runtime.scheduler import Scheduler


@pytest.mark.django_db(transaction=True)
def test_a_pass_claims_before_it_writes_its_heartbeat(monkeypatch):
    calls = []
    claim, beat = engine.claim_due_starting, metrics.scheduler_alive
    monkeypatch.setattr(
        engine, "claim_due_starting", lambda *a, **k: calls.append("claim") or claim(*a, **k)
    )
    monkeypatch.setattr(
        metrics, "scheduler_alive", lambda *a, **k: calls.append("beat") or beat(*a, **k)
    )
    loop = Scheduler(workers=1, name="host:claims-first")
    loop.run_pass()
    loop.shutdown()
    assert calls == ["claim", "beat"]


@pytest.mark.django_db(transaction=True)
def test_the_loop_does_not_wait_for_its_health_check(monkeypatch):
    checking, release = threading.Event(), threading.Event()

    def slow_watch(*args, **kwargs):
        checking.set()
        assert release.wait(10)

    monkeypatch.setattr(health, "watch", slow_watch)
    loop = Scheduler(workers=1, name="host:health-aside")
    loop._watch_health()  # returns at once: the check runs in a thread of its own
    assert checking.wait(10)
    # One check at a time: another is not started while this one is at it.
    assert health.watch_in_background() is False
    assert not health.flush(timeout=0.05)
    release.set()
    assert health.flush(timeout=10)
    assert health.watch_in_background() is True
    assert health.flush(timeout=10)
    loop.shutdown()


@pytest.mark.django_db(transaction=True)
def test_the_loop_checks_its_connection_about_once_a_second_not_every_pass(monkeypatch):
    """With CONN_HEALTH_CHECKS, a check makes the next transaction ping the server first:
    once a pass, that was a round trip before every claim."""
    checks = []
    monkeypatch.setattr(loop_module, "close_old_connections", lambda: checks.append("check"))
    loop = Scheduler(workers=1, tick=0.01, name="host:connection-check")
    passes = []
    run_pass = loop.run_pass
    monkeypatch.setattr(loop, "run_pass", lambda *a, **k: passes.append(1) or run_pass(*a, **k))
    thread = threading.Thread(target=loop.serve)
    began = time.monotonic()
    thread.start()
    try:
        assert wait_for(lambda: len(passes) >= 20, 20)
    finally:
        loop.request_stop()
        thread.join(10)
    seconds = time.monotonic() - began
    # The first turn's, then one a second at most, however many passes there were.
    assert 1 <= len(checks) <= 1 + seconds / loop_module.CONNECTION_CHECK_SECONDS
    assert len(passes) >= 20


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False
