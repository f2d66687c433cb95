"""Every URL of the site needs a login except the few that docs/permissions.md ("Who can do
what") lists.

The URL list is walked, not written down here, so a new page that forgets its login
check fails this test.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db

PERMISSIONS = Path(__file__).resolve().parents[3] / "docs" / "permissions.md"

# What an anonymous visitor may open, as docs/permissions.md says it.
PUBLIC = {
    "/accounts/login/",
    "/healthz",
    "/api/schema/",
    "/api/docs/",
    "/i18n/setlang/",
    "/favicon.ico",  # a redirect to the icon among the static files
    "/metrics",  # while METRICS_TOKEN is empty, as in the tests
}

SAMPLE = {
    "uuid": str(uuid.uuid4()),
    "int": "1",
    "str": str(uuid.uuid4()),
    "slug": "x",
    "path": "x",
    "drf_format_suffix": ".json",
}


def _paths(patterns: list, prefix: str = "") -> Iterator[str]:
    for pattern in patterns:
        route = str(pattern.pattern)
        if route.startswith("^") or route.startswith("admin/"):
            # The admin (regex routes) keeps its own login: jobs/tests/web/test_views_access.py.
            continue
        route = re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE[m.group(1) or "str"], route)
        if isinstance(pattern, URLResolver):
            yield from _paths(pattern.url_patterns, prefix + route)
        elif isinstance(pattern, URLPattern):
            yield "/" + prefix + route


def test_every_page_but_the_listed_ones_needs_a_login(client: Client) -> None:
    paths = set(_paths(get_resolver().url_patterns))
    assert len(paths) > 20  # the walk found the site
    opened = set()
    for path in sorted(paths):
        response = client.get(path)
        status = response.status_code
        if status == 302 and response["Location"].startswith("/accounts/login/"):
            continue
        if path.startswith("/api/v1/") and status == 401:
            continue
        if path.startswith(("/accounts/password_reset/", "/accounts/reset/")) and status == 404:
            continue  # off unless PASSWORD_RESET_ENABLED
        opened.add(path)
    # The API's format-suffix routes (".json") are the same views.
    assert {p for p in opened if not p.endswith(".json") and "\\." not in p} <= PUBLIC
    assert PUBLIC - {"/i18n/setlang/"} <= opened


def test_the_permissions_page_lists_each_public_page() -> None:
    section = PERMISSIONS.read_text().split("## Who can do what", 1)[1].split("\n## ", 1)[0]
    for path in PUBLIC - {"/accounts/login/"}:
        assert f"`{path}`" in section, path
    assert "login page" in section
