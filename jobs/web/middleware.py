"""Request middleware: login everywhere, the user's time zone, who is acting (for the
audit trail), and no NUL bytes in requests.

All optional: the app's own screens do each of these for themselves (jobs.web.screens,
which uses the helpers here). A project adds them to have the same on all its pages
(docs/host-project.md); the standalone site adds RejectNul,
LoginRequired and Timezone."""

from __future__ import annotations

import contextlib
import functools
import zoneinfo
from collections.abc import Callable

from django.contrib.auth import middleware as auth_middleware
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
    QueryDict,
)
from django.urls import Resolver404, resolve
from django.utils import timezone
from django_htmx.http import HttpResponseClientRedirect

from jobs.models import Channel
from jobs.models.changes import reset_actor, set_actor

# The browser writes its IANA zone name here (jobs/static/jobs/app.js).
TIMEZONE_COOKIE = "tz"


def is_admin_view(view_func: Callable) -> bool:
    """Django marks the admin's site-wide views with admin_site, ModelAdmin ones with
    model_admin."""
    return hasattr(view_func, "admin_site") or hasattr(view_func, "model_admin")


class LoginRequiredMiddleware(auth_middleware.LoginRequiredMiddleware):
    """Django's LoginRequiredMiddleware, with two changes.

    - The admin is left to itself: it checks is_staff on every view and sends visitors
      to its own login page (Django marks the admin's site-wide views for this
      middleware, but not the ModelAdmin ones, which would go to /accounts/login/).
    - htmx requests get a full-page redirect: when a session expires while a page
      polls, a plain 302 would make htmx swap the login form into the middle of the
      dashboard; HX-Redirect sends the whole tab there.
    """

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: list, view_kwargs: dict
    ) -> HttpResponse | None:
        if is_admin_view(view_func):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)

    def handle_no_permission(self, request: HttpRequest, view_func: Callable) -> HttpResponse:
        response = super().handle_no_permission(request, view_func)
        if getattr(request, "htmx", False):
            return HttpResponseClientRedirect(response["Location"])
        return response


@functools.cache
def known_zones() -> frozenset[str]:
    # Reading the zone database once per process: the list does not change while it runs.
    return frozenset(zoneinfo.available_timezones())


def zone_from_request(request: HttpRequest) -> zoneinfo.ZoneInfo | None:
    """The zone the browser reported, or None when it sent none or an unknown name."""
    name = request.COOKIES.get(TIMEZONE_COOKIE, "")
    if name not in known_zones():
        return None
    return zoneinfo.ZoneInfo(name)


class TimezoneMiddleware:
    """Show dates and times in the zone of the user's browser (settings.TIME_ZONE otherwise).

    Only presentation changes: everything is stored in UTC, and forms read local input
    in the active zone.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        zone = zone_from_request(request)
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()


NUL_MESSAGE = "A NUL character is not allowed in a request."
# Bodies Django parses into request.POST (a JSON body is the API parser's to read).
FORM_CONTENT_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})


def _query_dict_has_nul(query: QueryDict) -> bool:
    return any(
        "\x00" in key or any("\x00" in value for value in values if isinstance(value, str))
        for key, values in query.lists()
    )


def request_has_nul(request: HttpRequest) -> bool:
    """Whether the path, the query string, a header (cookies included) or a form field
    (name or value) holds a NUL character."""
    if "\x00" in request.path or _query_dict_has_nul(request.GET):
        return True
    if any(
        "\x00" in value
        for key, value in request.META.items()
        if key.startswith("HTTP_") and isinstance(value, str)
    ):
        return True
    return (
        request.method == "POST"
        and request.content_type in FORM_CONTENT_TYPES
        and _query_dict_has_nul(request.POST)
    )


class RejectNulMiddleware:
    """Answer 400 to a request with a NUL byte anywhere a value could reach a query.

    PostgreSQL refuses NUL in text ("A string literal cannot contain NUL"), so an admin
    filter, a search or a session cookie holding one would end in a 500. No honest
    client sends one.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request_has_nul(request):
            if _is_api_request(request):
                # The API's answers are JSON, as its schema says, this one too.
                return JsonResponse({"detail": NUL_MESSAGE}, status=400)
            return HttpResponseBadRequest(f"{NUL_MESSAGE}\n", content_type="text/plain")
        return self.get_response(request)


def _is_api_request(request: HttpRequest) -> bool:
    """Whether the path is one of the API's (jobs.api.urls names them all api-...)."""
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return False
    return (match.url_name or "").startswith("api-")


class ActorMiddleware:
    """The request's user changes jobs through the dashboard or the admin: the audit
    trail (jobs.models.changes) records it so. API views say "api" themselves, once DRF
    has authenticated the request (a token's user is unknown here)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            return self.get_response(request)
        finally:
            token = request.__dict__.pop("_jobs_actor_token", None)
            if token is not None:
                # A different context (an async hand-off) already dropped it.
                with contextlib.suppress(ValueError):
                    reset_actor(token)

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: list, view_kwargs: dict
    ) -> None:
        channel = Channel.ADMIN if is_admin_view(view_func) else Channel.DASHBOARD
        request._jobs_actor_token = set_actor(request.user, channel)  # type: ignore[attr-defined]
