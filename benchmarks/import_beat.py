"""What `importschedules --from celery-beat` costs with many periodic tasks.

    .venv/bin/python benchmarks/import_beat.py [--tasks 2000]

Builds throwaway SQLite files in a temporary folder: a host project's database with
django-celery-beat's real schema (migrated by a child process with
jobs/tests/imports/host_settings.py) holding --tasks crontab tasks, and this site's
database (migrated). Then times, each as its own `manage.py importschedules` process as
an operator runs it (start-up included): the first import (every job created), a second
one (every job unchanged), `--check`, and an import after every task's kwargs changed
(every job updated).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

INSERT = (
    "INSERT INTO django_celery_beat_periodictask (name, task, args, kwargs, queue, enabled, "
    "total_run_count, date_changed, description, crontab_id, one_off, priority, headers) "
    "VALUES (?, 'billing.send', ?, ?, 'billing', 1, 0, '2026-12-01 00:00:00', '', 1, 0, 5, '{}')"
)


def run(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed:\n{done.stderr}")
    return elapsed, (done.stdout.strip().splitlines() or [""])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=2000, help="periodic tasks in beat")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="import-beat-") as folder:
        beat, site = Path(folder) / "beat.sqlite3", Path(folder) / "site.sqlite3"
        host = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "jobs.tests.imports.host_settings",
            "SOURCE_DB": str(beat),
        }
        run([PYTHON, "-m", "django", "migrate", "-v0"], host)
        with sqlite3.connect(beat) as connection:
            connection.execute(
                "INSERT INTO django_celery_beat_crontabschedule (id, minute, hour, day_of_week,"
                " day_of_month, month_of_year, timezone) VALUES (1, '30', '9', '1-5', '*', '*',"
                " 'Asia/Tokyo')"
            )
            numbers = range(options.tasks)
            rows = [(f"task {n}", json.dumps([n]), json.dumps({"n": n})) for n in numbers]
            connection.executemany(INSERT, rows)
        connection.close()
        ours = {**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{site}", "ENV_FILE": ""}
        manage = [PYTHON, "manage.py"]
        run([*manage, "migrate", "-v0"], ours)
        command = [*manage, "importschedules", "--from", "celery-beat", f"sqlite:///{beat}"]
        print(f"{options.tasks} beat tasks (crontab in Asia/Tokyo, args, kwargs, queue)")
        for label, extra in (("first import", []), ("again", []), ("--check", ["--check"])):
            elapsed, last = run([*command, *extra], ours)
            print(f"{label:>14}: {elapsed:6.2f} s  {last}")
        with sqlite3.connect(beat) as connection:
            connection.execute("UPDATE django_celery_beat_periodictask SET kwargs = '{\"n\": 0}'")
        connection.close()
        elapsed, last = run(command, ours)
        print(f"{'all changed':>14}: {elapsed:6.2f} s  {last}")


if __name__ == "__main__":
    main()
