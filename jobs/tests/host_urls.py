"""A project's URLconf as docs/host-project.md shows it: the app under a
prefix of its own, beside the admin and a view of the project's own that changes a job
(jobs/tests/test_host_project.py)."""

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


urlpatterns = [
    path("admin/", admin.site.urls),
    path("own/<uuid:job_id>/disable/", disable_job),
    path(PREFIX.strip("/") + "/", include("jobs.urls")),
]
