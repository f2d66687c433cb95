"""The time zone list of the job forms, written out without a template per option."""

from __future__ import annotations

import pytest
from django.test import Client

from jobs.models import Job, MisfirePolicy
from jobs.schedules import arithmetic as schedules
from jobs.web.widgets import TimeZoneSelect

pytest_plugins = ["jobs.tests.ui_support"]


def test_it_lists_the_site_zone_then_every_zone_and_marks_the_chosen_one():
    html = TimeZoneSelect().render("timezone", "Asia/Tokyo", attrs={"id": "id_timezone"})
    assert '<select id="id_timezone" name="timezone">' in html
    assert html.count("<option") == len(schedules.time_zone_names()) + 1
    assert html.index('<option value="">') < html.index('value="Africa/Abidjan"')
    assert '<option value="Asia/Tokyo" selected>Asia/Tokyo</option>' in html
    assert html.count(" selected") == 1


def test_a_blank_value_selects_the_site_zone_and_attributes_are_escaped():
    html = TimeZoneSelect().render("timezone", None, attrs={"class": 'form-select "x"'})
    assert 'class="form-select &quot;x&quot;"' in html
    assert '<option value="" selected>' in html
    html = TimeZoneSelect().render("timezone", "", attrs={})
    assert '<option value="" selected>' in html
    assert html.count(" selected") == 1


def test_a_filter_box_comes_first_hidden_until_its_script_runs_and_is_never_posted():
    html = TimeZoneSelect().render("timezone", "", attrs={"id": "id_timezone"})
    box = html[: html.index("<select")]
    assert box.startswith('<input type="search"')
    assert 'data-zone-filter="id_timezone"' in box and 'aria-controls="id_timezone"' in box
    assert " hidden>" in box and "name=" not in box
    assert 'aria-label="Filter the time zones"' in box
    # Without an id there is nothing to point at: the select alone.
    assert TimeZoneSelect().render("timezone", "").startswith("<select")
    assert "jobs/zone_picker.js" in str(TimeZoneSelect().media)


@pytest.mark.django_db
def test_the_job_forms_load_the_filter_and_the_server_still_checks_the_zone(
    signed_in: Client, admin_client: Client
) -> None:
    form = signed_in.get("/jobs/new/").text
    assert "/static/jobs/zone_picker.js" in form
    assert 'data-zone-filter="id_timezone"' in form
    assert "/static/jobs/zone_picker.js" in admin_client.get("/admin/jobs/job/add/").text
    posted = {
        "name": "tz",
        "executor": "simulated",
        "command": "x",
        "schedule_type": "cron",
        "cron_expression": "0 9 * * *",
        "timezone": "Mars/Olympus_Mons",
        "misfire_policy": MisfirePolicy.SKIP,
        "overlap_policy": "allow",
        "queue": "default",
        "priority": "0",
        "max_retries": "0",
        "retry_backoff_seconds": "60",
        "timeout_seconds": "3600",
    }
    response = signed_in.post("/jobs/new/", posted)
    assert response.status_code == 200
    assert not Job.objects.exists()
    assert list(response.context["form"].errors) == ["timezone"]
