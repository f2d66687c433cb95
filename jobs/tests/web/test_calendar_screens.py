"""The dashboard's business calendars and blackout windows: who may see and change them,
the models' messages at their fields, a calendar in use not deleted (409, naming its
jobs), and the next days off of a calendar's page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from jobs.models import Blackout, Calendar
from jobs.tests import personas
from jobs.tests.factories import make_job

pytestmark = pytest.mark.django_db

CALENDAR = {
    "name": "Tokyo office",
    "timezone": "Asia/Tokyo",
    "weekdays": ["0", "1", "2", "3", "4"],
    "country": "jp",
    "subdivision": "",
    "extra_days_off": "2026-12-29\n2026-12-30",
    "extra_working_days": "",
}


def as_(persona: str):  # type: ignore[no-untyped-def]
    return personas.signed_in(getattr(personas, persona)())


def test_a_job_admin_creates_a_calendar_and_sees_its_next_days_off() -> None:
    admin = as_("job_admin")
    answer = admin.post(reverse("jobs:calendar_create"), CALENDAR)
    assert answer.status_code == 302 and answer["Location"] == reverse("jobs:calendar_list")
    calendar = Calendar.objects.get()
    assert calendar.country == "JP"  # the model's normalising
    assert calendar.weekdays == [0, 1, 2, 3, 4]
    assert calendar.extra_days_off == ["2026-12-29", "2026-12-30"]
    listing = admin.get(reverse("jobs:calendar_list"))
    assert "Tokyo office" in listing.content.decode()
    page = admin.get(reverse("jobs:calendar_edit", args=[calendar.pk]))
    days_off = page.context["days_off"]
    assert len(days_off) == 10
    assert [line.day for line in days_off] == sorted(line.day for line in days_off)
    today = timezone.now().date()
    assert all(today - timedelta(days=1) <= line.day for line in days_off)
    # Japan's holidays are named: the library's, with the country.
    new_year = [line for line in days_off if line.day.month == 1 and line.day.day == 1]
    assert not new_year or "(JP)" in new_year[0].reason


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"country": "XX"}, "country", "knows no country"),
        ({"subdivision": "ZZ"}, "subdivision", "knows no subdivision"),
        ({"weekdays": []}, "weekdays", "at least one weekday"),
        ({"extra_days_off": "2026-13-40"}, "extra_days_off", "is not a date"),
        ({"weekdays": ["9"]}, "weekdays", "Select a valid choice"),
    ],
)
def test_a_calendar_the_model_refuses_is_reported_at_its_field_and_not_saved(
    change, field, words
) -> None:
    answer = as_("job_admin").post(reverse("jobs:calendar_create"), {**CALENDAR, **change})
    assert answer.status_code == 400
    errors = answer.context["form"].errors
    assert words in " ".join(errors[field]), errors
    assert not Calendar.objects.exists()


def test_an_edit_the_model_refuses_changes_nothing() -> None:
    calendar = Calendar.objects.create(name="Berlin", country="DE")
    answer = as_("job_admin").post(
        reverse("jobs:calendar_edit", args=[calendar.pk]), {**CALENDAR, "country": "XX"}
    )
    assert answer.status_code == 400
    calendar.refresh_from_db()
    assert (calendar.name, calendar.country) == ("Berlin", "DE")


def test_a_calendar_in_use_is_not_deleted_and_its_jobs_are_named() -> None:
    calendar = Calendar.objects.create(name="Berlin", country="DE")
    make_job(name="payroll", calendar=calendar)
    make_job(name="invoices", calendar=calendar)
    admin = as_("job_admin")
    url = reverse("jobs:calendar_delete", args=[calendar.pk])
    page = admin.get(url)
    assert page.status_code == 200
    assert "invoices, payroll" in page.content.decode()
    refused = admin.post(url)
    assert refused.status_code == 409
    assert "invoices, payroll" in refused.content.decode()
    assert Calendar.objects.filter(pk=calendar.pk).exists()


def test_a_calendar_no_job_uses_is_deleted() -> None:
    calendar = Calendar.objects.create(name="Berlin", country="DE")
    answer = as_("job_admin").post(reverse("jobs:calendar_delete", args=[calendar.pk]))
    assert answer.status_code == 302
    assert not Calendar.objects.exists()


def test_viewers_read_the_lists_and_change_nothing() -> None:
    calendar = Calendar.objects.create(name="Berlin", country="DE")
    window = Blackout.objects.create(
        name="Freeze", starts_at=timezone.now(), ends_at=timezone.now() + timedelta(hours=1)
    )
    viewer = as_("viewer")
    for url in (reverse("jobs:calendar_list"), reverse("jobs:blackout_list")):
        page = viewer.get(url)
        assert page.status_code == 200
        assert "New calendar" not in page.content.decode()
    refusals = [
        viewer.post(reverse("jobs:calendar_create"), CALENDAR),
        viewer.post(reverse("jobs:calendar_edit", args=[calendar.pk]), CALENDAR),
        viewer.post(reverse("jobs:calendar_delete", args=[calendar.pk])),
        viewer.get(reverse("jobs:calendar_edit", args=[calendar.pk])),
        viewer.post(reverse("jobs:blackout_create"), {"name": "x"}),
        viewer.post(reverse("jobs:blackout_delete", args=[window.pk])),
        viewer.get(reverse("jobs:blackout_edit", args=[window.pk])),
    ]
    assert [answer.status_code for answer in refusals] == [403] * len(refusals)
    assert list(Calendar.objects.values_list("name", flat=True)) == ["Berlin"]
    assert Blackout.objects.count() == 1
    nobody = as_("nobody")
    assert nobody.get(reverse("jobs:calendar_list")).status_code == 403
    assert nobody.get(reverse("jobs:blackout_list")).status_code == 403


def test_unknown_ids_are_404() -> None:
    admin = as_("job_admin")
    for name in ("calendar_edit", "calendar_delete", "blackout_edit", "blackout_delete"):
        assert admin.get(reverse(f"jobs:{name}", args=[999999])).status_code == 404
    assert admin.get("/calendars/abc/").status_code == 404


def _local(moment) -> str:  # type: ignore[no-untyped-def]
    return timezone.localtime(moment).strftime("%Y-%m-%dT%H:%M")


def test_a_job_admin_makes_a_recurring_window_and_an_overlap_is_refused_at_its_field() -> None:
    admin = as_("job_admin")
    weekly = {
        "name": "Friday night",
        "action": "skip",
        "cron_expression": "0 22 * * 5",
        "duration_minutes": "120",
        "timezone": "Europe/Berlin",
        "scope": "all",
        "is_active": "on",
    }
    assert admin.post(reverse("jobs:blackout_create"), weekly).status_code == 302
    window = Blackout.objects.get()
    assert (window.cron_expression, window.duration_minutes) == ("0 22 * * 5", 120)
    overlap = admin.post(
        reverse("jobs:blackout_create"),
        {**weekly, "name": "Late Friday", "cron_expression": "0 23 * * 5"},
    )
    assert overlap.status_code == 400
    assert "overlaps the window “Friday night”" in " ".join(
        overlap.context["form"].errors["cron_expression"]
    )
    too_long = admin.post(
        reverse("jobs:blackout_create"),
        {**weekly, "name": "Daily", "cron_expression": "0 1 * * *", "duration_minutes": "1500"},
    )
    assert too_long.status_code == 400
    assert "shorter than the time between its starts" in " ".join(
        too_long.context["form"].errors["duration_minutes"]
    )
    assert Blackout.objects.count() == 1


def test_a_fixed_window_for_chosen_jobs_is_saved_in_the_user_s_zone_and_deleted() -> None:
    job = make_job(name="payroll")
    start = timezone.now().replace(second=0, microsecond=0) + timedelta(days=3)
    admin = as_("job_admin")
    fixed = {
        "name": "Migration",
        "action": "defer",
        "starts_at": _local(start),
        "ends_at": _local(start + timedelta(hours=2)),
        "scope": "jobs",
        "jobs": [str(job.pk)],
        "is_active": "on",
    }
    assert admin.post(reverse("jobs:blackout_create"), fixed).status_code == 302
    window = Blackout.objects.get()
    assert window.starts_at == start and list(window.jobs.all()) == [job]
    backwards = admin.post(
        reverse("jobs:blackout_edit", args=[window.pk]),
        {**fixed, "ends_at": _local(start - timedelta(hours=1))},
    )
    assert backwards.status_code == 400 and "ends_at" in backwards.context["form"].errors
    window.refresh_from_db()
    assert window.ends_at == start + timedelta(hours=2)
    assert admin.post(reverse("jobs:blackout_delete", args=[window.pk])).status_code == 302
    assert not Blackout.objects.exists()


def test_the_menu_and_the_job_form_link_the_calendars() -> None:
    admin = as_("job_admin")
    page = admin.get(reverse("jobs:job_create")).content.decode()
    assert 'id="calendars-link"' in page
    assert f'href="{reverse("jobs:calendar_list")}"' in page


def test_a_new_calendar_s_form_ticks_monday_to_friday() -> None:
    page = as_("job_admin").get(reverse("jobs:calendar_create"))
    assert page.context["form"]["weekdays"].value() == [0, 1, 2, 3, 4]
