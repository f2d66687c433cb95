"""Overlap policies: what a claimed occurrence does while its job has runs in flight.

forbid: while the job has a pending or running run, each occurrence is recorded as
skipped; otherwise the earliest runs and the later ones of the same claim (which would
overlap it) are skipped. replace: the latest occurrence runs; the job's pending and
running runs are cancelled, and earlier occurrences of the same claim skipped. "Run now"
and retries are explicit and not subject to the policy; a scheduled occurrence that
comes while they are pending or running is.

Kept apart from the claim's hot loop: a batch with jobs that forbid or replace pays one
more SELECT, for those jobs only, and writes only when there is something to skip or
cancel.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from jobs.models import OverlapPolicy, RunStatus
from jobs.runs import new_key
from jobs.sql.base import Operations
from jobs.sql.rows import JobStatus, Replacement, SkippedRun

_FORBID = OverlapPolicy.FORBID.value
_SKIPPED = RunStatus.SKIPPED.value
_CANCELLED = RunStatus.CANCELLED.value


class PolicyHolder(Protocol):
    """What the policies read of a job: a claimed DueJob, or a job a chain starts."""

    @property
    def key(self) -> str: ...

    @property
    def overlap_policy(self) -> str: ...

    @property
    def queue(self) -> str: ...

    @property
    def priority(self) -> int: ...


class Guarded(NamedTuple):
    """A job whose overlap policy must look at its runs before it runs again: claimed, or
    started by a chain (jobs/engine/chains.py)."""

    job: PolicyHolder
    run_at: tuple[datetime, ...]


@dataclass(slots=True)
class OverlapPlan:
    db_now: object  # the claim's time, adapted: when skipped and cancelled runs finish
    skipped: list[SkippedRun] = field(default_factory=list)
    replaced: list[Replacement] = field(default_factory=list)


def plan(
    ops: Operations,
    guarded: Sequence[Guarded],
    add_run: Callable[[Any, datetime], str],
    now: datetime,
) -> OverlapPlan:
    """Decide the occurrences of jobs that forbid or replace overlapping runs.

    `add_run(job, scheduled_for)` adds a run to the claim (or the chain) and returns its
    key; `job` is the Guarded's own.
    """
    active = ops.active_runs([g.job.key for g in guarded])
    decided = OverlapPlan(ops.store.adapt_datetime(now))
    stamp = f"[{now:%Y-%m-%d %H:%M:%S} UTC]"
    for job, run_at in guarded:
        held = active.get(job.key, [])
        if job.overlap_policy == _FORBID:
            if held:
                reason = f"its run {uuid.UUID(hex=held[0].key)} is still {held[0].status}"
                to_run, to_skip = (), run_at
            else:
                reason = f"the run for {run_at[0]:%Y-%m-%d %H:%M:%S} UTC is still pending"
                to_run, to_skip = run_at[:1], run_at[1:]
            note = f"{stamp} skipped: {reason} (overlap policy: forbid).\n"
        else:
            to_run, to_skip = run_at[-1:], run_at[:-1]
            note = (
                f"{stamp} skipped: replaced by the run for {to_run[0]:%Y-%m-%d %H:%M:%S} UTC "
                "(overlap policy: replace).\n"
            )
        for scheduled_for in to_skip:
            decided.skipped.append(
                SkippedRun(new_key(), job.key, scheduled_for, note, job.queue, job.priority)
            )
        for scheduled_for in to_run:
            key = add_run(job, scheduled_for)
            if job.overlap_policy != _FORBID:
                cancel_note = (
                    f"\n{stamp} cancelled: replaced by the run for "
                    f"{scheduled_for:%Y-%m-%d %H:%M:%S} UTC (overlap policy: replace).\n"
                )
                for old in held:
                    decided.replaced.append(Replacement(old.key, job.key, cancel_note, key))
    return decided


def apply(ops: Operations, decided: OverlapPlan, inserted: set[str]) -> None:
    """Write what plan() decided, in the claim's transaction.

    Skipped occurrences become finished runs (a second claim of the same occurrence adds
    nothing: the unique constraint). Runs are cancelled for a replacement only if this
    claim created the replacement, and only if they are still pending or running.
    """
    s = ops.store
    db_now = decided.db_now
    statuses: list[JobStatus] = []
    if decided.skipped:
        ops.insert_skipped_runs(decided.skipped, db_now)
        statuses += [
            JobStatus(_SKIPPED, run.job_key, s.adapt_datetime(run.scheduled_for))
            for run in decided.skipped
        ]
    statuses += cancel_replaced(ops, decided, inserted)
    ops.record_status_on_jobs(statuses)


def cancel_replaced(ops: Operations, decided: OverlapPlan, inserted: set[str]) -> list[JobStatus]:
    """Cancel the runs that inserted replacements replace (if still pending or running);
    returns the cancellations as their jobs' latest outcome, for record_status_on_jobs."""
    replaced = [row for row in decided.replaced if row.new_key in inserted]
    if replaced:
        ops.cancel_replaced(replaced, decided.db_now)
    return [JobStatus(_CANCELLED, row.job_key, decided.db_now) for row in replaced]
