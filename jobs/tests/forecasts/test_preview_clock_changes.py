"""The preview's daylight-saving notes where clocks move by 30 minutes or at :45, and
where a gap crosses midnight: each note says what the scheduler does, on the right day."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from jobs.forecasts import preview

pytestmark = pytest.mark.django_db


def shown(expression: str, zone: str, start: datetime, count: int) -> list[tuple[str, str | None]]:
    job = preview.schedule_job(
        {"schedule_type": "cron", "cron_expression": expression, "timezone": zone}
    )
    result = preview.preview(job, count=count, start=start)
    assert result.errors == {}
    return [(o.local.isoformat(timespec="minutes"), o.note) for o in result.occurrences]


def test_a_gap_that_ends_after_midnight_is_said_on_the_day_of_the_missing_time():
    # Asia/Pyongyang, 4 May 2018: at 23:30 +08:30 the clocks went to 00:00 +09:00 (5 May).
    first = shown("30 23 * * *", "Asia/Pyongyang", datetime(2018, 5, 4, 12, tzinfo=UTC), 2)[0]
    assert first == (
        "2018-05-05T00:00+09:00",
        "23:30 does not exist on 4 May 2018: runs at 00:00 KST",
    )


def test_the_day_apia_skipped_is_named_as_the_day_that_did_not_exist():
    # Pacific/Apia skipped 30 December 2011 whole: 29 December 23:59 -10 to 31 December.
    times = shown("30 2 * * *", "Pacific/Apia", datetime(2011, 12, 29, 12, 30, tzinfo=UTC), 2)
    assert times[0] == (
        "2011-12-31T00:00+14:00",
        "02:30 does not exist on 30 December 2011: runs at 00:00 +14",
    )


def test_lord_howe_hourly_runs_at_both_0145s_and_the_note_says_so():
    # 5 April 2026: at 02:00 +11 the clocks go back 30 minutes to 01:30 +10:30.
    times = shown("45 * * * *", "Australia/Lord_Howe", datetime(2026, 4, 4, 14, tzinfo=UTC), 3)
    assert times == [
        (
            "2026-04-05T01:45+11:00",
            "01:45 happens twice on 5 April 2026: runs at both, first in +11",
        ),
        (
            "2026-04-05T01:45+10:30",
            "01:45 again on 5 April 2026, now in +1030: the clocks went back",
        ),
        ("2026-04-05T02:45+10:30", None),
    ]


def test_lord_howe_fixed_time_runs_at_the_first_0145_only_and_the_note_says_so():
    times = shown("45 1 * * *", "Australia/Lord_Howe", datetime(2026, 4, 4, 14, tzinfo=UTC), 2)
    assert times == [
        (
            "2026-04-05T01:45+11:00",
            "01:45 happens twice on 5 April 2026: the first 01:45 only (+11)",
        ),
        ("2026-04-06T01:45+10:30", None),
    ]


CASES = [
    (expression, zone, start)
    for zone, start in [
        ("Australia/Lord_Howe", datetime(2026, 4, 4, 13, tzinfo=UTC)),
        ("Australia/Lord_Howe", datetime(2026, 10, 3, 14, tzinfo=UTC)),
        ("Pacific/Chatham", datetime(2026, 4, 4, 12, tzinfo=UTC)),
        ("Pacific/Chatham", datetime(2026, 9, 26, 12, tzinfo=UTC)),
        ("Europe/Berlin", datetime(2026, 10, 24, 23, tzinfo=UTC)),
    ]
    for expression in ["45 * * * *", "45 */1 * * *", "*/10 1-3 * * *", "0-59/10 1-3 * * *"]
]


@pytest.mark.parametrize(("expression", "zone", "start"), CASES)
def test_every_repeated_time_note_says_what_the_scheduler_then_does(
    expression: str, zone: str, start: datetime
) -> None:
    times = shown(expression, zone, start, 40)
    locals_ = [at for at, _note in times]
    for at, note in times:
        if note is None:
            continue
        both = re.match(r"(\d\d:\d\d) happens twice on .*: runs at both", note)
        first_only = re.match(r"(\d\d:\d\d) happens twice on .*: the first \1 only", note)
        again = [
            other for other in locals_ if other[:16].endswith(at[11:16]) and other[:10] == at[:10]
        ]
        if both:
            assert len(again) == 2, (note, again)
        if first_only:
            assert again == [at], (note, again)
