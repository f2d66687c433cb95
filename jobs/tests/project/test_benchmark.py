"""The benchmark command runs every scenario on a tiny size, so that it cannot rot."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from jobs.bench.lag import LagHistogram
from jobs.bench.steady import occurrences_between, steady_plan
from jobs.management.commands.benchmark import format_report, throwaway_database

TINY = [
    "--jobs", "40",
    "--rate", "20", "--seconds", "1", "--warmup", "0.5",
    "--scale-jobs", "100", "--tries", "1",
    "--pages-jobs", "20", "--runs", "200", "--repeat", "1",
    "--alerts-running", "4",
    "--upcoming-jobs", "40",
    "--executor-runs", "10", "--shell-runs", "3", "--chatty", "3", "--chatty-seconds", "1.5",
    "--tracing-runs", "10", "--tracing-tries", "1",
]  # fmt: skip

MACHINE_FIELDS = {
    "cpu_count",
    "cpu_model",
    "platform",
    "python",
    "django",
    "database",
    "database_version",
    "git_commit",
    "git_dirty",
    "load_average",
    "load_average_end",
}
COMMON_FIELDS = {"scenario", "load_average_before", "load_average_after", "total_s"}
FIELDS = {
    "tracing": {"workers", "exports", "per_run"},
    "executors": {
        "workers",
        "chatty_runs",
        "run_seconds",
        "wall_s",
        "live_log_interval_s",
        "live_log_statements",
        "live_log_rows",
        "rows_per_statement",
        "statements_per_s",
        "rows_per_s",
        "ms_per_statement",
        "mb_per_s",
        "per_run",
    },
    "burst": {
        "jobs",
        "workers",
        "queues",
        "queue_limit",
        "runs",
        "unfinished",
        "skipped",
        "all_done_within_s",
        "runs_per_s",
        "wall_s",
        "lag_p50_ms",
        "lag_p99_ms",
        "lag_max_ms",
        "lag_mean_ms",
        "cpu_s",
        "rss_before_mb",
        "rss_after_mb",
        "rss_max_mb",
    },
    "steady": {
        "target_rate",
        "jobs",
        "seconds",
        "warmup_s",
        "workers",
        "expected_runs",
        "runs",
        "missed",
        "runs_per_s",
        "lag_p50_ms",
        "lag_p90_ms",
        "lag_p99_ms",
        "lag_max_ms",
        "lag_mean_ms",
        "cpu_s",
        "cpu_percent",
        "rss_at_scheduler_start_mb",
        "rss_start_mb",
        "rss_1min_mb",
        "rss_end_mb",
        "rss_max_mb",
        "rss_series_mb",
        "sqlite_memory_start_mb",
        "sqlite_memory_end_mb",
        "sqlite_memory_series_mb",
        "keep_per_job",
        "history_rows_end",
        "pruned_runs",
        "prune_longest_delete_ms",
    },
    "scale": {
        "jobs",
        "due",
        "pass_ms",
        "claim_ms",
        "pass_none_due_ms",
        "idle_loop_ms",
        "paused_loop_ms",
        "claim_batch",
        "passes",
    },
    "once": {
        "jobs",
        "due",
        "workers",
        "tries",
        "runs",
        "unfinished",
        "process_s",
        "process_max_s",
        "first_start_s",
        "last_finish_s",
        "empty_process_s",
        "processes",
    },
    "pages": {
        "jobs",
        "runs",
        "runs_last_24h",
        "repeat",
        *(
            f"{page}_{figure}"
            for page in ("dashboard", "job_list", "job_page", "history", "admin_jobs", "admin_runs")
            for figure in ("median_ms", "p90_ms")
        ),
        "count_all_runs_ms",
        "slowest_page",
        "slowest_median_ms",
        "prune_round_ms",
        "prune_probe_us_per_job",
        "prune_keep50_deleted",
        "prune_keep50_s",
        "prune_rows_per_s",
        "prune_statements",
        "prune_longest_delete_ms",
        "runs_after_prune",
        "pages",
    },
    "alerts": {
        "runs",
        "running",
        *(
            f"{figure}_{stat}"
            for figure in ("durations", "check_idle", "check_running")
            for stat in ("median_ms", "p90_ms")
        ),
        "durations_plan",
        "durations_read",
    },
    "upcoming": {
        "jobs",
        "every_second_jobs",
        "cron_expressions",
        "repeat",
        "upcoming_median_ms",
        "upcoming_p90_ms",
        "upcoming_7d_median_ms",
        "preview_median_ms",
        "api_preview_median_ms",
        "slowest_page",
        "slowest_median_ms",
        "read_jobs_ms",
        "count_and_order_ms",
        "pages",
    },
}


def run_benchmark(*args: str) -> str:
    out = io.StringIO()
    call_command("benchmark", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_every_scenario_runs_on_a_tiny_size_and_reports_every_field(capfd):
    report = json.loads(run_benchmark("--scenario", "all", "--json", *TINY))
    assert set(report["machine"]) == MACHINE_FIELDS
    assert report["machine"]["cpu_count"] >= 1
    assert report["machine"]["database"] == connection.vendor
    results = {result["scenario"]: result for result in report["results"]}
    assert list(results) == [
        "burst",
        "steady",
        "scale",
        "once",
        "pages",
        "alerts",
        "upcoming",
        "executors",
        "tracing",
    ]
    for scenario, fields in FIELDS.items():
        assert set(results[scenario]) == fields | COMMON_FIELDS, scenario

    burst = results["burst"]
    assert burst["runs"] == 40 and burst["unfinished"] == 0
    steady = results["steady"]
    assert steady["runs"] > 0 and steady["target_rate"] >= 20
    assert steady["runs"] == steady["expected_runs"] - steady["missed"]
    scale = results["scale"]
    assert [(row["jobs"], row["due"]) for row in scale["passes"]] == [
        (10, 0),
        (10, 1),
        (100, 0),
        (100, 1),
    ]
    # A whole runscheduler --once process ran the 40 due of the 100 jobs, then one with
    # nothing due; the runs started and finished within the process's time.
    whole = results["once"]
    assert (whole["jobs"], whole["due"], whole["runs"], whole["unfinished"]) == (100, 40, 40, 0)
    assert [row["due"] for row in whole["processes"]] == [40, 0]
    assert 0 < whole["first_start_s"] <= whole["last_finish_s"] < whole["process_s"]
    assert whole["empty_process_s"] > 0
    pages = results["pages"]
    assert pages["runs"] == 200
    assert {"page", "median_ms", "p90_ms", "cpu_ms", "queries"} <= set(pages["pages"][0])
    assert all(row["queries"] > 0 for row in pages["pages"])
    future = results["upcoming"]
    assert future["jobs"] == 40 and future["every_second_jobs"] == 2
    assert all(row["queries"] > 0 for row in future["pages"])
    executors = results["executors"]
    assert [
        (row["kind"].split()[0], row["runs"], row["succeeded"]) for row in executors["per_run"]
    ] == [
        ("simulated", 10, 10),
        ("python", 10, 10),
        ("shell", 3, 3),
    ]
    assert executors["live_log_statements"] >= 1
    assert executors["rows_per_statement"] >= 1
    traced = results["tracing"]
    assert [(row["tracing"], row["runs"]) for row in traced["per_run"]] == [
        ("off", 10),
        ("spans", 10),
        ("exported", 10),
    ]
    assert traced["exports"] >= 1  # the spans reached the collector stand-in
    # The progress went to stderr, the figures alone to stdout.
    assert "burst: creating 40 jobs" in capfd.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ["--jobs", "0"],
        ["--jobs", "ten"],
        ["--rate", "0"],
        ["--workers", "0"],
        ["--seconds", "0"],
        ["--repeat", "0"],
        ["--tries", "0"],
    ],
)
def test_out_of_range_arguments_are_refused(args):
    with pytest.raises(CommandError):
        run_benchmark(*args)


@pytest.mark.django_db(transaction=True)
def test_the_throwaway_database_goes_away_even_when_the_scenario_fails():
    with pytest.raises(RuntimeError), throwaway_database() as url:
        if connection.vendor == "sqlite":
            made = Path(url.removeprefix("sqlite:///")).parent
            assert made.is_dir()
        else:
            made = url.rsplit("/", 1)[1]
            assert made.startswith("bench_")
        raise RuntimeError("the scenario failed")
    if connection.vendor == "sqlite":
        assert not made.exists()
    else:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_database WHERE datname = %s", [made])
            assert cursor.fetchone()[0] == 0


def test_the_steady_plan_reaches_the_rate_with_intervals_of_one_to_ten_seconds():
    intervals = steady_plan(100)
    assert set(intervals) == set(range(1, 11))
    rate = sum(1 / every for every in intervals)
    assert 100 <= rate < 101


def test_occurrences_in_a_window_are_counted_on_the_grid():
    first = datetime(2026, 1, 1, tzinfo=UTC)
    count = occurrences_between
    assert count(first, 2, first, first + timedelta(seconds=10)) == 5  # 0, 2, 4, 6, 8
    assert count(first, 2, first + timedelta(seconds=1), first + timedelta(seconds=10)) == 4
    assert count(first, 3, first - timedelta(seconds=9), first) == 0


def test_the_lag_histogram_gives_percentiles_to_a_tenth_of_a_millisecond():
    lags = LagHistogram()
    for ms in range(1, 101):
        lags.add(ms / 1000)
    lags.add(-0.001)  # a clock step: counted as no lag
    figures = lags.figures()
    assert figures["lag_p50_ms"] == pytest.approx(50, abs=0.2)
    assert figures["lag_p99_ms"] == pytest.approx(99, abs=0.2)
    assert figures["lag_max_ms"] == 100.0
    assert lags.count == 101


def test_a_report_prints_a_table_per_scenario_a_column_per_size_and_its_rows():
    machine = {"cpu_count": 2, "cpu_model": "x", "python": "3", "django": "5", "database": "sqlite"}
    small = {"scenario": "scale", "jobs": 100_000, "pass_ms": 3.25}
    big = {"scenario": "scale", "jobs": 1_000_000, "pass_ms": 12.5}
    big["passes"] = [{"jobs": 10, "due": 1}]
    lines = format_report({"machine": machine, "results": [small, big]}).splitlines()
    assert lines[0].startswith("2 CPUs (x), Python 3, Django 5, sqlite")

    def row(name):
        return next(line for line in lines if line.startswith(f"{name} ")).split()[1:]

    assert row("jobs") == ["100,000", "1,000,000"]
    assert row("pass_ms") == ["3.25", "12.5"]
    assert any(line.split() == ["jobs", "due"] for line in lines)
