"""Calendars in a real browser (Chromium through Playwright, as test_browser.py): a user
makes a business calendar from the menu, puts a job on it with the job form, and runs the
job for a past range: the occurrences listed first are the runs created, on business days
only. The confirmation page fits a phone."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from jobs.models import Calendar, Job, JobHistory, Trigger
from jobs.tests.factories import make_job
from jobs.tests.web.test_browser import (  # noqa: F401 - fixtures
    BROWSER_ZONE,
    Visit,
    browser,
    expect,
    user,
    visit,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BERLIN = ZoneInfo("Europe/Berlin")
PHONE_PX = 375


def test_a_user_makes_a_calendar_puts_a_job_on_it_and_backfills_a_range(visit: Visit) -> None:  # noqa: F811
    job = make_job(
        name="payroll", schedule_type="cron", cron_expression="0 9 * * *", timezone="Europe/Berlin"
    )
    page = visit.page
    visit.log_in()

    page.get_by_role("link", name="Calendars", exact=True).click()
    page.get_by_role("link", name="New calendar").click()
    page.get_by_label("Name").fill("Berlin office")
    page.get_by_label("Country").fill("XX")
    page.get_by_role("button", name="Save").click()
    # The model's message at its field; nothing saved.
    expect(
        page.locator("#id_country ~ .invalid-feedback, #id_country + .invalid-feedback")
    ).to_contain_text("knows no country")
    assert not Calendar.objects.exists()
    page.get_by_label("Country").fill("de")
    page.get_by_label("Subdivision").fill("BE")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#calendars")).to_contain_text("Berlin office")
    calendar = Calendar.objects.get()
    assert (calendar.country, calendar.subdivision, calendar.weekdays) == (
        "DE",
        "BE",
        [0, 1, 2, 3, 4],
    )
    page.get_by_role("link", name="Berlin office").click()
    expect(page.locator("#days-off li")).to_have_count(10)

    # The job form's calendar field links the calendars; the job goes on this one.
    page.goto(f"/jobs/{job.pk}/edit/")
    expect(page.locator("#calendars-link")).to_be_visible()
    page.get_by_label("Calendar", exact=True).select_option(label="Berlin office")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#job-name")).to_have_text("payroll")
    assert Job.objects.get(pk=job.pk).calendar_id == calendar.pk

    today = datetime.now(ZoneInfo(BROWSER_ZONE)).date()
    page.get_by_role("link", name="Run for a past range").click()
    page.get_by_label("From").fill(f"{(today - timedelta(days=14)).isoformat()}T00:00")
    page.get_by_label("Until").fill(f"{(today + timedelta(days=3)).isoformat()}T00:00")
    page.get_by_role("button", name="Show the occurrences").click()
    expect(
        page.locator("#id_end ~ .invalid-feedback, #id_end + .invalid-feedback")
    ).to_contain_text("the end is in the future")
    page.get_by_label("Until").fill(f"{(today - timedelta(days=1)).isoformat()}T00:00")
    page.get_by_role("button", name="Show the occurrences").click()
    listed = page.locator("#backfill-occurrences li")
    expect(listed.first).to_be_visible()
    count = listed.count()
    assert 6 <= count <= 10  # two weeks' business days, less Berlin's holidays
    assert not JobHistory.objects.exists()

    page.set_viewport_size({"width": PHONE_PX, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth") == PHONE_PX
    page.set_viewport_size({"width": 1280, "height": 900})

    page.get_by_role("button", name="Create the runs").click()
    expect(page).to_have_url(re.compile(rf"/jobs/{job.pk}/$"))
    expect(page.get_by_role("alert")).to_contain_text(f"{count} runs created")
    runs = JobHistory.objects.filter(job_id=job.pk, trigger=Trigger.BACKFILL)
    assert runs.count() == count
    for run in runs:
        local = run.scheduled_for.astimezone(BERLIN)
        assert (local.hour, local.minute) == (9, 0) and local.weekday() < 5, local
