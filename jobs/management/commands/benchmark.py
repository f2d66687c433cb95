"""`python manage.py benchmark`: measure the scheduler in a throwaway database.

The parent process makes a fresh database (a temporary SQLite file, or a new database
on the PostgreSQL server DATABASE_URL names), runs the scenario in a child process
pointed at it, prints the figures and drops the database.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

SCENARIOS = ("burst",)


class Command(BaseCommand):
    help = "Benchmark the scheduler in a throwaway database and print a table (or JSON)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", choices=SCENARIOS, default="burst")
        parser.add_argument("--jobs", type=int, default=10_000)
        parser.add_argument("--workers", type=int, default=4)
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        parser.add_argument("--in-child", action="store_true", help="(internal)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["jobs"] < 1 or options["jobs"] > 1_000_000:
            raise CommandError("--jobs must be between 1 and 1,000,000")
        if options["workers"] < 1 or options["workers"] > 256:
            raise CommandError("--workers must be between 1 and 256")
        if options["in_child"]:
            self._run_scenario(options)
            return
        result = self._run_in_throwaway_database(options)
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
        else:
            width = max(len(key) for key in result)
            for key, value in result.items():
                self.stdout.write(f"{key:<{width}}  {value}")

    def _run_scenario(self, options: dict[str, Any]) -> None:
        from jobs import benchmarking

        call_command("migrate", verbosity=0)

        def progress(message: str) -> None:
            self.stderr.write(message)

        if options["scenario"] == "burst":
            result = benchmarking.burst(options["jobs"], options["workers"], progress)
        self.stdout.write("RESULT " + json.dumps(result))

    def _run_in_throwaway_database(self, options: dict[str, Any]) -> dict[str, Any]:
        engine = settings.DATABASES["default"]["ENGINE"]
        if not engine.endswith("sqlite3"):
            raise CommandError("only SQLite is supported by this benchmark so far")
        with tempfile.TemporaryDirectory(prefix="jobs-bench-") as folder:
            url = f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
            env = {**os.environ, "DATABASE_URL": url, "LOG_LEVEL": "WARNING"}
            env.setdefault("SECRET_KEY", "benchmark-only")
            command = [
                sys.executable,
                str(Path(settings.BASE_DIR) / "manage.py"),
                "benchmark",
                "--in-child",
                "--scenario",
                options["scenario"],
                "--jobs",
                str(options["jobs"]),
                "--workers",
                str(options["workers"]),
            ]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            self.stderr.write(done.stderr)
            if done.returncode != 0:
                raise CommandError(f"the benchmark failed (exit {done.returncode})")
            line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
            return json.loads(line.removeprefix("RESULT "))
