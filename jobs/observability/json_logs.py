"""One JSON object per log line, for log pipelines (Loki, Elasticsearch, Cloud Logging).

A host names it in its LOGGING (docs/observability.md):
``"formatters": {"json": {"()": "jobs.observability.json_logs.JsonFormatter"}}``.
A line written while a run executes carries its ``job_id``, ``run_id``, ``attempt`` and
``queue``, and ``trace_id`` / ``span_id`` when OpenTelemetry has a span then.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from jobs.observability import context

# The LogRecord attributes every record has: the rest are a call's `extra=` fields.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


def _trace_fields() -> dict[str, str]:
    """The current span's ids, when OpenTelemetry is installed and a span is recording."""
    try:
        from opentelemetry import trace
    except ImportError:
        return {}
    span_context = trace.get_current_span().get_span_context()
    if not span_context.is_valid:
        return {}
    return {
        "trace_id": format(span_context.trace_id, "032x"),
        "span_id": format(span_context.span_id, "016x"),
    }


class JsonFormatter(logging.Formatter):
    """A log record as one line of JSON: time (UTC, ISO 8601), level, logger, message,
    the run's fields, the call's `extra` fields, and the traceback as text."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        context.want_log_fields()

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(context.run_fields())
        line.update(_trace_fields())
        for name, value in record.__dict__.items():
            if name not in _STANDARD and name not in line:
                line[name] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # default=str: an `extra` value JSON cannot write (a UUID, a datetime) as text.
        return json.dumps(line, default=str, ensure_ascii=False)
