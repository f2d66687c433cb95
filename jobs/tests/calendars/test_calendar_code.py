"""@register(..., calendar=, calendar_policy=, jitter=) and syncjobs: the calendar by
name, bad values refused naming the word, nothing saved."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jobs.models import Calendar, Job
from jobs.tests.declaring import TASK, code_job, syncjobs

pytestmark = pytest.mark.django_db


@pytest.fixture
def japan() -> Calendar:
    return Calendar.objects.create(name="Japan", country="JP", timezone="Asia/Tokyo")


def test_a_declaration_names_its_calendar_policy_and_jitter(clock, declare, japan):
    declare(
        cron="0 9 * * *",
        timezone="Asia/Tokyo",
        calendar="Japan",
        calendar_policy="next_business_day",
        jitter=120,
    )
    synced = syncjobs()
    assert synced.status == 0, synced.output
    job = code_job()
    assert (job.calendar, job.calendar_policy, job.jitter_seconds) == (
        japan,
        "next_business_day",
        120,
    )
    # 1 March 2026 is a Sunday: the next business day's 09:00 in Tokyo, 2 March 00:00 UTC.
    assert job.next_run_at == datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
    assert "0 created, 0 updated, 1 unchanged" in syncjobs().output


@pytest.mark.parametrize(
    ("words", "says"),
    [
        ({"calendar": "Atlantis"}, "calendar= names no business calendar"),
        ({"jitter": 4000}, "3600"),
        ({"calendar_policy": "whenever"}, "whenever"),
    ],
)
def test_bad_calendar_words_are_refused_and_nothing_is_saved(clock, declare, japan, words, says):
    declare(cron="0 9 * * *", **words)
    synced = syncjobs()
    assert synced.status == 2
    assert says in synced.output
    assert not Job.objects.filter(code_key__startswith=TASK).exists()
