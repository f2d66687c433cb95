"""The jobs.use_shell rule at every entry point, against every way of spelling a command.

A management command job needs jobs.use_shell unless its command is one known to be
harmless (jobs.executors.command.SAFE_COMMANDS), and the rule reads the command the way
the executor runs it (shlex): quoting the name, escaping a letter or padding the line
does not make ``dumpdata`` another command. Each entry point (the dashboard's form, the
admin's, the API's create and update, restoring a version, chaining, enabling, syncjobs)
is tried with each trick and each dangerous command by a job admin who has every
permission but jobs.use_shell: refused with a message, nothing changed (jobs, chains,
runs and the audit trail compared before and after). Then running with other arguments
(run now, run again, retry) of a shell job, Django's global options for everyone, and the
positive side: a user with jobs.use_shell may, and a harmless command passes for anyone
who may change jobs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core.signals import request_started
from django.urls import reverse

from jobs.access.permissions import USE_SHELL
from jobs.models import Job, JobChange, JobHistory, RunStatus
from jobs.tests import personas
from jobs.tests.api_helpers import token_client
from jobs.tests.declaring import declaring, syncjobs
from jobs.tests.factories import make_job
from jobs.tests.forms import admin_form, dashboard_form

pytestmark = pytest.mark.django_db

# The commands known to be harmless (jobs.executors.command.SAFE_COMMANDS).
HARMLESS_NAMES = ["check", "checkhealth", "clearsessions", "prunehistory", "showmigrations"]

# Each dangerous command with options its own parser accepts, so that the only reason to
# refuse the line is who asks. The last is one no list of dangerous commands named: the
# rule does not need to know a command to refuse it.
DANGEROUS = {
    "dumpdata": "auth.user",
    "shell": "--command 'print(1)'",
    "dbshell": "",
    "createsuperuser": "--noinput --username intruder",
    "changepassword": "admin",
    "loaddata": "users.json",
    "flush": "--no-input",
    "drf_create_token": "admin",
    "diffsettings": "--all",
    "spectacular": "--file /tmp/schema.yaml",
    "generateschema": "--file /tmp/schema.yaml",
    "axes_reset": "",
    "axes_reset_username": "admin",
    "inspectdb": "",
}


def _spelled(trick: str, name: str, options: str) -> str:
    """The line running `name` with `options`, its name spelled by `trick`."""
    word = {
        "plain": name,
        "double quotes": f'"{name}"',
        "single quotes": f"'{name}'",
        "a backslash": f"{name[0]}\\{name[1:]}",
        "a quoted tail": f'{name[:-1]}"{name[-1]}"',
    }.get(trick, name)
    line = f"{word} {options}".strip()
    if trick == "spaces around":
        return f"  {line}  "
    if trick == "tabs":
        return f"\t{line}\t".replace(" ", "\t")
    return line


TRICKS = [
    "plain",
    "double quotes",
    "single quotes",
    "a backslash",
    "a quoted tail",
    "spaces around",
    "tabs",
]
LINES = [
    pytest.param(_spelled(trick, name, options), id=f"{name}-{trick}")
    for name, options in DANGEROUS.items()
    for trick in TRICKS
]


@pytest.fixture(autouse=True)
def listed(settings):  # type: ignore[no-untyped-def]
    """Every command here listed in JOBS_MANAGEMENT_COMMANDS: the case the rule exists
    for (a site that lets some dangerous command run)."""
    settings.JOBS_MANAGEMENT_COMMANDS = [*DANGEROUS, *HARMLESS_NAMES]
    settings.JOBS_SHELL_ENABLED = True
    return settings


@pytest.fixture
def job_admin() -> Any:
    """Every permission of jobs but jobs.use_shell, and the admin's staff flag."""
    return personas.job_admin("jadmin", staff=True)


@pytest.fixture
def sheller() -> Any:
    return personas.shell_admin("sheller", staff=True)


@pytest.fixture
def operator() -> Any:
    return personas.operator(staff=True)


signed_in = personas.signed_in


def everything() -> tuple:
    """What a refusal must leave as it was: every job's fields, the chains, the runs and
    the audit trail."""
    jobs = list(Job.objects.order_by("pk").values())
    links = [
        sorted(Job.on_success.through.objects.values_list("from_job_id", "to_job_id")),
        sorted(Job.on_failure.through.objects.values_list("from_job_id", "to_job_id")),
    ]
    runs = list(JobHistory.objects.order_by("pk").values_list("pk", "status", "arguments"))
    return jobs, links, runs, JobChange.objects.count()


def command_job(line: str = "check", **fields: Any) -> Job:
    """A management command job as a user with jobs.use_shell (or the site's code) saved
    it: not through an entry point, so not judged by the rule."""
    values = {"name": "maintenance", **fields}
    return make_job(executor="command", command=line, arguments={}, **values)


def api_values(**fields: Any) -> dict[str, Any]:
    return {
        "name": "maintenance",
        "command": "check",
        "executor": "command",
        "arguments": {},
        "schedule_type": "interval",
        "interval": 10,
        "interval_unit": "minute",
        **fields,
    }


def messages_of(response: Any) -> str:
    """The messages the request queued (the page it redirects to would show them)."""
    return " ".join(str(message) for message in get_messages(response.wsgi_request))


# --- each entry point: act(user, line) returns the words of its refusal ------------------


def dashboard_create(user: Any, line: str) -> str:
    response = signed_in(user).post(
        reverse("jobs:job_create"), dashboard_form(executor="command", command=line)
    )
    assert response.status_code == 403, response.status_code
    return response.content.decode()


def dashboard_edit(user: Any, line: str) -> str:
    job = make_job(name="tidy")  # simulated
    data = dashboard_form(name="tidy", executor="command", command=line)
    response = signed_in(user).post(reverse("jobs:job_edit", args=[job.pk]), data)
    assert response.status_code == 403, response.status_code
    return response.content.decode()


def dashboard_edit_without_executor(user: Any, line: str) -> str:
    """The old check read the raw POST's executor: without one it was skipped."""
    job = command_job()
    data = dashboard_form(name="maintenance", command=line)
    data.pop("executor", None)
    response = signed_in(user).post(reverse("jobs:job_edit", args=[job.pk]), data)
    assert response.status_code == 403, response.status_code
    return response.content.decode()


def executor_spelled(spelling: str) -> Callable[[Any, str], str]:
    def act(user: Any, line: str) -> str:
        """The old check compared the raw POST's executor to "command" exactly."""
        data = dashboard_form(executor=spelling, command=line)
        response = signed_in(user).post(reverse("jobs:job_create"), data)
        assert response.status_code == 403, response.status_code
        return response.content.decode()

    return act


def admin_add(user: Any, line: str) -> str:
    data = admin_form(executor="command", command=line)
    response = signed_in(user).post(reverse("admin:jobs_job_add"), data)
    assert response.status_code == 200, response.status_code
    return " ".join(response.context["adminform"].form.errors["executor"])


def admin_change(user: Any, line: str) -> str:
    job = command_job()
    data = admin_form(name="maintenance", executor="command", command=line)
    response = signed_in(user).post(reverse("admin:jobs_job_change", args=[job.pk]), data)
    assert response.status_code == 200, response.status_code
    return " ".join(response.context["adminform"].form.errors["executor"])


def api_create(user: Any, line: str) -> str:
    response = token_client(user).post("/api/v1/jobs/", api_values(command=line), format="json")
    assert response.status_code == 403, response.json()
    return response.json()["detail"]


def api_update(user: Any, line: str) -> str:
    job = command_job()
    response = token_client(user).patch(f"/api/v1/jobs/{job.pk}/", {"command": line}, format="json")
    assert response.status_code == 403, response.json()
    return response.json()["detail"]


def restore(user: Any, line: str) -> str:
    """A version of the audit trail in which the job ran the dangerous line."""
    job = command_job(line)
    version = JobChange.objects.filter(job_id=job.pk).latest("created_at")
    job.command = "check"
    job.save()
    url = reverse("jobs:job_restore", args=[job.pk, version.pk])
    response = signed_in(user).post(url)
    assert response.status_code == 403, response.status_code
    return response.content.decode()


def chain(user: Any, line: str) -> str:
    """A simulated job made to start the dangerous one when it fails."""
    target = command_job(line)
    source = make_job(name="tidy")
    url = f"/api/v1/jobs/{source.pk}/"
    response = token_client(user).patch(url, {"on_failure": [str(target.pk)]}, format="json")
    assert response.status_code == 403, response.json()
    return response.json()["detail"]


def chain_in_the_form(user: Any, line: str) -> str:
    target = command_job(line)
    source = make_job(name="tidy")
    data = dashboard_form(name="tidy", executor="simulated", on_failure=[str(target.pk)])
    response = signed_in(user).post(reverse("jobs:job_edit", args=[source.pk]), data)
    assert response.status_code == 403, response.status_code
    return response.content.decode()


def enable_by_toggle(user: Any, line: str) -> str:
    job = command_job(line, is_active=False)
    response = signed_in(user).post(reverse("jobs:job_toggle", args=[job.pk]), {"active": "1"})
    return messages_of(response)


def enable_by_api(user: Any, line: str) -> str:
    job = command_job(line, is_active=False)
    response = token_client(user).post(f"/api/v1/jobs/{job.pk}/enable/")
    assert response.status_code == 403, response.json()
    return response.json()["detail"]


def enable_in_bulk(user: Any, line: str) -> str:
    job = command_job(line, is_active=False)
    data = {"bulk_action": "enable", "job": [str(job.pk)]}
    return messages_of(signed_in(user).post(reverse("jobs:job_bulk"), data))


def enable_in_the_admin(user: Any, line: str) -> str:
    job = command_job(line, is_active=False)
    data = {"action": "enable", "_selected_action": [str(job.pk)]}
    url = reverse("admin:jobs_job_changelist")
    return messages_of(signed_in(user).post(url, data))


ENTRY_POINTS = [
    pytest.param(dashboard_create, id="dashboard-new"),
    pytest.param(dashboard_edit, id="dashboard-edit"),
    pytest.param(dashboard_edit_without_executor, id="dashboard-edit-no-executor"),
    pytest.param(admin_add, id="admin-add"),
    pytest.param(admin_change, id="admin-change"),
    pytest.param(api_create, id="api-create"),
    pytest.param(api_update, id="api-update"),
    pytest.param(restore, id="revert"),
    pytest.param(chain, id="chain-api"),
    pytest.param(chain_in_the_form, id="chain-dashboard"),
    pytest.param(enable_by_toggle, id="enable-dashboard"),
    pytest.param(enable_by_api, id="enable-api"),
    pytest.param(enable_in_bulk, id="enable-bulk"),
    pytest.param(enable_in_the_admin, id="enable-admin"),
]


def test_the_tricks_are_the_dangerous_command_to_the_executor():
    """The premise: each spelling runs the dangerous command (what the table refuses)."""
    from jobs.executors.command import command_argv

    for name, options in DANGEROUS.items():
        for trick in TRICKS:
            assert command_argv(_spelled(trick, name, options))[0] == name


def test_the_harmless_commands_are_the_executors_allow_list():
    from jobs.executors.command import SAFE_COMMANDS

    assert sorted(SAFE_COMMANDS) == HARMLESS_NAMES


class unchanged_by_the_requests:
    """Everything as it was when the first request began: the entry point's requests are
    watched, not the set-up act() does before them (its jobs, saved by the site's code)."""

    def __enter__(self) -> unchanged_by_the_requests:
        self.seen: list[tuple] = []
        request_started.connect(self._started)
        return self

    def _started(self, **_: Any) -> None:
        self.seen.append(everything())

    def __exit__(self, kind: object, *_: object) -> None:
        request_started.disconnect(self._started)
        if kind is None:
            assert self.seen, "no request was made"
            assert everything() == self.seen[0]


@pytest.mark.parametrize("act", ENTRY_POINTS)
@pytest.mark.parametrize("name", DANGEROUS)
def test_a_dangerous_command_is_refused_at_every_entry_point_and_nothing_changes(
    act: Callable[[Any, str], str], name: str, job_admin: Any
) -> None:
    # The tricks in one test (not one test each): the same requests, without setting up
    # the database and the user seven times.
    for trick in TRICKS:
        line = _spelled(trick, name, DANGEROUS[name])
        with unchanged_by_the_requests():
            words = act(job_admin, line)
        assert USE_SHELL in words, (trick, words)


# The dashboard's old check compared the raw POST's executor to "command": each spelling
# the form cleans to "command", with each dangerous command (and one trick on its name).
EXECUTOR_SPELLINGS = ["command ", " command", "command\t", "\tcommand \n"]


@pytest.mark.parametrize("spelling", EXECUTOR_SPELLINGS)
@pytest.mark.parametrize(
    "line",
    [
        pytest.param(_spelled(trick, name, options), id=f"{name}-{trick}")
        for name, options in DANGEROUS.items()
        for trick in ("plain", "double quotes")
    ],
)
def test_an_executor_spelled_with_white_space_is_judged_as_cleaned(
    spelling: str, line: str, job_admin: Any
) -> None:
    with unchanged_by_the_requests():
        response = signed_in(job_admin).post(
            reverse("jobs:job_create"), dashboard_form(executor=spelling, command=line)
        )
    assert response.status_code == 403
    assert USE_SHELL in response.content.decode()


@pytest.mark.parametrize("line", LINES)
def test_syncjobs_makes_no_command_job_of_a_declaration(line: str) -> None:
    """Code declares Python tasks only: a declaration naming a command is refused whole."""
    names: set[str] = set()
    declare = declaring(names)
    before = everything()
    try:
        declare(name="tests.sneaky", every="1h", executor="command", command=line)
        synced = syncjobs()
    finally:
        from jobs.pytasks import registry

        for name in names:
            registry.unregister(name)
    assert synced.status != 0
    assert "executor" in synced.output and "command" in synced.output
    assert everything() == before


# --- running a shell job with arguments its saver did not give it ------------------------


def shell_job_with_a_privileged_run(status: str = RunStatus.FAILED) -> JobHistory:
    """A shell job and a run of it with a one-off env that a user with jobs.use_shell
    gave (run now with arguments), since finished."""
    job = make_job(executor="shell", command="env", arguments={"env": {"MODE": "own"}})
    return JobHistory.objects.create(
        job=job,
        scheduled_for=job.created_at,
        not_before=job.created_at,
        arguments={"env": {"MODE": "one-off-by-sheller"}},
        status=status,
    )


def run_again(user: Any, run: JobHistory) -> str:
    url = reverse("jobs:run_again", args=[run.pk])
    return messages_of(signed_in(user).post(url, {"how": "again"}))


def retry(user: Any, run: JobHistory) -> str:
    url = reverse("jobs:run_again", args=[run.pk])
    return messages_of(signed_in(user).post(url, {"how": "retry"}))


def retry_in_the_admin(user: Any, run: JobHistory) -> str:
    data = {"action": "retry", "_selected_action": [str(run.pk)]}
    return messages_of(signed_in(user).post(reverse("admin:jobs_jobhistory_changelist"), data))


def run_now_with_them(user: Any, run: JobHistory) -> str:
    url = f"/api/v1/jobs/{run.job_id}/run/"
    response = token_client(user).post(url, {"arguments": run.arguments}, format="json")
    assert response.status_code == 403
    return response.json()["detail"]


RUNS = [
    pytest.param(run_again, id="run-again"),
    pytest.param(retry, id="retry"),
    pytest.param(retry_in_the_admin, id="retry-admin"),
    pytest.param(run_now_with_them, id="run-now-api"),
]


@pytest.mark.parametrize("act", RUNS)
@pytest.mark.parametrize("persona", ["operator", "job_admin"])
def test_a_shell_run_with_another_users_arguments_is_not_run_again_without_use_shell(
    act: Callable[[Any, JobHistory], str], persona: str, request: pytest.FixtureRequest
) -> None:
    user = request.getfixturevalue(persona)
    run = shell_job_with_a_privileged_run()
    with unchanged_by_the_requests():
        words = act(user, run)
    assert "use_shell" in words, words


@pytest.mark.parametrize("act", RUNS)
def test_a_user_with_use_shell_runs_it_again_with_those_arguments(
    act: Callable[[Any, JobHistory], str], sheller: Any
) -> None:
    run = shell_job_with_a_privileged_run()
    if act is run_now_with_them:
        url = f"/api/v1/jobs/{run.job_id}/run/"
        response = token_client(sheller).post(url, {"arguments": run.arguments}, format="json")
        assert response.status_code == 201
    else:
        act(sheller, run)
    new = JobHistory.objects.exclude(pk=run.pk).get()
    assert new.arguments == {"env": {"MODE": "one-off-by-sheller"}}


def test_a_retry_of_a_run_with_the_jobs_own_arguments_is_anyones_who_may_run(operator):
    run = shell_job_with_a_privileged_run()
    JobHistory.objects.filter(pk=run.pk).update(arguments={"env": {"MODE": "own"}})
    retry(operator, run)
    assert JobHistory.objects.filter(attempt=2, arguments={"env": {"MODE": "own"}}).exists()


# --- Django's global options: for no one ------------------------------------------------

GLOBAL_OPTIONS = [
    "check --settings=evil",
    "check --settings evil",
    "check --pythonpath=/tmp/pp",
    "check --pythonpath /tmp/pp --settings evil",
    "check --traceback",
    'check "--settings=evil"',
    "check --sett=evil",
    "check --pythonp /tmp/pp",
    "check --trace",
    "clearsessions\t--settings\tevil",
]


@pytest.mark.parametrize("line", GLOBAL_OPTIONS)
def test_djangos_global_options_are_refused_to_everyone(line: str, sheller: Any) -> None:
    job = command_job()
    with unchanged_by_the_requests():
        response = token_client(sheller).post(
            "/api/v1/jobs/", api_values(command=line), format="json"
        )
        assert response.status_code == 400
        assert "is not allowed in a job" in response.json()["command"][0]
        page = signed_in(sheller).post(
            reverse("jobs:job_create"), dashboard_form(executor="command", command=line)
        )
        assert page.status_code == 200
        assert "is not allowed in a job" in " ".join(page.context["form"].errors["command"])
        url = f"/api/v1/jobs/{job.pk}/"
        patched = token_client(sheller).patch(url, {"command": line}, format="json")
        assert patched.status_code == 400


def test_a_stored_job_with_a_global_option_does_not_run(settings):
    """Saved before the rule (or behind its back): the executor refuses it too."""
    from jobs.executors.command import CommandRefused, check_command_line

    with pytest.raises(CommandRefused, match="--settings=evil is not allowed"):
        check_command_line("check --settings=evil")


# --- the positive side --------------------------------------------------------------------


@pytest.mark.parametrize("line", LINES)
def test_a_user_with_use_shell_may_save_any_listed_command(line: str, sheller: Any) -> None:
    response = token_client(sheller).post("/api/v1/jobs/", api_values(command=line), format="json")
    assert response.status_code == 201, response.json()
    assert Job.objects.get().command == line.strip()  # as the API's fields strip it


HARMLESS = [
    "check --deploy",
    "clearsessions",
    "prunehistory --dry-run",
    "showmigrations",
    "checkhealth --no-alerts",
]


@pytest.mark.parametrize("line", HARMLESS)
def test_a_harmless_command_passes_for_an_operator_everywhere(line: str, operator: Any) -> None:
    job = command_job()
    client = signed_in(operator)
    edit = dashboard_form(name="maintenance", executor="command", command=line)
    assert client.post(reverse("jobs:job_edit", args=[job.pk]), edit).status_code == 302
    assert Job.objects.get(pk=job.pk).command == line
    data = admin_form(name="maintenance", executor="command", command=line)
    assert client.post(reverse("admin:jobs_job_change", args=[job.pk]), data).status_code == 302
    response = token_client(operator).patch(
        f"/api/v1/jobs/{job.pk}/", {"command": f"  {line}"}, format="json"
    )
    assert response.status_code == 200, response.json()
    Job.objects.filter(pk=job.pk).update(is_active=False)
    assert token_client(operator).post(f"/api/v1/jobs/{job.pk}/enable/").status_code == 200
    target = command_job(line, name="target")
    source = make_job(name="tidy")
    patched = token_client(operator).patch(
        f"/api/v1/jobs/{source.pk}/", {"on_failure": [str(target.pk)]}, format="json"
    )
    assert patched.status_code == 200, patched.json()


def test_a_job_admin_creates_a_harmless_command_job(job_admin):
    response = token_client(job_admin).post(
        "/api/v1/jobs/", api_values(command="'clearsessions'"), format="json"
    )
    assert response.status_code == 201, response.json()


def test_an_operator_may_disable_a_shell_job_but_not_enable_it(operator):
    job = make_job(executor="shell", command="env", arguments={})
    assert token_client(operator).post(f"/api/v1/jobs/{job.pk}/disable/").status_code == 200
    assert not Job.objects.get(pk=job.pk).is_active
    assert token_client(operator).post(f"/api/v1/jobs/{job.pk}/enable/").status_code == 403
    assert not Job.objects.get(pk=job.pk).is_active


def test_a_user_with_use_shell_may_enable_restore_and_chain(sheller):
    target = command_job('"dumpdata" auth.user', is_active=False)
    assert token_client(sheller).post(f"/api/v1/jobs/{target.pk}/enable/").status_code == 200
    source = make_job(name="tidy")
    response = token_client(sheller).patch(
        f"/api/v1/jobs/{source.pk}/", {"on_success": [str(target.pk)]}, format="json"
    )
    assert response.status_code == 200, response.json()
    version = JobChange.objects.filter(job_id=target.pk).latest("created_at")
    Job.objects.filter(pk=target.pk).update(command="check")
    url = reverse("jobs:job_restore", args=[target.pk, version.pk])
    assert signed_in(sheller).post(url).status_code == 302
    assert Job.objects.get(pk=target.pk).command == '"dumpdata" auth.user'
