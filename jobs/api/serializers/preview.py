"""The schedule preview: its query parameters and its answer."""

from __future__ import annotations

from datetime import UTC

from rest_framework import serializers

from jobs.api.limits import (
    MAX_INTERVAL_COUNT,
    StatedMaximum,
    StatedMinimum,
)
from jobs.api.serializers.fields import ZonedDateTimeField
from jobs.forecasts import preview
from jobs.models import (
    CRON_EXPRESSION_MAX_LENGTH,
    TIME_ZONE_MAX_LENGTH,
    IntervalUnit,
    ScheduleType,
    validate_schedule_time,
)


class SchedulePreviewQuerySerializer(serializers.Serializer):
    """The schedule fields of a job, as query parameters, and how much to preview. The
    other fields of a job are not read; missing schedule fields are blank."""

    schedule_type = serializers.ChoiceField(choices=ScheduleType.choices)
    scheduled_at = serializers.DateTimeField(
        required=False,
        help_text="Once: when it runs. Interval: when the first run happens (optional).",
    )
    # Judged by Job.clean() with the job's own messages (jobs/forecasts/preview.py); stated here.
    interval = serializers.IntegerField(
        required=False,
        validators=[StatedMinimum(1), StatedMaximum(MAX_INTERVAL_COUNT)],
        help_text="Interval: every how many units (at most 3650 days' worth).",
    )
    interval_unit = serializers.ChoiceField(
        choices=IntervalUnit.choices, required=False, allow_blank=True
    )
    cron_expression = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=CRON_EXPRESSION_MAX_LENGTH,
        help_text='Cron: five fields, e.g. "30 2 * * *".',
    )
    timezone = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=TIME_ZONE_MAX_LENGTH,
        help_text="The zone the schedule is read in (an IANA name). Blank: the site's.",
    )
    start = serializers.DateTimeField(
        required=False,
        validators=[validate_schedule_time],
        help_text="List the occurrences from this moment on (default: now). The schedule "
        "is taken as saved now: an interval without scheduled_at starts one step from now.",
    )
    count = serializers.IntegerField(
        required=False,
        default=preview.DEFAULT_COUNT,
        min_value=1,
        max_value=preview.MAX_COUNT,
        help_text=f"How many occurrences (default {preview.DEFAULT_COUNT}, at most "
        f"{preview.MAX_COUNT}); fewer when the schedule has no more.",
    )


class OccurrenceSerializer(serializers.Serializer):
    at = serializers.DateTimeField(default_timezone=UTC, help_text="The moment, in UTC.")
    local = ZonedDateTimeField(help_text="The same moment in the schedule's time zone.")
    note = serializers.CharField(
        allow_null=True,
        help_text="What daylight saving does to this occurrence, in words; null when nothing.",
    )


class SchedulePreviewSerializer(serializers.Serializer):
    timezone = serializers.CharField(help_text="The zone of `local`: the schedule's or the site's.")
    occurrences = OccurrenceSerializer(many=True)
