"""A run's processes die with it: a child that calls setsid is stopped at a cancel, a
timeout and the command's own exit; a SIGKILLed scheduler's shell child dies with it and
its retry runs alone; the reaper kills what a lost run left on this host and removes its
work directory.

Every check is on real processes: their pids (alive or not, from /proc) and a marker
file that each writer appends its pid to in a loop, which must stop growing.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from jobs import engine
from jobs.executors import ExecutionContext
from jobs.executors.leftovers import RUN_MARKER
from jobs.executors.output import RunOutput
from jobs.executors.processes import run_child
from jobs.executors.shell import make_work_directory, remove_work_directory, work_directory
from jobs.models import JobHistory, RunStatus
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import make_job
from jobs.tests.processes import scheduler, wait_until
from jobs.tests.executors.test_real_work_processes import (
    REAL_WORK,
    alive,
    finished_run,
    job_now,
    running,
)

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc and prctl"),
]

# The escaped writer ignores SIGTERM: only SIGKILL ends it, after the kill grace.
ESCAPING_WRITER = """\
setsid sh -c 'trap "" TERM; echo $$ > "$PIDS/escaped.$ATTEMPT"; \
while :; do echo $$ >> "$MARKER"; sleep 0.05; done' &
echo $$ > "$PIDS/parent.$ATTEMPT"
echo started
"""


def writer_script(directory: Path, *, then: str = "sleep 300") -> str:
    """A shell job's command: a script that starts a writer in a session of its own (it
    calls setsid), then `then`."""
    script = directory / "writer.sh"
    script.write_text(ESCAPING_WRITER + then + "\n")
    return f"sh {script}"


def pid_of(path: Path, timeout: float = 30) -> int:
    return int(wait_until(lambda: path.exists() and path.read_text().strip(), timeout))


def grows(marker: Path, timeout: float = 30) -> bool:
    """Whether the marker grows (its writer is alive): waits for two growths."""
    first = wait_until(lambda: marker.exists() and marker.stat().st_size, timeout)
    wait_until(lambda: marker.stat().st_size > first, timeout)
    return True


def stopped_growing(marker: Path, quiet: float = 0.5, timeout: float = 15) -> bool:
    """Whether the marker stops growing: unchanged over `quiet` seconds (ten times the
    writer's period), looked at for at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    size, since = marker.stat().st_size, time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now_size = marker.stat().st_size
        if now_size != size:
            size, since = now_size, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return True
    return False


def writers(marker: Path) -> list[str]:
    return marker.read_text().split()


def env_for(directory: Path) -> dict[str, str]:
    """A shell job's env for the writer (ATTEMPT comes with the run)."""
    return {"PIDS": str(directory), "MARKER": str(directory / "marker")}


# --- stopping a run, in this process ----------------------------------------------------


def test_a_child_that_calls_setsid_ends_with_the_commands_own_exit(settings, tmp_path):
    settings.JOBS_KILL_GRACE_SECONDS = 0.5
    output = RunOutput()
    finished = run_child(
        ["sh", "-c", ESCAPING_WRITER],  # starts the writer, then exits at once
        output=output,
        context=ExecutionContext(),
        deadline=time.monotonic() + 60,
        env={"PATH": os.environ["PATH"], "ATTEMPT": "1", **env_for(tmp_path)},
    )
    escaped = pid_of(tmp_path / "escaped.1")
    assert finished == (0, "")
    assert not alive(escaped)
    assert stopped_growing(tmp_path / "marker")
    assert "SIGKILL" in output.text()  # it ignored SIGTERM


def test_the_runs_context_is_told_its_host_and_process_group(settings, tmp_path):
    context = ExecutionContext()
    run_child(["true"], output=RunOutput(), context=context, deadline=None)
    assert context.processes.host == socket.gethostname()
    assert context.processes.group > 1 and context.processes_changed


# --- through runscheduler ---------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_shell_run_leaves_no_process_even_one_that_called_setsid(tmp_path):
    job = job_now("cancelled", "shell", writer_script(tmp_path), {"env": env_for(tmp_path)})
    proc = scheduler(**REAL_WORK)
    with running(proc):
        parent, escaped = pid_of(tmp_path / "parent.1"), pid_of(tmp_path / "escaped.1")
        assert os.getsid(escaped) != os.getsid(parent)  # it left the run's session
        assert grows(tmp_path / "marker")
        engine.cancel_run(JobHistory.objects.get(job=job), by="tester")
        wait_until(lambda: not alive(parent) and not alive(escaped), 20)
        assert stopped_growing(tmp_path / "marker")
        run = finished_run(job)
    assert run.status == RunStatus.CANCELLED
    assert run.process_host == socket.gethostname() and run.process_group


@pytest.mark.django_db(transaction=True)
def test_a_shell_run_past_its_timeout_leaves_no_process_even_one_that_called_setsid(tmp_path):
    job = job_now(
        "times out",
        "shell",
        writer_script(tmp_path),
        {"env": env_for(tmp_path)},
        timeout_seconds=2,
    )
    proc = scheduler(**REAL_WORK)
    with running(proc):
        escaped = pid_of(tmp_path / "escaped.1")
        assert grows(tmp_path / "marker")
        run = finished_run(job, timeout=30)
        wait_until(lambda: not alive(escaped), 20)
        assert stopped_growing(tmp_path / "marker")
    assert run.status == RunStatus.FAILED and "timed out" in run.log


@pytest.mark.django_db(transaction=True)
def test_a_killed_schedulers_shell_child_dies_with_it_and_the_retry_runs_alone(tmp_path):
    script = tmp_path / "writer.sh"
    # Each attempt writes its own pid files ($ATTEMPT is the scheduler's, per run).
    script.write_text(ESCAPING_WRITER + "sleep 300\n")
    job = job_now(
        "killed",
        "shell",
        f"sh {script}",
        {"env": env_for(tmp_path)},
        max_retries=1,
        retry_backoff_seconds=0,
    )
    settings = {**REAL_WORK, "JOBS_LEASE_SECONDS": 2}
    first = scheduler(**settings)
    try:
        escaped = pid_of(tmp_path / "escaped.1")
        assert grows(tmp_path / "marker")
        first.kill()  # SIGKILL: no atexit, no signal handler
    finally:
        first.cleanup()
    # The supervisor got its parent-death signal and killed its whole tree.
    wait_until(lambda: not alive(escaped), 20)
    assert stopped_growing(tmp_path / "marker")
    lines_before = len(writers(tmp_path / "marker"))
    second = scheduler(**settings)
    with running(second):
        retry_writer = pid_of(tmp_path / "escaped.2", timeout=60)
        assert grows(tmp_path / "marker")
        retry = JobHistory.objects.get(job=job, attempt=2)
        assert retry.status == RunStatus.RUNNING
        engine.cancel_run(retry, by="tester")
        wait_until(lambda: not alive(retry_writer), 20)
    lost = JobHistory.objects.get(job=job, attempt=1)
    assert lost.status == RunStatus.FAILED and "worker lost" in lost.log
    after = writers(tmp_path / "marker")[lines_before:]
    assert after and set(after) == {str(retry_writer)}  # one writer: the retry alone


# --- the reaper ---------------------------------------------------------------------------


def leftover(run_key: str, marker: Path, *, marked: bool) -> subprocess.Popen:
    """A writer left by a lost run, in a session of its own (its group is its pid);
    `marked`: with the run's marker in its environment."""
    return subprocess.Popen(
        ["sh", "-c", f'trap "" TERM; while :; do echo $$ >> "{marker}"; sleep 0.05; done'],
        env={"PATH": os.environ["PATH"], RUN_MARKER: run_key if marked else "another run"},
        start_new_session=True,
    )


@pytest.mark.django_db(transaction=True)
def test_the_reaper_kills_what_a_lost_run_left_on_this_host_before_the_retry(tmp_path, settings):
    settings.JOBS_LEASE_SECONDS = 2
    job = make_job(name="lost", is_active=False, max_retries=1, retry_backoff_seconds=0)
    started = timezone.now() - timedelta(seconds=1)
    run = JobHistory.objects.create(
        job=job,
        scheduled_for=started,
        not_before=started,
        status=RunStatus.RUNNING,
        started_at=started,
        heartbeat_at=started,
        worker="gone:1/w1",
    )
    key = run.pk.hex
    marker = tmp_path / "marker"
    in_group = leftover(key, marker, marked=False)  # found by the recorded process group
    escaped = leftover(key, marker, marked=True)  # found by the run's marker only
    try:
        JobHistory.objects.filter(pk=run.pk).update(
            process_host=socket.gethostname(), process_group=in_group.pid
        )
        make_work_directory(key)
        assert grows(marker)
        assert engine.reap(started + timedelta(seconds=3)) == 1
        assert not alive(in_group.pid) and not alive(escaped.pid)
        assert stopped_growing(marker)
    finally:
        for process in (in_group, escaped):
            process.kill()
            process.wait()
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert f"left on {socket.gethostname()} (process group {in_group.pid})" in run.log
    assert f"{in_group.pid} (sh)" in run.log and f"{escaped.pid} (sh)" in run.log
    assert "removed its work directory" in run.log
    assert not os.path.exists(work_directory(key))
    assert JobHistory.objects.get(job=job, attempt=2).status == RunStatus.PENDING


@pytest.mark.django_db(transaction=True)
def test_the_reaper_leaves_the_processes_of_a_run_lost_on_another_host(tmp_path, settings):
    settings.JOBS_LEASE_SECONDS = 2
    job = make_job(name="elsewhere", is_active=False)
    started = timezone.now() - timedelta(seconds=1)
    run = JobHistory.objects.create(
        job=job,
        scheduled_for=started,
        not_before=started,
        status=RunStatus.RUNNING,
        started_at=started,
        heartbeat_at=started,
        worker="gone:1/w1",
    )
    marker = Path(tempfile.mkdtemp(dir=tmp_path)) / "marker"
    process = leftover(run.pk.hex, marker, marked=True)
    try:
        JobHistory.objects.filter(pk=run.pk).update(
            process_host="another-host", process_group=process.pid
        )
        assert engine.reap(started + timedelta(seconds=3)) == 1
        assert alive(process.pid)
    finally:
        process.kill()
        process.wait()
    run.refresh_from_db()
    assert "killed" not in run.log


@pytest.mark.django_db(transaction=True)
def test_a_scheduler_starting_removes_the_work_directories_of_runs_no_longer_running():
    job = make_job(name="dirs", is_active=False)
    now = timezone.now()
    finished, running_now = (
        JobHistory.objects.create(
            job=job,
            scheduled_for=now - timedelta(seconds=seconds),
            not_before=now,
            status=status,
            started_at=now,
            worker="w",
        )
        for seconds, status in ((1, RunStatus.FAILED), (2, RunStatus.RUNNING))
    )
    for run in (finished, running_now):
        make_work_directory(run.pk.hex)
    scheduler = Scheduler(workers=1)
    scheduler.start_workers()
    try:
        assert not os.path.exists(work_directory(finished.pk.hex))
        assert os.path.isdir(work_directory(running_now.pk.hex))  # its run may still use it
    finally:
        # Its workers and checkpointer stop: a checkpointer left running turns off the
        # automatic checkpoint of every later test's connections in this process.
        scheduler.shutdown()
        remove_work_directory(running_now.pk.hex)
