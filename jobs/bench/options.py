"""The options of `manage.py benchmark`: what each scenario takes, and the bounds of each.

Declared as data, one group per scenario, so that an option is one line of its group
and the command only hands its parser over.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from django.core.management.base import CommandError, CommandParser

SCENARIOS = (
    "burst",
    "steady",
    "scale",
    "once",
    "pages",
    "alerts",
    "upcoming",
    "executors",
    "tracing",
)


def sizes(text: str) -> list[int]:
    """`10000` or `1000,10000,100000` (underscores allowed)."""
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"expected whole numbers separated by commas, got {text!r}") from None
    if not values:
        raise CommandError("expected at least one number")
    return values


class Option(NamedTuple):
    flag: str
    settings: dict[str, Any]  # add_argument's keywords


def _option(flag: str, **settings: Any) -> Option:
    return Option(flag, settings)


# Options of every scenario (no group in --help).
GENERAL = (
    _option("--scenario", choices=(*SCENARIOS, "all"), default="burst"),
    _option("--workers", type=int, default=4, help="worker threads (default 4)"),
    _option("--json", action="store_true", help="print JSON instead of tables"),
)

# Each scenario's group of options, in --help's order.
GROUPS: tuple[tuple[str, tuple[Option, ...]], ...] = (
    (
        "burst",
        (
            _option(
                "--jobs", type=sizes, default=[10_000], help="jobs due at once, e.g. 1000,10000"
            ),
            _option(
                "--queues",
                type=int,
                default=1,
                help="spread the jobs over this many queues, q0, q1... (default 1: all in default)",
            ),
            _option(
                "--queue-limit",
                type=int,
                default=0,
                help="JOBS_QUEUE_LIMITS of every one of those queues (default 0: no limit)",
            ),
        ),
    ),
    (
        "steady",
        (
            _option("--rate", type=sizes, default=[100], help="runs/s, e.g. 100,1000"),
            _option("--seconds", type=float, default=30.0, help="measured time (30)"),
            _option(
                "--warmup", type=float, default=None, help="seconds before measuring (10%%, 1-10)"
            ),
            _option(
                "--keep-per-job",
                type=int,
                default=None,
                help="JOBS_HISTORY_KEEP_PER_JOB during the run (default: the setting)",
            ),
            _option(
                "--tracemalloc",
                action="store_true",
                help="print where memory grew during the measured window (slows the run)",
            ),
        ),
    ),
    (
        "scale",
        (
            _option(
                "--scale-jobs",
                type=int,
                default=1_000_000,
                help="defined jobs (1,000,000); also measured with a tenth",
            ),
            _option(
                "--calendars",
                action="store_true",
                help="one job in ten on a business calendar (JP holidays) and a global "
                "blackout window (not open during the measurement)",
            ),
        ),
    ),
    (
        "once: whole runscheduler --once processes over --scale-jobs jobs, --jobs due",
        (_option("--tries", type=int, default=3, help="processes timed per size, and empty (3)"),),
    ),
    (
        "pages",
        (
            _option("--pages-jobs", type=int, default=10_000, help="jobs (10,000)"),
            _option("--runs", type=int, default=1_000_000, help="runs (1,000,000)"),
            _option("--days", type=float, default=10.0, help="runs spread over (10)"),
            _option("--repeat", type=int, default=20, help="requests per page (20)"),
            _option(
                "--db-file",
                type=Path,
                default=None,
                help="SQLite file to build once and keep, instead of a throwaway database",
            ),
        ),
    ),
    (
        "alerts (also takes --runs: of one job)",
        (_option("--alerts-running", type=int, default=100, help="runs in flight (100)"),),
    ),
    (
        "upcoming",
        (
            _option(
                "--upcoming-jobs",
                type=int,
                default=10_000,
                help="jobs of mixed schedules (10,000); also uses --repeat",
            ),
        ),
    ),
    (
        "executors",
        (
            _option(
                "--executor-runs",
                type=int,
                default=2000,
                help="runs per kind of job (simulated, python) (2,000)",
            ),
            _option("--shell-runs", type=int, default=500, help="shell `true` runs (500)"),
            _option(
                "--chatty",
                type=int,
                default=100,
                help="chatty runs at once, for the live log (100)",
            ),
            _option("--chatty-seconds", type=float, default=5.0, help="how long each prints (5)"),
        ),
    ),
    (
        "tracing",
        (
            _option(
                "--tracing-runs",
                type=int,
                default=5000,
                help="runs per turn: tracing off, on, exported over OTLP (5,000; extra [otel])",
            ),
            _option("--tracing-tries", type=int, default=3, help="turns of each (3)"),
        ),
    ),
)

# After the groups, for every scenario.
PROFILING = _option(
    "--py-spy",
    type=Path,
    default=None,
    metavar="FILE",
    help="profile each scenario's process with py-spy (pip install py-spy) into "
    "FILE (raw collapsed stacks; FILE-2, FILE-3... for further scenarios)",
)

# Option -> (lowest, highest) it accepts, checked in this order; an option left unset
# (None) is not checked.
BOUNDS: dict[str, tuple[float, float]] = {
    "workers": (1, 256),
    "jobs": (1, 1_000_000),
    "rate": (1, 100_000),
    "seconds": (0.5, 86_400),
    "warmup": (0, 3600),
    "keep-per-job": (0, 10_000_000),
    "scale-jobs": (10, 10_000_000),
    "tries": (1, 100),
    "pages-jobs": (20, 1_000_000),
    "upcoming-jobs": (20, 1_000_000),
    "runs": (0, 10_000_000),
    "days": (0.01, 3650),
    "repeat": (1, 1000),
    "alerts-running": (0, 100_000),
    "executor-runs": (1, 1_000_000),
    "shell-runs": (1, 100_000),
    "chatty": (1, 256),
    "chatty-seconds": (0.5, 3600),
    "tracing-runs": (1, 1_000_000),
    "tracing-tries": (1, 100),
}


def add_arguments(parser: CommandParser) -> None:
    """Every scenario's options on the command's parser."""
    for option in GENERAL:
        parser.add_argument(option.flag, **option.settings)
    for title, options in GROUPS:
        group = parser.add_argument_group(title)
        for option in options:
            group.add_argument(option.flag, **option.settings)
    parser.add_argument(PROFILING.flag, **PROFILING.settings)


def check_bounds(options: dict[str, Any]) -> None:
    """Raise CommandError naming the first option out of its bounds."""
    for name, (low, high) in BOUNDS.items():
        value = options[name.replace("-", "_")]
        if value is None:
            continue
        for one in value if isinstance(value, list) else [value]:
            if not low <= one <= high:
                raise CommandError(f"--{name} must be between {low:,g} and {high:,g}")
