"""Team scoping of what the lists count and offer (jobs.models.teams): the queues card
and `/api/v1/queues/` count only the runs of the jobs the user may see, and list only
the queues those jobs or runs are in."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from django.test import Client

from jobs.models import Job, RunStatus
from jobs.tests import personas
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import make_job, make_run

pytestmark = pytest.mark.django_db


class Teams(NamedTuple):
    job_a: Job
    job_b: Job
    site_job: Job


@pytest.fixture
def teams(settings) -> Teams:  # type: ignore[no-untyped-def]
    settings.JOBS_QUEUE_LIMITS = {"alpha-q": 3, "bravo-q": 4, "limit-only": 2}
    settings.JOBS_DASHBOARD_CACHE_SECONDS = 0
    job_a = make_job(name="alpha-job", team=personas.team("A"), queue="alpha-q")
    job_b = make_job(name="bravo-job", team=personas.team("B"), queue="bravo-q")
    site = make_job(name="site-job", queue="shared")
    job_b2 = make_job(name="bravo-shared", team=personas.team("B"), queue="shared")
    for job in (job_a, job_b, job_b, site, job_b2, job_b2):
        make_run(job, status=RunStatus.PENDING, queue=job.queue)
    make_run(job_a, status=RunStatus.RUNNING, queue="alpha-q")
    make_run(job_b, status=RunStatus.RUNNING, queue="bravo-q")
    return Teams(job_a, job_b, site)


def _api_queues(user) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    response = token_client(user).get("/api/v1/queues/")
    assert response.status_code == 200
    return {queue["name"]: queue for queue in response.json()["queues"]}


def test_the_api_counts_only_the_queues_and_runs_of_the_users_jobs(teams: Teams) -> None:
    seen_a = _api_queues(personas.team_viewer("A"))
    # Team A's queue and the site job's; not team B's, nor a queue with a limit only.
    assert sorted(seen_a) == ["alpha-q", "shared"]
    assert (seen_a["alpha-q"]["pending"], seen_a["alpha-q"]["running"]) == (1, 1)
    assert seen_a["alpha-q"]["limit"] == 3
    # The shared queue holds team B's runs too: they are not counted.
    assert seen_a["shared"]["pending"] == 1
    seen_b = _api_queues(personas.team_operator("B"))
    assert sorted(seen_b) == ["bravo-q", "shared"]
    assert (seen_b["bravo-q"]["pending"], seen_b["bravo-q"]["running"]) == (2, 1)
    assert seen_b["shared"]["pending"] == 3


def test_a_site_wide_user_sees_every_queue_and_every_run(teams: Teams) -> None:
    seen = _api_queues(personas.viewer())
    assert sorted(seen) == ["alpha-q", "bravo-q", "limit-only", "shared"]
    assert seen["shared"]["pending"] == 3 and seen["bravo-q"]["pending"] == 2


def _card(client: Client) -> str:
    page = client.get("/").content.decode()
    start = page.index('id="queues"')
    return page[start : page.index("</table>", start)]


def test_the_dashboard_card_counts_the_users_teams_queues(teams: Teams) -> None:
    card_a = _card(personas.signed_in(personas.team_viewer("A")))
    assert 'data-queue="alpha-q"' in card_a and 'data-queue="shared"' in card_a
    assert 'data-queue="bravo-q"' not in card_a and 'data-queue="limit-only"' not in card_a
    card_b = _card(personas.signed_in(personas.team_viewer("B")))
    assert 'data-queue="bravo-q"' in card_b and 'data-queue="alpha-q"' not in card_b
    start = card_b.index('data-queue="shared"')
    assert 'data-cell="pending">3<' in card_b[start : card_b.index("</tr>", start)]
    everyone = _card(personas.signed_in(personas.viewer()))
    assert 'data-queue="limit-only"' in everyone and 'data-queue="bravo-q"' in everyone


def test_the_dashboards_running_count_is_the_users_teams(teams: Teams) -> None:
    page = personas.signed_in(personas.team_viewer("A")).get("/").content.decode()
    assert 'id="count-running">1<' in page


# --- the buttons: by may() for each job --------------------------------------------------


def _row(page: str, job: Job) -> str:
    start = page.index(f'<tr id="job-{job.pk}"')
    return page[start : page.index("</tr>", start)]


def _buttons(html: str, job: Job) -> set[str]:
    """The actions `html` offers for `job`: its run, toggle, edit and delete addresses."""
    base = f"/jobs/{job.pk}/"
    marks = {"run": f'{base}run/"', "toggle": f'{base}toggle/"', "edit": f'{base}edit/"'}
    marks |= {"delete": f'{base}delete/"', "backfill": f'{base}backfill/"'}
    marks["pick"] = f'value="{job.pk}" form="bulk-jobs"'
    return {name for name, mark in marks.items() if mark in html}


def test_the_job_list_shows_a_teams_operator_the_buttons_of_its_teams_jobs_only(
    teams: Teams,
) -> None:
    page = personas.signed_in(personas.team_operator("A")).get("/jobs/").content.decode()
    assert _buttons(_row(page, teams.job_a), teams.job_a) == {"run", "toggle", "edit", "pick"}
    site_row = _row(page, teams.site_job)
    # The site's job: seen, not acted on; its switch shows the state only.
    assert _buttons(site_row, teams.site_job) == set()
    assert "disabled checked" in site_row and "data-autosubmit" not in site_row
    assert f"job-{teams.job_b.pk}" not in page


def test_the_job_list_shows_a_site_wide_operator_every_button(teams: Teams) -> None:
    page = personas.signed_in(personas.operator()).get("/jobs/").content.decode()
    for job in teams:
        assert _buttons(_row(page, job), job) == {"run", "toggle", "edit", "pick"}


def test_a_teams_viewer_gets_no_button(teams: Teams) -> None:
    client = personas.signed_in(personas.team_viewer("A"))
    page = client.get("/jobs/").content.decode()
    assert _buttons(_row(page, teams.job_a), teams.job_a) == set()
    assert _buttons(client.get(f"/jobs/{teams.job_a.pk}/").content.decode(), teams.job_a) == set()


def test_the_job_page_shows_the_buttons_the_user_may_use_on_that_job(teams: Teams) -> None:
    client = personas.signed_in(personas.team_operator("A"))
    own = client.get(f"/jobs/{teams.job_a.pk}/").content.decode()
    assert _buttons(own, teams.job_a) == {"run", "toggle", "edit", "delete", "backfill"}
    site = client.get(f"/jobs/{teams.site_job.pk}/").content.decode()
    assert _buttons(site, teams.site_job) == set()
    assert "Run now" not in site
    # The site's pending run: its cancel button is not offered either.
    run = teams.site_job.runs.get()
    assert f"/runs/{run.pk}/cancel/" not in site
    everything = personas.signed_in(personas.job_admin()).get(f"/jobs/{teams.site_job.pk}/")
    offered = _buttons(everything.content.decode(), teams.site_job)
    assert offered == {"run", "toggle", "edit", "delete", "backfill"}
    assert f"/runs/{run.pk}/cancel/" in everything.content.decode()


# --- chains to and from a job of another team --------------------------------------------


@pytest.fixture
def chained(teams: Teams) -> Teams:
    """Team A's job starts team B's and the site's on success; another of team B's
    starts team A's on failure."""
    teams.job_a.on_success.set([teams.job_b, teams.site_job])
    starter = make_job(name="bravo-starter", team=teams.job_b.team, queue="bravo-q")
    starter.on_failure.set([teams.job_a])
    return teams


def test_the_job_page_names_no_chained_job_of_another_team(chained: Teams) -> None:
    page = personas.signed_in(personas.team_viewer("A")).get(f"/jobs/{chained.job_a.pk}/")
    html = page.content.decode()
    assert "bravo-" not in html and str(chained.job_b.pk) not in html
    # Both ways: the job it starts and the job that starts it.
    assert html.count("a job of another team") == 2
    assert f'<a href="/jobs/{chained.site_job.pk}/">site-job</a>' in html
    everyone = personas.signed_in(personas.viewer()).get(f"/jobs/{chained.job_a.pk}/")
    assert f'<a href="/jobs/{chained.job_b.pk}/">bravo-job</a>' in everyone.content.decode()
    assert "a job of another team" not in everyone.content.decode()


def test_the_edit_page_keeps_a_chained_job_of_another_team_without_its_name(
    chained: Teams,
) -> None:
    client = personas.signed_in(personas.team_operator("A"))
    html = client.get(f"/jobs/{chained.job_a.pk}/edit/").content.decode()
    assert "bravo-job" not in html and "a job of another team" in html
    assert "site-job" in html


def test_the_run_page_names_no_run_of_another_teams_job(chained: Teams) -> None:
    cause = make_run(chained.job_b, status=RunStatus.FAILED)
    run = make_run(chained.job_a, status=RunStatus.SUCCESS, trigger="chain", caused_by=cause)
    html = personas.signed_in(personas.team_viewer("A")).get(f"/runs/{run.pk}/").content.decode()
    assert "a run of a job of another team" in html
    assert "bravo-job" not in html and str(cause.pk) not in html
    everyone = personas.signed_in(personas.viewer()).get(f"/runs/{run.pk}/").content.decode()
    assert f"/runs/{cause.pk}/" in everyone and "bravo-job" in everyone


def test_the_api_leaves_out_a_chained_job_of_another_team_and_counts_it(chained: Teams) -> None:
    url = f"/api/v1/jobs/{chained.job_a.pk}/"
    client = token_client(personas.team_viewer("A"))
    body = client.get(url).json()
    assert body["on_success"] == [str(chained.site_job.pk)]
    assert body["other_team_chains"] == {"on_success": 1, "on_failure": 0}
    listed = client.get("/api/v1/jobs/").content.decode()
    assert str(chained.job_b.pk) not in listed
    everyone = token_client(personas.viewer()).get(url).json()
    assert sorted(everyone["on_success"]) == sorted(
        [str(chained.job_b.pk), str(chained.site_job.pk)]
    )
    assert everyone["other_team_chains"] == {"on_success": 0, "on_failure": 0}


def test_writing_the_chains_through_the_api_keeps_the_ones_of_another_team(chained: Teams) -> None:
    """Team A's operator may not run team B's jobs: it could not chain to one, but the
    chain someone else made stays when it writes the list it read."""
    client = token_client(personas.team_operator("A"))
    url = f"/api/v1/jobs/{chained.job_a.pk}/"
    response = client.patch(url, {"on_success": [], "description": "x"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["on_success"] == []
    assert set(chained.job_a.on_success.all()) == {chained.job_b}
    # Naming a job of team B anew is still refused.
    chained.job_a.on_success.set([])
    refused = client.patch(url, {"on_success": [str(chained.job_b.pk)]}, format="json")
    assert refused.status_code == 400 and not chained.job_a.on_success.exists()
