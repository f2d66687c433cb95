"""What every screen checks and sets up itself, whatever middleware the project runs.

jobs/web/urls.py wraps each of its views with `screen`, so the pages are safe in a project
that adds none of jobs.web.middleware: a view marked @login_not_required (/healthz) is
public, every other one sends an anonymous visitor to settings.LOGIN_URL (htmx requests
with a full-page redirect, see below) before it reads anything. Each also:

- refuses a request holding a NUL byte (400), as RejectNulMiddleware does site-wide;
- checks the CSRF token of a POST even without CsrfViewMiddleware (csrf_protect does
  nothing more when the middleware has already checked it);
- shows the page in the language chosen with the header's switch (set_language's
  cookie) when the project runs no LocaleMiddleware to apply it;
- shows times in the browser's zone when it sent one (the `tz` cookie app.js writes),
  else in whatever zone the project activated (its TIME_ZONE by default), and names
  that zone to htmx (X-Time-Zone), for the header's label;
- records what it changes in the audit trail as the user's, through the dashboard;
- gives the view `request.htmx` when django-htmx's HtmxMiddleware has not.

The same middleware classes still exist for the standalone site, which applies them to
every page (the admin's and the login page's too).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import resolve_url
from django.template.response import SimpleTemplateResponse
from django.urls import URLPattern, URLResolver
from django.utils import timezone, translation
from django.views.decorators.csrf import csrf_protect
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from jobs import times
from jobs.models import Channel
from jobs.models.changes import acting
from jobs.web.languages import chosen_language
from jobs.web.middleware import request_has_nul, zone_from_request

ViewFunction = Callable[..., HttpResponse]

# The response header naming the zone of an htmx answer's times (jobs/static/jobs/app.js).
ZONE_HEADER = "X-Time-Zone"


def login_page_redirect(request: HttpRequest) -> HttpResponse:
    """To settings.LOGIN_URL and back (`?next=`), as Django's login_required answers;
    an htmx request gets HX-Redirect instead: when a session expires while a page polls,
    a plain 302 would make htmx swap the login form into the middle of the dashboard."""
    path = request.build_absolute_uri()
    login_url = resolve_url(settings.LOGIN_URL)
    login_scheme, login_netloc = urlsplit(login_url)[:2]
    current_scheme, current_netloc = urlsplit(path)[:2]
    if (not login_scheme or login_scheme == current_scheme) and (
        not login_netloc or login_netloc == current_netloc
    ):
        path = request.get_full_path()
    response = redirect_to_login(path, login_url)
    if request.headers.get("HX-Request") == "true":
        return HttpResponseClientRedirect(response["Location"])
    return response


@contextmanager
def browser_zone(request: HttpRequest) -> Iterator[None]:
    """The browser's zone while the view runs, if it sent one; else the zone is left as
    the project set it (TimezoneMiddleware, a middleware of the project's own, or
    TIME_ZONE)."""
    zone = zone_from_request(request)
    if zone is None:
        yield
        return
    with timezone.override(zone):
        yield


@contextmanager
def chosen_language_active(request: HttpRequest) -> Iterator[None]:
    """The language chosen with the switch while the view runs (see chosen_language)."""
    code = chosen_language(request)
    if code is None:
        yield
        return
    with translation.override(code):
        yield


def rendered(response: HttpResponse) -> HttpResponse:
    """A TemplateResponse (the admin's pages) rendered now, while the zone and the actor
    are set: its times and its masking of secrets depend on them."""
    if isinstance(response, SimpleTemplateResponse) and not response.is_rendered:
        response.render()
    return response


def screen(view: ViewFunction) -> ViewFunction:
    """`view` with the checks and set-up of every screen (see the module's docstring)."""
    public = getattr(view, "login_required", True) is False
    checked = csrf_protect(view)

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request_has_nul(request):
            # Before the session or the user is looked up: PostgreSQL refuses NUL in text.
            return HttpResponseBadRequest(
                "A NUL character is not allowed in a request.\n", content_type="text/plain"
            )
        if not hasattr(request, "htmx"):
            request.htmx = HtmxDetails(request)  # type: ignore[attr-defined]
        if not public and not request.user.is_authenticated:
            return login_page_redirect(request)
        with (
            chosen_language_active(request),
            browser_zone(request),
            acting(request.user, Channel.DASHBOARD),
        ):
            response = rendered(checked(request, *args, **kwargs))
            if request.htmx:  # type: ignore[attr-defined]
                # The zone of this fragment's times, for the header's label (app.js).
                response.headers[ZONE_HEADER] = times.zone_label()
            return response

    return wrapped


def screens(patterns: list[URLPattern | URLResolver]) -> list[URLPattern | URLResolver]:
    """Wrap every view of `patterns` (and of the patterns they include) with `screen`."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            screens(pattern.url_patterns)
        else:
            pattern.callback = screen(pattern.callback)
    return patterns


def admin_screen(view: ViewFunction) -> ViewFunction:
    """An admin view of the app's models (jobs.admin.common.AdminScreensMixin): the
    browser's zone and the audit trail's actor, as `screen` gives the dashboard's. The
    admin checks logins and CSRF itself."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with browser_zone(request), acting(request.user, Channel.ADMIN):
            return rendered(view(request, *args, **kwargs))

    return wrapped
