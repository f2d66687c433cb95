"""The dashboard's screens for jobs that do real work: the job form per executor (its
fields, every bad input at its field with nothing saved), the shell permission (403),
"run now" with arguments, the run page that follows a run while it runs, what a job runs
in words, a job that cannot run flagged, and secret values masked."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs.access.permissions import JOB_ADMINS, JOB_OPERATORS, JOB_VIEWERS, USE_SHELL
from jobs.executors.output import RunOutput
from jobs.models import ChangeAction, Job, JobChange, JobHistory, RunStatus
from jobs.tests.factories import make_job, make_run, make_user
from jobs.tests.forms import dashboard_form
from jobs.tests.ui_support import PASSWORD
from jobs.tests.web.test_views_queries import EVERY_PAGE

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

TYPED = "samples.typed"
RECORD = "jobs.tests.sample_tasks.record"
PUBLIC_URL = "https://93.184.216.34/hook"  # a public address: no DNS look-up


def client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def shell_on(settings):  # type: ignore[no-untyped-def]
    settings.JOBS_SHELL_ENABLED = True
    return settings


@pytest.fixture
def shell_user(db):  # type: ignore[no-untyped-def]
    return make_user("shelly", JOB_ADMINS, password=PASSWORD, permissions=(USE_SHELL,))


def python_form(task: str = TYPED, **fields: Any) -> dict[str, Any]:
    return dashboard_form(executor="python", task=task, command="", **fields)


def field_errors(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 200, response.status_code
    return {name: list(messages) for name, messages in response.context["form"].errors.items()}


# --- the form: choosing the executor --------------------------------------------------------


def test_the_form_offers_every_executor_but_shell_and_the_registered_tasks(
    signed_in: Client,
) -> None:
    page = signed_in.get("/jobs/new/").text
    for kind in ("simulated", "python", "command", "http"):
        assert f'<option value="{kind}"' in page
    assert '<option value="shell"' not in page
    # Each task with its description, its signature as the option's title.
    assert f'<option value="{TYPED}" title="typed(count: int' in page
    assert "samples.typed: Every kind of parameter." in page
    # job_form.js reads which fields belong to which executor; htmx fetches a task's fields.
    assert 'data-executor-switch=""' in page
    assert 'data-executor="python"' in page and 'data-executor="http"' in page
    assert 'hx-get="/jobs/task-arguments/"' in page
    # What the command field holds for each executor, said in words.
    assert "split with shell quoting rules" not in page  # shell is not offered
    assert "JOBS_MANAGEMENT_COMMANDS lists may run: clearsessions, prunehistory, check" in page


def test_shell_is_offered_only_while_enabled_and_to_users_with_use_shell(
    settings, shell_user
) -> None:
    shelly = client_of(shell_user)
    settings.JOBS_SHELL_ENABLED = False
    assert '<option value="shell"' not in shelly.get("/jobs/new/").text
    settings.JOBS_SHELL_ENABLED = True
    page = shelly.get("/jobs/new/").text
    assert '<option value="shell"' in page
    assert "split with shell quoting rules and run <em>without</em> a shell" in page
    assert "sh -c" in page
    admin = client_of(make_user("admin", JOB_ADMINS))
    assert '<option value="shell"' not in admin.get("/jobs/new/").text


SHELL_OFF_HINT = "Shell commands are switched off on this site: JOBS_SHELL_ENABLED=true"


def test_staff_are_told_under_the_select_why_shell_is_missing(settings) -> None:
    staff = client_of(make_user("staff", JOB_ADMINS, staff=True))
    settings.JOBS_SHELL_ENABLED = False
    assert SHELL_OFF_HINT in staff.get("/jobs/new/").text
    settings.JOBS_SHELL_ENABLED = True
    page = staff.get("/jobs/new/").text
    assert SHELL_OFF_HINT not in page
    assert "only for users with the permission" in page and "(jobs.use_shell)" in page


def test_no_shell_hint_where_shell_is_offered_or_to_users_who_are_not_staff(
    settings, shell_on
) -> None:
    shelly = client_of(make_user("shelly", JOB_ADMINS, staff=True, permissions=(USE_SHELL,)))
    assert "Shell commands are on, but" not in shelly.get("/jobs/new/").text
    settings.JOBS_SHELL_ENABLED = False
    not_staff = client_of(make_user("admin", JOB_ADMINS))
    assert SHELL_OFF_HINT not in not_staff.get("/jobs/new/").text


def test_a_post_without_an_executor_keeps_a_simulated_job(signed_in: Client) -> None:
    # What the form posted before it had an executor (scripts, older pages).
    response = signed_in.post("/jobs/new/", dashboard_form())
    assert response.status_code == 302
    job = Job.objects.get()
    assert (job.executor, job.command, job.arguments) == ("simulated", "backup --all", {})


# --- python --------------------------------------------------------------------------------


def test_a_python_job_is_saved_from_the_fields_of_its_tasks_signature(
    signed_in: Client, settings
) -> None:
    settings.TIME_ZONE = "UTC"
    response = signed_in.post(
        "/jobs/new/",
        python_form(
            **{
                "arg-count": "3",
                "arg-ratio": "",  # blank: the default
                "arg-flag": "on",
                "arg-label": "nightly",
                "arg-day": "2026-12-01",
                "arg-at": "2026-12-01T09:30",
                "arg-colour": '"green"',
                "arg-mode": '"slow"',
                "arg-items": "[1, 2]",
                "arg-options": '{"a": 1}',
                "arg-anything": "",
                "arg-key": "",
            }
        ),
    )
    assert response.status_code == 302, field_errors(response)
    job = Job.objects.get()
    assert (job.executor, job.command) == ("python", TYPED)
    assert job.arguments == {
        "count": 3,
        "flag": True,
        "label": "nightly",
        "day": "2026-12-01",
        "at": "2026-12-01T09:30:00+00:00",
        "colour": "green",
        "mode": "slow",
        "items": [1, 2],
        "options": {"a": 1},
    }


def test_the_form_of_a_python_job_shows_its_arguments_and_the_defaults(
    signed_in: Client, settings
) -> None:
    settings.TIME_ZONE = "UTC"
    job = make_job(
        executor="python",
        command=TYPED,
        arguments={"count": 7, "colour": "green", "items": [3], "at": "2026-12-01T09:30:00+00:00"},
    )
    form = signed_in.get(f"/jobs/{job.pk}/edit/").context["form"]
    assert form["task"].value() == TYPED
    assert form["arg-count"].value() == 7
    assert form["arg-colour"].value() == '"green"'
    assert form["arg-items"].value() == "[3]"
    page = signed_in.get(f"/jobs/{job.pk}/edit/").text
    # Typed inputs: a number, a checkbox, date and date-time pickers, choices, JSON boxes.
    assert 'type="number" name="arg-count" value="7"' in page
    assert 'type="checkbox" name="arg-flag"' in page
    assert 'type="date" name="arg-day"' in page
    assert 'type="datetime-local" name="arg-at" value="2026-12-01T09:30:00"' in page
    assert '<option value="&quot;green&quot;" selected>green</option>' in page
    assert "Default (fast)" in page  # the Literal's default
    assert '<textarea name="arg-items"' in page
    # The defaults: in the placeholders and the help.
    assert 'name="arg-ratio" value="" placeholder="0.5"' not in page  # number inputs...
    assert 'placeholder="0.5"' in page
    assert "default &#x27;x&#x27;; leave blank to use it" in page
    assert "<code>int</code> · required" in page


def test_a_python_jobs_task_is_chosen_again_without_javascript(signed_in: Client) -> None:
    data = python_form(task=RECORD)
    data["show_task"] = "1"
    response = signed_in.post("/jobs/new/", data)
    assert response.status_code == 200
    assert not Job.objects.exists()
    form = response.context["form"]
    assert not form.errors  # not checked: the user has not asked to save yet
    assert 'name="arg-key"' in response.text and 'name="arg-count"' not in response.text


def test_the_fields_of_a_task_are_served_for_htmx_to_swap_in(signed_in: Client) -> None:
    response = signed_in.get("/jobs/task-arguments/", {"task": RECORD})
    assert response.status_code == 200
    assert "<html" not in response.text
    assert "record(key: str, value: Any = None)" in response.text
    assert 'name="arg-key"' in response.text and 'name="arg-value"' in response.text
    # With the job: prefilled from its arguments when it runs that task.
    job = make_job(executor="python", command=RECORD, arguments={"key": "mine"})
    mine = signed_in.get("/jobs/task-arguments/", {"task": RECORD, "job": str(job.pk)})
    assert 'name="arg-key" value="mine"' in mine.text
    other = signed_in.get("/jobs/task-arguments/", {"task": TYPED, "job": str(job.pk)})
    assert 'name="arg-count"' in other.text
    gone = signed_in.get("/jobs/task-arguments/", {"task": "os.system"})
    assert "is not a registered task" in gone.text
    assert signed_in.get("/jobs/task-arguments/", {"task": RECORD, "job": "x"}).status_code == 200


def test_only_users_who_may_add_or_change_jobs_get_a_tasks_fields() -> None:
    viewer = client_of(make_user("viewer", JOB_VIEWERS))
    assert viewer.get("/jobs/task-arguments/", {"task": RECORD}).status_code == 403
    operator = client_of(make_user("operator", JOB_OPERATORS))
    assert operator.get("/jobs/task-arguments/", {"task": RECORD}).status_code == 200


PYTHON_BAD_INPUTS = [
    pytest.param({"task": ""}, "task", "Choose the task this job runs.", id="no task"),
    pytest.param({"task": "os.system"}, "task", "Select a valid choice", id="a dotted path"),
    pytest.param(
        {"task": "jobs.tests.sample_tasks.not_registered"},
        "task",
        "Select a valid choice",
        id="importable, not registered",
    ),
    pytest.param({"arg-count": ""}, "arg-count", "This field is required", id="missing"),
    pytest.param({"arg-count": "abc"}, "arg-count", "whole number", id="not an int"),
    pytest.param({"arg-ratio": "fast"}, "arg-ratio", "Enter a number", id="not a float"),
    pytest.param({"arg-day": "2026-13-01"}, "arg-day", "valid date", id="not a date"),
    pytest.param({"arg-at": "tomorrow"}, "arg-at", "valid date/time", id="not a date-time"),
    pytest.param({"arg-colour": '"blue"'}, "arg-colour", "valid choice", id="not an Enum's"),
    pytest.param({"arg-mode": '"medium"'}, "arg-mode", "valid choice", id="not a Literal's"),
    pytest.param({"arg-items": "[1,"}, "arg-items", "Enter valid JSON", id="not JSON"),
    pytest.param({"arg-items": '{"a": 1}'}, "arg-items", "Enter a list", id="not a list"),
    pytest.param({"arg-options": "[1]"}, "arg-options", "JSON object", id="not a dict"),
    pytest.param({"arg-label": "x" * 5001}, "arg-label", "at most 5000", id="too long"),
]


@pytest.mark.parametrize(("changes", "field", "message"), PYTHON_BAD_INPUTS)
def test_bad_input_for_a_python_job_gets_a_message_at_its_field_and_saves_nothing(
    signed_in: Client, changes: dict, field: str, message: str
) -> None:
    data = python_form(**{"arg-count": "1", **changes})
    errors = field_errors(signed_in.post("/jobs/new/", data))
    assert field in errors, errors
    assert message in " ".join(errors[field])
    assert not Job.objects.exists()


def test_a_missing_argument_is_said_once_at_its_field(signed_in: Client) -> None:
    data = python_form(task="jobs.example_tasks.daily_report", **{"arg-level": '"full"'})
    errors = field_errors(signed_in.post("/jobs/new/", data))
    # Not again at the task, where Job.clean()'s check of the arguments would put it.
    assert errors == {"arg-day": ["This field is required."]}


def test_more_keyword_arguments_of_a_task_that_takes_kwargs(signed_in: Client) -> None:
    task = "jobs.tests.sample_tasks.accepts_anything"
    data = python_form(task=task, **{"arg-first": "1", "task_more": '{"colour": "red"}'})
    assert signed_in.post("/jobs/new/", data).status_code == 302
    assert Job.objects.get().arguments == {"first": 1, "colour": "red"}
    for bad, message in (('["red"]', "JSON object"), ('{"first": 2}', "own fields")):
        data = python_form(task=task, name="again", **{"arg-first": "1", "task_more": bad})
        errors = field_errors(signed_in.post("/jobs/new/", data))
        assert message in " ".join(errors["task_more"])
    assert Job.objects.count() == 1


def test_editing_a_python_job_keeps_defaults_out_of_its_arguments(signed_in: Client) -> None:
    job = make_job(executor="python", command=TYPED, arguments={"count": 2})
    # What the browser posts back for an untouched form: the checkbox left unticked.
    data = python_form(name="renamed", **{"arg-count": "2"})
    assert signed_in.post(f"/jobs/{job.pk}/edit/", data).status_code == 302
    job.refresh_from_db()
    assert (job.name, job.arguments) == ("renamed", {"count": 2})


def test_a_job_moved_to_another_executor_keeps_no_stale_arguments(signed_in: Client) -> None:
    job = make_job(executor="python", command=RECORD, arguments={"key": "k"})
    data = dashboard_form(executor="simulated", command="echo hi", task=RECORD, **{"arg-key": "k"})
    assert signed_in.post(f"/jobs/{job.pk}/edit/", data).status_code == 302
    job.refresh_from_db()
    assert (job.executor, job.command, job.arguments) == ("simulated", "echo hi", {})


def test_a_python_jobs_task_that_is_gone_is_shown_and_refused(signed_in: Client) -> None:
    job = make_job(executor="python", command="billing.tasks.gone", arguments={"day": "x"})
    page = signed_in.get(f"/jobs/{job.pk}/edit/").text
    assert "billing.tasks.gone (not registered)" in page
    assert "is not a registered task" in page
    errors = field_errors(signed_in.post(f"/jobs/{job.pk}/edit/", python_form(task=job.command)))
    assert len(errors["task"]) == 1
    assert "No Python task is registered as “billing.tasks.gone”" in errors["task"][0]


# --- management commands ---------------------------------------------------------------------


def command_form(line: str, **fields: Any) -> dict[str, Any]:
    return dashboard_form(executor="command", command=line, **fields)


def test_a_management_command_job_is_saved(signed_in: Client) -> None:
    assert signed_in.post("/jobs/new/", command_form("prunehistory --dry-run")).status_code == 302
    job = Job.objects.get()
    assert (job.executor, job.command, job.arguments) == ("command", "prunehistory --dry-run", {})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param("", "This field is required", id="empty"),
        pytest.param("nosuchcommand", "not listed in JOBS_MANAGEMENT_COMMANDS", id="not listed"),
        pytest.param("check --no-such-option", "cannot run", id="options its parser refuses"),
        pytest.param("check 'unclosed", "cannot be split", id="bad quoting"),
    ],
)
def test_bad_management_command_lines_get_a_message_at_the_command(
    signed_in: Client, line: str, message: str
) -> None:
    errors = field_errors(signed_in.post("/jobs/new/", command_form(line)))
    assert message in " ".join(errors["command"]), errors
    assert not Job.objects.exists()


def test_a_dangerous_management_command_needs_use_shell(signed_in: Client, settings) -> None:
    settings.JOBS_MANAGEMENT_COMMANDS = ["clearsessions", "flush"]
    assert signed_in.post("/jobs/new/", command_form("flush --no-input")).status_code == 403
    assert not Job.objects.exists()
    shelly = client_of(make_user("shelly", JOB_ADMINS, permissions=(USE_SHELL,)))
    assert shelly.post("/jobs/new/", command_form("flush --no-input")).status_code == 302
    # Editing such a job, even its name, is theirs alone too.
    job = Job.objects.get()
    renamed = command_form("flush --no-input", name="renamed")
    assert signed_in.post(f"/jobs/{job.pk}/edit/", renamed).status_code == 403
    job.refresh_from_db()
    assert job.name == "nightly backup"


# --- shell ----------------------------------------------------------------------------------


def shell_form(line: str = "backup.sh --full", **fields: Any) -> dict[str, Any]:
    return dashboard_form(**{"executor": "shell", "command": line, **fields})


def test_a_shell_job_is_saved_with_its_environment(shell_on, shell_user) -> None:
    data = shell_form(shell_env="TARGET=/var/backups\nAPI_TOKEN=s3cr3t-value\n")
    response = client_of(shell_user).post("/jobs/new/", data)
    assert response.status_code == 302, field_errors(response)
    job = Job.objects.get()
    assert (job.executor, job.command) == ("shell", "backup.sh --full")
    assert job.arguments == {"env": {"TARGET": "/var/backups", "API_TOKEN": "s3cr3t-value"}}
    form = client_of(shell_user).get(f"/jobs/{job.pk}/edit/").context["form"]
    assert set(form["shell_env"].value().split("\n")) == {
        "TARGET=/var/backups",
        "API_TOKEN=s3cr3t-value",
    }


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        pytest.param({"shell_env": "NO_EQUALS"}, "shell_env", "NAME=value", id="no ="),
        pytest.param({"shell_env": "1BAD=x"}, "shell_env", "not a variable name", id="bad name"),
        pytest.param({"shell_env": "JOB_ID=7"}, "shell_env", "set by the scheduler", id="JOB_ID"),
        pytest.param({"shell_env": "A=1\nA=2"}, "shell_env", "given twice", id="twice"),
        pytest.param({"command": "echo 'unclosed"}, "command", "cannot be split", id="quoting"),
        pytest.param({"command": ""}, "command", "This field is required", id="empty"),
    ],
)
def test_bad_input_for_a_shell_job_gets_a_message_at_its_field(
    shell_on, shell_user, changes: dict, field: str, message: str
) -> None:
    errors = field_errors(client_of(shell_user).post("/jobs/new/", shell_form(**changes)))
    assert message in " ".join(errors[field]), errors
    assert not Job.objects.exists()


def test_a_shell_job_while_shell_is_off_gets_a_message_at_the_executor(shell_user) -> None:
    errors = field_errors(client_of(shell_user).post("/jobs/new/", shell_form()))
    assert "switched off" in " ".join(errors["executor"])
    assert not Job.objects.exists()


def test_a_user_without_use_shell_gets_403_for_a_shell_job_and_nothing_is_saved(
    shell_on, signed_in: Client
) -> None:
    assert signed_in.post("/jobs/new/", shell_form()).status_code == 403
    assert not Job.objects.exists()
    job = make_job(executor="shell", command="backup.sh", arguments={"env": {"A": "1"}})
    # Neither its arguments nor anything else of it, nor turning it into another kind.
    for data in (
        shell_form("backup.sh", shell_env="A=2"),
        shell_form("backup.sh", name="renamed"),
        dashboard_form(executor="simulated", command="backup.sh"),
    ):
        assert signed_in.post(f"/jobs/{job.pk}/edit/", data).status_code == 403
    job.refresh_from_db()
    assert (job.executor, job.name, job.arguments) == ("shell", "backup", {"env": {"A": "1"}})
    assert not JobChange.objects.filter(job_id=job.pk, action=ChangeAction.EDIT).exists()


def test_restoring_a_version_that_is_a_shell_job_needs_use_shell(
    shell_on, shell_user, signed_in: Client
) -> None:
    shelly = client_of(shell_user)
    assert shelly.post("/jobs/new/", shell_form("backup.sh")).status_code == 302
    job = Job.objects.get()
    shell_version = JobChange.objects.get(job_id=job.pk, action=ChangeAction.CREATE)
    to_simulated = dashboard_form(executor="simulated", command="backup.sh")
    assert shelly.post(f"/jobs/{job.pk}/edit/", to_simulated).status_code == 302
    url = f"/jobs/{job.pk}/changes/{shell_version.pk}/restore/"
    assert signed_in.post(url).status_code == 403
    job.refresh_from_db()
    assert job.executor == "simulated"
    assert shelly.post(url).status_code == 302
    job.refresh_from_db()
    assert job.executor == "shell"


# --- http -----------------------------------------------------------------------------------


def http_form(url: str = PUBLIC_URL, **fields: Any) -> dict[str, Any]:
    return dashboard_form(**{"executor": "http", "command": url, "http_method": "POST", **fields})


def test_an_http_job_is_saved_with_its_request(signed_in: Client) -> None:
    data = http_form(
        http_headers="Authorization: Bearer abc123secret\nX-Trace: on\n",
        http_body='{"ping": true}',
        http_body_json="on",
        http_expect_status="200, 204",
    )
    response = signed_in.post("/jobs/new/", data)
    assert response.status_code == 302, field_errors(response)
    job = Job.objects.get()
    assert (job.executor, job.command) == ("http", PUBLIC_URL)
    assert job.arguments == {
        "method": "POST",
        "headers": {"Authorization": "Bearer abc123secret", "X-Trace": "on"},
        "body": {"ping": True},
        "expect_status": [200, 204],
    }
    form = signed_in.get(f"/jobs/{job.pk}/edit/").context["form"]
    # One a line (in the order the database keeps: PostgreSQL's jsonb sorts the keys).
    assert set(form["http_headers"].value().split("\n")) == {
        "Authorization: Bearer abc123secret",
        "X-Trace: on",
    }
    assert form["http_body"].value() == '{"ping": true}' and form["http_body_json"].value()
    assert form["http_expect_status"].value() == "200, 204"


def test_a_get_request_with_a_text_body_stores_no_method(signed_in: Client) -> None:
    data = http_form(http_method="GET", http_body="plain words", http_expect_status="200")
    assert signed_in.post("/jobs/new/", data).status_code == 302
    assert Job.objects.get().arguments == {"body": "plain words", "expect_status": 200}


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        pytest.param({"http_headers": "no colon"}, "http_headers", "Name: value", id="no colon"),
        pytest.param(
            {"http_headers": "Bad Name: x"}, "http_headers", "not a header name", id="bad name"
        ),
        pytest.param({"http_headers": "A: 1\na: 2"}, "http_headers", "twice", id="twice"),
        pytest.param({"http_expect_status": "ok"}, "http_expect_status", "100 to 599", id="word"),
        pytest.param({"http_expect_status": "700"}, "http_expect_status", "100 to 599", id="700"),
        pytest.param(
            {"http_body": "{", "http_body_json": "on"}, "http_body", "valid JSON", id="bad JSON"
        ),
        pytest.param({"http_method": "BREW"}, "http_method", "valid choice", id="method"),
        pytest.param({"command": "http://127.0.0.1:8000/"}, "command", "public", id="loopback"),
        pytest.param(
            {"command": "http://169.254.169.254/latest/"}, "command", "public", id="metadata"
        ),
        pytest.param({"command": "ftp://93.184.216.34/"}, "command", "http", id="not http"),
        pytest.param({"command": ""}, "command", "This field is required", id="no URL"),
    ],
)
def test_bad_input_for_an_http_job_gets_a_message_at_its_field(
    signed_in: Client, changes: dict, field: str, message: str
) -> None:
    errors = field_errors(signed_in.post("/jobs/new/", http_form(**changes)))
    assert message in " ".join(errors.get(field, [])), errors
    assert not Job.objects.exists()


def test_an_unknown_executor_gets_a_message_at_the_executor(signed_in: Client) -> None:
    errors = field_errors(signed_in.post("/jobs/new/", dashboard_form(executor="rocket")))
    assert "Choose one of" in " ".join(errors["executor"])
    assert not Job.objects.exists()


# --- run now with arguments -------------------------------------------------------------------


def test_run_now_opens_a_form_prefilled_with_the_jobs_arguments(signed_in: Client) -> None:
    job = make_job(executor="python", command=RECORD, arguments={"key": "own", "value": 1})
    page = signed_in.get(f"/jobs/{job.pk}/").text
    assert '<details class="run-now" id="run-now">' in page
    assert 'name="arg-key" value="own"' in page and 'name="arg-value"' in page
    assert "record(key: str, value: Any = None)" in page
    # A simulated job's Run now is one click, as it always was.
    simulated = make_job(name="simulated")
    page = signed_in.get(f"/jobs/{simulated.pk}/").text
    assert 'id="run-now"' not in page and "Run now</button>" in page


def test_run_now_with_other_arguments_reaches_the_run_and_leaves_the_job_as_it_is(
    signed_in: Client,
) -> None:
    job = make_job(executor="python", command=RECORD, arguments={"key": "own"})
    response = signed_in.post(
        f"/jobs/{job.pk}/run/", {"with_arguments": "1", "arg-key": "other", "arg-value": "[1, 2]"}
    )
    assert response.status_code == 302
    run = JobHistory.objects.get()
    assert run.arguments == {"key": "other", "value": [1, 2]}
    job.refresh_from_db()
    assert job.arguments == {"key": "own"}
    # The run page shows what it ran with.
    page = signed_in.get(f"/runs/{run.pk}/").text
    assert "&quot;key&quot;: &quot;other&quot;" in page
    assert "Python task jobs.tests.sample_tasks.record" in page


def test_run_now_with_one_click_keeps_the_jobs_own_arguments(signed_in: Client) -> None:
    job = make_job(executor="python", command=RECORD, arguments={"key": "own"})
    assert signed_in.post(f"/jobs/{job.pk}/run/").status_code == 302
    assert JobHistory.objects.get().arguments == {"key": "own"}
    simulated = make_job(name="simulated")
    assert signed_in.post(f"/jobs/{simulated.pk}/run/").status_code == 302
    assert JobHistory.objects.get(job=simulated).arguments is None


def test_run_now_with_bad_arguments_says_why_at_the_field_and_runs_nothing(
    signed_in: Client,
) -> None:
    job = make_job(executor="python", command=TYPED, arguments={"count": 1})
    response = signed_in.post(f"/jobs/{job.pk}/run/", {"with_arguments": "1", "arg-count": "x"})
    assert response.status_code == 400
    assert "whole number" in " ".join(response.context["run_form"].errors["arg-count"])
    assert 'id="run-now-form"' in response.text
    assert not JobHistory.objects.exists()


def test_run_now_of_an_http_job_with_other_arguments(signed_in: Client) -> None:
    job = make_job(
        executor="http",
        command=PUBLIC_URL,
        arguments={"method": "POST", "headers": {"Authorization": "Bearer x"}},
    )
    data = {
        "with_arguments": "1",
        "http_method": "PUT",
        "http_headers": "Authorization: Bearer x",
        "http_expect_status": "202",
    }
    assert signed_in.post(f"/jobs/{job.pk}/run/", data).status_code == 302
    assert JobHistory.objects.get().arguments == {
        "method": "PUT",
        "headers": {"Authorization": "Bearer x"},
        "expect_status": 202,
    }
    bad = {**data, "http_expect_status": "999"}
    assert signed_in.post(f"/jobs/{job.pk}/run/", bad).status_code == 400
    assert JobHistory.objects.count() == 1


def test_users_who_may_not_see_secrets_run_with_the_jobs_own_headers() -> None:
    job = make_job(
        executor="http",
        command=PUBLIC_URL,
        arguments={"method": "POST", "headers": {"Authorization": "Bearer own"}},
    )
    runner = make_user("runner", JOB_VIEWERS, permissions=("jobs.run_job",))
    client = client_of(runner)
    page = client.get(f"/jobs/{job.pk}/").text
    assert 'name="http_method"' in page and 'name="http_headers"' not in page
    assert "Bearer own" not in page
    data = {"with_arguments": "1", "http_method": "GET", "http_headers": "Authorization: mine"}
    assert client.post(f"/jobs/{job.pk}/run/", data).status_code == 302
    assert JobHistory.objects.get().arguments == {
        "method": "GET",
        "headers": {"Authorization": "Bearer own"},
    }


def test_changing_a_shell_jobs_arguments_for_one_run_needs_use_shell(
    shell_on, shell_user, signed_in: Client
) -> None:
    job = make_job(executor="shell", command="env", arguments={"env": {"A": "1"}})
    data = {"with_arguments": "1", "shell_env": "A=2"}
    # No form for them to fill, and a post with one is refused.
    assert 'name="shell_env"' not in signed_in.get(f"/jobs/{job.pk}/").text
    assert signed_in.post(f"/jobs/{job.pk}/run/", data).status_code == 403
    assert not JobHistory.objects.exists()
    # Their one click runs it as it is.
    assert signed_in.post(f"/jobs/{job.pk}/run/").status_code == 302
    assert JobHistory.objects.get().arguments == {"env": {"A": "1"}}
    shelly = client_of(shell_user)
    assert 'name="shell_env"' in shelly.get(f"/jobs/{job.pk}/").text
    assert shelly.post(f"/jobs/{job.pk}/run/", data).status_code == 302
    assert JobHistory.objects.latest("created_at").arguments == {"env": {"A": "2"}}


# --- what a job runs, in words; a job that cannot run -------------------------------------


def test_the_list_and_the_job_page_say_what_a_job_runs(signed_in: Client) -> None:
    python_job = make_job(
        name="invoices",
        executor="python",
        command="jobs.tests.sample_tasks.send_invoices",
        arguments={"day": "today"},
    )
    http_job = make_job(name="ping", executor="http", command=PUBLIC_URL)
    simulated = make_job(name="simulated", command="backup --all")
    listing = signed_in.get("/jobs/").text
    words = "Python task jobs.tests.sample_tasks.send_invoices(day=&#x27;today&#x27;)"
    assert words in listing
    assert f"HTTP GET {PUBLIC_URL}" in listing
    row = listing.split(f'id="job-{simulated.pk}"')[1].split("</tr>")[0]
    assert 'data-cell="work"' not in row  # as it always was
    assert words in signed_in.get(f"/jobs/{python_job.pk}/").text
    assert f"HTTP GET {PUBLIC_URL}" in signed_in.get(f"/jobs/{http_job.pk}/").text
    page = signed_in.get(f"/jobs/{simulated.pk}/").text
    assert '<code class="text-break">backup --all</code>' in page


def test_a_python_jobs_words_follow_its_tasks_signature_whatever_the_databases_order() -> None:
    # As PostgreSQL's jsonb gives the object back: shortest keys first.
    job = Job(executor="python", command=TYPED, arguments={"day": "2026-12-01", "count": 4})
    assert job.execution_text == "Python task samples.typed(count=4, day='2026-12-01')"


def test_a_job_that_cannot_run_is_flagged_on_its_page(signed_in: Client, settings) -> None:
    gone = make_job(executor="python", command="billing.tasks.gone")
    page = signed_in.get(f"/jobs/{gone.pk}/").text
    assert 'id="job-problem"' in page and "billing.tasks.gone" in page
    unlisted = make_job(name="unlisted", executor="command", command="clearsessions")
    assert 'id="job-problem"' not in signed_in.get(f"/jobs/{unlisted.pk}/").text
    settings.JOBS_MANAGEMENT_COMMANDS = ["check"]
    assert "not listed" in signed_in.get(f"/jobs/{unlisted.pk}/").text
    shell = make_job(name="shell", executor="shell", command="true")
    assert "switched off" in signed_in.get(f"/jobs/{shell.pk}/").text
    fine = make_job(name="fine", executor="python", command=RECORD, arguments={"key": "k"})
    assert 'id="job-problem"' not in signed_in.get(f"/jobs/{fine.pk}/").text


# --- secret values ------------------------------------------------------------------------------


def test_secret_values_are_masked_on_the_screens_for_users_who_may_not_change_jobs() -> None:
    job = make_job(
        executor="http",
        command=PUBLIC_URL,
        arguments={"headers": {"Authorization": "Bearer abc123secret", "X-Trace": "visible"}},
    )
    run = make_run(
        job,
        arguments=job.arguments,
        log="sent Authorization: Bearer abc123secret\nHTTP 200\n",
    )
    viewer = client_of(make_user("viewer", JOB_VIEWERS))
    admin = client_of(make_user("admin", JOB_ADMINS))
    for url in (f"/jobs/{job.pk}/", f"/runs/{run.pk}/"):
        masked = viewer.get(url).text
        assert "abc123secret" not in masked, url
        assert "&quot;Authorization&quot;: &quot;…&quot;" in masked
        assert "&quot;X-Trace&quot;: &quot;…&quot;" in masked
        assert "&quot;visible&quot;" not in masked
        assert "abc123secret" in admin.get(url).text
    assert "sent Authorization: …\nHTTP 200" in viewer.get(f"/runs/{run.pk}/").text


# --- the run page while the run runs ------------------------------------------------------------


def test_a_running_runs_page_polls_its_live_part_and_htmx_gets_it_alone(
    signed_in: Client,
) -> None:
    run = make_run(status=RunStatus.RUNNING, log="line 1\n", finished_at=None)
    page = signed_in.get(f"/runs/{run.pk}/").text
    assert f'hx-get="/runs/{run.pk}/"' in page and 'hx-swap="outerHTML"' in page
    assert "Elapsed" in page and 'id="cancel-run"' in page
    JobHistory.objects.filter(pk=run.pk).update(log="line 1\nline 2\n")
    fragment = signed_in.get(f"/runs/{run.pk}/", headers={"HX-Request": "true"})
    assert "<html" not in fragment.text
    assert fragment.text.lstrip().startswith('<div id="run-live"')
    assert "line 2" in fragment.text and "hx-trigger" in fragment.text
    assert fragment["Vary"].count("HX-Request") == 1


def test_a_finished_runs_fragment_stops_the_polling(signed_in: Client) -> None:
    run = make_run(status=RunStatus.RUNNING, finished_at=None)
    started = run.started_at
    JobHistory.objects.filter(pk=run.pk).update(
        status=RunStatus.SUCCESS, finished_at=timezone.now(), log="done\n"
    )
    fragment = signed_in.get(f"/runs/{run.pk}/", headers={"HX-Request": "true"}).text
    assert "hx-get" not in fragment and "hx-trigger" not in fragment
    assert 'data-run-status="success"' in fragment and 'id="cancel-run"' not in fragment
    assert "Duration" in fragment and started is not None


def test_the_run_page_shows_the_log_with_the_line_saying_what_was_left_out(
    signed_in: Client,
) -> None:
    output = RunOutput(max_bytes=2048)
    for number in range(500):
        output.write(f"line {number}\n")
    run = make_run(status=RunStatus.SUCCESS, log=output.text())
    page = signed_in.get(f"/runs/{run.pk}/").text
    assert "line 0\n" in page and "line 499\n" in page
    assert "bytes of output left out (JOBS_LOG_MAX_BYTES)" in page


def test_a_pending_run_polls_and_shows_no_log_yet(signed_in: Client) -> None:
    run = make_run(status=RunStatus.PENDING)
    page = signed_in.get(f"/runs/{run.pk}/").text
    assert "No output yet." in page and "hx-get" in page


def test_the_run_page_of_a_simulated_run_shows_no_arguments(signed_in: Client) -> None:
    run = make_run(status=RunStatus.SUCCESS, at=datetime(2026, 3, 1, tzinfo=UTC))
    page = signed_in.get(f"/runs/{run.pk}/").text
    assert 'id="run-arguments"' not in page and 'id="run-work"' not in page


def test_the_run_page_and_its_live_part_cost_a_fixed_number_of_queries(
    signed_in: Client,
) -> None:
    run = make_run(status=RunStatus.RUNNING, finished_at=None, log="x\n" * 1000)
    url = f"/runs/{run.pk}/"
    with CaptureQueriesContext(connection) as page:
        assert signed_in.get(url).status_code == 200
    with CaptureQueriesContext(connection) as live:
        assert signed_in.get(url, headers={"HX-Request": "true"}).status_code == 200
    # The run with its job; the whole page adds its alerts, the runs it started (chains)
    # and the pause switch its banner reads.
    assert (len(page), len(live)) == (EVERY_PAGE + 4, EVERY_PAGE + 1)
