from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine

from jobs.models import Job

# Every time-driven test starts here unless it says otherwise.
NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def clock():
    """Frozen time that a test moves explicitly with clock.move_to(...) / clock.shift(...)."""
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def make_job(db) -> Callable[..., Job]:
    """Build and save a job through Job.save(), as every entry point does."""

    def make(**fields: Any) -> Job:
        defaults: dict[str, Any] = {
            "name": "backup",
            "command": "backup.sh",
            "schedule_type": "interval",
            "interval": 10,
            "interval_unit": "second",
        }
        defaults.update(fields)
        job = Job(**defaults)
        job.save()
        return job

    return make


@pytest.fixture
def instant(settings):
    """Runs take no time and always succeed, unless a test changes the failure rate."""
    settings.JOBS_SIM_MIN_SECONDS = 0
    settings.JOBS_SIM_MAX_SECONDS = 0
    settings.JOBS_SIM_FAILURE_RATE = 0
    return settings
