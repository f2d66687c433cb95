"""A run's processes in the database: where they are, and what is left when it is lost.

A worker records the host and process group of a run's processes as soon as it starts
them (record_processes). When the reaper fails a run whose worker died, and the run's
processes were on this host, it first kills what is left of them and removes the run's
work directory (clear), so that the retry never runs beside the lost attempt; the run's
log says what was killed. A run lost on another host is left to that host's reaper
(the retry may then start on any host: the deployment docs say which unit settings end
a dead scheduler's processes with it).
"""

from __future__ import annotations

import logging
import socket
from datetime import datetime

from jobs.engine.work import running_among
from jobs.executors import leftovers
from jobs.executors.shell import remove_work_directory, work_directories
from jobs.runs import ProcessGroup
from jobs.sql import store
from jobs.sql.base import Operations
from jobs.sql.rows import LostRun

logger = logging.getLogger("jobs.engine")

# The most killed processes a run's log names one by one.
SHOWN_MAX = 20


def record_processes(run_key: str, worker: str, processes: ProcessGroup) -> bool:
    """Record where a running run's processes are, while `worker` still runs it."""
    with store().transaction() as ops:
        return ops.record_processes(run_key, worker, processes.host, processes.group)


def note(run_key: str, text: str) -> str | None:
    """Add `text` to the end of a run's log, whatever its status; the key of its job
    (None: the run is gone)."""
    with store().transaction() as ops:
        return ops.append_run_log(run_key, text)


def clear(ops: Operations, run: LostRun, now: datetime) -> str:
    """Kill what is left of a lost run's processes and remove its work directory, when
    they were on this host; the log line saying what was done ("" when nothing was)."""
    if not run.process_host or run.process_host != socket.gethostname():
        return ""
    since = run.started_at or now
    killed = leftovers.kill(run.process_group, run.ticket.run_key, since)
    removed = remove_work_directory(run.ticket.run_key)
    parts = []
    if killed.pids:
        named = list(zip(killed.pids, killed.names, strict=True))
        shown = ", ".join(f"{pid} ({name})" for pid, name in named[:SHOWN_MAX])
        if len(named) > SHOWN_MAX:
            shown += f" and {len(named) - SHOWN_MAX} more"
        parts.append(
            f"killed {len(killed.pids)} process(es) left on {run.process_host} "
            f"(process group {run.process_group}): {shown}"
        )
        logger.warning(
            "run %s of job %r: killed %d leftover process(es) before its retry",
            run.ticket.run_id,
            run.ticket.job_name,
            len(killed.pids),
        )
    if removed:
        parts.append("removed its work directory")
    if not parts:
        return ""
    line = f"\n[{now:%Y-%m-%d %H:%M:%S} UTC] {'; '.join(parts)}."
    ops.append_run_log(run.ticket.run_key, line)
    return line


def sweep_work_directories() -> int:
    """Remove this user's work directories on this host whose run is not running (left
    by a worker that died; the reaper removes those of the runs it reaps here, this at a
    scheduler's start catches the rest). Returns how many were removed."""
    keys = work_directories()
    if not keys:
        return 0
    running = running_among(keys)
    gone = [key for key in keys if key not in running]
    for key in gone:
        remove_work_directory(key)
    return len(gone)
