"""JOBS_LOG_FORMAT=json: one JSON object per line, with the run's fields while it runs."""

from __future__ import annotations

import io
import json
import logging
import sys

import pytest

from jobs.observability.json_logs import JsonFormatter
from jobs.runtime import observed
from jobs.tests.factories import make_job
from jobs.tests.observability.helpers import run_now_and_execute
from jobs.tests.project.test_deploy_settings import manage, production_env


@pytest.fixture
def json_lines():
    """The worker's log lines through a JsonFormatter, as parsed objects."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    worker_logger = logging.getLogger("jobs.runtime.worker")
    level = worker_logger.level
    worker_logger.addHandler(handler)
    worker_logger.setLevel(logging.INFO)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    worker_logger.removeHandler(handler)
    worker_logger.setLevel(level)
    observed.forget()


@pytest.mark.django_db
def test_the_lines_written_while_a_run_runs_carry_its_job_run_attempt_and_queue(json_lines):
    job = make_job(name="nightly report", queue="reports")
    (run,) = run_now_and_execute(job)
    lines = [line for line in json_lines() if line.get("run_id") == run.pk.hex]
    assert [line["message"].split(":")[0] for line in lines] == ["run started", "run finished"]
    for line in lines:
        assert line["job_id"] == job.pk.hex
        assert line["job_name"] == "nightly report"
        assert line["attempt"] == 1
        assert line["queue"] == "reports"
        assert line["level"] == "INFO"
        assert line["logger"] == "jobs.runtime.worker"
        assert "trace_id" not in line  # tracing is off


def test_a_line_outside_any_run_has_no_run_fields_and_keeps_its_extras_and_traceback():
    try:
        raise ValueError("broken")
    except ValueError:
        record = logging.getLogger("jobs").makeRecord(
            "jobs",
            logging.ERROR,
            __file__,
            1,
            "failed %s",
            ("x",),
            sys.exc_info(),
            extra={"job_count": 3},
        )
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "failed x"
    assert line["job_count"] == 3
    assert "ValueError: broken" in line["exception"]
    assert "run_id" not in line


def test_the_standalone_site_logs_json_with_jobs_log_format_json(tmp_path):
    environment = production_env(
        JOBS_LOG_FORMAT="json", DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}"
    )
    code = "import logging; logging.getLogger('jobs').warning('hello %s', 'there')"
    done = manage("shell", "-c", code, env=environment)
    assert done.returncode == 0, done.stderr
    (line,) = [json.loads(text) for text in done.stderr.splitlines() if text.startswith("{")]
    assert line["message"] == "hello there"
    assert line["level"] == "WARNING"


def test_an_unknown_log_format_stops_the_site_with_a_message():
    done = manage("check", env=production_env(JOBS_LOG_FORMAT="xml"))
    assert done.returncode != 0
    assert "JOBS_LOG_FORMAT must be text or json, got 'xml'" in done.stderr
