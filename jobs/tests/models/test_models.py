"""Job validation, database constraints, and how saving moves the schedule."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from jobs.models import Job, JobHistory
from jobs.tests.factories import NOW

pytestmark = pytest.mark.django_db


def field_errors(job: Job) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        job.full_clean()
    return caught.value.message_dict


def valid_job(**fields) -> Job:
    base = {
        "name": "report",
        "command": "make report",
        "schedule_type": "interval",
        "interval": 5,
        "interval_unit": "minute",
    }
    base.update(fields)
    return Job(**base)


@pytest.mark.parametrize(
    "fields,field,message",
    [
        ({"interval": 0}, "interval", "at least 1"),
        ({"interval": None}, "interval", "how often"),
        ({"interval_unit": "week"}, "interval_unit", "Choose"),
        ({"interval": 3651, "interval_unit": "day"}, "interval", "3650 days"),
        ({"schedule_type": "once", "scheduled_at": None}, "scheduled_at", "date and time"),
        ({"schedule_type": "yearly"}, "schedule_type", "not a valid choice"),
        ({"name": "x" * 201}, "name", "at most 200"),
        ({"name": ""}, "name", "cannot be blank"),
        ({"command": ""}, "command", "cannot be blank"),
        ({"max_retries": 11}, "max_retries", "less than or equal to 10"),
        ({"misfire_policy": "later"}, "misfire_policy", "not a valid choice"),
    ],
)
def test_invalid_jobs_are_rejected_with_a_message_at_the_field(fields, field, message):
    errors = field_errors(valid_job(**fields))
    assert field in errors
    assert message in " ".join(errors[field])
    assert Job.objects.count() == 0


def test_a_once_job_in_the_past_is_rejected(clock):
    errors = field_errors(valid_job(schedule_type="once", scheduled_at=NOW - timedelta(minutes=1)))
    assert "already passed" in errors["scheduled_at"][0]


def test_a_valid_job_passes_validation(clock):
    valid_job().full_clean()
    valid_job(schedule_type="once", scheduled_at=NOW + timedelta(hours=1)).full_clean()


@pytest.mark.parametrize(
    "fields",
    [
        {"schedule_type": "interval", "interval": 0, "interval_unit": "minute"},
        {"schedule_type": "interval", "interval": 5, "interval_unit": "fortnight"},
        {"schedule_type": "once", "scheduled_at": None},
        {"schedule_type": "cronish"},
    ],
)
def test_the_database_refuses_invalid_schedules_even_without_validation(fields):
    # Bypass Job.save(): constraints hold whatever code writes the row.
    job = valid_job(**fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        Job.objects.bulk_create([job])
    assert Job.objects.count() == 0


def test_the_database_refuses_a_second_first_attempt_for_one_occurrence(make_job, clock):
    job = make_job()
    JobHistory.objects.create(job=job, scheduled_for=NOW, not_before=NOW)
    with pytest.raises(IntegrityError), transaction.atomic():
        JobHistory.objects.create(job=job, scheduled_for=NOW, not_before=NOW)
    assert JobHistory.objects.count() == 1


def test_a_new_interval_job_first_runs_one_interval_after_it_is_saved(make_job, clock):
    job = make_job(interval=10, interval_unit="minute")
    assert job.anchor_at == NOW + timedelta(minutes=10)
    assert job.next_run_at == NOW + timedelta(minutes=10)


def test_an_interval_job_with_a_start_time_starts_there(make_job, clock):
    start = NOW + timedelta(hours=3)
    job = make_job(interval=1, interval_unit="hour", scheduled_at=start)
    assert job.next_run_at == start


def test_a_once_job_is_due_at_its_time(make_job, clock):
    when = NOW + timedelta(days=1)
    assert make_job(schedule_type="once", scheduled_at=when).next_run_at == when


def test_disabling_clears_the_next_run_and_re_enabling_resumes_on_the_grid_without_a_burst(
    make_job, clock
):
    job = make_job(interval=10, interval_unit="minute")
    job.is_active = False
    job.save()
    assert job.next_run_at is None
    clock.move_to(NOW + timedelta(days=3, minutes=4))
    job.is_active = True
    job.save()
    # The next grid point to come, not the 400-odd missed ones.
    assert job.next_run_at == NOW + timedelta(days=3, minutes=10)


def test_changing_the_interval_starts_a_new_grid(make_job, clock):
    job = make_job(interval=10, interval_unit="minute")
    clock.move_to(NOW + timedelta(minutes=3))
    job.interval = 1
    job.interval_unit = "hour"
    job.save()
    assert job.next_run_at == NOW + timedelta(minutes=3, hours=1)


def test_editing_the_name_does_not_write_back_a_stale_next_run(make_job, clock):
    job = make_job()
    stale = Job.objects.get(pk=job.pk)
    # Meanwhile the scheduler advanced the job.
    later = job.next_run_at + timedelta(seconds=10)
    Job.objects.filter(pk=job.pk).update(next_run_at=later)
    stale.name = "renamed"
    stale.save()
    fresh = Job.objects.get(pk=job.pk)
    assert fresh.name == "renamed"
    assert fresh.next_run_at == later


def test_schedule_in_words():
    assert valid_job(interval=1, interval_unit="minute").schedule_text == "every minute"
    assert valid_job(interval=10, interval_unit="minute").schedule_text == "every 10 minutes"
    assert valid_job(interval=2, interval_unit="day").schedule_text == "every 2 days"
    once = valid_job(schedule_type="once", scheduled_at=NOW)
    assert once.schedule_text == "once at 2026-03-01 12:00:00 UTC"


def test_a_job_loaded_with_only_some_fields_can_be_read_and_saved(make_job, clock):
    job = make_job(interval=10, interval_unit="minute")
    partial = Job.objects.only("id", "name").get(pk=job.pk)
    assert partial.name == "backup"
    partial.name = "renamed"
    partial.save()
    fresh = Job.objects.get(pk=job.pk)
    assert fresh.name == "renamed"
    assert fresh.next_run_at == job.next_run_at and fresh.anchor_at == job.anchor_at
