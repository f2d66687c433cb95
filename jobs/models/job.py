"""Jobs: what runs, on which schedule, and the queries the screens ask about them.

Invariants live in the database (CheckConstraint / UniqueConstraint), not only here:
several scheduler processes write these tables and only the database sees them all.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models, router, transaction
from django.db.models import Q, Value
from django.urls import reverse
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from jobs import text, times
from jobs.access import masking
from jobs.access import permissions as access
from jobs.models import chains, changes, code, gate, job_rules
from jobs.models.choices import (
    CODE_SOURCE_MAX_LENGTH,
    COMMAND_MAX_LENGTH,
    COPY_SUFFIX,
    CRON_EXPRESSION_MAX_LENGTH,
    DEFAULT_QUEUE,
    DEFAULT_RETRY_BACKOFF_SECONDS,
    DESCRIPTION_MAX_LENGTH,
    ENGINE_COUNTER_FIELDS,
    MAX_PRIORITY,
    MAX_RETRIES_LIMIT,
    MAX_RETRY_BACKOFF_SECONDS,
    MIN_PRIORITY,
    NAME_MAX_LENGTH,
    NOTIFY_EMAILS_MAX_LENGTH,
    QUEUE_NAME_MAX_LENGTH,
    SCHEDULE_FIELDS,
    SCHEDULER_FIELDS,
    STATE_BY_LAST_STATUS,
    STREAK_RULE_FIELDS,
    TIME_ZONE_MAX_LENGTH,
    WEBHOOK_URL_MAX_LENGTH,
    ExecutorKind,
    IntervalUnit,
    JobState,
    MisfirePolicy,
    OverlapPolicy,
    RunStatus,
    ScheduleType,
    validate_schedule_time,
)
from jobs.models.job_queries import JobQuerySet
from jobs.outbound.signing import SECRET_MAX_LENGTH
from jobs.pytasks import registry, signature
from jobs.schedules import arithmetic as schedules
from jobs.schedules.words import describe_cron


class Job(models.Model):
    # The user an entry point acts for (set before full_clean()): Job.clean() applies the
    # jobs.use_shell rule to them (jobs.models.gate). None: the site's own code.
    acting_user: Any = None

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(_("name"), max_length=NAME_MAX_LENGTH)
    description = models.TextField(_("description"), blank=True, max_length=DESCRIPTION_MAX_LENGTH)
    # What runs, read per executor: a registered task's name (python), a management
    # command line (command), a command line (shell), a URL (http); for simulated jobs
    # only words for the log.
    command = models.CharField(
        _("command"),
        max_length=COMMAND_MAX_LENGTH,
        help_text=_(
            "What the job runs: the task's name, the management command line, the shell "
            "command line or the URL, as the executor reads it."
        ),
    )
    # db_default too: rows inserted by raw SQL (the benchmarks, scripts) are simulated.
    executor = models.CharField(
        _("executor"),
        max_length=16,
        choices=ExecutorKind.choices,
        default=ExecutorKind.SIMULATED,
        db_default=ExecutorKind.SIMULATED,
        help_text=_("What a run does: simulate, call a Python task, run a command or a request."),
    )
    # A JSON object, read per executor (docs/executors.md): keyword
    # arguments (python), method/headers/body/expect_status (http), env (shell).
    arguments = models.JSONField(
        _("arguments"),
        default=dict,
        db_default=Value({}, output_field=models.JSONField()),
        blank=True,
        help_text=_("A JSON object, read by the executor (keyword arguments of a Python task)."),
    )
    schedule_type = models.CharField(
        _("schedule"), max_length=16, choices=ScheduleType.choices, default=ScheduleType.INTERVAL
    )
    scheduled_at = models.DateTimeField(
        _("run at"),
        null=True,
        blank=True,
        validators=[validate_schedule_time],
        help_text=_("Once: when to run. Every N units: when the first run happens (optional)."),
    )
    # A plain integer: Job.clean() gives the one message for a value below 1 (a field
    # validator would add a second), and jobs_job_interval_valid refuses it in the database.
    interval = models.IntegerField(_("every"), null=True, blank=True)
    interval_unit = models.CharField(
        _("unit"), max_length=16, choices=IntervalUnit.choices, blank=True
    )
    # db_default on the new columns: rows inserted by raw SQL that predates them (the
    # benchmark, scripts) still get a value.
    cron_expression = models.CharField(
        _("cron expression"),
        max_length=CRON_EXPRESSION_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        help_text=_(
            "Five fields: minute, hour, day of month, month, day of week. "
            "For example “30 2 * * *”: 02:30 every day."
        ),
    )
    timezone = models.CharField(
        _("time zone"),
        max_length=TIME_ZONE_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        help_text=_("The zone the cron expression is read in. Blank: the site's time zone."),
    )
    misfire_policy = models.CharField(
        _("after downtime"),
        max_length=16,
        choices=MisfirePolicy.choices,
        default=MisfirePolicy.COALESCE,
    )
    max_retries = models.PositiveSmallIntegerField(
        _("retries"),
        default=0,
        validators=[MaxValueValidator(MAX_RETRIES_LIMIT)],
        help_text=_("How many times a failed run is tried again."),
    )
    retry_backoff_seconds = models.PositiveIntegerField(
        _("retry backoff (seconds)"),
        default=DEFAULT_RETRY_BACKOFF_SECONDS,
        validators=[MaxValueValidator(MAX_RETRY_BACKOFF_SECONDS)],
        help_text=_("Wait before the first retry; doubles for each further one."),
    )
    overlap_policy = models.CharField(
        _("when the previous run is still going"),
        max_length=16,
        choices=OverlapPolicy.choices,
        default=OverlapPolicy.ALLOW,
        db_default=OverlapPolicy.ALLOW,
    )
    # Chains (jobs/models/chains.py, jobs/engine/chains.py): edited through set_chains().
    on_success = models.ManyToManyField(
        "self",
        symmetrical=False,
        blank=True,
        related_name="after_success_of",
        verbose_name=_("on success, run"),
        help_text=_("Jobs to run each time a run of this job succeeds."),
    )
    on_failure = models.ManyToManyField(
        "self",
        symmetrical=False,
        blank=True,
        related_name="after_failure_of",
        verbose_name=_("on failure, run"),
        help_text=_("Jobs to run when a run of this job fails for good, after its retries."),
    )
    # Plain integers and floats: Job.clean() gives one message per bad value, and the
    # database constraints below refuse them too.
    timeout_seconds = models.IntegerField(
        _("timeout (seconds)"),
        null=True,
        blank=True,
        help_text=_("A run still going after this long is stopped and fails. Blank: no limit."),
    )
    sim_failure_rate = models.FloatField(
        _("simulated failure rate"),
        null=True,
        blank=True,
        help_text=_("From 0 (never fails) to 1 (always fails). Blank: the default."),
    )
    sim_min_seconds = models.FloatField(
        _("shortest simulated run (seconds)"),
        null=True,
        blank=True,
        help_text=_("Blank: the default."),
    )
    sim_max_seconds = models.FloatField(
        _("longest simulated run (seconds)"),
        null=True,
        blank=True,
        help_text=_("Blank: the default."),
    )
    # Worker pools (docs/scaling.md "Queues"): which processes execute the runs, and in what order
    # the waiting ones start. db_default too: rows inserted by raw SQL land in the default.
    queue = models.CharField(
        _("queue"),
        max_length=QUEUE_NAME_MAX_LENGTH,
        default=DEFAULT_QUEUE,
        db_default=DEFAULT_QUEUE,
        help_text=_(
            "The worker pool that runs this job: letters, digits, “-” and “_”. "
            "Processes started for other queues leave its runs alone."
        ),
    )
    priority = models.SmallIntegerField(
        _("priority"),
        default=0,
        db_default=0,
        help_text=format_lazy(
            _(
                "From {lowest} to {highest}: of the runs waiting in a queue, higher "
                "priorities start first."
            ),
            lowest=MIN_PRIORITY,
            highest=MAX_PRIORITY,
        ),
    )
    is_active = models.BooleanField(_("active"), default=True)
    # Origin of an interval job's grid: occurrences are anchor_at + k * interval.
    anchor_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_run_at = models.DateTimeField(_("last run"), null=True, blank=True, editable=False)
    last_run_status = models.CharField(
        max_length=16, choices=RunStatus.choices, blank=True, editable=False
    )
    next_run_at = models.DateTimeField(_("next run"), null=True, blank=True, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)
    # Failure alerts (jobs/alerts): where to say that a run failed or a job recovered.
    # Database defaults too, so rows inserted by raw SQL (benchmarks) need not name them.
    notify_on_failure = models.BooleanField(
        _("alert on failure"),
        default=False,
        db_default=False,
        help_text=_(
            "Send an alert when runs of this job fail (see “alert after failed runs in a "
            "row”), and when a run is still going long after it should have ended."
        ),
    )
    notify_on_recovery = models.BooleanField(
        _("alert on recovery"),
        default=False,
        db_default=False,
        help_text=_(
            "Send an alert when a run succeeds after failed runs in a row that alerted "
            "(see “alert after failed runs in a row”)."
        ),
    )
    webhook_url = models.URLField(
        _("webhook URL"),
        max_length=WEBHOOK_URL_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        help_text=_("Alerts are POSTed here as JSON."),
    )
    notify_emails = models.TextField(
        _("alert e-mail addresses"),
        max_length=NOTIFY_EMAILS_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        help_text=_("Separated by commas or new lines."),
    )
    # The alert rules (jobs/alerts). Plain integers: Job.clean() gives the one message for
    # a bad value, and the constraints (job_rules) refuse it in the database too.
    alert_after_failures = models.IntegerField(
        _("alert after failed runs in a row"),
        default=1,
        db_default=1,
        help_text=_(
            "The failure alert goes out when this many runs in a row have failed (each "
            "after its retries), and not again until a run succeeds. From 1 to 100."
        ),
    )
    expected_seconds = models.IntegerField(
        _("expected duration (seconds)"),
        null=True,
        blank=True,
        help_text=_(
            "A run still going after this long sends one “running long” alert. Blank: "
            "three times the 95th percentile of the job's last 1,000 runs, once it has 20."
        ),
    )
    # Write-only (jobs.access.masking.WRITE_ONLY_JOB_FIELDS): never shown back, nor kept in the
    # audit trail.
    webhook_secret = models.CharField(
        _("webhook signing secret"),
        max_length=SECRET_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        help_text=_(
            "Signs this job's webhooks in place of the site's JOBS_WEBHOOK_SECRET: "
            "“whsec_” followed by the base64 of 24 to 64 random bytes. Never shown again."
        ),
    )
    # Failed runs in a row (each after its retries), counted by the alerts in the engine's
    # transaction while the job has alerts on; a success sets it back to 0.
    consecutive_failures = models.PositiveIntegerField(
        _("failed runs in a row"), default=0, db_default=0, editable=False
    )
    # Declared in code (jobs/codesync.py; docs/scheduling.md "Schedules in code"): the declaration's
    # key, unique while set so that any number of processes syncing at once make one job
    # per key (NULL, not "", for the jobs made elsewhere: the constraint holds only where
    # it is set); the file it is declared in; the values it last declared, which the
    # code owns (jobs/models/code.py), None once the declaration is gone. Not editable:
    # no form, and no version in the audit trail, carries them.
    code_key = models.CharField(  # noqa: DJ001
        _("code key"), max_length=NAME_MAX_LENGTH, null=True, blank=True, editable=False
    )
    code_source = models.CharField(
        _("defined in"),
        max_length=CODE_SOURCE_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        editable=False,
    )
    code_declaration = models.JSONField(
        _("declared in code"), null=True, blank=True, editable=False
    )

    objects = JobQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("job")
        verbose_name_plural = _("jobs")
        # Beside Django's view/add/change/delete_job (docs: docs/permissions.md "Who can do what").
        permissions = [
            ("run_job", _("Can run jobs now, retry runs and cancel runs")),
            ("use_shell", _("Can create or change jobs that run shell commands")),
        ]
        indexes = [
            # engine.claim_due: active jobs with next_run_at <= now, ordered by next_run_at;
            # JobQuerySet.next_due_at: the earliest one. Partial, so inactive jobs cost nothing.
            models.Index(fields=["next_run_at"], condition=Q(is_active=True), name="jobs_job_due"),
            # The job list, sorted and searched by name.
            models.Index(fields=["name"], name="jobs_job_name"),
            # The queue filters (dashboard, admin, API) and the queues' list of names.
            models.Index(fields=["queue"], name="jobs_job_queue"),
        ]
        constraints = [
            *job_rules.job_constraints(),
            # One job per declaration in code, however many processes sync at once.
            models.UniqueConstraint(
                fields=["code_key"],
                condition=Q(code_key__isnull=False),
                name="jobs_job_code_key_unique",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        """The job's dashboard page (the admin links to it too)."""
        return reverse("jobs:job_detail", args=[self.pk])

    # --- changes an operator makes ------------------------------------------------------

    def set_active(self, active: bool, *, user: object = None) -> None:
        """Enable or disable the job. Enabling resumes its grid at the next point to come.

        Raises ValidationError when the job cannot be active as it is (a one-off whose
        time has passed), or when `user` may not enable it (jobs.models.gate: a job that
        needs jobs.use_shell); nothing is saved then.
        """
        was_active = self.is_active
        self.is_active = active
        self.acting_user = user
        try:
            self.full_clean()
        except ValidationError:
            self.is_active = was_active
            raise
        self.save()

    def duplicate(self) -> tuple[Job, str | None]:
        """Save a copy named "<name> (copy)"; returns it, and why it was saved disabled.

        A copy that would not validate as active (a one-off whose time has passed) is
        saved disabled rather than refused, so the operator can fix the time and enable
        it. Raises ValidationError when the copy is invalid even disabled.
        """
        copy = Job(
            name=self.name[: NAME_MAX_LENGTH - len(COPY_SUFFIX)] + COPY_SUFFIX,
            **{
                field.name: getattr(self, field.name)
                for field in Job._meta.concrete_fields
                if field.editable and not field.primary_key and field.name != "name"
            },
        )
        disabled_because = None
        try:
            copy.full_clean()
        except ValidationError as error:
            if not copy.is_active:
                raise
            disabled_because = " ".join(error.messages)
            copy.is_active = False
            copy.full_clean()
        copy.save()  # computes anchor_at and next_run_at
        return copy, disabled_because

    def restore(self, version: changes.JobChange, *, user: object = None) -> bool:
        """Put back the fields as they were after `version` (a JobChange of this job);
        False when they are so already (nothing is saved or recorded then).

        Validated like any edit; raises ValidationError and leaves the job as it was
        when that version would not be valid now (a one-off time since passed, say).
        With `user`, raises PermissionDenied when the job, as it is or as it would be,
        needs jobs.use_shell and the user has not got it (see may_restore). Recorded as
        a "restore".
        """
        if user is not None and not self.may_restore(version, user):
            raise gate.ShellPermissionRequired(gate.change_message())
        # The fields the code owns stay as the code declares them.
        editable = set(changes.audited_fields(type(self))) - self.code_fields
        wanted = {
            name: self._meta.get_field(name).to_python(value)
            for name, value in (version.snapshot or {}).items()
            if name in editable
        }
        before = {name: getattr(self, name) for name in wanted}
        if before == wanted:
            return False
        for name, value in wanted.items():
            setattr(self, name, value)
        self.acting_user = user
        try:
            self.full_clean()
        except ValidationError:
            for name, value in before.items():
                setattr(self, name, value)
            raise
        self.save(change_action=changes.ChangeAction.RESTORE)
        return True

    def may_restore(self, version: changes.JobChange, user: object) -> bool:
        """Whether `user` may restore `version`: jobs.use_shell when the job, as it is or
        as that version was, runs shell commands (or a dangerous management command)."""
        if access.may_use_shell(user):
            return True
        return not (gate.needs_use_shell(self) or gate.needs_use_shell(version.snapshot or {}))

    def set_chains(self, *, on_success=None, on_failure=None) -> None:  # type: ignore[no-untyped-def]
        """Say what the chain lists should be (jobs or ids; None leaves a list as it is).

        Validated by full_clean() (too many, or a loop), written and recorded in the
        audit trail by the next save(), in its transaction (jobs/models/chains.py).
        """
        chains.set_pending(self, on_success, on_failure)

    # --- declared in code -------------------------------------------------------------

    @property
    def code_fields(self) -> frozenset[str]:
        """The fields the code owns (jobs/models/code.py): read-only everywhere else."""
        return code.owned_fields(self)

    @property
    def declared_in_code(self) -> bool:
        """Synced from a declaration in code that is still there."""
        return bool(self.code_key) and self.code_declaration is not None

    # --- loading and saving ---------------------------------------------------------

    @classmethod
    def from_db(cls, db, field_names, values, *args, **kwargs):  # type: ignore[no-untyped-def]
        # *args/**kwargs: Django 6.1 passes fetch_mode, 5.2 does not.
        instance = super().from_db(db, field_names, values, *args, **kwargs)
        # Remember the schedule as loaded, so save() knows whether it changed. With a
        # schedule field deferred (.only()/.defer()) reading it here would load it (and
        # recurse through from_db), so the snapshot is taken at save time instead.
        deferred = instance.get_deferred_fields()
        if not deferred & set(SCHEDULE_FIELDS):
            instance._loaded_schedule = instance._schedule_snapshot()
        # The audited values as loaded, so save() records what it changed (jobs.models.
        # changes); read at save time instead when some were deferred.
        if not deferred & set(changes.audited_fields(cls)):
            instance._loaded_values = changes.job_values(instance)
        return instance

    def refresh_from_db(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().refresh_from_db(*args, **kwargs)
        # The values loaded now are the stored ones: save() reads them again if needed.
        self.__dict__.pop("_loaded_values", None)

    def _fields_but(self, excluded: tuple[str, ...]) -> list[str]:
        return [
            f.name
            for f in self._meta.concrete_fields
            if not f.primary_key and f.name not in excluded
        ]

    def _values_as_loaded(self) -> dict | None:
        """The audited values as loaded, or as stored now if they were not loaded (None
        for a job not stored yet)."""
        if "_loaded_values" not in self.__dict__:
            fields = changes.audited_fields(type(self))
            stored = type(self).objects.filter(pk=self.pk).values(*fields).first()
            return (
                None
                if stored is None
                else {name: changes.json_value(value) for name, value in stored.items()}
            )
        return self._loaded_values

    def _stored_schedule(self) -> tuple | None:
        """The schedule as loaded, or as stored now if it was not loaded."""
        if "_loaded_schedule" not in self.__dict__ and not self._state.adding:
            stored = type(self).objects.filter(pk=self.pk).values_list(*SCHEDULE_FIELDS).first()
            self._loaded_schedule = tuple(stored) if stored is not None else None
        return getattr(self, "_loaded_schedule", None)

    def _schedule_snapshot(self) -> tuple:
        return tuple(getattr(self, name) for name in SCHEDULE_FIELDS)

    @property
    def step(self) -> timedelta | None:
        if self.schedule_type != ScheduleType.INTERVAL or not self.interval:
            return None
        return schedules.interval_step(self.interval, self.interval_unit)

    @property
    def cron_zone_name(self) -> str:
        """The zone a cron expression is read in: the job's, or the site's TIME_ZONE."""
        return self.timezone or settings.TIME_ZONE

    def cron_schedule(self) -> schedules.CronSchedule | None:
        """The cron schedule, or None when this is not a (valid) cron job."""
        if self.schedule_type != ScheduleType.CRON or not self.cron_expression:
            return None
        try:
            return schedules.CronSchedule(self.cron_expression, self.cron_zone_name)
        except schedules.ScheduleError:
            return None

    def _schedule_changed(self) -> bool:
        loaded = self._stored_schedule()
        return loaded is None or loaded != self._schedule_snapshot()

    def refresh_schedule(self, now: datetime | None = None) -> None:
        """Recompute the anchor and the next occurrence after the schedule changed.

        Called by save(); the scheduler itself moves next_run_at with its own updates.
        """
        now = now or timezone.now()
        loaded = self._stored_schedule()
        grid_changed = loaded is None or loaded[:-1] != self._schedule_snapshot()[:-1]
        if self.schedule_type == ScheduleType.ONCE:
            self.anchor_at = None
            self.next_run_at = self.scheduled_at if self.is_active else None
            return
        if self.schedule_type == ScheduleType.CRON:
            # No grid: the next occurrence after now, in the job's zone.
            self.anchor_at = None
            cron = self.cron_schedule()
            self.next_run_at = cron.next_after(now) if cron and self.is_active else None
            return
        step = self.step
        if step is None:
            return  # invalid; the database constraint will refuse it
        if grid_changed or self.anchor_at is None:
            self.anchor_at = schedules.first_interval_anchor(now, step, self.scheduled_at)
        # Resume on the grid at the first point still to come: no burst of stale runs.
        self.next_run_at = (
            schedules.first_occurrence_at_or_after(self.anchor_at, step, now)
            if self.is_active
            else None
        )

    def save(self, *args, change_action: str | None = None, **kwargs) -> None:  # type: ignore[no-untyped-def]
        """Save, and record what changed in the audit trail (jobs.models.changes) in the
        same transaction. `change_action` names the change when it is not a plain
        create, edit, enable or disable (a restore)."""
        self.clear_unused_schedule_fields()
        adding = self._state.adding
        explicit_fields = kwargs.get("update_fields")
        old = None if adding else self._values_as_loaded()
        if adding or self._schedule_changed():
            self.refresh_schedule()
            if not adding and explicit_fields is None:
                kwargs["update_fields"] = self._fields_but(ENGINE_COUNTER_FIELDS)
            elif not adding:
                # The fields named, and where the new schedule puts the job.
                kwargs["update_fields"] = list(
                    dict.fromkeys([*explicit_fields, "anchor_at", "next_run_at"])
                )
        elif explicit_fields is None:
            # Leave the scheduler's fields alone: this copy may have been loaded before
            # the scheduler last moved them.
            kwargs["update_fields"] = self._fields_but(SCHEDULER_FIELDS + ENGINE_COUNTER_FIELDS)
        written = STREAK_RULE_FIELDS if explicit_fields is None else explicit_fields
        if old is not None and any(
            old.get(name) != getattr(self, name) for name in STREAK_RULE_FIELDS if name in written
        ):
            # Counted under other rules (or not at all, with alerts off): start afresh.
            self.consecutive_failures = 0
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = [*kwargs["update_fields"], "consecutive_failures"]
        with transaction.atomic(using=kwargs.get("using") or router.db_for_write(type(self))):
            super().save(*args, **kwargs)
            chained = chains.save_pending(self)
            changes.record_save(self, old, change_action, explicit_fields, chained)
        self._loaded_schedule = self._schedule_snapshot()
        self._loaded_values = changes.job_values(self)

    # --- validation -----------------------------------------------------------------

    def clear_unused_schedule_fields(self) -> None:
        """Set the schedule fields the job's type does not use to their empty values
        (jobs.models.choices.SCHEDULE_FIELD_UNUSED), whatever a form, the admin or the
        API sent for them: a one-off job has no interval (null, never a 0 that would
        mean nothing) and no misfire or overlap policy but the defaults."""
        for name, value in job_rules.unused_schedule_values(self.schedule_type).items():
            setattr(self, name, value)

    def clean_fields(self, exclude: Collection[str] | None = None) -> None:
        # First, so that a value sent for a field the schedule does not use is neither
        # judged nor kept.
        self.clear_unused_schedule_fields()
        # An empty policy gets clean()'s one message (job_rules.policy_errors), not a
        # second one from here.
        empty = {name for name in job_rules.POLICY_MESSAGES if not getattr(self, name)}
        super().clean_fields(exclude={*(exclude or ()), *empty})

    def clean(self) -> None:
        """Field-level messages for every way a job can be wrong (jobs/models/job_rules.py).

        Forms, the admin and the API all call this (through full_clean), so the rules
        live in one place.
        """
        super().clean()
        # A browser sends a textarea's line breaks as CR LF; a lone CR is refused.
        self.command = text.normalize_newlines(self.command)
        errors = job_rules.job_errors(
            self,
            schedule_changed=self._schedule_changed,
            webhook_changed=self._webhook_changed,
            command_changed=self._command_changed,
        )
        errors.update(chains.chain_errors(self))
        if errors:
            raise ValidationError(errors)
        # Last, on the values as every rule left them: whether the acting user may make
        # the job this (jobs.models.gate). A refusal comes alone (the API's 403).
        refusal = gate.change_refusal(self.acting_user, self)
        if refusal is not None:
            raise ValidationError({refusal.field: ValidationError(refusal.message, code=gate.CODE)})

    def schedule_errors(self) -> dict[str, str]:
        """What clean() says about the schedule fields alone, word for word: the
        schedule preview (jobs/forecasts/preview.py) shows these instead of occurrences."""
        errors = job_rules.schedule_errors(self, schedule_changed=self._schedule_changed)
        text = job_rules.text_errors(self)
        if "cron_expression" in text:
            errors["cron_expression"] = text["cron_expression"]
        return errors

    def _command_changed(self) -> bool:
        if self._state.adding:
            return True
        loaded = self._values_as_loaded() or {}
        return loaded.get("command") != self.command or loaded.get("executor") != self.executor

    # --- what runs --------------------------------------------------------------------

    @property
    def execution_problem(self) -> str:
        """Why this job's runs fail before doing anything, though it was valid when saved
        (its task no longer registered, its command no longer listed, its executor
        switched off, its URL's host now refused); "" when nothing stops it. The runs
        fail with this reason in their log; the scheduler goes on."""
        return job_rules.execution_problem(self) or ""

    @property
    def execution_text(self) -> str:
        """What the job runs, in words: "Python task billing.send(day='today')",
        "Shell: backup.sh --full". Shown to anyone who may see the job: URL credentials and
        secret-named task arguments masked (jobs.access.masking)."""
        return masking.mask_urls(str(self._execution_words()))

    def _execution_words(self) -> str:
        if self.executor == ExecutorKind.PYTHON:
            given = masking.mask_arguments(
                self.arguments if isinstance(self.arguments, dict) else {}
            )
            # In the order of the task's signature: PostgreSQL's jsonb keeps the keys of
            # an object in an order of its own (shortest first).
            task = registry.get_task(self.command)
            order = {p.name: index for index, p in enumerate(task.parameters)} if task else {}
            names = sorted(given, key=lambda name: order.get(name, len(order)))
            arguments = ", ".join(
                f"{name}={signature.short_repr(given[name], 40)}" for name in names
            )
            return _("Python task %(call)s") % {"call": f"{self.command}({arguments})"}
        if self.executor == ExecutorKind.COMMAND:
            return _("Management command: %(line)s") % {"line": self.command}
        if self.executor == ExecutorKind.SHELL:
            return _("Shell: %(line)s") % {"line": self.command}
        if self.executor == ExecutorKind.HTTP:
            method = str((self.arguments or {}).get("method") or "GET").upper()
            return _("HTTP %(method)s %(url)s") % {"method": method, "url": self.command}
        return _("Simulated: %(command)s") % {"command": self.command}

    def run_arguments(self, arguments: dict | None) -> dict | None:
        """Arguments for one run of this job ("Run now" with arguments), checked and
        normalised as the job's own are; None stays None (the run takes the job's).
        Values sent back as they were shown masked (a URL's "?token=…") are the job's
        own (jobs.access.masking.restore_field). Raises ValidationError with the messages at
        "arguments"."""
        if arguments is None:
            return None
        try:
            arguments = masking.restore_field("arguments", arguments, self.arguments)
        except ValidationError as exc:
            raise ValidationError({"arguments": exc.messages}) from None
        return job_rules.run_arguments(self, arguments)

    def _webhook_changed(self) -> bool:
        if self._state.adding or not self.webhook_url:
            return True
        # As loaded (the audit trail's copy), so an edit costs no extra query.
        loaded = self._values_as_loaded() or {}
        return loaded.get("webhook_url") != self.webhook_url

    @property
    def notify_email_list(self) -> list[str]:
        """The alert addresses, split on commas, semicolons and white space."""
        return job_rules.email_list(self.notify_emails)

    # --- presentation helpers -------------------------------------------------------

    @property
    def schedule_text(self) -> str:
        """The schedule in words: "every 10 minutes", "once at 2026-12-01 09:00:00 UTC"."""
        if self.schedule_type == ScheduleType.ONCE:
            if self.scheduled_at is None:
                return str(_("once (no time set)"))
            # Written as every other moment on the screens (jobs.times), in the reader's zone.
            when = times.moment_text(self.scheduled_at)
            return str(_("once at %(when)s") % {"when": when})
        if self.schedule_type == ScheduleType.CRON:
            return str(
                _("%(schedule)s, %(zone)s")
                % {"schedule": describe_cron(self.cron_expression), "zone": self.cron_zone_name}
            )
        if not self.interval or self.interval_unit not in IntervalUnit.values:
            return str(_("no valid schedule"))
        texts = {
            IntervalUnit.SECOND: ngettext("every second", "every %(n)d seconds", self.interval),
            IntervalUnit.MINUTE: ngettext("every minute", "every %(n)d minutes", self.interval),
            IntervalUnit.HOUR: ngettext("every hour", "every %(n)d hours", self.interval),
            IntervalUnit.DAY: ngettext("every day", "every %(n)d days", self.interval),
        }
        return texts[self.interval_unit] % {"n": self.interval}

    @property
    def state(self) -> str:
        """waiting / running / succeeded / failed / skipped / cancelled, from the latest run.

        Reads `is_running` when the queryset was annotated with with_running().
        """
        running = getattr(self, "is_running", None)
        if running is None:
            running = self.runs.filter(status=RunStatus.RUNNING).exists()
        if running:
            return JobState.RUNNING
        return STATE_BY_LAST_STATUS.get(self.last_run_status, JobState.WAITING)
