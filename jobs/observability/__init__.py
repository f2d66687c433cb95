"""Seen from the tools a team already watches: JSON log lines, OpenTelemetry spans and
the W3C traceparent, Sentry Crons check-ins (docs/observability.md).

Low in the layers (it reads only jobs.conf and jobs.runs), so the executors and the
engine may call it; the processes layer (jobs/runtime/observed.py) composes it into
the one hook the worker calls per run. Without the extras [otel] and [sentry] nothing
here imports OpenTelemetry or sentry-sdk.
"""
