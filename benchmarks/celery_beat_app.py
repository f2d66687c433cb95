"""The Celery app of benchmarks/celery_burst.py's beat: the tests' app, with a static
schedule of BENCH_BEAT_ENTRIES entries of jobs_tests.add, all due together every
BENCH_BEAT_DUE_SECONDS (first that long after beat starts)."""

from __future__ import annotations

import os
from datetime import timedelta

from jobs.tests.celery_tasks import app

app.conf.beat_schedule = {
    f"bench-{index:05d}": {
        "task": "jobs_tests.add",
        "schedule": timedelta(seconds=float(os.environ["BENCH_BEAT_DUE_SECONDS"])),
        "args": (2, 3),
    }
    for index in range(int(os.environ["BENCH_BEAT_ENTRIES"]))
}
