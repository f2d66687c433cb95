"""`python manage.py benchmark`: measure the scheduler in a throwaway database.

For every scenario (and every size asked for) the parent process makes a fresh database,
a temporary SQLite file or a new database `bench_<random>` on the PostgreSQL server
DATABASE_URL names, runs the scenario in a child process pointed at it (so each starts
from a clean process: memory figures mean something), and drops the database at the end,
whatever happened. Progress goes to stderr, the figures to stdout as tables or `--json`.
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
from types import ModuleType
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from jobs import conf
from jobs.bench.report import format_report
from jobs.sql.bench import bench_support

__all__ = ["Command", "format_report", "throwaway_database"]

SCENARIOS = ("burst", "steady", "scale", "once", "pages", "alerts", "upcoming", "executors")


def _sizes(text: str) -> list[int]:
    """`10000` or `1000,10000,100000` (underscores allowed)."""
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"expected whole numbers separated by commas, got {text!r}") from None
    if not values:
        raise CommandError("expected at least one number")
    return values


class Command(BaseCommand):
    help = (
        "Benchmark the scheduler in a throwaway database (SQLite, or a new database on the "
        "PostgreSQL server DATABASE_URL names) and print tables or JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", choices=(*SCENARIOS, "all"), default="burst")
        parser.add_argument("--workers", type=int, default=4, help="worker threads (default 4)")
        parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
        group = parser.add_argument_group("burst")
        group.add_argument(
            "--jobs", type=_sizes, default=[10_000], help="jobs due at once, e.g. 1000,10000"
        )
        group.add_argument(
            "--queues",
            type=int,
            default=1,
            help="spread the jobs over this many queues, q0, q1... (default 1: all in default)",
        )
        group.add_argument(
            "--queue-limit",
            type=int,
            default=0,
            help="JOBS_QUEUE_LIMITS of every one of those queues (default 0: no limit)",
        )
        group = parser.add_argument_group("steady")
        group.add_argument("--rate", type=_sizes, default=[100], help="runs/s, e.g. 100,1000")
        group.add_argument("--seconds", type=float, default=30.0, help="measured time (30)")
        group.add_argument(
            "--warmup", type=float, default=None, help="seconds before measuring (10%%, 1-10)"
        )
        group.add_argument(
            "--keep-per-job",
            type=int,
            default=None,
            help="JOBS_HISTORY_KEEP_PER_JOB during the run (default: the setting)",
        )
        group.add_argument(
            "--tracemalloc",
            action="store_true",
            help="print where memory grew during the measured window (slows the run)",
        )
        group = parser.add_argument_group("scale")
        group.add_argument(
            "--scale-jobs",
            type=int,
            default=1_000_000,
            help="defined jobs (1,000,000); also measured with a tenth",
        )
        group = parser.add_argument_group(
            "once: whole runscheduler --once processes over --scale-jobs jobs, --jobs due"
        )
        group.add_argument(
            "--tries", type=int, default=3, help="processes timed per size, and empty (3)"
        )
        group = parser.add_argument_group("pages")
        group.add_argument("--pages-jobs", type=int, default=10_000, help="jobs (10,000)")
        group.add_argument("--runs", type=int, default=1_000_000, help="runs (1,000,000)")
        group.add_argument("--days", type=float, default=10.0, help="runs spread over (10)")
        group.add_argument("--repeat", type=int, default=20, help="requests per page (20)")
        group.add_argument(
            "--db-file",
            type=Path,
            default=None,
            help="SQLite file to build once and keep, instead of a throwaway database",
        )
        group = parser.add_argument_group("alerts (also takes --runs: of one job)")
        group.add_argument("--alerts-running", type=int, default=100, help="runs in flight (100)")
        group = parser.add_argument_group("upcoming")
        group.add_argument(
            "--upcoming-jobs",
            type=int,
            default=10_000,
            help="jobs of mixed schedules (10,000); also uses --repeat",
        )
        group = parser.add_argument_group("executors")
        group.add_argument(
            "--executor-runs",
            type=int,
            default=2000,
            help="runs per kind of job (simulated, python) (2,000)",
        )
        group.add_argument("--shell-runs", type=int, default=500, help="shell `true` runs (500)")
        group.add_argument(
            "--chatty", type=int, default=100, help="chatty runs at once, for the live log (100)"
        )
        group.add_argument(
            "--chatty-seconds", type=float, default=5.0, help="how long each prints (5)"
        )
        parser.add_argument(
            "--py-spy",
            type=Path,
            default=None,
            metavar="FILE",
            help="profile each scenario's process with py-spy (pip install py-spy) into "
            "FILE (raw collapsed stacks; FILE-2, FILE-3... for further scenarios)",
        )
        parser.add_argument("--child", default=None, help="(internal) run one scenario here")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["child"]:
            self._child(json.loads(options["child"]))
            return
        if not getattr(settings, "DATABASE_URL", ""):
            # Each scenario's process is pointed at a throwaway database through the
            # DATABASE_URL variable, which only the standalone site's settings read: in
            # another project it would fill that project's own database.
            raise CommandError(
                "benchmark runs in the standalone project (scheduler_site), whose settings "
                "read DATABASE_URL"
            )
        plan = self._plan(options)
        from jobs.bench.machine import load_average, machine_info

        machine = machine_info()
        results = []
        for index, spec in enumerate(plan, start=1):
            self.stderr.write(f"== {index}/{len(plan)}: {_describe(spec)} ==")
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

    # --- what to run ----------------------------------------------------------------

    def _plan(self, options: dict[str, Any]) -> list[dict[str, Any]]:
        def check(name: str, values: list[float], low: float, high: float) -> None:
            for value in values:
                if not low <= value <= high:
                    raise CommandError(f"--{name} must be between {low:,g} and {high:,g}")

        check("workers", [options["workers"]], 1, 256)
        check("jobs", options["jobs"], 1, 1_000_000)
        check("rate", options["rate"], 1, 100_000)
        check("seconds", [options["seconds"]], 0.5, 86_400)
        if options["warmup"] is not None:
            check("warmup", [options["warmup"]], 0, 3600)
        if options["keep_per_job"] is not None:
            check("keep-per-job", [options["keep_per_job"]], 0, 10_000_000)
        check("scale-jobs", [options["scale_jobs"]], 10, 10_000_000)
        check("tries", [options["tries"]], 1, 100)
        check("pages-jobs", [options["pages_jobs"]], 20, 1_000_000)
        check("upcoming-jobs", [options["upcoming_jobs"]], 20, 1_000_000)
        check("runs", [options["runs"]], 0, 10_000_000)
        check("days", [options["days"]], 0.01, 3650)
        check("repeat", [options["repeat"]], 1, 1000)
        check("alerts-running", [options["alerts_running"]], 0, 100_000)
        check("executor-runs", [options["executor_runs"]], 1, 1_000_000)
        check("shell-runs", [options["shell_runs"]], 1, 100_000)
        check("chatty", [options["chatty"]], 1, 256)
        check("chatty-seconds", [options["chatty_seconds"]], 0.5, 3600)
        if options["db_file"] and not _support().can_keep_database_file():
            raise CommandError("--db-file is for SQLite")
        workers = options["workers"]
        scenarios = SCENARIOS if options["scenario"] == "all" else (options["scenario"],)
        plan: list[dict[str, Any]] = []
        for scenario in scenarios:
            if scenario == "burst":
                plan += [
                    {
                        "scenario": "burst",
                        "jobs": jobs,
                        "workers": workers,
                        **(
                            {"queues": options["queues"], "queue_limit": options["queue_limit"]}
                            if options["queues"] > 1 or options["queue_limit"]
                            else {}
                        ),
                    }
                    for jobs in options["jobs"]
                ]
            elif scenario == "steady":
                plan += [
                    {
                        "scenario": "steady",
                        "rate": rate,
                        "seconds": options["seconds"],
                        "warmup": options["warmup"],
                        "workers": workers,
                        "keep_per_job": options["keep_per_job"],
                        "trace_memory": options["tracemalloc"],
                    }
                    for rate in options["rate"]
                ]
            elif scenario == "scale":
                plan.append(
                    {"scenario": "scale", "jobs": options["scale_jobs"], "workers": workers}
                )
            elif scenario == "once":
                plan += [
                    {
                        "scenario": "once",
                        "jobs": options["scale_jobs"],
                        "due": due,
                        "workers": workers,
                        "tries": options["tries"],
                    }
                    for due in options["jobs"]
                ]
            elif scenario == "alerts":
                plan.append(
                    {
                        "scenario": "alerts",
                        "runs": options["runs"],
                        "running": options["alerts_running"],
                    }
                )
            elif scenario == "upcoming":
                plan.append(
                    {
                        "scenario": "upcoming",
                        "jobs": options["upcoming_jobs"],
                        "repeat": options["repeat"],
                    }
                )
            elif scenario == "executors":
                plan.append(
                    {
                        "scenario": "executors",
                        "runs": options["executor_runs"],
                        "shell_runs": options["shell_runs"],
                        "chatty": options["chatty"],
                        "chatty_seconds": options["chatty_seconds"],
                        "workers": workers,
                    }
                )
            else:
                plan.append(
                    {
                        "scenario": "pages",
                        "jobs": options["pages_jobs"],
                        "runs": options["runs"],
                        "days": options["days"],
                        "repeat": options["repeat"],
                        "reuse": options["db_file"] is not None,
                    }
                )
        return plan

    # --- the child: one scenario in this process ------------------------------------

    def _child(self, spec: dict[str, Any]) -> None:
        from jobs.bench import (
            alert_rules,
            burst,
            executors,
            machine,
            once,
            pages,
            scale,
            steady,
            upcoming,
        )
        from jobs.bench.progress import Progress

        call_command("migrate", verbosity=0)
        progress = Progress(sys.stderr)
        load_before = machine.load_average()
        scenario = spec.pop("scenario")
        if scenario == "burst":
            result = burst.run(
                spec["jobs"],
                spec["workers"],
                progress,
                queues=spec.get("queues", 1),
                queue_limit=spec.get("queue_limit", 0),
            )
        elif scenario == "steady":
            result = steady.run(
                spec["rate"],
                spec["seconds"],
                spec["workers"],
                progress,
                warmup=spec["warmup"],
                keep_per_job=spec["keep_per_job"],
                trace_memory=spec["trace_memory"],
            )
        elif scenario == "scale":
            result = scale.run(spec["jobs"], spec["workers"], progress)
        elif scenario == "once":
            result = once.run(
                spec["jobs"], spec["due"], spec["workers"], progress, tries=spec["tries"]
            )
        elif scenario == "executors":
            result = executors.run(
                spec["runs"],
                spec["workers"],
                progress,
                shell_runs=spec["shell_runs"],
                chatty=spec["chatty"],
                chatty_seconds=spec["chatty_seconds"],
            )
        elif scenario == "pages":
            result = pages.run(
                spec["jobs"],
                spec["runs"],
                progress,
                days=spec["days"],
                repeat=spec["repeat"],
                reuse=spec["reuse"],
                prune=not spec["reuse"],
            )
        elif scenario == "alerts":
            result = alert_rules.run(spec["runs"], spec["running"], progress)
        elif scenario == "upcoming":
            result = upcoming.run(spec["jobs"], progress, repeat=spec["repeat"])
        else:
            raise CommandError(f"unknown scenario {scenario!r}")
        progress.end()
        result = {
            "scenario": scenario,
            **result,
            "load_average_before": load_before,
            "load_average_after": machine.load_average(),
            "database_version": machine.database_version(),
        }
        self.stdout.write("RESULT " + json.dumps(result))

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


def _describe(spec: dict[str, Any]) -> str:
    scenario = spec["scenario"]
    if scenario == "burst":
        spread = ""
        if "queues" in spec:
            limit = spec["queue_limit"]
            spread = f" in {spec['queues']} queues" + (f" limited to {limit}" if limit else "")
        return f"burst, {spec['jobs']:,} jobs due at once{spread}"
    if scenario == "steady":
        return f"steady, {spec['rate']:,} runs/s for {spec['seconds']:g} s"
    if scenario == "scale":
        return f"scale, {spec['jobs']:,} jobs"
    if scenario == "once":
        return f"once, runscheduler --once over {spec['jobs']:,} jobs, {spec['due']:,} due"
    if scenario == "alerts":
        return f"alerts, {spec['runs']:,} runs of one job, {spec['running']:,} running"
    if scenario == "upcoming":
        return f"upcoming, {spec['jobs']:,} jobs"
    if scenario == "executors":
        return f"executors, {spec['runs']:,} runs per kind, {spec['chatty']} chatty runs"
    return f"pages, {spec['jobs']:,} jobs and {spec['runs']:,} runs"


def _support() -> ModuleType:
    """The database's side of the benchmark (jobs/sql/*/bench.py)."""
    try:
        return bench_support()
    except NotImplementedError as exc:
        raise CommandError(str(exc)) from None


@contextmanager
def throwaway_database(sqlite_file: Path | None = None) -> Iterator[str]:
    """A DATABASE_URL for a new, empty database of the configured kind, dropped afterwards
    (a SQLite file given as `sqlite_file` is kept, and reused if it exists)."""
    with _support().throwaway_database(sqlite_file) as url:
        yield url
