"""What each alert is, in the Standard Webhooks way: the payload's `type` and `timestamp`.

The specification (https://www.standardwebhooks.com/) asks every payload for a `type`,
full-stop delimited ("run.failed"), and a `timestamp`, when the event happened (not when
this attempt was sent: that is the webhook-timestamp header). The alert's own fields
stay at the top level beside them, where receivers written before read them, with the
older name of the event in `event`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jobs.models import NotificationKind

# The scheduler's own alerts (jobs/alerts/health.py).
SCHEDULER_DOWN = "scheduler_down"
SCHEDULER_RECOVERED = "scheduler_recovered"

# Every event the project sends, by its `event` name.
EVENT_TYPES: dict[str, str] = {
    NotificationKind.FAILURE.value: "run.failed",
    NotificationKind.RECOVERY.value: "run.recovered",
    NotificationKind.RUNNING_LONG.value: "run.running_long",
    NotificationKind.NOT_STOPPED.value: "run.not_stopped",
    SCHEDULER_DOWN: "scheduler.down",
    SCHEDULER_RECOVERED: "scheduler.recovered",
}


def envelope(event: str, happened_at: datetime) -> dict[str, Any]:
    """The fields every alert payload starts with. The same on every try of a delivery
    (its webhook-id is too): the moment is the event's, not the sending's."""
    return {"type": EVENT_TYPES[event], "timestamp": happened_at, "event": event}
