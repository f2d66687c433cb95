"""The job form's job pickers in a real browser (fixtures of test_browser.py)."""

from __future__ import annotations

import pytest

from jobs.models import Job
from jobs.tests.factories import make_job
from jobs.tests.web.test_browser import Visit, browser, expect, user, visit  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_chains_are_picked_by_searching_and_a_loop_is_refused_at_the_field(
    visit: Visit,  # noqa: F811 - the fixture imported above
) -> None:
    backup = make_job(name="nightly backup")
    report = make_job(name="weekly report")
    for i in range(30):
        make_job(name=f"noise {i}")
    page = visit.page
    visit.log_in()
    page.goto(f"/jobs/{backup.pk}/edit/")
    search = page.locator("#id_on_success_search")
    search.fill("report")
    result = page.locator("#id_on_success_results").get_by_label("weekly report")
    result.check()
    # Ticked, it moves to the chosen ones: another search does not take it away.
    expect(page.locator("#id_on_success_chosen").get_by_label("weekly report")).to_be_checked()
    search.fill("noise 1")
    expect(
        page.locator("#id_on_success_results").get_by_label("noise 1", exact=True)
    ).to_be_visible()
    expect(page.locator("#id_on_success_results")).not_to_contain_text("nightly backup")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#job-runs-next")).to_contain_text("on success: weekly report")
    assert list(Job.objects.get(pk=backup.pk).on_success.all()) == [report]

    # The report starting the backup again would loop: refused at the field.
    page.goto(f"/jobs/{report.pk}/edit/")
    expect(page.locator("#job-form")).to_be_visible()
    page.locator("#id_on_failure_search").fill("backup")
    page.locator("#id_on_failure_results").get_by_label("nightly backup").check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#div_id_on_failure")).to_contain_text(
        "This would make a loop: weekly report → nightly backup → weekly report."
    )
    assert not Job.objects.get(pk=report.pk).on_failure.exists()
