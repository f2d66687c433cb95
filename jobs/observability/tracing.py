"""A run as an OpenTelemetry span, and the scheduler's passes (claim, reap) as spans.

Imported only when tracing is on (jobs.observability.traceparent.tracing_on), so a
project without the extra [otel] never imports OpenTelemetry. Spans go to whatever
tracer provider the host set up; the standalone site sets one up itself (`configure`).

The span of a run is named ``jobs.run <job name>``. Its parent is the span that caused
the run when the run kept one (a run now from a traced request, a chain's cause: the
run's `traceparent`), else it starts a trace of its own. The worker executes the run
inside it, so a Python task's own instrumented calls nest under it, and the executors
hand its traceparent on (TRACEPARENT, the traceparent header).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, NamedTuple, TypeVar

from opentelemetry import trace
from opentelemetry.propagate import extract
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from jobs.runs import RunResult, RunTicket

logger = logging.getLogger(__name__)

INSTRUMENTATION_NAME = "django-jobs-scheduler"
# The bounded export queue of the standalone site's BatchSpanProcessor: a receiver that
# is down costs at most this many spans of memory; the SDK drops the rest, with a warning.
EXPORT_QUEUE_SIZE = 2048
EXPORT_TIMEOUT_MILLIS = 5000

T = TypeVar("T")

# What the run's span says when it ends.
OUTCOME_SUCCESS = "success"
OUTCOME_FAILED = "failed"
OUTCOME_CANCELLED = "cancelled"
OUTCOME_TIMED_OUT = "timed_out"


class RunFacts(NamedTuple):
    """What the ticket does not carry, read once per batch: the run's trigger and the
    traceparent of its cause ("" when none)."""

    trigger: str
    traceparent: str


_tracer: trace.Tracer | None = None


def tracer() -> trace.Tracer:
    """The app's tracer, made once: get_tracer() builds a new one each call (measured at
    a third of a run span's cost). Made before the host sets its provider, it is a proxy
    that follows the provider set later."""
    global _tracer
    if _tracer is None:
        _tracer = trace.get_tracer(INSTRUMENTATION_NAME)
    return _tracer


def start_run_span(ticket: RunTicket, facts: RunFacts) -> Span:
    """The run's span, started now, child of its cause when it kept one."""
    parent = extract({"traceparent": facts.traceparent}) if facts.traceparent else None
    now = datetime.now(UTC)
    span = tracer().start_span(
        f"jobs.run {ticket.job_name}",
        context=parent,
        kind=SpanKind.CONSUMER,
        attributes={
            "jobs.job.id": ticket.job_key,
            "jobs.job.name": ticket.job_name,
            "jobs.run.id": ticket.run_key,
            "jobs.run.attempt": ticket.attempt,
            "jobs.run.trigger": facts.trigger,
            "jobs.run.queue": ticket.queue,
            "jobs.run.priority": ticket.priority,
            "jobs.run.executor": ticket.executor,
            "jobs.run.scheduled_for": ticket.scheduled_for.isoformat(),
            "jobs.run.lag_seconds": (now - ticket.scheduled_for).total_seconds(),
        },
    )
    span.add_event("started")
    return span


def run_in_span(span: Span, call: Callable[[], T]) -> T:
    """`call()` with `span` current: what it traces nests under it."""
    with trace.use_span(span, end_on_exit=False, record_exception=False):
        return call()


def end_run_span(span: Span, result: RunResult, stop_reason: str, timed_out: bool) -> None:
    """Name the outcome (and the events that led to it) and end the span."""
    if timed_out:
        timeout = result.ticket.timeout_seconds or 0
        span.add_event("timed out", {"jobs.run.timeout_seconds": timeout})
        outcome = OUTCOME_TIMED_OUT
    elif stop_reason == "cancelled":
        span.add_event("cancelled")
        outcome = OUTCOME_CANCELLED
    else:
        outcome = OUTCOME_SUCCESS if result.succeeded else OUTCOME_FAILED
    if not result.succeeded and not result.ticket.final_attempt:
        span.add_event("retried", {"jobs.run.next_attempt": result.ticket.attempt + 1})
    span.set_attribute("jobs.run.outcome", outcome)
    if result.succeeded:
        span.set_status(Status(StatusCode.OK))
    else:
        span.set_status(Status(StatusCode.ERROR, outcome))
    span.end()


def span_traceparent(span: Span) -> str:
    """The W3C traceparent naming `span` (what a run it causes keeps)."""
    span_context = span.get_span_context()
    if not span_context.is_valid:
        return ""
    flags = int(span_context.trace_flags)
    return f"00-{span_context.trace_id:032x}-{span_context.span_id:016x}-{flags:02x}"


@contextmanager
def pass_span(name: str) -> Iterator[Span]:
    """A span around one part of a scheduler pass (jobs.claim, jobs.reap)."""
    with tracer().start_as_current_span(name, kind=SpanKind.INTERNAL) as span:
        yield span


def configure(service_name: str = "django-jobs-scheduler") -> bool:
    """Set up the SDK with an OTLP (HTTP/protobuf) exporter behind a bounded batch
    processor, unless the host set up a tracer provider already. The exporter reads the
    standard OTEL_EXPORTER_OTLP_* variables. Returns whether it set one up."""
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        logger.warning(
            "JOBS_OTEL is on but the OpenTelemetry SDK or its OTLP exporter is missing: "
            "install django-jobs-scheduler[otel]; no span is exported"
        )
        return False
    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: service_name}))
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(batch_processor(OTLPSpanExporter(), BatchSpanProcessor))
    trace.set_tracer_provider(provider)
    return True


def batch_processor(exporter: Any, processor_class: Any) -> Any:
    """The bounded, asynchronous processor every export goes through: the worker only
    queues a finished span; a full queue drops spans (the SDK warns), a receiver that is
    down costs the export thread its timeout, never a run."""
    return processor_class(
        exporter,
        max_queue_size=EXPORT_QUEUE_SIZE,
        export_timeout_millis=EXPORT_TIMEOUT_MILLIS,
    )
