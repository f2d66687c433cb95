"""The limits the API's schema states for values that the model judges.

A job's values are judged by Job.clean() (jobs/models/job_rules.py), with one message per
rule, in the API as in the forms. A DRF validator on the serializer field would judge
first, in DRF's words ("Ensure this value is greater than or equal to 1."), and the
rule would live in two places. The validators here only state a limit: drf-spectacular
writes them into the schema (minimum, maximum, maxLength, pattern), and they let every
value through to the model. Without them the schema gave `interval` and
`timeout_seconds` the database's whole int64 range.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from django.core.validators import (
    MaxLengthValidator,
    MaxValueValidator,
    MinValueValidator,
    RegexValidator,
)
from rest_framework import serializers

from jobs.models import (
    MAX_ALERT_AFTER_FAILURES,
    MAX_PRIORITY,
    MAX_SIM_SECONDS,
    MAX_TIMEOUT_SECONDS,
    MIN_PRIORITY,
    QUEUE_NAME_PATTERN,
)
from jobs.schedules import arithmetic as schedules

# The longest interval, counted in the smallest unit (seconds); Job.clean() refuses more
# than ten years whatever the unit ("at most 3650 days").
MAX_INTERVAL_COUNT = int(schedules.MAX_INTERVAL.total_seconds())
# What a PositiveSmallIntegerField holds on every database (an attempt, an HTTP code).
SMALL_INT_MAX = 32767


class StatedMinimum(MinValueValidator):
    """States `minimum` in the schema; the value is judged elsewhere (see above)."""

    def __call__(self, value: Any) -> None:
        return None


class StatedMaximum(MaxValueValidator):
    """States `maximum` in the schema; the value is judged elsewhere."""

    def __call__(self, value: Any) -> None:
        return None


class StatedMaxLength(MaxLengthValidator):
    """States `maxLength` in the schema; the value is judged elsewhere."""

    def __call__(self, value: Any) -> None:
        return None


class StatedPattern(RegexValidator):
    """States `pattern` in the schema; the value is judged elsewhere."""

    def __call__(self, value: Any) -> None:
        return None


class Limits(NamedTuple):
    """The range a number may take (either bound None: unbounded that way)."""

    minimum: float | None
    maximum: float | None


# A job's numbers as Job.clean() and the table's check constraints bound them.
JOB_LIMITS: Mapping[str, Limits] = {
    "interval": Limits(1, MAX_INTERVAL_COUNT),
    "timeout_seconds": Limits(1, MAX_TIMEOUT_SECONDS),
    "priority": Limits(MIN_PRIORITY, MAX_PRIORITY),
    "alert_after_failures": Limits(1, MAX_ALERT_AFTER_FAILURES),
    "expected_seconds": Limits(1, MAX_TIMEOUT_SECONDS),
    "sim_failure_rate": Limits(0, 1),
    "sim_min_seconds": Limits(0, MAX_SIM_SECONDS),
    "sim_max_seconds": Limits(0, MAX_SIM_SECONDS),
    "consecutive_failures": Limits(0, None),
}
# A run's numbers, read-only: copied from its job when it was created.
RUN_LIMITS: Mapping[str, Limits] = {
    "attempt": Limits(1, SMALL_INT_MAX),
    "priority": Limits(MIN_PRIORITY, MAX_PRIORITY),
    "duration_seconds": Limits(0, None),
    "elapsed_seconds": Limits(0, None),
}
NOTIFICATION_LIMITS: Mapping[str, Limits] = {
    "attempt": Limits(1, SMALL_INT_MAX),
    "response_code": Limits(100, 599),
}
# A job's text that Job.clean() reads as a pattern.
JOB_PATTERNS: Mapping[str, str] = {"queue": rf"\A{QUEUE_NAME_PATTERN}\Z"}


def state_limits(
    fields: Mapping[str, serializers.Field],
    limits: Mapping[str, Limits],
    patterns: Mapping[str, str] | None = None,
) -> None:
    """Add the stated limits to those of `fields` (a serializer's get_fields()) named in
    `limits` and `patterns`; in the schema the tighter bound wins."""
    for name, limit in limits.items():
        if name not in fields:
            continue
        stated: list[Any] = []
        if limit.minimum is not None:
            stated.append(StatedMinimum(limit.minimum))
        if limit.maximum is not None:
            stated.append(StatedMaximum(limit.maximum))
        fields[name].validators = [*fields[name].validators, *stated]
    for name, pattern in (patterns or {}).items():
        if name in fields:
            fields[name].validators = [*fields[name].validators, StatedPattern(pattern)]
