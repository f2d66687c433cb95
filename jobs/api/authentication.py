"""API tokens (jobs.models.tokens) under the failed-login rules of the login page
(docs/permissions.md: "Logins and throttling").

The header is DRF's (`Authorization: Token <text>`); the token is looked up by its
prefix and the hash of its text. An unknown, expired or revoked token is 401 saying
which; a read-only token on an unsafe method is 403. `request.auth` is the ApiToken
(its team_id scopes the request to one team when set).

The lockout rules are django-axes': they apply when the project has "axes" in
INSTALLED_APPS (the standalone site has).
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.auth.signals import user_login_failed
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from rest_framework import exceptions, permissions, status
from rest_framework.authentication import TokenAuthentication
from rest_framework.request import Request

from jobs.models import ApiToken, find_token


class LockedOut(exceptions.APIException):
    """429 {"detail": "Too many failed logins: ..."} with Retry-After."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    def __init__(self) -> None:
        # django-axes' models are importable only when it is installed.
        from jobs.web.logins import lockout_message, lockout_minutes

        super().__init__(lockout_message())
        # DRF's exception handler turns this into the Retry-After header.
        minutes = lockout_minutes()
        self.wait = None if minutes is None else minutes * 60


def _when(moment: Any) -> str:
    return date_format(timezone.localtime(moment), "DATETIME_FORMAT")


class LockoutTokenAuthentication(TokenAuthentication):
    """ApiToken authentication, with django-axes' counts when axes is installed.

    - A bad token is a failed login of its client address (there is no user name to
      count it against); once the address has failed LOGIN_FAILURE_LIMIT times, every
      token from it is refused, the right one too, as the login page refuses the right
      password.
    - A good token is never refused because of wrong passwords: a token cannot be
      guessed, and anyone may send wrong passwords for a user name; refusing its tokens
      would let them stop that user's scripts.
    """

    model = ApiToken

    def authenticate_credentials(self, key: str) -> tuple[Any, ApiToken]:
        token = find_token(key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed(
                _("The token was revoked on %(date)s.") % {"date": _when(token.revoked_at)}
            )
        now = timezone.now()
        if token.expires_at <= now:
            raise exceptions.AuthenticationFailed(
                _("The token expired on %(date)s.") % {"date": _when(token.expires_at)}
            )
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        token.touch(now)
        return token.user, token

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        found = self._authenticate(request)
        if (
            found is not None
            and found[1].read_only
            and request.method not in permissions.SAFE_METHODS
        ):
            # Refused here, before any view: whatever the user may do, this token reads only.
            raise exceptions.PermissionDenied(
                _("This token is read-only: it may not make changes (%(method)s).")
                % {"method": request.method}
            )
        return found

    def _authenticate(self, request: Request) -> tuple[Any, Any] | None:
        if not apps.is_installed("axes"):
            return super().authenticate(request)
        from axes.handlers.proxy import AxesProxyHandler
        from axes.helpers import get_credentials

        http_request = request._request
        try:
            found = super().authenticate(request)
        except exceptions.AuthenticationFailed:
            if not AxesProxyHandler.is_allowed(http_request, get_credentials(None)):
                raise LockedOut() from None
            user_login_failed.send(
                sender=__name__, credentials=get_credentials(None), request=http_request
            )
            if getattr(http_request, "axes_locked_out", False):
                raise LockedOut() from None
            raise
        if found is None:  # no token sent: another authentication may apply
            return None
        from jobs.web.logins import bad_tokens_locked_out

        AxesProxyHandler.update_request(http_request)
        if bad_tokens_locked_out(http_request):
            raise LockedOut()
        return found
