"""Jobs that do real work, in this process: each executor through scheduler passes, the
live log, the log cap, and jobs whose task or executor is gone.

The claims about processes (killing a process group, the live log of a long shell run,
runscheduler and Huey workers end to end) are in test_real_work_processes.py."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs import engine
from jobs.engine.logs import safe_log
from jobs.executors import ExecutionContext
from jobs.executors.output import RunOutput
from jobs.executors.python import PythonExecutor
from jobs.executors.shell import ShellExecutor
from jobs.models import Job, JobHistory, RunStatus
from jobs.pytasks import registry
from jobs.runtime.scheduler import Scheduler
from jobs.runtime.worker import Heartbeater
from jobs.tests import sample_tasks
from jobs.tests.factories import WORKER, make_job, ticket

pytestmark = pytest.mark.django_db(transaction=True)


def due_now(*jobs: Job) -> None:
    Job.objects.filter(pk__in=[job.pk for job in jobs]).update(next_run_at=timezone.now())


def run_all(workers: int = 2) -> None:
    """One `runscheduler --once` in this process: claim what is due, run it to the end."""
    Scheduler(workers=workers).run_once()


def only_run(job: Job) -> JobHistory:
    return JobHistory.objects.get(job=job)


def python_job(task: str, arguments: dict | None = None, **fields: Any) -> Job:
    return make_job(
        name=fields.pop("name", task),
        executor="python",
        command=task,
        arguments=arguments or {},
        clean=True,
        **fields,
    )


@pytest.fixture
def calls():
    sample_tasks.calls.clear()
    yield sample_tasks.calls
    sample_tasks.calls.clear()


# --- python ------------------------------------------------------------------------------


def test_a_python_job_calls_its_task_with_its_arguments_and_logs_what_it_printed(calls):
    job = python_job("jobs.tests.sample_tasks.record", {"key": "nightly", "value": [1, 2]})
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.SUCCESS
    assert calls["nightly"] == [{"value": [1, 2]}]
    assert run.arguments == {"key": "nightly", "value": [1, 2]}
    assert run.log.splitlines() == [
        "$ python task jobs.tests.sample_tasks.record",
        "recorded [1, 2] for nightly",
        "returned: 'ok'",
    ]


def test_run_now_with_other_arguments_reaches_the_function_and_is_stored_on_the_run(calls):
    job = python_job("jobs.tests.sample_tasks.record", {"key": "own", "value": 1})
    job.next_run_at = None
    Job.objects.filter(pk=job.pk).update(next_run_at=None, is_active=False)
    other = job.run_arguments({"key": "other", "value": "2"})
    engine.run_now(job, arguments=other)
    engine.run_now(job)  # the job's own
    run_all()
    assert calls == {"other": [{"value": "2"}], "own": [{"value": 1}]}
    stored = sorted(JobHistory.objects.values_list("arguments", flat=True), key=str)
    assert stored == [{"key": "other", "value": "2"}, {"key": "own", "value": 1}]


def test_typed_arguments_reach_the_function_as_their_types(calls):
    job = python_job(
        "samples.typed",
        {"count": "3", "day": "2026-12-01", "colour": "green", "at": "2026-12-01T09:00:00Z"},
    )
    assert job.arguments["count"] == 3  # normalised when saved
    due_now(job)
    run_all()
    (values,) = calls["typed"]
    assert values["count"] == 3
    assert values["day"].isoformat() == "2026-12-01"
    assert values["colour"] is sample_tasks.Colour.GREEN
    assert values["at"].tzinfo is not None


def test_a_failing_task_fails_its_run_with_the_traceback_and_is_retried_with_its_arguments():
    job = python_job(
        "jobs.tests.sample_tasks.fails",
        {"message": "disk full"},
        max_retries=1,
        retry_backoff_seconds=0,
    )
    due_now(job)
    run_all()
    runs = list(JobHistory.objects.filter(job=job).order_by("attempt"))
    assert [run.status for run in runs] == [RunStatus.FAILED, RunStatus.FAILED]
    assert "Traceback (most recent call last)" in runs[0].log
    assert "ValueError: disk full" in runs[0].log
    assert runs[1].arguments == {"message": "disk full"}  # the retry ran with the same


def test_a_long_return_value_is_cut_in_the_log():
    job = python_job("jobs.tests.sample_tasks.record", {"key": "k", "value": "v" * 10_000})
    due_now(job)
    run_all()
    returned = only_run(job).log.splitlines()[-1]
    assert returned.startswith("returned: ") and len(returned) < 2100


def test_two_runs_at_once_keep_their_own_prints_and_log_records():
    first = python_job("jobs.tests.sample_tasks.chatty", {"label": "AAA", "lines": 30}, name="a")
    second = python_job("jobs.tests.sample_tasks.chatty", {"label": "BBB", "lines": 30}, name="b")
    due_now(first, second)
    run_all(workers=2)
    logs = {run.job.name: run.log for run in JobHistory.objects.select_related("job")}
    assert logs["a"].count("AAA print") == 30 and logs["a"].count("AAA log") == 30
    assert logs["a"].count("AAA stderr") == 30
    assert "BBB" not in logs["a"]
    assert logs["b"].count("BBB print") == 30 and "AAA" not in logs["b"]


def test_sys_exit_in_a_task_fails_its_run_and_an_async_task_is_awaited():
    exits = python_job("jobs.tests.sample_tasks.exits", {"code": 3}, name="exits")
    awaits = python_job("jobs.tests.sample_tasks.awaits", {"value": 41}, name="awaits")
    due_now(exits, awaits)
    run_all(workers=1)  # the thread that ran sys.exit() goes on to the next run
    assert only_run(exits).status == RunStatus.FAILED
    assert "the task called sys.exit(3)." in only_run(exits).log
    assert only_run(awaits).status == RunStatus.SUCCESS
    assert only_run(awaits).log.rstrip().endswith("returned: 42")


def test_a_task_sees_that_it_should_stop():
    context = ExecutionContext()
    timer = threading.Timer(0.2, context.request_stop, args=("cancelled",))
    timer.start()
    outcome = PythonExecutor().execute(
        ticket(command="jobs.tests.sample_tasks.wait_for_stop", executor="python", arguments={}),
        context,
    )
    assert not outcome.succeeded
    assert "stopped=True reason=cancelled" in outcome.log
    assert "asked to stop (the run was cancelled)" in outcome.log


def test_a_context_says_whether_its_run_was_asked_to_stop_without_making_an_event():
    context = ExecutionContext()
    assert context.stop_requested is False
    assert context._stop is None  # a run nobody stops never makes its Event
    context.request_stop("timeout")
    assert context.stop_requested is True and context.stop.is_set()


def test_a_task_no_longer_registered_fails_its_runs_and_the_scheduler_goes_on(calls):
    gone = python_job("jobs.tests.sample_tasks.returns_quickly", name="gone")
    fine = python_job("jobs.tests.sample_tasks.record", {"key": "fine"}, name="fine")
    entry = registry.get_task("jobs.tests.sample_tasks.returns_quickly")
    registry.unregister(entry.name)
    try:
        assert "is not registered" in Job.objects.get(pk=gone.pk).execution_problem
        due_now(gone, fine)
        run_all()
    finally:
        registry.add(entry.target, name=entry.name)
    assert only_run(gone).status == RunStatus.FAILED
    assert (
        "not run: the Python task “jobs.tests.sample_tasks.returns_quickly” is not registered"
        in (only_run(gone).log)
    )
    assert only_run(fine).status == RunStatus.SUCCESS
    assert Job.objects.get(pk=gone.pk).execution_problem == ""


def test_arguments_that_no_longer_bind_fail_the_run_saying_which():
    job = python_job("jobs.tests.sample_tasks.record", {"key": "k"})
    Job.objects.filter(pk=job.pk).update(arguments={"key": "k", "gone": 1})
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.FAILED
    assert "the arguments do not fit record(key: str, value: Any = None)" in run.log
    assert "gone: record takes no argument" in run.log


# --- command -----------------------------------------------------------------------------


def test_a_command_job_runs_its_management_command_in_a_child_process():
    job = make_job(name="check", executor="command", command="check", clean=True)
    failing = make_job(
        name="bad tag", executor="command", command="check --tag no_such_tag", clean=True
    )
    due_now(job, failing)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.SUCCESS, run.log
    assert "System check identified no issues" in run.log
    assert run.log.rstrip().endswith("exit status 0")
    bad = only_run(failing)
    assert bad.status == RunStatus.FAILED
    assert "no_such_tag" in bad.log and "exit status 1" in bad.log


def test_a_command_no_longer_listed_fails_its_runs(settings):
    job = make_job(name="prune", executor="command", command="prunehistory --dry-run", clean=True)
    settings.JOBS_MANAGEMENT_COMMANDS = ["check"]
    assert "not listed in JOBS_MANAGEMENT_COMMANDS" in job.execution_problem
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.FAILED
    assert "not listed in JOBS_MANAGEMENT_COMMANDS" in run.log


# --- shell -------------------------------------------------------------------------------

SECRET_VARIABLES = {
    "SECRET_KEY": "site-secret-key-value",
    "DATABASE_URL": "postgres://user:pw@db/site",
    "REDIS_URL": "redis://:pw@redis:6379/0",
    "EMAIL_HOST_PASSWORD": "mail-password",
    "EMAIL_HOST_USER": "mailer",
    "METRICS_TOKEN": "metrics-token-value",
}


def test_a_shell_job_gets_a_scrubbed_environment_with_its_identity_and_env(settings, monkeypatch):
    settings.JOBS_SHELL_ENABLED = True
    for name, value in SECRET_VARIABLES.items():
        monkeypatch.setenv(name, value)
    job = make_job(
        name="env",
        executor="shell",
        command="env",
        arguments={"env": {"GREETING": "hi"}},
        clean=True,
    )
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.SUCCESS, run.log
    variables = dict(line.split("=", 1) for line in run.log.splitlines()[1:] if "=" in line)
    assert not set(SECRET_VARIABLES) & set(variables)
    for value in SECRET_VARIABLES.values():
        assert value not in run.log
    assert variables["GREETING"] == "hi"
    assert variables["JOB_ID"] == str(job.pk)
    assert variables["RUN_ID"] == str(run.pk)
    assert variables["SCHEDULED_FOR"] == run.scheduled_for.isoformat()
    assert variables["HOME"].startswith("/") and "jobs-runs-" in variables["HOME"]
    assert set(variables) <= {
        "PATH", "LANG", "HOME", "GREETING", "JOB_ID", "JOB_NAME", "RUN_ID", "SCHEDULED_FOR",
        "ATTEMPT", "JOBS_RUN", "JOBS_SCHEDULED_FOR", "PWD", "SHLVL", "_",
    }  # fmt: skip


def test_a_shell_run_works_in_a_directory_of_its_own_and_fails_on_a_non_zero_exit(settings):
    settings.JOBS_SHELL_ENABLED = True
    job = make_job(
        name="pwd", executor="shell", command="sh -c 'pwd; ls -A | wc -l; exit 7'", clean=True
    )
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.FAILED
    lines = run.log.splitlines()
    assert "jobs-runs-" in lines[1] and lines[2].strip() == "0"
    assert not os.path.exists(lines[1])  # removed after the run
    assert lines[-1] == "exit status 7"


def test_a_shell_child_that_closes_its_output_is_still_waited_for(settings):
    """The end of the output is not the end of the run: the exit status decides, and
    nothing is stopped that would have ended by itself."""
    settings.JOBS_SHELL_ENABLED = True
    outcome = ShellExecutor().execute(
        ticket(
            command="sh -c 'echo before; exec >/dev/null 2>&1; sleep 0.5; exit 0'",
            executor="shell",
            arguments={},
        ),
        ExecutionContext(),
    )
    assert outcome.succeeded, outcome.log
    assert "stopping process group" not in outcome.log
    assert outcome.log.endswith("before\nexit status 0\n")


def test_shell_switched_off_after_saving_fails_the_runs_saying_why(settings):
    settings.JOBS_SHELL_ENABLED = True
    job = make_job(name="sh", executor="shell", command="true", clean=True)
    settings.JOBS_SHELL_ENABLED = False
    assert "JOBS_SHELL_ENABLED" in job.execution_problem
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.FAILED
    assert "not run: shell jobs are switched off on this site (JOBS_SHELL_ENABLED)" in run.log


def test_a_shell_run_past_the_default_timeout_is_stopped(settings):
    settings.JOBS_SHELL_ENABLED = True
    settings.JOBS_SHELL_DEFAULT_TIMEOUT = 1
    settings.JOBS_KILL_GRACE_SECONDS = 1
    outcome = ShellExecutor().execute(
        ticket(command="sleep 30", executor="shell", arguments={}), ExecutionContext()
    )
    assert not outcome.succeeded
    assert "timed out after 1 s (JOBS_SHELL_DEFAULT_TIMEOUT)" in outcome.log


# --- output: the cap, NUL, the live log ---------------------------------------------------


def test_ten_megabytes_with_nul_bytes_are_capped_and_stored_safely(settings):
    settings.JOBS_LOG_MAX_BYTES = 65536
    job = python_job("jobs.tests.sample_tasks.big_output", {"megabytes": 10, "nul": True})
    due_now(job)
    run_all()
    run = only_run(job)
    assert run.status == RunStatus.SUCCESS
    assert "\x00" not in run.log
    assert len(run.log.encode()) <= 65536 + 200
    assert "bytes of output left out (JOBS_LOG_MAX_BYTES)" in run.log
    head, tail = run.log.split("bytes of output left out", 1)
    assert head.startswith("$ python task jobs.tests.sample_tasks.big_output\nab")
    assert tail.rstrip().endswith("returned: None")


def test_the_output_keeps_its_beginning_and_its_end_and_says_how_much_is_missing():
    output = RunOutput(max_bytes=1000)
    for number in range(1000):
        output.write(f"line {number}\n")
    text = output.text()
    assert text.startswith("line 0\nline 1\n")
    assert text.endswith("line 999\n")
    assert len(text.encode()) <= 1000
    omitted = int(text.split("[… ")[1].split(" bytes")[0].replace(",", ""))
    kept = len(text.encode()) - len(text.splitlines(keepends=True)[0])
    assert omitted + kept > 8000  # everything is accounted for, roughly


def test_the_live_log_writes_running_runs_of_this_worker_in_one_statement(make_run):
    job = make_job()
    mine = [make_run(job, status=RunStatus.RUNNING, worker=WORKER) for _ in range(5)]
    theirs = make_run(job, status=RunStatus.RUNNING, worker="other-host:2/w1")
    done = make_run(job, status=RunStatus.SUCCESS, worker=WORKER, log="final")
    heartbeater = Heartbeater(interval=60, watch_interval=60, live_log_interval=60)
    for run in [*mine, theirs, done]:
        context = ExecutionContext()
        context.output = RunOutput()
        context.output.write(f"so far {run.pk.hex}\x00\n")
        heartbeater.begin(run.pk.hex, context, None, None, WORKER)
    with CaptureQueriesContext(connection) as queries:
        assert heartbeater.write_live_logs() == 7
    writes = [q for q in queries.captured_queries if "UPDATE" in q["sql"]]
    assert len(writes) == 1
    for run in mine:
        run.refresh_from_db()
        assert run.log == f"so far {run.pk.hex}\n"
    theirs.refresh_from_db()
    done.refresh_from_db()
    assert theirs.log == "" and done.log == "final"
    # Nothing new written since: nothing to write.
    with CaptureQueriesContext(connection) as queries:
        assert heartbeater.write_live_logs() == 0
    assert not queries.captured_queries


def test_safe_log_and_the_cap_agree_on_invalid_utf8():
    output = RunOutput(max_bytes=1000)
    output.write(b"\xff\xfe ok \xe2\x82")
    assert safe_log(output.text()) == "\ufffd\ufffd ok \ufffd"


# --- http --------------------------------------------------------------------------------


@contextmanager
def http_server(status: int = 200, body: bytes = b"hello from the server") -> Iterator[dict]:
    """A loopback HTTP server answering every request with `status` and `body`."""
    seen: dict[str, Any] = {"requests": []}

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            payload = self.rfile.read(length) if length else b""
            seen["requests"].append(
                {"method": self.command, "path": self.path, "headers": dict(self.headers),
                 "body": payload}
            )  # fmt: skip
            self.send_response(status)
            if status in (301, 302):
                self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    seen["url"] = f"http://127.0.0.1:{server.server_address[1]}/hook?x=1"
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def http_job(url: str, arguments: dict | None = None, **fields: Any) -> Job:
    return make_job(
        name=fields.pop("name", "http"),
        executor="http",
        command=url,
        arguments=arguments or {},
        clean=True,
        **fields,
    )


def test_an_http_job_sends_its_request_and_logs_the_status_and_body(settings):
    settings.JOBS_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
    with http_server() as server:
        job = http_job(
            server["url"],
            {
                "method": "POST",
                "headers": {"Authorization": "Bearer very-secret-token"},
                "body": {"report": "daily"},
            },
        )
        due_now(job)
        run_all()
    run = only_run(job)
    assert run.status == RunStatus.SUCCESS, run.log
    (request,) = server["requests"]
    assert request["method"] == "POST" and request["path"] == "/hook?x=1"
    assert json.loads(request["body"]) == {"report": "daily"}
    assert request["headers"]["Authorization"] == "Bearer very-secret-token"
    assert "HTTP 200 OK" in run.log and "hello from the server" in run.log
    assert "very-secret-token" not in run.log


@pytest.mark.parametrize(
    ("status", "arguments", "succeeded"),
    [
        (500, {}, False),
        (404, {"expect_status": [404]}, True),
        (200, {"expect_status": 201}, False),
        (302, {}, False),  # redirects are not followed
    ],
)
def test_an_http_job_fails_on_a_status_it_does_not_expect(settings, status, arguments, succeeded):
    settings.JOBS_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
    with http_server(status=status) as server:
        job = http_job(server["url"], arguments)
        due_now(job)
        run_all()
    run = only_run(job)
    assert (run.status == RunStatus.SUCCESS) is succeeded, run.log
    assert len(server["requests"]) == 1
    assert f"HTTP {status}" in run.log


def test_an_http_job_to_a_host_no_longer_allowed_is_refused_when_it_runs(settings):
    settings.JOBS_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
    with http_server() as server:
        job = http_job(server["url"])
        settings.JOBS_HTTP_ALLOWED_HOSTS = []
        assert "127.0.0.1 is not a public address" in job.execution_problem
        due_now(job)
        run_all()
        assert server["requests"] == []
    run = only_run(job)
    assert run.status == RunStatus.FAILED
    assert "refused: 127.0.0.1 is not a public address" in run.log


def test_live_logs_of_real_runs_are_written_while_they_run(settings):
    """A python run that prints, then waits: its first lines are in the database while
    it is still running (the pool's Heartbeater writes them)."""
    settings.JOBS_LIVE_LOG_SECONDS = 0.1
    job = python_job(
        "jobs.tests.sample_tasks.chatty", {"label": "LIVE", "lines": 40, "pause": 0.05}
    )
    due_now(job)
    scheduler = Scheduler(workers=1)
    seen_running: list[str] = []

    def watch() -> None:
        from django.db import connection as thread_connection

        try:
            for _ in range(200):
                row = JobHistory.objects.filter(job=job).values_list("status", "log").first()
                if row and row[0] == RunStatus.RUNNING and "LIVE print" in row[1]:
                    seen_running.append(row[1])
                    return
                threading.Event().wait(0.02)
        finally:
            thread_connection.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    scheduler.run_once()
    watcher.join(timeout=10)
    assert seen_running, "the log was never seen while the run was running"
    assert only_run(job).log.count("LIVE print") == 40


def test_a_run_ticket_carries_the_executor_and_arguments_through_every_statement():
    job = python_job("jobs.tests.sample_tasks.record", {"key": "k", "value": 1})
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())
    (claimed,) = engine.claim_due()
    assert (claimed.executor, claimed.arguments) == ("python", {"key": "k", "value": 1})
    (ready,) = engine.ready_tickets()
    assert (ready.executor, ready.arguments) == ("python", {"key": "k", "value": 1})
    assert engine.tickets_for([ready.run_key])[0].arguments == {"key": "k", "value": 1}
    simulated = make_job(name="sim")
    Job.objects.filter(pk=simulated.pk).update(next_run_at=timezone.now())
    (sim_ticket,) = engine.claim_due()
    assert (sim_ticket.executor, sim_ticket.arguments) == ("simulated", None)
    assert JobHistory.objects.get(pk=sim_ticket.run_id).arguments is None
    # The reaper's rows carry them too: a lost run is retried with its arguments.
    Job.objects.filter(pk=job.pk).update(max_retries=1)
    assert engine.start([ready], WORKER)
    JobHistory.objects.filter(pk=ready.run_id).update(
        heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    assert engine.reap() == 1
    retry = JobHistory.objects.get(job=job, attempt=2)
    assert retry.arguments == {"key": "k", "value": 1}
