"""Two teams at once in a real browser: a user of team A and one of team B, each in a
browser context of their own and logged in at the same time, see only their team's jobs
(and the site's), get 404 for the other's job page, and no page they visit has a
Content-Security-Policy refusal.

    .venv/bin/python -m pytest -n 0 jobs/tests/web/test_browser_teams.py
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from jobs.models import Job, RunStatus
from jobs.tests import personas
from jobs.tests.factories import make_job, make_run
from jobs.tests.ui_support import PASSWORD
from jobs.tests.web.test_browser import browser, expect, fast_screens  # noqa: F401 - fixtures
from jobs.tests.web.test_browser_csp import WatchedVisit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class Member(NamedTuple):
    tab: WatchedVisit
    own: Job  # its team's job
    other: Job  # the other team's


def _member(browser: Any, url: str, team: str, own: Job, other: Job) -> Member:  # noqa: F811
    user = personas.team_operator(team)
    user.set_password(PASSWORD)
    user.save()
    tab = WatchedVisit(browser, url)
    tab.log_in(user.username)
    return Member(tab, own, other)


@pytest.fixture
def members(browser, live_server, fast_screens) -> Iterator[tuple[Member, Member]]:  # type: ignore[no-untyped-def]  # noqa: F811
    alpha = make_job(name="alpha-nightly", team=personas.team("A"))
    bravo = make_job(name="bravo-nightly", team=personas.team("B"))
    make_job(name="site-wide-cleanup")
    make_run(alpha, status=RunStatus.FAILED)
    make_run(bravo, status=RunStatus.FAILED)
    # Both logged in before either looks: two sessions side by side.
    pair = (
        _member(browser, live_server.url, "A", alpha, bravo),
        _member(browser, live_server.url, "B", bravo, alpha),
    )
    yield pair
    for member in pair:
        member.tab.close()


def test_two_teams_logged_in_at_once_see_only_their_own_jobs(members) -> None:  # type: ignore[no-untyped-def]
    for member in members:
        page = member.tab.page
        member.tab.see("/", "Dashboard")
        expect(page.locator("main")).to_contain_text(member.own.name)
        expect(page.locator("main")).to_contain_text("site-wide-cleanup")
        expect(page.locator("main")).not_to_contain_text(member.other.name)

        member.tab.see("/jobs/", "Jobs")
        rows = page.locator("#jobs tbody tr")
        expect(rows).to_have_count(2)
        expect(page.locator("#jobs")).not_to_contain_text(member.other.name)
        # Run now on its team's job only: the site's it may only view.
        own_row = page.locator(f"#job-{member.own.pk}")
        expect(own_row.get_by_role("button", name="Run now")).to_be_visible()
        site_row = page.locator("#jobs tbody tr", has_text="site-wide-cleanup")
        expect(site_row.get_by_role("button", name="Run now")).to_have_count(0)

        member.tab.see(f"/jobs/{member.own.pk}/", member.own.name)
        expect(page.locator("#job-actions").get_by_role("button", name="Run now")).to_be_visible()

        response = page.goto(f"/jobs/{member.other.pk}/")
        assert response is not None and response.status == 404
        expect(page.get_by_role("heading", name="Not found")).to_be_visible()
        expect(page.locator("body")).not_to_contain_text(member.other.name)
        page.wait_for_load_state("load")
    for member in members:
        assert member.tab.violations == [], "\n".join(member.tab.violations)
        assert member.tab.policies and all(member.tab.policies), "a page without the header"
