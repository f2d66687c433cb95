"""What `manage.py benchmark` runs: the options turned into one spec per process.

A spec is a JSON-able dict: the scenario's name and what its `run()` takes. The parent
process plans; each spec then runs in a child process of its own, in a throwaway
database.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from django.core.management.base import CommandError

from jobs.bench.options import SCENARIOS, check_bounds
from jobs.sql.bench import bench_support

Spec = dict[str, Any]


def support() -> ModuleType:
    """The database's side of the benchmark (jobs/sql/*/bench.py)."""
    try:
        return bench_support()
    except NotImplementedError as exc:
        raise CommandError(str(exc)) from None


def plan(options: dict[str, Any]) -> list[Spec]:
    """The specs to run, in order; CommandError for an option out of bounds."""
    check_bounds(options)
    if options["db_file"] and not support().can_keep_database_file():
        raise CommandError("--db-file is for SQLite")
    scenarios = SCENARIOS if options["scenario"] == "all" else (options["scenario"],)
    return [spec for scenario in scenarios for spec in PLANNERS[scenario](options)]


def _burst(options: dict[str, Any]) -> list[Spec]:
    spread = (
        {"queues": options["queues"], "queue_limit": options["queue_limit"]}
        if options["queues"] > 1 or options["queue_limit"]
        else {}
    )
    return [
        {"scenario": "burst", "jobs": jobs, "workers": options["workers"], **spread}
        for jobs in options["jobs"]
    ]


def _steady(options: dict[str, Any]) -> list[Spec]:
    return [
        {
            "scenario": "steady",
            "rate": rate,
            "seconds": options["seconds"],
            "warmup": options["warmup"],
            "workers": options["workers"],
            "keep_per_job": options["keep_per_job"],
            "trace_memory": options["tracemalloc"],
        }
        for rate in options["rate"]
    ]


def _scale(options: dict[str, Any]) -> list[Spec]:
    return [
        {
            "scenario": "scale",
            "jobs": options["scale_jobs"],
            "workers": options["workers"],
            "calendars": bool(options.get("calendars")),
        }
    ]


def _once(options: dict[str, Any]) -> list[Spec]:
    return [
        {
            "scenario": "once",
            "jobs": options["scale_jobs"],
            "due": due,
            "workers": options["workers"],
            "tries": options["tries"],
        }
        for due in options["jobs"]
    ]


def _pages(options: dict[str, Any]) -> list[Spec]:
    return [
        {
            "scenario": "pages",
            "jobs": options["pages_jobs"],
            "runs": options["runs"],
            "days": options["days"],
            "repeat": options["repeat"],
            "reuse": options["db_file"] is not None,
        }
    ]


def _alerts(options: dict[str, Any]) -> list[Spec]:
    return [{"scenario": "alerts", "runs": options["runs"], "running": options["alerts_running"]}]


def _upcoming(options: dict[str, Any]) -> list[Spec]:
    return [{"scenario": "upcoming", "jobs": options["upcoming_jobs"], "repeat": options["repeat"]}]


def _executors(options: dict[str, Any]) -> list[Spec]:
    return [
        {
            "scenario": "executors",
            "runs": options["executor_runs"],
            "shell_runs": options["shell_runs"],
            "chatty": options["chatty"],
            "chatty_seconds": options["chatty_seconds"],
            "workers": options["workers"],
        }
    ]


def _tracing(options: dict[str, Any]) -> list[Spec]:
    return [
        {
            "scenario": "tracing",
            "runs": options["tracing_runs"],
            "tries": options["tracing_tries"],
            "workers": options["workers"],
        }
    ]


# A scenario's name -> its specs from the options (every name of SCENARIOS).
PLANNERS: dict[str, Callable[[dict[str, Any]], list[Spec]]] = {
    "burst": _burst,
    "steady": _steady,
    "scale": _scale,
    "once": _once,
    "pages": _pages,
    "alerts": _alerts,
    "upcoming": _upcoming,
    "executors": _executors,
    "tracing": _tracing,
}


def describe(spec: Spec) -> str:
    """A spec in words, for the progress output."""
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
        calendars = ", 10 % on a calendar, a global window" if spec.get("calendars") else ""
        return f"scale, {spec['jobs']:,} jobs{calendars}"
    if scenario == "once":
        return f"once, runscheduler --once over {spec['jobs']:,} jobs, {spec['due']:,} due"
    if scenario == "alerts":
        return f"alerts, {spec['runs']:,} runs of one job, {spec['running']:,} running"
    if scenario == "upcoming":
        return f"upcoming, {spec['jobs']:,} jobs"
    if scenario == "executors":
        return f"executors, {spec['runs']:,} runs per kind, {spec['chatty']} chatty runs"
    if scenario == "tracing":
        return f"tracing, {spec['runs']:,} runs off / on / exported, {spec['tries']} times"
    return f"pages, {spec['jobs']:,} jobs and {spec['runs']:,} runs"
