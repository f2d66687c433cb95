"""The standalone site's LOGGING: one console handler, the run lines at their own level,
the development server's request lines without the pages' htmx refreshes, and the line
format JOBS_LOG_FORMAT chooses (text, or one JSON object per line)."""

from __future__ import annotations

from typing import Any

from scheduler_site import observability


def logging_dict(log_format: str, *, level: str, run_level: str) -> dict[str, Any]:
    """The LOGGING setting for these levels and this line format."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "plain": observability.line_formatter(log_format),
            # Django's own format for runserver's request lines.
            "django.server": {
                "()": "django.utils.log.ServerFormatter",
                "format": "[{server_time}] {message}",
                "style": "{",
            },
        },
        "filters": {
            "drop_htmx_polls": {"()": "scheduler_site.quiet_polls.DropHtmxPolls"},
        },
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": "plain"},
            "django.server": {"class": "logging.StreamHandler", "formatter": "django.server"},
        },
        "root": {"handlers": ["console"], "level": "WARNING"},
        "loggers": {
            "jobs": {"handlers": ["console"], "level": level, "propagate": False},
            "jobs.runtime.worker": {
                "handlers": ["console"],
                "level": run_level,
                "propagate": False,
            },
            "huey": {"handlers": ["console"], "level": "INFO", "propagate": False},
            # The development server's request log, without the pages' htmx refreshes.
            "django.server": {
                "handlers": ["django.server"],
                "level": "INFO",
                "filters": ["drop_htmx_polls"],
                "propagate": False,
            },
        },
    }
