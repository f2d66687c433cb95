"""JOBS_OTEL: a span per run (attributes, events, parent), the claim pass and the reaper
as spans, the W3C traceparent handed to shell, command and HTTP runs.

Spans are read from the OpenTelemetry SDK's in-memory exporter (tracing_setup.py); the
real OTLP export is test_otlp_export.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from jobs import engine
from jobs.executors import ExecutionContext, Outcome, SimulatedExecutor
from jobs.executors.routing import routed
from jobs.models import ExecutorKind, JobHistory
from jobs.runtime import observed
from jobs.runtime.scheduler import Scheduler
from jobs.runtime.worker import Heartbeater, run_batch
from jobs.tests.factories import WORKER, make_job
from jobs.tests.observability import tracing_setup
from jobs.tests.observability.helpers import run_now_and_execute
from jobs.tests.observability.receivers import Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def spans(settings):
    """Tracing on; the finished spans so far, by name."""
    tracing_setup.provider()
    tracing_setup.EXPORTER.clear()
    settings.JOBS_OTEL = True
    yield lambda: {span.name: span for span in tracing_setup.EXPORTER.get_finished_spans()}
    observed.forget()


def traceparent_of(span) -> str:
    context = span.get_span_context()
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def test_a_run_is_a_span_with_its_attributes_child_of_the_request_that_ran_it_now(spans):
    job = make_job(name="nightly", queue="reports", priority=5)
    tracer = trace.get_tracer("jobs.tests")
    with tracer.start_as_current_span("POST /jobs/run/") as request:
        run = engine.run_now(job)
    assert JobHistory.objects.get(pk=run.pk).traceparent == traceparent_of(request)

    run_now_and_execute(job, runs=0)
    span = spans()["jobs.run nightly"]
    assert span.parent.span_id == request.get_span_context().span_id
    assert span.context.trace_id == request.get_span_context().trace_id
    assert span.kind == SpanKind.CONSUMER
    attributes = dict(span.attributes)
    assert attributes.pop("jobs.run.lag_seconds") >= 0
    assert attributes == {
        "jobs.job.id": job.pk.hex,
        "jobs.job.name": "nightly",
        "jobs.run.id": run.pk.hex,
        "jobs.run.attempt": 1,
        "jobs.run.trigger": "manual",
        "jobs.run.queue": "reports",
        "jobs.run.priority": 5,
        "jobs.run.executor": "simulated",
        "jobs.run.scheduled_for": run.scheduled_for.isoformat(),
        "jobs.run.outcome": "success",
    }
    assert [event.name for event in span.events] == ["started"]
    assert span.status.status_code == StatusCode.OK


def test_a_run_without_a_cause_starts_a_trace_of_its_own(spans):
    job = make_job(name="alone")
    run_now_and_execute(job)
    assert spans()["jobs.run alone"].parent is None


def test_a_failure_with_retries_left_says_retried_and_is_an_error(spans):
    job = make_job(name="flaky", max_retries=2)
    (run,) = run_now_and_execute(
        job, SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=1.0)
    )
    assert run.status == "failed"
    span = spans()["jobs.run flaky"]
    assert [event.name for event in span.events] == ["started", "retried"]
    assert span.attributes["jobs.run.outcome"] == "failed"
    assert span.status.status_code == StatusCode.ERROR


class WaitsToBeStopped:
    """An executor that runs until the worker stops it (a timeout, a cancel)."""

    def __init__(self, cancel: bool = False) -> None:
        self.cancel = cancel

    def execute(self, ticket, context: ExecutionContext) -> Outcome:
        if self.cancel:
            engine.cancel_run(JobHistory.objects.get(pk=ticket.run_id), by="alice")
        stopped = context.stop.wait(30)
        return Outcome(succeeded=False, log=f"stopped: {stopped} ({context.reason})")


def _execute_with_a_live_heartbeater(job, executor) -> None:
    engine.run_now(job)
    heartbeater = Heartbeater(interval=60, watch_interval=0.05).start()
    try:
        run_batch(
            engine.ready_tickets(timezone.now() + timedelta(seconds=1)),
            worker=WORKER,
            executor=executor,
            heartbeater=heartbeater,
            context=ExecutionContext(),
            time_budget=60,
        )
    finally:
        heartbeater.stop()


@pytest.mark.django_db(transaction=True)
def test_a_run_past_its_timeout_says_timed_out(spans):
    job = make_job(name="slow", timeout_seconds=1)
    _execute_with_a_live_heartbeater(job, WaitsToBeStopped())
    span = spans()["jobs.run slow"]
    assert [event.name for event in span.events] == ["started", "timed out"]
    assert span.attributes["jobs.run.outcome"] == "timed_out"


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_run_says_cancelled(spans):
    job = make_job(name="cancelled")
    _execute_with_a_live_heartbeater(job, WaitsToBeStopped(cancel=True))
    span = spans()["jobs.run cancelled"]
    assert [event.name for event in span.events] == ["started", "cancelled"]
    assert span.attributes["jobs.run.outcome"] == "cancelled"


def test_a_python_task_s_own_spans_nest_under_the_run_s_span(spans):
    job = make_job(name="traced", executor=ExecutorKind.PYTHON, command="samples.traced")
    (run,) = run_now_and_execute(job, routed(SimulatedExecutor()))
    assert run.status == "success", run.log
    found = spans()
    assert found["inner step"].parent.span_id == found["jobs.run traced"].context.span_id


def test_a_chained_run_is_a_child_of_the_run_that_caused_it(spans):
    follow_up = make_job(name="follow-up")
    cause = make_job(name="cause")
    cause.set_chains(on_success=[follow_up], on_failure=[])
    cause.save()
    run_now_and_execute(cause)
    chained = JobHistory.objects.get(job=follow_up)
    cause_span = spans()["jobs.run cause"]
    assert chained.traceparent == traceparent_of(cause_span)

    tracing_setup.EXPORTER.clear()
    run_now_and_execute(follow_up, runs=0)
    span = spans()["jobs.run follow-up"]
    assert span.parent.span_id == cause_span.context.span_id
    assert span.attributes["jobs.run.trigger"] == "chain"


def test_shell_runs_get_traceparent_in_their_environment(spans, settings):
    settings.JOBS_SHELL_ENABLED = True
    job = make_job(name="env", executor=ExecutorKind.SHELL, command="printenv TRACEPARENT")
    (run,) = run_now_and_execute(job, routed(SimulatedExecutor()))
    assert f"\n{traceparent_of(spans()['jobs.run env'])}\n" in run.log


def test_command_runs_get_their_run_s_traceparent_not_the_scheduler_s(spans, monkeypatch, settings):
    settings.JOBS_MANAGEMENT_COMMANDS = ["shell"]
    monkeypatch.setenv("TRACEPARENT", "00-" + "1" * 32 + "-" + "2" * 16 + "-01")
    code = "import os; print('tp=' + os.environ['TRACEPARENT'])"
    job = make_job(name="cmd", executor=ExecutorKind.COMMAND, command=f'shell -c "{code}"')
    (run,) = run_now_and_execute(job, routed(SimulatedExecutor()))
    assert f"tp={traceparent_of(spans()['jobs.run cmd'])}" in run.log, run.log


def test_http_runs_send_the_traceparent_header(spans, settings):
    with Receiver() as target:
        settings.JOBS_HTTP_ALLOWED_HOSTS = ["127.0.0.1"]
        job = make_job(name="ping", executor=ExecutorKind.HTTP, command=f"{target.url}/ping")
        (run,) = run_now_and_execute(job, routed(SimulatedExecutor()))
        assert run.status == "success", run.log
        (request,) = target.wait_for(1)
    assert request.headers["traceparent"] == traceparent_of(spans()["jobs.run ping"])


def test_tracing_off_hands_on_no_traceparent(settings):
    settings.JOBS_SHELL_ENABLED = True
    job = make_job(name="env", executor=ExecutorKind.SHELL, command="printenv TRACEPARENT")
    (run,) = run_now_and_execute(job, routed(SimulatedExecutor()))
    assert run.status == "failed"  # printenv: no such variable
    assert "00-" not in run.log


@pytest.mark.django_db(transaction=True)
def test_the_claim_pass_and_the_reaper_are_spans(spans):
    job = make_job(name="due")
    type(job).objects.filter(pk=job.pk).update(next_run_at=timezone.now())
    Scheduler(
        workers=1, executor=SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=0.0)
    ).run_once()
    found = tracing_setup.EXPORTER.get_finished_spans()
    claims = [span.attributes["jobs.claimed"] for span in found if span.name == "jobs.claim"]
    assert sum(claims) == 1
    assert [span.attributes["jobs.reaped"] for span in found if span.name == "jobs.reap"] == [0]
    (run,) = (span for span in found if span.name == "jobs.run due")
    assert run.attributes["jobs.run.trigger"] == "schedule"


def test_an_enqueue_from_a_traced_request_is_the_parent_of_its_run_s_span(spans):
    from jobs.engine import enqueue
    from jobs.tests import enqueued_tasks

    enqueue.forget_job_ids()
    tracer = trace.get_tracer("jobs.tests")
    with tracer.start_as_current_span("POST /orders/") as request:
        result = enqueued_tasks.calculate_meaning_of_life.enqueue()
    run = JobHistory.objects.get(pk=result.id)
    assert run.traceparent == traceparent_of(request)
    enqueue.forget_job_ids()
