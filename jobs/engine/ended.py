"""What follows the end of runs, wherever they ended: a worker's finish, or a reaper's
verdict on a run whose worker died or could not stop it.

One function, so that a change of policy (say, "a timed-out run does not chain") is made
once: the listeners are told (the alerts count failures in a row), the jobs record their
last outcome, failures are retried per policy, and final outcomes start their chains.
Called inside the transaction that wrote the runs' end.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from jobs.engine import chains, events
from jobs.engine.rows import latest_per_job, retry_runs
from jobs.runs import RunResult
from jobs.sql.base import Operations, Store
from jobs.sql.rows import JobOutcome


def runs_ended(
    s: Store,
    ops: Operations,
    results: Sequence[RunResult],
    outcomes: Sequence[JobOutcome],
    now: datetime,
    chaining: Sequence[str] | None = None,
) -> None:
    """Act on the end of `results`, whose rows `ops` has just written.

    `outcomes` are the jobs' new last outcomes, one per job (engine.rows.latest_per_job).
    `chaining` names the jobs known to have chains (read outside the transaction on the
    hot path, chains.lookup); None reads them from the causes here, as the rare reapers do.
    """
    events.runs_finished(ops, results)
    ops.record_on_jobs(outcomes)
    retries = retry_runs(s, ((r.ticket, r.finished_at) for r in results if not r.succeeded))
    if retries:
        ops.insert_retry_runs(retries)
    if chaining is not None and not chaining:
        return
    found = chains.causes(results)
    if found:
        job_keys = chaining if chaining is not None else list({c.job_key for c in found})
        chains.start(ops, found, job_keys, now)


def job_outcomes(s: Store, results: Sequence[RunResult], status: str) -> list[JobOutcome]:
    """The last outcome per job of `results`, all ended with `status` (the reapers')."""
    dt = s.adapt_datetime
    return latest_per_job(
        JobOutcome(dt(r.started_at), status, r.ticket.job_key, dt(r.started_at)) for r in results
    )
