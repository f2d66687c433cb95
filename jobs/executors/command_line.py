"""The first line of a run's log: what the run runs, as the executor of its kind says it.

The executors write it before anything else, and a run cancelled before it wrote any
output gets it too (jobs.engine.actions.cancel_run), so every run's log says what ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobs.access.masking import mask_urls

# The executor kinds whose line differs from "$ <command>" (jobs.models.ExecutorKind).
_PREFIXES = {
    "python": "python task ",
    "task": "enqueued task ",
    "command": "manage.py ",
    "celery": "celery task ",
}


def command_line(kind: str, command: str, arguments: Mapping[str, Any] | None = None) -> str:
    """ "$ python task app.report", "$ manage.py clearsessions", "$ POST https://...",
    "$ <shell command or simulated command>" (no newline). The credentials of its URLs
    are masked before the log stores them: nobody reads them (jobs.access.masking)."""
    if kind == "http":
        method = str((arguments or {}).get("method") or "GET").upper()
        return mask_urls(f"$ {method} {command}")
    return mask_urls(f"$ {_PREFIXES.get(kind, '')}{command}")
