"""The screens in a real browser: Debian's Chromium driven by Playwright, against Django's
live server, with a real scheduler executing runs in a background thread.

    .venv/bin/python -m pytest jobs/tests/web/test_browser.py  # the scenarios
    UPDATE_SCREENSHOTS=1 .venv/bin/python -m pytest jobs/tests/web/test_browser.py -k screenshots

Nothing here sleeps and hopes: every wait is an expect(...) with a timeout.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from jobs.access.permissions import JOB_ADMINS
from jobs.models import Job, JobHistory, RunStatus
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import make_job, make_run, make_user
from jobs.tests.ui_support import PASSWORD

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# here between browser steps are ordinary blocking calls and safe.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

playwright_sync = pytest.importorskip("playwright.sync_api")
expect = playwright_sync.expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]
BROWSER_ZONE = "Asia/Tokyo"
# Long enough for a run to be seen running between two polls, short enough for a test.
POLL_SECONDS = 0.5
RUN_SECONDS = (2.0, 3.0)
WAIT_MS = 15_000
DOCS = Path(django_settings.BASE_DIR) / "docs"


@pytest.fixture(scope="module")
def browser() -> Iterator:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (scripts/test does it)")
    with playwright_sync.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def fast_screens(settings) -> None:  # type: ignore[no-untyped-def]
    settings.JOBS_UI_POLL_SECONDS = POLL_SECONDS
    settings.JOBS_DASHBOARD_CACHE_SECONDS = 0
    settings.JOBS_SIM_MIN_SECONDS, settings.JOBS_SIM_MAX_SECONDS = RUN_SECONDS
    settings.JOBS_SIM_FAILURE_RATE = 0.5
    settings.JOBS_SHUTDOWN_GRACE_SECONDS = 5


@pytest.fixture
def scheduler(live_server, fast_screens) -> Iterator[Scheduler]:  # type: ignore[no-untyped-def]
    """The real scheduler, serving in a thread with its own database connection."""
    running = Scheduler(workers=2, tick=0.2)

    def serve() -> None:
        try:
            running.serve()
        finally:
            connection.close()

    thread = threading.Thread(target=serve, name="test-scheduler", daemon=True)
    thread.start()
    yield running
    running.request_stop()
    thread.join(timeout=30)
    assert not thread.is_alive(), "the scheduler did not stop"


@pytest.fixture
def user(transactional_db):  # type: ignore[no-untyped-def]
    return make_user("alice", JOB_ADMINS, password=PASSWORD, staff=True)


class Visit:
    """A browser tab on the live server that records every URL it requests."""

    def __init__(self, browser, base_url: str, **context_options: object) -> None:  # type: ignore[no-untyped-def]
        self.base_url = base_url
        self.context = browser.new_context(
            base_url=base_url,
            locale="en-GB",
            timezone_id=BROWSER_ZONE,
            viewport={"width": 1280, "height": 900},
            **context_options,
        )
        self.context.set_default_timeout(WAIT_MS)
        self.page = self.context.new_page()
        self.requested: list[str] = []
        self.page.on("request", lambda request: self.requested.append(request.url))

    def log_in(self, username: str = "alice") -> None:
        page = self.page
        page.goto("/")
        expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()

    def foreign_requests(self) -> list[str]:
        return [
            url
            for url in self.requested
            if not url.startswith(self.base_url + "/") and not url.startswith("data:")
        ]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(browser, live_server, user) -> Iterator[Visit]:  # type: ignore[no-untyped-def]
    tab = Visit(browser, live_server.url)
    yield tab
    foreign = tab.foreign_requests()
    tab.close()
    assert tab.requested, "the browser requested nothing at all"
    assert not foreign, f"requests to other hosts: {foreign}"


def _row(page, job: Job):  # type: ignore[no-untyped-def]
    return page.locator(f"#job-{job.pk}")


def test_a_user_creates_runs_edits_disables_and_deletes_jobs(visit: Visit, scheduler) -> None:  # type: ignore[no-untyped-def]
    page = visit.page
    visit.log_in()
    # The browser told the server its zone on the first page; times are shown in it.
    expect(page.locator("#time-zone")).to_contain_text(BROWSER_ZONE)

    # A first visit, without the zone cookie: the page comes in the site's zone, and is
    # drawn again at once in the browser's (jobs/tests/web/test_browser_first_visit.py).
    visit.context.clear_cookies(name="tz")
    page.goto("/")
    expect(page.locator("#time-zone")).to_have_text(f"Time zone: {BROWSER_ZONE} (JST)")

    # An interval job through the form.
    page.get_by_role("link", name="Jobs", exact=True).click()
    page.get_by_role("link", name="New job").click()
    page.get_by_label("Name").fill("Nightly backup")
    page.get_by_label("Command").fill("backup --all")
    page.get_by_label("Schedule").select_option("interval")
    expect(page.get_by_label("Every")).to_be_visible()
    page.get_by_label("Every").fill("1")
    page.get_by_label("Unit").select_option("hour")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#job-name")).to_have_text("Nightly backup")
    interval_job = Job.objects.get(name="Nightly backup")
    assert interval_job.schedule_text == "every hour"

    # A one-off job: only its date-time field shows, read in the browser's zone.
    tomorrow = (datetime.now(ZoneInfo(BROWSER_ZONE)) + timedelta(days=1)).date()
    page.goto("/jobs/new/")
    page.get_by_label("Schedule").select_option("once")
    expect(page.get_by_label("Every")).to_be_hidden()
    expect(page.get_by_label("Unit")).to_be_hidden()
    # Neither policy means anything for one run: hidden too, and the defaults stored.
    expect(page.locator("#id_misfire_policy")).to_be_hidden()
    expect(page.locator("#id_overlap_policy")).to_be_hidden()
    page.get_by_label("Name").fill("Send the report")
    page.get_by_label("Command").fill("report --send")
    page.get_by_label("Run at").fill(f"{tomorrow.isoformat()}T09:00")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#job-name")).to_have_text("Send the report")
    once_job = Job.objects.get(name="Send the report")
    assert timezone.localtime(once_job.scheduled_at, ZoneInfo(BROWSER_ZONE)).hour == 9
    assert (once_job.misfire_policy, once_job.overlap_policy) == ("coalesce", "allow")

    # Both are listed, with their schedules in words.
    page.get_by_role("link", name="Jobs", exact=True).click()
    expect(_row(page, interval_job)).to_contain_text("every hour")
    expect(_row(page, once_job)).to_contain_text(f"once at {tomorrow.isoformat()} 09:00:00")
    expect(_row(page, once_job)).to_contain_text("09:00")
    state = _row(page, interval_job).locator("[data-state]")
    expect(state).to_have_text("Waiting")

    # Run now: the badge turns running, then succeeded or failed, by polling alone.
    _row(page, interval_job).get_by_role("button", name="Run now").click()
    expect(page.get_by_role("alert")).to_contain_text("“Nightly backup” will run in a moment.")
    page.evaluate("window.stillTheSamePage = true")
    expect(state).to_have_text("Running", timeout=WAIT_MS)
    expect(state).to_have_text(re.compile(r"^(Succeeded|Failed)$"), timeout=WAIT_MS)
    assert page.evaluate("window.stillTheSamePage") is True, "the page was reloaded"
    run = JobHistory.objects.get(job=interval_job)
    assert run.status in (RunStatus.SUCCESS, RunStatus.FAILED)

    # Edit.
    _row(page, interval_job).get_by_role("link", name="Edit").click()
    page.get_by_label("Name").fill("Nightly backup (all disks)")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#job-name")).to_have_text("Nightly backup (all disks)")
    expect(page.get_by_role("alert")).to_contain_text("saved")

    # Disable with the switch in the list.
    page.get_by_role("link", name="Jobs", exact=True).click()
    switch = _row(page, interval_job).get_by_role("switch")
    expect(switch).to_be_checked()
    switch.click()
    expect(page.get_by_role("alert")).to_contain_text("disabled")
    expect(_row(page, interval_job).get_by_role("switch")).not_to_be_checked()
    expect(_row(page, interval_job)).to_contain_text("disabled")
    interval_job.refresh_from_db()
    assert not interval_job.is_active

    # Delete, after a confirmation page.
    _row(page, once_job).get_by_role("link", name="Send the report").click()
    page.get_by_role("link", name="Delete").click()
    expect(page.get_by_role("heading")).to_have_text("Delete “Send the report”?")
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("alert")).to_contain_text("deleted")
    expect(page.locator(f"#job-{once_job.pk}")).to_have_count(0)
    assert not Job.objects.filter(pk=once_job.pk).exists()


def test_a_user_makes_a_cron_job_and_cancels_its_run_while_it_goes(  # type: ignore[no-untyped-def]
    visit: Visit, scheduler
) -> None:
    page = visit.page
    visit.log_in()
    page.goto("/jobs/new/")
    # Only the cron fields show for a cron schedule.
    page.get_by_label("Schedule").select_option("cron")
    expect(page.get_by_label("Cron expression")).to_be_visible()
    expect(page.get_by_label("Every")).to_be_hidden()
    expect(page.get_by_label("Run at")).to_be_hidden()
    page.get_by_label("Name").fill("Long report")
    page.get_by_label("Command").fill("report --long")
    page.get_by_label("Cron expression").fill("30 2 * * *")
    # Typing narrows the 600 zones to those holding the words; the select is posted.
    page.get_by_label("Filter the time zones").fill("berl")
    expect(page.locator("#id_timezone option:not([hidden])")).to_have_text(
        [re.compile("^Site time zone"), "Europe/Berlin"]
    )
    page.get_by_label("Time zone", exact=True).select_option("Europe/Berlin")
    # Its runs take a minute: long enough to cancel one while it goes.
    page.get_by_label("Shortest simulated run (seconds)").fill("60")
    page.get_by_label("Longest simulated run (seconds)").fill("60")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#job-name")).to_have_text("Long report")
    expect(page.get_by_text("At 02:30 every day, Europe/Berlin")).to_be_visible()
    job = Job.objects.get(name="Long report")

    page.get_by_role("button", name="Run now").click()
    row = page.locator("#runs tbody tr").first
    expect(row.locator("[data-status]")).to_have_text("Running", timeout=WAIT_MS)
    row.get_by_role("button", name="Cancel").click()
    # Asked first, by a page of its own (no JavaScript needed), which goes back after.
    expect(page.locator("#cancel-question")).to_contain_text("It is running")
    assert JobHistory.objects.get(job=job).status == RunStatus.RUNNING
    page.get_by_role("button", name="Yes, cancel the run").click()
    expect(page.get_by_role("alert")).to_contain_text("is cancelled")
    expect(page.locator("#job-name")).to_have_text("Long report")
    expect(page.locator("#runs tbody tr").first.locator("[data-status]")).to_have_text("Cancelled")
    run = JobHistory.objects.get(job=job)
    assert run.status == RunStatus.CANCELLED and run.cancelled_by == "alice"
    # The worker stopped it: the pool is idle again long before the minute is over.
    assert scheduler.wait_idle(timeout=10)


def test_the_admin_form_shows_the_fields_of_the_chosen_schedule(  # type: ignore[no-untyped-def]
    browser, live_server
) -> None:
    get_user_model().objects.create_superuser("root", password=PASSWORD)
    tab = Visit(browser, live_server.url)
    try:
        page = tab.page
        page.goto("/admin/jobs/job/add/")
        page.get_by_label("Username").fill("root")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        schedule = page.locator("#id_schedule_type")
        schedule.select_option("once")
        expect(page.locator("#id_misfire_policy")).to_be_hidden()
        expect(page.locator("#id_overlap_policy")).to_be_hidden()
        schedule.select_option("interval")
        expect(page.locator("#id_interval")).to_be_visible()
        expect(page.locator("#id_misfire_policy")).to_be_visible()
        expect(page.locator("#id_overlap_policy")).to_be_visible()
        expect(page.locator("#id_cron_expression")).to_be_hidden()
        schedule.select_option("cron")
        expect(page.locator("#id_cron_expression")).to_be_visible()
        expect(page.locator("#id_timezone")).to_be_visible()
        expect(page.locator("#id_interval")).to_be_hidden()
        expect(page.locator(".form-row.field-interval")).to_be_hidden()
        page.locator("#id_name").fill("From the admin")
        page.locator("#id_command").fill("true")
        page.locator("#id_cron_expression").fill("*/15 * * * *")
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.locator(".messagelist")).to_contain_text("was added successfully")
        job = Job.objects.get(name="From the admin")
        assert (job.schedule_type, job.interval) == ("cron", None)
        # The run list fits 1280 px beside both sidebars: every column within the
        # list's box, each time on one line, a long worker name cut.
        Job.objects.filter(pk=job.pk).update(name="Refresh the customer search index nightly")
        for minutes in range(3):
            make_run(
                job,
                ago=timedelta(minutes=minutes),
                worker="scheduler-prod-01.example.internal:123456",
            )
        page.goto("/admin/jobs/jobhistory/")
        expect(page.locator("#result_list tbody tr")).to_have_count(3)
        fit = page.evaluate(
            """() => {
                const box = document.querySelector("#changelist .results");
                const worker = document.querySelector("#result_list td.field-worker_column");
                return {
                    overflow: box.scrollWidth - box.clientWidth,
                    workerOutside: worker.getBoundingClientRect().right
                        - box.getBoundingClientRect().right,
                    timeLines: [...document.querySelectorAll("#result_list .field-scheduled a")]
                        .map((time) => time.getClientRects().length),
                };
            }"""
        )
        assert fit["overflow"] <= 0, fit
        assert fit["workerOutside"] <= 0, fit
        assert fit["timeLines"] == [1, 1, 1], fit
    finally:
        tab.close()


def test_bad_values_get_messages_at_their_fields(visit: Visit) -> None:
    page = visit.page
    visit.log_in()
    page.goto("/jobs/new/")
    page.get_by_label("Command").fill("true")
    page.get_by_label("Every").fill("0")
    page.get_by_label("Unit").select_option("minute")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#id_name + .invalid-feedback, #id_name ~ .invalid-feedback")).to_have_text(
        "This field is required."
    )
    expect(page.locator("#id_interval ~ .invalid-feedback")).to_contain_text(
        "The interval must be at least 1."
    )
    # The one-off time must be in the future.
    page.get_by_label("Name").fill("Too late")
    page.get_by_label("Schedule").select_option("once")
    page.get_by_label("Run at").fill("2021-01-01T09:00")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#id_scheduled_at ~ .invalid-feedback")).to_contain_text("already passed")
    # The schedule switch still shows only the one-off fields after the error.
    expect(page.get_by_label("Every")).to_be_hidden()
    assert not Job.objects.exists()


def test_the_alerts_section_takes_the_rules_and_never_shows_the_secret_again(
    visit: Visit, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]  # no lookup of a name
    secret = "whsec_" + "QUJD" * 8  # 24 bytes
    page = visit.page
    visit.log_in()
    page.goto("/jobs/new/")
    page.get_by_label("Name").fill("signed backup")
    page.get_by_label("Command").fill("true")
    page.get_by_label("Every").fill("5")
    page.get_by_label("Unit").select_option("minute")
    alerts = page.locator("#job-form-alerts")
    alerts.get_by_label("Alert on failure").check()
    alerts.get_by_label("Webhook URL").fill("https://hooks.example.com/x")
    alerts.get_by_label("Alert after failed runs in a row").fill("0")
    alerts.get_by_label("Webhook signing secret").fill(secret)
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#id_alert_after_failures ~ .invalid-feedback")).to_contain_text(
        "Choose from 1"
    )
    # Refused: the secret typed is not sent back to the page.
    expect(page.get_by_label("Webhook signing secret")).to_have_value("")
    assert secret not in page.content()
    assert not Job.objects.exists()
    page.get_by_label("Alert after failed runs in a row").fill("3")
    page.get_by_label("Webhook signing secret").fill(secret)
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#job-alert-rules")).to_contain_text("3 failed runs in a row alert")
    expect(page.locator("#job-alert-rules")).to_contain_text("the job's own secret")
    job = Job.objects.get()
    assert (job.alert_after_failures, job.webhook_secret) == (3, secret)
    page.goto(f"/jobs/{job.pk}/edit/")
    secret_field = page.get_by_label("Webhook signing secret")
    expect(secret_field).to_have_value("")
    expect(secret_field).to_have_attribute("placeholder", re.compile("A secret is set"))
    assert secret not in page.content()


def test_the_history_filters_by_job_and_status(visit: Visit) -> None:
    mailer = make_job(name="mailer")
    reporter = make_job(name="reporter")
    make_run(mailer, status=RunStatus.SUCCESS)
    failed = make_run(mailer, status=RunStatus.FAILED, log="exit status 1: simulated failure")
    make_run(reporter, status=RunStatus.FAILED)
    page = visit.page
    visit.log_in()
    page.get_by_role("link", name="History").click()
    rows = page.locator("#runs tbody tr")
    expect(rows).to_have_count(3)
    page.get_by_label("Job").fill("mail")
    page.get_by_label("Status").select_option("failed")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("mailer")
    expect(rows.first.locator("[data-status]")).to_have_text("Failed")
    rows.first.get_by_role("link", name="Log").click()
    expect(page.locator("#run-log")).to_have_text("exit status 1: simulated failure")
    assert failed.pk.hex in page.url.replace("-", "")


def test_switching_to_japanese(visit: Visit) -> None:
    page = visit.page
    visit.log_in()
    page.get_by_label("Language").select_option("ja")
    expect(page.locator("html")).to_have_attribute("lang", "ja")
    expect(page.get_by_role("heading", name="ダッシュボード")).to_be_visible()
    expect(page.get_by_role("button", name="ログアウト")).to_be_visible()
    page.get_by_role("link", name="ジョブ", exact=True).click()
    expect(page.get_by_role("link", name="新しいジョブ")).to_be_visible()


# Each is a bound measured at 375 px, well below what the page was before its phone layout
# (history with 50 runs: 7,666 px; the chart's labels: about 4 px tall).
HISTORY_OF_50_AT_375_MAX_PX = 4500
LABEL_MIN_PX = 10


def _box(locator) -> dict:  # type: ignore[no-untyped-def]
    box = locator.bounding_box()
    assert box is not None, f"{locator} is not drawn"
    return box


def test_the_screens_fit_a_375_pixel_phone(browser, live_server, user) -> None:  # type: ignore[no-untyped-def]
    tab = Visit(browser, live_server.url)
    try:
        tab.page.set_viewport_size({"width": 375, "height": 740})
        tab.log_in()
        long_named = make_job(name="a job with a rather long name that has to wrap somewhere")
        unbroken = make_job(name="nightly-backup-of-the-reports-database")
        short = make_job(name="mailer")
        for index in range(50):
            make_run((long_named, unbroken, short)[index % 3], ago=timedelta(minutes=index + 1))
        for url in ("/", "/jobs/", "/jobs/new/", "/upcoming/", "/history/"):
            tab.page.goto(url)
            width = tab.page.evaluate("document.documentElement.scrollWidth")
            assert width <= 375, f"{url} is {width} px wide"
        menu = tab.page.get_by_role("link", name="History")
        expect(menu).to_be_hidden()
        tab.page.get_by_role("button", name="Show the menu").click()
        expect(menu).to_be_visible()

        # The job list: names wrap between words, never a letter a line, and the first
        # card's buttons are on screen without scrolling sideways.
        page = tab.page
        page.goto("/jobs/")
        line = page.locator("#jobs [data-job-link]").first.evaluate(
            "name => parseFloat(getComputedStyle(name).lineHeight)"
        )
        for name in page.locator("#jobs [data-job-link]").all():
            box = _box(name)
            assert box["height"] <= 3 * line, f"{name.inner_text()!r} is {box['height']} px tall"
        first = page.locator("#jobs tbody tr").first
        for button in (
            first.get_by_role("button", name="Run now"),
            first.get_by_role("link", name="Edit"),
        ):
            box = _box(button)
            assert box["x"] >= 0 and box["x"] + box["width"] <= 375, f"{button} is at {box}"

        # The history of 50 runs: two or three short lines a run.
        page.goto("/history/")
        expect(page.locator("#runs tbody tr")).to_have_count(50)
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height <= HISTORY_OF_50_AT_375_MAX_PX, f"the history is {height} px tall"

        # The chart's labels keep a readable size on a phone, and the plot fills its card
        # on a wide screen.
        page.goto("/")
        labels = page.locator(".chart-label")
        expect(labels.first).to_be_visible()
        shown = [label for label in labels.all() if label.is_visible()]
        assert len(shown) >= 3, "the chart has no scale or no hours"
        for label in shown:
            assert _box(label)["height"] >= LABEL_MIN_PX, f"{label.inner_text()!r} is too small"
        # The Queues card's table fits its card: no column hidden behind a sideways scroll.
        queues = page.locator("#queues")
        expect(queues).to_be_visible()
        assert queues.evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
        page.set_viewport_size({"width": 1280, "height": 900})
        card = _box(page.locator(".card-body", has=page.locator(".chart-frame")))
        plot = _box(page.locator(".chart-frame"))
        assert plot["width"] >= 0.95 * (card["width"] - 32), f"the plot is {plot} in {card}"
        assert not tab.foreign_requests()
    finally:
        tab.close()


# --- jobs that do real work ----------------------------------------------------------------


def test_choosing_a_python_task_builds_the_form_of_its_signature(visit: Visit) -> None:
    page = visit.page
    visit.log_in()
    page.goto("/jobs/new/")
    # Only the chosen executor's fields show: the simulated job's command, not a task.
    expect(page.get_by_label("Command")).to_be_visible()
    expect(page.get_by_label("Task")).to_be_hidden()
    page.get_by_label("Name").fill("Typed report")
    page.get_by_label("Executor").select_option("python")
    expect(page.get_by_label("Command")).to_be_hidden()
    expect(page.get_by_label("Shortest simulated run (seconds)")).to_be_hidden()
    page.get_by_label("Task").select_option("samples.typed")
    # htmx swaps in one field per parameter, typed from its annotation.
    count = page.locator("#id_arg-count")
    expect(count).to_be_visible()
    expect(count).to_have_attribute("type", "number")
    expect(page.locator("#id_arg-flag")).to_have_attribute("type", "checkbox")
    expect(page.locator("#id_arg-day")).to_have_attribute("type", "date")
    expect(page.locator("#id_arg-at")).to_have_attribute("type", "datetime-local")
    expect(page.locator("#task-signature")).to_contain_text("typed(count: int")
    expect(page.locator("#id_arg-ratio")).to_have_attribute("placeholder", "0.5")
    # A message at the field, then a job saved.
    count.fill("")
    page.get_by_label("Every").fill("1")
    page.get_by_label("Unit").select_option("hour")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#id_arg-count ~ .invalid-feedback")).to_contain_text("required")
    assert not Job.objects.exists()
    # After the error only the python fields show still.
    expect(page.get_by_label("Command")).to_be_hidden()
    page.locator("#id_arg-count").fill("4")
    page.locator("#id_arg-colour").select_option(label="green")
    page.locator("#id_arg-day").fill("2026-12-01")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#job-name")).to_have_text("Typed report")
    expect(page.locator("#job-work")).to_contain_text(
        "Python task samples.typed(count=4, day='2026-12-01', colour='green')"
    )
    job = Job.objects.get()
    assert job.arguments == {"count": 4, "day": "2026-12-01", "colour": "green"}
    # Another task chosen in the edit form swaps the fields again.
    page.get_by_role("link", name="Edit").click()
    expect(page.locator("#id_arg-count")).to_have_value("4")
    page.get_by_label("Task").select_option("jobs.tests.sample_tasks.record")
    expect(page.locator("#id_arg-key")).to_be_visible()
    expect(page.locator("#id_arg-count")).to_have_count(0)


def test_the_run_page_follows_a_python_run_and_stops_polling_when_it_ends(  # type: ignore[no-untyped-def]
    visit: Visit, scheduler, settings
) -> None:
    settings.JOBS_LIVE_LOG_SECONDS = 0.2
    job = make_job(
        name="Count slowly",
        executor="python",
        command="jobs.example_tasks.count_slowly",
        arguments={"to": 4},
        is_active=False,
    )
    page = visit.page
    visit.log_in()
    page.goto(f"/jobs/{job.pk}/")
    page.get_by_text("Run now").click()
    page.get_by_role("button", name="Run with these arguments").click()
    expect(page.get_by_role("alert")).to_contain_text("will run in a moment")
    run = JobHistory.objects.get(job=job)
    page.goto(f"/runs/{run.pk}/")
    page.evaluate("window.stillTheSamePage = true")
    status = page.locator("#run-status [data-status]")
    log = page.locator("#run-log")
    # The log grows while the run runs, by polling alone.
    expect(log).to_contain_text("\n1\n", timeout=WAIT_MS)
    expect(status).to_have_text("Running")
    expect(page.locator("#cancel-run")).to_be_visible()
    expect(log).to_contain_text("\n2\n")
    expect(status).to_have_text("Running")
    expect(status).to_have_text("Succeeded", timeout=WAIT_MS)
    expect(log).to_contain_text("returned: 4")
    expect(page.locator("#cancel-run")).to_have_count(0)
    # The buttons follow the run too: the finished run offers to run again.
    expect(page.locator("#run-again")).to_be_visible()
    expect(page.locator("#run-duration")).not_to_have_text("—")
    assert page.evaluate("window.stillTheSamePage") is True, "the page was reloaded"
    # The finished run's part asks for no more: no trigger, and no request for a while.
    expect(page.locator("#run-live")).not_to_have_attribute("hx-trigger", re.compile(".+"))
    polls = len([url for url in visit.requested if f"/runs/{run.pk}/" in url])
    page.wait_for_timeout(POLL_SECONDS * 4 * 1000)
    assert len([url for url in visit.requested if f"/runs/{run.pk}/" in url]) == polls


def test_run_now_with_other_arguments(visit: Visit, scheduler) -> None:  # type: ignore[no-untyped-def]
    job = make_job(
        name="Greet",
        executor="python",
        command="jobs.example_tasks.say_hello",
        arguments={"name": "world"},
        is_active=False,
    )
    page = visit.page
    visit.log_in()
    page.goto(f"/jobs/{job.pk}/")
    form = page.locator("#run-now-form")
    expect(form).to_be_hidden()
    page.get_by_text("Run now").click()
    expect(form.get_by_label("name")).to_have_value("world")
    form.get_by_label("name").fill("Ada")
    form.get_by_label("times").fill("2")
    form.get_by_role("button", name="Run with these arguments").click()
    expect(page.get_by_role("alert")).to_contain_text("“Greet” will run in a moment.")
    row = page.locator("#runs tbody tr").first
    expect(row.locator("[data-status]")).to_have_text("Succeeded", timeout=WAIT_MS)
    row.get_by_role("link", name="Log").click()
    expect(page.locator("#run-arguments")).to_contain_text('"name": "Ada"')
    expect(page.locator("#run-log")).to_contain_text("Hello, Ada!\nHello, Ada!")
    assert JobHistory.objects.get(job=job).arguments == {"name": "Ada", "times": 2}
    job.refresh_from_db()
    assert job.arguments == {"name": "world"}


@pytest.mark.skipif(
    not os.environ.get("UPDATE_SCREENSHOTS"), reason="set UPDATE_SCREENSHOTS=1 to retake them"
)
def test_screenshots(visit: Visit, scheduler) -> None:  # type: ignore[no-untyped-def]
    """The pictures in docs/dashboard.md ("Screens"): docs/*.png at 1280 px wide."""
    _populate_for_screenshots()
    page = visit.page
    visit.log_in()
    DOCS.mkdir(exist_ok=True)
    page.goto("/")
    expect(page.locator(".runs-chart")).to_be_visible()
    page.screenshot(path=DOCS / "dashboard.png", full_page=True)
    page.goto("/jobs/")
    expect(page.locator("#jobs")).to_be_visible()
    page.screenshot(path=DOCS / "jobs.png", full_page=True)
    page.goto("/jobs/new/")
    page.get_by_label("Name").fill("Weekly report")
    page.get_by_label("Command").fill("report --weekly")
    page.get_by_label("Every").fill("0")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".invalid-feedback").first).to_be_visible()
    page.screenshot(path=DOCS / "job-form.png", full_page=True)
    # A Python task's form, built from its signature.
    page.goto("/jobs/new/")
    page.get_by_label("Name").fill("Daily report")
    page.get_by_label("Description").fill("The report of the day before, to the team.")
    page.get_by_label("Executor").select_option("python")
    page.get_by_label("Task").select_option("jobs.example_tasks.daily_report")
    expect(page.locator("#id_arg-day")).to_be_visible()
    page.locator("#id_arg-level").select_option(label="full")
    page.get_by_label("Schedule").select_option("cron")
    page.get_by_label("Cron expression").fill("0 6 * * 1-5")
    page.locator("#id_arg-day").fill("2026-12-01")
    page.locator("#id_arg-dry_run").check()
    page.screenshot(path=DOCS / "job-form-python.png", full_page=True)
    page.goto("/history/")
    expect(page.locator("#runs")).to_be_visible()
    page.screenshot(path=DOCS / "history.png")


def _populate_for_screenshots() -> None:
    names = [
        ("Nightly backup", 1, "day"),
        ("Send invoices", 6, "hour"),
        ("Sync customers", 15, "minute"),
        ("Refresh search index", 30, "minute"),
        ("Clean temporary files", 2, "hour"),
        ("Poll payment provider", 1, "minute"),
        ("Rotate logs", 12, "hour"),
        ("Import exchange rates", 1, "hour"),
    ]
    jobs = [
        make_job(
            name=name,
            command=f"./manage.py {name.lower().replace(' ', '_')}",
            interval=every,
            interval_unit=unit,
            # Two pools besides the default one, for the dashboard's Queues card.
            queue={"Send invoices": "billing", "Refresh search index": "search"}.get(
                name, "default"
            ),
        )
        for name, every, unit in names
    ]
    jobs.append(
        make_job(
            name="Close the month",
            command="./manage.py close_month",
            schedule_type="cron",
            cron_expression="0 6 L * *",
            timezone="Europe/Berlin",
        )
    )
    for index in range(600):
        job = jobs[index % len(jobs)]
        status = RunStatus.FAILED if index % 9 == 4 else RunStatus.SUCCESS
        if index % 29 == 7:
            status = RunStatus.SKIPPED
        elif index % 41 == 11:
            status = RunStatus.CANCELLED
        run = make_run(
            job,
            status=status,
            ago=timedelta(minutes=3 + index * 2.3),
            took=timedelta(seconds=1 + index % 7),
        )
        if status == RunStatus.SKIPPED:  # never started
            JobHistory.objects.filter(pk=run.pk).update(
                started_at=None, finished_at=run.created_at, worker=""
            )
        elif status == RunStatus.CANCELLED:
            JobHistory.objects.filter(pk=run.pk).update(
                finished_at=run.created_at + timedelta(seconds=2), cancelled_by="alice"
            )
    for job in jobs[:4]:
        latest = job.runs.order_by("-created_at").first()
        Job.objects.filter(pk=job.pk).update(
            last_run_at=latest.created_at, last_run_status=latest.status
        )
    make_run(jobs[2], status=RunStatus.RUNNING, ago=timedelta(seconds=40))


def test_the_form_previews_the_schedule_as_one_types_and_upcoming_draws_the_runs(
    visit: Visit,
) -> None:
    """Typing a cron expression updates the preview (once typing pauses: htmx's delay),
    bad values show their message there, and the Upcoming page draws density strips.
    With UPDATE_SCREENSHOTS=1 it retakes docs/schedule-preview.png and docs/upcoming.png."""
    # Three days before Berlin's clocks go forward (28 March 2027, at 02:00 CET).
    with time_machine.travel(datetime(2027, 3, 25, 12, 0, tzinfo=UTC), tick=True):
        page = visit.page
        visit.log_in()
        page.goto("/jobs/new/")
        preview = page.locator("#schedule-preview")
        # The new form's interval has no value yet: a neutral line, no warning.
        expect(preview.locator("#preview-empty")).to_contain_text("Fill in the schedule")
        expect(preview.locator("#preview-errors")).to_have_count(0)

        page.get_by_label("Name").fill("Nightly export")
        page.get_by_label("Command").fill("export --all")
        page.get_by_label("Schedule").select_option("cron")
        page.get_by_label("Time zone", exact=True).select_option("Europe/Berlin")
        asked_before = _preview_requests(visit)
        page.get_by_label("Cron expression").press_sequentially("30 2 * * *", delay=40)
        rows = preview.locator("#preview-occurrences tbody tr")
        expect(rows).to_have_count(10)
        expect(preview).to_contain_text("In Europe/Berlin")
        expect(preview).to_contain_text(f"Your time ({BROWSER_ZONE})")
        expect(rows.nth(2)).to_contain_text("Sun 28 Mar 2027, 03:00:00 CEST")
        expect(rows.nth(2).locator("[data-note]")).to_have_text(
            "02:30 does not exist on 28 March 2027: runs at 03:00 CEST"
        )
        expect(rows.nth(3)).to_contain_text("Mon 29 Mar 2027, 02:30:00 CEST")
        # Ten keystrokes, far fewer requests: htmx waits for a pause in the typing.
        assert _preview_requests(visit) - asked_before < 10
        if os.environ.get("UPDATE_SCREENSHOTS"):
            page.screenshot(path=DOCS / "schedule-preview.png", full_page=True)

        # A bad value: its message instead of the times; fixed, the times come back.
        page.get_by_label("Cron expression").fill("61 2 * * *")
        expect(preview.locator("#preview-errors")).to_contain_text(
            "The minute field “61” is not valid."
        )
        expect(rows).to_have_count(0)
        page.get_by_label("Cron expression").fill("0 9 * * 1-5")
        expect(rows.first).to_contain_text("Fri 26 Mar 2027, 09:00:00 CET")

        _populate_for_upcoming()
        page.get_by_role("link", name="Upcoming").click()
        expect(page.get_by_role("heading", name="Upcoming")).to_be_visible()
        busy = page.locator("tr[data-job-name='Poll the queue']")
        expect(busy.locator("[data-total]")).to_have_text("86,400")
        # Hours on the viewer's clock; the first and the last are parts of an hour.
        expect(busy.locator(".density-cell")).to_have_count(25)
        expect(page.locator("#upcoming tbody tr").first).to_have_attribute(
            "data-job-name", "Poll the queue"
        )
        expect(page.locator("tr[data-job-name='Old importer'] [data-paused]")).to_have_text(
            "disabled"
        )
        page.get_by_role("link", name="7 days").click()
        expect(busy.locator(".density-cell")).to_have_count(29)  # 6-hour blocks
        page.get_by_role("link", name="24 hours").click()
        expect(busy.locator(".density-cell")).to_have_count(25)
        if os.environ.get("UPDATE_SCREENSHOTS"):
            page.screenshot(path=DOCS / "upcoming.png", full_page=True)


def _preview_requests(visit: Visit) -> int:
    return sum(1 for url in visit.requested if "/jobs/schedule-preview/" in url)


def _populate_for_upcoming() -> None:
    now = timezone.now().replace(minute=0, second=0, microsecond=0)
    make_job(name="Poll the queue", interval=1, interval_unit="second", scheduled_at=now)
    make_job(name="Sync customers", interval=15, interval_unit="minute")
    make_job(name="Refresh search index", interval=2, interval_unit="hour")
    for name, expression in [
        ("Office hours report", "0 9-17 * * 1-5"),
        ("Nightly export", "30 2 * * *"),
        ("Rotate logs", "0 */6 * * *"),
        ("Warm caches", "*/5 7-9 * * *"),
    ]:
        make_job(
            name=name, schedule_type="cron", cron_expression=expression, timezone="Europe/Berlin"
        )
    make_job(
        name="Send the quarterly invoice",
        schedule_type="once",
        scheduled_at=timezone.now() + timedelta(hours=5),
    )
    make_job(name="Old importer", interval=1, interval_unit="minute", is_active=False)
