"""Blackout windows in the claim: a window across midnight and the spring clock change
in Berlin, skipping or deferring; and the windows the rules refuse."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.core.exceptions import ValidationError

from jobs import engine
from jobs.forecasts.preview import preview
from jobs.models import Blackout, BlackoutAction, BlackoutScope, JobHistory, RunStatus
from jobs.tests.factories import make_job

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
# 23:00 CET on 27 March 2027 for three hours: across midnight and the change to CEST
# (02:00 CET becomes 03:00 CEST), so it ends at 03:00 CEST = 01:00 UTC.
WINDOW_START = datetime(2027, 3, 27, 22, tzinfo=UTC)
WINDOW_END = datetime(2027, 3, 28, 1, tzinfo=UTC)


def nightly(action: str, **fields) -> Blackout:
    window = Blackout(
        name="nightly backup",
        action=action,
        cron_expression="0 23 * * *",
        duration_minutes=180,
        timezone="Europe/Berlin",
        **fields,
    )
    window.full_clean()
    window.save()
    return window


def claim_every_quarter_hour(since: datetime, until: datetime) -> None:
    moment = since
    while moment <= until:
        with time_machine.travel(moment, tick=False):
            engine.claim_due()
        moment += timedelta(minutes=15)


def test_a_skip_window_across_midnight_and_the_clock_change_skips_what_is_inside():
    with time_machine.travel(WINDOW_START - timedelta(hours=1), tick=False):
        nightly(BlackoutAction.SKIP)
        job = make_job(name="every half hour", interval=30, interval_unit="minute")
    claim_every_quarter_hour(WINDOW_START - timedelta(minutes=30), WINDOW_END + timedelta(hours=1))
    runs = list(JobHistory.objects.filter(job=job).order_by("scheduled_for"))
    inside = [r for r in runs if WINDOW_START <= r.scheduled_for < WINDOW_END]
    outside = [r for r in runs if not WINDOW_START <= r.scheduled_for < WINDOW_END]
    assert len(inside) == 6 and {r.status for r in inside} == {RunStatus.SKIPPED}
    assert "inside the window “nightly backup”" in inside[0].log
    assert {r.status for r in outside} == {RunStatus.PENDING}
    assert WINDOW_END in [r.scheduled_for for r in outside]  # the end is outside: half-open


def test_a_defer_window_runs_an_occurrence_inside_it_at_its_end():
    with time_machine.travel(WINDOW_START - timedelta(hours=1), tick=False):
        nightly(BlackoutAction.DEFER)
        # 01:15 local (CET) on the 28th: 00:15 UTC, inside the window.
        job = make_job(
            name="nightly report",
            schedule_type="cron",
            cron_expression="15 1 * * *",
            timezone="Europe/Berlin",
        )
        shown = preview(job, count=2)
    assert job.next_run_at == WINDOW_END
    assert shown.occurrences[0].at == WINDOW_END
    assert shown.occurrences[0].note == "deferred to 03:00 by the window “nightly backup”"
    claim_every_quarter_hour(WINDOW_START, WINDOW_END + timedelta(minutes=30))
    runs = list(JobHistory.objects.filter(job=job))
    assert [(r.scheduled_for, r.status) for r in runs] == [(WINDOW_END, RunStatus.PENDING)]


def test_a_window_for_one_queue_leaves_the_other_queues_alone():
    with time_machine.travel(WINDOW_START - timedelta(hours=1), tick=False):
        nightly(BlackoutAction.SKIP, scope=BlackoutScope.QUEUE, queue="reports")
        covered = make_job(name="covered", interval=30, interval_unit="minute", queue="reports")
        other = make_job(name="other", interval=30, interval_unit="minute")
    claim_every_quarter_hour(WINDOW_START, WINDOW_START + timedelta(minutes=30))
    assert {r.status for r in JobHistory.objects.filter(job=covered)} == {RunStatus.SKIPPED}
    assert {r.status for r in JobHistory.objects.filter(job=other)} == {RunStatus.PENDING}


def test_a_window_longer_than_its_recurrence_is_refused():
    window = Blackout(
        name="too long", cron_expression="0 * * * *", duration_minutes=61, timezone="UTC"
    )
    with pytest.raises(ValidationError) as refused:
        window.full_clean()
    assert "duration_minutes" in refused.value.message_dict
    assert not Blackout.objects.exists()


def test_overlapping_windows_are_refused():
    nightly(BlackoutAction.SKIP)
    fixed = Blackout(
        name="migration",
        starts_at=WINDOW_START + timedelta(hours=1),
        ends_at=WINDOW_END + timedelta(hours=5),
    )
    with (
        time_machine.travel(WINDOW_START - timedelta(days=1), tick=False),
        pytest.raises(ValidationError) as refused,
    ):
        fixed.full_clean()
    assert "overlaps the window “nightly backup”" in str(refused.value.message_dict["starts_at"])


def test_a_fixed_window_ending_before_it_starts_is_refused():
    window = Blackout(name="backwards", starts_at=WINDOW_END, ends_at=WINDOW_START)
    with pytest.raises(ValidationError) as refused:
        window.full_clean()
    assert "ends_at" in refused.value.message_dict
