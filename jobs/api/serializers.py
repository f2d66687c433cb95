"""Serializers of the API. Job validation is Job.full_clean(): the same rules as the forms
and the admin, in one place (Job.clean), answered field by field."""

from __future__ import annotations

import copy
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.settings import api_settings

from jobs.masking import (
    ATTEMPT_DETAIL_FIELDS,
    SECRET_JOB_FIELDS,
    masked,
    may_see_secrets,
    shown_target,
)
from jobs.models import (
    MAX_CHAINED_JOBS,
    WEBHOOK_URL_MAX_LENGTH,
    Job,
    JobChange,
    JobHistory,
    JobState,
    NotificationAttempt,
    RunStatus,
    ScheduleType,
)
from jobs.models.chains import CHAIN_FIELDS

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
    on_success = serializers.PrimaryKeyRelatedField(
        many=True,
        queryset=Job.objects.all(),
        required=False,
        help_text=(
            "Ids of the jobs to run each time a run of this job succeeds (at most "
            f"{MAX_CHAINED_JOBS}; a job cannot start itself again through its chains)."
        ),
    )
    on_failure = serializers.PrimaryKeyRelatedField(
        many=True,
        queryset=Job.objects.all(),
        required=False,
        help_text=(
            "Ids of the jobs to run when a run of this job fails for good, after its "
            f"retries (at most {MAX_CHAINED_JOBS}; no loops either)."
        ),
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
            "on_success",
            "on_failure",
            "is_active",
            "notify_on_failure",
            "notify_on_recovery",
            "webhook_url",
            "notify_emails",
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
            "last_run_at",
            "last_run_status",
            "next_run_at",
            "created_at",
            "updated_at",
        ]

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
            if name not in CHAIN_FIELDS:
                setattr(job, name, value)
        # Lists of jobs are judged by Job.clean() too (a loop, too many): jobs.models.chains.
        job.set_chains(**_chains(attrs))
        try:
            job.full_clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(field_errors(exc)) from None
        if "command" in attrs:
            attrs["command"] = job.command  # as Job.clean() left it: CR LF as LF
        return attrs

    def create(self, validated_data: dict[str, Any]) -> Job:
        chains = _chains(validated_data, pop=True)
        job = Job(**validated_data)
        job.set_chains(**chains)
        job.save()  # writes the chains and records them with the rest
        return job

    def update(self, instance: Job, validated_data: dict[str, Any]) -> Job:
        chains = _chains(validated_data, pop=True)
        for name, value in validated_data.items():
            setattr(instance, name, value)
        instance.set_chains(**chains)
        instance.save()
        return instance


def _chains(attrs: dict[str, Any], *, pop: bool = False) -> dict[str, Any]:
    """The chain lists given (jobs.models.chains), taken out of `attrs` with `pop`."""
    take = attrs.pop if pop else attrs.get
    return {name: take(name) for name in CHAIN_FIELDS if name in attrs}


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
    caused_by = serializers.PrimaryKeyRelatedField(
        read_only=True,
        allow_null=True,
        help_text=(
            "The run whose outcome started this one (trigger chain); null for other runs, "
            "or once that run was deleted."
        ),
    )
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
            "caused_by",
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
