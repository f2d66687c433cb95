"""The query parameters of the lists of jobs and runs: parsed by serializers, so that a
bad value is a 400 at its field."""

from __future__ import annotations

from rest_framework import serializers

from jobs.api.serializers.fields import BoundDateTimeField
from jobs.models import (
    QUEUE_NAME_MAX_LENGTH,
    QUEUE_NAME_PATTERN,
    RunStatus,
    ScheduleType,
)

SEARCH_MAX_LENGTH = 200


class JobFilterSerializer(serializers.Serializer):
    is_active = serializers.BooleanField(
        required=False, default=None, allow_null=True, help_text="Only active (or inactive) jobs."
    )
    schedule_type = serializers.ChoiceField(choices=ScheduleType.choices, required=False)
    queue = serializers.RegexField(
        rf"\A{QUEUE_NAME_PATTERN}\Z",
        required=False,
        max_length=QUEUE_NAME_MAX_LENGTH,
        help_text="Jobs of this queue only.",
    )
    search = serializers.CharField(
        required=False,
        max_length=SEARCH_MAX_LENGTH,
        help_text=(
            "Jobs whose name, description or command contains every word of this text "
            '(any case; a "quoted phrase" is one word).'
        ),
    )


class RunFilterSerializer(serializers.Serializer):
    job = serializers.UUIDField(required=False, help_text="Runs of this job only.")
    status = serializers.ChoiceField(choices=RunStatus.choices, required=False)
    scheduled_after = BoundDateTimeField(
        required=False, help_text="Runs scheduled for this time or later."
    )
    scheduled_before = BoundDateTimeField(
        required=False, help_text="Runs scheduled for before this time."
    )
    created_after = BoundDateTimeField(
        required=False, help_text="Runs created at this time or later."
    )
    created_before = BoundDateTimeField(required=False, help_text="Runs created before this time.")


class JobRunFilterSerializer(RunFilterSerializer):
    job = None  # the job is in the path
