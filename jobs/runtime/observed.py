"""The one hook through which the worker shows its runs to the tools a team watches.

`watcher()` is asked once per batch. It is None when nothing watches (no JSON log
formatter configured, JOBS_OTEL and JOBS_SENTRY_CRONS off): the worker then pays one
global read per batch. Otherwise a `RunWatcher` reads, once per batch, what the tickets
do not carry (the runs' trigger and their cause's traceparent, the jobs' schedules for
Sentry) and wraps each run: the run in the JSON log lines' context, inside its span, between
its check-ins.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from django.core.signals import setting_changed

from jobs import conf
from jobs.executors import STOP_TIMEOUT, ExecutionContext, Executor
from jobs.models import Job, JobHistory, Trigger
from jobs.observability import context, traceparent
from jobs.runs import RunResult, RunTicket

logger = logging.getLogger(__name__)

# A job's monitor config is read again after this long (an edited schedule shows then).
MONITOR_CACHE_SECONDS = 60.0

# worker.execute: how a run is executed, inside what watches it.
RunCall = Callable[[Executor, RunTicket, ExecutionContext], RunResult]


class RunWatcher:
    """Wraps the runs of one batch (see the module docstring)."""

    def __init__(self, tracing: bool, crons: bool) -> None:
        self.tracing = tracing
        self.crons = crons
        self._facts: dict[str, Any] = {}

    def batch(self, tickets: Sequence[RunTicket]) -> RunWatcher:
        if tickets:
            rows = JobHistory.objects.filter(pk__in=[t.run_key for t in tickets]).values_list(
                "pk", "trigger", "traceparent"
            )
            self._facts = {pk.hex: (trigger, parent) for pk, trigger, parent in rows}
        return self

    def run(
        self, call: RunCall, executor: Executor, ticket: RunTicket, execution: ExecutionContext
    ) -> RunResult:
        """`call(executor, ticket, execution)`, watched."""
        token = context.current_ticket.set(ticket)
        try:
            trigger = self._facts.get(ticket.run_key, ("", ""))[0]
            # A monitor's check-ins are its schedule's: a run now, a chained, enqueued or
            # backfilled run is not an occurrence Sentry expects (a retry finishes one).
            check_in = (
                _monitor_started(ticket) if self.crons and trigger in CHECKED_IN_TRIGGERS else None
            )
            if self.tracing:
                result = self._traced(ticket, execution, lambda: call(executor, ticket, execution))
            else:
                result = call(executor, ticket, execution)
            if check_in is not None:
                _monitor_finished(result, check_in)
            return result
        finally:
            context.current_ticket.reset(token)

    def _traced(
        self, ticket: RunTicket, execution: ExecutionContext, call: Callable[[], RunResult]
    ) -> RunResult:
        from jobs.observability import tracing

        facts = tracing.RunFacts(*self._facts.get(ticket.run_key, ("", "")))
        span = tracing.start_run_span(ticket, facts)
        result = tracing.run_in_span(span, call)
        # What a run it causes (a chain) keeps as its parent.
        result.traceparent = tracing.span_traceparent(span)
        timed_out = execution.reason == STOP_TIMEOUT or (
            ticket.timeout_seconds is not None
            and (result.finished_at - result.started_at).total_seconds() > ticket.timeout_seconds
        )
        tracing.end_run_span(span, result, execution.reason, timed_out)
        return result


# The runs that check in to their job's Sentry Crons monitor.
CHECKED_IN_TRIGGERS = frozenset({Trigger.SCHEDULE, Trigger.RETRY})

_UNSET: Any = object()
_watcher: RunWatcher | None = _UNSET


def watcher() -> RunWatcher | None:
    """The hook (None: nothing watches runs), decided once per settings."""
    global _watcher
    if _watcher is _UNSET:
        tracing = traceparent.tracing_on()
        crons = _crons_on()
        wanted = tracing or crons or context.log_fields_wanted()
        _watcher = RunWatcher(tracing, crons) if wanted else None
    return None if _watcher is None else RunWatcher(_watcher.tracing, _watcher.crons)


def forget(**kwargs: Any) -> None:
    """Decide again (a setting changed, a JSON formatter was configured)."""
    global _watcher
    _watcher = _UNSET
    _monitors.clear()


setting_changed.connect(forget, dispatch_uid="jobs.runtime.observed.forget")
context.on_wanted(forget)


@contextlib.contextmanager
def pass_span(name: str) -> Iterator[Any]:
    """A span around a part of the scheduler's pass when tracing is on; else nothing."""
    if not traceparent.tracing_on():
        yield None
        return
    from jobs.observability import tracing

    with tracing.pass_span(name) as span:
        yield span


# --- Sentry Crons ------------------------------------------------------------------------


def _crons_on() -> bool:
    if not conf.sentry_crons_enabled():
        return False
    try:
        import sentry_sdk  # noqa: F401
    except ImportError:
        return False
    return True


# job key -> (when read, time.monotonic(); its monitor_config or None)
_monitors: dict[str, tuple[float, dict[str, Any] | None]] = {}


def _monitor_config(job_key: str) -> dict[str, Any] | None:
    from jobs.observability import sentry_crons

    cached = _monitors.get(job_key)
    now = time.monotonic()
    if cached is not None and now - cached[0] < MONITOR_CACHE_SECONDS:
        return cached[1]
    row = Job.objects.filter(pk=job_key).values_list(*sentry_crons.MonitorSchedule._fields).first()
    config = None
    if row is not None:
        schedule = sentry_crons.MonitorSchedule(*row)
        config = sentry_crons.monitor_config(schedule, conf.misfire_grace().total_seconds())
    _monitors[job_key] = (now, config)
    return config


def _monitor_started(ticket: RunTicket) -> str | None:
    """The in-progress check-in of a run of a scheduled job ("" when its job has no
    monitor); None when the check-in could not be made."""
    from jobs.observability import sentry_crons

    try:
        config = _monitor_config(ticket.job_key)
        if config is None:
            return None
        return sentry_crons.started(ticket, config) or ""
    except Exception:
        logger.warning("sentry crons: no check-in for run %s", ticket.run_key, exc_info=True)
        return None


def _monitor_finished(result: RunResult, check_in: str) -> None:
    from jobs.observability import sentry_crons

    try:
        sentry_crons.finished(result, check_in or None)
    except Exception:
        logger.warning("sentry crons: no check-in for run %s", result.ticket.run_key, exc_info=True)
