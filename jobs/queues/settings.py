"""Queue names and limits as the operator writes them: `runscheduler --queues`,
JOBS_QUEUE_LIMITS, JOBS_HUEY_QUEUES.

Pure parsing, no database: the settings, the system checks and the commands read the
same words the same way, and a bad value is refused with a message that names it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from jobs import conf
from jobs.models.choices import QUEUE_NAME_MAX_LENGTH, QUEUE_NAME_PATTERN

_NAME = re.compile(rf"^{QUEUE_NAME_PATTERN}$")
# The most runs of a queue at once that a limit may name: beyond that it is no limit.
MAX_QUEUE_LIMIT = 100_000


class QueueError(ValueError):
    """A queue name or limit that cannot be used; the message says which and why."""


def check_name(name: str, what: str) -> str:
    """`name` if it is a queue name (as Job.queue takes them), else QueueError."""
    if not name:
        raise QueueError(f"{what}: a queue name is empty")
    if len(name) > QUEUE_NAME_MAX_LENGTH:
        raise QueueError(
            f"{what}: queue name {name!r} is longer than {QUEUE_NAME_MAX_LENGTH} characters"
        )
    if not _NAME.match(name):
        raise QueueError(
            f"{what}: {name!r} is not a queue name (letters, digits, '-' and '_' only)"
        )
    return name


def parse_names(text: str | Iterable[str], what: str) -> frozenset[str]:
    """Comma-separated queue names ("reports,default"), each checked; at least one."""
    items = text.split(",") if isinstance(text, str) else list(text)
    names = [item.strip() for item in items]
    if not any(names):
        raise QueueError(f"{what}: name at least one queue")
    return frozenset(check_name(name, what) for name in names)


def parse_limits(value: str | Mapping[str, object]) -> dict[str, int]:
    """JOBS_QUEUE_LIMITS ("reports=2,default=20", or a dict in a settings file) as
    {queue: limit}; QueueError for a bad name, a missing "=", a limit that is not a
    whole number from 1 to MAX_QUEUE_LIMIT, or a queue named twice."""
    what = "JOBS_QUEUE_LIMITS"
    if isinstance(value, Mapping):
        pairs = [(str(name), limit) for name, limit in value.items()]
    else:
        pairs = []
        for item in (part.strip() for part in value.split(",")):
            if not item:
                continue
            name, equals, limit = item.partition("=")
            if not equals:
                raise QueueError(f"{what}: {item!r} is not queue=limit (e.g. reports=2)")
            pairs.append((name.strip(), limit.strip()))
    limits: dict[str, int] = {}
    for name, raw in pairs:
        check_name(name, what)
        if name in limits:
            raise QueueError(f"{what}: queue {name!r} is named twice")
        try:
            limit = int(raw) if not isinstance(raw, float | bool) else None
        except (TypeError, ValueError):
            limit = None
        if limit is None or not 1 <= limit <= MAX_QUEUE_LIMIT:
            raise QueueError(
                f"{what}: the limit of {name!r} must be a whole number from 1 to "
                f"{MAX_QUEUE_LIMIT}, got {raw!r}"
            )
        limits[name] = limit
    return limits


def huey_queue_name(prefix: str, queue: str) -> str:
    """The Huey queue that runs of `queue` go to when JOBS_HUEY_QUEUES lists it:
    HUEY_QUEUE as a prefix ("jobs" and "reports" make "jobs-reports")."""
    return f"{prefix}-{queue}"


# --- the settings, read ----------------------------------------------------------------

# JOBS_QUEUE_LIMITS as last read: (the setting's value, what it says). Asked on the path
# of every start, so parsed once per value (a test's override_settings gives a new one).
_limits_read: tuple[object, dict[str, int]] = ("", {})


def limits() -> dict[str, int]:
    """JOBS_QUEUE_LIMITS: the most runs of each named queue running at once, across every
    process; {} for no limits. A bad value raises QueueError (the system check jobs.E012
    reports it before any process starts)."""
    global _limits_read
    raw = conf.queue_limits_setting()
    read_raw, parsed = _limits_read
    if raw is read_raw or raw == read_raw:
        return parsed
    parsed = parse_limits(raw) if raw else {}
    _limits_read = (raw, parsed)
    return parsed


def huey_queues() -> frozenset[str]:
    """JOBS_HUEY_QUEUES: the job queues whose runs go to a Huey queue of their own."""
    return frozenset(conf.huey_queues())


def huey_prefix() -> str:
    """HUEY_QUEUE: the Huey queue of every job queue not listed in JOBS_HUEY_QUEUES, and
    the prefix of the names of the listed ones."""
    return conf.huey_queue()


def huey_target(queue: str) -> str:
    """The Huey queue that runs of job queue `queue` are sent to: HUEY_QUEUE-<queue> when
    JOBS_HUEY_QUEUES lists it, else HUEY_QUEUE itself."""
    prefix = huey_prefix()
    return huey_queue_name(prefix, queue) if queue in huey_queues() else prefix
