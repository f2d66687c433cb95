"""Secrets by value, not by name (jobs.access.masking).

A viewer reads every page and API answer of jobs holding credentials (a URL with a
password and a query token, every kind of env value, headers) and finds none of them; an
operator reads an http job's headers but no shell job's environment (jobs.use_shell);
nobody reads a URL's credentials; and who may change a job keeps its secrets when sending
back the masked values as they were shown.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from jobs.access import masking
from jobs.access.permissions import JOB_ADMINS, JOB_OPERATORS, JOB_VIEWERS, USE_SHELL
from jobs.alerts import build_payload
from jobs.executors.command_line import command_line
from jobs.models import Job, JobChange, JobHistory
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import make_job, make_run, make_user

pytestmark = pytest.mark.django_db

# A public address: no DNS look-up when the job is checked.
# (An http job's URL may not hold user:password: the address rules refuse it.)
HTTP_URL = "https://93.184.216.34/hook?token=qs-secret-abc&page=2"
HTTP_HEADERS = {"Authorization": "Bearer hdr-secret-111", "X-Api-Key": "apikey-secret-222"}
SHELL_ENV = {
    "DATABASE_URL": "postgres://u:dburlpw-333@db.internal/app",
    "PGPASS": "pgpass-val-444",
    "AUTH": "auth-val-555",
}
SHELL_COMMAND = "pg_dump postgres://backup:cmdpw-666@db.internal/app"
URL_SECRETS = ("qs-secret-abc", "dburlpw-333", "cmdpw-666")
VALUE_SECRETS = ("hdr-secret-111", "apikey-secret-222", "pgpass-val-444", "auth-val-555")
SECRETS = URL_SECRETS + VALUE_SECRETS


@pytest.fixture
def shell_on(settings):  # type: ignore[no-untyped-def]
    settings.JOBS_SHELL_ENABLED = True
    return settings


class Secretive:
    """The jobs and runs holding every kind of secret, and a job chaining to them."""

    def __init__(self) -> None:
        self.http = make_job(
            name="hook",
            executor="http",
            command=HTTP_URL,
            arguments={"method": "POST", "headers": dict(HTTP_HEADERS)},
        )
        self.shell = make_job(
            name="dump", executor="shell", command=SHELL_COMMAND, arguments={"env": SHELL_ENV}
        )
        # An edit: the audit trail holds old and new values.
        self.shell.arguments = {"env": {**SHELL_ENV, "PGPASS": "pgpass-val-444", "X": "1"}}
        self.shell.save()
        self.chain = make_job(name="first", command="echo first")
        self.chain.set_chains(on_success=[self.http, self.shell])
        self.chain.save()
        self.http_run = make_run(
            self.http,
            arguments=self.http.arguments,
            log=f"$ POST {HTTP_URL}\nsent Authorization: Bearer hdr-secret-111\nHTTP 200\n",
        )
        env_lines = "".join(f"{name}={value}\n" for name, value in SHELL_ENV.items())
        self.shell_run = make_run(
            self.shell, arguments=self.shell.arguments, log=f"$ {SHELL_COMMAND}\n{env_lines}"
        )
        self.jobs = (self.http, self.shell, self.chain)
        self.runs = (self.http_run, self.shell_run)


@pytest.fixture
def secretive(shell_on) -> Secretive:  # type: ignore[no-untyped-def]
    return Secretive()


def client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def dashboard_urls(s: Secretive) -> list[str]:
    urls = ["/", "/jobs/", "/history/", "/upcoming/"]
    for job in s.jobs:
        urls += [f"/jobs/{job.pk}/", f"/history/?job={job.pk}"]
    urls += [f"/runs/{run.pk}/" for run in s.runs]
    return urls


def admin_urls(s: Secretive) -> list[str]:
    urls = ["/admin/jobs/job/", "/admin/jobs/jobhistory/", "/admin/jobs/jobchange/"]
    urls += [f"/admin/jobs/job/{job.pk}/change/" for job in s.jobs]
    urls += [f"/admin/jobs/jobhistory/{run.pk}/change/" for run in s.runs]
    changes = JobChange.objects.filter(job_id__in=[job.pk for job in s.jobs])
    urls += [f"/admin/jobs/jobchange/{change.pk}/change/" for change in changes]
    return urls


def api_urls(s: Secretive) -> list[str]:
    urls = ["/api/v1/jobs/", "/api/v1/runs/"]
    for job in s.jobs:
        urls += [
            f"/api/v1/jobs/{job.pk}/",
            f"/api/v1/jobs/{job.pk}/runs/",
            f"/api/v1/jobs/{job.pk}/changes/",
        ]
    urls += [f"/api/v1/runs/{run.pk}/" for run in s.runs]
    urls.append("/api/v1/schedule-preview/?schedule_type=interval&interval=1&interval_unit=hour")
    return urls


def leaks(body: str, secrets: tuple[str, ...] = SECRETS) -> list[str]:
    return [secret for secret in secrets if secret in body]


def test_a_viewer_reads_no_secret_on_any_page_or_api_answer(secretive: Secretive) -> None:
    viewer = make_user("victor", JOB_VIEWERS, staff=True)
    browser, api = client_of(viewer), token_client(viewer)
    read = []
    for url in dashboard_urls(secretive) + admin_urls(secretive):
        response = browser.get(url)
        assert response.status_code == 200, url
        read.append((url, response.content.decode()))
    # The live parts htmx polls.
    for url in [f"/runs/{run.pk}/" for run in secretive.runs] + [
        f"/jobs/{job.pk}/" for job in secretive.jobs
    ]:
        response = browser.get(url, headers={"HX-Request": "true"})
        read.append((f"{url} (htmx)", response.content.decode()))
    for url in api_urls(secretive):
        response = api.get(url)
        assert response.status_code == 200, url
        read.append((url, response.content.decode()))
    assert [(url, leaks(body)) for url, body in read if leaks(body)] == []
    # Still recognisable: the URL's host, path and query keys, the variables' names.
    job_page = dict(read)[f"/jobs/{secretive.http.pk}/"]
    assert "https://93.184.216.34/hook?token=…&amp;page=…" in job_page
    shell_api = dict(read)[f"/api/v1/jobs/{secretive.shell.pk}/"]
    assert json.loads(shell_api)["arguments"]["env"]["PGPASS"] == "…"


def test_an_operator_reads_an_http_jobs_headers_but_no_shell_jobs_environment(
    secretive: Secretive,
) -> None:
    operator = make_user("olivia", JOB_OPERATORS)
    browser, api = client_of(operator), token_client(operator)
    http = api.get(f"/api/v1/jobs/{secretive.http.pk}/").json()
    assert http["arguments"]["headers"] == HTTP_HEADERS
    assert http["command"] == "https://93.184.216.34/hook?token=…&page=…"
    # A shell job's secrets are for users who may create it: jobs.use_shell.
    for url in (
        f"/jobs/{secretive.shell.pk}/",
        f"/jobs/{secretive.shell.pk}/edit/",
        f"/runs/{secretive.shell_run.pk}/",
    ):
        assert leaks(browser.get(url).content.decode()) == [], url
    for url in (
        f"/api/v1/jobs/{secretive.shell.pk}/",
        f"/api/v1/runs/{secretive.shell_run.pk}/",
        f"/api/v1/jobs/{secretive.shell.pk}/changes/",
    ):
        assert leaks(api.get(url).content.decode()) == [], url


def test_a_runner_who_may_not_change_jobs_gets_the_run_now_form_without_secrets(
    secretive: Secretive,
) -> None:
    runner = make_user("rita", JOB_VIEWERS, permissions=("jobs.run_job",))
    browser = client_of(runner)
    for job in (secretive.http, secretive.shell):
        page = browser.get(f"/jobs/{job.pk}/")
        assert page.context["run_form"] is not None or job.executor == "shell"
        assert leaks(page.content.decode()) == [], job.name
        # Run with the form as shown: the run gets the job's own arguments.
        form = page.context["run_form"]
        if form is None:
            continue
        response = browser.post(f"/jobs/{job.pk}/run/", _posted_as_shown(form))
        assert response.status_code == 302
        assert job.runs.latest("created_at").arguments == job.arguments


def test_nobody_reads_a_urls_credentials_not_even_a_superuser(secretive: Secretive) -> None:
    root = make_user("root", superuser=True, staff=True)
    browser, api = client_of(root), token_client(root)
    bodies = {
        url: browser.get(url).content.decode()
        for url in [
            *dashboard_urls(secretive),
            *admin_urls(secretive),
            *(f"/jobs/{job.pk}/edit/" for job in secretive.jobs),
        ]
    }
    bodies |= {url: api.get(url).content.decode() for url in api_urls(secretive)}
    assert [
        (url, leaks(body, URL_SECRETS)) for url, body in bodies.items() if leaks(body, URL_SECRETS)
    ] == []
    # The other values are theirs to read.
    assert "pgpass-val-444" in bodies[f"/api/v1/jobs/{secretive.shell.pk}/"]
    assert "hdr-secret-111" in bodies[f"/jobs/{secretive.http.pk}/"]


def test_an_alert_carries_no_secret(secretive: Secretive) -> None:
    for run in secretive.runs:
        run = JobHistory.objects.select_related("job").get(pk=run.pk)
        payload = json.dumps(build_payload(run, _notice()), default=str)
        assert leaks(payload) == []


def _notice() -> Any:
    from jobs.alerts import Notice

    return Notice(run_key="", job_key="", kind="failure", failures_in_a_row=1)


# --- round trips: the masked values sent back keep the stored ones ---------------------------


def _posted_as_shown(form: Any) -> dict[str, Any]:
    """What a browser posts for a form left as it was shown."""
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        if field.disabled:
            continue
        value = form[name].value()
        key = form.add_prefix(name)
        if isinstance(value, bool):
            if value:
                data[key] = "on"
        elif isinstance(value, (list, tuple)):
            data[key] = [str(item) for item in value]
        elif value is not None:
            data[key] = str(value)
    return data


def test_an_operator_saving_the_edit_form_as_shown_keeps_the_secrets(secretive: Secretive) -> None:
    operator = client_of(make_user("olivia", JOB_OPERATORS))
    job = secretive.http
    form = operator.get(f"/jobs/{job.pk}/edit/").context["form"]
    data = _posted_as_shown(form)
    assert "qs-secret-abc" not in json.dumps(data) and "urlpw-777" not in json.dumps(data)
    data["name"] = "hook renamed"
    response = operator.post(f"/jobs/{job.pk}/edit/", data)
    assert response.status_code == 302, response.context["form"].errors
    job.refresh_from_db()
    assert (job.name, job.command, job.arguments["headers"]) == (
        "hook renamed",
        HTTP_URL,
        HTTP_HEADERS,
    )


def test_a_shell_user_saving_a_shell_jobs_edit_form_as_shown_keeps_its_env(
    secretive: Secretive,
) -> None:
    shelly = client_of(make_user("shelly", JOB_ADMINS, permissions=(USE_SHELL,)))
    job = secretive.shell
    stored = (job.command, job.arguments)
    form = shelly.get(f"/jobs/{job.pk}/edit/").context["form"]
    data = _posted_as_shown(form)
    assert "dburlpw-333" not in json.dumps(data) and "pgpass-val-444" in json.dumps(data)
    data["description"] = "nightly"
    response = shelly.post(f"/jobs/{job.pk}/edit/", data)
    assert response.status_code == 302, response.context["form"].errors
    job.refresh_from_db()
    assert (job.description, job.command, job.arguments) == ("nightly", *stored)


def test_an_edited_url_still_holding_a_mask_is_refused_and_changes_nothing(
    secretive: Secretive,
) -> None:
    operator = client_of(make_user("olivia", JOB_OPERATORS))
    job = secretive.http
    data = _posted_as_shown(operator.get(f"/jobs/{job.pk}/edit/").context["form"])
    data["command"] = "https://93.184.216.34/other?token=…"
    response = operator.post(f"/jobs/{job.pk}/edit/", data)
    assert response.status_code == 200
    assert "stands for a hidden value" in str(response.context["form"].errors["command"])
    api = token_client(make_user("oscar", JOB_OPERATORS))
    answer = api.patch(
        f"/api/v1/jobs/{job.pk}/",
        {"command": "https://93.184.216.34/other?token=…"},
        format="json",
    )
    assert answer.status_code == 400 and "hidden value" in answer.json()["command"][0]
    job.refresh_from_db()
    assert job.command == HTTP_URL


def test_the_api_keeps_the_secrets_sent_back_as_read(secretive: Secretive) -> None:
    api = token_client(make_user("olivia", JOB_OPERATORS))
    job = secretive.http
    read = api.get(f"/api/v1/jobs/{job.pk}/").json()
    sent = {name: read[name] for name in ("command", "arguments", "webhook_url")}
    answer = api.patch(f"/api/v1/jobs/{job.pk}/", {**sent, "name": "renamed"}, format="json")
    assert answer.status_code == 200, answer.json()
    job.refresh_from_db()
    assert (job.name, job.command, job.arguments["headers"]) == ("renamed", HTTP_URL, HTTP_HEADERS)
    # Run now with the arguments as read: the run gets the stored ones.
    shelly = token_client(make_user("shelly", JOB_ADMINS, permissions=(USE_SHELL,)))
    shell = secretive.shell
    arguments = shelly.get(f"/api/v1/jobs/{shell.pk}/").json()["arguments"]
    assert arguments["env"]["DATABASE_URL"] == "postgres://…@db.internal/app"
    answer = shelly.post(f"/api/v1/jobs/{shell.pk}/run/", {"arguments": arguments}, format="json")
    assert answer.status_code == 201, answer.json()
    assert JobHistory.objects.get(pk=answer.json()["id"]).arguments == shell.arguments


def test_the_admin_form_saved_as_shown_keeps_the_secrets(secretive: Secretive) -> None:
    root = client_of(make_user("root", superuser=True, staff=True))
    job = secretive.http
    url = f"/admin/jobs/job/{job.pk}/change/"
    page = root.get(url)
    assert leaks(page.content.decode(), URL_SECRETS) == []
    form = page.context["adminform"].form
    data = _posted_as_shown(form)
    for name in ("scheduled_at_0", "scheduled_at_1"):
        data[name] = ""
    data.pop("scheduled_at", None)
    data |= {f"runs-{key}": "0" for key in ("TOTAL_FORMS", "INITIAL_FORMS", "MIN_NUM_FORMS")}
    data["runs-MAX_NUM_FORMS"] = "0"
    data["arguments"] = form["arguments"].value()
    data["name"] = "hook (admin)"
    response = root.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    job.refresh_from_db()
    assert (job.name, job.command, job.arguments["headers"]) == (
        "hook (admin)",
        HTTP_URL,
        HTTP_HEADERS,
    )


# --- the masking itself ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgres://u:pw@h/d", "postgres://…@h/d"),
        ("https://h/p?token=abc&x=1#frag", "https://h/p?token=…&x=…#…"),
        ("https://ghp_token@github.com/o/r.git", "https://…@github.com/o/r.git"),
        ("curl -s https://a:b@h/x?t=1 -o out", "curl -s https://…@h/x?t=… -o out"),
        ("https://h/p?flag&empty=", "https://h/p?…&empty="),
        ("https://example.com/plain/path", "https://example.com/plain/path"),
        ("no url here: a@b c?d=e", "no url here: a@b c?d=e"),
    ],
)
def test_a_urls_credentials_are_masked_its_host_path_and_keys_kept(text: str, shown: str) -> None:
    assert masking.mask_urls(text) == shown


def test_the_logs_first_line_is_stored_without_the_urls_credentials() -> None:
    assert command_line("http", HTTP_URL, {"method": "post"}) == (
        "$ POST https://93.184.216.34/hook?token=…&page=…"
    )
    assert command_line("shell", SHELL_COMMAND) == "$ pg_dump postgres://…@db.internal/app"


def test_a_value_sent_back_as_shown_is_the_stored_one() -> None:
    stored = {"env": {"DB": "postgres://u:pw@h/d", "N": "secret"}, "body": "x"}
    sent = {"env": {"DB": "postgres://…@h/d", "N": "…", "NEW": "v"}, "body": "y"}
    assert masking.restore(sent, stored) == {
        "env": {"DB": "postgres://u:pw@h/d", "N": "secret", "NEW": "v"},
        "body": "y",
    }
    # A command line edited around its masked URL keeps the URL.
    assert masking.restore("curl -v https://…@h/x?t=…", "curl https://a:b@h/x?t=1") == (
        "curl -v https://a:b@h/x?t=1"
    )
    with pytest.raises(masking.HiddenValueKept):
        masking.restore("https://h/elsewhere?token=…", "https://h/p?token=abc")


def test_only_users_who_may_create_a_shell_job_see_its_secrets() -> None:
    shell = Job(executor="shell", command="env")
    http = Job(executor="http", command="https://h/")
    operator = make_user("olivia", JOB_OPERATORS)
    shelly = make_user("shelly", JOB_OPERATORS, permissions=(USE_SHELL,))
    viewer = make_user("victor", JOB_VIEWERS)
    assert [masking.may_see_secrets(user, shell) for user in (viewer, operator, shelly)] == [
        False,
        False,
        True,
    ]
    assert [masking.may_see_secrets(user, http) for user in (viewer, operator, shelly)] == [
        False,
        True,
        True,
    ]
