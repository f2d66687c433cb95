"""The job list's order (?sort=) and its bulk actions (jobs/web/listing.py, jobs/web/bulk.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from jobs.access.permissions import JOB_OPERATORS, JOB_VIEWERS
from jobs.models import Job, JobChange, JobHistory, RunStatus, ScheduleType
from jobs.tests.factories import make_job, make_user
from jobs.web.bulk import MAX_BULK_JOBS

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db


def _names(response) -> list[str]:  # type: ignore[no-untyped-def]
    return [job.name for job in response.context["page"].object_list]


def _said(response) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(message) for message in get_messages(response.wsgi_request)]


def _client_of(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


# --- ?sort= -----------------------------------------------------------------------------


def test_the_list_sorts_by_each_column_both_ways(signed_in: Client) -> None:
    now = timezone.now()
    a = make_job(name="a", last_run_status=RunStatus.SUCCESS, last_run_at=now - timedelta(hours=1))
    b = make_job(name="b", last_run_status=RunStatus.FAILED, last_run_at=now - timedelta(hours=3))
    c = make_job(name="c")  # never ran
    Job.objects.filter(pk=a.pk).update(next_run_at=now + timedelta(hours=2))
    Job.objects.filter(pk=b.pk).update(next_run_at=now + timedelta(hours=1))
    Job.objects.filter(pk=c.pk).update(next_run_at=now + timedelta(hours=3))
    assert _names(signed_in.get("/jobs/")) == ["a", "b", "c"]
    assert _names(signed_in.get("/jobs/?sort=-name")) == ["c", "b", "a"]
    assert _names(signed_in.get("/jobs/?sort=next_run")) == ["b", "a", "c"]
    assert _names(signed_in.get("/jobs/?sort=-next_run")) == ["c", "a", "b"]
    # Never ran: last, both ways.
    assert _names(signed_in.get("/jobs/?sort=last_run")) == ["b", "a", "c"]
    assert _names(signed_in.get("/jobs/?sort=-last_run")) == ["a", "b", "c"]
    # Failed before succeeded before never ran.
    assert _names(signed_in.get("/jobs/?sort=status")) == ["b", "a", "c"]
    assert _names(signed_in.get("/jobs/?sort=-status")) == ["c", "a", "b"]


def test_a_disabled_job_comes_after_the_others_by_next_run(signed_in: Client) -> None:
    make_job(name="off", is_active=False)
    make_job(name="on")
    assert _names(signed_in.get("/jobs/?sort=next_run")) == ["on", "off"]
    assert _names(signed_in.get("/jobs/?sort=-next_run")) == ["on", "off"]


@pytest.mark.parametrize("bad", ["password", "-", "--name", "name;drop", "x" * 5000, "id"])
def test_an_unknown_order_is_ignored(signed_in: Client, bad: str) -> None:
    make_job(name="b")
    make_job(name="a")
    response = signed_in.get("/jobs/", {"sort": bad})
    assert response.status_code == 200
    assert _names(response) == ["a", "b"]
    assert 'name="sort"' not in response.text  # not carried into the filter form


def test_the_order_is_kept_by_the_refresh_the_pages_and_the_filters(signed_in: Client) -> None:
    for index in range(51):
        make_job(name=f"job {index:02d}")
    page = signed_in.get("/jobs/?sort=-name&q=job")
    assert 'hx-get="/jobs/?sort=-name&amp;q=job"' in page.text
    assert '<input type="hidden" name="sort" value="-name">' in page.text
    assert "?sort=-name&amp;q=job&amp;page=2" in page.text
    assert _names(page)[0] == "job 50"
    # The heading of the sorted column says so and links to the other way.
    heading = page.text.split('data-sort="name"')[1].split("</th>")[0]
    assert "?sort=name&amp;q=job" in heading and "▼" in heading
    assert 'aria-sort="descending"' in page.text
    assert _names(signed_in.get("/jobs/?sort=-name&q=job&page=2")) == ["job 00"]


# --- bulk actions -----------------------------------------------------------------------


def _bulk(client: Client, action: str, jobs, **extra):  # type: ignore[no-untyped-def]
    data = {"bulk_action": action, "job": [str(getattr(job, "pk", job)) for job in jobs], **extra}
    return client.post(reverse("jobs:job_bulk"), data)


def test_an_editors_bulk_disable_disables_exactly_those_jobs_with_their_audit_entries() -> None:
    editor = make_user("olga", JOB_OPERATORS)
    jobs = [make_job(name=f"job {index}") for index in range(5)]
    chosen, others = jobs[:3], jobs[3:]
    response = _bulk(_client_of(editor), "disable", chosen, next="/jobs/?sort=-name")
    assert response.status_code == 302 and response["Location"] == "/jobs/?sort=-name"
    assert not Job.objects.filter(pk__in=[j.pk for j in chosen], is_active=True).exists()
    assert Job.objects.filter(pk__in=[j.pk for j in others], is_active=True).count() == 2
    entries = JobChange.objects.filter(action="disable")
    assert sorted(entries.values_list("job_id", flat=True)) == sorted(j.pk for j in chosen)
    assert {(e.username, e.channel) for e in entries} == {("olga", "dashboard")}
    assert _said(response) == ["Disabled: “job 0”, “job 1”, “job 2”."]
    # And back: enabled, each recorded.
    _bulk(_client_of(editor), "enable", chosen[:2])
    assert JobChange.objects.filter(action="enable").count() == 2
    assert Job.objects.filter(is_active=True).count() == 4


def test_a_bulk_run_now_makes_a_manual_run_of_each_job_recorded() -> None:
    operator = make_user("olga", JOB_OPERATORS)
    jobs = [make_job(name="one"), make_job(name="two")]
    _bulk(_client_of(operator), "run", jobs)
    runs = JobHistory.objects.filter(trigger="manual")
    assert sorted(runs.values_list("job__name", flat=True)) == ["one", "two"]
    assert JobChange.objects.filter(action="run_now").count() == 2


def test_a_viewers_bulk_post_changes_nothing_and_says_so() -> None:
    viewer = make_user("vera", JOB_VIEWERS)
    jobs = [make_job(name="one"), make_job(name="two")]
    for action in ("disable", "run"):
        response = _bulk(_client_of(viewer), action, jobs)
        assert response.status_code == 302
        assert _said(response) == ["Not changed, you may not do this: “one”, “two”."]
    assert Job.objects.filter(is_active=True).count() == 2
    assert not JobHistory.objects.exists()
    assert not JobChange.objects.exclude(action="create").exists()
    # The page offers a viewer neither the boxes nor the buttons.
    page = _client_of(viewer).get("/jobs/").text
    assert 'id="bulk-jobs"' not in page and 'form="bulk-jobs"' not in page


def test_a_job_that_refuses_is_reported_and_the_others_are_done(signed_in: Client) -> None:
    passed = make_job(
        name="once, passed",
        schedule_type=ScheduleType.ONCE,
        scheduled_at=timezone.now() - timedelta(days=1),
        is_active=False,
    )
    other = make_job(name="other", is_active=False)
    response = _bulk(signed_in, "enable", [passed, other])
    said = _said(response)
    assert said[0] == "Enabled: “other”."
    assert said[1].startswith("“once, passed” was not changed: ")
    assert Job.objects.get(pk=other.pk).is_active
    assert not Job.objects.get(pk=passed.pk).is_active


@pytest.mark.parametrize(
    ("action", "ids", "why"),
    [
        ("disable", [], "Tick the jobs to act on first."),
        ("disable", ["not-a-uuid"], "The list of jobs is not valid."),
        ("disable", ["00000000-0000-0000-0000-000000000000"], "no longer exist"),
        ("delete", None, "Choose enable, disable or run now."),
        ("disable", ["00000000-0000-0000-0000-000000000000"] * (MAX_BULK_JOBS + 1), "At most"),
    ],
)
def test_a_bad_selection_is_refused_whole(signed_in: Client, action, ids, why) -> None:  # type: ignore[no-untyped-def]
    job = make_job(name="kept")
    posted = [job] if ids is None else [*([job] if ids else []), *ids]
    response = _bulk(signed_in, action, posted)
    assert response.status_code == 302
    (message,) = _said(response)
    assert message.startswith("Nothing was changed: ") and why in message
    assert Job.objects.get(pk=job.pk).is_active
    assert not JobChange.objects.exclude(action="create").exists()


def test_bulk_actions_need_a_post_with_its_csrf_token(user) -> None:  # type: ignore[no-untyped-def]
    job = make_job()
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.get(reverse("jobs:job_bulk")).status_code == 405
    assert _bulk(client, "disable", [job]).status_code == 403
    assert Job.objects.get(pk=job.pk).is_active


def test_the_list_has_a_box_per_job_for_the_bulk_form(signed_in: Client) -> None:
    job = make_job(name="boxed")
    page = signed_in.get("/jobs/").text
    assert f'value="{job.pk}" form="bulk-jobs" data-pick' in page
    assert 'action="/jobs/bulk/"' in page and "csrfmiddlewaretoken" in page
    # The refresh waits while a box is ticked (it would untick it).
    assert 'data-poll-unless="#job-table [data-pick]:checked"' in page
