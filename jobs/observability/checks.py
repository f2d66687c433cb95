"""System checks of the observability settings: JOBS_OTEL and JOBS_SENTRY_CRONS need
their extra installed. An error stops runscheduler, run_huey and the site at start-up
with a message naming the extra, instead of a scheduler that silently traces nothing."""

from __future__ import annotations

import importlib.util
from typing import Any

from django.core.checks import Error, register

from jobs import conf

PACKAGE = "django-jobs-scheduler"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


@register(conf.SETTINGS_CHECKS)
def observability_settings(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    errors = []
    if conf.otel_enabled() and not _installed("opentelemetry.trace"):
        errors.append(
            Error(
                "JOBS_OTEL is on but OpenTelemetry is not installed.",
                hint=f'Install the extra: pip install "{PACKAGE}[otel]", or turn JOBS_OTEL off.',
                id="jobs.E030",
            )
        )
    if conf.sentry_crons_enabled() and not _installed("sentry_sdk.crons"):
        errors.append(
            Error(
                "JOBS_SENTRY_CRONS is on but sentry-sdk is not installed.",
                hint=(
                    f'Install the extra: pip install "{PACKAGE}[sentry]", or turn '
                    "JOBS_SENTRY_CRONS off."
                ),
                id="jobs.E031",
            )
        )
    if conf.log_format() not in ("text", "json"):
        errors.append(
            Error(
                f"JOBS_LOG_FORMAT must be text or json, got {conf.log_format()!r}.",
                id="jobs.E032",
            )
        )
    return errors
