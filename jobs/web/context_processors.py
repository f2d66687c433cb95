from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from jobs.access import VIEW_JOB
from jobs.models import SchedulerState


def ui(request: HttpRequest) -> dict[str, Any]:
    """Values every page's layout needs."""
    # htmx reads "1500ms" as one token, but would split "1.5s" at the dot.
    return {
        "poll_ms": round(float(settings.JOBS_UI_POLL_SECONDS) * 1000),
        # The login page links to the password-reset pages only when they are served.
        "password_reset_enabled": settings.PASSWORD_RESET_ENABLED,
    }


def scheduler_pause(request: HttpRequest) -> dict[str, Any]:
    """`scheduler_pause`: the pause switch while the scheduler is paused, else None; for
    the banner every page shows (templates/base.html, the admin's base_site.html).

    Read only when a page's layout asks for it (htmx fragments never do): one look-up by
    primary key. Nobody who may not see jobs is told (the login page, a user in no group).
    """

    def paused() -> SchedulerState | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated or not user.has_perm(VIEW_JOB):
            return None
        switch = SchedulerState.current()
        return switch if switch.is_paused(timezone.now()) else None

    return {"scheduler_pause": SimpleLazyObject(paused)}
