"""A job in words, as the screens show it: what it runs, its schedule, its state."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from jobs import times
from jobs.access import masking
from jobs.models.choices import (
    STATE_BY_LAST_STATUS,
    ExecutorKind,
    IntervalUnit,
    JobState,
    RunStatus,
    ScheduleType,
)
from jobs.pytasks import registry, signature
from jobs.schedules.words import describe_cron


class JobWords:
    """What the screens say about a job: what it runs, its schedule, its state."""

    @property
    def execution_text(self) -> str:
        """What the job runs, in words: "Python task billing.send(day='today')",
        "Shell: backup.sh --full". Shown to anyone who may see the job: URL credentials and
        secret-named task arguments masked (jobs.access.masking)."""
        return masking.mask_urls(str(self._execution_words()))

    def _execution_words(self) -> str:
        if self.executor == ExecutorKind.PYTHON:
            given = masking.mask_arguments(
                self.arguments if isinstance(self.arguments, dict) else {}
            )
            # In the order of the task's signature: PostgreSQL's jsonb keeps the keys of
            # an object in an order of its own (shortest first).
            task = registry.get_task(self.command)
            order = {p.name: index for index, p in enumerate(task.parameters)} if task else {}
            names = sorted(given, key=lambda name: order.get(name, len(order)))
            arguments = ", ".join(
                f"{name}={signature.short_repr(given[name], 40)}" for name in names
            )
            return _("Python task %(call)s") % {"call": f"{self.command}({arguments})"}
        if self.executor == ExecutorKind.COMMAND:
            return _("Management command: %(line)s") % {"line": self.command}
        if self.executor == ExecutorKind.SHELL:
            return _("Shell: %(line)s") % {"line": self.command}
        if self.executor == ExecutorKind.HTTP:
            method = str((self.arguments or {}).get("method") or "GET").upper()
            return _("HTTP %(method)s %(url)s") % {"method": method, "url": self.command}
        return _("Simulated: %(command)s") % {"command": self.command}

    @property
    def schedule_text(self) -> str:
        """The schedule in words: "every 10 minutes", "once at 2026-12-01 09:00:00 UTC"."""
        if self.schedule_type == ScheduleType.ONCE:
            if self.scheduled_at is None:
                return str(_("once (no time set)"))
            # Written as every other moment on the screens (jobs.times), in the reader's zone.
            when = times.moment_text(self.scheduled_at)
            return str(_("once at %(when)s") % {"when": when})
        if self.schedule_type == ScheduleType.CRON:
            return str(
                _("%(schedule)s, %(zone)s")
                % {"schedule": describe_cron(self.cron_expression), "zone": self.cron_zone_name}
            )
        if not self.interval or self.interval_unit not in IntervalUnit.values:
            return str(_("no valid schedule"))
        texts = {
            IntervalUnit.SECOND: ngettext("every second", "every %(n)d seconds", self.interval),
            IntervalUnit.MINUTE: ngettext("every minute", "every %(n)d minutes", self.interval),
            IntervalUnit.HOUR: ngettext("every hour", "every %(n)d hours", self.interval),
            IntervalUnit.DAY: ngettext("every day", "every %(n)d days", self.interval),
        }
        return texts[self.interval_unit] % {"n": self.interval}

    @property
    def state(self) -> str:
        """waiting / running / succeeded / failed / skipped / cancelled, from the latest run.

        Reads `is_running` when the queryset was annotated with with_running().
        """
        running = getattr(self, "is_running", None)
        if running is None:
            running = self.runs.filter(status=RunStatus.RUNNING).exists()
        if running:
            return JobState.RUNNING
        return STATE_BY_LAST_STATUS.get(self.last_run_status, JobState.WAITING)
