"""Authentication backends for the test settings."""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.http import HttpRequest


class AxesBackendForTestClient(AxesStandaloneBackend):
    """django-axes' backend, except that Django's test client.login() keeps working.

    client.login() authenticates without a request, which axes refuses (it has no address
    to count); with no request there is nothing to count, so this backend lets the next
    one decide. Every request-borne login (the pages, the admin) is checked as in
    production.
    """

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)
