"""What a run prints is stored without terminal escape sequences, whatever the executor:
colours, cursor moves, window titles and a bare carriage return (which rewrites a line on
a terminal) cannot make the log lie about itself, while newlines and tabs are kept. The
HTTP executor cleans the remote server's reason phrase and error text as webhooks do."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.utils import timezone

from jobs import text
from jobs.executors.output import RunOutput
from jobs.models import Job, JobHistory, RunStatus
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import make_job
from jobs.text import REMOTE_TEXT_MAX_CHARS

pytestmark = pytest.mark.django_db(transaction=True)

# Everything a terminal acts on besides printing, and that the log must not hold.
CONTROLS = [chr(code) for code in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]]


def run_once(job: Job) -> JobHistory:
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())
    Scheduler(workers=1).run_once()
    return JobHistory.objects.get(job=job)


def assert_clean(log: str) -> None:
    found = sorted({f"U+{ord(char):04X}" for char in log if char in CONTROLS})
    assert not found, (found, log)


# --- the one cleaning, in the output every executor writes to -------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[1;31mred\x1b[0m plain\n", "red plain\n"),
        ("\x1b]0;window title\x07after\n", "after\n"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "link\n"),
        ("tab\tkept\nline\n", "tab\tkept\nline\n"),
        ("crlf\r\nbare\rover\n", "crlf\nbare\nover\n"),
        ("bell\x07 back\x08space \x9b31mC1\x85 \x7fdel\n", "bell backspace C1 del\n"),
        # An OSC never closed hides no more than the rest of its line.
        ("\x1b]0;no end\nnext line\n", "\nnext line\n"),
        ("lone escape at the end \x1b", "lone escape at the end "),
    ],
)
def test_clean_output_drops_what_a_terminal_would_act_on_and_keeps_lines(raw, clean):
    assert text.clean_output(raw) == clean
    output = RunOutput(max_bytes=1000)
    output.write(raw.encode())
    assert output.text() == clean


def test_capped_output_full_of_escapes_stays_capped_and_clean():
    output = RunOutput(max_bytes=1000)
    for number in range(2000):
        output.write(f"\x1b[3{number % 8}mline {number}\x1b[0m\r\n")
    shown = output.text()
    assert len(shown.encode()) <= 1000
    assert "bytes of output left out" in shown
    assert shown.startswith("line 0\nline 1\n") and shown.endswith("line 1999\n")
    assert_clean(shown)


# --- shell: a real child printing escape sequences ----------------------------------------------


def test_a_shell_runs_escape_sequences_are_not_stored(settings):
    settings.JOBS_SHELL_ENABLED = True
    script = r"printf '\033[31mred\033[0m\tcell\r\nfake\rreal\n\033]0;title\007done\n'"
    job = make_job(name="colours", executor="shell", command=script, clean=True)
    run = run_once(job)
    assert run.status == RunStatus.SUCCESS, run.log
    assert run.log.splitlines()[1:-1] == ["red\tcell", "fake", "real", "done"]
    assert_clean(run.log)


# --- python: what a task prints and raises ------------------------------------------------------


def test_a_python_runs_traceback_with_escape_sequences_is_stored_clean():
    job = make_job(
        name="raises",
        executor="python",
        command="jobs.tests.sample_tasks.fails",
        clean=True,
    )
    job.arguments = {"message": "\x1b[2J\x1b[Hwiped\rforged"}
    Job.objects.filter(pk=job.pk).update(arguments=job.arguments)
    run = run_once(job)
    assert run.status == RunStatus.FAILED
    assert "wiped\nforged" in run.log
    assert_clean(run.log)


# --- http: a real loopback server answering escape sequences ------------------------------------


@contextmanager
def raw_server(answer: bytes) -> Iterator[str]:
    """A loopback server that reads one request and answers `answer` as given."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/reason"
    finally:
        server.close()
        thread.join(timeout=5)


def http_run(url: str, settings) -> JobHistory:  # type: ignore[no-untyped-def]
    settings.JOBS_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
    job = make_job(name="remote", executor="http", command=url, clean=True)
    return run_once(job)


def test_an_http_reason_phrase_with_escape_sequences_is_logged_as_one_clean_line(settings):
    reason = b"\x1b[31mFAKE\x1b[0m\rINJECTED\x9b2J [2026-13-45 00:00:00 UTC] " + b"y" * 2000
    body = b"\x1b[1mbold\x1b[0m body\r\nsecond\tline\n"
    answer = (
        b"HTTP/1.1 500 " + reason + b"\r\nContent-Length: "
        + str(len(body)).encode() + b"\r\n\r\n" + body
    )  # fmt: skip
    with raw_server(answer) as url:
        run = http_run(url, settings)
    assert run.status == RunStatus.FAILED
    lines = run.log.splitlines()
    status = next(line for line in lines if line.startswith("HTTP "))
    assert status.startswith("HTTP 500 FAKE INJECTED [2026-13-45 00:00:00 UTC] yyy")
    assert len(status) <= len("HTTP 500 ") + REMOTE_TEXT_MAX_CHARS
    assert "bold body" in lines and "second\tline" in lines
    assert_clean(run.log)


def test_an_http_error_text_with_escape_sequences_is_logged_clean(settings):
    # Not a status line: http.client's error quotes what the server sent.
    with raw_server(b"\x1b[31mNOT HTTP\x1b[0m\rforged line\r\n\r\n") as url:
        run = http_run(url, settings)
    assert run.status == RunStatus.FAILED
    failed = next(line for line in run.log.splitlines() if line.startswith("failed: "))
    assert "NOT HTTP forged line" in failed
    assert_clean(run.log)


# --- command: a real management command in a child process, coloured by force ----------------


def test_a_command_runs_coloured_output_is_stored_without_its_escape_sequences():
    # The deployment checks warn in the tests' settings; --force-color colours them.
    job = make_job(
        name="coloured", executor="command", command="check --deploy --force-color", clean=True
    )
    run = run_once(job)
    assert "System check identified some issues" in run.log
    assert "WARNINGS:" in run.log
    assert_clean(run.log)
