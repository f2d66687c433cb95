"""Child processes of shell and command runs: started alone, read, and stopped whole.

On Linux each command is started by a supervisor (jobs/executors/supervisor.py) that
leads a process group of its own (a new session) and stays the ancestor of everything
the command starts, even what calls ``setsid`` or double-forks. Stopping a run
(cancel, timeout, shutdown), the command's own exit and this process's death (even by
SIGKILL) all end the whole tree: SIGTERM, then SIGKILL to whatever is left after
JOBS_KILL_GRACE_SECONDS. The run's host and process group are given to the run's
context (recorded on the run), so that the reaper can kill what is left if the
supervisor itself was killed.

Elsewhere (no /proc, no prctl) the command itself leads the process group, which is
stopped the same way; what leaves the group (``setsid``) escapes it there.

Output (stdout and stderr, merged) is read as it comes into the run's RunOutput; stdin
is closed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from jobs import conf
from jobs.executors.base import STOP_DEADLINE, STOP_SHUTDOWN, ExecutionContext, stop_words
from jobs.executors.leftovers import RUN_MARKER
from jobs.executors.output import RunOutput
from jobs.runs import ProcessGroup

SUPERVISOR = Path(__file__).with_name("supervisor.py")
# How long the supervisor may take to start (a Python interpreter without site packages).
START_SECONDS = 30.0
# How long past the kill grace a supervisor may take to end its tree before its group is
# killed from here.
SUPERVISOR_MARGIN_SECONDS = 5.0

# How often the reading loop looks at the run's stop signal while the child is quiet.
POLL_SECONDS = 0.1
# After the child itself has exited, how long what it started may keep its output open
# before the rest of its group is stopped.
LINGER_SECONDS = 0.5
_READ_SIZE = 65536


# The children running now, by process group: stopped when this process exits (a Huey
# worker ending past its shutdown timeout), since they are in sessions of their own and
# would outlive it. When this process is killed with SIGKILL, each supervisor stops its
# tree (PR_SET_PDEATHSIG); without a supervisor the groups are left to the reaper and
# the service manager (docs/deployment.md).
_running: dict[int, subprocess.Popen] = {}
_running_lock = threading.Lock()


def _stop_all_at_exit() -> None:
    with _running_lock:
        children = list(_running.values())
    if _supervised:
        # Each supervisor stops its whole tree on SIGTERM, and again when this process is
        # gone (its parent-death signal): killing them from here would only cut that short.
        for child in children:
            _signal(child.pid, signal.SIGTERM)
        return
    for child in children:
        _signal_group(child.pid, signal.SIGTERM)
    ends = time.monotonic() + min(kill_grace(), 2.0)
    while time.monotonic() < ends and any(group_alive(c.pid) for c in children):
        for child in children:
            child.poll()
        time.sleep(0.05)
    for child in children:
        _signal_group(child.pid, signal.SIGKILL)


atexit.register(_stop_all_at_exit)


def kill_grace() -> float:
    return conf.kill_grace()


def supervised() -> bool:
    """Whether runs' processes are started by the supervisor here (Linux, /proc)."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self")


_supervised = supervised()


class Finished(NamedTuple):
    """How a child ended: its exit status (negative: the signal that ended it), and
    why it was stopped ("" when it ended by itself; a STOP_* value, or "deadline")."""

    returncode: int
    stopped: str


def run_child(
    argv: Sequence[str],
    *,
    output: RunOutput,
    context: ExecutionContext,
    deadline: float | None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    before_stop: Callable[[str], object] | None = None,
    run_key: str = "",
) -> Finished:
    """Run `argv` in a process group of its own until it ends, the run is stopped
    (`context.stop`) or `deadline` (time.monotonic()) passes; its output goes to
    `output`, its host and process group to `context.set_processes`. `before_stop(why)`
    is called before a stopped run's processes are signalled. `run_key` marks the
    environment of every process of the run (leftovers.RUN_MARKER). Raises OSError when
    it cannot be started (no such program, ...)."""
    if run_key:
        env = {**(os.environ if env is None else env), RUN_MARKER: run_key}
    child = _start(argv, env=env, cwd=cwd)
    with _running_lock:
        _running[child.pid] = child
    try:
        context.set_processes(ProcessGroup(socket.gethostname(), child.pid))
        return _follow(
            child, output=output, context=context, deadline=deadline, before_stop=before_stop
        )
    finally:
        with _running_lock:
            _running.pop(child.pid, None)


def _start(
    argv: Sequence[str], *, env: Mapping[str, str] | None, cwd: str | None
) -> subprocess.Popen:
    """The child leading the run's process group: the supervisor of `argv` on Linux
    (once it has started `argv`), else `argv` itself."""
    common = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
        "env": dict(env) if env is not None else None,
        "cwd": cwd,
        "start_new_session": True,  # its own session and process group
        "close_fds": True,
    }
    if not _supervised:
        return subprocess.Popen(list(argv), **common)
    status_read, status_write = os.pipe()
    try:
        child = subprocess.Popen(
            [
                sys.executable,
                "-I",  # no user site, no PYTHON* variables of the job's env
                "-S",  # no site packages: the supervisor imports the standard library only
                str(SUPERVISOR),
                str(os.getpid()),
                f"{kill_grace():g}",
                str(status_write),
                "--",
                *argv,
            ],
            pass_fds=(status_write,),
            **common,
        )
    finally:
        os.close(status_write)
    with os.fdopen(status_read, "rb") as status:
        # One line: "started PID", or "error ERRNO MESSAGE" when argv could not start.
        ready = selectors.DefaultSelector()
        ready.register(status, selectors.EVENT_READ)
        line = status.readline() if ready.select(START_SECONDS) else b""
        ready.close()
    word, _, rest = line.decode(errors="replace").strip().partition(" ")
    if word == "started":
        return child
    _kill_supervisor(child)
    if word == "error":
        number, _, message = rest.partition(" ")
        raise OSError(int(number) if number.isdigit() else 0, message)
    raise OSError(0, "the process supervisor did not start")


def _kill_supervisor(child: subprocess.Popen) -> None:
    _signal_group(child.pid, signal.SIGKILL)
    child.wait()
    if child.stdout is not None:
        child.stdout.close()


def _follow(
    child: subprocess.Popen,
    *,
    output: RunOutput,
    context: ExecutionContext,
    deadline: float | None,
    before_stop: Callable[[str], object] | None = None,
) -> Finished:
    """Read the child's output until it ends or must stop; stop its group."""
    stopped = ""
    exited_at: float | None = None
    assert child.stdout is not None
    stream = child.stdout
    os.set_blocking(stream.fileno(), False)
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        open_pipe = True
        # Until the child has exited and its output has ended (or must stop). The end
        # of the output alone is not the end: a child may close its stdout and go on,
        # and it closes it a moment before it is gone.
        while True:
            if context.stop.is_set():
                stopped = context.reason or STOP_SHUTDOWN
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                stopped = STOP_DEADLINE
                break
            if exited_at is None and child.poll() is not None:
                exited_at = now
            if exited_at is not None and (not open_pipe or now - exited_at > LINGER_SECONDS):
                break  # done; what it left running (holding the pipe) is stopped below
            wait = max(POLL_SECONDS if deadline is None else min(POLL_SECONDS, deadline - now), 0)
            if open_pipe:
                for _key, _events in selector.select(wait):
                    open_pipe = _read_available(stream, output)
                if not open_pipe:
                    selector.unregister(stream)
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(timeout=wait)
    if stopped:
        if before_stop is not None:
            before_stop(stopped)
        output.line(f"[stopping process group {child.pid}: {stop_words(stopped)}]")
    stop_group(child, output)
    with contextlib.suppress(OSError, ValueError):
        _read_available(stream, output)
        stream.close()
    return Finished(child.returncode, stopped)


def _read_available(stream, output: RunOutput) -> bool:  # type: ignore[no-untyped-def]
    """Read what the pipe holds now; False at its end."""
    while True:
        try:
            data = os.read(stream.fileno(), _READ_SIZE)
        except BlockingIOError:
            return True
        if not data:
            return False
        output.write(data)
        if len(data) < _READ_SIZE:
            return True


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is left (a zombie not yet reaped counts)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_group(child: subprocess.Popen, output: RunOutput | None = None) -> None:
    """End the child and every process it started: SIGTERM, then SIGKILL after
    JOBS_KILL_GRACE_SECONDS for what is still there. Reaps the child.

    A supervisor is asked with one SIGTERM: it stops its whole tree itself (and says so
    in the output); only if it is still there well past the grace is its group killed
    from here."""
    pgid = child.pid
    if _supervised:
        if child.poll() is None:
            _signal(pgid, signal.SIGTERM)
            try:
                child.wait(timeout=kill_grace() + SUPERVISOR_MARGIN_SECONDS)
            except subprocess.TimeoutExpired:
                # Not reaped yet, so the group id is still the supervisor's.
                if output is not None:
                    output.line(f"[process supervisor {pgid} did not end: SIGKILL to its group]")
                _signal_group(pgid, signal.SIGKILL)
        child.wait()
        return
    if child.poll() is None or group_alive(pgid):
        _signal_group(pgid, signal.SIGTERM)
        ends = time.monotonic() + kill_grace()
        while time.monotonic() < ends:
            child.poll()
            if not group_alive(pgid):
                break
            time.sleep(0.02)
        else:
            if output is not None:
                output.line(
                    f"[process group {pgid} still running {kill_grace():g} s after SIGTERM: "
                    "SIGKILL]"
                )
            _signal_group(pgid, signal.SIGKILL)
    child.wait()


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
