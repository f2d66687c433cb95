"""Serializers of the API. Job validation is Job.full_clean(): the same rules as the forms
and the admin, in one place (Job.clean), answered field by field."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.settings import api_settings

from jobs import preview
from jobs.masking import (
    ATTEMPT_DETAIL_FIELDS,
    SECRET_JOB_FIELDS,
    masked,
    may_see_secrets,
    shown_target,
)
from jobs.models import (
    CRON_EXPRESSION_MAX_LENGTH,
    TIME_ZONE_MAX_LENGTH,
    WEBHOOK_URL_MAX_LENGTH,
    IntervalUnit,
    Job,
    JobChange,
    JobHistory,
    JobState,
    NotificationAttempt,
    RunStatus,
    ScheduleType,
    validate_schedule_time,
)
from jobs.signing import SECRET_MAX_LENGTH

SEARCH_MAX_LENGTH = 200


def field_errors(exc: DjangoValidationError) -> dict[str, list[str]] | list[str]:
    """A Django ValidationError as DRF's {field: [messages]} (or a list of messages)."""
    if not hasattr(exc, "error_dict"):
        return list(exc.messages)
    return {
        (api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field): messages
        for field, messages in exc.message_dict.items()
    }


class JobSerializer(serializers.ModelSerializer):
    # Strings, not URIs: what a user who may not change jobs reads is masked
    # ("https://hooks.example.com/…"). Job.full_clean() still refuses what is no URL.
    webhook_url = serializers.CharField(
        max_length=WEBHOOK_URL_MAX_LENGTH,
        required=False,
        allow_blank=True,
        help_text=(
            "Alerts are POSTed here as JSON. Read as scheme://host/… by users who may "
            "not change jobs."
        ),
    )
    notify_emails = serializers.CharField(
        required=False,
        allow_blank=True,
        style={"base_template": "textarea.html"},
        help_text=(
            "Separated by commas or new lines. Read as the number of addresses by users "
            "who may not change jobs."
        ),
    )
    # Write-only (jobs.masking.WRITE_ONLY_JOB_FIELDS): never in an answer, to anyone.
    webhook_secret = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=SECRET_MAX_LENGTH,
        help_text=(
            "Signs this job's webhooks in place of JOBS_WEBHOOK_SECRET: whsec_ followed by "
            "the base64 of 24 to 64 random bytes. Write-only: never returned (see "
            "has_webhook_secret). Left out, the stored one stays; an empty string removes it."
        ),
    )
    has_webhook_secret = serializers.SerializerMethodField(
        help_text="Whether the job has its own webhook signing secret."
    )
    state = serializers.ChoiceField(
        choices=JobState.choices,
        read_only=True,
        help_text="waiting, running, succeeded or failed, from the latest run.",
    )
    schedule_text = serializers.CharField(
        read_only=True, help_text='The schedule in words, e.g. "every 10 minutes".'
    )
    last_run_status = serializers.ChoiceField(
        choices=RunStatus.choices,
        allow_blank=True,
        read_only=True,
        help_text="Outcome of the latest run; empty before the first one finished.",
    )

    class Meta:
        model = Job
        fields = [
            "id",
            "name",
            "description",
            "command",
            "schedule_type",
            "scheduled_at",
            "interval",
            "interval_unit",
            "cron_expression",
            "timezone",
            "misfire_policy",
            "overlap_policy",
            "timeout_seconds",
            "sim_failure_rate",
            "sim_min_seconds",
            "sim_max_seconds",
            "max_retries",
            "retry_backoff_seconds",
            "is_active",
            "notify_on_failure",
            "notify_on_recovery",
            "webhook_url",
            "notify_emails",
            "alert_after_failures",
            "expected_seconds",
            "webhook_secret",
            "has_webhook_secret",
            "consecutive_failures",
            "state",
            "schedule_text",
            "last_run_at",
            "last_run_status",
            "next_run_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = [
            "id",
            "consecutive_failures",
            "last_run_at",
            "last_run_status",
            "next_run_at",
            "created_at",
            "updated_at",
        ]

    def get_has_webhook_secret(self, job: Job) -> bool:
        return bool(job.webhook_secret)

    def to_representation(self, instance: Job) -> dict[str, Any]:
        data = super().to_representation(instance)
        if not may_see_secrets(_user(self)):
            for name in SECRET_JOB_FIELDS:
                if name in data:
                    data[name] = masked(name, data[name])
        return data

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A masked value sent back as it was read ("https://host/…") is not a new URL:
        # the stored one stays.
        if self.instance is not None:
            for name in SECRET_JOB_FIELDS:
                stored = getattr(self.instance, name)
                if name in attrs and attrs[name] != stored and attrs[name] == masked(name, stored):
                    del attrs[name]
        # Build the job as it would be saved and let the model judge it. A copy, so a
        # rejected update leaves the loaded instance untouched.
        job = copy.copy(self.instance) if self.instance is not None else Job()
        for name, value in attrs.items():
            setattr(job, name, value)
        try:
            job.full_clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(field_errors(exc)) from None
        if "command" in attrs:
            attrs["command"] = job.command  # as Job.clean() left it: CR LF as LF
        return attrs


def _user(serializer: serializers.BaseSerializer) -> Any:
    """The request's user; None (who sees secrets masked) without a request."""
    request = serializer.context.get("request")
    return getattr(request, "user", None)


class NotificationAttemptSerializer(serializers.ModelSerializer):
    """One delivery try. Users who may not see secrets get the target masked, and only
    the status: no HTTP code, no error text (jobs.masking)."""

    def to_representation(self, instance: NotificationAttempt) -> dict[str, Any]:
        data = super().to_representation(instance)
        user = _user(self)
        data["target"] = shown_target(user, instance.channel, instance.target)
        if not may_see_secrets(user):
            for name in ATTEMPT_DETAIL_FIELDS:
                data[name] = None if name == "response_code" else ""
        return data

    class Meta:
        model = NotificationAttempt
        fields = [
            "kind",
            "channel",
            "target",
            "attempt",
            "status",
            "response_code",
            "error",
            "created_at",
        ]
        read_only_fields = fields


class RunSerializer(serializers.ModelSerializer):
    job_name = serializers.CharField(read_only=True, source="job.name")
    duration_seconds = serializers.SerializerMethodField()

    class Meta:
        model = JobHistory
        fields = [
            "id",
            "job",
            "job_name",
            "scheduled_for",
            "attempt",
            "status",
            "trigger",
            "not_before",
            "started_at",
            "finished_at",
            "duration_seconds",
            "worker",
            "created_at",
        ]
        read_only_fields = fields

    def get_duration_seconds(self, run: JobHistory) -> float | None:
        duration = run.duration
        return None if duration is None else duration.total_seconds()


class RunDetailSerializer(RunSerializer):
    notifications = NotificationAttemptSerializer(many=True, read_only=True)

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "log", "notifications"]
        read_only_fields = fields


@extend_schema_field(
    {
        "type": "object",
        "description": 'Each changed field\'s [old, new] value: {"name": ["old", "new"]}.',
        "additionalProperties": {"type": "array", "items": {}, "minItems": 2, "maxItems": 2},
    }
)
class ChangesField(serializers.Field):
    """{"field": [old, new]}, the secret fields masked for users who may not see them
    (the viewer is the request's user, in the serializer's context)."""

    def to_representation(self, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        request = self.context.get("request")
        if may_see_secrets(getattr(request, "user", None)):
            return value
        return {name: [masked(name, v) for v in pair] for name, pair in value.items()}


class JobChangeSerializer(serializers.ModelSerializer):
    job = serializers.UUIDField(source="job_id", read_only=True)
    user = serializers.CharField(
        source="username", read_only=True, help_text="The username; empty for the system."
    )
    run = serializers.UUIDField(
        source="run_id",
        read_only=True,
        allow_null=True,
        help_text="The run started, retried or cancelled; null for other changes.",
    )
    changes = ChangesField(read_only=True)

    class Meta:
        model = JobChange
        fields = [
            "id",
            "job",
            "job_name",
            "user",
            "channel",
            "action",
            "created_at",
            "run",
            "changes",
        ]
        read_only_fields = fields


# --- query parameters: parsed by serializers so a bad value is a 400 at the field -------


class JobFilterSerializer(serializers.Serializer):
    is_active = serializers.BooleanField(
        required=False, default=None, allow_null=True, help_text="Only active (or inactive) jobs."
    )
    schedule_type = serializers.ChoiceField(choices=ScheduleType.choices, required=False)
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
    scheduled_after = serializers.DateTimeField(
        required=False, help_text="Runs scheduled for this time or later."
    )
    scheduled_before = serializers.DateTimeField(
        required=False, help_text="Runs scheduled for before this time."
    )
    created_after = serializers.DateTimeField(
        required=False, help_text="Runs created at this time or later."
    )
    created_before = serializers.DateTimeField(
        required=False, help_text="Runs created before this time."
    )


class JobRunFilterSerializer(RunFilterSerializer):
    job = None  # the job is in the path


# --- the schedule preview (jobs/preview.py) ---------------------------------------------


class SchedulePreviewQuerySerializer(serializers.Serializer):
    """The schedule fields of a job, as query parameters, and how much to preview. The
    other fields of a job are not read; missing schedule fields are blank."""

    schedule_type = serializers.ChoiceField(choices=ScheduleType.choices)
    scheduled_at = serializers.DateTimeField(
        required=False,
        help_text="Once: when it runs. Interval: when the first run happens (optional).",
    )
    interval = serializers.IntegerField(required=False, help_text="Interval: every how many units.")
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


class ZonedDateTimeField(serializers.DateTimeField):
    """A datetime written in its own zone, with that zone's offset."""

    def enforce_timezone(self, value: datetime) -> datetime:
        return value


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
