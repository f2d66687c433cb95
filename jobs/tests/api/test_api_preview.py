"""GET /api/v1/schedule-preview/: the job form's preview, for scripts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from jobs.tests import factories
from jobs.tests.api_helpers import make_user, token_client
from jobs.tests.factories import NOW

pytestmark = pytest.mark.django_db

URL = "/api/v1/schedule-preview/"


@pytest.fixture
def viewer() -> APIClient:
    return token_client(make_user("viewer"))


def test_a_cron_schedule_in_berlin_across_the_spring_change(viewer: APIClient) -> None:
    response = viewer.get(
        URL,
        {
            "schedule_type": "cron",
            "cron_expression": "30 2 * * *",
            "timezone": "Europe/Berlin",
            "start": "2026-03-28T12:00:00Z",
            "count": 2,
        },
    )
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "timezone": "Europe/Berlin",
        "occurrences": [
            {
                "at": "2026-03-29T01:00:00Z",
                "local": "2026-03-29T03:00:00+02:00",
                "note": "02:30 does not exist on 29 March 2026: runs at 03:00 CEST",
            },
            {"at": "2026-03-30T00:30:00Z", "local": "2026-03-30T02:30:00+02:00", "note": None},
        ],
    }


def test_ten_occurrences_by_default_an_interval_from_now(viewer: APIClient, clock) -> None:  # type: ignore[no-untyped-def]
    response = viewer.get(
        URL, {"schedule_type": "interval", "interval": "15", "interval_unit": "minute"}
    )
    occurrences = response.json()["occurrences"]
    assert len(occurrences) == 10
    assert occurrences[0]["at"] == (NOW + timedelta(minutes=15)).isoformat().replace("+00:00", "Z")
    # The site's zone (UTC here) for an interval job: DRF writes UTC as "Z".
    assert occurrences[-1]["local"] == "2026-03-01T14:30:00Z"


def test_a_once_schedule_has_one_occurrence(viewer: APIClient, clock) -> None:  # type: ignore[no-untyped-def]
    response = viewer.get(
        URL, {"schedule_type": "once", "scheduled_at": "2026-03-02T09:00:00Z", "count": 100}
    )
    assert response.json()["occurrences"] == [
        {"at": "2026-03-02T09:00:00Z", "local": "2026-03-02T09:00:00Z", "note": None}
    ]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, {"schedule_type": ["This field is required."]}),
        (
            {"schedule_type": "cron", "cron_expression": "61 * * * *"},
            {"cron_expression": ["The minute field “61” is not valid."]},
        ),
        (
            {"schedule_type": "cron", "cron_expression": ""},
            {
                "cron_expression": [
                    "Enter a cron expression, for example “30 2 * * *” for 02:30 every day."
                ]
            },
        ),
        (
            {"schedule_type": "cron", "cron_expression": "0 9 * * *", "timezone": "Nowhere/Land"},
            {
                "timezone": [
                    "Unknown time zone “Nowhere/Land”. Use an IANA name such as Europe/Berlin."
                ]
            },
        ),
        (
            {"schedule_type": "interval", "interval": "0", "interval_unit": "minute"},
            {"interval": ["The interval must be at least 1."]},
        ),
        (
            {"schedule_type": "interval", "interval": "5"},
            {"interval_unit": ["Choose seconds, minutes, hours or days."]},
        ),
        (
            {"schedule_type": "interval", "interval": "often"},
            {"interval": ["A valid integer is required."]},
        ),
        (
            {"schedule_type": "once"},
            {"scheduled_at": ["A one-off job needs a date and time to run at."]},
        ),
        (
            {"schedule_type": "once", "scheduled_at": "2021-01-01T09:00:00Z"},
            {
                "scheduled_at": [
                    "This time has already passed. Choose a time in the future, or use Run now."
                ]
            },
        ),
        (
            {"schedule_type": "once", "scheduled_at": "9500-01-01T09:00:00Z"},
            {"scheduled_at": ["Choose a time between the years 2000 and 9000."]},
        ),
        (
            {"schedule_type": "interval", "interval": "1", "interval_unit": "day", "count": "101"},
            {"count": ["Ensure this value is less than or equal to 100."]},
        ),
        (
            {"schedule_type": "interval", "interval": "1", "interval_unit": "day", "count": "0"},
            {"count": ["Ensure this value is greater than or equal to 1."]},
        ),
        (
            {
                "schedule_type": "interval",
                "interval": "1",
                "interval_unit": "day",
                "start": "1999-12-31T00:00:00Z",
            },
            {"start": ["Choose a time between the years 2000 and 9000."]},
        ),
    ],
)
def test_a_bad_schedule_is_a_400_with_messages_at_its_fields(
    viewer: APIClient, params: dict[str, Any], expected: dict[str, list[str]]
) -> None:
    response = viewer.get(URL, params)
    assert response.status_code == 400
    assert response.json() == expected


def test_the_preview_needs_view_job() -> None:
    anonymous = APIClient().get(URL, {"schedule_type": "interval"})
    assert anonymous.status_code == 401
    nobody = token_client(factories.make_user("nobody"))
    refused = nobody.get(URL, {"schedule_type": "cron", "cron_expression": "0 9 * * *"})
    assert refused.status_code == 403
    assert "jobs.view_job" in refused.json()["detail"]


def test_the_endpoint_is_in_the_schema_with_its_parameters_and_answers(viewer: APIClient) -> None:
    schema = viewer.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/schedule-preview/"]["get"]
    names = {parameter["name"] for parameter in operation["parameters"]}
    assert names == {
        "schedule_type",
        "scheduled_at",
        "interval",
        "interval_unit",
        "cron_expression",
        "timezone",
        "start",
        "count",
    }
    assert {"200", "400", "401", "403"} <= set(operation["responses"])
    answer = schema["components"]["schemas"]["SchedulePreview"]
    assert set(answer["properties"]) == {"timezone", "occurrences"}
    occurrence = schema["components"]["schemas"]["Occurrence"]
    assert set(occurrence["properties"]) == {"at", "local", "note"}
    assert occurrence["properties"]["at"]["format"] == "date-time"
