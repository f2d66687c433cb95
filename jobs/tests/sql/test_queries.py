"""The rules that the dashboard, the API and the admin share, each written once in the
models: searching jobs, filtering runs, runs by job name, enabling and copying a job."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from jobs.models import Job, JobHistory, RunStatus
from jobs.models import run as run_models

pytestmark = pytest.mark.django_db


def job(name: str, **fields: object) -> Job:
    values: dict[str, object] = {
        "name": name,
        "command": "echo",
        "schedule_type": "interval",
        "interval": 5,
        "interval_unit": "minute",
    }
    values.update(fields)
    saved = Job(**values)
    saved.full_clean()
    saved.save()
    return saved


def run(of: Job, *, ago: timedelta, status: str = RunStatus.SUCCESS) -> JobHistory:
    at = timezone.now() - ago
    return JobHistory.objects.create(
        job=of, scheduled_for=at, not_before=at, created_at=at, status=status
    )


def test_search_finds_every_word_in_the_name_description_or_command() -> None:
    job("nightly backup", description="copies the database", command="pg_dump main")
    job("weekly report", command="make report")

    def names(text: str) -> set[str]:
        return set(Job.objects.search(text).values_list("name", flat=True))

    assert names("BACKUP") == {"nightly backup"}
    assert names("database") == {"nightly backup"}
    assert names("pg_dump") == {"nightly backup"}
    assert names("nightly main") == {"nightly backup"}  # words in different fields
    assert names('"y rep"') == {"weekly report"}  # a quoted phrase is one word
    assert names("report backup") == set()
    assert names("") == {"nightly backup", "weekly report"}


@pytest.mark.parametrize("limit", [50, 0])
def test_runs_by_job_name_are_the_same_either_way(monkeypatch, limit: int) -> None:
    # 50: the jobs' ids are looked up first; 0: the join on the name.
    monkeypatch.setattr(run_models, "JOB_NAME_LOOKUP_LIMIT", limit)
    backup, report = job("nightly backup"), job("nightly report")
    mine = run(backup, ago=timedelta(minutes=1))
    run(report, ago=timedelta(minutes=1))
    assert list(JobHistory.objects.for_job_name("BACKUP night")) == [mine]
    assert not JobHistory.objects.for_job_name("nothing").exists()


def test_matching_applies_each_filter_given_and_ignores_the_others() -> None:
    backup, report = job("backup"), job("report")
    old_failed = run(backup, ago=timedelta(hours=2), status=RunStatus.FAILED)
    new_ok = run(backup, ago=timedelta(minutes=1))
    report_ok = run(report, ago=timedelta(minutes=30))
    hour_ago = timezone.now() - timedelta(hours=1)

    def matching(**filters: object) -> set[JobHistory]:
        return set(JobHistory.objects.matching(**filters))

    assert matching() == {old_failed, new_ok, report_ok}
    assert matching(job=None, status=None) == {old_failed, new_ok, report_ok}
    assert matching(job=backup.pk) == {old_failed, new_ok}
    assert matching(job_name="rep") == {report_ok}
    assert matching(status=RunStatus.FAILED) == {old_failed}
    assert matching(created_after=hour_ago) == {new_ok, report_ok}
    assert matching(created_before=hour_ago) == {old_failed}
    assert matching(scheduled_after=hour_ago, job=backup.pk) == {new_ok}
    assert matching(scheduled_before=hour_ago) == {old_failed}


def test_a_jobs_url_is_its_dashboard_page() -> None:
    saved = job("backup")
    assert saved.get_absolute_url() == f"/jobs/{saved.pk}/"


def test_set_active_validates_before_saving() -> None:
    once = job(
        "once",
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(hours=1),
        interval=None,
        interval_unit="",
    )
    once.set_active(False)
    assert Job.objects.get(pk=once.pk).next_run_at is None
    Job.objects.filter(pk=once.pk).update(scheduled_at=timezone.now() - timedelta(hours=1))
    stale = Job.objects.get(pk=once.pk)
    with pytest.raises(ValidationError):
        stale.set_active(True)
    assert not Job.objects.get(pk=once.pk).is_active


def test_duplicate_saves_a_copy_and_disables_one_that_cannot_be_active() -> None:
    original = job("x" * 200, description="d", command="run.sh", max_retries=3)
    copy, disabled_because = original.duplicate()
    assert disabled_because is None
    assert copy.pk != original.pk and copy.is_active
    assert copy.name == "x" * 193 + " (copy)"
    assert (copy.description, copy.command, copy.max_retries) == ("d", "run.sh", 3)

    past = job(
        "once",
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(hours=1),
        interval=None,
        interval_unit="",
    )
    past.scheduled_at = timezone.now() - timedelta(hours=1)
    copy, disabled_because = past.duplicate()
    assert not copy.is_active and "already passed" in disabled_because
