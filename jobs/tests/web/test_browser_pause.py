"""Pause all in a real browser: the switch on the Scheduler page, the banner on every
page, the resume from the banner (Chromium through Playwright, as test_browser.py)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from jobs.models import SchedulerEvent, SchedulerState
from jobs.tests.web.test_browser import (  # noqa: F401 - fixtures
    BROWSER_ZONE,
    Visit,
    browser,
    expect,
    fast_screens,
    user,
    visit,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_pause_all_shows_the_banner_everywhere_and_resumes_from_it(visit: Visit) -> None:  # noqa: F811
    page = visit.page
    visit.log_in()
    banner = page.locator("#scheduler-banner")
    expect(banner).to_have_count(0)

    page.get_by_role("link", name="Scheduler", exact=True).click()
    expect(page.locator("#scheduler-state")).to_be_visible()
    # A time already past is refused at its field, and nothing is paused.
    page.get_by_label("Until").fill("2021-01-01T09:00")
    page.get_by_role("button", name="Pause all").click()
    expect(
        page.locator("#id_until ~ .invalid-feedback, #id_until + .invalid-feedback")
    ).to_contain_text("Choose a time in the future")
    expect(banner).to_have_count(0)
    assert not SchedulerState.objects.exists()

    tomorrow = (datetime.now(ZoneInfo(BROWSER_ZONE)) + timedelta(days=1)).date()
    page.get_by_label("Until").fill(f"{tomorrow.isoformat()}T09:00")
    page.get_by_label("Note").fill("Upgrading the database")
    page.get_by_role("button", name="Pause all").click()
    expect(banner).to_contain_text("The scheduler is paused")
    expect(page.get_by_role("alert")).to_have_count(0)  # the banner alone says so
    expect(banner).to_contain_text("Paused by alice")
    expect(banner).to_contain_text(f"until {tomorrow.isoformat()} 09:00")  # the browser's zone
    expect(banner).to_contain_text("Upgrading the database")
    expect(page.locator("#scheduler-state")).to_have_attribute("data-state", "paused")
    switch = SchedulerState.objects.get()
    assert switch.paused_until.astimezone(ZoneInfo(BROWSER_ZONE)).hour == 9

    for link in ("Dashboard", "Jobs", "History"):
        page.get_by_role("link", name=link, exact=True).click()
        expect(banner).to_contain_text("Upgrading the database")
    page.goto("/jobs/new/")
    expect(banner).to_be_visible()

    # Resume from the banner: back on the same page, without the banner.
    page.goto("/history/")
    banner.get_by_role("button", name="Resume").click()
    expect(page).to_have_url(re.compile(r"/history/$"))
    expect(page.get_by_role("alert")).to_contain_text("The scheduler runs again")
    expect(banner).to_have_count(0)
    assert list(SchedulerEvent.objects.order_by("id").values_list("action", "username")) == [
        ("pause", "alice"),
        ("resume", "alice"),
    ]
