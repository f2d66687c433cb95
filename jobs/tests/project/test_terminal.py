"""A new user's terminal: the settings file .env, scripts/manage in a fresh shell, and what
scripts/start and runscheduler print (quiet polls, a summary of runs, the stop message).

The tests that start scripts, servers or schedulers are real child processes, read
boundedly; those marked `processes` share the test database with them."""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from jobs.models import Job, JobHistory, RunStatus, find_token
from jobs.runs import RunResult, RunTicket
from jobs.runtime.run_summary import RunSummary, Tally, describe
from jobs.tests.processes import (
    ManagedProcess,
    child_env,
    database_url,
    scheduler,
    wait_until,
    with_private_files,
)
from scheduler_site import dotenv

ROOT = Path(__file__).resolve().parents[3]
LONG_KEY = "k" * 60


# --- .env: the format, and the environment first ------------------------------------------


def test_env_file_lines_comments_quotes_and_export():
    text = (
        "# made by scripts/start\n\n"
        "SECRET_KEY=abc#not-a-comment\n"
        "export DATABASE_URL = 'postgres://u:p@h/db'\n"
        'EMPTY=\nQUOTED=" spaced "\n'
    )
    assert dotenv.parse(text) == {
        "SECRET_KEY": "abc#not-a-comment",
        "DATABASE_URL": "postgres://u:p@h/db",
        "EMPTY": "",
        "QUOTED": " spaced ",
    }


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("just words\n", "line 1: expected NAME=value"),
        ("A=1\n1B=2\n", "line 2: expected NAME=value"),
        ("A='open\n", "line 1: the quote is not closed"),
        ("A=1\nA=2\n", "line 2: A is set twice"),
        ("A=x\x00y\n", "A has a NUL byte"),
    ],
)
def test_a_bad_env_file_line_is_named(text, error):
    with pytest.raises(ImproperlyConfigured, match=re.escape(error)):
        dotenv.parse(text, "/srv/.env")


def test_the_environment_wins_over_the_file_and_only_missing_names_are_set(tmp_path, monkeypatch):
    path = tmp_path / ".env"
    path.write_text("SECRET_KEY=from-the-file\nJOBS_TEST_ONLY_OPTION=7\n")
    monkeypatch.delenv("ENV_FILE", raising=False)
    monkeypatch.setenv("SECRET_KEY", "from-the-environment")
    monkeypatch.delenv("JOBS_TEST_ONLY_OPTION", raising=False)
    assert dotenv.load(path) == {"JOBS_TEST_ONLY_OPTION": "7"}
    assert os.environ["SECRET_KEY"] == "from-the-environment"
    assert os.environ["JOBS_TEST_ONLY_OPTION"] == "7"


def test_env_file_empty_reads_nothing_and_a_named_missing_one_is_an_error(tmp_path, monkeypatch):
    path = tmp_path / ".env"
    path.write_text("JOBS_TEST_ONLY_OPTION=7\n")
    monkeypatch.delenv("JOBS_TEST_ONLY_OPTION", raising=False)
    monkeypatch.setenv("ENV_FILE", "")
    assert dotenv.load(path) == {}
    assert "JOBS_TEST_ONLY_OPTION" not in os.environ
    monkeypatch.delenv("ENV_FILE")
    assert dotenv.load(tmp_path / "absent") == {}  # the default file may be missing
    monkeypatch.setenv("ENV_FILE", str(tmp_path / "absent"))
    with pytest.raises(ImproperlyConfigured, match="does not exist"):
        dotenv.load(path)


def test_an_env_file_larger_than_the_cap_is_refused(tmp_path, monkeypatch):
    path = tmp_path / ".env"
    path.write_text("# " + "x" * dotenv.MAX_BYTES + "\n")
    monkeypatch.delenv("ENV_FILE", raising=False)
    with pytest.raises(ImproperlyConfigured, match="larger than 64 KiB"):
        dotenv.load(path)


def test_dot_env_is_kept_out_of_git():
    done = subprocess.run(
        ["git", "check-ignore", "-q", ".env"], cwd=ROOT, capture_output=True, timeout=30
    )
    assert done.returncode == 0, ".env is not git-ignored"


# --- scripts/start's .env ---------------------------------------------------------------------


def test_the_env_file_is_owner_only_with_a_key_made_once(tmp_path):
    done = with_private_files(tmp_path, "ensure_env_file")
    assert done.returncode == 0, done.stderr
    path = tmp_path / ".env"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    values = dotenv.parse(path.read_text())
    assert len(values["SECRET_KEY"]) >= 50
    path.chmod(0o644)
    assert with_private_files(tmp_path, "ensure_env_file").returncode == 0
    assert dotenv.parse(path.read_text()) == values  # the same key the second time
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_env_file_takes_an_older_checkouts_key_and_keeps_the_users_lines(tmp_path):
    (tmp_path / ".secret_key").write_text(LONG_KEY + "\n")
    (tmp_path / "mine.env").write_text("DATABASE_URL=sqlite:///x.sqlite3")  # no last newline
    done = with_private_files(tmp_path, "ensure_env_file", ENV_FILE="mine.env")
    assert done.returncode == 0, done.stderr
    assert dotenv.parse((tmp_path / "mine.env").read_text()) == {
        "DATABASE_URL": "sqlite:///x.sqlite3",
        "SECRET_KEY": LONG_KEY,
    }
    assert not (tmp_path / ".env").exists()


# --- scripts/manage in a new terminal ----------------------------------------------------------


def fresh_terminal(**extra: str) -> dict[str, str]:
    """A new shell's environment: no virtualenv active, no settings module, no key."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
    env.update({"VENV": sys.prefix, **extra})  # this suite's virtualenv stands for .venv
    return env


@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
def test_the_readmes_token_command_works_in_a_fresh_terminal(tmp_path):
    admin = get_user_model().objects.create_superuser("admin", "", "pw-not-used-here")
    env_file = tmp_path / ".env"
    # The key and the database come from the file alone (DEBUG off: the key must be long).
    env_file.write_text(f"SECRET_KEY={LONG_KEY}\nDATABASE_URL={database_url()}\n")
    done = subprocess.run(
        [str(ROOT / "scripts/manage"), "apitoken", "admin"],
        cwd=tmp_path, env=fresh_terminal(ENV_FILE=str(env_file)),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert find_token(done.stdout.strip()).user == admin


def test_scripts_manage_without_a_virtualenv_says_to_run_scripts_start(tmp_path):
    done = subprocess.run(
        [str(ROOT / "scripts/manage"), "check"],
        env=fresh_terminal(VENV=str(tmp_path / "none")),
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    assert "run scripts/start once first" in done.stderr


# --- the development server's log: no htmx polls ---------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str, **headers: str) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
def test_the_development_server_log_leaves_out_successful_htmx_polls():
    port = free_port()
    server = ManagedProcess("runserver", "--noreload", f"127.0.0.1:{port}")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: "Quit the server" in server.log(), 60, interval=0.1)
        assert get(f"{base}/healthz?poll=1", **{"HX-Request": "true"}) == 200
        assert get(f"{base}/no-such-page?poll=2", **{"HX-Request": "true"}) == 404
        assert get(f"{base}/healthz?plain=1") == 200
        wait_until(lambda: "/healthz?plain=1" in server.log(), 20)
        log = server.log()
    finally:
        server.cleanup()
    assert "poll=1" not in log  # the refresh
    assert "/no-such-page?poll=2" in log  # an error is always shown


# --- runscheduler: a summary instead of a line per run, and the stop message -----------------


def result(succeeded: bool) -> RunResult:
    now = timezone.now()
    ticket = RunTicket("a" * 32, "b" * 32, "job", "true", now, 1, 0, 0)
    return RunResult(ticket, succeeded, "", now, now)


def test_the_run_summary_counts_and_starts_again(caplog):
    summary = RunSummary(every=60)
    summary.count(None, [result(True), result(True), result(False)])  # type: ignore[arg-type]
    tally, _ = summary.take()
    assert tally == Tally(succeeded=2, failed=1)
    assert describe(tally, 60) == "runs in the last 60 s: 2 succeeded, 1 failed"
    with caplog.at_level(logging.INFO, logger="jobs.runtime.run_summary"):
        summary.stop()  # nothing finished since: no line
    assert summary.take()[0] == Tally(0, 0) and not caplog.records


@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
def test_sigint_with_runs_in_flight_says_how_many_and_a_summary_replaces_the_run_lines(tmp_path):
    # Each run goes on until the test creates this file, after it has seen the message:
    # still going then however slow the machine, with no run length to guess.
    release = tmp_path / "release"
    for name in ("slow one", "slow two"):
        Job(
            name=name,
            command="jobs.tests.sample_tasks.wait_for_file",
            executor="python",
            arguments={"path": str(release)},
            schedule_type="once",
            scheduled_at=timezone.now() + timedelta(seconds=1),
        ).save()
    proc = scheduler(
        "--summary-every", "0.5",
        RUN_LOG_LEVEL="WARNING", JOBS_SHUTDOWN_GRACE_SECONDS=120,
    )  # fmt: skip
    try:
        wait_until(lambda: JobHistory.objects.filter(status=RunStatus.RUNNING).count() == 2, 60)
        proc.signal(signal.SIGINT)
        wait_until(lambda: "stopping:" in proc.log(), 60)
        # Said while the runs are still going, not after them.
        assert JobHistory.objects.filter(status=RunStatus.RUNNING).count() == 2
        release.touch()
        assert proc.wait(timeout=120) == 0, proc.log()
        log = proc.log()
    finally:
        release.touch()
        proc.cleanup()
    assert "stopping: waiting for 2 runs (up to 120 s)" in log
    assert JobHistory.objects.filter(status=RunStatus.SUCCESS).count() == 2
    assert all("released" in run.log for run in JobHistory.objects.all())
    # Every run counted once, in however many summary lines the 0.5 s periods make.
    counts = re.findall(r"runs in the last \d+ s: (\d+) succeeded, (\d+) failed", log)
    assert [sum(int(c[i]) for c in counts) for i in (0, 1)] == [2, 0], log
    assert "run started" not in log and "run finished" not in log


# --- scripts/start: progress, the password last, Ctrl-C -----------------------------------------


def database_url_is_sqlite() -> bool:
    return not os.environ.get("DATABASE_URL", "").startswith("postgres")


def borrowed_venv(tmp_path: Path) -> Path:
    """A virtualenv without packages of its own that sees this suite's (a .pth file), with
    its requirements marked installed: scripts/start installs nothing into it."""
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60
    )
    (site_packages,) = venv.glob("lib/python*/site-packages")
    (site_packages / "suite.pth").write_text(
        "\n".join(p for p in sys.path if p.endswith("site-packages")) + "\n"
    )
    (venv / ".installed-requirements.txt").touch()
    return venv


@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
@pytest.mark.once
@pytest.mark.skipif(
    not database_url_is_sqlite(), reason="the script does the same on PostgreSQL: run once"
)
def test_scripts_start_says_what_it_does_prints_the_password_last_and_stops_on_ctrl_c(tmp_path):
    port = free_port()
    env = child_env(
        VENV=borrowed_venv(tmp_path), ADDR=f"127.0.0.1:{port}", ENV_FILE=tmp_path / ".env"
    )
    env.pop("VIRTUAL_ENV", None)
    output = tmp_path / "start.log"
    with output.open("wb") as sink:
        start = subprocess.Popen(
            [str(ROOT / "scripts/start")], cwd=tmp_path, env=env, stdout=sink,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        wait_until(lambda: "changepassword admin" in output.read_text(), 120, interval=0.1)
        lines = output.read_text().splitlines()
        # Ctrl-C: the terminal sends SIGINT to the whole foreground process group.
        os.killpg(start.pid, signal.SIGINT)
        assert start.wait(timeout=60) == 0, output.read_text()
    finally:
        if start.poll() is None:
            os.killpg(start.pid, signal.SIGKILL)
            start.wait(timeout=10)
    text = "\n".join(lines)
    for step in ("==> applying migrations", "==> starting the scheduler and the dashboard"):
        assert step in text
    # After what the server and the scheduler say as they start: the address, the
    # password, how to set a new one.
    assert lines[-4].startswith(f"==> ready: the dashboard is on http://127.0.0.1:{port}/")
    assert re.fullmatch(r"Created the admin user 'admin' with password: \S+", lines[-3])
    assert (
        lines[-1] == "Lost it? Set a new one in any terminal: scripts/manage changepassword admin"
    )
    assert text.index("Quit the server") < text.index("==> ready")
    assert text.index("started: 4 workers") < text.index("==> ready")
    assert stat.S_IMODE((tmp_path / ".env").stat().st_mode) == 0o600
    assert "stopped" in output.read_text()  # the scheduler stopped cleanly, not killed


# --- what the README and the login page tell the new user ---------------------------------------


def test_the_quick_start_has_two_commands_and_later_commands_work_in_a_new_terminal():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = quick.split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split()[0] for line in block.splitlines() if line.strip()] == [
        "scripts/start",
        "scripts/test",
    ]
    assert "scripts/manage" in quick and ".env" in quick
    # A host project's own manage.py is the host's, and a deployment's is its server's;
    # everything else here is typed in this checkout, where `python manage.py` needs an
    # activated virtualenv.
    pages = sorted((ROOT / "docs").glob("*.md"))
    others = [page for page in pages if page.name not in ("host-project.md", "deployment.md")]
    assert len(others) > 10
    for name, text in [("README.md", readme)] + [
        (f"docs/{page.name}", page.read_text()) for page in others
    ]:
        assert "python manage.py" not in text.replace("python\nmanage.py", "python manage.py"), name
    assert "TOKEN=$(scripts/manage apitoken admin)" in readme
    assert "TOKEN=$(scripts/manage apitoken admin)" in (ROOT / "docs/api.md").read_text()


@pytest.mark.django_db
def test_the_login_page_says_how_to_set_a_new_admin_password(client):
    page = client.get("/accounts/login/").content.decode()
    assert "<code>scripts/manage changepassword admin</code>" in page
