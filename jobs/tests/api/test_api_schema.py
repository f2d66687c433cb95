"""Property-based: schemathesis generates requests from /api/schema/ and sends them to
the WSGI app, for every operation of the API, as a user who may do everything. Every
answer passes schemathesis' default checks: no 500, and the status code, content type,
headers and body are what the schema says.

Bounded so that the suite stays quick; SCHEMATHESIS_MAX_EXAMPLES=200 (say) runs more."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta

import pytest
import schemathesis
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import positive_data_acceptance

from jobs.tests.api_helpers import finish_run, token_client
from jobs.tests.factories import make_job, make_user

pytestmark = pytest.mark.django_db

# Examples per operation and per strategy: ~17 operations x 2 strategies x this.
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "25"))


@pytest.fixture
def keep_the_test_transaction() -> Iterator[None]:
    """Calling the WSGI handler directly fires request_started/finished, whose
    close_old_connections() would close the connection holding the test's transaction
    (Django's test client disconnects it the same way)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


# Operations whose input the model judges by rules a JSON schema cannot state (the
# schedule fields one schedule type needs, a cron expression that parses, an address
# that is an e-mail address, no control characters in a name, a task's own arguments, a
# country the holidays library knows, a window with a cron expression or a start and an
# end, a backfill range in the past and under its limit):
# a schema-valid request may rightly get a 400 there, with messages per field. Every
# other check still runs on them, and this one on every other operation.
JUDGED_BY_THE_MODEL = {
    "POST /api/v1/jobs/",
    "PUT /api/v1/jobs/{id}/",
    "PATCH /api/v1/jobs/{id}/",
    "POST /api/v1/jobs/{id}/run/",
    "GET /api/v1/schedule-preview/",
    "POST /api/v1/scheduler/pause/",
    "POST /api/v1/jobs/{id}/backfill/",
    "POST /api/v1/calendars/",
    "PUT /api/v1/calendars/{id}/",
    "PATCH /api/v1/calendars/{id}/",
    "POST /api/v1/blackouts/",
    "PUT /api/v1/blackouts/{id}/",
    "PATCH /api/v1/blackouts/{id}/",
    "POST /api/v1/channels/",
    "PUT /api/v1/channels/{id}/",
    "PATCH /api/v1/channels/{id}/",
}


def excluded(operation: schemathesis.APIOperation) -> list:
    if f"{operation.method.upper()} {operation.path}" in JUDGED_BY_THE_MODEL:
        return [positive_data_acceptance]
    return []


@pytest.fixture
def no_throttles(settings) -> None:
    """Thousands of requests a minute: the throttles (their 429 is in the schema) would
    answer most of them."""
    settings.JOBS_API_THROTTLE_USER = None
    settings.JOBS_API_THROTTLE_ANON = None


def test_generated_requests_never_get_a_500_or_an_answer_outside_the_schema(
    keep_the_test_transaction, no_throttles
):
    user = make_user("fuzzer", superuser=True)
    auth = {"Authorization": token_client(user)._credentials["HTTP_AUTHORIZATION"]}
    job = make_job(
        name="target",
        notify_on_failure=True,
        webhook_url="http://127.0.0.1:9/never-called",
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(days=1),
        interval=None,
        interval_unit="",
    )
    run = finish_run(make_job(name="ran once"), succeeded=True)

    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", WSGIHandler())
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    # Deletions last, so the other operations still find the known objects.
    operations.sort(key=lambda op: op.method.upper() == "DELETE")
    known = {"id": str(job.pk), "job_pk": str(job.pk)}
    tried: list[str] = []

    for operation in operations:
        strategies = [operation.as_strategy()]
        names = {p.name for p in operation.iter_parameters() if p.location == "path"}
        if names:
            fixed = {
                name: str(run.pk) if operation.path.startswith("/api/v1/runs/") else known[name]
                for name in names
            }
            strategies.append(operation.as_strategy(path_parameters=fixed))
        for strategy in strategies:

            @settings(
                max_examples=MAX_EXAMPLES,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(case=strategy)
            def check(case: schemathesis.Case) -> None:
                response = case.call(headers=auth)
                case.validate_response(
                    response, headers=auth, excluded_checks=excluded(case.operation)
                )

            check()

        # Without credentials: a 401, as documented, whatever the input.
        @settings(max_examples=3, deadline=None, derandomize=True, database=None)
        @given(case=operation.as_strategy())
        def check_anonymous(case: schemathesis.Case) -> None:
            response = case.call()
            case.validate_response(response)
            assert response.status_code == 401

        check_anonymous()
        tried.append(f"{operation.method.upper()} {operation.path}")

    assert "GET /api/v1/" in tried
    assert "POST /api/v1/jobs/" in tried
    assert "GET /api/v1/runs/{id}/" in tried
