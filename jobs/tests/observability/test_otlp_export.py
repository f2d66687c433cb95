"""The real export: a scheduler process with JOBS_OTEL sends its spans over OTLP/HTTP
(protobuf) to a receiver on loopback; a receiver that stalls or is down never slows or
fails a run."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from jobs.models import Job, JobHistory, RunStatus
from jobs.tests.factories import make_job
from jobs.tests.observability.receivers import Receiver, closed_port
from jobs.tests.processes import scheduler, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

TRACING = {
    "JOBS_OTEL": "true",
    "JOBS_SIM_MIN_SECONDS": "0",
    "JOBS_SIM_MAX_SECONDS": "0",
    "JOBS_SIM_FAILURE_RATE": "0",
    "OTEL_SERVICE_NAME": "scheduler-under-test",
    # Export a finished span within 50 ms rather than the SDK's 5 s.
    "OTEL_BSP_SCHEDULE_DELAY": "50",
}


def due_job(name: str, **fields) -> Job:
    job = make_job(name=name, **fields)
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now() - timedelta(seconds=1))
    return job


def spans_in(body: bytes) -> list:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return [
        (resource.resource, span)
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]


def test_a_scheduler_exports_its_runs_spans_over_otlp_http():
    job = due_job("exported")
    with Receiver() as collector:
        process = scheduler(
            "--once",
            "--workers",
            "1",
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
            **TRACING,
        )
        try:
            assert process.wait(timeout=60) == 0, process.log()
        finally:
            process.cleanup()
        received = collector.requests
    assert {r.path for r in received} == {"/v1/traces"}
    assert {r.headers["content-type"] for r in received} == {"application/x-protobuf"}
    spans = [pair for r in received for pair in spans_in(r.body)]
    runs = [span for _, span in spans if span.name == "jobs.run exported"]
    assert len(runs) == 1
    attributes = {a.key: a.value for a in runs[0].attributes}
    assert attributes["jobs.job.id"].string_value == job.pk.hex
    assert attributes["jobs.run.outcome"].string_value == "success"
    assert attributes["jobs.run.trigger"].string_value == "schedule"
    assert "jobs.claim" in {span.name for _, span in spans}
    (resource, _), *_ = spans
    names = {a.key: a.value.string_value for a in resource.attributes}
    assert names["service.name"] == "scheduler-under-test"


def test_a_stalled_collector_never_holds_up_a_run():
    """The collector accepts the export and never answers: runs go on finishing."""
    job = due_job("every second", interval=1)
    with Receiver(hang=True) as collector:
        process = scheduler(
            "--workers", "1", "--tick", "0.2", OTEL_EXPORTER_OTLP_ENDPOINT=collector.url, **TRACING
        )
        try:
            collector.wait_for(1, timeout=60)  # an export is stuck from now on
            stuck_since = timezone.now()
            wait_until(
                lambda: (
                    JobHistory.objects.filter(
                        job=job, status=RunStatus.SUCCESS, created_at__gt=stuck_since
                    ).count()
                    >= 2
                ),
                timeout=60,
            )
            assert not collector.released.is_set()  # the export still hangs
        finally:
            process.kill()
            process.cleanup()


def test_a_collector_that_is_down_fails_no_run_and_the_spans_are_dropped_with_a_warning():
    job = due_job("unexported")
    endpoint = f"http://127.0.0.1:{closed_port()}"
    process = scheduler(
        "--once",
        "--workers",
        "1",
        OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
        OTEL_EXPORTER_OTLP_TIMEOUT="2",
        **TRACING,
    )
    try:
        assert process.wait(timeout=90) == 0, process.log()
        log = process.log()
    finally:
        process.cleanup()
    assert JobHistory.objects.get(job=job).status == RunStatus.SUCCESS
    assert "Failed to export" in log or "Transient error" in log, log
