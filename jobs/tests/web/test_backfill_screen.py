"""The job page's "Run for a past range": the occurrences listed before confirming (those
with a run marked), the runs created once however often the confirmation is posted, a
range in the future or over JOBS_BACKFILL_MAX_RUNS refused at its field, jobs.run_job
needed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from jobs.models import JobHistory, Trigger
from jobs.tests import personas
from jobs.tests.factories import NOW

pytestmark = pytest.mark.django_db


@pytest.fixture
def hourly(make_job, clock):  # type: ignore[no-untyped-def]
    clock.move_to(NOW - timedelta(days=2))
    job = make_job(name="hourly", schedule_type="cron", cron_expression="0 * * * *")
    clock.move_to(NOW)
    return job


def _local(moment) -> str:  # type: ignore[no-untyped-def]
    return timezone.localtime(moment).strftime("%Y-%m-%dT%H:%M")


def _range(hours_back: int, until_back: int = 0) -> dict[str, str]:
    return {
        "start": _local(NOW - timedelta(hours=hours_back)),
        "end": _local(NOW - timedelta(hours=until_back)),
    }


def test_the_occurrences_are_listed_then_created_once_when_confirmed_twice(hourly) -> None:  # type: ignore[no-untyped-def]
    start = NOW - timedelta(hours=3)
    JobHistory.objects.create(job=hourly, scheduled_for=start, not_before=start, attempt=1)
    operator = personas.signed_in(personas.operator())
    url = reverse("jobs:job_backfill", args=[hourly.pk])
    assert operator.get(url).status_code == 200
    shown = operator.post(url, _range(3))
    assert shown.status_code == 200
    assert shown.context["occurrences"] == [
        (start, True),
        (start + timedelta(hours=1), False),
        (start + timedelta(hours=2), False),
    ]
    assert shown.context["new_count"] == 2
    assert JobHistory.objects.count() == 1  # listing creates nothing
    confirm = {**_range(3), "confirm": "1"}
    done = operator.post(url, confirm)
    assert done.status_code == 302 and done["Location"] == reverse(
        "jobs:job_detail", args=[hourly.pk]
    )
    again = operator.post(url, confirm, follow=True)
    assert "0 runs created" in again.content.decode()
    runs = JobHistory.objects.filter(job=hourly, trigger=Trigger.BACKFILL).order_by("not_before")
    assert [run.scheduled_for for run in runs] == [
        start + timedelta(hours=1),
        start + timedelta(hours=2),
    ]


def test_a_range_in_the_future_is_refused_at_its_field_and_changes_nothing(hourly) -> None:  # type: ignore[no-untyped-def]
    operator = personas.signed_in(personas.operator())
    future = {
        "start": _local(NOW - timedelta(hours=1)),
        "end": _local(NOW + timedelta(hours=2)),
        "confirm": "1",
    }
    answer = operator.post(reverse("jobs:job_backfill", args=[hourly.pk]), future)
    assert answer.status_code == 400
    assert "the end is in the future" in " ".join(answer.context["form"].errors["end"])
    assert not JobHistory.objects.exists()


@override_settings(JOBS_BACKFILL_MAX_RUNS=3)
def test_a_range_over_the_limit_is_refused_at_its_field(hourly) -> None:  # type: ignore[no-untyped-def]
    operator = personas.signed_in(personas.operator())
    answer = operator.post(
        reverse("jobs:job_backfill", args=[hourly.pk]), {**_range(10), "confirm": "1"}
    )
    assert answer.status_code == 400
    assert "more than 3 occurrences" in " ".join(answer.context["form"].errors["end"])
    assert not JobHistory.objects.exists()


def test_a_bad_date_is_refused_and_changes_nothing(hourly) -> None:  # type: ignore[no-untyped-def]
    operator = personas.signed_in(personas.operator())
    answer = operator.post(
        reverse("jobs:job_backfill", args=[hourly.pk]),
        {"start": "yesterday", "end": "", "confirm": "1"},
    )
    assert answer.status_code == 400
    assert set(answer.context["form"].errors) == {"start", "end"}
    assert not JobHistory.objects.exists()


def test_a_viewer_may_not_backfill_and_an_unknown_job_is_404(hourly) -> None:  # type: ignore[no-untyped-def]
    viewer = personas.signed_in(personas.viewer())
    url = reverse("jobs:job_backfill", args=[hourly.pk])
    assert viewer.get(url).status_code == 403
    assert viewer.post(url, {**_range(3), "confirm": "1"}).status_code == 403
    assert not JobHistory.objects.exists()
    page = viewer.get(reverse("jobs:job_detail", args=[hourly.pk])).content.decode()
    assert 'id="backfill-link"' not in page
    operator = personas.signed_in(personas.operator())
    page = operator.get(reverse("jobs:job_detail", args=[hourly.pk])).content.decode()
    assert 'id="backfill-link"' in page
    unknown = reverse("jobs:job_backfill", args=["00000000-0000-0000-0000-000000000000"])
    assert operator.get(unknown).status_code == 404
