from django.contrib.auth.decorators import login_not_required
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from jobs.api.views import JobChangesView, JobRunsView, JobViewSet, RunViewSet, TaskListView

router = DefaultRouter()
router.register("jobs", JobViewSet, basename="api-job")
router.register("runs", RunViewSet, basename="api-run")


def _own_authentication(patterns: list) -> list:
    """Exempt the API from the site's LoginRequiredMiddleware, which knows only sessions
    and would send a script with a token to the login page: DRF authenticates (token or
    session) and answers 401/403 itself. Recent DRF versions mark their views so too;
    this keeps it true whatever the version."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _own_authentication(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            pattern.callback = login_not_required(pattern.callback)
    return patterns


urlpatterns = _own_authentication(
    [
        path("v1/jobs/<str:job_pk>/runs/", JobRunsView.as_view(), name="api-job-runs"),
        path("v1/jobs/<str:job_pk>/changes/", JobChangesView.as_view(), name="api-job-changes"),
        path("v1/tasks/", TaskListView.as_view(), name="api-tasks"),
        path("v1/", include(router.urls)),
        # The schema and its docs are public: they describe the API, not the data.
        path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
        path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    ]
)
