"""The real claim, one scheduler pass at a time under frozen time, across the clock
changes of Pacific/Chatham (at :45) and Europe/Berlin: every occurrence the brute-force
oracle lists runs exactly once, none early, and the job stays active on its way."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from jobs.models import JobHistory
from jobs.runtime.scheduler import Scheduler
from jobs.tests.cron_oracle import Expression, oracle

pytestmark = pytest.mark.django_db

SECOND = timedelta(seconds=1)
# (zone, the instant its clocks change): back and forward, 2026.
CHANGES = [
    ("Pacific/Chatham", datetime(2026, 4, 4, 14, 0, tzinfo=UTC)),  # 03:45 +13:45 -> 02:45
    ("Pacific/Chatham", datetime(2026, 9, 26, 14, 0, tzinfo=UTC)),  # 02:45 +12:45 -> 03:45
    ("Europe/Berlin", datetime(2026, 10, 25, 1, 0, tzinfo=UTC)),  # 03:00 CEST -> 02:00 CET
    ("Europe/Berlin", datetime(2026, 3, 29, 1, 0, tzinfo=UTC)),  # 02:00 CET -> 03:00 CEST
]
EXPRESSIONS = ["*/10 3 * * *", "* 3 * * *", "0-59/5 2 * * *", "30 2 * * *", "*/15 * * * *"]


@pytest.mark.parametrize(("zone", "change"), CHANGES)
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_every_occurrence_across_the_change_runs_once_and_the_job_stays_active(
    make_job, clock, zone: str, change: datetime, expression: str
) -> None:
    start, end = change - timedelta(hours=3), change + timedelta(hours=3)
    expected = oracle(Expression(expression), ZoneInfo(zone), start, end)
    following = oracle(Expression(expression), ZoneInfo(zone), end, end + timedelta(days=2))[0]
    clock.move_to(start)
    job = make_job(schedule_type="cron", cron_expression=expression, timezone=zone)
    scheduler = Scheduler(workers=1)  # its workers never start: the runs stay pending
    for moment in expected:
        clock.move_to(moment - SECOND)
        scheduler.run_pass()
        assert not job.runs.filter(scheduled_for__gte=moment).exists(), f"early at {moment}"
        clock.move_to(moment)
        scheduler.run_pass()
        job.refresh_from_db()
        assert job.is_active
    clock.move_to(end)
    scheduler.run_pass()
    claimed = list(
        JobHistory.objects.filter(job=job)
        .order_by("scheduled_for", "attempt")
        .values_list("scheduled_for", flat=True)
    )
    assert claimed == expected
    job.refresh_from_db()
    assert (job.is_active, job.next_run_at) == (True, following)
