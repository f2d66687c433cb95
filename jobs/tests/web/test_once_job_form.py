"""A one-off job's forms (the dashboard's and the admin's) neither show nor keep "After
downtime" and "When the previous run is still going": job_form.js hides them for a
one-off job (as it does the other fields of other types), and the server, which a form
without JavaScript still reaches with them, stores the defaults."""

from __future__ import annotations

import re

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from jobs.models import Job
from jobs.tests.factories import NOW
from jobs.tests.forms import admin_form, dashboard_form

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

POLICIES = ("misfire_policy", "overlap_policy")
ONCE = {"schedule_type": "once", "scheduled_at": "2026-12-01T09:00", "interval": ""}
ADMIN_ONCE = {
    "schedule_type": "once",
    "scheduled_at_0": "2026-12-01",
    "scheduled_at_1": "09:00:00",
    "interval": "",
    "interval_unit": "",
}
NOT_DEFAULTS = {"misfire_policy": "skip", "overlap_policy": "forbid"}


def _policies(job: Job) -> tuple[str, str]:
    return job.misfire_policy, job.overlap_policy


def test_the_dashboard_form_puts_the_policies_in_sections_for_interval_and_cron_only(
    signed_in: Client,
) -> None:
    page = signed_in.get("/jobs/new/").text
    for name in POLICIES:
        section = re.search(
            rf'class="js-schedule"\s+data-schedule="([^"]*)"[^>]*>\s*<div[^>]*id="div_id_{name}"',
            page,
        )
        assert section, name
        assert section.group(1).split() == ["interval", "cron"]


@time_machine.travel(NOW, tick=False)
@pytest.mark.parametrize("sent", [NOT_DEFAULTS, {}], ids=["without JavaScript", "hidden"])
def test_a_once_job_saved_from_the_dashboard_keeps_the_default_policies(
    signed_in: Client, sent: dict
) -> None:
    data = {k: v for k, v in dashboard_form(**ONCE).items() if k not in POLICIES}
    response = signed_in.post("/jobs/new/", {**data, **sent})
    assert response.status_code == 302, response.context["form"].errors
    assert _policies(Job.objects.get()) == ("coalesce", "allow")


@time_machine.travel(NOW, tick=False)
def test_an_interval_job_keeps_its_policies_and_a_blank_one_is_refused_at_the_field(
    signed_in: Client,
) -> None:
    signed_in.post("/jobs/new/", dashboard_form(**NOT_DEFAULTS))
    assert _policies(Job.objects.get()) == ("skip", "forbid")
    response = signed_in.post("/jobs/new/", dashboard_form(name="other", misfire_policy=""))
    assert response.status_code == 200
    assert "misfire_policy" in response.context["form"].errors
    assert Job.objects.count() == 1


def test_the_admin_form_marks_the_policies_for_interval_and_cron(admin_client: Client) -> None:
    page = admin_client.get(reverse("admin:jobs_job_add")).text
    for name in POLICIES:
        select = re.search(rf'<select name="{name}"[^>]*>', page).group(0)
        assert 'data-schedule-types="interval cron"' in select


@time_machine.travel(NOW, tick=False)
@pytest.mark.parametrize("sent", [NOT_DEFAULTS, {}], ids=["without JavaScript", "hidden"])
def test_a_once_job_saved_in_the_admin_keeps_the_default_policies(
    admin_client: Client, sent: dict
) -> None:
    data = {k: v for k, v in admin_form(**ADMIN_ONCE).items() if k not in POLICIES}
    response = admin_client.post(reverse("admin:jobs_job_add"), {**data, **sent})
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert _policies(Job.objects.get()) == ("coalesce", "allow")
