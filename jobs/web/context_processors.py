from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest


def ui(request: HttpRequest) -> dict[str, Any]:
    """Values every page's layout needs."""
    # htmx reads "1500ms" as one token, but would split "1.5s" at the dot.
    return {
        "poll_ms": round(float(settings.JOBS_UI_POLL_SECONDS) * 1000),
        # The login page links to the password-reset pages only when they are served.
        "password_reset_enabled": settings.PASSWORD_RESET_ENABLED,
    }
