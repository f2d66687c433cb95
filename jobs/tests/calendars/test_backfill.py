"""Backfill: one run per past occurrence that has none, idempotent, in order; through
the engine, the API and manage.py backfill; refused for the future or over the limit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from jobs import engine
from jobs.models import JobHistory, Trigger
from jobs.tests import personas
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import NOW

pytestmark = pytest.mark.django_db


@pytest.fixture
def hourly(make_job, clock):
    clock.move_to(NOW - timedelta(days=2))
    job = make_job(name="hourly", schedule_type="cron", cron_expression="0 * * * *")
    clock.move_to(NOW)
    return job


def test_a_backfill_twice_creates_each_occurrence_once_in_order(hourly):
    start, end = NOW - timedelta(hours=5), NOW - timedelta(hours=1)
    JobHistory.objects.create(
        job=hourly, scheduled_for=start + timedelta(hours=1), not_before=start, attempt=1
    )
    first = engine.backfill(hourly, start, end)
    assert first.occurrences == [start + timedelta(hours=h) for h in range(4)]
    assert first.created == [start, start + timedelta(hours=2), start + timedelta(hours=3)]
    again = engine.backfill(hourly, start, end)
    assert again.created == []
    runs = JobHistory.objects.filter(job=hourly, trigger=Trigger.BACKFILL).order_by("not_before")
    assert [r.scheduled_for for r in runs] == first.created  # their order in the queue
    assert JobHistory.objects.filter(job=hourly).count() == 4


def test_a_range_in_the_future_is_refused_and_changes_nothing(hourly):
    with pytest.raises(engine.BackfillRefused) as refused:
        engine.backfill(hourly, NOW - timedelta(hours=1), NOW + timedelta(hours=1))
    assert refused.value.field == "end"
    assert not JobHistory.objects.exists()


@override_settings(JOBS_BACKFILL_MAX_RUNS=3)
def test_a_range_over_the_limit_is_refused(hourly):
    with pytest.raises(engine.BackfillRefused, match="more than 3"):
        engine.backfill(hourly, NOW - timedelta(hours=10), NOW)
    assert not JobHistory.objects.exists()


def api_as(persona: str):
    return token_client(getattr(personas, persona)())


def test_the_api_backfills_for_a_user_who_may_run_jobs(hourly):
    body = {"start": (NOW - timedelta(hours=3)).isoformat(), "end": NOW.isoformat()}
    refused = api_as("viewer").post(f"/api/v1/jobs/{hourly.pk}/backfill/", body, format="json")
    assert refused.status_code == 403
    operator = api_as("operator")
    answer = operator.post(f"/api/v1/jobs/{hourly.pk}/backfill/", body, format="json")
    assert answer.status_code == 201, answer.content
    assert len(answer.json()["created"]) == 3
    future = {"start": NOW.isoformat(), "end": (NOW + timedelta(hours=2)).isoformat()}
    bad = operator.post(f"/api/v1/jobs/{hourly.pk}/backfill/", future, format="json")
    assert bad.status_code == 400 and "end" in bad.json()


def test_the_command_backfills_and_says_what(hourly, capsys):
    start = (NOW - timedelta(hours=2)).isoformat()
    call_command("backfill", "hourly", "--start", start, "--end", NOW.isoformat())
    assert "2 runs created for 2 occurrences" in capsys.readouterr().out
    with pytest.raises(CommandError, match="--end"):
        call_command("backfill", "hourly", "--start", start, "--end", "2999-01-01T00:00")
