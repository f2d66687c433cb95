"""Run in the host project (host_settings): one schedule of every kind, made by
django-celery-beat's and django-q2's own models, as a team using them would have them.

    SOURCE_DB=file DJANGO_SETTINGS_MODULE=jobs.tests.imports.host_settings \\
        .venv/bin/python -m jobs.tests.imports.host_rows
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import django


def beat_rows() -> None:
    from django_celery_beat.models import (
        ClockedSchedule,
        CrontabSchedule,
        IntervalSchedule,
        PeriodicTask,
        SolarSchedule,
    )

    tokyo = CrontabSchedule.objects.create(
        minute="30", hour="9", day_of_week="1-5", timezone="Asia/Tokyo"
    )
    six = CrontabSchedule.objects.create(minute="0", hour="6", timezone="UTC")
    four = CrontabSchedule.objects.create(minute="0", hour="4", timezone="UTC")
    quarter = IntervalSchedule.objects.create(every=15, period=IntervalSchedule.MINUTES)
    hourly = IntervalSchedule.objects.create(every=1, period=IntervalSchedule.HOURS)
    daily = IntervalSchedule.objects.create(every=1, period=IntervalSchedule.DAYS)
    launch = ClockedSchedule.objects.create(clocked_time=datetime(2027, 1, 5, 12, 0, tzinfo=UTC))
    sunrise = SolarSchedule.objects.create(event="sunrise", latitude=35.68, longitude=139.69)
    PeriodicTask.objects.create(
        name="invoices",
        task="billing.send_invoices",
        crontab=tokyo,
        args=json.dumps([1, "a"]),
        kwargs=json.dumps({"day": "today"}),
        queue="billing",
        priority=5,
        description="Send the day's invoices.",
    )
    PeriodicTask.objects.create(
        name="cache refresh",
        task="cache.refresh",
        interval=quarter,
        start_time=datetime(2027, 1, 1, tzinfo=UTC),
        expires=datetime(2030, 1, 1, tzinfo=UTC),
    )
    PeriodicTask.objects.create(name="launch", task="launch.go", clocked=launch, one_off=True)
    PeriodicTask.objects.create(
        name="morning report", task="reports.build", crontab=six, one_off=True
    )
    PeriodicTask.objects.create(
        name="legacy sync", task="legacy.sync", interval=hourly, enabled=False
    )
    PeriodicTask.objects.create(
        name="promotion",
        task="promo.end",
        interval=daily,
        expires=datetime(2020, 1, 1, tzinfo=UTC),
    )
    PeriodicTask.objects.create(name="tides", task="tides.check", solar=sunrise)
    PeriodicTask.objects.create(
        name="celery.backend_cleanup", task="celery.backend_cleanup", crontab=four
    )


def q_rows() -> None:
    from django_q.models import Schedule

    tasks = "jobs.tests.sample_tasks"
    Schedule.objects.create(
        name="daily invoices",
        func=f"{tasks}.send_invoices",
        kwargs="{'day': 'yesterday'}",
        schedule_type=Schedule.DAILY,
        next_run=datetime(2027, 1, 1, 7, 30, tzinfo=UTC),
        cluster="billing",
    )
    Schedule.objects.create(
        name="every ten",
        func=f"{tasks}.record",
        args="'k', 3",
        schedule_type=Schedule.MINUTES,
        minutes=10,
        next_run=datetime(2027, 1, 1, tzinfo=UTC),
    )
    # bulk_create: Schedule.save() computes a cron schedule's next run with croniter,
    # which this project does not need; the row is the same.
    Schedule.objects.bulk_create(
        [
            Schedule(
                name="mondays",
                func=f"{tasks}.send_invoices",
                kwargs="day='monday'",
                schedule_type=Schedule.CRON,
                cron="0 8 * * 1",
                next_run=datetime(2027, 1, 4, 8, tzinfo=UTC),
            )
        ]
    )
    Schedule.objects.create(
        name="shell out", func="os.system", args="'date'", schedule_type=Schedule.HOURLY
    )
    Schedule.objects.create(
        name="once",
        func=f"{tasks}.record",
        kwargs="{'key': 'once'}",
        schedule_type=Schedule.ONCE,
        next_run=datetime(2027, 2, 1, tzinfo=UTC),
    )
    Schedule.objects.create(
        name="monthly, done",
        func=f"{tasks}.send_invoices",
        schedule_type=Schedule.MONTHLY,
        next_run=datetime(2027, 1, 15, 9, tzinfo=UTC),
        repeats=0,
    )
    Schedule.objects.create(
        name="not literals",
        func=f"{tasks}.record",
        args="__import__('os').getcwd()",
        schedule_type=Schedule.HOURLY,
    )


if __name__ == "__main__":
    django.setup()
    beat_rows()
    q_rows()
