"""Values the layout of every page needs. The app's templates ask for them with the tags
{% poll_ms %} and {% scheduler_pause as ... %} (jobs/templatetags/jobs_ui.py), so a
project need not add these context processors; the standalone site adds `ui` for its
login page's link to the password-reset pages."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from jobs import conf
from jobs.access.permissions import VIEW_JOB
from jobs.models import SchedulerState


def poll_ms() -> int:
    """How often the live parts of a page refresh, in milliseconds: htmx reads "1500ms"
    as one token, but would split "1.5s" at the dot."""
    return round(conf.ui_poll_seconds() * 1000)


def ui(request: HttpRequest) -> dict[str, Any]:
    """Values every page's layout needs."""
    return {
        "poll_ms": poll_ms(),
        # The login page links to the password-reset pages only when they are served.
        "password_reset_enabled": conf.password_reset_enabled(),
    }


def current_pause(request: HttpRequest | None) -> SchedulerState | None:
    """The pause switch while the scheduler is paused, else None; for the banner every
    page shows (jobs/base.html, the admin's base_site.html). One look-up by primary key,
    once per request. Nobody who may not see jobs is told (the login page, a user in no
    group)."""
    if request is None:
        return None
    if not hasattr(request, "_jobs_pause"):
        user = getattr(request, "user", None)
        paused = None
        if user is not None and user.is_authenticated and user.has_perm(VIEW_JOB):
            switch = SchedulerState.current()
            paused = switch if switch.is_paused(timezone.now()) else None
        request._jobs_pause = paused  # type: ignore[attr-defined]
    return request._jobs_pause  # type: ignore[attr-defined]


def scheduler_pause(request: HttpRequest) -> dict[str, Any]:
    """`scheduler_pause`: current_pause(), read only when a page's layout asks for it
    (htmx fragments never do)."""
    return {"scheduler_pause": SimpleLazyObject(lambda: current_pause(request))}
