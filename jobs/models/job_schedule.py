"""A job's schedule: its interval step or cron schedule, and its next occurrence."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from jobs.calendars import planning
from jobs.models import job_rules
from jobs.models.calendars import PlanningRules
from jobs.models.choices import ScheduleType
from jobs.schedules import arithmetic as schedules


class JobSchedule:
    """A job's schedule as arithmetic: its step or cron schedule, and where it next runs."""

    def clear_unused_schedule_fields(self) -> None:
        """Set the schedule fields the job's type does not use to their empty values
        (jobs.models.choices.SCHEDULE_FIELD_UNUSED), whatever a form, the admin or the
        API sent for them: a one-off job has no interval (null, never a 0 that would
        mean nothing) and no misfire or overlap policy but the defaults."""
        for name, value in job_rules.unused_schedule_values(self.schedule_type).items():
            setattr(self, name, value)

    @property
    def step(self) -> timedelta | None:
        if self.schedule_type != ScheduleType.INTERVAL or not self.interval:
            return None
        return schedules.interval_step(self.interval, self.interval_unit)

    @property
    def cron_zone_name(self) -> str:
        """The zone a cron expression is read in: the job's, or the site's TIME_ZONE."""
        return self.timezone or settings.TIME_ZONE

    def cron_schedule(self) -> schedules.CronSchedule | None:
        """The cron schedule, or None when this is not a (valid) cron job."""
        if self.schedule_type != ScheduleType.CRON or not self.cron_expression:
            return None
        try:
            return schedules.CronSchedule(self.cron_expression, self.cron_zone_name)
        except schedules.ScheduleError:
            return None

    def refresh_schedule(
        self, now: datetime | None = None, rules: PlanningRules | None = None
    ) -> None:
        """Recompute the anchor and the next occurrence after the schedule changed.

        Called by save(); the scheduler itself moves next_run_at with its own updates.
        `rules`: the calendars and windows, when the caller loaded them for many jobs.
        """
        now = now or timezone.now()
        loaded = self._stored_schedule()
        grid_changed = loaded is None or loaded[:-1] != self._schedule_snapshot()[:-1]
        if self.schedule_type == ScheduleType.ONCE:
            self.anchor_at = None
            self.next_run_at = self.scheduled_at if self.is_active else None
            if self.next_run_at is not None:
                planned = self.planned_schedule(rules)
                if planned is not None:
                    # Its one slot, earlier too (previous_business_day), however long
                    # ago: a one-off job due in the past runs, as without a calendar.
                    found = planned.slot(self.next_run_at)
                    self.next_run_at = found.at if found is not None else None
            return
        if self.schedule_type == ScheduleType.CRON:
            # No grid: the next occurrence after now, in the job's zone.
            self.anchor_at = None
            cron = self.cron_schedule()
            self.next_run_at = cron.next_after(now) if cron and self.is_active else None
            self._plan_next_run(now, rules)
            return
        step = self.step
        if step is None:
            return  # invalid; the database constraint will refuse it
        if grid_changed or self.anchor_at is None:
            self.anchor_at = schedules.first_interval_anchor(now, step, self.scheduled_at)
        # Resume on the grid at the first point still to come: no burst of stale runs.
        self.next_run_at = (
            schedules.first_occurrence_at_or_after(self.anchor_at, step, now)
            if self.is_active
            else None
        )
        self._plan_next_run(now, rules)

    def planned_schedule(
        self, rules: PlanningRules | None = None
    ) -> planning.PlannedSchedule | None:
        """The schedule with the job's calendar and the blackout windows applied (what
        the claim walks), or None when neither applies to it. A one-off job's one time
        is planned too."""
        if self.schedule_type == ScheduleType.CRON:
            base: planning.Base | None = self.cron_schedule()
        elif self.schedule_type == ScheduleType.INTERVAL and self.step and self.anchor_at:
            base = planning.IntervalGrid(self.anchor_at, self.step)
        elif self.schedule_type == ScheduleType.ONCE and self.scheduled_at is not None:
            base = planning.OneTime(self.scheduled_at)
        else:
            base = None
        if base is None:
            return None
        if rules is None:
            rules = PlanningRules.load([self.calendar_id])
        job_rules_ = rules.for_job(self.calendar_id, self.calendar_policy, self.queue, self.pk.hex)
        return planning.PlannedSchedule(base, job_rules_) if job_rules_ is not None else None

    def replan(self, now: datetime | None = None, rules: PlanningRules | None = None) -> bool:
        """Plan next_run_at again after the rules it was planned under changed (its
        calendar was edited), and write it if it moved; whether it moved. Planned from
        just before a pending occurrence that is already due, so a run the scheduler has
        yet to claim is not dropped. A one-off job that has run stays as it is."""
        before = self.next_run_at
        if not self.is_active or (self.schedule_type == ScheduleType.ONCE and before is None):
            return False
        now = now or timezone.now()
        if before is not None and before <= now:
            now = before - timedelta(microseconds=1)
        self.refresh_schedule(now, rules)
        if self.next_run_at == before:
            return False
        # Only if the scheduler has not moved it since it was read: its claim planned
        # with whichever rules it loaded, and the occurrence key keeps that run single.
        type(self).objects.filter(pk=self.pk, next_run_at=before).update(  # type: ignore[attr-defined]
            next_run_at=self.next_run_at
        )
        return True

    def _plan_next_run(self, now: datetime, rules: PlanningRules | None = None) -> None:
        """next_run_at as the claim will see it: the first slot after now."""
        if self.next_run_at is None:
            return
        planned = self.planned_schedule(rules)
        if planned is not None:
            self.next_run_at = planned.next_after(now)
