from __future__ import annotations

from collections.abc import Callable

import pytest
import time_machine
from django.core.cache import cache

from jobs import registry
from jobs.models import Job, JobHistory
from jobs.tests import factories
from jobs.tests.declaring import declaring
from jobs.tests.factories import NOW


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache: no API throttle counts or password-reset
    counts left by an earlier test (under a frozen clock they would never expire)."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def clock():
    """Frozen time that a test moves explicitly with clock.move_to(...) / clock.shift(...)."""
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def make_job(db) -> Callable[..., Job]:
    """factories.make_job, with the database enabled."""
    return factories.make_job


@pytest.fixture
def make_run(db) -> Callable[..., JobHistory]:
    """factories.make_run, with the database enabled."""
    return factories.make_run


@pytest.fixture
def instant(settings):
    """Runs take no time and always succeed, unless a test changes the failure rate."""
    settings.JOBS_SIM_MIN_SECONDS = 0
    settings.JOBS_SIM_MAX_SECONDS = 0
    settings.JOBS_SIM_FAILURE_RATE = 0
    return settings


@pytest.fixture
def declare():
    """Declare schedules in code (jobs.tests.declaring), forgotten after the test."""
    names: set[str] = set()
    yield declaring(names)
    for name in names:
        registry.unregister(name)
