"""Pausing the whole scheduler (maintenance mode), and resuming it.

While paused no scheduler claims an occurrence: the claim asks the switch in its own
write transaction (claim.py, `_apply`), and each scheduler loop learns the switch from
the look-up it makes before sleeping (work.wake_up), so it stops claiming at all within
one tick. The jobs that come due meanwhile stay due, untouched; at the resume the next
claim takes them through their misfire policy (jobs/schedules/arithmetic.py: `coalesce` runs one
run for all that was missed, `skip` only the latest if it is still within
JOBS_MISFIRE_GRACE_SECONDS), so a resume starts no burst of stale runs.

Pending runs that already exist still start while paused: retries waiting out their
backoff, "run now", runs claimed before the pause. They were decided before the pause or
by an operator since, and holding them would only turn them into stale runs that start
together at the resume, outside any misfire policy; the pause is one place (the claim)
rather than a check on every start path (worker threads, Huey workers, messages already
queued). Cancel a run to stop it.

A pause with `until` ends by itself: PauseWindow.active() is false from then on, so the
claims go on; the first process to notice records the resume, by the system, at `until`
(settle_expired). Each pause and resume is a SchedulerEvent with who, when and how.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.utils import timezone

from jobs.models import (
    Channel,
    PauseWindow,
    SchedulerAction,
    SchedulerEvent,
    SchedulerState,
    acting,
    clean_pause,
    current_actor,
)
from jobs.models.scheduler import THE_ROW
from jobs.sql import store

logger = logging.getLogger("jobs.engine")


def pause_window() -> PauseWindow:
    """The pause switch as it is (one look-up by primary key)."""
    return SchedulerState.current_window()


def pause(
    until: datetime | None = None, note: str = "", now: datetime | None = None
) -> SchedulerState:
    """Pause every scheduler, until `until` (None: until resume()), saying why in `note`.

    Validated as the forms and the API validate it (jobs.models.clean_pause): raises
    ValidationError ({"until": ..., "note": ...}) and changes nothing. Pausing while
    paused keeps the time it has been paused since and takes the new until, note and
    author. Returns once no claim is under way that could still write (the claims ask the
    switch under the same lock), so from then on no scheduler claims an occurrence.
    """
    now = now or timezone.now()
    until, note = clean_pause(until, note, now)
    actor = current_actor()
    user = actor.user if actor.username else None
    with store().writing():
        SchedulerState.objects.bulk_create([SchedulerState(pk=THE_ROW)], ignore_conflicts=True)
        row = SchedulerState.objects.select_for_update().get(pk=THE_ROW)
        if row.window.expired(now):
            _record_expiry(row)
        if not row.window.active(now):
            row.paused_at = now
        row.paused_until = until
        row.note = note
        row.paused_by = user if user is not None and user.pk is not None else None
        row.paused_by_name = actor.username
        row.channel = actor.channel
        row.save()
        SchedulerEvent.record(SchedulerAction.PAUSE, at=now, note=note, paused_until=until)
    logger.info(
        "scheduler paused by %s through %s until %s: %s",
        actor.username or "the system",
        actor.channel,
        until.isoformat() if until else "resumed",
        note or "no note",
    )
    return row


def resume(now: datetime | None = None) -> bool:
    """Resume every scheduler; False (and nothing recorded) when it was not paused.

    The jobs that came due meanwhile are claimed at the next pass, each through its
    misfire policy (see the module docstring)."""
    now = now or timezone.now()
    with store().writing():
        row = SchedulerState.objects.select_for_update().filter(pk=THE_ROW).first()
        if row is None or row.paused_at is None:
            return False
        if row.window.expired(now):
            # It ended by itself at `until`: that is the resume to record.
            _record_expiry(row)
            return False
        _clear(row, resumed_at=now)
        SchedulerEvent.record(SchedulerAction.RESUME, at=now)
    logger.info("scheduler resumed by %s", current_actor().username or "the system")
    return True


def settle_expired(now: datetime | None = None) -> bool:
    """Record a pause whose `until` has come as resumed at that time, by the system.

    Several schedulers may notice it at once: the write transaction reads the switch
    again, so one of them records it. True for that one."""
    now = now or timezone.now()
    with store().writing():
        row = SchedulerState.objects.select_for_update().filter(pk=THE_ROW).first()
        if row is None or not row.window.expired(now):
            return False
        _record_expiry(row)
    logger.info("scheduler resumed by itself: the pause was until %s", row.resumed_at)
    return True


def _record_expiry(row: SchedulerState) -> None:
    """In the caller's transaction: the pause `row` holds ended at its until."""
    ended, note = row.paused_until, row.note
    _clear(row, resumed_at=ended)
    with acting(None, Channel.SYSTEM):
        SchedulerEvent.record(SchedulerAction.RESUME, at=ended, note=note)


def _clear(row: SchedulerState, *, resumed_at: datetime | None) -> None:
    row.paused_at = row.paused_until = None
    row.note = ""
    row.paused_by = None
    row.paused_by_name = row.channel = ""
    row.resumed_at = resumed_at
    row.save()
