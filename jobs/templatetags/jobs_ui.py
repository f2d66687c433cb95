"""Small presentation helpers for the screens' templates."""

from __future__ import annotations

import copy
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from crispy_forms.templatetags.crispy_forms_tags import CrispyFormNode
from django import template
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.utils import timezone
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, ngettext, pgettext
from django.utils.translation import gettext as _

from jobs import conf, times
from jobs.access import masking
from jobs.access.masking import may_see_secrets, shown_target
from jobs.forecasts import upcoming
from jobs.models import JobState, RunStatus, ScheduleType
from jobs.web import context_processors, languages, scoping

register = template.Library()

# The screens' forms are drawn with Bootstrap 5 (crispy-bootstrap5), whatever pack the
# project's own forms use.
CRISPY_PACK = "bootstrap5"

# Bootstrap colours for the badges: one look per meaning across the screens.
STATE_STYLES = {
    JobState.WAITING: "text-bg-secondary",
    JobState.RUNNING: "text-bg-primary",
    JobState.SUCCEEDED: "text-bg-success",
    JobState.FAILED: "text-bg-danger",
    JobState.SKIPPED: "text-bg-warning",
    JobState.CANCELLED: "text-bg-cancelled",
}
STATUS_STYLES = {
    RunStatus.PENDING: "text-bg-secondary",
    RunStatus.RUNNING: "text-bg-primary",
    RunStatus.SUCCESS: "text-bg-success",
    RunStatus.FAILED: "text-bg-danger",
    RunStatus.SKIPPED: "text-bg-warning",
    RunStatus.CANCELLED: "text-bg-cancelled",  # jobs/static/jobs/app.css
}


@register.simple_tag(takes_context=True)
def job_actions(context: template.Context, job: Any) -> scoping.Actions:
    """{% job_actions job as can %}: which of the job's buttons the user may use
    (jobs.web.scoping.actions); none without a request."""
    request = context.get("request")
    if request is None:
        return scoping.Actions(run=False, change=False, delete=False)
    return scoping.actions(request, job)


# The three tags below run for every row of the job and run tables (hundreds of times
# per page), so they build their few elements with format_html instead of rendering a
# sub-template each time: that halves the time to render a page of 50 rows.


@register.simple_tag
def state_badge(state: str) -> str:
    """A job's state (Job.state): waiting / running / succeeded / failed / skipped /
    cancelled."""
    return format_html(
        '<span class="badge {}" data-state="{}">{}</span>',
        STATE_STYLES[state],
        state,
        JobState(state).label,
    )


@register.simple_tag
def job_state_badge(job: Any) -> str:
    """A job's state for its own page: "Disabled" in place of "Waiting" for a job that
    is not active and has never run, since it is waiting for nothing."""
    state = job.state
    if state == JobState.WAITING and not job.is_active:
        return format_html(
            '<span class="badge text-bg-secondary" data-state="disabled">{}</span>',
            _("Disabled"),
        )
    return state_badge(state)


def _once_done(job: Any) -> bool:
    """A one-off job whose time came (the claim disables it then) and that ran."""
    return (
        job.schedule_type == ScheduleType.ONCE
        and not job.is_active
        and job.last_run_at is not None
        and job.scheduled_at is not None
        and job.scheduled_at <= timezone.now()
    )


@register.simple_tag
def job_next_run(job: Any, own_zone: bool = False) -> str:
    """When the job runs next: its time, "done" for a one-off job that has run, or
    "disabled". `own_zone`: a cron job's time in its own zone too (the job's page)."""
    if job.is_active:
        zone = job.cron_zone_name if own_zone and job.schedule_type == ScheduleType.CRON else ""
        return when(job.next_run_at, job_zone=zone)
    words = _("done, it ran once") if _once_done(job) else _("disabled")
    return format_html('<span class="text-body-secondary">{}</span>', words)


@register.simple_tag
def simulated_badge() -> str:
    """The mark of a simulated job or run: nothing really runs."""
    return format_html(
        '<span class="badge text-bg-info align-middle fs-6" id="simulated" title="{}">{}</span>',
        _("Its runs only pretend: they wait, then succeed or fail at random; nothing is executed."),
        _("simulated"),
    )


def _number(value: float) -> str:
    """20.0 -> "20", 2.5 -> "2.5", 0.125 -> "0.125": no digits that say nothing."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


@register.simple_tag
def simulation_text(job: Any) -> str:
    """A simulated job's runs in words: how often they fail (a percentage) and how long
    they take ("20 s" when the shortest and longest are the same), each with "(default)"
    where the site's JOBS_SIM_* setting decides."""
    effective = conf.simulation().for_job(
        job.sim_failure_rate, job.sim_min_seconds, job.sim_max_seconds
    )
    default = _("(default)")
    rate = effective.failure_rate
    if rate <= 0:
        fails = _("no run fails")
    elif rate >= 1:
        fails = _("every run fails")
    else:
        fails = _("%(percent)s %% of runs fail") % {"percent": _number(rate * 100)}
    # Joined as the language writes it: Japanese puts no space before its "(default)".
    with_default = pgettext("a value and “(default)” after it", "%(value)s %(default)s")
    if job.sim_failure_rate is None:
        fails = with_default % {"value": fails, "default": default}
    shortest, longest = effective.min_seconds, effective.max_seconds
    if longest == shortest:
        takes = _("each takes %(seconds)s s") % {"seconds": _number(shortest)}
    else:
        takes = _("each takes %(shortest)s to %(longest)s s") % {
            "shortest": _number(shortest),
            "longest": _number(longest),
        }
    if job.sim_min_seconds is None or job.sim_max_seconds is None:
        takes = with_default % {"value": takes, "default": default}
    return _("%(fails)s, %(takes)s") % {"fails": fails, "takes": takes}


@register.simple_tag
def status_badge(status: str) -> str:
    """A run's status: pending / running / succeeded / failed / skipped / cancelled."""
    return format_html(
        '<span class="badge {}" data-status="{}">{}</span>',
        STATUS_STYLES[status],
        status,
        RunStatus(status).label,
    )


# Django's "4 weeks, 2 days from now" joins its parts with ", " in every language; Japanese
# writes them together ("4週間2日後"). Django's own catalogue cannot say "nothing".
PARTS_JOINED = {"ja": ""}


def _relative(moment: datetime) -> str:
    text = str(naturaltime(moment))
    joiner = PARTS_JOINED.get((get_language() or "").split("-")[0])
    return text if joiner is None else text.replace(", ", joiner)


@register.simple_tag
def when(moment: datetime | None, empty: str = "", job_zone: str = "") -> str:
    """A moment as "in 5 minutes" over "2026-12-01 09:00:05 JST", in the viewer's zone
    (the whole of it, zone name too, in the tooltip). `job_zone`: a cron job's own zone
    (Job.cron_zone_name); when it is not the viewer's, the moment in it follows, in
    full."""
    if moment is None:
        return format_html('<span class="text-body-secondary">{}</span>', empty or "—")
    viewer = timezone.get_current_timezone()
    own = times.zone_named(job_zone)
    in_job_zone = (
        format_html(
            '<br><small class="text-body-secondary text-nowrap" data-job-zone>{}</small>',
            times.full_moment_text(moment, own),
        )
        if own is not None and not times.same_zone(own, viewer)
        else ""
    )
    text = times.moment_text(moment, viewer)
    return format_html(
        '<time datetime="{}" title="{}">{}</time><br>'
        '<small class="text-body-secondary text-nowrap">{}</small>{}',
        timezone.localtime(moment, viewer).isoformat(timespec="seconds"),
        times.with_zone_name(text, viewer),
        _relative(moment),
        text,
        in_job_zone,
    )


@register.filter
def moment(value: datetime | None) -> str:
    """{{ run.created_at|moment }}: "2026-12-01 09:00:05 JST" in the viewer's zone (the
    screens' one format, jobs.times); "" for none."""
    return times.moment_text(value) if value is not None else ""


@register.filter
def moment_in(value: datetime | None, zone: str) -> str:
    """{{ job.next_run_at|moment_in:job.cron_zone_name }}: the moment in that zone, named
    in full ("2026-12-02 09:00:00 JST (Asia/Tokyo)"); the viewer's zone for an unknown
    name."""
    if value is None:
        return ""
    return times.full_moment_text(value, times.zone_named(zone))


@register.simple_tag
def moment_as(value: datetime, django_format: str, zone_name: str = "") -> str:
    """The schedule preview's moments: `value` with `django_format`, in the zone named
    (the viewer's when none), its abbreviation right for a wall time that happens twice."""
    zone = times.zone_named(zone_name) or timezone.get_current_timezone()
    return times.dated_moment_text(value, zone, django_format)


@register.simple_tag
def zone_label() -> str:
    """The viewer's zone, named: "Asia/Tokyo (JST)" (the layout's header)."""
    return times.zone_label()


@register.filter
def duration(value: timedelta | None) -> str:
    """A run's length: "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min", "3 d 4 h"."""
    if value is None:
        return ""
    seconds = max(value.total_seconds(), 0.0)
    if seconds < 1:
        return _("%(ms)d ms") % {"ms": round(seconds * 1000)}
    if seconds < 60:
        return _("%(s).1f s") % {"s": seconds}
    whole = int(seconds)
    if whole < 3600:
        return _("%(m)d min %(s)02d s") % {"m": whole // 60, "s": whole % 60}
    if whole < 86400:
        return _("%(h)d h %(m)02d min") % {"h": whole // 3600, "m": whole % 3600 // 60}
    return _("%(d)d d %(h)d h") % {"d": whole // 86400, "h": whole % 86400 // 3600}


# --- the Upcoming page's density strips (jobs/forecasts/upcoming.py) ------------------------
# One cell per bucket of time, shaded by how many runs fall in it: a job every second is
# as many cells as a daily one, never a mark per run. Built here, not in a sub-template:
# a page is 50 rows of up to 29 cells. The grid's columns are a data attribute that
# app.js applies: the Content-Security-Policy refuses style="" attributes.


def _runs(count: int) -> str:
    return ngettext("%(n)s run", "%(n)s runs", count) % {"n": f"{count:,}"}


@register.simple_tag
def density_strip(counts: list[int], timeline: upcoming.Timeline, peak: int) -> str:
    """A job's row: its runs per bucket, shaded on the page's scale (upcoming.level).

    Joined as text rather than through format_html per cell (a page has up to 1,450
    cells): the bucket titles are escaped once per page, the rest is numbers and the
    translated "runs", escaped once per distinct count."""
    if not counts:
        return format_html('<div class="density-strip density-off" data-cells="{}"></div>', 0)
    titles = timeline.escaped_titles
    said: dict[int, str] = {}
    cells = []
    for index, count in enumerate(counts):
        runs = said.get(count)
        if runs is None:
            runs = said[count] = escape(_runs(count))
        cells.append(
            f'<span class="density-cell density-{upcoming.level(count, peak)}" '
            f'title="{titles[index]}: {runs}"></span>'
        )
    busiest = max(range(len(counts)), key=counts.__getitem__)
    summary = (
        _("Busiest: %(when)s, %(runs)s")
        % {"when": timeline.buckets[busiest].title, "runs": _runs(counts[busiest])}
        if counts[busiest]
        else _("No runs")
    )
    return format_html(
        '<div class="density-strip" role="img" aria-label="{}" data-grid-columns="{}"'
        ' data-cells="{}">{}</div>',
        summary,
        timeline.columns,
        len(counts),
        mark_safe("".join(cells)),
    )


@register.simple_tag
def density_axis(timeline: upcoming.Timeline) -> str:
    """The time axis above the strips, labelled on the hour, every few hours or by day."""
    labels = format_html_join(
        "", "<span>{}</span>", ((bucket.label,) for bucket in timeline.buckets)
    )
    return format_html(
        '<div class="density-axis" aria-hidden="true" data-grid-columns="{}">{}</div>',
        timeline.columns,
        labels,
    )


# --- secrets (jobs.access.masking): whole for users who may change jobs, masked for the others --


def _user(context: template.Context) -> Any:
    request = context.get("request")
    return getattr(request, "user", None)


@register.simple_tag(takes_context=True)
def job_secret(context: template.Context, job: Any, field: str) -> str:
    """{% job_secret job "webhook_url" %}"""
    return masking.shown_field(_user(context), job, field, getattr(job, field))


@register.filter
def without_credentials(text: Any) -> str:
    """{{ job.command|without_credentials }}: the credentials of the URLs in a text
    masked, for everyone (jobs.access.masking.mask_urls)."""
    return masking.mask_urls(str(text or ""))


@register.simple_tag
def alert_rules(job: Any) -> str:
    """When the job's alerts go out, in words: after how many failed runs in a row, past
    how long a run, and how its webhooks are signed (never the secret)."""
    rules = []
    if job.notify_on_failure:
        rules.append(
            ngettext(
                "the first failed run of a streak alerts",
                "%(count)d failed runs in a row alert",
                job.alert_after_failures,
            )
            % {"count": job.alert_after_failures}
        )
        if job.expected_seconds:
            rules.append(
                _("a run still going after %(seconds)d s alerts")
                % {"seconds": job.expected_seconds}
            )
        else:
            rules.append(_("a run still going after three times its usual 95th percentile alerts"))
    if job.webhook_url:
        if job.webhook_secret:
            rules.append(_("webhooks signed with the job's own secret"))
        elif conf.webhook_secret():
            rules.append(_("webhooks signed with the site's secret"))
        else:
            rules.append(_("webhooks unsigned"))
    return "; ".join(rules)


@register.simple_tag(takes_context=True)
def attempt_target(context: template.Context, attempt: Any) -> str:
    return shown_target(_user(context), attempt.channel, attempt.target)


@register.simple_tag(takes_context=True)
def attempt_outcome(context: template.Context, attempt: Any) -> str:
    """ "failed (HTTP code): error" for users who may see secrets; else sent or failed."""
    outcome = attempt.get_status_display()
    if not may_see_secrets(_user(context)):
        return outcome
    if attempt.response_code:
        outcome = f"{outcome} ({attempt.response_code})"
    return f"{outcome}: {attempt.error}" if attempt.error else outcome


# Pretty-printed arguments are cut here: a page shows them, the API has them whole.
ARGUMENTS_SHOWN_MAX_CHARS = 5000


@register.simple_tag(takes_context=True)
def shown_arguments(context: template.Context, arguments: Any, job: Any = None) -> str:
    """{% shown_arguments job.arguments job %}: JSON, indented, URL credentials masked,
    and header and environment values for users who may not change the job
    (jobs.access.masking)."""
    value = masking.shown_arguments(_user(context), arguments, job)
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
    if len(text) > ARGUMENTS_SHOWN_MAX_CHARS:
        text = text[: ARGUMENTS_SHOWN_MAX_CHARS - 1] + "…"
    return text


# The stamp the scheduler's own log lines start with (a cancel, an overlap skip): UTC,
# so the stored log reads the same everywhere.
_LOG_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\]", re.MULTILINE)


def _local_stamp(match: re.Match[str]) -> str:
    # The log also holds what the job printed, and any text may look like a stamp: one
    # that is no time (month 13), or none in the viewer's zone (year 9999 east of UTC,
    # year 1 west of it), is shown as written rather than failing the page.
    try:
        moment = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        local = timezone.localtime(moment)
    except (ValueError, OverflowError):
        return match[0]
    return (
        f'[<time datetime="{moment.isoformat()}" title="{match[1]} UTC">'
        f"{local:%Y-%m-%d %H:%M:%S} {local.tzname()}</time>]"
    )


@register.simple_tag(takes_context=True)
def shown_log(context: template.Context, run: Any) -> str:
    """A run's log, with the secret values of its arguments masked for users who may not
    see them (a script may print its $TOKEN), and the scheduler's stamps in the viewer's
    time zone, as every other time on the page."""
    text = escape(masking.shown_log(_user(context), run.log, run.arguments, run.job))
    # Escaping leaves the stamp's digits, spaces, brackets and colons as they were.
    return mark_safe(_LOG_STAMP.sub(_local_stamp, text))


# --- the layout's values (without the project's adding jobs' context processors) ------


@register.simple_tag
def poll_ms() -> int:
    """`every {% poll_ms %}ms`: how often the live parts of a page refresh."""
    return context_processors.poll_ms()


@register.simple_tag(takes_context=True)
def scheduler_pause(context: template.Context) -> Any:
    """`{% scheduler_pause as pause %}`: the pause switch while the scheduler is paused
    (for those who may see jobs), else None."""
    return context_processors.current_pause(context.get("request"))


@register.simple_tag(takes_context=True)
def bootstrap_form(context: template.Context, form: Any) -> str:
    """`{% crispy form %}` in Bootstrap 5 whatever the project's crispy settings: the tag
    itself reads CRISPY_TEMPLATE_PACK (which has no default) and refuses a pack missing
    from CRISPY_ALLOWED_TEMPLATE_PACKS."""
    # A copy: the form's helper would otherwise name the project's default pack.
    helper = copy.copy(form.helper)
    helper.template_pack = CRISPY_PACK
    node = CrispyFormNode("form", "helper", template_pack=CRISPY_PACK)
    with context.push(form=form, helper=helper):
        return node.render(context)


@register.simple_tag
def language_choices(current: str) -> list[languages.LanguageChoice]:
    """The header switch's languages: the app's that the project offers (jobs/web/languages.py)."""
    return languages.switch_choices(current)
