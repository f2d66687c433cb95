"""A job's rules in the database's words: the check constraints of Job.Meta, by subject.

The same rules as jobs/models/job_rules.py (which gives the messages); here a row
written by any process (raw SQL, another scheduler) is held to them too.
"""

from __future__ import annotations

import operator
from functools import reduce

from django.db import models
from django.db.models import Q

from jobs.models.choices import (
    MAX_ALERT_AFTER_FAILURES,
    MAX_PRIORITY,
    MAX_RETRIES_LIMIT,
    MAX_SIM_SECONDS,
    MAX_TIMEOUT_SECONDS,
    MIN_PRIORITY,
    ExecutorKind,
    IntervalUnit,
    MisfirePolicy,
    OverlapPolicy,
    ScheduleType,
)
from jobs.schedules import arithmetic as schedules

# The schedule: a known type, and what each type needs.
SCHEDULE_CONSTRAINTS: list[models.BaseConstraint] = [
    models.CheckConstraint(
        condition=Q(schedule_type__in=ScheduleType.values),
        name="jobs_job_known_schedule_type",
    ),
    models.CheckConstraint(
        condition=~Q(schedule_type=ScheduleType.ONCE) | Q(scheduled_at__isnull=False),
        name="jobs_job_once_has_time",
    ),
    models.CheckConstraint(
        condition=~Q(schedule_type=ScheduleType.INTERVAL)
        | Q(
            interval__gte=1,
            interval__lte=schedules.MAX_INTERVAL.total_seconds(),
            interval_unit__in=IntervalUnit.values,
        ),
        name="jobs_job_interval_valid",
    ),
    models.CheckConstraint(
        condition=~Q(schedule_type=ScheduleType.CRON) | ~Q(cron_expression=""),
        name="jobs_job_cron_has_expression",
    ),
    models.CheckConstraint(
        condition=Q(misfire_policy__in=MisfirePolicy.values),
        name="jobs_job_known_misfire_policy",
    ),
]

# How its runs run: executor, overlap, timeout, retries, queue and priority.
RUN_CONSTRAINTS: list[models.BaseConstraint] = [
    models.CheckConstraint(
        # Equality tests rather than IN (...): see jobs.models.run.one_of.
        condition=reduce(operator.or_, (Q(executor=value) for value in ExecutorKind.values)),
        name="jobs_job_known_executor",
    ),
    models.CheckConstraint(
        condition=Q(overlap_policy__in=OverlapPolicy.values),
        name="jobs_job_known_overlap_policy",
    ),
    models.CheckConstraint(
        condition=Q(timeout_seconds__isnull=True)
        | Q(timeout_seconds__gte=1, timeout_seconds__lte=MAX_TIMEOUT_SECONDS),
        name="jobs_job_timeout_bounded",
    ),
    models.CheckConstraint(
        condition=Q(max_retries__lte=MAX_RETRIES_LIMIT), name="jobs_job_retries_bounded"
    ),
    models.CheckConstraint(condition=~Q(queue=""), name="jobs_job_queue_named"),
    models.CheckConstraint(
        condition=Q(priority__gte=MIN_PRIORITY, priority__lte=MAX_PRIORITY),
        name="jobs_job_priority_bounded",
    ),
]

# The per-job simulation settings.
SIMULATION_CONSTRAINTS: list[models.BaseConstraint] = [
    models.CheckConstraint(
        condition=Q(sim_failure_rate__isnull=True)
        | Q(sim_failure_rate__gte=0, sim_failure_rate__lte=1),
        name="jobs_job_sim_rate_bounded",
    ),
    models.CheckConstraint(
        condition=(
            Q(sim_min_seconds__isnull=True)
            | Q(sim_min_seconds__gte=0, sim_min_seconds__lte=MAX_SIM_SECONDS)
        )
        & (
            Q(sim_max_seconds__isnull=True)
            | Q(sim_max_seconds__gte=0, sim_max_seconds__lte=MAX_SIM_SECONDS)
        )
        & (
            Q(sim_min_seconds__isnull=True)
            | Q(sim_max_seconds__isnull=True)
            | Q(sim_min_seconds__lte=models.F("sim_max_seconds"))
        ),
        name="jobs_job_sim_seconds_bounded",
    ),
]

# The alert rules.
ALERT_CONSTRAINTS: list[models.BaseConstraint] = [
    models.CheckConstraint(
        condition=Q(
            alert_after_failures__gte=1, alert_after_failures__lte=MAX_ALERT_AFTER_FAILURES
        ),
        name="jobs_job_alert_after_bounded",
    ),
    models.CheckConstraint(
        condition=Q(expected_seconds__isnull=True)
        | Q(expected_seconds__gte=1, expected_seconds__lte=MAX_TIMEOUT_SECONDS),
        name="jobs_job_expected_bounded",
    ),
]


def job_constraints() -> list[models.BaseConstraint]:
    """The same rules in the database's words, for Job.Meta: a row written by any process
    (raw SQL, another scheduler) is held to them too."""
    return [*SCHEDULE_CONSTRAINTS, *RUN_CONSTRAINTS, *SIMULATION_CONSTRAINTS, *ALERT_CONSTRAINTS]
