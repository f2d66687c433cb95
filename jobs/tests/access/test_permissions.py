"""One permission model for the dashboard, the API and the admin (jobs.access.permissions).

For each entry point: a user without the permission is refused (403) and nothing
changes; a user with it succeeds. Users are made as an administrator would make them:
members of the groups migration 0006 creates.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse

from jobs.access.permissions import GROUPS, JOB_ADMINS, JOB_OPERATORS, JOB_VIEWERS
from jobs.models import Job, JobHistory, RunStatus
from jobs.tests import personas
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import make_job, make_run, make_user
from jobs.tests.forms import admin_form, dashboard_form

pytestmark = pytest.mark.django_db

FORM = dashboard_form()


signed_in = personas.signed_in


@pytest.fixture
def nobody() -> Client:
    return signed_in(personas.nobody())


@pytest.fixture
def viewer() -> Client:
    return signed_in(personas.viewer())


@pytest.fixture
def operator() -> Client:
    return signed_in(personas.operator())


@pytest.fixture
def job_admin() -> Client:
    return signed_in(personas.job_admin())


def job_state(job: Job) -> tuple:
    job.refresh_from_db()
    return (job.name, job.command, job.is_active, job.runs.count())


# --- the groups ----------------------------------------------------------------------


def test_the_migration_makes_the_three_groups_with_their_permissions() -> None:
    for grant in GROUPS:
        group = Group.objects.get(name=grant.name)
        assert {p.codename for p in group.permissions.all()} == set(grant.codenames)
    assert "use_shell" not in JOB_ADMINS.codenames


# --- dashboard: reading ----------------------------------------------------------------


def test_reading_any_page_needs_view_job(nobody: Client, viewer: Client) -> None:
    job = make_job()
    run = make_run(job)
    pages = ["/", "/jobs/", f"/jobs/{job.pk}/", "/history/", f"/runs/{run.pk}/"]
    for url in pages:
        refused = nobody.get(url)
        assert refused.status_code == 403, url
        assert "does not have the permission" in refused.text
        assert viewer.get(url).status_code == 200, url
    assert nobody.get("/jobs/", headers={"HX-Request": "true"}).status_code == 403


def test_a_viewer_sees_no_button_for_what_they_may_not_do(viewer: Client) -> None:
    job = make_job()
    run = make_run(job, status=RunStatus.PENDING)
    page = viewer.get(f"/jobs/{job.pk}/").text
    for action in ("run", "toggle", "edit", "delete"):
        assert f"/jobs/{job.pk}/{action}/" not in page, action
    assert f"/runs/{run.pk}/cancel/" not in page
    assert f"/runs/{run.pk}/cancel/" not in viewer.get(f"/runs/{run.pk}/").text
    assert "/jobs/new/" not in viewer.get("/").text
    assert "/jobs/new/" not in viewer.get("/jobs/").text


def test_an_operator_sees_run_edit_and_cancel_but_not_delete_or_new(operator: Client) -> None:
    job = make_job()
    run = make_run(job, status=RunStatus.PENDING)
    page = operator.get(f"/jobs/{job.pk}/").text
    for action in ("run", "toggle", "edit"):
        assert f"/jobs/{job.pk}/{action}/" in page, action
    assert f"/jobs/{job.pk}/delete/" not in page
    assert f"/runs/{run.pk}/cancel/" in page
    assert "/jobs/new/" not in operator.get("/jobs/").text


def test_a_job_admin_and_a_superuser_see_every_button(job_admin: Client) -> None:
    job = make_job()
    superuser = signed_in(make_user("root", superuser=True))
    for client in (job_admin, superuser):
        page = client.get(f"/jobs/{job.pk}/").text
        for action in ("run", "toggle", "edit", "delete"):
            assert f"/jobs/{job.pk}/{action}/" in page, action
        assert "/jobs/new/" in client.get("/jobs/").text


# --- dashboard: changing ---------------------------------------------------------------


def test_creating_needs_add_job(operator: Client, job_admin: Client) -> None:
    assert operator.get("/jobs/new/").status_code == 403
    assert operator.post("/jobs/new/", FORM).status_code == 403
    assert not Job.objects.exists()
    assert job_admin.post("/jobs/new/", FORM).status_code == 302
    assert Job.objects.get().name == "nightly backup"


def test_editing_needs_change_job(viewer: Client, operator: Client) -> None:
    job = make_job()
    before = job_state(job)
    evil = {**FORM, "name": "renamed", "command": "rm -rf / --no-preserve-root"}
    assert viewer.get(f"/jobs/{job.pk}/edit/").status_code == 403
    assert viewer.post(f"/jobs/{job.pk}/edit/", evil).status_code == 403
    assert job_state(job) == before
    assert operator.post(f"/jobs/{job.pk}/edit/", {**FORM, "name": "renamed"}).status_code == 302
    assert job_state(job)[0] == "renamed"


def test_enabling_and_disabling_need_change_job(viewer: Client, operator: Client) -> None:
    job = make_job()
    assert viewer.post(f"/jobs/{job.pk}/toggle/").status_code == 403
    assert job_state(job)[2] is True
    assert operator.post(f"/jobs/{job.pk}/toggle/").status_code == 302
    assert job_state(job)[2] is False


def test_deleting_needs_delete_job(operator: Client, job_admin: Client) -> None:
    job = make_job()
    make_run(job)
    assert operator.get(f"/jobs/{job.pk}/delete/").status_code == 403
    assert operator.post(f"/jobs/{job.pk}/delete/").status_code == 403
    assert Job.objects.filter(pk=job.pk).exists() and JobHistory.objects.count() == 1
    assert job_admin.post(f"/jobs/{job.pk}/delete/").status_code == 302
    assert not Job.objects.exists()


def test_run_now_needs_run_job(viewer: Client, operator: Client) -> None:
    job = make_job()
    assert viewer.post(f"/jobs/{job.pk}/run/").status_code == 403
    assert not job.runs.exists()
    assert operator.post(f"/jobs/{job.pk}/run/").status_code == 302
    assert job.runs.count() == 1


def test_cancelling_a_run_needs_run_job(viewer: Client, operator: Client) -> None:
    run = make_run(make_job(), status=RunStatus.PENDING)
    assert viewer.post(f"/runs/{run.pk}/cancel/", {"confirm": "1"}).status_code == 403
    assert viewer.post(f"/runs/{run.pk}/cancel/").status_code == 403  # not even the asking
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING
    assert operator.post(f"/runs/{run.pk}/cancel/", {"confirm": "1"}).status_code == 302
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.cancelled_by == "operator"


# --- API -------------------------------------------------------------------------------

API = "/api/v1/jobs/"
VALID = {
    "name": "nightly report",
    "command": "python report.py",
    "schedule_type": "interval",
    "interval": 5,
    "interval_unit": "minute",
}


def test_api_reads_need_view_job() -> None:
    job = make_job()
    run = make_run(job)
    nobody = token_client(make_user("nobody"))
    viewer = token_client(make_user("viewer", JOB_VIEWERS))
    reads = (API, f"{API}{job.pk}/", f"{API}{job.pk}/runs/", f"{API}{job.pk}/changes/")
    for url in (*reads, "/api/v1/runs/"):
        refused = nobody.get(url)
        assert refused.status_code == 403, url
        assert "jobs.view_job" in refused.json()["detail"]
        assert viewer.get(url).status_code == 200, url
    assert viewer.get(f"/api/v1/runs/{run.pk}/").status_code == 200


def test_api_writes_need_the_same_permissions_as_the_dashboard() -> None:
    job = make_job()
    # Staff status alone grants nothing: the permissions do.
    staff_viewer = token_client(make_user("bob", JOB_VIEWERS, staff=True))
    operator = token_client(make_user("operator", JOB_OPERATORS))
    job_admin = token_client(make_user("jobadmin", JOB_ADMINS))
    before = job_state(job)
    refused = {
        "create": staff_viewer.post(API, VALID, format="json"),
        "replace": staff_viewer.put(f"{API}{job.pk}/", VALID, format="json"),
        "change": staff_viewer.patch(f"{API}{job.pk}/", {"name": "x"}, format="json"),
        "disable": staff_viewer.post(f"{API}{job.pk}/disable/"),
        "run": staff_viewer.post(f"{API}{job.pk}/run/"),
        "delete": operator.delete(f"{API}{job.pk}/"),
        "create as operator": operator.post(API, VALID, format="json"),
    }
    assert {name: r.status_code for name, r in refused.items()} == dict.fromkeys(refused, 403)
    assert "jobs.delete_job" in refused["delete"].json()["detail"]
    assert job_state(job) == before and Job.objects.count() == 1

    assert operator.patch(f"{API}{job.pk}/", {"name": "renamed"}, format="json").status_code == 200
    assert operator.post(f"{API}{job.pk}/disable/").status_code == 200
    assert operator.post(f"{API}{job.pk}/enable/").status_code == 200
    assert operator.post(f"{API}{job.pk}/run/").status_code == 201
    assert job_state(job) == ("renamed", job.command, True, 1)
    assert job_admin.post(API, VALID, format="json").status_code == 201
    assert job_admin.delete(f"{API}{job.pk}/").status_code == 204


def test_api_cancel_needs_run_job() -> None:
    run = make_run(make_job(), status=RunStatus.PENDING)
    viewer = token_client(make_user("viewer", JOB_VIEWERS))
    operator = token_client(make_user("operator", JOB_OPERATORS))
    assert viewer.post(f"/api/v1/runs/{run.pk}/cancel/").status_code == 403
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING
    assert operator.post(f"/api/v1/runs/{run.pk}/cancel/").status_code == 200
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED


# --- admin -----------------------------------------------------------------------------

JOBS_ADMIN = "admin:jobs_job_changelist"
RUNS_ADMIN = "admin:jobs_jobhistory_changelist"


def _actions(client: Client, url_name: str) -> set[str]:
    form = client.get(reverse(url_name)).context["action_form"]
    return set() if form is None else {name for name, _ in form.fields["action"].choices if name}


def test_the_admin_offers_each_action_only_with_its_permission() -> None:
    viewer = signed_in(make_user("viewer", JOB_VIEWERS, staff=True))
    operator = signed_in(make_user("operator", JOB_OPERATORS, staff=True))
    job_admin = signed_in(make_user("jobadmin", JOB_ADMINS, staff=True))
    assert viewer.get(reverse(JOBS_ADMIN)).status_code == 200
    assert viewer.get(reverse(RUNS_ADMIN)).status_code == 200
    assert _actions(viewer, JOBS_ADMIN) == set()
    assert _actions(viewer, RUNS_ADMIN) == set()
    assert _actions(operator, JOBS_ADMIN) == {"run_now", "enable", "disable"}
    assert _actions(operator, RUNS_ADMIN) == {"retry", "cancel"}
    assert _actions(job_admin, JOBS_ADMIN) == {
        "run_now",
        "enable",
        "disable",
        "duplicate",
        "delete_selected",
    }


def test_admin_actions_without_the_permission_change_nothing() -> None:
    job = make_job()
    viewer = signed_in(make_user("viewer", JOB_VIEWERS, staff=True))
    operator = signed_in(make_user("operator", JOB_OPERATORS, staff=True))
    selected = {"_selected_action": [str(job.pk)]}
    for action in ("run_now", "disable", "delete_selected"):
        viewer.post(reverse(JOBS_ADMIN), {"action": action, **selected, "post": "yes"})
    operator.post(reverse(JOBS_ADMIN), {"action": "delete_selected", **selected, "post": "yes"})
    assert job_state(job) == ("backup", "echo hello", True, 0)
    change = reverse("admin:jobs_job_change", args=[job.pk])
    assert viewer.post(change, admin_form(name="renamed")).status_code == 403
    assert job_state(job)[0] == "backup"

    operator.post(reverse(JOBS_ADMIN), {"action": "run_now", **selected})
    assert job_state(job)[3] == 1


# --- upgrading ------------------------------------------------------------------------

BEFORE = ("jobs", "0005_merge_0004_alerts_metrics_0004_scheduling_power")
WITH_GROUPS = ("jobs", "0006_permissions_and_groups")
AUTH = ("auth", "0012_alter_user_first_name_max_length")


@pytest.mark.django_db(transaction=True)
def test_upgrading_puts_staff_in_job_admins_and_everyone_else_in_job_viewers() -> None:
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    try:
        executor.migrate([BEFORE])
        old = executor.loader.project_state([BEFORE, AUTH]).apps.get_model("auth", "User")
        old.objects.create(username="staff", is_staff=True)
        old.objects.create(username="plain")
        executor = MigrationExecutor(connection)
        executor.migrate([WITH_GROUPS])
        new = executor.loader.project_state([WITH_GROUPS, AUTH]).apps.get_model("auth", "User")
        groups = {u.username: [g.name for g in u.groups.all()] for u in new.objects.all()}
        assert groups == {"staff": ["Job admins"], "plain": ["Job viewers"]}
    finally:
        MigrationExecutor(connection).migrate(latest)
