"""Serializers of the API. Job validation is Job.full_clean(): the same rules as the forms
and the admin, in one place (Job.clean), answered field by field."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.settings import api_settings

from jobs.access.masking import (
    ATTEMPT_DETAIL_FIELDS,
    SECRET_JOB_FIELDS,
    may_see_secrets,
    restore_field,
    shown_arguments,
    shown_changes,
    shown_log,
    shown_target,
    shown_value,
)
from jobs.api.limits import (
    JOB_LIMITS,
    JOB_PATTERNS,
    MAX_INTERVAL_COUNT,
    NOTIFICATION_LIMITS,
    RUN_LIMITS,
    Limits,
    StatedMaximum,
    StatedMinimum,
    state_limits,
)
from jobs.forecasts import preview
from jobs.models import (
    CRON_EXPRESSION_MAX_LENGTH,
    MAX_CHAINED_JOBS,
    NOTIFY_EMAILS_MAX_LENGTH,
    QUEUE_NAME_MAX_LENGTH,
    QUEUE_NAME_PATTERN,
    TIME_ZONE_MAX_LENGTH,
    WEBHOOK_URL_MAX_LENGTH,
    ExecutorKind,
    IntervalUnit,
    Job,
    JobChange,
    JobHistory,
    JobState,
    NotificationAttempt,
    RunStatus,
    ScheduleType,
    gate,
    validate_schedule_time,
)
from jobs.models import code as code_rules
from jobs.models.chains import CHAIN_FIELDS
from jobs.outbound.signing import SECRET_MAX_LENGTH
from jobs.pytasks import signature

SEARCH_MAX_LENGTH = 200


def field_errors(exc: DjangoValidationError) -> dict[str, list[str]] | list[str]:
    """A Django ValidationError as DRF's {field: [messages]} (or a list of messages)."""
    if not hasattr(exc, "error_dict"):
        return list(exc.messages)
    return {
        (api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field): messages
        for field, messages in exc.message_dict.items()
    }


# A JSON object, documented as one (DRF's JSONField would say "any value").
ARGUMENTS_SCHEMA = {
    "type": "object",
    "additionalProperties": {},
    "description": (
        "A JSON object, read per executor: a Python task's keyword arguments; an HTTP "
        "job's method, headers, body and expect_status; a shell job's env. Secret header "
        "and env values are masked for users who may not change jobs."
    ),
}


@extend_schema_field(ARGUMENTS_SCHEMA)
class ArgumentsField(serializers.JSONField):
    """Job.arguments and JobHistory.arguments: a JSON object (checked by Job.clean())."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError('The arguments must be a JSON object, like {"a": 1}.')
        return value


class JobSerializer(serializers.ModelSerializer):
    executor = serializers.ChoiceField(
        choices=ExecutorKind.choices,
        required=False,
        help_text=(
            "What a run does: simulated (the default), python (a registered task, named in "
            "command), command (a management command line), shell (a command line; needs "
            "jobs.use_shell and JOBS_SHELL_ENABLED), http (a request to the URL in command)."
        ),
    )
    arguments = ArgumentsField(required=False)
    execution_problem = serializers.CharField(
        read_only=True,
        help_text=(
            "Why the job's runs fail before doing anything now (its task no longer "
            "registered, its command no longer listed, its executor switched off); empty "
            "when nothing stops them."
        ),
    )
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
        max_length=NOTIFY_EMAILS_MAX_LENGTH,  # the forms' limit (a TextField's is theirs only)
        style={"base_template": "textarea.html"},
        help_text=(
            "Separated by commas or new lines. Read as the number of addresses by users "
            "who may not change jobs."
        ),
    )
    # Write-only (jobs.access.masking.WRITE_ONLY_JOB_FIELDS): never in an answer, to anyone.
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

    code_key = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text=(
            "The key of the declaration in code (@register with a schedule) this job is "
            "synced from; null for jobs made on the dashboard, in the admin or here."
        ),
    )
    code_source = serializers.CharField(
        read_only=True,
        help_text='Where it is declared in code, e.g. "billing/tasks.py"; empty if not.',
    )
    declared_in_code = serializers.BooleanField(
        read_only=True,
        help_text=(
            "Defined in code and still declared there. False for a job whose declaration "
            "is gone (syncjobs disabled it; its fields are the operator's again)."
        ),
    )
    code_fields = serializers.SerializerMethodField(
        help_text=(
            "The fields the code owns: a change to one is refused (400, at the field); "
            "is_active is never one of them."
        )
    )

    class Meta:
        model = Job
        fields = [
            "id",
            "name",
            "description",
            "command",
            "executor",
            "arguments",
            "execution_problem",
            "schedule_type",
            "scheduled_at",
            "interval",
            "interval_unit",
            "cron_expression",
            "timezone",
            "misfire_policy",
            "overlap_policy",
            "timeout_seconds",
            "queue",
            "priority",
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
            "code_key",
            "code_source",
            "declared_in_code",
            "code_fields",
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
        # The schedule fields a schedule type does not use are stored and answered
        # empty, whatever is sent for them (Job.clear_unused_schedule_fields).
        extra_kwargs = {
            "scheduled_at": {
                "help_text": "Once: when it runs. Interval: when the first run happens "
                "(optional). Null for a cron job."
            },
            "interval": {"help_text": "Interval: every how many units. Null for the other types."},
            "interval_unit": {"help_text": "Interval: the unit. Empty for the other types."},
            "cron_expression": {
                "help_text": 'Cron: five fields, e.g. "30 2 * * *". Empty for the other types.'
            },
            "timezone": {
                "help_text": "Cron: the zone the expression is read in (an IANA name; empty: "
                "the site's). Empty for the other types."
            },
            "misfire_policy": {
                "help_text": "Interval and cron: what runs after the scheduler was down. A "
                "one-off job always runs, late if need be: coalesce."
            },
            "overlap_policy": {
                "help_text": "Interval and cron: what an occurrence does while the previous "
                "run is still going. A one-off job: allow."
            },
        }

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        state_limits(fields, JOB_LIMITS, JOB_PATTERNS)  # for the schema (jobs.api.limits)
        return fields

    def get_has_webhook_secret(self, job: Job) -> bool:
        return bool(job.webhook_secret)

    def get_code_fields(self, job: Job) -> list[str]:
        return sorted(job.code_fields)

    def to_representation(self, instance: Job) -> dict[str, Any]:
        data = super().to_representation(instance)
        see_secrets = may_see_secrets(_user(self), instance)
        for name in SECRET_JOB_FIELDS:
            if name in data:
                data[name] = shown_value(see_secrets, name, data[name])
        return data

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A masked value sent back as it was read ("https://host/…", "?token=…") is not
        # a new value: the stored one stays (jobs.access.masking.restore_field).
        if self.instance is not None:
            for name in SECRET_JOB_FIELDS:
                if name in attrs:
                    try:
                        attrs[name] = restore_field(name, attrs[name], getattr(self.instance, name))
                    except DjangoValidationError as exc:
                        raise serializers.ValidationError({name: exc.messages}) from None
        if self.instance is not None:
            _refuse_code_changes(self.instance, attrs)
        # Build the job as it would be saved and let the model judge it. A copy, so a
        # rejected update leaves the loaded instance untouched.
        job = copy.copy(self.instance) if self.instance is not None else Job()
        for name, value in attrs.items():
            if name not in CHAIN_FIELDS:
                setattr(job, name, value)
        # Lists of jobs are judged by Job.clean() too (a loop, too many): jobs.models.chains.
        job.set_chains(**_chains(attrs))
        # Job.clean() applies the jobs.use_shell rule (jobs.models.gate) to these values
        # for this user: a refusal is a 403, before any other message.
        job.acting_user = _user(self)
        try:
            job.full_clean()
        except DjangoValidationError as exc:
            refusal = gate.refusal_of(exc)
            if refusal is not None:
                raise exceptions.PermissionDenied(refusal) from None
            raise serializers.ValidationError(field_errors(exc)) from None
        if "command" in attrs:
            attrs["command"] = job.command  # as Job.clean() left it: CR LF as LF
        if "arguments" in attrs or "command" in attrs or "executor" in attrs:
            attrs["arguments"] = job.arguments  # as Job.clean() left it: bound, normalised
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


def _refuse_code_changes(job: Job, attrs: dict[str, Any]) -> None:
    """A 400 at each field the job's code owns (jobs.models.code) that `attrs` changes;
    the same value sent back (a PUT of the job as read) is no change."""
    refusal = code_rules.refusal(job)
    refused = {
        name: [refusal]
        for name in sorted(job.code_fields & attrs.keys())
        if attrs[name] != getattr(job, name)
    }
    if refused:
        raise serializers.ValidationError(refused)


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
    the status: no HTTP code, no error text (jobs.access.masking)."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        state_limits(fields, NOTIFICATION_LIMITS)
        return fields

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
        data["arguments"] = shown_arguments(_user(self), data.get("arguments"), instance.job)
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
            _user(self), data.get("log") or "", instance.arguments, instance.job
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


class TaskParameterSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=[(kind, kind) for kind in signature.KINDS])
    required = serializers.BooleanField()
    default = serializers.SerializerMethodField(
        help_text="The default as JSON; null when there is none (see required)."
    )
    choices = serializers.ListField(
        child=serializers.JSONField(), help_text="Enum or Literal values."
    )
    annotation_text = serializers.CharField(allow_blank=True)
    nullable = serializers.BooleanField()

    @extend_schema_field({"description": "Any JSON value."})
    def get_default(self, parameter: signature.TaskParameter) -> Any:
        if parameter.required:
            return None
        value = signature.json_value(parameter.default)
        return value if _is_json(value) else signature.short_repr(parameter.default)


def _is_json(value: Any) -> bool:
    import json

    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


class TaskSerializer(serializers.Serializer):
    """A registered Python task a python job may run (its name goes in the job's command)."""

    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    signature = serializers.CharField(source="signature_text")
    parameters = TaskParameterSerializer(many=True)


@extend_schema_field(
    {
        "type": "object",
        "description": 'Each changed field\'s [old, new] value: {"name": ["old", "new"]}.',
        "additionalProperties": {"type": "array", "items": {}, "minItems": 2, "maxItems": 2},
    }
)
class ChangesField(serializers.Field):
    """{"field": [old, new]} (for the schema; JobChangeSerializer masks the values)."""

    def to_representation(self, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        # Masked by JobChangeSerializer, which knows the record (jobs.access.masking.shown_changes).
        return value


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

    def to_representation(self, instance: JobChange) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["changes"] = shown_changes(_user(self), instance)
        return data

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        state_limits(fields, {"id": Limits(1, None)})
        return fields

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


class BoundDateTimeField(serializers.DateTimeField):
    """A date-time to compare with, for a filter. A moment the schema allows but that
    lies before year 1 or after year 9999 once moved to UTC ("0001-01-01T00:00+12:00")
    is read as the first or last moment there is: every stored time compares with it
    as it would with the moment given."""

    def enforce_timezone(self, value: datetime) -> datetime:
        try:
            return super().enforce_timezone(value)
        except serializers.ValidationError:
            if value.year == datetime.min.year:
                return datetime.min.replace(tzinfo=UTC)
            if value.year == datetime.max.year:
                return datetime.max.replace(tzinfo=UTC)
            raise


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


# --- the schedule preview (jobs/forecasts/preview.py) ---------------------------------------------


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
