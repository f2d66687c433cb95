"""The W3C traceparent of the current span, for what a run hands on or a new run keeps.

Imports OpenTelemetry only when JOBS_OTEL is on (and it is installed): without the
extra, or with tracing off, every function here returns "" after one settings read.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from jobs import conf

HEADER = "traceparent"
ENVIRONMENT_VARIABLE = "TRACEPARENT"


def tracing_on() -> bool:
    """JOBS_OTEL is on and the OpenTelemetry API is installed (the checks refuse the
    setting without it, jobs.E030)."""
    if not conf.otel_enabled():
        return False
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


def current() -> str:
    """The traceparent of the span current in this thread ("" when none, or tracing is
    off). A run created now keeps it as its cause (traceparent_for_new_run)."""
    if not tracing_on():
        return ""
    from opentelemetry.propagate import inject

    carrier: dict[str, str] = {}
    # The global propagator (W3C trace context unless the host chose another one).
    inject(carrier)
    return carrier.get(HEADER, "")


def traceparent_for_new_run() -> str:
    """The traceparent to store on a run created now: the current span's, so that the
    run's span becomes its child (run now from a traced request, a task enqueued from
    one). "" when there is none or tracing is off."""
    return current()


def add_to_environment(environment: MutableMapping[str, str]) -> None:
    """TRACEPARENT for a run's child process, when the run's span is current."""
    value = current()
    if value:
        environment[ENVIRONMENT_VARIABLE] = value


def add_to_headers(headers: MutableMapping[str, str]) -> None:
    """The traceparent header of a run's HTTP request, when the run's span is current."""
    value = current()
    if value:
        headers[HEADER] = value
