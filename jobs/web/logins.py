"""Logins that cannot be guessed: django-axes' hooks, and the password-reset pages.

django-axes (settings: "Failed logins") records every failed login, on the login page,
the admin's and the API's tokens, and refuses a (user name, client address) pair or a
client address once it has failed LOGIN_FAILURE_LIMIT times; the functions here are the
hooks its settings name.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off, get_failure_limit
from axes.models import AccessAttempt, AccessBase
from django.conf import settings
from django.contrib.auth import urls as auth_urls
from django.contrib.auth.decorators import login_not_required
from django.db.models import Q, Sum
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from rest_framework.response import Response

from jobs import conf
from jobs.web.addresses import client_address


def lockout_parameters(
    request_or_attempt: HttpRequest | AccessBase, credentials: dict | None = None
) -> list[list[str]]:
    """Count failures per (user name, address) pair and, separately, per address: either
    locks.

    Never per user name alone: anyone who knows a name could then keep its owner out
    from everywhere, by failing once every few minutes. The pair locks out the one
    guessing a user's password; the address, the one trying many names. A failure that
    names no user (a bad API token) counts for its address only; one from an unknown
    address for the pair (that name, no address), which refuses no other address.
    """
    if isinstance(request_or_attempt, AccessBase):
        username = request_or_attempt.username
        address = request_or_attempt.ip_address
    else:
        username = get_client_username(request_or_attempt, credentials)
        address = getattr(request_or_attempt, "axes_ip_address", None)
    parameters = []
    if username:
        parameters.append(["username", "ip_address"])
    if address:
        parameters.append(["ip_address"])
    # Neither: count it under the empty address, so that axes has something to count.
    return parameters or [["ip_address"]]


def bad_tokens_locked_out(request: HttpRequest) -> bool:
    """Whether the request's address sent LOGIN_FAILURE_LIMIT bad API tokens within the
    cool-off. Only bad tokens count (they are recorded without a user name): wrong
    passwords, which anyone can send for any name, never refuse a good token."""
    address = getattr(request, "axes_ip_address", None)
    if not address:
        return False
    attempts = AccessAttempt.objects.filter(
        Q(username__isnull=True) | Q(username=""), ip_address=address
    )
    cool_off = get_cool_off()
    if cool_off is not None:
        attempts = attempts.filter(attempt_time__gte=timezone.now() - cool_off)
    failures = attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0
    return failures >= get_failure_limit(request, None)


class LoginAttemptHandler(AxesDatabaseHandler):
    """Axes' database handler; a successful login forgets only its own failures.

    Axes would delete every failure of the user name and every failure of the address:
    anyone with one account could then clear, by logging in, the failures their address
    had collected trying other people's names. Only the pair (this user name, this
    address) is forgotten: the user's own typos.
    """

    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        username = get_client_username(request, credentials)
        count, _ = AccessAttempt.objects.filter(
            username=username, ip_address=request.axes_ip_address
        ).delete()
        return count


def lockout_minutes() -> int | None:
    """How long a lockout lasts, in whole minutes; None when it lasts until an
    administrator lifts it (django-axes without AXES_COOLOFF_TIME)."""
    cool_off = get_cool_off()
    if cool_off is None:
        return None
    return max(1, math.ceil(cool_off.total_seconds() / 60))


def lockout_message() -> str:
    minutes = lockout_minutes()
    if minutes is None:
        return _("Too many failed logins: ask an administrator to unlock the account.")
    return ngettext(
        "Too many failed logins: try again in %(minutes)d minute.",
        "Too many failed logins: try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict | None = None,
) -> HttpResponse:
    """What a refused login gets: a page saying why and for how long (429, Retry-After).

    The API has already answered with its own JSON refusal, which is kept.
    """
    if isinstance(original_response, Response):
        return original_response
    response = render(
        request,
        "registration/refused.html",
        {"title": _("Log in"), "message": lockout_message(), "back_url": request.path},
        status=getattr(settings, "AXES_HTTP_RESPONSE_CODE", 429),
    )
    minutes = lockout_minutes()
    if minutes is not None:
        response["Retry-After"] = str(minutes * 60)
    return response


# --- Password reset -------------------------------------------------------------------
RESET_WINDOW_SECONDS = 3600

# Django's four password-reset pages (django.contrib.auth.urls).
_RESET_PAGES = {
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
}


def _over_limit(kind: str, value: str) -> bool:
    """Count one request for `value` in the current hour; True past the limit."""
    digest = hashlib.sha256(value.encode()).hexdigest()
    key = f"password-reset:{kind}:{digest}"
    # Shared by every web process, so that the limit is one limit, however many there are.
    cache = conf.shared_cache()
    cache.add(key, 0, timeout=RESET_WINDOW_SECONDS)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=RESET_WINDOW_SECONDS)
        count = 1
    return count > conf.password_reset_limit()


def reset_requests_refused(request: HttpRequest) -> bool:
    """A reset request (the form's POST) counts for its address and its e-mail address."""
    if request.method != "POST":
        return False
    address = client_address(request)
    email = request.POST.get("email", "").strip().lower()
    refused = False
    if address and _over_limit("address", address):
        refused = True
    if email and _over_limit("email", email):
        refused = True
    return refused


def password_reset_page(view: Callable[..., HttpResponse], name: str) -> Callable[..., Any]:
    """One of the reset pages: 404 unless PASSWORD_RESET_ENABLED; the form rate-limited."""

    @functools.wraps(view)
    def page(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not conf.password_reset_enabled():
            raise Http404
        if name == "password_reset" and reset_requests_refused(request):
            response = render(
                request,
                "registration/refused.html",
                {
                    "title": _("Password reset"),
                    "message": _("Too many password reset requests: try again in an hour."),
                    "back_url": request.path,
                },
                status=429,
            )
            response["Retry-After"] = str(RESET_WINDOW_SECONDS)
            return response
        return view(request, *args, **kwargs)

    return login_not_required(page)


def account_urls() -> list[URLPattern]:
    """django.contrib.auth.urls, the password-reset pages wrapped by password_reset_page."""
    patterns = []
    for pattern in auth_urls.urlpatterns:
        if pattern.name in _RESET_PAGES:
            pattern = URLPattern(
                pattern.pattern,
                password_reset_page(pattern.callback, pattern.name),
                pattern.default_args,
                pattern.name,
            )
        patterns.append(pattern)
    return patterns
