"""CronSchedule.next_after against a brute-force oracle, in every IANA zone, around each
zone's clock changes from 2020 to 2030.

The oracle (jobs/tests/cron_oracle.py) walks local time minute by minute. The property:
the next occurrence exists, is strictly after the moment, is a wall time the expression
names (or a gap's substitute), and the chain of next occurrences over a window is
exactly the oracle's list: no gap, no duplicate.

Bounded for the suite (a few seconds); `JOBS_PROPERTY_EXAMPLES=5000` runs a large one.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from functools import cache
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim, CronSimError
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from jobs.schedules.arithmetic import CHANGE_SPACING, CronSchedule, time_zone_names
from jobs.tests.cron_oracle import MINUTE, Expression, is_named_or_substitute, oracle

pytestmark = pytest.mark.once  # the same on every database and Django (pytest.ini)

EXAMPLES = int(os.environ.get("JOBS_PROPERTY_EXAMPLES", "60"))
ZONES = time_zone_names()
# The window compared with the oracle, after the moment.
WINDOW = timedelta(hours=30)
FIRST_YEAR, LAST_YEAR = 2020, 2030


@cache
def changes(name: str, first_year: int = FIRST_YEAR, last_year: int = LAST_YEAR) -> tuple:
    """The zone's offset changes in those years, to the minute: sampled daily (two
    changes are never within a day), then bisected."""
    zone = ZoneInfo(name)
    found = []
    low = datetime(first_year, 1, 1, tzinfo=UTC)
    end = datetime(last_year + 1, 1, 1, tzinfo=UTC)
    while low < end:
        high = low + timedelta(days=1)
        if low.astimezone(zone).utcoffset() != high.astimezone(zone).utcoffset():
            a, b = low, high
            while b - a > MINUTE:
                middle = a + (b - a) / 2
                if middle.astimezone(zone).utcoffset() == a.astimezone(zone).utcoffset():
                    a = middle
                else:
                    b = middle
            found.append(b.replace(second=0, microsecond=0))
        low = high
    return tuple(found)


# --- the expressions -------------------------------------------------------------------------


def field(low: int, high: int, near: list[int] | None = None) -> st.SearchStrategy[str]:
    number = st.integers(low, high)
    if near:
        number = st.one_of(number, st.sampled_from(near))
    pair = st.tuples(number, number).map(sorted)
    atom = st.one_of(
        st.just("*"),
        st.integers(1, high - low).map(lambda n: f"*/{n}"),
        number.map(str),
        pair.map(lambda p: f"{p[0]}-{p[1]}"),
        st.tuples(pair, st.integers(1, 20)).map(lambda x: f"{x[0][0]}-{x[0][1]}/{x[1]}"),
    )
    return st.one_of(atom, st.lists(atom, min_size=2, max_size=3).map(",".join))


@st.composite
def expressions(draw: st.DrawFn, around: datetime) -> str:
    """A valid five-field expression, biased towards the hour and day of `around` (a
    local time next to a clock change) so that gaps and repeated times are hit."""
    hours = sorted({around.hour, (around.hour + 1) % 24, (around.hour - 1) % 24})
    minute = draw(st.one_of(field(0, 59, [around.minute, 0, 30, 45]), st.just("0-59/5")))
    # Half the time the hours next to the change itself, as a wall-clock expression.
    hour = draw(st.one_of(field(0, 23, hours), st.sampled_from(hours).map(str)))
    dom = draw(
        st.one_of(st.just("*"), st.just("*"), st.just(str(around.day)), st.just("L"), field(1, 31))
    )
    month = draw(st.one_of(st.just("*"), st.just("*"), st.just(str(around.month)), field(1, 12)))
    weekday = draw(
        st.one_of(
            st.just("*"),
            st.just("*"),
            st.just(str(around.isoweekday() % 7)),
            st.sampled_from(["MON-FRI", "5L", "0#1", "*/2", "SAT,SUN"]),
            field(0, 7),
        )
    )
    text = f"{minute} {hour} {dom} {month} {weekday}"
    try:
        # Valid as the model sees it: cronsim reads it, and it names some minute within
        # 50 years (asked of cronsim on a naive clock, not of the code under test).
        next(CronSim(text, datetime(2020, 1, 1)))
    except (CronSimError, StopIteration):
        assume(False)
    return text


def _changes_in_2026(name: str) -> bool:
    zone = ZoneInfo(name)
    return (
        len({datetime(2026, month, 1, tzinfo=UTC).astimezone(zone).utcoffset() for month in (1, 7)})
        > 1
    )


# Zones with daylight saving (cheap to tell), drawn more often than the others.
SEASONAL = tuple(name for name in ZONES if _changes_in_2026(name))


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str, datetime]:
    name = draw(st.one_of(st.sampled_from(SEASONAL), st.sampled_from(ZONES)))
    near = changes(name)
    if near:
        # Mostly within three hours of a change, where the gaps and repeats are.
        spread = draw(st.sampled_from([3 * 3600, 3 * 3600, 30 * 3600]))
        moment = draw(st.sampled_from(near)) + timedelta(seconds=draw(st.integers(-spread, spread)))
    else:
        moment = datetime(FIRST_YEAR, 1, 1, tzinfo=UTC) + timedelta(
            seconds=draw(st.integers(0, 10 * 366 * 86400))
        )
    expression = draw(expressions(moment.astimezone(ZoneInfo(name)).replace(tzinfo=None)))
    return expression, name, moment


def check(text: str, name: str, moment: datetime) -> None:
    expression, zone = Expression(text), ZoneInfo(name)
    schedule = CronSchedule(text, name)
    first = schedule.next_after(moment)
    assert first is not None, "a valid expression always has a next occurrence"
    assert first > moment
    assert is_named_or_substitute(expression, zone, first), first
    end = moment + WINDOW
    chain = []
    at: datetime | None = first
    while at is not None and at <= end:
        chain.append(at)
        following = schedule.next_after(at)
        assert following is None or following > at
        at = following
    assert chain == oracle(expression, zone, moment, end)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(cases())
# The cases that went wrong before the search walked wall time, always tried.
@example(("*/10 3 * * *", "Pacific/Chatham", datetime(2026, 4, 4, 13, 50, tzinfo=UTC)))
@example(("* 3 * * *", "Pacific/Chatham", datetime(2026, 4, 4, 13, 50, tzinfo=UTC)))
@example(("* 2 * * *", "Australia/Lord_Howe", datetime(2026, 10, 3, 15, 10, tzinfo=UTC)))
@example(("45 * * * *", "Australia/Lord_Howe", datetime(2026, 4, 4, 14, tzinfo=UTC)))
@example(("0-59/5 2 * * *", "Europe/Berlin", datetime(2026, 10, 25, 1, 32, tzinfo=UTC)))
def test_next_occurrences_match_a_minute_by_minute_walk_of_local_time(case) -> None:  # type: ignore[no-untyped-def]
    check(*case)


# Expressions each zone is checked with at every one of its changes in 2026 (below).
SWEEP = ["*/10 * * * *", "30 * * * *", "*/7 1-3 * * *", "0-59/5 0-3 * * *", "45 23,0,1,2 * * *"]


def test_every_zone_at_each_of_its_changes_in_2026() -> None:
    for name in ZONES:
        for change in changes(name, 2026, 2026):
            for text in SWEEP:
                for moment in (change - timedelta(hours=3), change + timedelta(seconds=1)):
                    expression, zone = Expression(text), ZoneInfo(name)
                    schedule = CronSchedule(text, name)
                    end = moment + timedelta(hours=5)
                    chain = []
                    at = schedule.next_after(moment)
                    while at is not None and at <= end:
                        chain.append(at)
                        at = schedule.next_after(at)
                    # No change in 2026 moves a clock by more than 3 hours.
                    expected = oracle(expression, zone, moment, end, timedelta(hours=3))
                    assert chain == expected, (name, text, moment)


# --- the assumption the search rests on ------------------------------------------------


def test_no_zone_changes_its_offset_twice_within_the_change_spacing() -> None:
    """arithmetic.first_change compares offsets CHANGE_SPACING apart: sound only if no
    zone changes twice within that. Read from the tz database's own transition lists
    (the pure-Python zoneinfo keeps them; the C one does not show them)."""
    from zoneinfo import _zoneinfo  # type: ignore[attr-defined]

    closest = timedelta.max
    for name in ZONES:
        zone = _zoneinfo.ZoneInfo.no_cache(name)
        since_1900 = [
            moment
            for moment in (datetime.fromtimestamp(t, UTC) for t in zone._trans_utc)
            if moment.year >= 1900
        ]
        offsets = [moment.astimezone(ZoneInfo(name)).utcoffset() for moment in since_1900]
        # Only the changes of offset (some transitions change only the abbreviation).
        real = [
            moment
            for moment, offset, previous in zip(since_1900[1:], offsets[1:], offsets, strict=False)
            if offset != previous
        ]
        for a, b in pairwise(real):
            closest = min(closest, b - a)
    assert closest > CHANGE_SPACING, closest
