"""`manage.py check --deploy`: /metrics should not be open to the world in production."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register

from jobs import conf


@register(Tags.security, deploy=True)
def metrics_token_set(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    if settings.DEBUG or conf.metrics_token():
        return []
    return [
        Warning(
            "METRICS_TOKEN is empty, so /metrics answers anyone who can reach the site.",
            hint=(
                "Set METRICS_TOKEN to a long random string and have the scraper send "
                "'Authorization: Bearer <token>' (docs/metrics.md)."
            ),
            id="jobs.W001",
        )
    ]
