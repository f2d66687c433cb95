"""Editing chains: the rules (loops, too many), each entry point that applies them (the
model, the dashboard's form, the admin, the API), the audit trail, and the pages that
show chains."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from jobs.models import MAX_CHAINED_JOBS, ChangeAction, Channel, Job, JobChange, RunStatus, Trigger
from jobs.tests.api_helpers import make_user, token_client
from jobs.tests.factories import make_job, make_run
from jobs.tests.forms import admin_form, dashboard_form

pytestmark = pytest.mark.django_db

JOBS_API = "/api/v1/jobs/"


def chain(job: Job, **lists: list[Job]) -> Job:
    job.set_chains(**lists)
    job.full_clean()
    job.save()
    return job


def ids(jobs: list[Job]) -> list[str]:
    return [str(job.pk) for job in jobs]


def entries(*jobs: Job) -> list[dict[str, str]]:
    """A chain list as the audit trail keeps it."""
    return [{"id": str(job.pk), "name": job.name} for job in sorted(jobs, key=lambda j: j.name)]


@pytest.fixture
def trio() -> tuple[Job, Job, Job]:
    """a starts b on success, b starts c on failure."""
    c = make_job(name="c")
    b = chain(make_job(name="b"), on_failure=[c])
    a = chain(make_job(name="a"), on_success=[b])
    return a, b, c


# --- the rules, on the model ---------------------------------------------------------------


def test_a_job_cannot_start_itself(trio):
    a, _, _ = trio
    a.set_chains(on_failure=[a])
    with pytest.raises(ValidationError) as refused:
        a.full_clean()
    assert refused.value.message_dict == {"on_failure": ["A job cannot start itself."]}


def test_a_loop_of_two_is_refused_at_the_field_with_its_path(trio):
    a, b, _ = trio
    b.set_chains(on_success=[a])
    with pytest.raises(ValidationError) as refused:
        b.full_clean()
    (message,) = refused.value.message_dict["on_success"]
    assert "b → a → b" in message
    assert "on_failure" not in refused.value.message_dict


def test_a_longer_loop_through_both_kinds_of_chain_is_refused(trio):
    a, _, c = trio
    # a -(success)-> b -(failure)-> c -(success)-> a
    c.set_chains(on_success=[a])
    with pytest.raises(ValidationError) as refused:
        c.full_clean()
    assert "c → a → b → c" in refused.value.message_dict["on_success"][0]


def test_chains_that_meet_without_a_loop_are_allowed(trio):
    a, b, c = trio
    chain(a, on_success=[b, c], on_failure=[c])  # c reached two ways: no loop
    assert set(a.on_success.all()) == {b, c}


def test_at_most_so_many_jobs_per_list(trio):
    a, _, _ = trio
    many = [make_job(name=f"job {i}") for i in range(MAX_CHAINED_JOBS + 1)]
    a.set_chains(on_success=many)
    with pytest.raises(ValidationError) as refused:
        a.full_clean()
    assert refused.value.message_dict == {"on_success": [f"At most {MAX_CHAINED_JOBS} jobs."]}


def test_validation_without_chain_lists_reads_no_chains(trio):
    a, _, _ = trio
    with CaptureQueriesContext(connection) as queries:
        a.full_clean()
    assert not [q for q in queries if "_on_success" in q["sql"] or "_on_failure" in q["sql"]]


# --- the dashboard's form ------------------------------------------------------------------


@pytest.fixture
def admin_user() -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_superuser("root", password="pw-not-used")


@pytest.fixture
def browser(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def edit_form(job: Job, **fields: Any) -> dict[str, Any]:
    values = {
        "name": job.name,
        "command": job.command,
        "interval": str(job.interval),
        "interval_unit": job.interval_unit,
    }
    return dashboard_form(**{**values, **fields})


def test_the_dashboard_form_refuses_a_loop_at_the_field_and_saves_nothing(browser, trio):
    a, _b, c = trio
    response = browser.post(
        reverse("jobs:job_edit", args=[c.pk]), edit_form(c, name="renamed", on_failure=ids([a]))
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    # The name as edited: the form's job is the one that would loop.
    assert "renamed → a → b → renamed" in errors["on_failure"][0]
    assert list(errors) == ["on_failure"]
    c.refresh_from_db()
    assert c.name == "c" and not c.on_failure.exists()
    assert not JobChange.objects.filter(job_id=c.pk, action=ChangeAction.EDIT).exists()


def test_the_dashboard_form_saves_chains_and_records_them_with_the_fields(browser, trio):
    a, b, c = trio
    response = browser.post(
        reverse("jobs:job_edit", args=[a.pk]),
        edit_form(a, description="nightly", on_success=ids([b]), on_failure=ids([c])),
    )
    assert response.status_code == 302
    assert list(a.on_failure.all()) == [c]
    change = JobChange.objects.filter(job_id=a.pk).order_by("-created_at", "-id")[0]
    assert change.action == ChangeAction.EDIT and change.channel == Channel.DASHBOARD
    # One record for the one edit: the field and the list that changed, not the one kept.
    assert change.changes == {"description": ["", "nightly"], "on_failure": [[], entries(c)]}


def test_the_job_form_shows_the_chosen_jobs_and_not_every_job(browser, trio):
    a, b, _ = trio
    for i in range(30):
        make_job(name=f"unrelated {i}")
    page = browser.get(reverse("jobs:job_edit", args=[a.pk])).content.decode()
    assert f'value="{b.pk}"' in page and "checked" in page
    assert "unrelated" not in page
    assert "jobs/job_picker.js" in page
    assert 'hx-get="/jobs/choices/"' in page


def test_the_picker_search_offers_matching_jobs_but_not_the_job_or_those_chosen(browser, trio):
    a, b, _c = trio
    make_job(name="another b")
    response = browser.get(
        reverse("jobs:job_choices"),
        {"field": "on_success", "on_success_search": "b", "exclude": str(a.pk), "on_success": b.pk},
    )
    page = response.content.decode()
    assert "another b" in page
    assert f'value="{b.pk}"' not in page and f'value="{a.pk}"' not in page
    assert 'name="on_success"' in page


def test_the_picker_search_needs_a_known_field_and_the_view_permission(trio):
    viewer = Client()
    viewer.force_login(make_user("nobody-yet"))
    assert viewer.get(reverse("jobs:job_choices"), {"field": "name"}).status_code == 400
    from django.contrib.auth import get_user_model

    stranger = get_user_model().objects.create_user("stranger", password="pw-not-used")
    outsider = Client()
    outsider.force_login(stranger)
    assert outsider.get(reverse("jobs:job_choices"), {"field": "on_success"}).status_code == 403


# --- the admin -----------------------------------------------------------------------------


def test_the_admin_refuses_a_loop_at_the_field_and_saves_nothing(browser, trio):
    a, _b, c = trio
    response = browser.post(
        reverse("admin:jobs_job_change", args=[c.pk]),
        admin_form(
            name="c", command=c.command, interval="10", interval_unit="second", on_success=ids([a])
        ),
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "c → a → b → c" in errors["on_success"][0]
    assert not c.on_success.exists()


def test_the_admin_saves_chains_with_an_autocomplete_and_records_them(browser, trio):
    a, b, c = trio
    page = browser.get(reverse("admin:jobs_job_change", args=[a.pk])).content.decode()
    assert "admin-autocomplete" in page  # no select of every job
    response = browser.post(
        reverse("admin:jobs_job_change", args=[a.pk]),
        admin_form(
            name="a",
            command=a.command,
            interval="10",
            interval_unit="second",
            on_success=ids([b, c]),
        ),
    )
    assert response.status_code == 302
    assert set(a.on_success.all()) == {b, c}
    change = JobChange.objects.filter(job_id=a.pk).order_by("-created_at", "-id")[0]
    assert change.channel == Channel.ADMIN
    assert change.changes == {"on_success": [entries(b), entries(b, c)]}


# --- the API -------------------------------------------------------------------------------


@pytest.fixture
def api() -> Any:
    return token_client(make_user("ops", staff=True))


def test_the_api_reads_and_writes_chains_as_lists_of_ids(api, trio):
    a, b, c = trio
    response = api.post(
        JOBS_API,
        {
            "name": "d",
            "command": "d.sh",
            "schedule_type": "interval",
            "interval": 5,
            "interval_unit": "minute",
            "on_success": ids([a]),
            "on_failure": ids([b, c]),
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["on_success"] == ids([a]) and sorted(body["on_failure"]) == sorted(ids([b, c]))
    created = JobChange.objects.get(job_id=body["id"])
    assert created.action == ChangeAction.CREATE and created.channel == Channel.API
    assert created.changes["on_failure"] == [[], entries(b, c)]
    assert api.get(f"{JOBS_API}{a.pk}/").json()["on_success"] == ids([b])


def test_the_api_refuses_a_loop_with_a_400_at_the_field_and_saves_nothing(api, trio):
    a, _b, c = trio
    response = api.patch(
        f"{JOBS_API}{c.pk}/", {"name": "c2", "on_failure": ids([a])}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["on_failure"]
    assert "c2 → a → b → c2" in response.json()["on_failure"][0]
    c.refresh_from_db()
    assert c.name == "c" and not c.on_failure.exists()


def test_the_api_refuses_an_unknown_job_id(api, trio):
    a, _, _ = trio
    unknown = "00000000-0000-4000-8000-000000000000"
    response = api.patch(f"{JOBS_API}{a.pk}/", {"on_success": [unknown]}, format="json")
    assert response.status_code == 400 and "on_success" in response.json()
    assert list(a.on_success.all()) != []


def test_a_page_of_jobs_reads_the_chains_with_a_constant_number_of_queries(api, trio):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert api.get(JOBS_API).status_code == 200
        return len(queries)

    count()  # the token's first use writes its last-used time (at most once a minute)
    few = count()
    for i in range(10):
        chain(make_job(name=f"more {i}"), on_success=[trio[2]])
    assert count() == few


def test_a_run_shows_its_cause_in_the_api(api, trio):
    a, b, _ = trio
    cause = make_run(a)
    chained = make_run(b, trigger=Trigger.CHAIN, caused_by=cause)
    assert api.get(f"/api/v1/runs/{chained.pk}/").json()["caused_by"] == str(cause.pk)
    assert api.get(f"/api/v1/runs/{cause.pk}/").json()["caused_by"] is None


def test_the_schema_describes_the_chain_fields(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    job = schema["components"]["schemas"]["Job"]["properties"]
    assert job["on_success"]["type"] == "array"
    assert job["on_success"]["items"]["format"] == "uuid"
    assert "caused_by" in schema["components"]["schemas"]["Run"]["properties"]


# --- the audit trail -----------------------------------------------------------------------


def test_saving_the_same_chains_again_records_nothing(trio):
    a, b, _ = trio
    before = JobChange.objects.count()
    chain(a, on_success=[b])
    assert JobChange.objects.count() == before


def test_deleting_a_job_records_it_leaving_the_chains_of_the_jobs_that_started_it(trio):
    a, b, _c = trio
    was = entries(b)
    b.delete()
    assert not a.on_success.exists()
    change = JobChange.objects.filter(job_id=a.pk).order_by("-created_at", "-id")[0]
    assert change.action == ChangeAction.EDIT
    assert change.changes == {"on_success": [was, []]}


def test_restoring_an_earlier_version_leaves_the_chains_as_they_are(trio):
    a, b, _c = trio
    first = JobChange.objects.filter(job_id=a.pk).order_by("created_at", "id")[0]
    a.description = "changed"
    a.save()
    assert a.restore(JobChange.objects.get(pk=first.pk))
    a.refresh_from_db()
    assert a.description == "" and list(a.on_success.all()) == [b]


def test_the_job_page_shows_chain_changes_by_name(browser, trio):
    a, _b, _ = trio
    page = browser.get(reverse("jobs:job_detail", args=[a.pk])).content.decode()
    changes = page.split('id="change-list"')[1]
    assert "On success, run" in changes and "— → b" in changes


# --- the pages -----------------------------------------------------------------------------


def test_both_jobs_pages_show_the_chain(browser, trio):
    a, b, c = trio
    page = browser.get(reverse("jobs:job_detail", args=[b.pk])).content.decode()
    runs_next = page.split('id="job-runs-next"')[1].split("</dd>")[0]
    assert "on failure:" in runs_next and f'href="/jobs/{c.pk}/"' in runs_next
    started_by = page.split('id="job-started-by"')[1].split("</dd>")[0]
    assert "on success of:" in started_by and f'href="/jobs/{a.pk}/"' in started_by
    plain = browser.get(
        reverse("jobs:job_detail", args=[make_job(name="alone").pk])
    ).content.decode()
    assert "job-runs-next" not in plain and "job-started-by" not in plain


def test_a_chained_runs_page_links_to_its_cause_and_the_cause_to_it(browser, trio):
    a, b, _ = trio
    cause = make_run(a)
    chained = make_run(b, trigger=Trigger.CHAIN, caused_by=cause, status=RunStatus.PENDING)
    page = browser.get(reverse("jobs:run_detail", args=[chained.pk])).content.decode()
    caused_by = page.split('id="run-caused-by"')[1].split("</dd>")[0]
    assert f'href="/runs/{cause.pk}/"' in caused_by and "a run of a" in caused_by
    page = browser.get(reverse("jobs:run_detail", args=[cause.pk])).content.decode()
    assert f'href="/runs/{chained.pk}/"' in page.split('id="run-chained"')[1]
    admin_page = browser.get(reverse("admin:jobs_jobhistory_change", args=[chained.pk]))
    assert reverse("admin:jobs_jobhistory_change", args=[cause.pk]) in admin_page.content.decode()


def test_a_user_who_may_only_view_sees_the_chains_read_only_in_the_admin(trio):
    from jobs.access.permissions import JOB_VIEWERS
    from jobs.tests.factories import make_user as make_member

    a, _b, _ = trio
    viewer = Client()
    viewer.force_login(make_member("victor", JOB_VIEWERS, staff=True))
    page = viewer.get(reverse("admin:jobs_job_change", args=[a.pk]))
    assert page.status_code == 200
    assert "admin-autocomplete" not in page.content.decode()
    assert '<div class="readonly">b</div>' in page.content.decode()
