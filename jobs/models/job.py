"""Jobs: what runs, on which schedule, and the queries the screens ask about them.

The fields live here, each with its reason; the methods by subject beside it: loading and
saving (job_saving.py), the schedule (job_schedule.py), an operator's changes
(job_operator.py), the job in words (job_words.py), the rules (job_rules.py) and the
queries (job_queries.py).

Invariants live in the database (CheckConstraint / UniqueConstraint), not only here:
several scheduler processes write these tables and only the database sees them all.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import Q, Value
from django.urls import reverse
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from jobs import text
from jobs.access import masking
from jobs.calendars.planning import MAX_JITTER_SECONDS
from jobs.models import chains, code, gate, job_rules, quotas, teams
from jobs.models.calendars import CalendarPolicy
from jobs.models.choices import (
    CODE_SOURCE_MAX_LENGTH,
    COMMAND_MAX_LENGTH,
    CRON_EXPRESSION_MAX_LENGTH,
    DEFAULT_QUEUE,
    DEFAULT_RETRY_BACKOFF_SECONDS,
    DESCRIPTION_MAX_LENGTH,
    IMPORT_SOURCE_MAX_LENGTH,
    MAX_PRIORITY,
    MAX_RETRIES_LIMIT,
    MAX_RETRY_BACKOFF_SECONDS,
    MIN_PRIORITY,
    NAME_MAX_LENGTH,
    NOTIFY_EMAILS_MAX_LENGTH,
    QUEUE_NAME_MAX_LENGTH,
    TIME_ZONE_MAX_LENGTH,
    WEBHOOK_URL_MAX_LENGTH,
    ExecutorKind,
    IntervalUnit,
    MisfirePolicy,
    OverlapPolicy,
    RunStatus,
    ScheduleType,
    validate_schedule_time,
)
from jobs.models.job_constraints import job_constraints
from jobs.models.job_operator import JobOperatorActions
from jobs.models.job_queries import JobQuerySet
from jobs.models.job_saving import JobSaving
from jobs.models.job_schedule import JobSchedule
from jobs.models.job_words import JobWords
from jobs.outbound.signing import SECRET_MAX_LENGTH


class Job(JobSaving, JobSchedule, JobOperatorActions, JobWords, models.Model):
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
        help_text=_(
            "A run still going after this long is stopped and fails. Blank: no limit; for "
            "shell and management command jobs, the site's default (JOBS_SHELL_DEFAULT_TIMEOUT)."
        ),
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
    # Business days (jobs.calendars): what an occurrence on a day off does, and a
    # deterministic delay after each occurrence.
    calendar = models.ForeignKey(
        "jobs.Calendar",
        verbose_name=_("calendar"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="jobs",
        help_text=_("Blank: every day counts."),
    )
    # The team that owns the job (jobs.models.teams): with team scoping on, only its
    # members (and site-wide users) see and act on it. PROTECT: deleting the group would
    # otherwise make its jobs everyone's.
    team = models.ForeignKey(
        "auth.Group",
        verbose_name=_("team"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="jobs",
        help_text=_("Blank: the site's, seen by everyone who may see jobs."),
    )
    calendar_policy = models.CharField(
        _("on a day off"),
        max_length=24,
        choices=CalendarPolicy.choices,
        default=CalendarPolicy.SKIP,
        db_default=CalendarPolicy.SKIP,
        # Blank in a form or request that leaves it out or empty: the default (clean()).
        blank=True,
    )
    jitter_seconds = models.PositiveIntegerField(
        _("jitter (seconds)"),
        default=0,
        db_default=0,
        blank=True,
        validators=[MaxValueValidator(MAX_JITTER_SECONDS)],
        help_text=_(
            "From 0 to 3600: each run starts up to this long after its time, the same "
            "delay in every scheduler process."
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
    # Apprise channels (jobs/models/channels.py): none named, the team's default channels.
    channels = models.ManyToManyField(
        "jobs.NotificationChannel",
        blank=True,
        related_name="jobs",
        verbose_name=_("alert channels"),
        help_text=_("Channels its alerts go to; none: its team's default channels."),
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
    # The implicit job of one enqueued Django task (jobs.tasks_backend), made on its
    # first enqueue() with code_key "task:<its dotted path>" (so the unique key makes one
    # job however many processes enqueue it first at once); the code owns its name and
    # what it runs, as for a declared job, and syncjobs leaves it alone.
    enqueued_task = models.BooleanField(
        _("enqueued task"), default=False, db_default=False, editable=False
    )

    # Imported by `manage.py importschedules` (jobs/imports/): where from ("celery-beat",
    # "django-q2", "crontab:<file>"), the entry's key there (unique per source while set, so a
    # re-import updates the job in place), and the entry as last read, to tell whether the
    # source changed since. Not editable: no form, and no version in the audit trail.
    import_source = models.CharField(
        _("imported from"),
        max_length=IMPORT_SOURCE_MAX_LENGTH,
        blank=True,
        default="",
        db_default="",
        editable=False,
    )
    import_key = models.CharField(  # noqa: DJ001
        _("import key"), max_length=NAME_MAX_LENGTH, null=True, blank=True, editable=False
    )
    import_record = models.JSONField(_("as imported"), null=True, blank=True, editable=False)

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
            *job_constraints(),
            models.CheckConstraint(
                condition=Q(jitter_seconds__lte=MAX_JITTER_SECONDS),
                name="jobs_job_jitter_range",
            ),
            # One job per declaration in code, however many processes sync at once.
            models.UniqueConstraint(
                fields=["code_key"],
                condition=Q(code_key__isnull=False),
                name="jobs_job_code_key_unique",
            ),
            # One job per imported entry, however often the import is run.
            models.UniqueConstraint(
                fields=["import_source", "import_key"],
                condition=Q(import_key__isnull=False),
                name="jobs_job_import_key_unique",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        """The job's dashboard page (the admin links to it too)."""
        return reverse("jobs:job_detail", args=[self.pk])

    # --- declared in code -------------------------------------------------------------

    @property
    def code_fields(self) -> frozenset[str]:
        """The fields the code owns (jobs/models/code.py): read-only everywhere else."""
        return code.owned_fields(self)

    @property
    def declared_in_code(self) -> bool:
        """Synced from a declaration in code that is still there."""
        return bool(self.code_key) and self.code_declaration is not None

    # --- validation -----------------------------------------------------------------

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
        # Left blank (a form or request written before these fields): their defaults.
        self.calendar_policy = self.calendar_policy or CalendarPolicy.SKIP
        self.jitter_seconds = self.jitter_seconds or 0
        # A browser sends a textarea's line breaks as CR LF; a lone CR is refused.
        self.command = text.normalize_newlines(self.command)
        errors = job_rules.job_errors(
            self,
            schedule_changed=self._schedule_changed,
            webhook_changed=self._webhook_changed,
            command_changed=self._command_changed,
        )
        errors.update(chains.chain_errors(self))
        if not errors.keys() & {"interval", "interval_unit"}:
            # The shortest interval a user without jobs.use_shell may give (quotas).
            errors.update(quotas.interval_errors(self, self.acting_user))
        errors.update(teams.team_errors(self))
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
