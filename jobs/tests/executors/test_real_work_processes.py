"""Jobs that do real work, end to end through real processes: `manage.py runscheduler`
(and `run_huey` workers over Redis) running python, command, shell and http jobs; shell
process groups stopped whole at a timeout and at a cancel; the live log of a long run."""

from __future__ import annotations

import secrets
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from jobs import engine
from jobs.models import Job, JobHistory, RunStatus
from jobs.tests.processes import (
    ManagedProcess,
    huey_worker,
    redis_url_or_skip,
    scheduler,
    wait_until,
)

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

REAL_WORK = {
    "JOBS_SHELL_ENABLED": "true",
    "JOBS_KILL_GRACE_SECONDS": "2",
    "JOBS_HTTP_ALLOWED_HOSTS": "127.0.0.1",
    "JOBS_LIVE_LOG_SECONDS": "0.5",
    # A test that fails midway stops its scheduler soon.
    "JOBS_SHUTDOWN_GRACE_SECONDS": "5",
}
FINISHED = (RunStatus.SUCCESS, RunStatus.FAILED, RunStatus.CANCELLED)


def job_now(name: str, executor: str, command: str, arguments: dict | None = None, **fields: Any):
    """A job of one run, due in a moment (the scheduler under test claims it)."""
    job = Job(
        name=name,
        executor=executor,
        command=command,
        arguments=arguments or {},
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(seconds=1),
        **fields,
    )
    job.save()
    return job


def finished_run(job: Job, timeout: float = 60) -> JobHistory:
    return wait_until(
        lambda: JobHistory.objects.filter(job=job, status__in=FINISHED).first(), timeout
    )


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


@contextmanager
def running(*procs: ManagedProcess) -> Iterator[None]:
    try:
        yield
    finally:
        for proc in procs:
            proc.stop(timeout=30)
            proc.cleanup()


@contextmanager
def loopback_server() -> Iterator[dict]:
    seen: dict[str, Any] = {"paths": []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen["paths"].append(self.path)
            status = 503 if "fail" in self.path else 200
            body = b"service says hi"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    seen["base"] = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_each_executor_succeeds_and_fails_through_runscheduler(settings):
    settings.JOBS_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_SHELL_ENABLED = True
    with loopback_server() as server:
        jobs = {
            "python ok": job_now(
                "python ok", "python", "jobs.tests.sample_tasks.send_invoices", {"day": "fri"}
            ),
            "python fails": job_now(
                "python fails", "python", "jobs.tests.sample_tasks.fails", {"message": "no disk"}
            ),
            "command ok": job_now("command ok", "command", "check"),
            "command fails": job_now("command fails", "command", "check --tag no_such_tag"),
            "shell ok": job_now("shell ok", "shell", "sh -c 'echo out; echo err >&2'"),
            "shell fails": job_now("shell fails", "shell", "sh -c 'echo dying; exit 4'"),
            "http ok": job_now("http ok", "http", f"{server['base']}/ok"),
            "http fails": job_now("http fails", "http", f"{server['base']}/fail"),
        }
        for job in jobs.values():
            job.full_clean()
        proc = scheduler(**REAL_WORK)
        with running(proc):
            runs = {name: finished_run(job) for name, job in jobs.items()}
    statuses = {name: run.status for name, run in runs.items()}
    assert statuses == {
        name: RunStatus.FAILED if "fails" in name else RunStatus.SUCCESS for name in jobs
    }, {name: run.log for name, run in runs.items()}
    logs = {name: run.log for name, run in runs.items()}
    assert "sending invoices for fri" in logs["python ok"]
    assert "ValueError: no disk" in logs["python fails"]
    assert "System check identified no issues" in logs["command ok"]
    assert "no_such_tag" in logs["command fails"] and "exit status 1" in logs["command fails"]
    assert "out\n" in logs["shell ok"] and "err\n" in logs["shell ok"]
    assert logs["shell fails"].endswith("dying\nexit status 4\n")
    assert "HTTP 200 OK" in logs["http ok"] and "service says hi" in logs["http ok"]
    assert "HTTP 503" in logs["http fails"]
    assert sorted(server["paths"]) == ["/fail", "/ok"]


def group_script(pid_dir: str) -> str:
    """A shell that starts a background child, writes both pids, prints, and waits."""
    return (
        'sh -c \'sleep 600 & echo $! > "$PIDS/child"; echo $$ > "$PIDS/parent"; '
        "echo started; wait'"
    )


def pids_in(pid_dir: str) -> list[int]:
    def both() -> list[int] | None:
        files = [Path(pid_dir, name) for name in ("parent", "child")]
        if all(f.exists() and f.read_text().strip() for f in files):
            return [int(f.read_text()) for f in files]
        return None

    return wait_until(both, 30)


def test_a_shell_run_past_its_timeout_leaves_no_process_of_its_group_alive():
    pid_dir = tempfile.mkdtemp(prefix="pids-")
    job = job_now(
        "times out", "shell", group_script(pid_dir), {"env": {"PIDS": pid_dir}}, timeout_seconds=2
    )
    proc = scheduler(**REAL_WORK)
    with running(proc):
        pids = pids_in(pid_dir)
        assert all(alive(pid) for pid in pids)
        run = finished_run(job, timeout=30)
        wait_until(lambda: not any(alive(pid) for pid in pids), 10)
    assert run.status == RunStatus.FAILED
    assert "started" in run.log
    assert "stopping process group" in run.log and "timed out" in run.log


def test_a_shell_run_cancelled_while_running_leaves_no_process_of_its_group_alive():
    pid_dir = tempfile.mkdtemp(prefix="pids-")
    job = job_now("cancelled", "shell", group_script(pid_dir), {"env": {"PIDS": pid_dir}})
    proc = scheduler(**REAL_WORK)
    with running(proc):
        pids = pids_in(pid_dir)
        run = JobHistory.objects.get(job=job)
        engine.cancel_run(run, by="tester")
        # The worker sees the cancel within about a second, then TERM, then KILL.
        wait_until(lambda: not any(alive(pid) for pid in pids), 15)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert "cancelled by tester" in run.log


def test_the_log_of_a_long_shell_run_is_in_the_database_before_it_ends():
    marker = Path(tempfile.mkdtemp(prefix="go-")) / "finish"
    job = job_now(
        "long",
        "shell",
        "sh -c 'echo first line; while [ ! -e \"$MARKER\" ]; do sleep 0.1; done; echo last line'",
        {"env": {"MARKER": str(marker)}},
    )
    proc = scheduler(**REAL_WORK)
    with running(proc):
        # The log's first line is the command line, which says "first line" too: wait
        # for the child's own line after it.
        seen = wait_until(
            lambda: JobHistory.objects.filter(
                job=job, status=RunStatus.RUNNING, log__contains="\nfirst line"
            ).first(),
            30,
        )
        assert seen.log.splitlines()[1:] == ["first line"]
        marker.touch()
        run = finished_run(job)
    assert run.status == RunStatus.SUCCESS
    assert "first line" in run.log and "last line" in run.log


def test_a_run_keeps_the_arguments_given_to_run_now_through_runscheduler():
    job = Job(
        name="recorder",
        executor="python",
        command="jobs.tests.sample_tasks.record",
        arguments={"key": "own", "value": "from the job"},
        schedule_type="interval",
        interval=1,
        interval_unit="day",
        is_active=False,
    )
    job.save()
    engine.run_now(job, arguments=job.run_arguments({"key": "other", "value": "for this run"}))
    proc = scheduler(**REAL_WORK)
    with running(proc):
        run = finished_run(job)
    assert run.status == RunStatus.SUCCESS
    assert "recorded 'for this run' for other" in run.log
    assert run.arguments == {"key": "other", "value": "for this run"}


@pytest.fixture
def huey_env() -> dict[str, str]:
    """The Redis the tests of this feature may use, with a queue of this test's own."""
    url = redis_url_or_skip()
    return {**REAL_WORK, "REDIS_URL": url, "HUEY_QUEUE": f"real-{secrets.token_hex(4)}"}


def test_the_huey_path_runs_a_python_and_a_shell_job(huey_env):
    python = job_now("py", "python", "jobs.tests.sample_tasks.send_invoices", {"day": "mon"})
    shell = job_now("sh", "shell", "sh -c 'echo from huey; echo $JOB_NAME'")
    worker = huey_worker(**huey_env)
    proc = scheduler(**huey_env)
    with running(proc, worker):
        runs = [finished_run(python), finished_run(shell)]
    assert [run.status for run in runs] == [RunStatus.SUCCESS, RunStatus.SUCCESS], [
        run.log for run in runs
    ]
    assert all("/huey-" in run.worker for run in runs)
    assert "sending invoices for mon" in runs[0].log
    assert "from huey\nsh\n" in runs[1].log


def test_shell_runs_go_to_workers_of_their_own_queue(huey_env):
    """JOBS_SHELL_HUEY_QUEUE: the shell runs reach only the workers reading that queue
    (run as another OS user in production); the others never run one."""
    shell_queue = f"{huey_env['HUEY_QUEUE']}-shell"
    python = job_now("py", "python", "jobs.tests.sample_tasks.send_invoices", {"day": "tue"})
    shell = job_now("sh", "shell", "sh -c 'echo from the shell workers'")
    main_worker = huey_worker(**{**huey_env, "JOBS_SHELL_ENABLED": "false"})
    shell_worker = huey_worker(**{**huey_env, "HUEY_QUEUE": shell_queue})
    proc = scheduler(**huey_env, JOBS_SHELL_HUEY_QUEUE=shell_queue)
    with running(proc, main_worker, shell_worker):
        python_run, shell_run = finished_run(python), finished_run(shell)
    assert shell_run.status == RunStatus.SUCCESS, shell_run.log
    assert f":{shell_worker.pid}/huey-" in shell_run.worker
    assert python_run.status == RunStatus.SUCCESS, python_run.log
    assert f":{main_worker.pid}/huey-" in python_run.worker
