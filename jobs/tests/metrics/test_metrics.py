"""/metrics from the database, the scheduler's own metrics, and scheduler heartbeats."""

from __future__ import annotations

import socket
import urllib.request
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from jobs import engine, metrics
from jobs.executors import ExecutionContext, SimulatedExecutor
from jobs.models import JobHistory, SchedulerHeartbeat
from jobs.runtime.worker import Heartbeater, run_batch
from jobs.tests.api_helpers import finish_run
from jobs.tests.factories import WORKER, make_job

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def scheduler_metrics_off_after():
    yield
    metrics.enable_scheduler_metrics(False)


def scrape(client, **headers) -> dict[str, float]:
    """GET /metrics, parse it with prometheus-client's parser, flatten the samples."""
    response = client.get("/metrics", **headers)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return samples(response.content.decode())


def samples(text: str) -> dict[str, float]:
    flat: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            flat[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return flat


def test_metrics_parse_and_move_when_runs_finish(client):
    before = scrape(client)
    assert before["jobs_runs_finished_recent{status=failed}"] == 0
    assert before["jobs_runs_pending"] == 0
    assert before["jobs_run_duration_recent_seconds_gcount"] == 0

    job = make_job()
    finish_run(job, succeeded=False, duration=timedelta(seconds=2))
    finish_run(job, succeeded=True, duration=timedelta(seconds=20))
    engine.run_now(job)  # one pending

    after = scrape(client)
    assert after["jobs_runs_finished_recent{status=failed}"] == 1
    assert after["jobs_runs_finished_recent{status=success}"] == 1
    assert after["jobs_runs_pending"] == 1
    assert after["jobs_runs_running"] == 0
    assert after["jobs_run_duration_recent_seconds_gcount"] == 2
    # (SQLite computes it from julian days: precise to well under a millisecond.)
    assert after["jobs_run_duration_recent_seconds_gsum"] == pytest.approx(22.0, abs=1e-3)
    assert after["jobs_run_duration_recent_seconds_bucket{le=2.5}"] == 1
    assert after["jobs_run_duration_recent_seconds_bucket{le=30.0}"] == 2
    assert after["jobs_run_duration_recent_seconds_bucket{le=+Inf}"] == 2
    assert after["jobs_run_start_lag_recent_seconds_gcount"] == 2
    assert after["jobs_metrics_window_seconds"] == 300


def test_old_runs_leave_the_recent_window(client):
    job = make_job()
    finish_run(job, succeeded=False, now=timezone.now() - timedelta(hours=1))
    assert scrape(client)["jobs_runs_finished_recent{status=failed}"] == 0


def test_the_due_backlog_counts_active_jobs_whose_time_has_come(client):
    job = make_job()
    make_job(is_active=False)
    JobHistory.objects.all().delete()
    type(job).objects.filter(pk=job.pk).update(next_run_at=timezone.now() - timedelta(minutes=2))
    figures = scrape(client)
    assert figures["jobs_due_backlog"] == 1
    assert figures["jobs_due_backlog_oldest_seconds"] == pytest.approx(120, abs=5)
    engine.claim_due()
    figures = scrape(client)
    assert figures["jobs_due_backlog"] == 0
    assert figures["jobs_runs_pending"] == 1


def test_a_scrape_costs_a_fixed_number_of_queries(client, django_assert_max_num_queries):
    for _ in range(5):
        finish_run(make_job(), succeeded=True)
    with django_assert_max_num_queries(9):
        client.get("/metrics")


def test_metrics_need_the_bearer_token_when_one_is_set(client, settings):
    settings.METRICS_TOKEN = "s3cret"
    refused = client.get("/metrics")
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret").status_code == 200


def test_the_scheduler_heartbeat_is_upserted_and_reported(client):
    assert "jobs_scheduler_last_seen_timestamp_seconds" not in scrape(client)
    assert metrics.scheduler_alive("host-a:1", every=0)
    first = SchedulerHeartbeat.objects.get(name="host-a:1")
    assert metrics.scheduler_alive("host-a:1", every=0)
    again = SchedulerHeartbeat.objects.get(name="host-a:1")
    assert again.started_at == first.started_at
    assert again.seen_at >= first.seen_at
    assert SchedulerHeartbeat.objects.count() == 1

    figures = scrape(client)
    assert figures["jobs_scheduler_last_seen_timestamp_seconds"] == pytest.approx(
        again.seen_at.timestamp()
    )
    assert figures["jobs_schedulers_alive"] == 1


def test_the_heartbeat_is_written_at_most_every_few_seconds():
    assert metrics.scheduler_alive("host-b:2", every=60)
    assert not metrics.scheduler_alive("host-b:2", every=60)


def test_a_dead_schedulers_old_heartbeat_is_pruned():
    SchedulerHeartbeat.objects.create(
        name="gone:9",
        pid=9,
        host="gone",
        started_at=timezone.now() - timedelta(days=30),
        seen_at=timezone.now() - timedelta(days=30),
    )
    metrics.scheduler_alive("host-c:3", every=0)
    assert list(SchedulerHeartbeat.objects.values_list("name", flat=True)) == ["host-c:3"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_scheduler_serves_its_own_counters_updated_per_batch():
    port = free_port()
    server = metrics.serve_scheduler_metrics(port)

    def scheduler_figures() -> dict[str, float]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            return samples(response.read().decode())

    before = scheduler_figures()
    job = make_job()
    runs = [engine.run_now(job, now=timezone.now() + timedelta(microseconds=i)) for i in range(3)]
    tickets = [t for t in engine.ready_tickets(timezone.now() + timedelta(seconds=1))]
    assert {t.run_id for t in tickets} == {r.pk for r in runs}
    executed, _ = run_batch(
        tickets,
        worker=WORKER,
        executor=SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=1.0),
        heartbeater=Heartbeater(interval=60),
        context=ExecutionContext(),
        time_budget=60,
    )
    assert len(executed) == 3
    metrics.observe_pass(claimed=4, reaped=1)

    after = scheduler_figures()
    name = "jobs_scheduler_runs_finished_total{status=failed}"
    assert after[name] - before.get(name, 0) == 3
    count = "jobs_scheduler_run_duration_seconds_count"
    assert after[count] - before.get(count, 0) == 3
    claimed = "jobs_scheduler_runs_claimed_total"
    assert after[claimed] - before.get(claimed, 0) == 4
    assert "process_cpu_seconds_total" in after
    server.shutdown()


@pytest.mark.django_db(transaction=True)
def test_runscheduler_once_records_its_heartbeat_and_takes_a_metrics_port(settings):
    metrics._beats.clear()  # other tests' schedulers had this process's name
    settings.JOBS_SIM_MIN_SECONDS = settings.JOBS_SIM_MAX_SECONDS = 0
    job = make_job()
    type(job).objects.filter(pk=job.pk).update(next_run_at=timezone.now())
    port = free_port()
    out = StringIO()
    call_command(
        "runscheduler", "--once", "--workers", "1", "--metrics-port", str(port), stdout=out
    )
    assert "claimed 1 runs" in out.getvalue()
    assert SchedulerHeartbeat.objects.count() == 1
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        figures = samples(response.read().decode())
    assert figures["jobs_scheduler_runs_claimed_total"] >= 1
