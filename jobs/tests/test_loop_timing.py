"""What the scheduler's loop does before and beside the claim of a job due now: nothing
it can leave for later (the heartbeat after the claims, the health check in a thread)."""

from __future__ import annotations

import threading

import pytest

from jobs import engine, metrics
from jobs.alerts import health
from jobs.runtime.scheduler import Scheduler


@pytest.mark.django_db(transaction=True)
def test_a_pass_claims_before_it_writes_its_heartbeat(monkeypatch):
    calls = []
    claim, beat = engine.claim_due, metrics.scheduler_alive
    monkeypatch.setattr(
        engine, "claim_due", lambda *a, **k: calls.append("claim") or claim(*a, **k)
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
