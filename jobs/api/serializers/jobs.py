"""The job serializer. Job validation is Job.full_clean(): the same rules as the forms
and the admin, in one place (Job.clean), answered field by field."""

from __future__ import annotations

import copy
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions, serializers

from jobs.access.masking import (
    SECRET_JOB_FIELDS,
    may_see_secrets,
    restore_field,
    shown_value,
)
from jobs.access.permissions import VIEW_JOB
from jobs.api.limits import (
    JOB_LIMITS,
    JOB_PATTERNS,
    state_limits,
)
from jobs.api.serializers.fields import ArgumentsField, field_errors, request_user
from jobs.models import (
    MAX_CHAINED_JOBS,
    NOTIFY_EMAILS_MAX_LENGTH,
    WEBHOOK_URL_MAX_LENGTH,
    ExecutorKind,
    Job,
    JobState,
    NotificationChannel,
    RunStatus,
    gate,
)
from jobs.models import code as code_rules
from jobs.models.chains import CHAIN_FIELDS
from jobs.outbound.signing import SECRET_MAX_LENGTH
from jobs.web import scoping


class OtherTeamChainsSerializer(serializers.Serializer):
    """How many jobs the user may not see each chain list holds (JobSerializer)."""

    on_success = serializers.IntegerField(min_value=0, max_value=MAX_CHAINED_JOBS)
    on_failure = serializers.IntegerField(min_value=0, max_value=MAX_CHAINED_JOBS)


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
    other_team_chains = serializers.SerializerMethodField(
        help_text="How many jobs of a team you may not see each chain list (on_success, "
        "on_failure) holds besides the ids shown: left out of the lists, and kept as they "
        "are when the lists are written."
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
    channels = serializers.PrimaryKeyRelatedField(
        many=True,
        queryset=NotificationChannel.objects.all(),
        required=False,
        help_text="Ids of the alert channels its alerts go to; none: its team's default ones.",
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
    enqueued_task = serializers.BooleanField(
        read_only=True,
        help_text=(
            "The job of an enqueued Django task (TASKS backend jobs.tasks_backend."
            "SchedulerBackend): made by the task's first enqueue(), one run per enqueue."
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
            "team",
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
            "calendar",
            "calendar_policy",
            "jitter_seconds",
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
            "channels",
            "alert_after_failures",
            "expected_seconds",
            "webhook_secret",
            "has_webhook_secret",
            "other_team_chains",
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
            "enqueued_task",
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

    def _hidden_chains(self, job: Job) -> dict[str, list[Job]]:
        """Each chain list's jobs the request's user may not see (jobs.web.scoping): from
        the prefetched lists, no query of their own."""
        request = self.context.get("request")
        if request is None or job.pk is None:
            return {name: [] for name in CHAIN_FIELDS}
        return {
            name: [
                target
                for target in getattr(job, name).all()
                if not scoping.may(request, VIEW_JOB, target)
            ]
            for name in CHAIN_FIELDS
        }

    @extend_schema_field(OtherTeamChainsSerializer)
    def get_other_team_chains(self, job: Job) -> dict[str, int]:
        return {name: len(hidden) for name, hidden in self._hidden_chains(job).items()}

    def to_representation(self, instance: Job) -> dict[str, Any]:
        data = super().to_representation(instance)
        for name, hidden in self._hidden_chains(instance).items():
            if name in data and hidden:
                left_out = {str(target.pk) for target in hidden}
                data[name] = [pk for pk in data[name] if str(pk) not in left_out]
        see_secrets = may_see_secrets(request_user(self), instance)
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
            # The chained jobs the user may not see were not in what they read: kept.
            for name, hidden in self._hidden_chains(self.instance).items():
                if name in attrs:
                    attrs[name] = [*attrs[name], *(t for t in hidden if t not in attrs[name])]
        # Build the job as it would be saved and let the model judge it. A copy, so a
        # rejected update leaves the loaded instance untouched.
        job = copy.copy(self.instance) if self.instance is not None else Job()
        for name, value in attrs.items():
            if name not in CHAIN_FIELDS and name != "channels":
                setattr(job, name, value)
        # Lists of jobs are judged by Job.clean() too (a loop, too many): jobs.models.chains.
        job.set_chains(**_chains(attrs))
        # Job.clean() applies the jobs.use_shell rule (jobs.models.gate) to these values
        # for this user: a refusal is a 403, before any other message.
        job.acting_user = request_user(self)
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
        channels = validated_data.pop("channels", None)
        job = Job(**validated_data)
        job.set_chains(**chains)
        job.save()  # writes the chains and records them with the rest
        if channels is not None:
            job.channels.set(channels)
        return job

    def update(self, instance: Job, validated_data: dict[str, Any]) -> Job:
        chains = _chains(validated_data, pop=True)
        channels = validated_data.pop("channels", None)
        for name, value in validated_data.items():
            setattr(instance, name, value)
        instance.set_chains(**chains)
        instance.save()
        if channels is not None:
            instance.channels.set(channels)
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
