"""The job page's "Run for a past range": the range, then the occurrences that would get a
run (and those that have one) to confirm, then the runs (jobs.engine.backfill, which
creates none twice: posting the confirmation again adds nothing). Needs jobs.run_job,
as the API's backfill does."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from jobs import engine
from jobs.access.permissions import RUN_JOB
from jobs.web import scoping
from jobs.web.forms.calendars import BackfillForm
from jobs.web.views import needs

# Posted by the confirmation page's button: create the runs.
CONFIRM = "confirm"


@require_http_methods(["GET", "POST"])
@needs(RUN_JOB)
def job_backfill(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    job = scoping.job_or_404(request, RUN_JOB, job_id)
    form = BackfillForm(job, request.POST or None)
    context = {"section": "jobs", "job": job, "form": form}
    if request.method != "POST":
        return render(request, "jobs/job_backfill.html", context)
    if not form.is_valid():
        return render(request, "jobs/job_backfill.html", context, status=400)
    if not request.POST.get(CONFIRM):
        taken = engine.already_run(job, form.occurrences)
        context["occurrences"] = [(at, at in taken) for at in form.occurrences]
        context["new_count"] = len(form.occurrences) - len(taken)
        return render(request, "jobs/job_backfill_confirm.html", context)
    try:
        done = engine.backfill(job, form.cleaned_data["start"], form.cleaned_data["end"])
    except engine.BackfillRefused as refused:  # the range changed meaning since the check
        form.add_error(refused.field, str(refused))
        return render(request, "jobs/job_backfill.html", context, status=400)
    created = len(done.created)
    messages.success(
        request,
        ngettext(
            "“%(name)s”: %(count)d run created for the past range.",
            "“%(name)s”: %(count)d runs created for the past range.",
            created,
        )
        % {"name": job.name, "count": created},
    )
    return redirect("jobs:job_detail", job_id=job.pk)
