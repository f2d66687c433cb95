"""A job declared in code in a real browser (Chromium through Playwright, as
test_browser.py): its page says where it is defined, its form keeps the fields the code
owns disabled once the form's script has run, previews the code's schedule, and saves
what the operator owns."""

from __future__ import annotations

import pytest

from jobs.models import Job
from jobs.tests.declaring import TASK, code_job, syncjobs
from jobs.tests.web.test_browser import (  # noqa: F401 - fixtures
    Visit,
    browser,
    expect,
    user,
    visit,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_job_from_code_edits_only_what_the_operator_owns(visit: Visit, declare) -> None:  # noqa: F811
    declare(cron="30 2 * * *", timezone="Europe/Berlin", max_retries=2)
    syncjobs()
    job = code_job()
    owned = {name: getattr(job, name) for name in job.code_fields}
    page = visit.page
    visit.log_in()

    page.goto(f"/jobs/{job.pk}/")
    expect(page.locator("#job-code")).to_contain_text("Defined in code: jobs/tests/declaring.py.")
    page.get_by_role("link", name="Edit").click()
    expect(page.locator("#job-code")).to_be_visible()
    # The script shows the cron schedule's fields and the task's, and leaves them disabled.
    for name in ("name", "schedule_type", "cron_expression", "timezone", "task", "max_retries"):
        field = page.locator(f"#id_{name}")
        expect(field).to_be_visible()
        expect(field).to_be_disabled()
    expect(page.locator("#id_interval")).to_be_hidden()
    expect(page.get_by_label("Timeout (seconds)")).to_be_enabled()
    # The preview reads the code's schedule (its disabled fields are not sent).
    expect(page.locator("#schedule-preview #preview-occurrences tbody tr")).to_have_count(10)
    expect(page.locator("#schedule-preview")).to_contain_text("In Europe/Berlin")

    page.get_by_label("Timeout (seconds)").fill("120")
    page.get_by_label("Active").uncheck()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_contain_text("saved")

    saved = Job.objects.get(pk=job.pk)
    assert (saved.timeout_seconds, saved.is_active) == (120, False)
    assert {name: getattr(saved, name) for name in owned} == owned
    assert saved.code_key == TASK
