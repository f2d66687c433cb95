"""Child processes of shell and command runs: started alone, read, and stopped whole.

Each child leads a process group of its own (a new session), so that stopping a run
ends what it started too: SIGTERM to the group, then SIGKILL to whatever is left after
JOBS_KILL_GRACE_SECONDS. Output (stdout and stderr, merged) is read as it comes into the
run's RunOutput; stdin is closed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from jobs import conf
from jobs.executors.base import STOP_DEADLINE, STOP_SHUTDOWN, ExecutionContext, stop_words
from jobs.executors.output import RunOutput

# How often the reading loop looks at the run's stop signal while the child is quiet.
POLL_SECONDS = 0.1
# After the child itself has exited, how long what it started may keep its output open
# before the rest of its group is stopped.
LINGER_SECONDS = 0.5
_READ_SIZE = 65536


# The children running now, by process group: stopped when this process exits (a Huey
# worker ending past its shutdown timeout), since they are in sessions of their own and
# would outlive it. A process killed with SIGKILL leaves them: its runs are reaped, and
# their groups must be stopped by the service manager (docs/deployment.md).
_running: dict[int, subprocess.Popen] = {}
_running_lock = threading.Lock()


def _stop_all_at_exit() -> None:
    with _running_lock:
        children = list(_running.values())
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
    return float(conf.setting("JOBS_KILL_GRACE_SECONDS"))


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
) -> Finished:
    """Run `argv` in a process group of its own until it ends, the run is stopped
    (`context.stop`) or `deadline` (time.monotonic()) passes; its output goes to
    `output`. Raises OSError when it cannot be started (no such program, ...)."""
    child = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=True,  # its own session and process group
        close_fds=True,
    )
    with _running_lock:
        _running[child.pid] = child
    try:
        return _follow(child, output=output, context=context, deadline=deadline)
    finally:
        with _running_lock:
            _running.pop(child.pid, None)


def _follow(
    child: subprocess.Popen,
    *,
    output: RunOutput,
    context: ExecutionContext,
    deadline: float | None,
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
    """End the child and every process of its group: SIGTERM, then SIGKILL after
    JOBS_KILL_GRACE_SECONDS for what is still there. Reaps the child."""
    pgid = child.pid
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


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
