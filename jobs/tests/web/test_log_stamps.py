"""Log text never breaks a page: a line shaped like the scheduler's UTC stamp but not a
time that exists (month 13, or a year that leaves the calendar once moved to the viewer's
zone) is shown as written, on the run page, its live fragment, the admin and the API."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from jobs.tests.factories import make_run

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db

# East of UTC the last second of year 9999 moves into year 10000; west, the first second
# of year 1 moves into year 0: neither exists for datetime.
EAST = "Pacific/Kiritimati"
WEST = "America/Los_Angeles"
FAKE_STAMPS = [
    "[2026-13-45 00:00:00 UTC]",
    "[2026-02-30 25:61:61 UTC]",
    "[9999-12-31 23:59:59 UTC]",
    "[0001-01-01 00:00:00 UTC]",
    "[0000-01-01 00:00:00 UTC]",
]


@pytest.mark.parametrize("zone", [EAST, WEST, "UTC"])
@pytest.mark.parametrize("stamp", FAKE_STAMPS)
def test_a_fake_stamp_in_the_log_is_shown_as_written_on_every_page(
    signed_in: Client, zone: str, stamp: str
) -> None:
    run = make_run(log=f"$ echo\n{stamp} printed by the job\n")
    signed_in.cookies["tz"] = zone
    urls = [
        reverse("jobs:run_detail", args=[run.pk]),
        reverse("admin:jobs_jobhistory_change", args=[run.pk]),
        f"/api/v1/runs/{run.pk}/",
    ]
    for url in urls:
        response = signed_in.get(url)
        assert response.status_code == 200, url
        assert "] printed by the job" in response.text, url
    fragment = signed_in.get(urls[0], headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert "] printed by the job" in fragment.text
    # A stamp that is no time at all, or none in the viewer's zone, stays as written.
    shown = signed_in.get(urls[0]).text
    if stamp.startswith(("[2026-13", "[2026-02-30", "[0000")):
        assert f"{stamp} printed by the job" in shown


@pytest.mark.parametrize("zone", [EAST, WEST])
def test_real_stamps_beside_a_fake_one_still_move_to_the_viewers_zone(
    signed_in: Client, zone: str
) -> None:
    run = make_run(log="[2026-13-45 00:00:00 UTC] fake\n[2026-03-01 12:00:00 UTC] cancelled.\n")
    signed_in.cookies["tz"] = zone
    page = signed_in.get(reverse("jobs:run_detail", args=[run.pk])).text
    assert "[2026-13-45 00:00:00 UTC] fake" in page
    local = "2026-03-02 02:00:00 +14" if zone == EAST else "2026-03-01 04:00:00 PST"
    assert f">{local}</time>] cancelled." in page
