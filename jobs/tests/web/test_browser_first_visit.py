"""A browser's first page, and a running run's log, in a real browser: the first page
of a new browser is drawn in its own zone (not the site's UTC until a refresh), the
admin's too; a run's page opened mid-run shows the log's newest line."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client

from jobs.models import RunStatus
from jobs.tests.factories import make_job, make_run
from jobs.tests.web import test_browser
from jobs.tests.web.test_browser import BROWSER_ZONE, Visit, expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The browser tests' fixtures: one Chromium for the module, the user who logs in.
browser = test_browser.browser
user = test_browser.user


def _signed_in_tab(browser, live_server, user) -> Visit:  # type: ignore[no-untyped-def]
    """A new browser already holding a session: no login page has run app.js yet."""
    client = Client()
    client.force_login(user)
    tab = Visit(browser, live_server.url)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    tab.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
    )
    return tab


@pytest.mark.parametrize("url", ["/jobs/", "/admin/jobs/job/"])
def test_a_new_browser_s_first_page_is_in_its_own_zone(browser, live_server, user, url) -> None:  # type: ignore[no-untyped-def]
    make_job(name="nightly")
    tab = _signed_in_tab(browser, live_server, user)
    try:
        assert not [c for c in tab.context.cookies() if c["name"] == "tz"]
        tab.page.goto(url)
        expect(tab.page.locator('meta[name="time-zone"]')).to_have_attribute(
            "content", BROWSER_ZONE
        )
        if url == "/jobs/":
            expect(tab.page.locator("#time-zone")).to_contain_text(BROWSER_ZONE)
        # Drawn again once, not over and over.
        tab.page.goto(url)
        loads = [u for u in tab.requested if u == f"{live_server.url}{url}"]
        assert len(loads) == 3, loads
    finally:
        tab.close()


def test_a_running_run_s_page_opens_at_the_log_s_newest_line(browser, live_server, user) -> None:  # type: ignore[no-untyped-def]
    job = make_job(name="chatty")
    log = "".join(f"line {number}\n" for number in range(1, 301))
    run = make_run(job, status=RunStatus.RUNNING, ago=timedelta(seconds=20), log=log)
    tab = Visit(browser, live_server.url)
    try:
        tab.log_in()
        tab.page.goto(f"/runs/{run.pk}/")
        box = tab.page.locator("#run-log")
        expect(box).to_contain_text("line 300")
        gap = box.evaluate("log => log.scrollHeight - log.clientHeight - log.scrollTop")
        assert gap < 4, f"the log is {gap} px above its end"
    finally:
        tab.close()
