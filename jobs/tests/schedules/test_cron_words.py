"""A cron step that does not divide its field restarts at 0 each hour (or day): the words
say what it does, in English and in Japanese."""

from __future__ import annotations

import pytest
from django.utils import translation

from jobs.schedules.words import describe_cron


@pytest.mark.parametrize(
    ("expression", "english", "japanese"),
    [
        ("*/45 * * * *", "At :00 and :45 of every hour", "毎時00分 と 45分"),
        ("*/25 * * * *", "At :00, :25 and :50 of every hour", "毎時00分, 25分 と 50分"),
        (
            "*/7 * * * *",
            "Every 7 minutes from :00 to :56 of every hour",
            "毎時00分から56分まで7分ごと",
        ),
        ("*/15 * * * *", "Every 15 minutes", "15分ごと"),
        (
            "0 */5 * * *",
            "Every 5 hours from 00:00 to 20:00 every day",
            "毎日 00:00から20:00まで5時間ごと",
        ),
        (
            "30 */7 * * *",
            "At 00:30, 07:30, 14:30 and 21:30 every day",
            "毎日 00:30, 07:30, 14:30 と 21:30",
        ),
        ("0 */8 * * *", "At 00:00, 08:00 and 16:00 every day", "毎日 00:00, 08:00 と 16:00"),
        ("15 */1 * * *", "At minute 15 of every hour", "毎時15分"),
    ],
)
def test_a_step_is_said_as_what_it_runs(expression: str, english: str, japanese: str) -> None:
    with translation.override("en"):
        assert describe_cron(expression) == english
    with translation.override("ja"):
        assert describe_cron(expression) == japanese
