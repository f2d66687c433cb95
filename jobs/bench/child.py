"""One scenario in this process: the child's side of `manage.py benchmark`.

The parent starts `manage.py benchmark --child SPEC` with DATABASE_URL pointed at a
throwaway database; this migrates it, runs the spec's scenario and returns its figures.
The command imports this module only in the child.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from django.core.management import call_command
from django.core.management.base import CommandError

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
from jobs.bench.plan import Spec
from jobs.bench.progress import Progress


def _burst(spec: Spec, progress: Progress) -> dict[str, Any]:
    return burst.run(
        spec["jobs"],
        spec["workers"],
        progress,
        queues=spec.get("queues", 1),
        queue_limit=spec.get("queue_limit", 0),
    )


def _steady(spec: Spec, progress: Progress) -> dict[str, Any]:
    return steady.run(
        spec["rate"],
        spec["seconds"],
        spec["workers"],
        progress,
        warmup=spec["warmup"],
        keep_per_job=spec["keep_per_job"],
        trace_memory=spec["trace_memory"],
    )


def _scale(spec: Spec, progress: Progress) -> dict[str, Any]:
    return scale.run(
        spec["jobs"], spec["workers"], progress, calendars=spec.get("calendars", False)
    )


def _once(spec: Spec, progress: Progress) -> dict[str, Any]:
    return once.run(spec["jobs"], spec["due"], spec["workers"], progress, tries=spec["tries"])


def _executors(spec: Spec, progress: Progress) -> dict[str, Any]:
    return executors.run(
        spec["runs"],
        spec["workers"],
        progress,
        shell_runs=spec["shell_runs"],
        chatty=spec["chatty"],
        chatty_seconds=spec["chatty_seconds"],
    )


def _tracing(spec: Spec, progress: Progress) -> dict[str, Any]:
    from jobs.bench import tracing  # imports OpenTelemetry: only for this scenario

    return tracing.run(spec["runs"], spec["workers"], progress, tries=spec["tries"])


def _pages(spec: Spec, progress: Progress) -> dict[str, Any]:
    return pages.run(
        spec["jobs"],
        spec["runs"],
        progress,
        days=spec["days"],
        repeat=spec["repeat"],
        reuse=spec["reuse"],
        prune=not spec["reuse"],
    )


def _alerts(spec: Spec, progress: Progress) -> dict[str, Any]:
    return alert_rules.run(spec["runs"], spec["running"], progress)


def _upcoming(spec: Spec, progress: Progress) -> dict[str, Any]:
    return upcoming.run(spec["jobs"], progress, repeat=spec["repeat"])


# A scenario's name -> how its spec runs.
RUNNERS: dict[str, Callable[[Spec, Progress], dict[str, Any]]] = {
    "burst": _burst,
    "steady": _steady,
    "scale": _scale,
    "once": _once,
    "executors": _executors,
    "tracing": _tracing,
    "pages": _pages,
    "alerts": _alerts,
    "upcoming": _upcoming,
}


def run_spec(spec: Spec) -> dict[str, Any]:
    """Migrate the (empty) database, run the spec's scenario, and return its figures
    with the machine's load before and after and the database's version."""
    call_command("migrate", verbosity=0)
    progress = Progress(sys.stderr)
    load_before = machine.load_average()
    spec = dict(spec)
    scenario = spec.pop("scenario")
    runner = RUNNERS.get(scenario)
    if runner is None:
        raise CommandError(f"unknown scenario {scenario!r}")
    result = runner(spec, progress)
    progress.end()
    return {
        "scenario": scenario,
        **result,
        "load_average_before": load_before,
        "load_average_after": machine.load_average(),
        "database_version": machine.database_version(),
    }
