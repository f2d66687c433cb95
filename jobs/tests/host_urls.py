"""A project's URLconf as docs/host-project.md shows it: the app under a prefix of its own,
beside the admin, Django's login pages (django.contrib.auth.urls)
and language switch, a view of the project's own that changes a job, and pages of the
project's own named as the app's are (dashboard, job_list, history), listed after the
app's include so that an un-namespaced name would reverse to them
(jobs/tests/project/test_host_project.py)."""

import uuid

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt

from jobs.models import Job

PREFIX = "/scheduler/"


@csrf_exempt
def disable_job(request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """The project's own code changing a job, outside the app's views."""
    Job.objects.get(pk=job_id).set_active(False)
    return HttpResponse("disabled")


def own_page(request: HttpRequest) -> HttpResponse:
    """A page of the project's own, under a name the app uses too."""
    return HttpResponse(f"the project's own {request.resolver_match.url_name}")


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("own/<uuid:job_id>/disable/", disable_job),
    path(PREFIX.strip("/") + "/", include("jobs.urls")),
    # Django reverses a name to the last pattern that has it: these would win.
    path("", own_page, name="dashboard"),
    path("own/jobs/", own_page, name="job_list"),
    path("own/history/", own_page, name="history"),
]
