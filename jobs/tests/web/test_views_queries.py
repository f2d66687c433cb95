"""Every screen costs a fixed number of queries, whatever the size of the data."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from jobs.models import Job, JobHistory
from jobs.tests.factories import make_job, make_run
from jobs.tests.ui_support import make_many

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

# Session, user, and the user's permissions (their own and their groups', read once per
# request), whether team scoping is on (JOBS_TEAM_SCOPED=auto: does any job have a
# team, jobs.models.teams): 5 queries on every page. The rest is the page's own.
EVERY_PAGE = 5
EXPECTED = {
    # jobs; the queues (jobs/queues/status.py): active runs by queue (pending and running in one
    # statement, which also gives the totals that took two counts), the jobs' queue names,
    # the live schedulers; completed hours, current hour, in progress, upcoming, failures
    "/": EVERY_PAGE + 9,
    "/jobs/": EVERY_PAGE + 2,  # count, page
    "/jobs/?q=bulk&state=failed&active=yes&page=2": EVERY_PAGE + 2,
    "job page": EVERY_PAGE + 3,  # job, stats, runs
    "/history/": EVERY_PAGE + 1,  # one page of runs, no COUNT
    "/history/?status=failed&job_name=bulk&date_from=2026-01-01": EVERY_PAGE + 2,  # + matching jobs
    "history of a job": EVERY_PAGE + 2,  # + the job's name
}
# The whole page, not its live part that htmx polls: the job's changes and its chains
# (one query each); the job list's queue filter, its queue names.
FULL_PAGE_EXTRA = {
    "job page": 2,
    "/jobs/": 1,
    "/jobs/?q=bulk&state=failed&active=yes&page=2": 1,
}
# Every whole page's layout reads the pause switch for its banner (one look-up by key).
PAUSE_BANNER = 1


def _count(client: Client, url: str, **headers: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, headers=headers)
    assert response.status_code == 200, url
    return len(queries)


def _counts(client: Client, job: Job) -> dict[str, int]:
    urls = {
        **{url: url for url in EXPECTED if url.startswith("/")},
        "job page": f"/jobs/{job.pk}/",
        "history of a job": f"/history/?job={job.pk}",
    }
    counts = {name: _count(client, url) for name, url in urls.items()}
    for name, url in urls.items():
        counts[f"{name} (htmx)"] = _count(client, url, **{"HX-Request": "true"})
    return counts


def test_pages_issue_the_same_queries_for_1_job_and_for_500_jobs_with_5000_runs(
    signed_in: Client,
) -> None:
    one = make_job(name="bulk one")
    make_run(one)
    # So that the filtered list finds it too: an empty page would skip a query.
    Job.objects.filter(pk=one.pk).update(last_run_status="failed")
    small = _counts(signed_in, one)

    make_many(jobs=500, runs=5000)
    busiest = Job.objects.get(name="bulk 0000")
    assert JobHistory.objects.count() == 5001
    large = _counts(signed_in, busiest)

    assert large == small
    filtered = signed_in.get("/jobs/?q=bulk&state=failed&active=yes&page=2").context["page"]
    assert filtered.number == 2 and len(filtered.object_list) > 0
    for name, expected in EXPECTED.items():
        assert small[name] == expected + PAUSE_BANNER + FULL_PAGE_EXTRA.get(name, 0), name
        assert small[f"{name} (htmx)"] == expected, name
