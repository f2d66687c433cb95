"""No screen scrolls sideways: at 375 px (a phone) and 1280 px (a laptop), in English and
in Japanese, every page's document is exactly as wide as the window, the admin's pages
of the app's models included; and on the job page at 1280 px the runs table fits its
card, its status linking the run."""

from __future__ import annotations

from datetime import timedelta
from typing import NamedTuple

import pytest

from jobs.models import Blackout, Calendar, JobChange, RunStatus
from jobs.tests.factories import make_job, make_run
from jobs.tests.web import test_browser
from jobs.tests.web.test_browser import Visit, expect

# The browser tests' fixtures: one Chromium for the module, the user who logs in.
browser = test_browser.browser
user = test_browser.user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP_PX = 1280
# The boxes that scroll sideways: Bootstrap's .table-responsive, the admin's change list
# and inlines.
SCROLLING_BOXES = """[...document.querySelectorAll(
    '.table-responsive, #changelist .results, .inline-group, .tabular'
)].filter(box => box.scrollWidth > box.clientWidth + 1)
  .map(box => `${box.className || box.id}: ${box.scrollWidth} > ${box.clientWidth}`)"""
# A worker as a real one names itself: host, process, thread.
LONG_WORKER = "scheduler-1.eu-west-1.compute.internal:48213:ThreadPoolExecutor-0_3"
LONG_NAME = "nightly-backup-of-the-reports-database and a rather long description of it"


class Pages(NamedTuple):
    urls: list[str]
    job: str  # the job page of the runs below
    newest_run: str  # its newest run's page (pending)


@pytest.fixture
def pages(user):  # type: ignore[no-untyped-def]
    """Every kind of page, with the rows that make tables widest: a long name, runs in
    each state (a pending one can be cancelled, a running one has a start), changes."""
    job = make_job(name=LONG_NAME, arguments={})
    finished = make_run(job, ago=timedelta(minutes=3), log="line\n" * 20, worker=LONG_WORKER)
    make_run(job, status=RunStatus.FAILED, ago=timedelta(minutes=2))
    running = make_run(
        job,
        status=RunStatus.RUNNING,
        ago=timedelta(seconds=30),
        trigger="manual",
        worker=LONG_WORKER,
    )
    pending = make_run(job, status=RunStatus.PENDING, ago=timedelta(seconds=5), trigger="manual")
    job.name = LONG_NAME + " renamed"
    job.interval = 45
    job.save()
    assert JobChange.objects.filter(job_id=job.pk).count() >= 2
    shell = make_job(
        name="tick",
        executor="shell",
        command="""sh -c 'for i in $(seq 1 120); do echo "tick $i for $WHO"; sleep 1; done'""",
        arguments={"env": {"WHO": "the form"}},
        timeout_seconds=300,
    )
    make_run(shell, worker=LONG_WORKER, log="tick 1 for the form\n" * 50)
    calendar = Calendar.objects.create(name=LONG_NAME, country="JP")
    cron = make_job(name="hourly on a calendar", schedule_type="cron", cron_expression="0 * * * *")
    cron.calendar = calendar
    cron.save()
    window = Blackout.objects.create(
        name=LONG_NAME, cron_expression="0 22 * * 5", duration_minutes=120
    )
    urls = [
        "/",
        "/jobs/",
        "/jobs/new/",
        f"/jobs/{job.pk}/",
        f"/jobs/{job.pk}/edit/",
        f"/jobs/{job.pk}/delete/",
        "/upcoming/",
        "/history/",
        "/scheduler/",
        "/api-token/",
        "/calendars/",
        "/calendars/new/",
        f"/calendars/{calendar.pk}/",
        f"/calendars/{calendar.pk}/delete/",
        "/blackouts/",
        "/blackouts/new/",
        f"/blackouts/{window.pk}/",
        f"/blackouts/{window.pk}/delete/",
        f"/jobs/{cron.pk}/backfill/",
        f"/runs/{finished.pk}/",
        f"/runs/{running.pk}/",
        "/admin/",
        "/admin/jobs/job/",
        f"/admin/jobs/job/{job.pk}/change/",
        f"/admin/jobs/job/{shell.pk}/change/",
        f"/jobs/{shell.pk}/",
        "/admin/jobs/jobhistory/",
        f"/admin/jobs/jobhistory/{finished.pk}/change/",
    ]
    return Pages(urls, f"/jobs/{job.pk}/", f"/runs/{pending.pk}/")


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("width", [375, 1280])
def test_no_page_scrolls_sideways(browser, live_server, pages, width, language) -> None:  # type: ignore[no-untyped-def]
    tab = Visit(browser, live_server.url)
    try:
        tab.page.set_viewport_size({"width": width, "height": 900})
        tab.log_in()
        if language != "en":
            tab.context.add_cookies(
                [{"name": "django_language", "value": language, "url": live_server.url}]
            )
        wide = {}
        for url in pages.urls:
            response = tab.page.goto(url)
            assert response is not None and response.status == 200, url
            assert tab.page.locator("html").get_attribute("lang") == language, url
            scrolled = tab.page.evaluate("document.documentElement.scrollWidth")
            if scrolled != width:
                wide[url] = scrolled
            elif width >= LAPTOP_PX:
                # On a laptop no table hides a column behind a sideways scroll of its own.
                boxes = tab.page.evaluate(SCROLLING_BOXES)
                if boxes:
                    wide[url] = boxes
        assert wide == {}, f"wider than {width} px"
    finally:
        tab.close()


def test_the_job_page_s_runs_table_fits_its_card_at_1280_and_links_each_run(  # type: ignore[no-untyped-def]
    browser,
    live_server,
    pages,
) -> None:
    tab = Visit(browser, live_server.url)
    try:
        tab.log_in()
        page = tab.page
        page.goto(pages.job)
        table = page.locator("#runs")
        expect(table.locator("tbody tr")).to_have_count(4)
        assert table.evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
        for cell in table.locator("tbody tr td:last-child").all():
            box = cell.bounding_box()
            assert box is not None and box["x"] + box["width"] <= 1280, box
        first = table.locator("tbody tr").first
        first.locator("a.run-link").click()
        expect(page).to_have_url(f"{live_server.url}{pages.newest_run}")
    finally:
        tab.close()


def test_the_job_page_s_changes_read_on_a_phone(browser, live_server, pages) -> None:  # type: ignore[no-untyped-def]
    tab = Visit(browser, live_server.url)
    try:
        tab.page.set_viewport_size({"width": 375, "height": 900})
        tab.log_in()
        tab.page.goto(pages.job)
        rows = tab.page.locator("#change-list tbody tr")
        expect(rows).to_have_count(2)
        for row in rows.all():
            for cell in row.locator("td").all():
                box = cell.bounding_box()
                assert box is not None and box["x"] + box["width"] <= 375, box
            # The user's name on one line: not "admi / n" in a squeezed column.
            who = row.locator("[data-who]")
            line = who.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)")
            box = who.bounding_box()
            assert box is not None and box["height"] <= 1.5 * line, box
            fields = row.locator('[data-cell="fields"]').bounding_box()
            assert fields is not None and fields["width"] >= 300, fields
    finally:
        tab.close()
