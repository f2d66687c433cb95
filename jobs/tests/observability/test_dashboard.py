"""deploy/: the Grafana dashboard and the Prometheus rules name only metrics the app
exports, and the rules load in Prometheus's own checker."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from jobs import metrics
from jobs.tests.factories import make_job
from jobs.tests.observability.helpers import run_now_and_execute

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD = ROOT / "deploy" / "grafana" / "scheduler-dashboard.json"
RULES = ROOT / "deploy" / "prometheus" / "scheduler-rules.yml"
# A metric name in PromQL: ours all start with jobs_ (process_* is prometheus-client's).
METRIC = re.compile(r"\b(jobs_[a-z_]+)\b")


def exported_names(client) -> set[str]:
    """Every sample name /metrics and a scheduler's own registry export."""
    # Samples for the families that have none until something happened.
    run_now_and_execute(make_job(queue="reports"))
    metrics.scheduler_alive("dashboard-test:1", every=0)
    text = client.get("/metrics").content.decode()
    families = [*text_string_to_metric_families(text), *metrics.SCHEDULER_REGISTRY.collect()]
    names = set()
    for family in families:
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
    return names


def dashboard_queries() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel["targets"]]


@pytest.mark.django_db
def test_every_dashboard_and_rule_query_names_a_metric_the_app_exports(client):
    exported = exported_names(client)
    queries = dashboard_queries()
    groups = yaml.safe_load(RULES.read_text())["groups"]
    rules = [rule["expr"] for group in groups for rule in group["rules"]]
    assert len(queries) >= 14 and len(rules) >= 7
    named = {name for query in [*queries, *rules] for name in METRIC.findall(query)}
    assert named - exported == set()
    # The dashboard covers what it is for.
    for needed in (
        "jobs_runs_finished_recent",
        "jobs_run_start_lag_recent_seconds_bucket",
        "jobs_runs_running_long",
        "jobs_queue_oldest_pending_seconds",
        "jobs_schedulers_alive",
    ):
        assert any(needed in query for query in queries), needed


def test_the_dashboard_is_grafana_json_with_a_prometheus_data_source_variable():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["title"]
    (variable,) = dashboard["templating"]["list"]
    assert (variable["type"], variable["query"]) == ("datasource", "prometheus")
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_promtool_loads_the_rules():
    done = subprocess.run(
        ["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 7 rules found" in done.stdout
