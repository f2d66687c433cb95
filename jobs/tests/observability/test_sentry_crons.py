"""JOBS_SENTRY_CRONS: check-ins and failure events through the real sentry-sdk transport
to a Sentry stand-in on loopback."""

from __future__ import annotations

import json

import pytest
import sentry_sdk

from jobs.executors import SimulatedExecutor
from jobs.models import Trigger
from jobs.observability import sentry_crons
from jobs.runtime import observed
from jobs.tests.factories import make_job
from jobs.tests.observability.helpers import run_now_and_execute
from jobs.tests.observability.receivers import Receiver

pytestmark = pytest.mark.django_db


def envelope_items(body: bytes) -> list[tuple[dict, dict]]:
    """The (item header, payload) pairs of a Sentry envelope."""
    lines = body.split(b"\n")[1:]  # after the envelope's own header
    items = []
    while len(lines) >= 2 and lines[0].strip():
        header, payload = json.loads(lines[0]), json.loads(lines[1])
        items.append((header, payload))
        lines = lines[2:]
    return items


@pytest.fixture
def sentry(settings):
    """sentry-sdk sending to a receiver on loopback; the items it received, by type."""
    with Receiver() as receiver:
        # No default integrations, here and when done: once installed, sentry-sdk's stdlib
        # integration patches subprocess.Popen for the rest of the process (even under an
        # init(dsn=None) client) and adds SUBPROCESS_SENTRY_TRACE and SUBPROCESS_BAGGAGE
        # to every child, the shell runs of other tests in this worker included.
        sentry_sdk.init(
            dsn=f"http://public@127.0.0.1:{receiver.port}/1", default_integrations=False
        )
        settings.JOBS_SENTRY_CRONS = True

        def received(count: int) -> list[tuple[dict, dict]]:
            # flush() returns once the transport has sent everything queued, and the
            # receiver records a request before it answers it.
            sentry_sdk.flush(timeout=10)
            items = [item for r in receiver.requests for item in envelope_items(r.body)]
            assert len(items) >= count, items
            return items

        yield received
        sentry_sdk.init(dsn=None, default_integrations=False)
        observed.forget()


def test_a_cron_job_s_run_checks_in_in_progress_then_ok_with_its_monitor(sentry, settings):
    settings.JOBS_MISFIRE_GRACE_SECONDS = 90
    job = make_job(
        name="Nightly Backup!",
        schedule_type="cron",
        cron_expression="30 2 * * *",
        timezone="Europe/Paris",
        timeout_seconds=600,
    )
    run_now_and_execute(job, trigger=Trigger.SCHEDULE)
    items = sentry(2)
    check_ins = [payload for header, payload in items if header["type"] == "check_in"]
    assert [c["status"] for c in check_ins] == ["in_progress", "ok"]
    slug = f"nightly-backup-{job.pk.hex[:8]}"
    assert {c["monitor_slug"] for c in check_ins} == {slug}
    assert check_ins[0]["monitor_config"] == {
        "schedule": {"type": "crontab", "value": "30 2 * * *"},
        "timezone": "Europe/Paris",
        "checkin_margin": 2,
        "max_runtime": 10,
    }
    assert check_ins[1]["check_in_id"] == check_ins[0]["check_in_id"]
    assert check_ins[1]["duration"] >= 0


def test_a_failed_run_checks_in_error_and_is_an_event_with_the_run_s_context(sentry):
    job = make_job(name="flaky", interval=2, interval_unit="hour")
    (run,) = run_now_and_execute(
        job,
        SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=1.0),
        trigger=Trigger.SCHEDULE,
    )
    items = sentry(3)
    check_ins = [payload for header, payload in items if header["type"] == "check_in"]
    assert [c["status"] for c in check_ins] == ["in_progress", "error"]
    assert check_ins[0]["monitor_config"]["schedule"] == {
        "type": "interval",
        "value": 2,
        "unit": "hour",
    }
    (event,) = [payload for header, payload in items if header["type"] == "event"]
    assert event["level"] == "error"
    assert event["contexts"]["run"]["run_id"] == run.pk.hex
    assert event["contexts"]["run"]["attempt"] == 1
    assert event["tags"]["job"] == "flaky"


def test_monitor_configs_for_every_kind_of_schedule():
    def schedule(**fields):
        values = {
            "name": "x",
            "schedule_type": "interval",
            "cron_expression": "",
            "interval": 90,
            "interval_unit": "second",
            "timezone": "UTC",
            "timeout_seconds": None,
        }
        values.update(fields)
        return sentry_crons.MonitorSchedule(**values)

    # Seconds that make whole minutes are minutes; others Sentry cannot watch.
    assert sentry_crons.monitor_config(schedule(interval=120), 5) == {
        "schedule": {"type": "interval", "value": 2, "unit": "minute"},
        "timezone": "UTC",
        "checkin_margin": 1,
    }
    assert sentry_crons.monitor_config(schedule(interval=90), 5) is None
    assert sentry_crons.monitor_config(schedule(schedule_type="once"), 5) is None


def test_a_job_run_once_sends_no_check_in(sentry, settings):
    from datetime import timedelta

    from django.utils import timezone

    once = make_job(name="once", schedule_type="once", scheduled_at=timezone.now() + timedelta(1))
    run_now_and_execute(once, trigger=Trigger.SCHEDULE)
    cron = make_job(name="cron", schedule_type="cron", cron_expression="* * * * *")
    run_now_and_execute(cron, trigger=Trigger.SCHEDULE)
    items = sentry(2)
    assert {payload["monitor_slug"] for _, payload in items} == {f"cron-{cron.pk.hex[:8]}"}


def test_only_the_schedule_s_runs_and_their_retries_check_in(sentry):
    manual = make_job(name="by hand", schedule_type="cron", cron_expression="* * * * *")
    run_now_and_execute(manual)  # run now: not an occurrence the monitor expects
    run_now_and_execute(manual, trigger=Trigger.CHAIN)
    retried = make_job(name="retried", schedule_type="cron", cron_expression="* * * * *")
    run_now_and_execute(retried, trigger=Trigger.RETRY)
    items = sentry(2)
    assert {payload["monitor_slug"] for _, payload in items} == {f"retried-{retried.pk.hex[:8]}"}
