"""The API's URLs (mounted under api/ by jobs/urls.py)."""

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.urls import URLPattern, URLResolver, include, path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import APIRootView, DefaultRouter

from jobs.api.calendars import BlackoutViewSet, CalendarViewSet
from jobs.api.channels import NotificationChannelViewSet
from jobs.api.docs import SchemaView, SwaggerView
from jobs.api.policy import ApiPolicy, extend_schema
from jobs.api.queues import QueuesView
from jobs.api.scheduler import PauseView, ResumeView, SchedulerView
from jobs.api.views import (
    JobChangesView,
    JobRunsView,
    JobViewSet,
    RunViewSet,
    SchedulePreviewView,
    TaskListView,
)

# What GET v1/ lists: the router's collections (registered below).
ROOT_COLLECTIONS = ("jobs", "runs", "calendars", "blackouts", "channels")


class RootView(ApiPolicy, APIRootView):
    """The list of the API's collections, under the API's own policies."""

    @extend_schema(
        summary="List the API's collections",
        description="Each collection's name and the URL of its list.",
        responses={
            200: {
                "type": "object",
                "properties": {
                    name: {"type": "string", "format": "uri"} for name in ROOT_COLLECTIONS
                },
                "required": list(ROOT_COLLECTIONS),
                "additionalProperties": {"type": "string", "format": "uri"},
            }
        },
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class Router(DefaultRouter):
    APIRootView = RootView


router = Router()
router.register("jobs", JobViewSet, basename="api-job")
router.register("runs", RunViewSet, basename="api-run")
router.register("calendars", CalendarViewSet, basename="api-calendar")
router.register("channels", NotificationChannelViewSet, basename="api-channel")
router.register("blackouts", BlackoutViewSet, basename="api-blackout")


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
        path("v1/queues/", QueuesView.as_view(), name="api-queues"),
        path("v1/scheduler/", SchedulerView.as_view(), name="api-scheduler"),
        path("v1/scheduler/pause/", PauseView.as_view(), name="api-scheduler-pause"),
        path("v1/scheduler/resume/", ResumeView.as_view(), name="api-scheduler-resume"),
        path("v1/schedule-preview/", SchedulePreviewView.as_view(), name="api-schedule-preview"),
        path("v1/tasks/", TaskListView.as_view(), name="api-tasks"),
        path("v1/", include(router.urls)),
        # The schema and its docs are public: they describe the API, not the data.
        path("schema/", SchemaView.as_view(), name="api-schema"),
        path("docs/", SwaggerView.as_view(), name="api-docs"),
    ]
)
