"""The API's schema states the limits the server holds values to, and says what the API
page's table of endpoints (docs/api.md) says: every URL of jobs/api, and nothing the docs
page would swallow."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.urls import URLPattern, URLResolver

from jobs.api import urls as api_urls
from jobs.models import (
    MAX_ALERT_AFTER_FAILURES,
    MAX_PRIORITY,
    MAX_TIMEOUT_SECONDS,
    MIN_PRIORITY,
    NOTIFY_EMAILS_MAX_LENGTH,
    PAUSE_NOTE_MAX_LENGTH,
)
from jobs.schedules import arithmetic as schedules
from jobs.tests.api_helpers import make_user, token_client

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs/"
# Page numbers have no upper bound (past the last page is a 404, however many jobs).
NO_MAXIMUM = {"page"}


@pytest.fixture
def schema(client) -> dict[str, Any]:
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def numbers(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, schema) of every integer or number in the schema, properties and
    parameters alike."""
    if isinstance(node, dict):
        if node.get("type") in ("integer", "number"):
            yield where, node
        for key, value in node.items():
            yield from numbers(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            name = value.get("name", index) if isinstance(value, dict) else index
            yield from numbers(value, f"{where}[{name}]")


def sent_by_clients(where: str) -> bool:
    """Request bodies (the *Request components) and query parameters."""
    return "Request/" in where or "/parameters[" in where


def test_every_number_in_the_schema_states_its_limits(schema) -> None:
    found = list(numbers(schema))
    assert len(found) > 30
    unbounded = [where for where, node in found if "minimum" not in node and "maximum" not in node]
    assert not unbounded, f"no minimum nor maximum: {unbounded}"
    half = [
        where
        for where, node in found
        if sent_by_clients(where)
        and not ("minimum" in node and "maximum" in node)
        and not any(where.endswith(f"[{name}]/schema") for name in NO_MAXIMUM)
    ]
    assert not half, f"sent by clients without both bounds: {half}"
    # Nothing keeps the database's int64 range ("example": 9223372036854776000).
    assert not [where for where, node in found if abs(node.get("maximum", 0)) > 2**53]


def test_the_job_s_numbers_have_the_model_s_limits(schema) -> None:
    expected = {
        "interval": (1, int(schedules.MAX_INTERVAL.total_seconds())),
        "timeout_seconds": (1, MAX_TIMEOUT_SECONDS),
        "priority": (MIN_PRIORITY, MAX_PRIORITY),
        "alert_after_failures": (1, MAX_ALERT_AFTER_FAILURES),
        "expected_seconds": (1, MAX_TIMEOUT_SECONDS),
        "max_retries": (0, 10),
        "retry_backoff_seconds": (0, 86400),
        "sim_failure_rate": (0, 1),
        "sim_min_seconds": (0, 3600),
        "sim_max_seconds": (0, 3600),
    }
    for component in ("Job", "JobRequest", "PatchedJobRequest"):
        fields = schema["components"]["schemas"][component]["properties"]
        for name, (lowest, highest) in expected.items():
            assert (fields[name]["minimum"], fields[name]["maximum"]) == (lowest, highest), (
                component,
                name,
            )
    request = schema["components"]["schemas"]["JobRequest"]["properties"]
    assert request["queue"]["pattern"] == "^[A-Za-z0-9_-]+$"
    assert request["notify_emails"]["maxLength"] == NOTIFY_EMAILS_MAX_LENGTH
    pause = schema["components"]["schemas"]["PauseRequest"]["properties"]
    assert pause["note"]["maxLength"] == PAUSE_NOTE_MAX_LENGTH
    assert schema["components"]["schemas"]["Run"]["properties"]["priority"]["minimum"] == -100


def test_the_model_still_judges_with_its_own_words() -> None:
    """The limits are stated, not checked twice: the answer is Job.clean()'s message."""
    staff = token_client(make_user("ops", staff=True))
    job = {"name": "n", "command": "c", "schedule_type": "interval", "interval_unit": "minute"}
    answers = {
        "interval": (0, "The interval must be at least 1."),
        "priority": (500, "The priority must be a whole number from -100 to 100."),
        "timeout_seconds": (0, "The timeout must be at least 1 second"),
        "queue": ("no spaces", "A queue name is letters, digits"),
    }
    for name, (value, message) in answers.items():
        response = staff.post(JOBS, {"interval": 5, **job, name: value}, format="json")
        assert response.status_code == 400, name
        assert response.json()[name][0].startswith(message), response.json()


def test_alert_addresses_longer_than_the_form_takes_are_refused() -> None:
    staff = token_client(make_user("ops", staff=True))
    too_long = ",".join(["a" * 120 + "@example.com"] * 17)  # 17 addresses, over 2,000 chars
    assert len(too_long) > NOTIFY_EMAILS_MAX_LENGTH
    job = {"name": "n", "command": "c", "interval": 5, "interval_unit": "minute"}
    response = staff.post(JOBS, {**job, "notify_emails": too_long}, format="json")
    assert response.status_code == 400
    assert "notify_emails" in response.json()


def test_no_description_holds_an_angle_bracket_outside_code(schema) -> None:
    """Swagger UI reads descriptions as Markdown: a bare <username> is an HTML tag, and
    "python manage.py apitoken <username>" showed as "python manage.py apitoken"."""
    assert "`python manage.py apitoken <username>`" in schema["info"]["description"]

    def descriptions(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "description" and isinstance(value, str):
                    yield value
                else:
                    yield from descriptions(value)
        elif isinstance(node, list):
            for value in node:
                yield from descriptions(value)

    for text in descriptions(schema):
        outside_code = re.sub(r"`[^`]*`", "", text)
        assert not re.search(r"<[A-Za-z/!]", outside_code), text


# --- the API page's table of endpoints (docs/api.md) -----------------------------------


def api_routes(patterns: list, prefix: str = "/api/") -> Iterator[str]:
    """Every URL of jobs/api as docs/api.md writes it: /api/v1/jobs/<id>/run/."""
    for pattern in patterns:
        route = str(pattern.pattern)
        if "format>" in route:  # DRF's .json suffixes of the router's URLs
            continue
        route = re.sub(r"\(\?P<\w+>[^)]*\)", "<id>", route)  # the router's groups
        route = re.sub(r"<(?:\w+:)?\w+>", "<id>", route)  # path converters
        route = prefix + route.removeprefix("^").removesuffix("$")
        if isinstance(pattern, URLResolver):
            yield from api_routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            yield route


def documented_endpoints() -> set[str]:
    section = (Path(settings.BASE_DIR) / "docs" / "api.md").read_text().split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `/api/")]
    return {path for row in rows for path in re.findall(r"`(/api/[^`]*)`", row.split("|")[1])}


def test_the_api_page_s_table_lists_every_url_of_the_api() -> None:
    routes = set(api_routes(api_urls.urlpatterns))
    assert "/api/v1/runs/<id>/cancel/" in routes
    table = documented_endpoints()
    assert routes - table == set(), "in jobs/api, not in docs/api.md's table"
    assert table - routes == set(), "in docs/api.md's table, not in jobs/api"
