"""A run's page and a job's page as a new user meets them: retry and run again, asking
before a cancel, a cancelled run's log, the words for a job's settings and states, the
simulated mark, and the runs a delete takes with it."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.contrib.messages import get_messages
from django.test import Client
from django.utils import timezone

from jobs import engine
from jobs.access.permissions import JOB_OPERATORS, JOB_VIEWERS
from jobs.models import Job, JobHistory, RunStatus, ScheduleType, Trigger
from jobs.tests.factories import NOW, make_job, make_run, make_user

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db


def _client_of(user: object) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _messages(response: object) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]  # type: ignore[attr-defined]


def _python_job(**fields: object) -> Job:
    values: dict[str, object] = {
        "name": "Greet",
        "executor": "python",
        "command": "jobs.example_tasks.say_hello",
        "arguments": {"name": "world"},
        "is_active": False,
    }
    values.update(fields)
    return make_job(**values)


# --- retry and run again --------------------------------------------------------------------


def test_a_failed_runs_page_retries_it_with_the_admins_engine_call(signed_in: Client) -> None:
    job = _python_job()
    failed = make_run(job, status=RunStatus.FAILED, arguments={"name": "Ada"})
    page = signed_in.get(f"/runs/{failed.pk}/").text
    assert 'id="retry-run"' in page and 'value="retry"' in page and "Retry (attempt 2)" in page
    assert 'id="run-again"' not in page and 'id="cancel-run"' not in page
    response = signed_in.post(f"/runs/{failed.pk}/again/", {"how": "retry"})
    retry = JobHistory.objects.get(job=job, attempt=2)
    assert response.status_code == 302 and response.url == f"/runs/{retry.pk}/"
    assert _messages(response) == ["“Greet” will be retried in a moment (attempt 2)."]
    assert retry.trigger == Trigger.RETRY and retry.status == RunStatus.PENDING
    assert retry.scheduled_for == failed.scheduled_for and retry.arguments == {"name": "Ada"}
    # Retried: the failed run's page links to the next attempt and offers no second retry.
    page = signed_in.get(f"/runs/{failed.pk}/").text
    assert 'id="run-retried"' in page and f'href="/runs/{retry.pk}/"' in page
    assert 'id="retry-run"' not in page and 'id="run-again"' in page
    again = signed_in.post(f"/runs/{failed.pk}/again/", {"how": "retry"})
    assert _messages(again) == ["This run has already been retried."]
    assert job.runs.count() == 2


def test_a_finished_runs_page_runs_it_again_with_its_arguments(signed_in: Client) -> None:
    job = _python_job()
    done = make_run(job, status=RunStatus.SUCCESS, arguments={"name": "Ada"})
    page = signed_in.get(f"/runs/{done.pk}/").text
    assert 'id="run-again"' in page and 'id="retry-run"' not in page
    response = signed_in.post(f"/runs/{done.pk}/again/", {"how": "again"})
    new_run = job.runs.exclude(pk=done.pk).get()
    assert response.status_code == 302 and response.url == f"/runs/{new_run.pk}/"
    assert new_run.trigger == Trigger.MANUAL and new_run.attempt == 1
    assert new_run.arguments == {"name": "Ada"} and new_run.status == RunStatus.PENDING
    assert _messages(response) == ["“Greet” will run in a moment."]


def test_retry_and_run_again_need_run_job_post_and_csrf_and_change_nothing_otherwise(
    user: object,
) -> None:
    job = _python_job()
    failed = make_run(job, status=RunStatus.FAILED)
    url = f"/runs/{failed.pk}/again/"
    viewer = _client_of(make_user("viewer", JOB_VIEWERS))
    assert 'id="retry-run"' not in viewer.get(f"/runs/{failed.pk}/").text
    for how in ("retry", "again"):
        assert viewer.post(url, {"how": how}).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(url, {"how": "retry"}).status_code == 403
    operator = _client_of(make_user("operator", JOB_OPERATORS))
    assert operator.get(url).status_code == 405
    assert operator.post(url, {"how": "twice"}).status_code == 400
    assert job.runs.count() == 1
    assert operator.post(url, {"how": "retry"}).status_code == 302
    assert job.runs.count() == 2


def test_a_run_that_has_not_finished_is_neither_retried_nor_run_again(signed_in: Client) -> None:
    job = _python_job()
    running = make_run(job, status=RunStatus.RUNNING, finished_at=None)
    page = signed_in.get(f"/runs/{running.pk}/").text
    assert 'id="retry-run"' not in page and 'id="run-again"' not in page
    for how in ("retry", "again"):
        response = signed_in.post(f"/runs/{running.pk}/again/", {"how": how}, follow=True)
        assert "This run has not finished yet." in response.text
    assert job.runs.count() == 1


def test_run_again_with_other_arguments_follows_the_rules_of_run_now(signed_in: Client) -> None:
    job = _python_job()
    # Arguments the task no longer takes: said, and nothing run.
    done = make_run(job, status=RunStatus.SUCCESS, arguments={"colour": "red"})
    response = signed_in.post(f"/runs/{done.pk}/again/", {"how": "again"})
    assert response.url == f"/runs/{done.pk}/"
    assert _messages(response)[0].startswith("This run's arguments no longer fit the job")
    # A shell job's other arguments are for users who may run shell commands only.
    shell = make_job(
        name="Shell",
        executor="shell",
        command="env",
        arguments={"env": {"A": "2"}},
        is_active=False,
    )
    old = make_run(shell, status=RunStatus.SUCCESS, arguments={"env": {"A": "1"}})
    operator = _client_of(make_user("operator", JOB_OPERATORS))
    response = operator.post(f"/runs/{old.pk}/again/", {"how": "again"})
    assert "only users allowed to run shell commands" in _messages(response)[0]
    assert job.runs.count() == 1 and shell.runs.count() == 1


# --- cancelling -----------------------------------------------------------------------------


def test_a_cancelled_pending_runs_log_names_its_command_and_shows_the_stamp_in_the_viewers_zone(
    signed_in: Client,
) -> None:
    job = _python_job(arguments={"name": "world"})
    run = engine.run_now(job)
    with time_machine.travel(NOW, tick=False):
        response = signed_in.post(f"/runs/{run.pk}/cancel/", {"confirm": "1"})
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    # The stored log: the command line first, as the executor writes it, then the stamp
    # in UTC (12:00 UTC is NOW).
    assert run.log == (
        "$ python task jobs.example_tasks.say_hello\n"
        "[2026-03-01 12:00:00 UTC] cancelled by alice.\n"
    )
    signed_in.cookies["tz"] = "Asia/Tokyo"
    page = signed_in.get(f"/runs/{run.pk}/").text
    assert "$ python task jobs.example_tasks.say_hello\n[<time" in page
    assert ">2026-03-01 21:00:00 JST</time>] cancelled by alice." in page


def test_a_cancelled_running_runs_log_keeps_its_output_and_adds_the_line(
    signed_in: Client,
) -> None:
    job = _python_job()
    run = make_run(job, status=RunStatus.RUNNING, finished_at=None, log="$ python task x\n1\n")
    signed_in.post(f"/runs/{run.pk}/cancel/", {"confirm": "1"})
    run.refresh_from_db()
    assert run.log.startswith("$ python task x\n1\n\n[") and run.log.count("$ ") == 1
    assert run.log.endswith(" UTC] cancelled by alice.\n")


def test_a_viewer_may_not_even_ask_to_cancel(user: object) -> None:
    run = make_run(_python_job(), status=RunStatus.PENDING)
    viewer = _client_of(make_user("viewer", JOB_VIEWERS))
    assert viewer.post(f"/runs/{run.pk}/cancel/").status_code == 403
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING


# --- the job page's words -------------------------------------------------------------------


def _once_job_that_ran() -> Job:
    with time_machine.travel(NOW - timedelta(days=2), tick=False):
        job = make_job(
            name="One-off",
            schedule_type=ScheduleType.ONCE,
            scheduled_at=NOW - timedelta(days=1),
            interval=None,
            interval_unit="",
        )
    # As the claim leaves it: run, and disabled.
    Job.objects.filter(pk=job.pk).update(
        is_active=False, next_run_at=None, last_run_at=NOW - timedelta(days=1)
    )
    return job


def test_a_once_job_that_ran_is_done_and_shows_no_settings_that_do_not_apply(
    signed_in: Client,
) -> None:
    job = _once_job_that_ran()
    page = signed_in.get(f"/jobs/{job.pk}/").text
    next_run = page.split('id="job-next-run">')[1].split("</div>")[0]
    assert "done, it ran once" in next_run and "disabled" not in next_run
    settings_card = page.split("Settings</h2>")[1].split("</dl>")[0]
    assert "After downtime" not in settings_card
    assert "When the previous run is still going" not in settings_card
    interval = make_job(name="every 10 s")
    page = signed_in.get(f"/jobs/{interval.pk}/").text
    assert 'id="job-misfire"' in page and 'id="job-overlap"' in page


def test_an_inactive_job_that_never_ran_says_it_is_disabled_not_waiting(
    signed_in: Client,
) -> None:
    job = make_job(name="off", is_active=False)
    state = signed_in.get(f"/jobs/{job.pk}/").text.split('id="job-state">')[1].split("</div>")[0]
    assert 'data-state="disabled">Disabled<' in state
    assert "Waiting" not in state
    active = make_job(name="on")
    state = signed_in.get(f"/jobs/{active.pk}/").text.split('id="job-state">')[1]
    assert 'data-state="waiting"' in state.split("</div>")[0]


def test_retries_and_simulation_in_words_that_do_not_contradict_themselves(
    signed_in: Client, settings
) -> None:
    settings.JOBS_SIM_FAILURE_RATE = 0.2
    settings.JOBS_SIM_MIN_SECONDS = 1.0
    settings.JOBS_SIM_MAX_SECONDS = 5.0
    job = make_job(
        max_retries=0,
        retry_backoff_seconds=10,
        sim_failure_rate=0.0,
        sim_min_seconds=20.0,
        sim_max_seconds=20.0,
    )
    page = signed_in.get(f"/jobs/{job.pk}/").text
    assert 'id="job-retries">no retries<' in page
    assert 'id="job-simulation">no run fails, each takes 20 s<' in page
    Job.objects.filter(pk=job.pk).update(
        max_retries=2, sim_failure_rate=0.25, sim_min_seconds=None, sim_max_seconds=2.5
    )
    page = signed_in.get(f"/jobs/{job.pk}/").text
    assert "2 retries, first after 10 s" in page
    assert 'id="job-simulation">25 % of runs fail, each takes 1 to 2.5 s (default)<' in page, (
        page.split('id="job-simulation">')[1][:80]
    )
    Job.objects.filter(pk=job.pk).update(
        sim_failure_rate=None, sim_min_seconds=None, sim_max_seconds=None
    )
    page = signed_in.get(f"/jobs/{job.pk}/").text
    assert "20 % of runs fail (default), each takes 1 to 5 s (default)" in page


def test_simulated_jobs_and_runs_wear_a_badge_and_real_ones_do_not(signed_in: Client) -> None:
    simulated = make_job(name="pretend")
    real = _python_job()
    for job in (simulated, real):
        run = make_run(job)
        job_page = signed_in.get(f"/jobs/{job.pk}/").text
        run_page = signed_in.get(f"/runs/{run.pk}/").text
        expected = job is simulated
        assert ('id="simulated"' in job_page) is expected
        assert ('id="simulated"' in run_page) is expected


def test_the_delete_page_counts_the_runs_that_go_with_the_job(signed_in: Client) -> None:
    job = make_job(name="busy")
    now = timezone.now()
    JobHistory.objects.bulk_create(
        JobHistory(
            job=job,
            scheduled_for=now - timedelta(seconds=n),
            not_before=now,
            created_at=now,
            status=RunStatus.SUCCESS,
        )
        for n in range(1234)
    )
    page = signed_in.get(f"/jobs/{job.pk}/delete/").text
    assert "Deleting this job also deletes its 1,234 runs." in page
    empty = make_job(name="new")
    assert "It has no runs yet." in signed_in.get(f"/jobs/{empty.pk}/delete/").text


def test_run_now_s_message_links_the_run_it_made(signed_in: Client) -> None:
    job = make_job(name="Greet <b>")
    response = signed_in.post(f"/jobs/{job.pk}/run/")
    run = JobHistory.objects.get(job=job)
    assert _messages(response) == [
        f'“Greet &lt;b&gt;” will run in a moment. <a href="/runs/{run.pk}/" '
        'class="alert-link" data-run-link>See the run</a>'
    ]
    page = signed_in.get(response["Location"]).text
    assert f'<a href="/runs/{run.pk}/" class="alert-link" data-run-link>See the run</a>' in page
    assert "<b>" not in page.split('role="alert"')[1].split("</div>")[0]


def test_a_run_s_status_on_the_job_page_links_its_page(signed_in: Client) -> None:
    job = make_job(name="Greet")
    run = make_run(job)
    page = signed_in.get(f"/jobs/{job.pk}/").text
    assert f'<a href="/runs/{run.pk}/" class="run-link"' in page
