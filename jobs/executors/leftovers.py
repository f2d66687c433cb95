"""What is left of a lost run's processes on this host: found and killed before its retry.

A run's processes normally end with it (jobs/executors/supervisor.py). When the
supervisor itself was killed with its worker (a SIGKILL to the whole session, the OOM
killer), what the command started may live on; the reaper, before it retries the run,
kills them here when the run was on this host. A process belongs to the run when it is
in the run's recorded process group or session, or when its environment holds the run's
marker (JOBS_RUN, set for every child of a run: found even after ``setsid``); and only
if it started after the run did, so that an id the system has since given to another
process is never taken for the run's.

Linux only (/proc); elsewhere nothing is found.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from datetime import datetime
from typing import NamedTuple

# The variable every child of a run has in its environment (jobs/executors/processes.py).
RUN_MARKER = "JOBS_RUN"
# How much earlier than the run's start (clock steps, rounding) a process may have
# started and still be taken for one of the run's.
START_SLACK_SECONDS = 2.0
KILL_ROUNDS = 100
ROUND_SECONDS = 0.02


class Killed(NamedTuple):
    """The processes killed, by pid, and the program each was running."""

    pids: tuple[int, ...]
    names: tuple[str, ...]


def _boot_time() -> float:
    with open("/proc/stat", "rb") as stat:
        for line in stat:
            if line.startswith(b"btime "):
                return float(line.split()[1])
    return 0.0


class _Process(NamedTuple):
    pid: int
    name: str
    group: int
    session: int
    started: float  # seconds since the epoch


def _processes() -> list[_Process]:
    found = []
    boot = _boot_time()
    ticks = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                raw = stat.read()
        except OSError:
            continue
        head, _, tail = raw.rpartition(b")")
        fields = tail.split()
        if len(fields) < 20 or fields[0] == b"Z":
            continue  # a zombie is dead already: its parent collects it
        name = head.partition(b"(")[2].decode(errors="replace")
        started = boot + int(fields[19]) / ticks
        found.append(_Process(int(entry), name, int(fields[2]), int(fields[3]), started))
    return found


def _has_marker(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return marker in environ.read().split(b"\0")
    except OSError:
        return False  # gone, or another user's (not ours to kill)


def find(group: int | None, run_key: str, since: datetime) -> list[_Process]:
    """The live processes of the run: in process group or session `group`, or marked
    with `run_key`; started no earlier than `since` (less START_SLACK_SECONDS)."""
    if not os.path.isdir("/proc/self"):
        return []
    marker = f"{RUN_MARKER}={run_key}".encode()
    earliest = since.timestamp() - START_SLACK_SECONDS
    me = os.getpid()
    return [
        process
        for process in _processes()
        if process.pid != me
        and process.started >= earliest
        and (
            (group is not None and group in (process.group, process.session))
            or _has_marker(process.pid, marker)
        )
    ]


def kill(group: int | None, run_key: str, since: datetime) -> Killed:
    """SIGKILL every process of the run left on this host (see find), until none is left
    (a process may fork while it is being killed); the ones killed."""
    pids: dict[int, str] = {}
    for _ in range(KILL_ROUNDS):
        left = find(group, run_key, since)
        if not left:
            break
        for process in left:
            pids.setdefault(process.pid, process.name)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(process.pid, signal.SIGKILL)
        time.sleep(ROUND_SECONDS)
    return Killed(tuple(pids), tuple(pids.values()))
