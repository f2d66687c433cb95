"""What makes a job valid, field by field: the rules behind Job.clean().

Forms, the admin and the API all reach them through full_clean(), so each message is
written once. Each function returns {field: message} for the rules it owns; the
database's check constraints (Job.Meta) refuse the same values from any other writer.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from jobs import conf, kinds, text
from jobs.executors import command as command_executor
from jobs.executors import http as http_executor
from jobs.executors import python as python_executor
from jobs.executors import shell as shell_executor
from jobs.models.choices import (
    CRON_FIELD_NAMES,
    MAX_ALERT_AFTER_FAILURES,
    MAX_NOTIFY_EMAILS,
    MAX_PRIORITY,
    MAX_SIM_SECONDS,
    MAX_TIMEOUT_SECONDS,
    MIN_PRIORITY,
    QUEUE_NAME_PATTERN,
    SCHEDULE_FIELD_UNUSED,
    SCHEDULE_TYPE_FIELDS,
    ExecutorKind,
    IntervalUnit,
    ScheduleType,
)
from jobs.outbound import rules as outbound
from jobs.outbound import signing
from jobs.pytasks import registry, signature
from jobs.schedules import arithmetic as schedules

# The rules take the job being validated (a Job); typed as a model so that this module
# does not import the one that imports it.
JobModel = models.Model
Changed = Callable[[], bool]


def email_list(text: str) -> list[str]:
    """The alert addresses in `text`, split on commas, semicolons and white space."""
    return [part for part in re.split(r"[,;\s]+", text or "") if part]


def job_errors(
    job: JobModel,
    *,
    schedule_changed: Callable[[], bool],
    webhook_changed: Callable[[], bool] = lambda: True,
    command_changed: Callable[[], bool] = lambda: True,
) -> dict[str, Any]:
    """Every rule's message for `job` (a list of them for the arguments); empty when it
    is valid.

    `schedule_changed()`: whether the schedule differs from the stored one (it may cost
    a query, so it is asked only when needed). A one-off time in the past is refused only
    then, so a job that already ran can still be renamed. `webhook_changed()`: the same
    for the webhook URL, whose host is looked up (DNS) only when it is new;
    `command_changed()` for an HTTP job's URL, likewise.
    """
    errors = schedule_errors(job, schedule_changed=schedule_changed)
    errors.update(executor_errors(job, command_changed=command_changed))
    errors.update(timeout_errors(job))
    errors.update(queue_errors(job))
    errors.update(simulation_errors(job))
    errors.update(alert_errors(job, webhook_changed=webhook_changed))
    errors.update(text_errors(job))  # last: the clearest message for such a field
    return errors


def text_errors(job: JobModel) -> dict[str, str]:
    """No control characters or text-direction overrides (jobs/text.py) in the fields
    people read in lists, logs, terminals and alert mails, nor any other invisible
    character in a name; a command keeps its tabs and line breaks."""
    errors: dict[str, str] = {}
    # A name is how people tell jobs apart: an invisible character would let two look
    # the same (in lists, alerts, logs), so a name refuses every one of them.
    char = text.invisible_character(job.name)
    if char is not None:
        errors["name"] = _(
            "Remove the invisible character %(char)s: control characters, invisible "
            "formatting characters (such as zero-width spaces), line separators and "
            "text-direction overrides are not allowed in a name."
        ) % {"char": text.code_point(char)}
    for name in ("cron_expression",):
        char = text.forbidden_character(getattr(job, name))
        if char is not None:
            errors[name] = _(
                "Remove the invisible character %(char)s: control characters and "
                "text-direction overrides are not allowed here."
            ) % {"char": text.code_point(char)}
    char = text.forbidden_character(job.command, allowed=text.MULTILINE)
    if char is not None:
        errors["command"] = _(
            "Remove the invisible character %(char)s: a command may hold tabs and line "
            "breaks, but no other control characters and no text-direction overrides."
        ) % {"char": text.code_point(char)}
    return errors


def unused_schedule_values(schedule_type: str) -> dict[str, Any]:
    """What a job of `schedule_type` stores in the schedule fields that type does not use
    (jobs.models.choices.SCHEDULE_FIELD_UNUSED); nothing for an unknown type, which
    validation refuses with its own message."""
    if schedule_type not in ScheduleType.values:
        return {}
    return {
        name: SCHEDULE_FIELD_UNUSED[name]
        for name, types in SCHEDULE_TYPE_FIELDS.items()
        if schedule_type not in types
    }


# The fields the forms leave optional, because a one-off job has them hidden (and so not
# sent), but that interval and cron jobs need; judged here, once, when left empty.
POLICY_MESSAGES = {
    "misfire_policy": _("Choose what happens to the runs missed while the scheduler was down."),
    "overlap_policy": _("Choose what a run does while the previous one is still going."),
}


def policy_errors(job: JobModel) -> dict[str, str]:
    return {name: message for name, message in POLICY_MESSAGES.items() if not getattr(job, name)}


def schedule_errors(job: JobModel, *, schedule_changed: Callable[[], bool]) -> dict[str, str]:
    errors: dict[str, str] = {}
    if job.schedule_type == ScheduleType.ONCE:
        if job.scheduled_at is None:
            errors["scheduled_at"] = _("A one-off job needs a date and time to run at.")
        elif job.is_active and schedule_changed() and job.scheduled_at < timezone.now():
            errors["scheduled_at"] = _(
                "This time has already passed. Choose a time in the future, or use Run now."
            )
    elif job.schedule_type == ScheduleType.INTERVAL:
        if job.interval_unit not in IntervalUnit.values:
            errors["interval_unit"] = _("Choose seconds, minutes, hours or days.")
        if job.interval is None:
            errors["interval"] = _("Say how often the job runs, for example 10.")
        elif job.interval < 1:
            errors["interval"] = _("The interval must be at least 1.")
        elif job.interval_unit in IntervalUnit.values:
            # Whole seconds first: a huge count of days overflows timedelta.
            seconds = job.interval * schedules.UNIT_SECONDS[job.interval_unit]
            if seconds > schedules.MAX_INTERVAL.total_seconds():
                errors["interval"] = _("The interval can be at most 3650 days (ten years).")
    elif job.schedule_type == ScheduleType.CRON and (message := cron_expression_error(job)):
        errors["cron_expression"] = message
    errors.update(policy_errors(job))
    if job.timezone:
        try:
            schedules.time_zone(job.timezone)
        except schedules.UnknownTimeZone:
            errors["timezone"] = _(
                "Unknown time zone “%(name)s”. Use an IANA name such as Europe/Berlin."
            ) % {"name": job.timezone}
    return errors


def cron_expression_error(job: JobModel) -> str | None:
    expression = job.cron_expression.strip()
    if not expression:
        return _("Enter a cron expression, for example “30 2 * * *” for 02:30 every day.")
    try:
        schedules.parse_cron(expression)
    except schedules.CronExpressionError as error:
        if error.field is None:
            if len(expression.split()) != 5:
                return _(
                    "A cron expression has five fields: minute, hour, day of month, "
                    "month and day of week."
                )
            return _("This is not a valid cron expression.")
        index = schedules.CRON_FIELDS.index(error.field)
        return _("The %(field)s field “%(value)s” is not valid.") % {
            "field": CRON_FIELD_NAMES[index],
            "value": expression.split()[index],
        }
    # Valid; but does it ever match? ("0 0 31 2 *" is refused above; this catches
    # the rarer ones cronsim gives up on after 50 years.)
    zone = job.timezone or settings.TIME_ZONE
    try:
        upcoming = schedules.CronSchedule(expression, zone).next_after(timezone.now())
    except schedules.UnknownTimeZone:
        return None  # reported at the time zone
    if upcoming is None:
        return _("This expression matches no date in the next 50 years.")
    return None


# --- what runs: the executor, its command and its arguments -------------------------

# The most a job's (or a run's) arguments may hold, as JSON text.
ARGUMENTS_MAX_BYTES = 65536


def executor_errors(
    job: JobModel, *, command_changed: Callable[[], bool] = lambda: True
) -> dict[str, Any]:
    """The executor is known (and switched on), the command names what it can run, and
    the arguments are a JSON object of the shape it reads. A python job's arguments
    are stored as they bind (normalised: "12" for an int becomes 12)."""
    if job.executor not in ExecutorKind.values:
        return {
            "executor": _("Unknown executor “%(name)s”. Choose one of: %(choices)s.")
            % {"name": str(job.executor)[:50], "choices": ", ".join(ExecutorKind.values)}
        }
    if job.arguments is None:
        job.arguments = {}
    shape = arguments_shape_error(job.arguments)
    errors: dict[str, Any] = {}
    if shape is not None:
        errors["arguments"] = shape
    kind = kinds.kind_of(job.executor)
    if kind is not None and kind.rules:
        rules = kinds.load(kind.rules)
        errors.update(rules(job, check_arguments=shape is None, command_changed=command_changed))
    return errors


def arguments_shape_error(arguments: Any) -> str | None:
    """A JSON object any database stores (no NUL: PostgreSQL's jsonb refuses it), of at
    most ARGUMENTS_MAX_BYTES."""
    if isinstance(arguments, dict) and (reason := signature.json_problem(arguments)):
        return _(
            "The arguments must hold only JSON values (text, numbers, true, false, null, "
            "lists and objects): %(reason)s."
        ) % {"reason": reason}
    if not signature.is_json_object(arguments):
        return _('The arguments must be a JSON object, like {"day": "2026-12-01"}.')
    encoded = json.dumps(arguments)
    if len(encoded.encode()) > ARGUMENTS_MAX_BYTES:
        return _("The arguments can be at most %(n)d bytes of JSON.") % {"n": ARGUMENTS_MAX_BYTES}
    if "\\u0000" in encoded:
        return _("The arguments may not hold NUL characters (U+0000).")
    return None


# The rules of each kind (named by its row in jobs.kinds): {field: message}.
# `command_changed()`: whether the command differs from the stored one (an HTTP job's
# host is looked up only then).


def python_errors(
    job: JobModel, *, check_arguments: bool = True, command_changed: Changed = lambda: True
) -> dict[str, Any]:
    name = job.command.strip()
    task = registry.get_task(name)
    if task is None:
        return {
            "command": _(
                "No Python task is registered as “%(name)s”. Choose one of the registered "
                "tasks; a dotted path to anything else cannot be run."
            )
            % {"name": name[:200]}
        }
    job.command = name
    if not check_arguments:
        return {}
    try:
        job.arguments = signature.normalize(task, job.arguments)
    except signature.ArgumentsError as error:
        return {"arguments": argument_messages(error)}
    return {}


def argument_messages(error: signature.ArgumentsError) -> list[str]:
    """ArgumentsError.errors as messages at the arguments field, one per parameter."""
    messages = []
    for name, problems in error.errors.items():
        for problem in problems:
            messages.append(problem if name == "__all__" else f"{name}: {problem}")
    return messages


def command_errors(
    job: JobModel, *, check_arguments: bool = True, command_changed: Changed = lambda: True
) -> dict[str, Any]:
    errors: dict[str, Any] = {}
    try:
        command_executor.check_command_line(job.command)
    except command_executor.CommandRefused as error:
        errors["command"] = _("This management command cannot run: %(reason)s.") % {
            "reason": str(error)
        }
    if check_arguments and job.arguments:
        errors["arguments"] = _(
            "A management command job takes no arguments: write its options in the "
            "command line (prunehistory --dry-run)."
        )
    return errors


def shell_errors(
    job: JobModel, *, check_arguments: bool = True, command_changed: Changed = lambda: True
) -> dict[str, Any]:
    errors: dict[str, Any] = {}
    if (problem := shell_executor.shell_problem()) is not None:
        errors["executor"] = _("Shell jobs cannot be saved: %(reason)s.") % {"reason": problem}
    try:
        shell_executor.split_command(job.command)
    except ValueError as error:
        errors["command"] = _("This command line cannot run: %(reason)s.") % {"reason": str(error)}
    if check_arguments:
        messages = [
            _("%(name)s: a shell job's arguments hold only env.") % {"name": str(name)[:50]}
            for name in job.arguments
            if name != "env"
        ]
        messages += [
            f"env: {problem}"
            for problem in shell_executor.environment_errors(job.arguments.get("env"))
        ]
        if messages:
            errors["arguments"] = messages
    return errors


def http_errors(
    job: JobModel, *, check_arguments: bool = True, command_changed: Changed = lambda: True
) -> dict[str, Any]:
    errors: dict[str, Any] = {}
    try:
        http_executor.url_parts(job.command)
    except ValueError as error:
        errors["command"] = _("This URL cannot be requested: %(reason)s.") % {"reason": str(error)}
    else:
        # The host is looked up (DNS) only when the URL is new.
        problem = http_executor.host_problem(job.command, resolve=command_changed())
        if problem is not None:
            errors["command"] = _("HTTP jobs may only reach public addresses, and %(reason)s.") % {
                "reason": problem
            }
    if check_arguments:
        problems = http_executor.argument_errors(job.arguments)
        if problems:
            errors["arguments"] = [
                message if name == "__all__" else f"{name}: {message}"
                for name, message in problems.items()
            ]
    return errors


def run_arguments(job: JobModel, arguments: Any) -> dict[str, Any]:
    """Arguments for one run of `job` ("Run now" with arguments), checked as the job's
    own are and normalised; raises ValidationError with the messages at "arguments"."""
    shape = arguments_shape_error(arguments)
    if shape is not None:
        raise ValidationError({"arguments": [shape]})
    probe = copy.copy(job)
    probe.arguments = dict(arguments)
    problems = executor_errors(probe, command_changed=lambda: False)
    message = problems.get("arguments")
    if message:
        raise ValidationError({"arguments": message if isinstance(message, list) else [message]})
    return probe.arguments


def execution_problem(job: JobModel) -> str | None:
    """Why the job's runs would fail before doing anything now, though it was valid
    when saved: its task is no longer registered, its command no longer listed, its
    executor switched off, its URL's host now refused. None when nothing stops it."""
    kind = kinds.kind_of(job.executor)
    if kind is None:
        return _("the executor “%(name)s” is not known to this site") % {"name": job.executor}
    return kinds.load(kind.problem)(job) if kind.problem else None


# Why a saved job of each kind cannot run now (named by its row in jobs.kinds).


def python_problem(job: JobModel) -> str | None:
    return python_executor.task_problem(job.command)


def command_problem(job: JobModel) -> str | None:
    return command_executor.command_problem(job.command)


def shell_problem(job: JobModel) -> str | None:
    return shell_executor.shell_problem()


def http_problem(job: JobModel) -> str | None:
    return http_executor.host_problem(job.command, resolve=False)


# The kinds whose runs always have a timeout, at most JOBS_SHELL_MAX_TIMEOUT
# (conf.shell_run_timeout).
SHELL_TIMEOUT_KINDS = (ExecutorKind.SHELL, ExecutorKind.COMMAND)


def timeout_errors(job: JobModel) -> dict[str, str]:
    if job.timeout_seconds is None:
        return {}
    if job.timeout_seconds < 1:
        return {
            "timeout_seconds": _(
                "The timeout must be at least 1 second; leave it blank for no limit."
            )
        }
    if job.timeout_seconds > MAX_TIMEOUT_SECONDS:
        return {"timeout_seconds": _("The timeout can be at most 7 days (604800 seconds).")}
    most = conf.shell_max_timeout()
    if job.executor in SHELL_TIMEOUT_KINDS and job.timeout_seconds > most:
        # Whoever saves it, the site's code too: the executors stop such a run at the
        # most anyway, so a longer timeout would only say what does not happen.
        return {
            "timeout_seconds": _(
                "A shell or management command job's timeout can be at most %(most)d "
                "seconds (JOBS_SHELL_MAX_TIMEOUT); leave it blank for the default, "
                "%(default)d seconds."
            )
            % {"most": most, "default": conf.shell_run_timeout(None)}
        }
    return {}


def queue_errors(job: JobModel) -> dict[str, str]:
    errors: dict[str, str] = {}
    if not re.fullmatch(QUEUE_NAME_PATTERN, job.queue or ""):
        errors["queue"] = _(
            "A queue name is letters, digits, “-” and “_” only, for example “reports”."
        )
    if job.priority is None or not MIN_PRIORITY <= job.priority <= MAX_PRIORITY:
        errors["priority"] = _(
            "The priority must be a whole number from %(lowest)d to %(highest)d."
        ) % {"lowest": MIN_PRIORITY, "highest": MAX_PRIORITY}
    return errors


def simulation_errors(job: JobModel) -> dict[str, str]:
    errors: dict[str, str] = {}
    rate = job.sim_failure_rate
    if rate is not None and not 0 <= rate <= 1:
        errors["sim_failure_rate"] = _(
            "The failure rate is a probability from 0 to 1, for example 0.2."
        )
    for name in ("sim_min_seconds", "sim_max_seconds"):
        value = getattr(job, name)
        if value is not None and not 0 <= value <= MAX_SIM_SECONDS:
            errors[name] = _("Choose a duration from 0 to 3600 seconds.")
    if not errors.keys() & {"sim_min_seconds", "sim_max_seconds"}:
        # Compare what the run will use: a blank side is the JOBS_SIM_* default.
        defaults = conf.simulation()
        shortest, longest = job.sim_min_seconds, job.sim_max_seconds
        shortest = defaults.min_seconds if shortest is None else shortest
        longest = defaults.max_seconds if longest is None else longest
        if shortest > longest:
            field = "sim_max_seconds" if job.sim_max_seconds is not None else "sim_min_seconds"
            errors[field] = _(
                "The shortest simulated run (%(shortest)g s) is longer than the longest "
                "(%(longest)g s)."
            ) % {"shortest": shortest, "longest": longest}
    return errors


def alert_errors(
    job: JobModel, *, webhook_changed: Callable[[], bool] = lambda: True
) -> dict[str, str]:
    errors: dict[str, str] = {}
    if job.webhook_url and url_scheme(job.webhook_url) not in ("http", "https"):
        errors["webhook_url"] = _("The webhook URL must start with http:// or https://.")
    elif job.webhook_url and webhook_changed() and (message := webhook_host_error(job)):
        errors["webhook_url"] = message
    addresses = email_list(job.notify_emails)
    if len(addresses) > MAX_NOTIFY_EMAILS:
        errors["notify_emails"] = _("At most %(n)d addresses.") % {"n": MAX_NOTIFY_EMAILS}
    for address in addresses:
        try:
            validate_email(address)
        except ValidationError:
            errors["notify_emails"] = _("%(address)s is not an e-mail address.") % {
                "address": address[:100]
            }
            break
    wants_alerts = job.notify_on_failure or job.notify_on_recovery
    if wants_alerts and not job.webhook_url and not addresses and "webhook_url" not in errors:
        errors["webhook_url"] = _("Give a webhook URL or e-mail addresses to send the alerts to.")
    errors.update(alert_rule_errors(job))
    return errors


def alert_rule_errors(job: JobModel) -> dict[str, str]:
    """When alerts go out: after how many failed runs in a row, after how long a run, and
    the webhook's signing secret (never repeated in a message)."""
    errors: dict[str, str] = {}
    after = job.alert_after_failures
    if after is None or not 1 <= after <= MAX_ALERT_AFTER_FAILURES:
        errors["alert_after_failures"] = _(
            "Choose from 1 (the first failed run alerts) to %(most)d failed runs in a row."
        ) % {"most": MAX_ALERT_AFTER_FAILURES}
    expected = job.expected_seconds
    if expected is not None and not 1 <= expected <= MAX_TIMEOUT_SECONDS:
        errors["expected_seconds"] = _(
            "Choose from 1 second to 7 days (604800 seconds); leave it blank to let the "
            "job's past runs decide."
        )
    if job.webhook_secret and (message := webhook_secret_error(job.webhook_secret)):
        errors["webhook_secret"] = message
    return errors


def webhook_secret_error(secret: str) -> str | None:
    """What is wrong with a signing secret, in the user's words (never repeating it)."""
    if len(secret) > signing.SECRET_MAX_LENGTH:
        return None  # the field's own max-length message says so
    try:
        signing.parse_secret(secret)
    except signing.BadSecret as problem:
        if problem.code == "length":
            what = _(
                "it must decode to %(fewest)d to %(most)d bytes, and this one decodes to %(count)d"
            ) % {
                "fewest": signing.MIN_KEY_BYTES,
                "most": signing.MAX_KEY_BYTES,
                "count": problem.key_bytes,
            }
        else:
            what = _("it must be “whsec_” followed by base64")
        return _(
            'This is not a signing secret: %(what)s. Make one with: python -c "import '
            "base64, os; print('whsec_' + base64.b64encode(os.urandom(32)).decode())\""
        ) % {"what": what}
    return None


def url_scheme(url: str) -> str:
    try:
        return urlsplit(url).scheme.lower()
    except ValueError:  # "http://[::1": URLField's own message says it is not a URL
        return ""


def webhook_host_error(job: JobModel) -> str | None:
    """The address rules of jobs/outbound/rules.py: no loopback, private, link-local, ...
    host. A name that does not resolve now passes; the sender checks again."""
    try:
        parts = urlsplit(job.webhook_url)
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return None  # URLField's own message says it is not a URL
    if not host:
        return None
    port = port or (443 if parts.scheme.lower() == "https" else 80)
    reason = outbound.check_for_validation(host, port)
    if reason is None:
        return None
    return _(
        "Alerts may only go to public addresses, and %(reason)s. An internal alert "
        "receiver can be allowed with JOBS_WEBHOOK_ALLOWED_HOSTS."
    ) % {"reason": reason}
