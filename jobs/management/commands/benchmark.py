"""`python manage.py benchmark`: measure the scheduler in a throwaway database.

For every scenario (and every size asked for) the parent process makes a fresh database,
a temporary SQLite file or a new database `bench_<random>` on the PostgreSQL server
DATABASE_URL names, runs the scenario in a child process pointed at it (so each starts
from a clean process: memory figures mean something), and drops the database at the end,
whatever happened. Progress goes to stderr, the figures to stdout as tables or `--json`.
The options and the plan are jobs/bench/options.py and plan.py; the child's side is
jobs/bench/child.py.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs import conf
from jobs.bench import options as bench_options
from jobs.bench.plan import describe, plan, support
from jobs.bench.report import format_report

__all__ = ["Command", "format_report", "throwaway_database"]


class Command(BaseCommand):
    help = (
        "Benchmark the scheduler in a throwaway database (SQLite, or a new database on the "
        "PostgreSQL server DATABASE_URL names) and print tables or JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        bench_options.add_arguments(parser)
        parser.add_argument("--child", default=None, help="(internal) run one scenario here")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["child"]:
            from jobs.bench.child import run_spec

            result = run_spec(json.loads(options["child"]))
            self.stdout.write("RESULT " + json.dumps(result))
            return
        if not getattr(settings, "DATABASE_URL", ""):
            # Each scenario's process is pointed at a throwaway database through the
            # DATABASE_URL variable, which only the standalone site's settings read: in
            # another project it would fill that project's own database.
            raise CommandError(
                "benchmark runs in the standalone project (scheduler_site), whose settings "
                "read DATABASE_URL"
            )
        specs = plan(options)
        from jobs.bench.machine import load_average, machine_info

        machine = machine_info()
        results = []
        for index, spec in enumerate(specs, start=1):
            self.stderr.write(f"== {index}/{len(specs)}: {describe(spec)} ==")
            profile = options["py_spy"]
            if profile is not None and index > 1:
                profile = profile.with_name(f"{profile.stem}-{index}{profile.suffix}")
            results.append(self._run(spec, options["db_file"], profile))
        machine["load_average_end"] = load_average()
        if results:
            machine["database_version"] = results[0].pop("database_version", None)
            for result in results[1:]:
                result.pop("database_version", None)
        report = {"machine": machine, "results": results}
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(format_report(report))

    # --- the parent: a database and a process per scenario --------------------------

    def _run(
        self, spec: dict[str, Any], db_file: Path | None, profile: Path | None
    ) -> dict[str, Any]:
        began = time.perf_counter()
        with throwaway_database(db_file if spec["scenario"] == "pages" else None) as url:
            env = {
                **os.environ,
                "DATABASE_URL": url,
                "LOG_LEVEL": "WARNING",
                # Debug mode would keep every query in memory.
                "DEBUG": "false",
                "ALLOWED_HOSTS": "testserver,localhost",
                "PYTHONUNBUFFERED": "1",
            }
            if len(env.get("SECRET_KEY", "")) < conf.min_secret_key_length():
                # DEBUG is off in the child, which refuses a short key; this one is
                # thrown away with the database.
                env["SECRET_KEY"] = secrets.token_urlsafe(50)
            command = [
                sys.executable,
                str(conf.project_dir() / "manage.py"),
                "benchmark",
                "--child",
                json.dumps(spec),
            ]
            if profile is not None:
                py_spy = shutil.which("py-spy")
                if py_spy is None:
                    raise CommandError("--py-spy needs py-spy: pip install py-spy")
                # Raw collapsed stacks, every thread, idle ones left out.
                command = [py_spy, "record", "--format", "raw", "--output", str(profile),
                           "--rate", "200", "--", *command]  # fmt: skip
            # stderr (the progress bar) goes straight to ours; stdout holds the result.
            done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            raise CommandError(f"the {spec['scenario']} benchmark failed (exit {done.returncode})")
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        if not lines:
            raise CommandError(f"the {spec['scenario']} benchmark printed no result")
        result = json.loads(lines[-1].removeprefix("RESULT "))
        result["total_s"] = round(time.perf_counter() - began, 1)
        return result


@contextmanager
def throwaway_database(sqlite_file: Path | None = None) -> Iterator[str]:
    """A DATABASE_URL for a new, empty database of the configured kind, dropped afterwards
    (a SQLite file given as `sqlite_file` is kept, and reused if it exists)."""
    with support().throwaway_database(sqlite_file) as url:
        yield url
