"""Runs and their delivery attempts, and the body of "run now"."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from jobs.access.masking import (
    ATTEMPT_DETAIL_FIELDS,
    may_see_secrets,
    shown_arguments,
    shown_log,
    shown_target,
)
from jobs.api.limits import (
    NOTIFICATION_LIMITS,
    RUN_LIMITS,
    state_limits,
)
from jobs.api.serializers.fields import ArgumentsField, request_user
from jobs.models import (
    JobHistory,
    NotificationAttempt,
)


class NotificationAttemptSerializer(serializers.ModelSerializer):
    """One delivery try. Users who may not see secrets get the target masked, and only
    the status: no HTTP code, no error text (jobs.access.masking)."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        state_limits(fields, NOTIFICATION_LIMITS)
        return fields

    def to_representation(self, instance: NotificationAttempt) -> dict[str, Any]:
        data = super().to_representation(instance)
        user = request_user(self)
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
    arguments = ArgumentsField(
        read_only=True,
        allow_null=True,
        help_text=(
            "The arguments this run ran with (null for a simulated run). Secret header and "
            "env values are masked for users who may not change jobs."
        ),
    )

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
            "queue",
            "priority",
            "arguments",
            "created_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "queue": {"help_text": "The queue the run waits in: its job's when it was created."},
            "priority": {"help_text": "Its job's priority when it was created (higher first)."},
        }

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        state_limits(fields, RUN_LIMITS)
        return fields

    def to_representation(self, instance: JobHistory) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["arguments"] = shown_arguments(request_user(self), data.get("arguments"), instance.job)
        return data

    def get_duration_seconds(self, run: JobHistory) -> float | None:
        duration = run.duration
        return None if duration is None else duration.total_seconds()


class RunDetailSerializer(RunSerializer):
    """One run with its log: while the run runs, the log is its output so far (written
    at least every JOBS_LIVE_LOG_SECONDS), so polling this shows it grow."""

    notifications = NotificationAttemptSerializer(many=True, read_only=True)
    elapsed_seconds = serializers.SerializerMethodField(
        help_text="Seconds since the run started (to its end once finished); null before."
    )
    log_truncated = serializers.SerializerMethodField(
        help_text="Whether output was left out of the log (JOBS_LOG_MAX_BYTES)."
    )

    class Meta(RunSerializer.Meta):
        fields = [
            *RunSerializer.Meta.fields,
            "log",
            "elapsed_seconds",
            "log_truncated",
            "notifications",
        ]
        read_only_fields = fields

    def to_representation(self, instance: JobHistory) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["log"] = shown_log(
            request_user(self), data.get("log") or "", instance.arguments, instance.job
        )
        return data

    def get_elapsed_seconds(self, run: JobHistory) -> float | None:
        return self.get_duration_seconds(run)

    def get_log_truncated(self, run: JobHistory) -> bool:
        return LOG_OMITTED_MARK in (run.log or "")


# How a log says that output was left out (jobs/executors/output.py writes it).
LOG_OMITTED_MARK = "bytes of output left out (JOBS_LOG_MAX_BYTES)"


class RunNowSerializer(serializers.Serializer):
    """The body of "run now": nothing, or other arguments for this one run."""

    arguments = ArgumentsField(
        required=False,
        help_text=(
            "Arguments for this run instead of the job's own, checked as the job's are "
            "(a shell job's need jobs.use_shell). Left out: the job's own."
        ),
    )
