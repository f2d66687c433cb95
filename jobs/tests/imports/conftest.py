"""A real django-celery-beat and django-q2 schema: migrated once per session by a
`migrate` child process into a private SQLite file and filled by their own models
(host_rows.py), then copied for each test."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import time_machine
from django.conf import settings

# The tests' present: before every schedule host_rows.py makes starts (2027).
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def frozen() -> Iterator[time_machine.Traveller]:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


def url(path: Path) -> str:
    """The SOURCE argument naming a SQLite file."""
    return f"sqlite:///{path}"


def make_host_database(location: str) -> None:
    """Migrate the host project into `location` (a SQLite path or a database URL) and fill
    it with host_rows.py, each in a child process, as that project would."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "jobs.tests.imports.host_settings",
        "SOURCE_DB": location,
    }
    for command in (["-m", "django", "migrate", "-v0"], ["-m", "jobs.tests.imports.host_rows"]):
        subprocess.run(
            [sys.executable, *command], cwd=settings.BASE_DIR, env=env, check=True, timeout=300
        )


@pytest.fixture(scope="session")
def migrated_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("source") / "migrated.sqlite3"
    make_host_database(str(path))
    return path


@pytest.fixture
def source_db(migrated_source: Path, tmp_path: Path) -> Iterator[Path]:
    """A fresh copy of the migrated schema, for one test."""
    path = tmp_path / "source.sqlite3"
    shutil.copy(migrated_source, path)
    yield path


def sql(path: Path, statement: str, parameters: tuple = ()) -> list[tuple]:
    """Run one statement on the source file, as the other project would."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute(statement, parameters).fetchall()
    connection.close()
    return rows
