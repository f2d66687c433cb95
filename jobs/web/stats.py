"""Questions about runs that the job page and the history ask, each in one bounded query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Avg, Count, DurationField, ExpressionWrapper, F, Q

from jobs.models import OUTCOME_STATUSES, Job, RunStatus

# The job page's figures cover this many of the job's latest runs: enough to be
# meaningful, and a job that ran every second for a year does not make the page slow.
STATS_WINDOW = 1000


@dataclass(frozen=True)
class JobRunStats:
    total: int
    succeeded: int
    failed: int
    running: int
    pending: int
    skipped: int
    cancelled: int
    average_duration: timedelta | None
    window: int = STATS_WINDOW

    @property
    def success_rate(self) -> float | None:
        """Succeeded / finished, in percent; None before the first finished run."""
        finished = self.succeeded + self.failed
        return 100.0 * self.succeeded / finished if finished else None

    @property
    def is_windowed(self) -> bool:
        """The job has more runs than the figures cover."""
        return self.total >= self.window


def job_run_stats(job: Job) -> JobRunStats:
    """Counts by status, success rate and average duration over the job's latest runs."""
    latest = job.runs.order_by("-created_at")[:STATS_WINDOW]
    duration = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    figures = latest.aggregate(
        total=Count("pk"),
        succeeded=Count("pk", filter=Q(status=RunStatus.SUCCESS)),
        failed=Count("pk", filter=Q(status=RunStatus.FAILED)),
        running=Count("pk", filter=Q(status=RunStatus.RUNNING)),
        pending=Count("pk", filter=Q(status=RunStatus.PENDING)),
        skipped=Count("pk", filter=Q(status=RunStatus.SKIPPED)),
        cancelled=Count("pk", filter=Q(status=RunStatus.CANCELLED)),
        # Runs that ran to an outcome: a cancelled run's time says little about the job.
        average_duration=Avg(
            duration, filter=Q(status__in=OUTCOME_STATUSES, started_at__isnull=False)
        ),
    )
    return JobRunStats(**figures)
