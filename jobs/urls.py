"""Everything the app serves, for one include() under a prefix of the project's choosing,
``path("scheduler/", include("jobs.urls"))``: the screens at the prefix, the JSON API, its
schema and docs under ``api/``, and the Prometheus metrics at ``metrics``.

The screens check logins themselves (jobs/web/screens.py) and the API authenticates with
its own DRF classes (jobs/api/policy.py); /healthz, /metrics, the API's schema and docs
are public (metrics behind METRICS_TOKEN when it is set).

Every name is in the namespace ``jobs`` (``reverse("jobs:dashboard")``, ``{% url
'jobs:job_detail' job.pk %}``), as a reusable app's are, so a project's own URL named
``dashboard`` or ``job_list`` never takes the place of the app's.
"""

from django.urls import include, path

from jobs.metrics import metrics_view

app_name = "jobs"

urlpatterns = [
    path("api/", include("jobs.api.urls")),
    path("metrics", metrics_view, name="metrics"),
    path("", include("jobs.web.urls")),
]
