"""The audit trail of jobs: what each entry point records, the job page's Changes and
restore, the admin and the API views of it, masking, and pruning."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import translation

from jobs import engine
from jobs.models import (
    ChangeAction,
    Channel,
    IntervalUnit,
    Job,
    JobChange,
    JobHistory,
    RunStatus,
    ScheduleType,
    acting,
)
from jobs.runtime import retention
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import NOW, make_job, make_run

pytestmark = pytest.mark.django_db

WEBHOOK = "https://hooks.example.com/services/T000/B000/secret-token"
EMAILS = "oncall@example.com, boss@example.com"


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[time_machine.Traveller]:
    with time_machine.travel(NOW, tick=True) as traveller:
        yield traveller


def member(username: str, group: str | None = None, *, superuser: bool = False) -> Any:
    users = get_user_model().objects
    if superuser:
        return users.create_superuser(username, password="pw-not-used")
    user = users.create_user(username, password="pw-not-used", is_staff=True)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


def client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def root() -> Any:
    return member("root", superuser=True)


@pytest.fixture
def operator() -> Any:
    return member("olivia", "Job operators")


@pytest.fixture
def viewer() -> Any:
    return member("victor", "Job viewers")


def changes_of(job_id: Any) -> list[JobChange]:
    """Oldest first."""
    return list(JobChange.objects.filter(job_id=job_id).order_by("created_at", "id"))


def latest(job_id: Any) -> JobChange:
    return JobChange.objects.filter(job_id=job_id).order_by("-created_at", "-id")[0]


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def dashboard_form(job: Job, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": job.name,
        "description": job.description,
        "command": job.command,
        "schedule_type": job.schedule_type,
        "scheduled_at": "",
        "interval": str(job.interval),
        "interval_unit": job.interval_unit,
        "misfire_policy": job.misfire_policy,
        "overlap_policy": job.overlap_policy,
        "max_retries": str(job.max_retries),
        "retry_backoff_seconds": str(job.retry_backoff_seconds),
        "queue": job.queue,
        "priority": str(job.priority),
        "is_active": "on",
    }
    data.update(overrides)
    return {name: value for name, value in data.items() if value is not None}


def admin_form(job: Job, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": job.name,
        "description": job.description,
        "command": job.command,
        "executor": job.executor,
        "arguments": json.dumps(job.arguments),
        "is_active": "on",
        "schedule_type": job.schedule_type,
        "scheduled_at_0": "",
        "scheduled_at_1": "",
        "interval": str(job.interval),
        "interval_unit": job.interval_unit,
        "misfire_policy": job.misfire_policy,
        "overlap_policy": job.overlap_policy,
        "max_retries": str(job.max_retries),
        "retry_backoff_seconds": str(job.retry_backoff_seconds),
        "queue": job.queue,
        "priority": str(job.priority),
        "runs-TOTAL_FORMS": "0",
        "runs-INITIAL_FORMS": "0",
        "runs-MIN_NUM_FORMS": "0",
        "runs-MAX_NUM_FORMS": "0",
    }
    data.update(overrides)
    return data


def reporting_job(**fields: Any) -> Job:
    values = {"name": "report", "interval": 10, "interval_unit": IntervalUnit.MINUTE}
    values.update(fields)
    return make_job(**values)


# --- an edit, through each channel ------------------------------------------------------


def test_an_edit_on_the_dashboard_is_recorded_with_its_user_and_values(root) -> None:
    job = reporting_job()
    response = client_of(root).post(
        reverse("jobs:job_edit", args=[job.pk]), dashboard_form(job, name="monthly report")
    )
    assert response.status_code == 302
    change = latest(job.pk)
    assert change.action == ChangeAction.EDIT
    assert change.channel == Channel.DASHBOARD
    assert change.user == root and change.username == "root"
    assert change.changes == {"name": ["report", "monthly report"]}
    assert change.job_name == "monthly report"
    assert change.snapshot["name"] == "monthly report"


def test_an_edit_in_the_admin_is_recorded_as_the_admins(root) -> None:
    job = reporting_job()
    response = client_of(root).post(
        reverse("admin:jobs_job_change", args=[job.pk]),
        admin_form(job, max_retries="3", command="report.sh --all"),
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    change = latest(job.pk)
    assert (change.action, change.channel, change.username) == ("edit", "admin", "root")
    assert change.changes == {
        "command": ["echo hello", "report.sh --all"],
        "max_retries": [0, 3],
    }


def test_an_edit_through_the_api_is_recorded_as_the_tokens_user(root) -> None:
    job = reporting_job()
    response = token_client(root).patch(
        f"/api/v1/jobs/{job.pk}/", {"timeout_seconds": 60}, format="json"
    )
    assert response.status_code == 200, response.json()
    change = latest(job.pk)
    assert (change.action, change.channel, change.user) == ("edit", "api", root)
    assert change.changes == {"timeout_seconds": [None, 60]}


def test_a_management_command_and_the_system_have_their_channels() -> None:
    job = reporting_job()
    assert latest(job.pk).channel == Channel.SYSTEM
    assert latest(job.pk).username == ""
    with acting(channel=Channel.COMMAND):
        job.description = "made by a script"
        job.save()
    assert (latest(job.pk).channel, latest(job.pk).action) == ("command", "edit")


def test_times_are_recorded_as_iso_strings() -> None:
    job = make_job(schedule_type=ScheduleType.ONCE, scheduled_at=NOW + timedelta(hours=1))
    job.scheduled_at = NOW + timedelta(hours=2)
    job.save()
    assert latest(job.pk).changes == {
        "scheduled_at": [
            (NOW + timedelta(hours=1)).isoformat(),
            (NOW + timedelta(hours=2)).isoformat(),
        ]
    }


# --- what is recorded, and what is not ------------------------------------------------


def test_creating_enabling_disabling_and_deleting_are_recorded(root) -> None:
    client = client_of(root)
    form = dashboard_form(reporting_job(name="template"), name="nightly")
    client.post(reverse("jobs:job_create"), form)
    job = Job.objects.get(name="nightly")
    created = latest(job.pk)
    assert (created.action, created.channel, created.username) == ("create", "dashboard", "root")
    assert created.changes["name"] == [None, "nightly"]
    assert created.changes["interval"] == [None, 10]

    client.post(reverse("jobs:job_toggle", args=[job.pk]), {})
    assert (latest(job.pk).action, latest(job.pk).changes) == (
        "disable",
        {"is_active": [True, False]},
    )
    client.post(reverse("jobs:job_toggle", args=[job.pk]), {"active": "1"})
    assert latest(job.pk).action == "enable"

    client.post(reverse("jobs:job_delete", args=[job.pk]))
    assert not Job.objects.filter(pk=job.pk).exists()
    deleted = latest(job.pk)
    assert deleted.action == "delete" and deleted.job_name == "nightly"
    assert deleted.changes["name"] == ["nightly", None]
    assert [c.action for c in changes_of(job.pk)] == ["create", "disable", "enable", "delete"]


def test_run_now_and_cancel_are_recorded_with_the_run(root) -> None:
    job = reporting_job()
    client = client_of(root)
    client.post(reverse("jobs:job_run", args=[job.pk]))
    run = JobHistory.objects.get(job=job)
    ran = latest(job.pk)
    assert (ran.action, ran.channel, ran.username, ran.run_id) == (
        "run_now",
        "dashboard",
        "root",
        run.pk,
    )
    assert ran.changes == {} and ran.snapshot is None
    client.post(reverse("jobs:run_cancel", args=[run.pk]), {"confirm": "1"})
    cancelled = latest(job.pk)
    assert (cancelled.action, cancelled.run_id, cancelled.job_name) == ("cancel", run.pk, "report")


def test_a_refused_cancel_records_nothing(root) -> None:
    run = make_run(reporting_job(), status=RunStatus.SUCCESS)
    before = JobChange.objects.count()
    client_of(root).post(reverse("jobs:run_cancel", args=[run.pk]), {"confirm": "1"})
    assert JobChange.objects.count() == before


def test_the_api_records_run_now_enable_disable_and_cancel(root) -> None:
    job = reporting_job()
    api = token_client(root)
    run_id = api.post(f"/api/v1/jobs/{job.pk}/run/").json()["id"]
    api.post(f"/api/v1/jobs/{job.pk}/disable/")
    api.post(f"/api/v1/jobs/{job.pk}/enable/")
    api.post(f"/api/v1/runs/{run_id}/cancel/")
    recorded = [(c.action, c.channel) for c in changes_of(job.pk)]
    assert recorded == [
        ("create", "system"),
        ("run_now", "api"),
        ("disable", "api"),
        ("enable", "api"),
        ("cancel", "api"),
    ]


def test_the_admins_bulk_actions_are_recorded(root) -> None:
    first, second = reporting_job(name="first"), reporting_job(name="second")
    client = client_of(root)
    changelist = reverse("admin:jobs_job_changelist")

    def act(action: str, jobs: list[Job]) -> None:
        client.post(changelist, {"action": action, "_selected_action": [j.pk for j in jobs]})

    act("run_now", [first, second])
    act("disable", [first, second])
    act("enable", [first])
    act("duplicate", [second])
    copy = Job.objects.get(name="second (copy)")
    failed = JobHistory.objects.filter(job=first).first()
    JobHistory.objects.filter(pk=failed.pk).update(status=RunStatus.FAILED)
    runs = reverse("admin:jobs_jobhistory_changelist")
    client.post(runs, {"action": "retry", "_selected_action": [failed.pk]})
    pending = JobHistory.objects.get(job=second)
    client.post(runs, {"action": "cancel", "_selected_action": [pending.pk]})
    client.post(
        changelist,
        {"action": "delete_selected", "_selected_action": [first.pk, copy.pk], "post": "yes"},
    )

    assert not Job.objects.filter(pk__in=[first.pk, copy.pk]).exists()
    assert [(c.action, c.channel) for c in changes_of(first.pk)] == [
        ("create", "system"),
        ("run_now", "admin"),
        ("disable", "admin"),
        ("enable", "admin"),
        ("retry", "admin"),
        ("delete", "admin"),
    ]
    assert [c.action for c in changes_of(second.pk)] == ["create", "run_now", "disable", "cancel"]
    assert [c.action for c in changes_of(copy.pk)] == ["create", "delete"]
    assert {c.username for c in JobChange.objects.exclude(channel="system")} == {"root"}


def test_a_save_that_changes_nothing_records_nothing(root) -> None:
    job = reporting_job()
    before = JobChange.objects.count()
    job.save()
    Job.objects.get(pk=job.pk).save()
    client_of(root).post(reverse("jobs:job_edit", args=[job.pk]), dashboard_form(job))
    token_client(root).patch(f"/api/v1/jobs/{job.pk}/", {"name": "report"}, format="json")
    assert JobChange.objects.count() == before


def test_the_schedulers_own_updates_are_not_audited() -> None:
    job = reporting_job()
    before = JobChange.objects.count()
    run = engine.run_now(job)
    assert JobChange.objects.count() == before + 1  # the run now, nothing else
    Job.objects.filter(pk=job.pk).update(last_run_status=RunStatus.SUCCESS, last_run_at=NOW)
    loaded = Job.objects.get(pk=job.pk)
    loaded.save()
    assert JobChange.objects.count() == before + 1
    assert run.pk == latest(job.pk).run_id


def test_the_record_is_in_the_changes_transaction(monkeypatch) -> None:
    job = reporting_job()

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("the audit trail is down")

    monkeypatch.setattr(JobChange, "record", broken)
    job.name = "renamed"
    with pytest.raises(RuntimeError):
        job.save()
    assert Job.objects.get(pk=job.pk).name == "report"


def test_a_deleted_users_changes_keep_the_username(root) -> None:
    job = reporting_job()
    client_of(root).post(reverse("jobs:job_toggle", args=[job.pk]), {})
    root.delete()
    change = latest(job.pk)
    assert change.user is None and change.username == "root"


# --- the job page ---------------------------------------------------------------------


def test_the_job_page_shows_the_changes_newest_first(root) -> None:
    job = reporting_job()
    client = client_of(root)
    client.post(reverse("jobs:job_edit", args=[job.pk]), dashboard_form(job, name="monthly"))
    client.post(reverse("jobs:job_toggle", args=[job.pk]), {})
    page = client.get(reverse("jobs:job_detail", args=[job.pk])).text
    section = page.split('id="changes"')[1]
    assert section.index("Disabled") < section.index("Edited") < section.index("Created")
    assert "report → monthly" in section
    assert "root" in section and "dashboard" in section


def test_the_job_page_shows_twenty_changes_and_links_to_older_ones(root) -> None:
    job = reporting_job()
    for n in range(1, 25):
        job.description = f"version {n}"
        job.save()
    client = client_of(root)
    first = client.get(reverse("jobs:job_detail", args=[job.pk]))
    assert len(first.context["changes"].object_list) == 20
    assert "?changes=2#changes" in first.text and "Older changes" in first.text
    second = client.get(reverse("jobs:job_detail", args=[job.pk]), {"changes": 2})
    assert [c.action for c in second.context["changes"]][-1] == "create"
    assert "Newer changes" in second.text


def test_the_live_part_of_the_job_page_reads_no_changes(root) -> None:
    job = reporting_job()
    response = client_of(root).get(
        reverse("jobs:job_detail", args=[job.pk]), HTTP_HX_REQUEST="true"
    )
    assert "changes" not in response.context


# --- restore --------------------------------------------------------------------------


def test_restoring_an_earlier_version_puts_its_values_back(root) -> None:
    job = reporting_job(webhook_url=WEBHOOK)
    client = client_of(root)
    token_client(root).patch(
        f"/api/v1/jobs/{job.pk}/",
        {"name": "changed", "interval": 30, "webhook_url": ""},
        format="json",
    )
    first = changes_of(job.pk)[0]
    page = client.get(reverse("jobs:job_detail", args=[job.pk])).text
    assert reverse("jobs:job_restore", args=[job.pk, first.pk]) in page
    # The newest version is the job as it is: nothing to restore there.
    assert reverse("jobs:job_restore", args=[job.pk, latest(job.pk).pk]) not in page

    response = client.post(reverse("jobs:job_restore", args=[job.pk, first.pk]))
    assert response.status_code == 302
    job.refresh_from_db()
    assert (job.name, job.interval, job.webhook_url) == ("report", 10, WEBHOOK)
    restored = latest(job.pk)
    assert (restored.action, restored.channel, restored.username) == (
        "restore",
        "dashboard",
        "root",
    )
    assert restored.changes == {
        "name": ["changed", "report"],
        "interval": [30, 10],
        "webhook_url": ["", WEBHOOK],
    }
    assert "“report” restored." in messages_of(response)


def test_an_old_version_that_is_no_longer_valid_is_refused_and_nothing_changes(
    root, frozen_clock
) -> None:
    job = make_job(
        name="once", schedule_type=ScheduleType.ONCE, scheduled_at=NOW + timedelta(hours=1)
    )
    job.scheduled_at = NOW + timedelta(days=2)
    job.save()
    frozen_clock.shift(timedelta(hours=3))  # the first version's time has passed
    count = JobChange.objects.count()
    response = client_of(root).post(
        reverse("jobs:job_restore", args=[job.pk, changes_of(job.pk)[0].pk])
    )
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.scheduled_at == NOW + timedelta(days=2)
    assert JobChange.objects.count() == count
    [message] = messages_of(response)
    assert message.startswith("This version cannot be restored, nothing was changed:")


def test_without_change_job_a_restore_is_forbidden_and_offered_nowhere(viewer) -> None:
    job = reporting_job()
    job.name = "changed"
    job.save()
    first = changes_of(job.pk)[0]
    client = client_of(viewer)
    page = client.get(reverse("jobs:job_detail", args=[job.pk])).text
    assert "Restore this version" not in page
    count = JobChange.objects.count()
    assert client.post(reverse("jobs:job_restore", args=[job.pk, first.pk])).status_code == 403
    assert Job.objects.get(pk=job.pk).name == "changed"
    assert JobChange.objects.count() == count


def test_an_operator_may_restore(operator) -> None:
    job = reporting_job()
    job.name = "changed"
    job.save()
    client = client_of(operator)
    first = changes_of(job.pk)[0]
    assert "Restore this version" in client.get(reverse("jobs:job_detail", args=[job.pk])).text
    client.post(reverse("jobs:job_restore", args=[job.pk, first.pk]))
    assert Job.objects.get(pk=job.pk).name == "report"


def test_a_change_of_another_job_or_a_run_action_cannot_be_restored(root) -> None:
    job, other = reporting_job(), reporting_job(name="other")
    client = client_of(root)
    other_change = changes_of(other.pk)[0]
    assert (
        client.post(reverse("jobs:job_restore", args=[job.pk, other_change.pk])).status_code == 404
    )
    engine.run_now(job)
    response = client.post(reverse("jobs:job_restore", args=[job.pk, latest(job.pk).pk]))
    assert messages_of(response) == ["This change has no version to restore."]


# --- masking --------------------------------------------------------------------------


def secret_job() -> Job:
    job = reporting_job(notify_on_failure=True)
    job.webhook_url = WEBHOOK
    job.notify_emails = EMAILS
    job.save()
    return job


def test_a_viewer_sees_the_secrets_masked_on_the_page_in_the_api_and_in_the_admin(
    viewer,
) -> None:
    job = secret_job()
    client = client_of(viewer)
    page = client.get(reverse("jobs:job_detail", args=[job.pk])).text
    assert "secret-token" not in page and "oncall@example.com" not in page
    assert "https://hooks.example.com/…" in page and "2 addresses" in page

    body = client.get(f"/api/v1/jobs/{job.pk}/changes/").json()
    assert body["results"][0]["changes"] == {
        "webhook_url": ["", "https://hooks.example.com/…"],
        "notify_emails": ["", "2 addresses"],
    }
    assert "secret-token" not in str(body)

    admin_page = client.get(reverse("admin:jobs_jobchange_change", args=[latest(job.pk).pk]))
    assert admin_page.status_code == 200
    assert "secret-token" not in admin_page.text and "oncall@" not in admin_page.text
    assert "https://hooks.example.com/…" in admin_page.text


def test_an_operator_sees_the_secrets_whole(operator) -> None:
    job = secret_job()
    client = client_of(operator)
    assert WEBHOOK in client.get(reverse("jobs:job_detail", args=[job.pk])).text
    body = client.get(f"/api/v1/jobs/{job.pk}/changes/").json()
    assert body["results"][0]["changes"]["webhook_url"] == ["", WEBHOOK]
    admin_page = client.get(reverse("admin:jobs_jobchange_change", args=[latest(job.pk).pk]))
    assert WEBHOOK in admin_page.text and "oncall@example.com" in admin_page.text


# --- the API --------------------------------------------------------------------------


def test_the_api_lists_a_jobs_changes_newest_first_with_pages(root) -> None:
    job = reporting_job()
    api = token_client(root)
    api.patch(f"/api/v1/jobs/{job.pk}/", {"max_retries": 2}, format="json")
    body = api.get(f"/api/v1/jobs/{job.pk}/changes/").json()
    assert body["count"] == 2
    newest = body["results"][0]
    assert {key: newest[key] for key in ("user", "channel", "action", "changes")} == {
        "user": "root",
        "channel": "api",
        "action": "edit",
        "changes": {"max_retries": [0, 2]},
    }
    assert newest["created_at"] and newest["job"] == str(job.pk)
    assert body["results"][1]["action"] == "create" and body["results"][1]["user"] == ""
    paged = api.get(f"/api/v1/jobs/{job.pk}/changes/", {"page_size": 1}).json()
    assert len(paged["results"]) == 1 and paged["next"]


def test_a_deleted_jobs_changes_are_still_served(root) -> None:
    job = reporting_job()
    api = token_client(root)
    assert api.delete(f"/api/v1/jobs/{job.pk}/").status_code == 204
    body = api.get(f"/api/v1/jobs/{job.pk}/changes/").json()
    assert [entry["action"] for entry in body["results"]] == ["delete", "create"]
    assert body["results"][0]["changes"]["name"] == ["report", None]


def test_the_api_answers_404_with_neither_a_job_nor_records(root) -> None:
    api = token_client(root)
    assert api.get("/api/v1/jobs/00000000-0000-0000-0000-000000000000/changes/").status_code == 404
    assert api.get("/api/v1/jobs/not-a-uuid/changes/").status_code == 404
    job = reporting_job()
    JobChange.objects.all().delete()
    body = api.get(f"/api/v1/jobs/{job.pk}/changes/").json()
    assert body["count"] == 0


def test_the_api_needs_a_login_for_changes() -> None:
    job = reporting_job()
    assert Client().get(f"/api/v1/jobs/{job.pk}/changes/").status_code in (401, 403)


# --- the admin ------------------------------------------------------------------------


def test_the_admin_lists_changes_read_only_with_filters_and_search(viewer, root) -> None:
    job = reporting_job()
    job.name = "renamed"
    job.save()
    client = client_of(viewer)
    changelist = reverse("admin:jobs_jobchange_changelist")
    response = client.get(changelist)
    assert response.status_code == 200
    assert "renamed" in response.text
    assert client.get(changelist, {"action__exact": "edit"}).context["cl"].result_count == 1
    assert client.get(changelist, {"channel__exact": "api"}).context["cl"].result_count == 0
    assert client.get(changelist, {"q": "renamed"}).context["cl"].result_count == 1
    assert client.get(changelist, {"job": str(job.pk)}).context["cl"].result_count == 2
    assert client.get(changelist, {"job": "not-a-uuid"}).status_code == 200
    assert client.get(reverse("admin:jobs_jobchange_add")).status_code == 403
    change = latest(job.pk)
    assert client.get(reverse("admin:jobs_jobchange_delete", args=[change.pk])).status_code == 403
    # A superuser may delete records; nobody may edit them.
    root_client = client_of(root)
    page = root_client.get(reverse("admin:jobs_jobchange_change", args=[change.pk]))
    assert page.status_code == 200 and 'name="_save"' not in page.text


def test_a_jobs_admin_page_links_to_its_changes_and_a_deleted_jobs_stay(root) -> None:
    job = reporting_job()
    client = client_of(root)
    page = client.get(reverse("admin:jobs_job_change", args=[job.pk])).text
    assert f"{reverse('admin:jobs_jobchange_changelist')}?job={job.pk}" in page
    job_id = job.pk
    job.delete()
    listed = client.get(reverse("admin:jobs_jobchange_changelist"), {"job": str(job_id)})
    assert listed.context["cl"].result_count == 2
    deleted = client.get(reverse("admin:jobs_jobchange_change", args=[latest(job_id).pk]))
    assert deleted.status_code == 200 and "deleted" in deleted.text


def test_a_user_without_view_job_does_not_see_the_changes_in_the_admin() -> None:
    nobody = member("nobody")
    response = client_of(nobody).get(reverse("admin:jobs_jobchange_changelist"))
    assert response.status_code == 403


# --- pruning --------------------------------------------------------------------------


def test_pruning_deletes_records_older_than_the_setting_and_keeps_the_rest(
    settings, frozen_clock
) -> None:
    settings.JOBS_AUDIT_KEEP_DAYS = 30
    settings.JOBS_HISTORY_KEEP_PER_JOB = 0
    settings.JOBS_HISTORY_MAX_AGE_DAYS = 0
    old = reporting_job(name="old")  # created at NOW
    frozen_clock.shift(timedelta(days=20))
    young = reporting_job(name="young")
    frozen_clock.shift(timedelta(days=15))  # NOW + 35 days: the first record is 35 days old
    stats = retention.prune(batch=1)
    assert stats.changes_deleted == 1
    assert not JobChange.objects.filter(job_id=old.pk).exists()
    assert JobChange.objects.filter(job_id=young.pk).exists()


def test_pruning_goes_in_batches_and_a_dry_run_deletes_nothing(settings, frozen_clock) -> None:
    settings.JOBS_AUDIT_KEEP_DAYS = 1
    job = reporting_job()
    for n in range(1, 6):
        job.description = f"version {n}"
        job.save()
    frozen_clock.shift(timedelta(days=2))
    policy = retention.Policy(changes_max_age=timedelta(days=1))
    assert retention.prune(dry_run=True, policy=policy).changes_deleted == 6
    assert JobChange.objects.count() == 6
    stats = retention.prune(batch=2, policy=policy)
    assert (stats.changes_deleted, stats.statements) == (6, 4)
    assert JobChange.objects.count() == 0


def test_the_scheduler_prunes_the_audit_trail_too(settings, frozen_clock) -> None:
    settings.JOBS_AUDIT_KEEP_DAYS = 1
    settings.JOBS_PRUNE_INTERVAL_SECONDS = 60
    reporting_job()
    frozen_clock.shift(timedelta(days=2))
    assert retention.BackgroundPruning()() >= 1
    assert JobChange.objects.count() == 0


def test_prunehistory_prunes_the_audit_trail_and_zero_keeps_it_forever(
    settings, frozen_clock, capsys
) -> None:
    settings.JOBS_HISTORY_KEEP_PER_JOB = 0
    settings.JOBS_HISTORY_MAX_AGE_DAYS = 0
    settings.JOBS_AUDIT_KEEP_DAYS = 0
    reporting_job()
    frozen_clock.shift(timedelta(days=4000))
    call_command("prunehistory")
    assert "Audit records are kept forever" in capsys.readouterr().out
    assert JobChange.objects.count() == 1
    settings.JOBS_AUDIT_KEEP_DAYS = 365
    call_command("prunehistory")
    assert "deleted 1 audit records (keeping audit records of the last 365 days)" in (
        capsys.readouterr().out
    )
    assert JobChange.objects.count() == 0


def test_the_changes_are_in_japanese_too(root) -> None:
    job = reporting_job()
    client = client_of(root)
    client.post("/i18n/setlang/", {"language": "ja", "next": "/"})
    try:
        page = client.get(reverse("jobs:job_detail", args=[job.pk])).text
    finally:
        # The request left Japanese active in this thread: later tests expect English.
        translation.activate(django_settings.LANGUAGE_CODE)
    assert "変更履歴" in page and "作成" in page and "システム" in page


def test_a_once_job_made_in_another_zone_is_its_current_version_with_nothing_to_restore(
    operator,
) -> None:
    """The version records the instant: 03:00+01:00 from a browser in Paris is the
    02:00+00:00 the job reads back, so its only version is the current one."""
    from zoneinfo import ZoneInfo

    paris = (NOW + timedelta(days=30)).astimezone(ZoneInfo("Europe/Paris"))
    job = make_job(name="once", schedule_type=ScheduleType.ONCE, scheduled_at=paris)
    [created] = changes_of(job.pk)
    assert created.snapshot["scheduled_at"] == (NOW + timedelta(days=30)).isoformat()
    page = client_of(operator).get(reverse("jobs:job_detail", args=[job.pk])).text
    assert "Restore this version" not in page
