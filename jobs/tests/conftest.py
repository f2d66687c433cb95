from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import time_machine
from django.core.cache import cache

from jobs.conf import shared_cache
from jobs.models import Job, JobHistory
from jobs.pytasks import registry
from jobs.tests import factories
from jobs.tests.declaring import declaring
from jobs.tests.factories import NOW


def _alone_files(config: pytest.Config) -> tuple[Path, Path, Path] | None:
    """The lock files the pytest-xdist workers of this one run share (None without xdist):
    beside the workers' temporary folders (xdist gives each one .../popen-gwN), which
    pytest prunes, or else in the system's."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        return None
    worker_temp = config.option.basetemp
    folder = Path(worker_temp).parent if worker_temp else Path(tempfile.gettempdir())
    base = folder / f"jobs-tests-{run}"
    return Path(f"{base}.turnstile"), Path(f"{base}.lock"), Path(f"{base}.generation")


_seen_generation = ""

# Fixtures that reach the database (pytest-django's, and this file's that build rows).
_DATABASE_FIXTURES = {"db", "transactional_db", "django_db_setup", "live_server", "make_job"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The unit tier: a test that needs no database, no process and no browser is marked
    `unit`, so `scripts/test -m unit` runs the pure code's tests in seconds (the test
    database is never made)."""
    for item in items:
        if any(item.get_closest_marker(name) for name in ("django_db", "processes", "browser")):
            continue
        if _DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())):
            continue
        item.add_marker(pytest.mark.unit)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A test marked `alone` (it restarts the PostgreSQL server every worker's test
    database lives on) runs while no other worker runs a test: the others' tests hold a
    shared lock from their set-up to their teardown, and that test the exclusive one. The
    turnstile keeps the others from starting new tests while it waits for the lock.
    Afterwards each worker drops its connections, which the restart cut, before its next
    test. Without pytest-xdist there is nothing to share, and nothing is locked."""
    global _seen_generation
    files = _alone_files(item.config)
    if files is None:
        return (yield)
    turnstile_path, lock_path, generation_path = files
    alone = item.get_closest_marker("alone") is not None
    with open(turnstile_path, "a") as turnstile, open(lock_path, "a") as lock:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if alone:
            fcntl.flock(lock, fcntl.LOCK_EX)
        else:
            fcntl.flock(lock, fcntl.LOCK_SH)
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        generation = generation_path.read_text() if generation_path.exists() else ""
        if generation != _seen_generation:
            from django.db import connections

            connections.close_all()
            _seen_generation = generation
        try:
            return (yield)
        finally:
            if alone:
                _seen_generation = f"{os.getpid()} {item.nodeid}"
                generation_path.write_text(_seen_generation)
            # Closing the files releases both locks.


# The fixtures that open the database to a test (pytest-django's).
_DB_ACCESS_FIXTURES = (
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
)


@pytest.fixture(autouse=True)
def _fresh_cache(request):  # type: ignore[no-untyped-def]
    """Each test starts with empty caches: no API throttle counts or password-reset
    counts left by an earlier test (under a frozen clock they would never expire).

    The shared cache is a table of the test database: emptied only for a test that may use
    the database (a rolled-back test leaves nothing in it; a transactional one would)."""
    cache.clear()
    if request.node.get_closest_marker("django_db") or any(
        name in request.fixturenames for name in _DB_ACCESS_FIXTURES
    ):
        request.getfixturevalue("_django_db_helper")
        shared_cache().clear()
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
