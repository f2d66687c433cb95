"""What the standalone site sets up that a host project would: the OpenTelemetry SDK
exporting over OTLP (the OTEL_* variables: OTEL_EXPORTER_OTLP_ENDPOINT,
OTEL_SERVICE_NAME...) when JOBS_OTEL is on, and sentry-sdk when SENTRY_DSN is set
(docs/observability.md)."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured


def line_formatter(log_format: str) -> dict[str, str]:
    """The LOGGING formatter of JOBS_LOG_FORMAT ("text" or "json")."""
    if log_format == "json":
        return {"()": "jobs.observability.json_logs.JsonFormatter"}
    if log_format == "text":
        return {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    raise ImproperlyConfigured(f"JOBS_LOG_FORMAT must be text or json, got {log_format!r}")


def set_up(*, otel: bool, sentry_dsn: str) -> None:
    if otel:
        try:
            from jobs.observability import tracing
        except ImportError:
            pass  # the system check jobs.E030 names the extra to install
        else:
            tracing.configure()
    if sentry_dsn:
        try:
            import sentry_sdk
        except ImportError as missing:
            raise ImproperlyConfigured(
                "SENTRY_DSN is set but sentry-sdk is not installed: "
                'pip install "django-jobs-scheduler[sentry]"'
            ) from missing
        sentry_sdk.init(dsn=sentry_dsn)
