"""The pages scenario: server time of the screens and the admin with a million runs
(jobs/bench/history.py builds them), then the cost of pruning that history."""

from __future__ import annotations

import statistics
import time
import warnings
from datetime import timedelta

from django.db import connection
from django.test import Client
from django.utils import timezone

from jobs.bench.history import build_history
from jobs.bench.lag import percentile
from jobs.bench.progress import Progress
from jobs.bench.report import Result
from jobs.models import Job, JobHistory
from jobs.runtime import retention
from jobs.sql import store

# A page: its label, its URL, the request's extra headers.
Page = tuple[str, str, dict]

# The pages the target (median under 100 ms with a million runs) is for.
_HEADLINE_PAGES = {
    "dashboard": "dashboard",
    "job list": "job_list",
    "job page": "job_page",
    "history": "history",
    "admin job list": "admin_jobs",
    "admin run list": "admin_runs",
}


class QueryCounter:
    """A connection.execute_wrapper that counts the statements (what
    CaptureQueriesContext reports, without its log that each request empties)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        self.count += 1
        return execute(sql, params, many, context)


def run(
    jobs: int,
    runs: int,
    progress: Progress | None = None,
    *,
    days: float = 10.0,
    repeat: int = 20,
    reuse: bool = False,
    prune: bool = True,
) -> Result:
    """Server time of the screens and the admin with `jobs` jobs and `runs` runs
    (build_history), each page requested `repeat` times through Django's test Client
    (the whole middleware stack, a logged-in superuser) after a warm-up.

    Then, unless `prune` is off, the cost of pruning that history: one round probing
    every job with nothing to delete (the default 1,000 per job), and one deleting down
    to 50 runs per job.
    """
    progress = progress or Progress(silent=True)
    # WhiteNoise warns that STATIC_ROOT was never collected; irrelevant to these timings.
    warnings.filterwarnings("ignore", message="No directory at")

    if not (reuse and Job.objects.exists()):
        build_history(jobs, runs, days=days, progress=progress)
    client = logged_in_client()
    total_runs = JobHistory.objects.count()
    rows = _request_all(client, _listing(runs, total_runs), repeat, progress)
    result = _summary(rows, total_runs, repeat)
    if prune:
        result.update(_measure_pruning(progress))
    result["pages"] = rows
    return result


def logged_in_client() -> Client:
    from django.contrib.auth import get_user_model

    user_model = get_user_model()
    user = user_model.objects.filter(username="bench").first() or user_model.objects.create_user(
        "bench", is_staff=True, is_superuser=True
    )
    client = Client()
    client.force_login(user)
    return client


def _listing(runs: int, total_runs: int) -> list[Page]:
    """Every page measured: the screens, their htmx fragments, filters, the admin."""
    from django.urls import reverse

    from jobs.admin import LIST_PER_PAGE
    from jobs.web.pagination import Cursor

    newest = JobHistory.objects.newest_first().first()
    busiest = Job.objects.get(pk=newest.job_id) if newest else Job.objects.order_by("name").first()
    before = JobHistory.objects.newest_first()[min(1000, max(0, runs - 1))] if newest else None
    job_page = reverse("jobs:job_detail", args=[busiest.pk])
    admin_jobs = reverse("admin:jobs_job_changelist")
    admin_runs = reverse("admin:jobs_jobhistory_changelist")
    htmx = {"HTTP_HX_REQUEST": "true"}
    deep_page = max(1, min(50, total_runs // LIST_PER_PAGE))  # page 50 with a million
    year = newest.created_at.year if newest else 2026
    month = newest.created_at.month if newest else 1
    listing: list[Page] = [
        ("dashboard", "/", {}),
        ("job list", "/jobs/", {}),
        ("job page", job_page, {}),
        ("history", "/history/", {}),
        ("admin job list", admin_jobs, {}),
        ("admin run list", admin_runs, {}),
        ("dashboard (htmx)", "/", htmx),
        ("job list (htmx)", "/jobs/", htmx),
        ("job page (htmx)", job_page, htmx),
        ("history (htmx)", "/history/", htmx),
        ("jobs: search + filters, page 3", "/jobs/?q=backup&state=failed&active=yes&page=3", {}),
        ("history: failed", "/history/?status=failed", {}),
        ("history: job name", "/history/?job_name=report-0", {}),
        ("history: one job", f"/history/?job={busiest.pk}", {}),
        (
            "history: 1,000 runs back",
            f"/history/?before={Cursor.of(before)}" if before else "/",
            {},
        ),
        ("history: empty dates", "/history/?date_from=2000-01-01&date_to=2000-01-02", {}),
        ("admin index", reverse("admin:index"), {}),
        ("admin jobs: state=failed", f"{admin_jobs}?state=failed", {}),
        ("admin jobs: search", f"{admin_jobs}?q=backup-0050", {}),
        ("admin runs: failed", f"{admin_runs}?status__exact=failed", {}),
        (f"admin runs: page {deep_page}", f"{admin_runs}?p={deep_page}", {}),
        ("admin runs: one job", f"{admin_runs}?job={busiest.pk}", {}),
        ("admin runs: a year", f"{admin_runs}?created_at__year={year}", {}),
        (
            "admin runs: a month",
            f"{admin_runs}?created_at__year={year}&created_at__month={month}",
            {},
        ),
        ("admin runs: search by job", f"{admin_runs}?q=backup-0050", {}),
        ("admin runs: search (all)", f"{admin_runs}?q=backup", {}),
        ("admin job page", reverse("admin:jobs_job_change", args=[busiest.pk]), {}),
    ]
    if newest:
        listing.append(
            ("admin run page", reverse("admin:jobs_jobhistory_change", args=[newest.pk]), {})
        )
    # The job form, a task's fields as htmx swaps them in, a run's page and its live part.
    listing += [
        ("job form", reverse("jobs:job_create"), {}),
        (
            "job form: a task's fields (htmx)",
            f"{reverse('jobs:task_arguments')}?task=jobs.example_tasks.daily_report",
            htmx,
        ),
    ]
    if newest:
        run_page = reverse("jobs:run_detail", args=[newest.pk])
        listing += [("run page", run_page, {}), ("run page (htmx)", run_page, htmx)]
    return listing


def _request_all(
    client: Client, listing: list[Page], repeat: int, progress: Progress
) -> list[Result]:
    """A row of figures per page, and the dashboard once more with its cache cold."""
    from django.test.utils import override_settings

    rows: list[Result] = []
    progress("pages: requesting", len(listing) + 1)
    for done, (label, url, headers) in enumerate(listing):
        rows.append({"page": label, **measure_page(client, url, headers, repeat)})
        progress.update(done + 1)
    # The dashboard when its cache of completed hours is cold: it counts the whole day.
    with override_settings(JOBS_DASHBOARD_CACHE_SECONDS=0):
        rows.append({"page": "dashboard, cold cache", **measure_page(client, "/", {}, repeat)})
    progress.end()
    return rows


def measure_page(client: Client, url: str, headers: dict, repeat: int) -> Result:
    """Median, p90 and CPU of `repeat` requests of `url`, and the queries of one."""
    # Warm-up (templates compiled, caches filled), counting the queries on the way.
    for _ in range(2 if repeat > 2 else 1):
        queries = QueryCounter()
        with connection.execute_wrapper(queries):
            response = client.get(url, **headers)
        if response.status_code != 200:
            raise RuntimeError(f"{url} answered {response.status_code}")
    times, cpu = [], []
    for _ in range(repeat):
        began, cpu_began = time.perf_counter(), time.process_time()
        client.get(url, **headers)
        times.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - cpu_began) * 1000)
    return {
        "median_ms": round(statistics.median(times), 1),
        "p90_ms": round(percentile(times, 0.9), 1),
        "cpu_ms": round(statistics.median(cpu), 1),
        "queries": queries.count,
    }


def _summary(rows: list[Result], total_runs: int, repeat: int) -> Result:
    day_ago = timezone.now() - timedelta(days=1)
    result: Result = {
        "jobs": Job.objects.count(),
        "runs": total_runs,
        "runs_last_24h": JobHistory.objects.filter(created_at__gte=day_ago).count(),
        "repeat": repeat,
    }
    by_label = {row["page"]: row for row in rows}
    for label, key in _HEADLINE_PAGES.items():
        result[f"{key}_median_ms"] = by_label[label]["median_ms"]
        result[f"{key}_p90_ms"] = by_label[label]["p90_ms"]
    # For comparison, what the lists never do: count every run.
    began = time.perf_counter()
    JobHistory.objects.count()
    result["count_all_runs_ms"] = round((time.perf_counter() - began) * 1000, 1)
    result["slowest_page"] = max(rows, key=lambda row: row["median_ms"])["page"]
    result["slowest_median_ms"] = max(row["median_ms"] for row in rows)
    return result


def _measure_pruning(progress: Progress) -> Result:
    """Prune the big history: a round with nothing to delete, then down to 50 per job."""
    jobs = int(
        JobHistory.objects.values("job_id").distinct().count()
    )  # jobs that have runs (probed)
    progress("pruning: a round, nothing to delete")
    probe = retention.Pruner(retention.Policy(keep_per_job=1000))
    began = time.perf_counter()
    probe.step()
    probe_s = time.perf_counter() - began
    progress("pruning: down to 50 runs per job")
    before = JobHistory.objects.count()
    cut = retention.Pruner(retention.Policy(keep_per_job=50))
    # As prunehistory does it: the database's log kept in check beside the deletes
    # (on SQLite, checkpointed by a thread of its own: jobs/sql/sqlite/wal.py).
    with store().checkpointer():
        began = time.perf_counter()
        cut.step()
        cut_s = time.perf_counter() - began
    progress.end()
    return {
        "prune_round_ms": round(probe_s * 1000, 1),
        "prune_probe_us_per_job": round(probe_s / max(jobs, 1) * 1e6, 1),
        "prune_keep50_deleted": cut.stats.deleted,
        "prune_keep50_s": round(cut_s, 2),
        "prune_rows_per_s": round(cut.stats.deleted / cut_s) if cut_s else 0,
        "prune_statements": cut.stats.statements,
        "prune_longest_delete_ms": round(cut.stats.longest_statement * 1000, 1),
        "runs_after_prune": before - cut.stats.deleted,
    }
