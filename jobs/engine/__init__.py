"""The run engine: the only code that changes the state of runs.

claim -> start -> finish (-> retry), and reap, as the README's "How a run flows" tells it:
- claim.py: due jobs become pending runs (overlap.py: the forbid and replace policies);
- lifecycle.py: start, heartbeat, release, finish and the retries of failures;
- reap.py: runs whose worker died or that are long past their timeout;
- ended.py: what follows the end of runs, however they ended (listeners, the job's
  record, the retry, the chains): one function for finish and both reapers;
- work.py: ready runs for the workers, hand-outs to Huey, when to wake up;
- slots.py: queues with a limit (JOBS_QUEUE_LIMITS): starts that count, and taking the
  best waiting run when a slot frees;
- actions.py: what operators do (run now, retry, cancel; run now within its quota);
- enqueue.py: enqueued Django tasks (jobs.tasks_backend): their jobs, runs and results;
- live.py: the output so far of running runs (the live log);
- pause.py: pausing the whole scheduler and resuming it (maintenance mode).

The engine never sees SQL or the database vendor: it calls the operations of the store
(jobs/sql) inside the store's transactions. It tells the rest of the app that runs
finished through events.py. Ids travel as 32-digit hex strings ("keys") and datetimes are
adapted once per distinct value: profiling a 10,000-run burst showed UUID objects and
Django's per-value adapters costing more than the SQL they fed.
"""

from jobs.engine.actions import (
    CancelRefused,
    RetryRefused,
    cancel_run,
    retry_run,
    run_now,
)
from jobs.engine.backfill import Backfill, BackfillRefused, already_run, backfill
from jobs.engine.backfill import occurrences as backfill_occurrences
from jobs.engine.claim import ClaimedRuns, StartNow, claim_due, claim_due_starting
from jobs.engine.enqueue import enqueue_again
from jobs.engine.lifecycle import finish, heartbeat, release, start
from jobs.engine.live import write_live_logs
from jobs.engine.pause import pause, pause_window, resume, settle_expired
from jobs.engine.reap import reap
from jobs.engine.slots import free_slots, take
from jobs.engine.work import (
    Wake,
    dispatch_ready,
    mark_dispatched,
    next_wake_at,
    ready_tickets,
    running_among,
    tickets_for,
    undispatch,
    wake_up,
)
from jobs.models.quotas import ManualRunsExceeded

__all__ = [
    "Backfill",
    "BackfillRefused",
    "CancelRefused",
    "ClaimedRuns",
    "ManualRunsExceeded",
    "RetryRefused",
    "StartNow",
    "Wake",
    "already_run",
    "backfill",
    "backfill_occurrences",
    "cancel_run",
    "claim_due",
    "claim_due_starting",
    "dispatch_ready",
    "enqueue_again",
    "finish",
    "free_slots",
    "heartbeat",
    "mark_dispatched",
    "next_wake_at",
    "pause",
    "pause_window",
    "ready_tickets",
    "reap",
    "release",
    "resume",
    "retry_run",
    "run_now",
    "running_among",
    "settle_expired",
    "start",
    "take",
    "tickets_for",
    "undispatch",
    "wake_up",
    "write_live_logs",
]
