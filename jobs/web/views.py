"""The screens: dashboard, jobs (with the schedule preview of their form), upcoming runs,
history. Thin: they read, render, and call the engine, the model (searching, filtering,
enabling a job) or the forecasts (jobs/forecasts/preview.py, jobs/forecasts/upcoming.py).

Every page needs a login (jobs.web.screens, whatever the project's middleware) except /healthz,
and each view the permission it names (jobs.access.permissions; docs/permissions.md "Who
can do what"): without it the answer is 403 and nothing changes. State changes are POST
only and redirect afterwards; the live parts of a page are re-requested by htmx, which
gets the fragment template alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required, permission_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import DatabaseError, connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from jobs import engine
from jobs.access.permissions import (
    ADD_JOB,
    CHANGE_JOB,
    DELETE_JOB,
    RUN_JOB,
    VIEW_JOB,
)
from jobs.forecasts import preview, upcoming
from jobs.models import NAME_MAX_LENGTH, Job, JobChange, JobHistory, RunStatus, ScheduleType, gate
from jobs.models.chains import CHAIN_FIELDS
from jobs.web import action_messages, context_processors, listing, scoping
from jobs.web import chains as chain_fields
from jobs.web import changes as job_changes
from jobs.web import dashboard as dashboard_data
from jobs.web.forms import (
    SHOW_TASK,
    HistoryFilterForm,
    JobFilterForm,
    JobForm,
    RunNowForm,
    SchedulePreviewForm,
    UpcomingForm,
)
from jobs.web.pagination import Cursor, run_page
from jobs.web.stats import job_run_stats

ViewFunction = Callable[..., HttpResponse]

JOBS_PER_PAGE = 50
JOB_RUNS_PER_PAGE = 20


def needs(permission: str) -> Callable[[ViewFunction], ViewFunction]:
    """403 (never a redirect to the login page, which would loop: the user is logged in)
    for a user without the permission."""
    return permission_required(permission, raise_exception=True)


def _fragment_or_page(
    request: HttpRequest, fragment: str, page: str, context: dict
) -> HttpResponse:
    """The fragment alone for htmx's polling, the whole page otherwise."""
    return render(request, fragment if request.htmx else page, context)


def _next_url(request: HttpRequest, default: str) -> str:
    """Where to go after a POST: the page it came from, if it is one of ours."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default


# --- dashboard ---------------------------------------------------------------------------


@require_GET
@vary_on_headers("HX-Request")
@needs(VIEW_JOB)
def dashboard(request: HttpRequest) -> HttpResponse:
    scope = scoping.filters(request)
    live = dashboard_data.live_context(jobs_q=scope.jobs, runs_q=scope.runs)
    context = {"section": "dashboard", **live}
    return _fragment_or_page(request, "jobs/_dashboard_live.html", "jobs/dashboard.html", context)


# --- jobs --------------------------------------------------------------------------------


@require_GET
@vary_on_headers("HX-Request")
@needs(VIEW_JOB)
def job_list(request: HttpRequest) -> HttpResponse:
    filters = JobFilterForm(request.GET)
    filters.is_valid()  # an invalid filter is shown with its error and left out
    wanted = filters.cleaned_data
    sort = listing.read_sort(request.GET.get(listing.SORT_PARAMETER))
    jobs = listing.sorted_jobs(scoping.visible_jobs(request, Job.objects.with_running()), sort)
    if wanted.get("q"):
        jobs = jobs.search(wanted["q"])
    if wanted.get("state"):
        jobs = jobs.in_state(wanted["state"])
    if wanted.get("active"):
        jobs = jobs.filter(is_active=wanted["active"] == "yes")
    if wanted.get("queue"):
        jobs = jobs.filter(queue=wanted["queue"])
    page = Paginator(jobs, JOBS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "section": "jobs",
        "filters": filters,
        "page": page,
        # Only a valid order is kept in the links and the filter form.
        "sort": sort.value if request.GET.get(listing.SORT_PARAMETER) == sort.value else "",
        "sort_links": listing.sort_links(sort),
    }
    return _fragment_or_page(request, "jobs/_job_table.html", "jobs/job_list.html", context)


def _job_form(request: HttpRequest, job: Job | None) -> HttpResponse:
    """The job form of a new job (`job` None) or of `job`: saved when valid. A change
    the jobs.use_shell rule refuses (judged on the cleaned values: jobs.models.gate) is
    a 403, and nothing is saved."""
    form = JobForm(request.POST or None, instance=job, user=request.user)
    if request.method == "POST" and request.POST.get(SHOW_TASK):
        # Without JavaScript: the form again, with the fields of the task chosen. It has
        # not been checked, so it shows no messages.
        form.hide_errors()
    elif form.is_valid():
        saved = form.save()
        text = _("Job “%(name)s” saved.") if job else _("Job “%(name)s” created.")
        messages.success(request, text % {"name": saved.name})
        return redirect("jobs:job_detail", job_id=saved.pk)
    elif form.shell_refusal:
        raise PermissionDenied(form.shell_refusal)
    return render(request, "jobs/job_form.html", {"section": "jobs", "form": form, "job": job})


@require_http_methods(["GET", "POST"])
@needs(ADD_JOB)
def job_create(request: HttpRequest) -> HttpResponse:
    return _job_form(request, None)


@require_GET
def task_arguments(request: HttpRequest) -> HttpResponse:
    """The job form's fields of one task (htmx swaps them in when a task is chosen); with
    `job`, prefilled with that job's arguments if it runs that task."""
    if not (request.user.has_perm(ADD_JOB) or request.user.has_perm(CHANGE_JOB)):
        raise PermissionDenied
    job = None
    job_id = request.GET.get("job")
    if job_id:
        try:
            job = scoping.visible_jobs(request).filter(pk=uuid.UUID(job_id)).first()
        except ValueError:
            job = None
    form = JobForm(instance=job, initial={"task": request.GET.get("task", "")}, user=request.user)
    return render(request, "jobs/_task_arguments.html", {"form": form})


@require_GET
@vary_on_headers("HX-Request")
@needs(VIEW_JOB)
def job_detail(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    job = scoping.job_or_404(request, VIEW_JOB, job_id, Job.objects.with_running())
    runs = run_page(
        job.runs.defer("log"),
        before=Cursor.parse(request.GET.get("before")),
        after=Cursor.parse(request.GET.get("after")),
        size=JOB_RUNS_PER_PAGE,
    )
    context = {"section": "jobs", "job": job, "stats": job_run_stats(job), "runs": runs}
    if not request.htmx:  # the live part polled by htmx holds no changes
        context["chains"] = scoping.chains_shown(request, job)
        context["changes"] = job_changes.change_page(
            job, request.GET.get(job_changes.PAGE_PARAMETER), request.user
        )
        context["changes_parameter"] = job_changes.PAGE_PARAMETER
        if scoping.may(request, RUN_JOB, job):
            run_form = RunNowForm(job, user=request.user)
            # Nothing to fill in (a simulated job, a task without parameters): one click.
            context["run_form"] = run_form if run_form.has_arguments else None
    return _fragment_or_page(request, "jobs/_job_live.html", "jobs/job_detail.html", context)


@require_POST
@needs(CHANGE_JOB)
def job_restore(request: HttpRequest, job_id: uuid.UUID, change_id: int) -> HttpResponse:
    """Put the job back as it was after one of its recorded changes."""
    job = scoping.job_or_404(request, CHANGE_JOB, job_id)
    version = get_object_or_404(JobChange, pk=change_id, job_id=job.pk)
    if not job.may_restore(version, request.user):
        raise PermissionDenied(gate.change_message())
    if not version.restorable:
        messages.error(request, _("This change has no version to restore."))
        return redirect("jobs:job_detail", job_id=job.pk)
    try:
        restored = job.restore(version, user=request.user)
    except ValidationError as exc:
        messages.error(
            request,
            _("This version cannot be restored, nothing was changed: %(why)s")
            % {"why": " ".join(exc.messages)},
        )
    else:
        if restored:
            messages.success(request, _("“%(name)s” restored.") % {"name": job.name})
        else:
            messages.info(
                request, _("“%(name)s” is already as in that version.") % {"name": job.name}
            )
    return redirect("jobs:job_detail", job_id=job.pk)


@require_http_methods(["GET", "POST"])
@needs(CHANGE_JOB)
def job_edit(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    return _job_form(request, scoping.job_or_404(request, CHANGE_JOB, job_id))


@require_http_methods(["GET", "POST"])
@needs(DELETE_JOB)
def job_delete(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    job = scoping.job_or_404(request, DELETE_JOB, job_id)
    if request.method == "POST":
        name = job.name
        job.delete()
        messages.success(request, _("Job “%(name)s” deleted.") % {"name": name})
        return redirect("jobs:job_list")
    # Counted on the index of a job's runs; the page says how much history goes with it.
    context = {"section": "jobs", "job": job, "run_count": job.runs.count()}
    return render(request, "jobs/job_confirm_delete.html", context)


@require_POST
@needs(RUN_JOB)
def job_run(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """Run the job now: with its own arguments (one click), or with those of the "run
    now" form (`with_arguments`), which the run keeps."""
    job = scoping.job_or_404(request, RUN_JOB, job_id)
    arguments = None
    with_arguments = bool(request.POST.get("with_arguments"))
    if with_arguments and not gate.may_change_arguments(request.user, job):
        # Asked to run with other arguments (the form offers them none to fill in): a
        # refusal, rather than a run with the job's own that they did not ask for.
        raise PermissionDenied(gate.run_message())
    form = RunNowForm(job, request.POST, user=request.user)
    # Posted by the "run now" form of a job that has arguments to fill in; the one-click
    # button (and the list's) runs with the job's own.
    if with_arguments and form.has_arguments:
        if form.is_valid():
            try:
                # Checked and normalised as the job's own are (Job.clean()'s rules).
                arguments = job.run_arguments(form.arguments)
            except ValidationError as error:
                for message in error.message_dict.get("arguments", error.messages):
                    form.add_error(None, message)
        if arguments is None:
            context = {"section": "jobs", "job": job, "run_form": form}
            return render(request, "jobs/job_run.html", context, status=400)
    back = _next_url(request, reverse("jobs:job_detail", args=[job.pk]))
    try:
        new_run = engine.run_now(job, arguments=arguments, user=request.user)
    except engine.ManualRunsExceeded as refusal:
        messages.error(request, " ".join(refusal.messages))
        return redirect(back)
    messages.success(request, action_messages.will_run(job, new_run))
    return redirect(back)


@require_POST
@needs(CHANGE_JOB)
def job_toggle(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """Enable or disable a job. The form says which (`active` present = enable), so a
    second click on a stale page does not undo the first."""
    job = scoping.job_or_404(request, CHANGE_JOB, job_id)
    active = bool(request.POST.get("active"))
    try:
        job.set_active(active, user=request.user)
    except ValidationError as exc:
        messages.error(request, action_messages.not_enabled(job, exc))
    else:
        text = _("“%(name)s” enabled.") if active else _("“%(name)s” disabled.")
        messages.success(request, text % {"name": job.name})
    return redirect(_next_url(request, reverse("jobs:job_detail", args=[job.pk])))


@require_GET
@needs(VIEW_JOB)
def schedule_preview(request: HttpRequest) -> HttpResponse:
    """The job form's preview of its schedule, requested by htmx as one types: the next
    occurrences in the job's zone and the viewer's, or the schedule's messages.

    Needs only view_job: it computes times from what it is sent and saves nothing; with
    `job` (the form of an existing job) it reads that job's anchor, which anyone who may
    see the job may read.
    """
    base = None
    if request.GET.get("job"):
        try:
            job_id = uuid.UUID(request.GET["job"])
        except ValueError:
            raise Http404 from None
        base = scoping.job_or_404(request, VIEW_JOB, job_id)
    form = SchedulePreviewForm(request.GET)
    result = None
    errors: dict
    if base is None and _nothing_typed(request.GET):
        # A new job's empty form: a neutral line, not a warning before anything is typed.
        context = {"empty": True, "viewer_zone": timezone.get_current_timezone_name()}
        return render(request, "jobs/_schedule_preview.html", context)
    if base is not None and base.code_fields.issuperset(preview.PREVIEW_FIELDS):
        # Declared in code: its form's schedule fields are disabled, so none is sent.
        result = preview.preview(preview.schedule_job({}, base))
        errors = result.errors
    elif form.is_valid():
        result = preview.preview(preview.schedule_job(form.cleaned_data, base))
        errors = result.errors
    else:
        errors = form.errors
    context = {
        "preview": result,
        "errors": [(form.fields[name].label, messages) for name, messages in errors.items()],
        "viewer_zone": timezone.get_current_timezone_name(),
    }
    return render(request, "jobs/_schedule_preview.html", context)


# The inputs that make each kind of schedule: while all of them are blank, nothing has
# been typed yet (the unit and the zone have defaults of their own).
SCHEDULE_INPUTS = {
    ScheduleType.INTERVAL: ("interval",),
    ScheduleType.CRON: ("cron_expression",),
    ScheduleType.ONCE: ("scheduled_at", "scheduled_at_0", "scheduled_at_1"),
}


def _nothing_typed(values: QueryDict) -> bool:
    inputs = SCHEDULE_INPUTS.get(values.get("schedule_type") or ScheduleType.INTERVAL, ())
    return all(not values.get(name, "").strip() for name in inputs)


@require_GET
@needs(VIEW_JOB)
def upcoming_page(request: HttpRequest) -> HttpResponse:
    """Every job's occurrences over the next 6 hours, 24 hours or 7 days, busiest first,
    as density strips (jobs/forecasts/upcoming.py)."""
    choices = UpcomingForm(request.GET)
    span = choices.chosen_span()
    pause = context_processors.current_pause(request)
    timeline = upcoming.timeline(
        timezone.now(),
        span,
        timezone.get_current_timezone(),
        paused=pause.window if pause is not None else None,
        only=scoping.visible_ids(request),
    )
    page = Paginator(timeline.entries, JOBS_PER_PAGE).get_page(request.GET.get("page"))
    rows = timeline.rows(page.object_list)
    context = {
        "section": "upcoming",
        "choices": choices,
        "spans": upcoming.SPANS,
        "span": span,
        "timeline": timeline,
        "page": page,
        "rows": rows,
        "peak": upcoming.peak(rows),
    }
    return render(request, "jobs/upcoming.html", context)


@require_GET
@needs(VIEW_JOB)
def job_choices(request: HttpRequest) -> HttpResponse:
    """A job picker's search results (jobs.web.chains.JobPicker), as boxes to tick."""
    field = request.GET.get("field", "")
    if field not in CHAIN_FIELDS:
        return HttpResponse(status=400)
    text = request.GET.get(f"{field}_search", "")[:NAME_MAX_LENGTH]
    found = chain_fields.job_choices(
        text,
        exclude=chain_fields.read_exclusions(request.GET, field),
        among=scoping.chainable_jobs(request),
    )
    context = {"field": field, "choices": found.jobs, "more": found.more, "searched": bool(text)}
    return render(request, "jobs/_job_choices.html", context)


# --- runs --------------------------------------------------------------------------------


@require_GET
@vary_on_headers("HX-Request")
@needs(VIEW_JOB)
def history(request: HttpRequest) -> HttpResponse:
    filters = HistoryFilterForm(request.GET)
    filters.is_valid()  # an invalid filter is shown with its error and left out
    wanted = filters.cleaned_data
    # Lists never show logs, which can be long: each run's page does.
    runs = scoping.visible_runs(request, JobHistory.objects.select_related("job").defer("log"))
    runs = runs.matching(**filters.run_filters())
    jobs = scoping.visible_jobs(request)
    selected_job = jobs.filter(pk=wanted["job"]).first() if wanted.get("job") else None
    before = Cursor.parse(request.GET.get("before"))
    after = Cursor.parse(request.GET.get("after"))
    context = {
        "section": "history",
        "filters": filters,
        "selected_job": selected_job,
        "runs": run_page(runs, before=before, after=after),
        # Any filter given, valid or not: an empty page then says the filters match
        # nothing, with a way to clear them, rather than "No runs yet."
        "filtered": any(request.GET.get(name) for name in filters.fields),
        # Only the first page follows new runs as they come.
        "live": before is None and after is None,
    }
    return _fragment_or_page(request, "jobs/_history_table.html", "jobs/history.html", context)


@require_GET
@vary_on_headers("HX-Request")
@needs(VIEW_JOB)
def run_detail(request: HttpRequest, run_id: uuid.UUID) -> HttpResponse:
    """A run's page. While the run is pending or running its live part (status, times,
    cancel button, log so far) is polled by htmx, which gets that fragment alone; the
    fragment of a finished run asks for no more."""
    runs = JobHistory.objects.select_related("job", "caused_by__job").defer("caused_by__log")
    run = scoping.run_or_404(request, VIEW_JOB, run_id, runs)
    # The runs it started (index jobs_run_caused_by); at most a few per chained job. Left
    # lazy: only the whole page reads it, not the live part polled while the run runs.
    chained = scoping.visible_runs(request, run.chained_runs.select_related("job"))
    chained = chained.defer("log").order_by("created_at")
    context = {
        "section": "history",
        "run": run,
        "chained": chained,
        "next_attempt": _next_attempt(run),
        # The run that started it, of a job the user may not see: no name, no link.
        "caused_by_hidden": run.caused_by is not None
        and not scoping.may(request, VIEW_JOB, run.caused_by.job),
    }
    return _fragment_or_page(request, "jobs/_run_live.html", "jobs/run_detail.html", context)


def _next_attempt(run: JobHistory) -> JobHistory | None:
    """The attempt after a failed run (an automatic or an operator's retry), if any: its
    page links to it and offers "Retry" only without one (engine.retry_run's rule). One
    look-up in the unique (job, scheduled_for, attempt) index, for failed runs only."""
    if run.status != RunStatus.FAILED:
        return None
    later = JobHistory.objects.filter(
        job_id=run.job_id, scheduled_for=run.scheduled_for, attempt__gt=run.attempt
    )
    return later.only("pk", "attempt", "status").order_by("attempt").first()


# What the run page's buttons post as `how`: the button says which, so a stale page does
# not do what its button did not say.
RETRY = "retry"  # the next attempt of a failed run (engine.retry_run, as the admin's)
AGAIN = "again"  # a new run of the job, now, with this run's arguments (engine.run_now)
OTHER_ARGUMENTS_REFUSED = _lazy(
    "This run had other arguments than the job has now; only users allowed to run shell "
    "commands (jobs.use_shell) may run it with them. Use Run now on the job's page to run "
    "it with its own."
)


@require_POST
@needs(RUN_JOB)
def run_again(request: HttpRequest, run_id: uuid.UUID) -> HttpResponse:
    """Retry a failed run, or run a finished run's job again with the same arguments;
    then show the new run. Needs run_job, as "run now"."""
    run = scoping.run_or_404(request, RUN_JOB, run_id)
    here = reverse("jobs:run_detail", args=[run.pk])
    how = request.POST.get("how", "")
    if how not in (RETRY, AGAIN):
        return HttpResponse(_("Say how: retry or again."), status=400)
    if run.can_be_cancelled:
        messages.error(request, _("This run has not finished yet."))
        return redirect(here)
    if how == RETRY:
        try:
            new_run = engine.retry_run(run, user=request.user)
        except engine.RetryRefused as refusal:
            messages.error(request, str(refusal))
            return redirect(here)
        except gate.ShellPermissionRequired:
            messages.error(request, OTHER_ARGUMENTS_REFUSED)
            return redirect(here)
        messages.success(
            request,
            _("“%(name)s” will be retried in a moment (attempt %(attempt)d).")
            % {"name": run.job.name, "attempt": new_run.attempt},
        )
        return redirect("jobs:run_detail", run_id=new_run.pk)
    job = run.job
    if job.enqueued_task:
        # An enqueued task's run: enqueued again, with its call, queue and priority.
        new_run = engine.enqueue_again(run)
        messages.success(request, _("“%(name)s” will run in a moment.") % {"name": job.name})
        return redirect("jobs:run_detail", run_id=new_run.pk)
    arguments = run.arguments
    if arguments is not None and arguments != job.arguments:
        # Other arguments than the job's own: the rules of "run now" with arguments.
        if gate.run_refusal(request.user, job, arguments):
            messages.error(request, OTHER_ARGUMENTS_REFUSED)
            return redirect(here)
        try:
            arguments = job.run_arguments(arguments)
        except ValidationError as error:
            messages.error(
                request,
                _("This run's arguments no longer fit the job, nothing was run: %(why)s")
                % {"why": " ".join(error.messages)},
            )
            return redirect(here)
    try:
        new_run = engine.run_now(job, arguments=arguments, user=request.user)
    except gate.ShellPermissionRequired:
        messages.error(request, OTHER_ARGUMENTS_REFUSED)
        return redirect(here)
    except engine.ManualRunsExceeded as refusal:
        messages.error(request, " ".join(refusal.messages))
        return redirect(here)
    messages.success(request, _("“%(name)s” will run in a moment.") % {"name": job.name})
    return redirect("jobs:run_detail", run_id=new_run.pk)


@require_POST
@needs(RUN_JOB)
def run_cancel(request: HttpRequest, run_id: uuid.UUID) -> HttpResponse:
    """Cancel a pending or running run; a running one stops within a second or two.

    Asked first: a POST without `confirm` (the Cancel buttons of the run page and of the
    lists) answers the page that asks, whose form posts `confirm` (and `next`, where to
    go back to). It works without JavaScript; only the confirming POST changes anything.
    """
    run = scoping.run_or_404(request, RUN_JOB, run_id)
    if not request.POST.get("confirm"):
        back = _next_url(request, reverse("jobs:run_detail", args=[run.pk]))
        context = {"section": "history", "run": run, "next": back}
        return render(request, "jobs/run_confirm_cancel.html", context)
    try:
        engine.cancel_run(run, by=request.user.get_username())
    except engine.CancelRefused as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, _("The run of “%(name)s” is cancelled.") % {"name": run.job.name})
    return redirect(_next_url(request, reverse("jobs:run_detail", args=[run.pk])))


# --- health ------------------------------------------------------------------------------


@login_not_required
@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """200 while the database answers; 503 when it does not. No login needed."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        return JsonResponse({"status": "error", "database": "unreachable"}, status=503)
    return JsonResponse({"status": "ok"})
