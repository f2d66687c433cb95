"""Tasks the tests run (named in JOBS_TASK_MODULES by scheduler_site/test_settings.py)."""

from __future__ import annotations

import enum
import logging
import sys
import threading
import time
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from jobs import current_run, register

logger = logging.getLogger("jobs.tests.sample_tasks")

# What the tasks were called with, by the test that called them (a key of their choice).
calls: dict[str, list[dict[str, Any]]] = {}
calls_lock = threading.Lock()


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


def _note(key: str, **values: Any) -> None:
    with calls_lock:
        calls.setdefault(key, []).append(values)


@register
def send_invoices(day: str = "today") -> str:
    """Send the day's invoices.

    The second paragraph is not part of the description.
    """
    print(f"sending invoices for {day}")
    return f"sent for {day}"


@register(name="samples.typed", description="Every kind of parameter.")
def typed(
    count: int,
    ratio: float = 0.5,
    flag: bool = False,
    label: str = "x",
    day: date | None = None,
    at: datetime | None = None,
    colour: Colour = Colour.RED,
    mode: Literal["fast", "slow"] = "fast",
    items: list[int] | None = None,
    options: dict[str, Any] | None = None,
    anything=None,
    key: str = "typed",
) -> dict[str, Any]:
    values = {
        "count": count,
        "ratio": ratio,
        "flag": flag,
        "label": label,
        "day": day,
        "at": at,
        "colour": colour,
        "mode": mode,
        "items": items,
        "options": options,
        "anything": anything,
    }
    _note(key, **values)
    return {"count": count}


@register
def record(key: str, value: Any = None) -> str:
    """Note the call (the tests read sample_tasks.calls in this process)."""
    _note(key, value=value)
    print(f"recorded {value!r} for {key}")
    return "ok"


@register
def chatty(label: str, lines: int = 20, pause: float = 0.01) -> int:
    """Print and log lines naming the run's label, with a pause between them."""
    for number in range(lines):
        print(f"{label} print {number}")
        logger.warning("%s log %d", label, number)
        sys.stderr.write(f"{label} stderr {number}\n")
        time.sleep(pause)
    return lines


@register
def fails(message: str = "boom") -> None:
    raise ValueError(message)


@register
def wait_for_stop(seconds: float = 30.0) -> str:
    """Wait until the run is told to stop (or `seconds` pass)."""
    run = current_run()
    assert run is not None
    stopped = run.stop.wait(seconds)
    print(f"stopped={stopped} reason={run.stop_reason}")
    return run.stop_reason


@register
def wait_for_file(path: str, seconds: float = 300.0) -> str:
    """Run until the file `path` exists: a test creates it when it has seen what it
    waited for, so the run is still going then, however slow the machine. Returns early
    when the run is told to stop, or after `seconds` (a test that failed midway)."""
    run = current_run()
    assert run is not None
    deadline = time.monotonic() + seconds
    while not Path(path).exists():
        if run.stop.wait(0.02) or time.monotonic() > deadline:
            return f"not released: {run.stop_reason or 'gave up'}"
    return "released"


@register
def big_output(megabytes: int = 10, nul: bool = False) -> None:
    line = ("x" * 99 + "\n") if not nul else ("a\x00b" * 33 + "\n")
    chunk = line * 10_000  # about a megabyte
    for _ in range(megabytes):
        sys.stdout.write(chunk)


@register
def returns_quickly() -> None:
    return None


@register
def accepts_anything(first: int, **more: Any) -> dict[str, Any]:
    return {"first": first, **more}


@register
def exits(code: int = 3) -> None:
    sys.exit(code)


@register
async def awaits(value: int) -> int:
    """An async function: awaited in the worker thread."""
    import asyncio

    await asyncio.sleep(0)
    return value + 1


def not_registered() -> None:
    """Importable, but not a task: a job may not name it."""


try:  # Django 6's own tasks, or the backport's on Django 5.2
    from django.tasks import task as django_task  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the Django version
    try:
        from django_tasks import task as django_task  # type: ignore[import-not-found]
    except ImportError:
        django_task = None

if django_task is not None:

    @django_task()
    def django_native(amount: int, note: str = "") -> int:
        """A django.tasks task, run with its .call()."""
        _note("django_native", amount=amount, note=note)
        print(f"django task got {amount}")
        return amount * 2


@register(name="samples.stubborn")
def stubborn(started: str = "", release: str = "") -> str:
    """Write this process's id to `started`, then spin, never looking at the stop signal,
    until the file `release` exists (the isolation tests)."""
    import os
    from pathlib import Path

    if started:
        Path(started).write_text(str(os.getpid()))
    print("spinning", flush=True)
    while not (release and os.path.exists(release)):
        time.sleep(0.01)
    return "released"


@register(name="samples.traced")
def traced(step: str = "inner step") -> str:
    """Open a span of the task's own (the tests look for it under the run's span)."""
    from opentelemetry import trace

    with trace.get_tracer("jobs.tests").start_as_current_span(step):
        return step


@register
def meant_for(scheduled_for: datetime, label: str = "") -> str:
    """Note the time its run was meant for (given by the run, never by the arguments)."""
    _note("meant_for", scheduled_for=scheduled_for, label=label)
    return scheduled_for.isoformat()
