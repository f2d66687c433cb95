"""`importschedules --from crontab FILE`: real files with zones switched mid-file, the
environment, aliases, comments, @reboot, bad lines reported by number, a system
crontab's user column, re-imports in place, and files that cannot be read."""

from __future__ import annotations

import os
import pwd
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from jobs.imports.crontab import CrontabSource
from jobs.models import ChangeAction, Channel, Job, JobChange, JobHistory, RunStatus
from jobs.runtime.scheduler import Scheduler

pytestmark = pytest.mark.django_db

ME = pwd.getpwuid(os.getuid()).pw_name

CRONTAB = r"""# The team's crontab
SHELL=/bin/bash
PATH=/usr/local/bin:/usr/bin:/bin
MAILTO="ops@example.com"

# nightly backup
30 2 * * * /usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1
CRON_TZ=Asia/Tokyo
0 9 * * 1-5 echo "good morning, Tokyo: 100\% up"
@hourly   echo tick
@reboot echo booted
CRON_TZ=Europe/Paris
0 8 * * * echo "bonjour"
61 * * * * echo never
0 * * * * echo a % b
0 * * * * echo tick
"""


@pytest.fixture(autouse=True)
def shell_on(settings: object) -> None:
    settings.JOBS_SHELL_ENABLED = True  # type: ignore[attr-defined]
    settings.TIME_ZONE = "UTC"  # type: ignore[attr-defined]


def importschedules(path: Path, *args: str) -> str:
    out = StringIO()
    call_command("importschedules", "--from", "crontab", str(path), *args, stdout=out)
    return out.getvalue()


def crontab(tmp_path: Path, text: str = CRONTAB, name: str = "crontab") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def by_name() -> dict[str, Job]:
    return {job.name: job for job in Job.objects.all()}


def test_it_imports_a_crontab_with_zones_switched_mid_file(tmp_path: Path) -> None:
    out = importschedules(crontab(tmp_path))

    jobs = by_name()
    assert sorted(Job.objects.values_list("name", flat=True)) == [
        'echo "bonjour"',
        'echo "good morning, Tokyo: 100% up"',
        "echo tick",
        "echo tick",
        "nightly backup",
    ]
    backup = jobs["nightly backup"]
    assert (backup.executor, backup.cron_expression, backup.timezone) == (
        "shell",
        "30 2 * * *",
        "UTC",
    )
    assert backup.command == (
        "/bin/bash -c '/usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1'"
    )
    assert backup.arguments == {
        "env": {
            "SHELL": "/bin/bash",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "MAILTO": "ops@example.com",
        }
    }
    tokyo = jobs['echo "good morning, Tokyo: 100% up"']
    assert (tokyo.cron_expression, tokyo.timezone) == ("0 9 * * 1-5", "Asia/Tokyo")
    hourly = Job.objects.get(import_key="echo tick")
    assert (hourly.cron_expression, hourly.timezone) == ("0 * * * *", "Asia/Tokyo")
    # The same command twice: two jobs, told apart by their keys.
    again = Job.objects.get(import_key="echo tick #2")
    assert (again.cron_expression, again.timezone) == ("0 * * * *", "Europe/Paris")
    assert jobs['echo "bonjour"'].timezone == "Europe/Paris"
    assert {job.is_active for job in jobs.values()} == {False}  # shell: only with --enable
    assert "skipped line 11: @reboot runs at the machine's start" in out
    assert "skipped line 14: '61 * * * *' in Europe/Paris: Bad minute" in out
    assert "skipped line 15: its command has a “%”" in out
    assert "5 created, 0 updated, 0 unchanged, 0 deactivated, 3 skipped" in out
    assert set(JobChange.objects.values_list("channel", flat=True)) == {Channel.IMPORT}


@pytest.mark.django_db(transaction=True)
def test_an_imported_job_runs_as_cron_ran_it(tmp_path: Path) -> None:
    """Its environment, cron's shell and the line's own redirection, through a real run."""
    written = tmp_path / "out"
    line = f'* * * * * echo "$GREETING from $0" > {written}; echo done\n'
    importschedules(crontab(tmp_path, f"GREETING=hello\n{line}"), "--enable")
    job = Job.objects.get()
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())

    Scheduler(workers=1).run_once()

    run = JobHistory.objects.get(job=job)
    assert run.status == RunStatus.SUCCESS, run.log
    assert written.read_text() == "hello from /bin/sh\n"
    assert "done" in run.log


def test_enable_imports_them_enabled_and_a_reimport_updates_in_place(tmp_path: Path) -> None:
    path = crontab(tmp_path)
    importschedules(path)
    ids = set(Job.objects.values_list("pk", flat=True))

    out = importschedules(path, "--enable")
    assert set(Job.objects.values_list("pk", flat=True)) == ids
    assert {job.is_active for job in Job.objects.all()} == {True}
    assert "updated line 7: nightly backup: is_active" in out

    path.write_text(CRONTAB.replace("30 2 * * *", "45 3 * * *"))
    out = importschedules(path, "--enable")

    assert "updated line 7: nightly backup: cron_expression" in out
    assert Job.objects.get(name="nightly backup").cron_expression == "45 3 * * *"
    assert set(Job.objects.values_list("pk", flat=True)) == ids
    edits = JobChange.objects.filter(action=ChangeAction.EDIT, job_name="nightly backup")
    assert edits.count() == 1
    assert "0 updated, 5 unchanged" in importschedules(path, "--enable", "--check")


def test_check_and_dry_run_change_nothing(tmp_path: Path) -> None:
    path = crontab(tmp_path)

    assert "would create line 7: nightly backup" in importschedules(path, "--dry-run")
    with pytest.raises(CommandError) as differs:
        importschedules(path, "--check")

    assert differs.value.returncode == 1
    assert not Job.objects.exists()


def test_strict_fails_the_whole_import_on_a_bad_line(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="line 14: '61 \\* \\* \\* \\*'") as refused:
        importschedules(crontab(tmp_path), "--strict")

    assert refused.value.returncode == 2
    assert not Job.objects.exists()


def test_a_system_crontab_keeps_its_user_column(tmp_path: Path) -> None:
    text = f"17 * * * * {ME} cd / && run-parts --report /etc/cron.hourly\n"
    text += f"@daily {ME} echo daily\n"

    importschedules(crontab(tmp_path, text))

    hourly = Job.objects.get(import_key=f"{ME}:cd / && run-parts --report /etc/cron.hourly")
    assert hourly.name == f"{ME}: cd / && run-parts --report /etc/cron.hourly"
    assert hourly.command == "/bin/sh -c 'cd / && run-parts --report /etc/cron.hourly'"
    assert Job.objects.get(import_key=f"{ME}:echo daily").cron_expression == "0 0 * * *"


def test_a_users_crontab_is_not_taken_for_a_system_one(tmp_path: Path) -> None:
    reading = CrontabSource(crontab(tmp_path, "0 1 * * * backup.sh now\n")).read()

    assert [entry.key for entry in reading.entries] == ["backup.sh now"]


def test_a_line_gone_from_the_file_deactivates_its_job(tmp_path: Path) -> None:
    path = crontab(tmp_path)
    importschedules(path, "--enable")
    path.write_text(CRONTAB.replace('0 8 * * * echo "bonjour"\n', ""))

    out = importschedules(path, "--enable")

    assert 'deactivated echo "bonjour": gone from the source' in out
    assert Job.objects.get(name='echo "bonjour"').is_active is False


def latin1(folder: Path) -> Path:
    path = folder / "latin1"
    path.write_bytes(b"0 * * * * echo caf\xe9\n")
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp / "missing", "does not exist"),
        (lambda tmp: tmp, "is a folder"),
        (lambda tmp: latin1(tmp), "not UTF-8"),
    ],
)
def test_a_file_that_cannot_be_read_stops_with_a_message(
    tmp_path: Path, make: object, message: str
) -> None:
    with pytest.raises(CommandError, match=message) as error:
        importschedules(make(tmp_path))  # type: ignore[operator]

    assert error.value.returncode == 2
    assert "nothing was changed" in str(error.value)
    assert not Job.objects.exists()


def test_disable_source_is_refused_for_a_file(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not edit a crontab file"):
        importschedules(crontab(tmp_path), "--disable-source")
    assert not Job.objects.exists()


def test_the_admin_says_where_an_imported_job_came_from(
    tmp_path: Path, admin_client: Client
) -> None:
    path = crontab(tmp_path, "0 1 * * * backup.sh now\n")
    importschedules(path)
    job = Job.objects.get()

    page = admin_client.get(reverse("admin:jobs_job_change", args=[job.pk]))

    assert page.status_code == 200
    text = page.content.decode()
    assert "Imported by manage.py importschedules" in text
    assert f"crontab:{path} (key backup.sh now)" in text
