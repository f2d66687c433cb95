"""Who may see what: login everywhere but the login page and /healthz; POST-only actions;
unknown or malformed ids give 404."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from jobs.models import Job, JobHistory
from jobs.tests.factories import make_job, make_run
from jobs.tests.ui_support import PASSWORD

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db


def _pages(job: Job, run: JobHistory) -> list[str]:
    return [
        "/",
        "/jobs/",
        "/jobs/new/",
        f"/jobs/{job.pk}/",
        f"/jobs/{job.pk}/edit/",
        f"/jobs/{job.pk}/delete/",
        "/history/",
        f"/runs/{run.pk}/",
    ]


def test_every_page_sends_a_visitor_to_the_login_page(client: Client) -> None:
    job = make_job()
    run = make_run(job)
    for url in _pages(job, run):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"] == f"/accounts/login/?next={url}"


def test_actions_send_a_visitor_to_the_login_page_and_change_nothing(client: Client) -> None:
    job = make_job()
    for action in ("run", "toggle", "delete"):
        response = client.post(f"/jobs/{job.pk}/{action}/")
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    job.refresh_from_db()
    assert job.is_active
    assert not job.runs.exists()


def test_an_htmx_poll_after_the_session_ended_redirects_the_whole_tab(client: Client) -> None:
    response = client.get("/jobs/", headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/accounts/login/?next=/jobs/"


@pytest.mark.parametrize("url", ["/admin/", "/admin/jobs/job/", "/admin/jobs/jobhistory/"])
def test_the_admin_keeps_its_own_login_page(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"/admin/login/?next={url}"


def test_the_login_page_and_healthz_need_no_login(client: Client) -> None:
    assert client.get("/accounts/login/").status_code == 200
    assert client.get("/healthz").json() == {"status": "ok"}


def test_a_user_logs_in_with_the_form_and_lands_on_the_dashboard(client: Client, user) -> None:
    response = client.post(
        "/accounts/login/", {"username": "alice", "password": PASSWORD}, follow=True
    )
    assert response.redirect_chain == [("/", 302)]
    assert response.status_code == 200


def test_every_page_has_a_logout_form_that_posts(signed_in: Client) -> None:
    job = make_job()
    run = make_run(job)
    for url in _pages(job, run):
        response = signed_in.get(url)
        assert response.status_code == 200, url
        assert b'<form action="/accounts/logout/" method="post">' in response.content, url
    response = signed_in.post("/accounts/logout/")
    assert response.status_code == 302
    assert signed_in.get("/").status_code == 302


def test_logging_out_by_get_is_refused(signed_in: Client) -> None:
    assert signed_in.get("/accounts/logout/").status_code == 405
    assert signed_in.get("/").status_code == 200


def test_ensureadmin_creates_one_admin_with_a_random_password_once(capsys) -> None:
    call_command("ensureadmin")
    call_command("ensureadmin")
    printed = capsys.readouterr().out
    assert printed.count("password:") == 1
    password = printed.split("password:")[1].split()[0]
    admin = get_user_model().objects.get()
    assert admin.is_superuser
    assert admin.check_password(password)
    assert len(password) >= 12


@pytest.mark.parametrize("action", ["run", "toggle"])
def test_actions_refuse_get_and_change_nothing(signed_in: Client, action: str) -> None:
    job = make_job()
    assert signed_in.get(f"/jobs/{job.pk}/{action}/").status_code == 405
    job.refresh_from_db()
    assert job.is_active
    assert not job.runs.exists()


def test_the_delete_page_asks_first_and_deletes_only_on_post(signed_in: Client) -> None:
    job = make_job(name="precious")
    response = signed_in.get(f"/jobs/{job.pk}/delete/")
    assert response.status_code == 200
    assert "Delete “precious”?" in response.text
    assert Job.objects.filter(pk=job.pk).exists()


def test_posts_without_a_csrf_token_are_refused(user) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    job = make_job()
    for url in (f"/jobs/{job.pk}/run/", f"/jobs/{job.pk}/toggle/", f"/jobs/{job.pk}/delete/"):
        assert browser.post(url).status_code == 403, url
    assert browser.post("/jobs/new/", {"name": "x"}).status_code == 403
    assert Job.objects.get(pk=job.pk).is_active
    assert not JobHistory.objects.exists()


def test_unknown_ids_give_404(signed_in: Client) -> None:
    unknown = uuid.uuid4()
    for url in (
        f"/jobs/{unknown}/",
        f"/jobs/{unknown}/edit/",
        f"/jobs/{unknown}/delete/",
        f"/runs/{unknown}/",
    ):
        assert signed_in.get(url).status_code == 404, url
    for action in ("run", "toggle", "delete"):
        assert signed_in.post(f"/jobs/{unknown}/{action}/").status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "/jobs/not-a-uuid/",
        "/jobs/12345/edit/",
        "/jobs/%3Cscript%3E/delete/",
        "/jobs/00000000-0000-0000-0000-00000000000g/",
        "/runs/1/",
        "/jobs/../../etc/passwd",
    ],
)
def test_malformed_ids_give_404(signed_in: Client, url: str) -> None:
    assert signed_in.get(url).status_code == 404
    assert signed_in.post(url).status_code == 404


def test_the_404_page_is_a_page_of_the_site(signed_in: Client, settings) -> None:
    settings.DEBUG = False
    response = signed_in.get(f"/jobs/{uuid.uuid4()}/")
    assert response.status_code == 404
    assert "Not found" in response.text
