"""Reaping: runs whose worker died, and runs still going long after their timeout."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.utils import timezone

from jobs import conf
from jobs.engine import leftovers
from jobs.engine.ended import job_outcomes, runs_ended
from jobs.kinds import resumes_lost_runs
from jobs.models import RunStatus
from jobs.runs import RunResult
from jobs.sql import store
from jobs.sql.base import Operations
from jobs.sql.rows import LostRun

logger = logging.getLogger("jobs.engine")

_FAILED = RunStatus.FAILED.value


def reap(now: datetime | None = None, *, limit: int = 500) -> int:
    """Fail runs whose worker stopped heartbeating (it died), and runs still going long
    after their timeout (their worker could not stop them); retry them per policy.

    Returns how many runs were reaped.
    """
    now = now or timezone.now()
    return _reap_lost(now, limit) + _reap_overdue(now, limit)


def _reap_lost(now: datetime, limit: int) -> int:
    """Fail runs whose worker stopped heartbeating (it died), after killing what is left
    of their processes on this host (jobs/engine/leftovers.py)."""
    lease = conf.lease()
    s = store()
    dt = s.adapt_datetime
    db_now = dt(now)
    db_cutoff = dt(now - lease)
    with s.transaction() as ops:
        stuck = ops.lost_runs(db_cutoff, limit)
        if not stuck:
            return 0
        resumed = _hand_back_resumable(
            ops, [r for r in stuck if resumes_lost_runs(r.ticket.executor)]
        )
        stuck = [run for run in stuck if not resumes_lost_runs(run.ticket.executor)]
        if not stuck:
            return resumed
        note = (
            f"\n[{now:%Y-%m-%d %H:%M:%S} UTC] worker lost: no heartbeat for "
            f"{lease.total_seconds():g} s; the run is marked failed."
        )
        reaped = ops.fail_lost_runs([run.ticket.run_key for run in stuck], db_now, note, db_cutoff)
        lost = [run for run in stuck if run.ticket.run_key in reaped]
        # Before the retries exist (this transaction): what the lost attempts left on this
        # host must not run beside them.
        for run in lost:
            leftovers.clear(ops, run, now)
        for run in lost:
            logger.warning(
                "run %s of job %r lost its worker %s (last heartbeat %s); marked failed",
                run.ticket.run_id,
                run.ticket.job_name,
                run.worker,
                run.heartbeat_at,
            )
        results = [RunResult(run.ticket, False, note, run.started_at or now, now) for run in lost]
        runs_ended(s, ops, results, job_outcomes(s, results, _FAILED), now)
    return len(lost) + resumed


def _hand_back_resumable(ops: Operations, lost: list[LostRun]) -> int:
    """Lost runs of a kind whose work goes on elsewhere (a Celery task: jobs.kinds'
    ``resumes_lost_runs``), back to pending as they are: the next worker to run one
    follows the same work rather than starting it again, and no retry is made. The
    rows are locked by lost_runs, so the worker each names is still the one lost."""
    by_worker: dict[str, list[str]] = {}
    for run in lost:
        by_worker.setdefault(run.worker, []).append(run.ticket.run_key)
    handed_back = 0
    for worker, keys in by_worker.items():
        handed_back += ops.release_runs(keys, worker)
    for run in lost:
        logger.warning(
            "run %s of job %r lost its worker %s (last heartbeat %s); handed back for the "
            "next worker to follow its work",
            run.ticket.run_id,
            run.ticket.job_name,
            run.worker,
            run.heartbeat_at,
        )
    return handed_back


def _reap_overdue(now: datetime, limit: int) -> int:
    """Fail running runs that are still going a lease after their timeout.

    A worker stops a run at its timeout (the worker's Heartbeater sets the run's stop).
    An executor that ignores the stop keeps its thread busy, and the worker, alive,
    keeps the run's heartbeat fresh; so the run would never end. Here it is failed (and
    retried per policy) once started_at + timeout + JOBS_LEASE_SECONDS has passed; if
    the executor returns after that, finish() finds the run no longer its own and
    leaves it.

    Reads the running runs of jobs with a timeout (as many as are running) every reap,
    outside any write transaction; writes only when one is overdue, each with a
    conditional update.
    """
    lease = conf.lease()
    s = store()
    with s.reading() as ops:
        candidates = ops.timed_runs(limit)
    overdue = [
        run
        for run in candidates
        if run.started_at + timedelta(seconds=run.ticket.timeout_seconds) + lease < now
    ]
    if not overdue:
        return 0
    db_now = s.adapt_datetime(now)
    with s.transaction() as ops:
        timed_out = []
        for run in overdue:
            note = (
                f"\n[{now:%Y-%m-%d %H:%M:%S} UTC] timed out: still running "
                f"{(now - run.started_at).total_seconds():.0f} s after it started, past its "
                f"timeout of {run.ticket.timeout_seconds} s, and its worker could not stop "
                "it; the run is marked failed.\n"
            )
            if ops.fail_running_run(run.ticket.run_key, db_now, note):
                timed_out.append(run)
        for run in timed_out:
            logger.warning(
                "run %s of job %r is past its timeout of %d s and its worker did not stop it; "
                "marked failed",
                run.ticket.run_id,
                run.ticket.job_name,
                run.ticket.timeout_seconds,
            )
        # Failed runs like any other: the alerts count them (failed runs in a row), the
        # job records it, the retry and the on_failure chains follow.
        results = [RunResult(run.ticket, False, "", run.started_at, now) for run in timed_out]
        runs_ended(s, ops, results, job_outcomes(s, results, _FAILED), now)
    return len(timed_out)
