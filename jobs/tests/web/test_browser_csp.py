"""Every screen under the Content-Security-Policy in a real browser: nothing is refused
(no inline script or style, no eval), and the pages still work: htmx refreshes, forms.

    .venv/bin/python -m pytest -n 0 jobs/tests/web/test_browser_csp.py
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from jobs.models import RunStatus
from jobs.tests.factories import make_job, make_run
from jobs.tests.web.test_browser import (  # noqa: F401 - the fixtures, shared
    Visit,
    browser,
    expect,
    fast_screens,
    user,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Never in the policy, whatever the page: inline code and eval would undo it.
FORBIDDEN = ("'unsafe-inline'", "'unsafe-eval'")


class WatchedVisit(Visit):
    """A tab that records every CSP refusal: the securitypolicyviolation events of each
    page (reported through a binding that outlives navigations) and the console's
    "Refused to ..." messages."""

    def __init__(self, chromium, base_url: str) -> None:  # type: ignore[no-untyped-def]
        super().__init__(chromium, base_url)
        self.violations: list[str] = []
        self.context.expose_binding(
            "reportViolation", lambda source, text: self.violations.append(str(text))
        )
        self.context.add_init_script(
            "document.addEventListener('securitypolicyviolation', (event) => "
            "window.reportViolation(`${location.pathname}: ${event.violatedDirective} "
            "${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`));"
        )
        self.page.on("console", self._console)
        self.policies: list[str] = []
        self.page.on("response", self._response)

    def _console(self, message) -> None:  # type: ignore[no-untyped-def]
        text = message.text
        if "Refused to" in text or "Content Security Policy" in text:
            self.violations.append(f"console: {text}")

    def _response(self, response) -> None:  # type: ignore[no-untyped-def]
        if response.request.resource_type == "document":
            self.policies.append(response.headers.get("content-security-policy", ""))

    def see(self, path: str, heading: str | re.Pattern[str] | None = None) -> None:
        self.page.goto(path)
        if heading is not None:
            expect(self.page.get_by_role("heading", name=heading).first).to_be_visible()
        # Let deferred scripts run (and report) before the next page.
        self.page.wait_for_load_state("load")


@pytest.fixture
def watched(browser, live_server, user, fast_screens) -> Iterator[WatchedVisit]:  # type: ignore[no-untyped-def]  # noqa: F811
    tab = WatchedVisit(browser, live_server.url)
    yield tab
    tab.close()


def test_every_screen_loads_under_the_policy_without_a_refusal(watched: WatchedVisit) -> None:
    job = make_job(name="nightly report")
    run = make_run(job, status=RunStatus.SUCCESS)
    watched.log_in()
    page = watched.page
    for path, heading in [
        ("/", "Dashboard"),
        ("/jobs/", "Jobs"),
        ("/jobs/new/", "New job"),
        (f"/jobs/{job.pk}/", "nightly report"),
        (f"/jobs/{job.pk}/edit/", None),
        (f"/runs/{run.pk}/", None),
        ("/history/", None),
        ("/upcoming/", None),
        ("/calendars/", None),
        ("/blackouts/", None),
        ("/scheduler/", None),
        ("/api-token/", None),
        ("/admin/", None),
        ("/admin/jobs/job/", None),
        (f"/admin/jobs/job/{job.pk}/change/", None),
        ("/admin/jobs/jobhistory/", None),
        ("/admin/jobs/job/add/", None),
        ("/admin/jobs/calendar/", None),
        ("/admin/jobs/blackout/", None),
        ("/admin/jobs/jobchange/", None),
        ("/admin/jobs/schedulerstate/", None),
        ("/admin/jobs/schedulerevent/", None),
        ("/admin/authtoken/tokenproxy/", None),
        ("/admin/axes/accessattempt/", None),
        ("/api/v1/", None),
        ("/api/v1/jobs/", None),
        (f"/api/v1/jobs/{job.pk}/", None),
    ]:
        watched.see(path, heading)
    # Swagger UI draws the API from its schema (its start-up script a file of its own).
    watched.see("/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_be_visible()
    expect(page.locator(".opblock").first).to_be_visible()
    assert watched.violations == [], "\n".join(watched.violations)
    assert watched.policies and all(watched.policies), "a page without the header"
    for policy in watched.policies:
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert not any(word in policy for word in FORBIDDEN), policy


def test_the_live_parts_refresh_and_forms_work_under_the_policy(watched: WatchedVisit) -> None:
    watched.log_in()
    page = watched.page
    # The dashboard asks for its live part again (app.js's poll, no htmx eval)...
    with page.expect_request(
        lambda request: (
            request.headers.get("hx-request") == "true"
            and request.url.rstrip("/") == watched.base_url
        )
    ):
        pass
    # ...and a job is made through the form, its schedule previewed as one types.
    page.goto("/jobs/new/")
    page.get_by_label("Name").fill("made under the policy")
    page.get_by_label("Command").fill("report --send")
    page.get_by_label("Schedule").select_option("interval")
    with page.expect_response(lambda response: "schedule-preview" in response.url):
        page.get_by_label("Every").fill("2")
    page.get_by_label("Unit").select_option("hour")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="made under the policy")).to_be_visible()
    # The job list polls too, and not while a row is ticked.
    page.goto("/jobs/")
    with page.expect_request(lambda request: request.headers.get("hx-request") == "true"):
        pass
    # Logging out is a form too.
    page.get_by_role("button", name=re.compile("Log out")).click()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    assert watched.violations == [], "\n".join(watched.violations)
