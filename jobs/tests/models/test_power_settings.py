"""The new job settings (cron, zone, overlap, timeout, simulation): validation at the
field, database constraints, the forms, and the new statuses on every screen."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone, translation

from jobs.executors import ExecutionContext, SimulatedExecutor
from jobs.models import Job, JobHistory, JobState, RunStatus
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import make_job, make_run, ticket

pytest_plugins = ["jobs.tests.ui_support"]


def cron_job(**fields) -> Job:
    base = {
        "name": "report",
        "command": "make report",
        "schedule_type": "cron",
        "cron_expression": "30 2 * * *",
        "timezone": "Europe/Berlin",
    }
    base.update(fields)
    return Job(**base)


def field_errors(job: Job) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        job.full_clean()
    return caught.value.message_dict


# --- validation ------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "fields,field,message",
    [
        ({"cron_expression": ""}, "cron_expression", "Enter a cron expression, for example"),
        ({"cron_expression": "61 * * * *"}, "cron_expression", "The minute field “61” is not"),
        ({"cron_expression": "0 25 * * *"}, "cron_expression", "The hour field “25” is not"),
        ({"cron_expression": "0 0 30 2 *"}, "cron_expression", "day of month field “30”"),
        ({"cron_expression": "0 0 * JUNE *"}, "cron_expression", "The month field “JUNE”"),
        ({"cron_expression": "0 0 * * MO"}, "cron_expression", "day of week field “MO”"),
        ({"cron_expression": "0 0 * *"}, "cron_expression", "has five fields"),
        ({"cron_expression": "0 0 0 * * *"}, "cron_expression", "has five fields"),
        ({"cron_expression": "x" * 121}, "cron_expression", "at most 120 characters"),
        ({"timezone": "Mars/Olympus"}, "timezone", "Unknown time zone “Mars/Olympus”"),
        ({"timezone": "localtime"}, "timezone", "Use an IANA name"),
        ({"sim_failure_rate": 1.5}, "sim_failure_rate", "a probability from 0 to 1"),
        ({"sim_failure_rate": -0.1}, "sim_failure_rate", "a probability from 0 to 1"),
        ({"sim_failure_rate": float("nan")}, "sim_failure_rate", "a probability from 0 to 1"),
        (
            {"sim_min_seconds": 10, "sim_max_seconds": 2},
            "sim_max_seconds",
            "The shortest simulated run (10 s) is longer than the longest (2 s).",
        ),
        # Against the default longest run (JOBS_SIM_MAX_SECONDS = 5 in the tests).
        (
            {"sim_min_seconds": 8},
            "sim_min_seconds",
            "The shortest simulated run (8 s) is longer than the longest (5 s).",
        ),
        ({"sim_max_seconds": 4000}, "sim_max_seconds", "from 0 to 3600 seconds"),
        ({"sim_min_seconds": -1}, "sim_min_seconds", "from 0 to 3600 seconds"),
        ({"timeout_seconds": -5}, "timeout_seconds", "at least 1 second"),
        ({"timeout_seconds": 0}, "timeout_seconds", "at least 1 second"),
        ({"timeout_seconds": 604801}, "timeout_seconds", "at most 7 days"),
        ({"overlap_policy": "sometimes"}, "overlap_policy", "not a valid choice"),
    ],
)
def test_each_bad_value_gets_a_message_at_its_field(settings, fields, field, message):
    settings.JOBS_SIM_MAX_SECONDS = 5
    errors = field_errors(cron_job(**fields))
    assert list(errors) == [field]
    assert message in " ".join(errors[field])


@pytest.mark.django_db
def test_good_values_pass():
    cron_job(
        timeout_seconds=60,
        overlap_policy="forbid",
        sim_failure_rate=1,
        sim_min_seconds=0,
        sim_max_seconds=0,
    ).full_clean()
    cron_job(cron_expression="0 0 L * *", timezone="").full_clean()
    cron_job(cron_expression="0 12 29 2 *", timezone="America/New_York").full_clean()


@pytest.mark.django_db
def test_an_interval_job_ignores_the_cron_fields(settings):
    Job(
        name="x", command="x", schedule_type="interval", interval=1, interval_unit="minute"
    ).full_clean()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "values",
    [
        {"sim_failure_rate": 2},
        {"sim_min_seconds": 5, "sim_max_seconds": 1},
        {"sim_max_seconds": 99999},
        {"timeout_seconds": 0},
        {"timeout_seconds": -1},
        {"overlap_policy": "sometimes"},
        {"schedule_type": "cron", "cron_expression": ""},
    ],
)
def test_the_database_refuses_what_validation_refuses(values):
    job = make_job()
    with pytest.raises(IntegrityError), transaction.atomic():
        Job.objects.filter(pk=job.pk).update(**values)


# --- the forms -------------------------------------------------------------------------------


def _form(**overrides: object) -> dict[str, object]:
    data: dict[str, object] = {
        "name": "nightly report",
        "command": "report",
        "schedule_type": "cron",
        "cron_expression": "30 2 * * *",
        "timezone": "Europe/Berlin",
        "misfire_policy": "coalesce",
        "overlap_policy": "forbid",
        "timeout_seconds": "600",
        "max_retries": "2",
        "retry_backoff_seconds": "10",
        "queue": "default",
        "priority": "0",
        "sim_failure_rate": "1",
        "sim_min_seconds": "",
        "sim_max_seconds": "",
        "is_active": "on",
    }
    data.update(overrides)
    return data


@pytest.mark.django_db
def test_a_cron_job_is_created_through_the_form(signed_in: Client, settings):
    settings.JOBS_SIM_MIN_SECONDS = 0
    response = signed_in.post("/jobs/new/", _form())
    assert response.status_code == 302
    job = Job.objects.get()
    assert (job.cron_expression, job.timezone, job.overlap_policy) == (
        "30 2 * * *",
        "Europe/Berlin",
        "forbid",
    )
    assert (job.timeout_seconds, job.sim_failure_rate, job.sim_min_seconds) == (600, 1.0, None)
    assert job.next_run_at > timezone.now()
    page = signed_in.get(response.url).content.decode()
    assert "At 02:30 every day, Europe/Berlin" in page
    assert 'id="job-overlap">Skip the new occurrence (forbid overlap)<' in page
    assert "600 seconds" in page
    assert "every run fails, each takes 0 to 5 s (default)" in page


@pytest.mark.django_db
@pytest.mark.parametrize(
    "overrides,field,message",
    [
        ({"cron_expression": "30 2 * *"}, "cron_expression", "five fields"),
        ({"timezone": "Mars/Olympus"}, "timezone", "Unknown time zone"),
        ({"sim_failure_rate": "1.5"}, "sim_failure_rate", "probability from 0 to 1"),
        ({"timeout_seconds": "-5"}, "timeout_seconds", "at least 1 second"),
        ({"sim_min_seconds": "3", "sim_max_seconds": "1"}, "sim_max_seconds", "shortest"),
    ],
)
def test_the_form_shows_each_bad_value_at_its_field(signed_in: Client, overrides, field, message):
    response = signed_in.post("/jobs/new/", _form(**overrides))
    assert response.status_code == 200
    form = response.context["form"]
    assert message in " ".join(form.errors[field])
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_the_form_shows_the_cron_fields_only_for_cron(signed_in: Client):
    page = signed_in.get("/jobs/new/").content.decode()
    # The cron fields sit in the section job_form.js shows only for "cron", after the
    # interval's section and before the fields every schedule has.
    cron_section = page.index('data-schedule="cron"')
    assert page.index('data-schedule="interval"') < cron_section
    for name in ("cron_expression", "timezone"):
        assert cron_section < page.index(f'name="{name}"') < page.index('name="misfire_policy"')
    assert '<option value="Europe/Berlin">Europe/Berlin</option>' in page
    assert "job_form.js" in page


@pytest.mark.django_db
def test_the_admin_form_marks_the_fields_for_the_schedule_switch(admin_client: Client):
    page = admin_client.get(reverse("admin:jobs_job_add")).content.decode()
    assert "data-schedule-switch" in page
    assert 'data-schedule-types="cron"' in page
    assert 'data-schedule-types="interval"' in page
    assert "jobs/job_form.js" in page
    assert '<option value="America/New_York">America/New_York</option>' in page


@pytest.mark.django_db
def test_the_admin_creates_a_cron_job(admin_client: Client):
    data = {
        **_form(),
        "scheduled_at_0": "",
        "scheduled_at_1": "",
        "runs-TOTAL_FORMS": "0",
        "runs-INITIAL_FORMS": "0",
        "runs-MIN_NUM_FORMS": "0",
        "runs-MAX_NUM_FORMS": "0",
    }
    response = admin_client.post(reverse("admin:jobs_job_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    job = Job.objects.get()
    assert job.schedule_text == "At 02:30 every day, Europe/Berlin"
    listing = admin_client.get(reverse("admin:jobs_job_changelist")).content.decode()
    assert "At 02:30 every day, Europe/Berlin" in listing


# --- per-job simulation ----------------------------------------------------------------------


def test_a_job_can_make_every_simulated_run_fail():
    executor = SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=0)
    outcome = executor.execute(ticket(sim_failure_rate=1.0), ExecutionContext())
    assert outcome.succeeded is False
    assert "simulated failure (failure rate 1)" in outcome.log
    assert executor.execute(ticket(), ExecutionContext()).succeeded is True


def test_a_jobs_duration_range_replaces_the_default():
    executor = SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=0)
    outcome = executor.execute(ticket(sim_min_seconds=0.2, sim_max_seconds=0.2), ExecutionContext())
    assert "simulated run took 0.200 s" in outcome.log


def test_a_job_range_out_of_order_against_new_defaults_runs_for_its_shortest():
    executor = SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=0)
    outcome = executor.execute(ticket(sim_min_seconds=0.1), ExecutionContext())
    assert outcome.succeeded and "took 0.100 s" in outcome.log


@pytest.mark.django_db(transaction=True)
def test_a_job_that_always_fails_uses_up_its_retries(instant):
    job = make_job(sim_failure_rate=1, max_retries=2, retry_backoff_seconds=0)
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())
    Scheduler(workers=1).run_once()
    attempts = JobHistory.objects.filter(job=job).order_by("attempt")
    assert [(a.attempt, a.status) for a in attempts] == [
        (1, "failed"),
        (2, "failed"),
        (3, "failed"),
    ]


# --- the new statuses on every screen ---------------------------------------------------------


@pytest.mark.django_db
def test_skipped_and_cancelled_runs_have_badges_and_filters(signed_in: Client):
    job = make_job(name="overlapping")
    skipped = make_run(job, status=RunStatus.SKIPPED)
    cancelled = make_run(job, status=RunStatus.CANCELLED)
    make_run(job, status=RunStatus.SUCCESS)
    page = signed_in.get("/history/?status=skipped").content.decode()
    assert f'id="run-{skipped.pk}"' in page and f'id="run-{cancelled.pk}"' not in page
    assert '<span class="badge text-bg-warning" data-status="skipped">Skipped</span>' in page
    page = signed_in.get("/history/?status=cancelled").content.decode()
    assert f'id="run-{cancelled.pk}"' in page and f'id="run-{skipped.pk}"' not in page
    assert 'data-status="cancelled">Cancelled</span>' in page
    options = signed_in.get("/history/").context["filters"].fields["status"].choices
    assert ("skipped", "Skipped") in options and ("cancelled", "Cancelled") in options


@pytest.mark.django_db
def test_a_job_whose_last_run_was_skipped_or_cancelled_says_so(signed_in: Client):
    skipped = make_job(name="skipped one", last_run_status=RunStatus.SKIPPED)
    cancelled = make_job(name="cancelled one", last_run_status=RunStatus.CANCELLED)
    make_job(name="fine", last_run_status=RunStatus.SUCCESS)
    assert skipped.state == JobState.SKIPPED and cancelled.state == JobState.CANCELLED
    for state, job in (("skipped", skipped), ("cancelled", cancelled)):
        page = signed_in.get(f"/jobs/?state={state}").content.decode()
        assert f'id="job-{job.pk}"' in page
        assert page.count('<tr id="job-') == 1
        assert f'data-state="{state}"' in page
    assert [j.name for j in Job.objects.in_state(JobState.WAITING)] == []


@pytest.mark.django_db
def test_the_admin_filters_runs_and_jobs_by_the_new_statuses(admin_client: Client):
    job = make_job(name="x", last_run_status=RunStatus.CANCELLED)
    run = make_run(job, status=RunStatus.SKIPPED)
    runs = admin_client.get(reverse("admin:jobs_jobhistory_changelist") + "?status__exact=skipped")
    assert list(runs.context["cl"].result_list) == [run]
    assert "jobs-run-skipped" in runs.content.decode()
    jobs = admin_client.get(reverse("admin:jobs_job_changelist") + "?state=cancelled")
    assert list(jobs.context["cl"].result_list) == [job]
    assert "jobs-state-cancelled" in jobs.content.decode()


@pytest.mark.django_db
def test_the_chart_and_the_job_figures_count_the_new_statuses(signed_in: Client):
    job = make_job(name="counted")
    make_run(job, status=RunStatus.SKIPPED)
    make_run(job, status=RunStatus.CANCELLED)
    make_run(job, status=RunStatus.SUCCESS)
    page = signed_in.get("/").content.decode()
    assert 'class="chart-skipped"' in page and 'class="chart-cancelled"' in page
    legend = signed_in.get("/").context["chart"].legend
    assert ("skipped", "Skipped") in legend and ("cancelled", "Cancelled") in legend
    stats = signed_in.get(f"/jobs/{job.pk}/").context["stats"]
    assert (stats.skipped, stats.cancelled, stats.succeeded) == (1, 1, 1)
    assert stats.success_rate == 100.0


@pytest.mark.django_db
def test_cron_schedules_are_described_in_japanese_too():
    job = make_job(schedule_type="cron", cron_expression="0 9 * * 1-5", timezone="Asia/Tokyo")
    with translation.override("ja"):
        assert job.schedule_text == "月〜金曜日の 09:00（Asia/Tokyo）"  # noqa: RUF001
        job.cron_expression = "15,45 9-17 * * MON-FRI"  # no words for it: the expression
        assert job.schedule_text == "cron「15,45 9-17 * * MON-FRI」（Asia/Tokyo）"  # noqa: RUF001
