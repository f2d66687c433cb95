"""deploy/scale-workers: the rule that adds or removes a queue's workers, and the script
itself run against the site's API with a stand-in for systemctl."""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from jobs.access.permissions import JOB_VIEWERS
from jobs.tests.factories import make_job, make_run, make_token, make_user

SCRIPT = Path(__file__).resolve().parents[3] / "deploy" / "scale-workers"


def _load():  # type: ignore[no-untyped-def]
    loader = importlib.machinery.SourceFileLoader("scale_workers", str(SCRIPT))
    spec = importlib.util.spec_from_loader("scale_workers", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


scale = _load()
POOL = scale.Pool("reports", "reports", least=1, most=3)


def figures(pending=0, running=0, oldest=0.0, limit=None):  # type: ignore[no-untyped-def]
    return scale.Figures(pending, running, oldest, limit)


def decide(found, workers):  # type: ignore[no-untyped-def]
    return scale.decide(found, workers, POOL, up_after=60, threads=4)


def test_a_worker_is_added_while_the_oldest_wait_passes_the_threshold():
    assert decide(figures(pending=5, oldest=61), 1) == scale.UP
    assert decide(figures(pending=5, oldest=59), 1) == scale.STAY
    assert decide(figures(pending=5, oldest=600), 3) == scale.STAY  # at the most


def test_no_worker_is_added_to_a_queue_at_its_limit():
    assert decide(figures(pending=5, running=2, oldest=600, limit=2), 1) == scale.STAY


def test_a_worker_is_stopped_when_nothing_waits_and_the_others_have_room():
    assert decide(figures(pending=0, running=4), 2) == scale.DOWN
    assert decide(figures(pending=0, running=5), 2) == scale.STAY  # 4 threads left
    assert decide(figures(pending=0), 1) == scale.STAY  # the least
    assert decide(figures(pending=1, oldest=5), 2) == scale.STAY


def test_the_pool_is_brought_within_its_bounds_whatever_the_figures():
    assert decide(None, 0) == scale.UP
    assert decide(figures(), 4) == scale.DOWN
    assert decide(None, 2) == scale.STAY


def test_a_pool_is_read_from_its_argument():
    assert scale.parse_pool("reports=jobs-reports:2:8") == ("reports", "jobs-reports", 2, 8)
    assert scale.parse_pool("default") == ("default", "default", 1, 4)
    for bad in ("two words", "a=b:3:1", "a:1"):
        with pytest.raises(argparse.ArgumentTypeError):
            scale.parse_pool(bad)


FAKE_SYSTEMCTL = """#!/bin/sh
echo "$@" >> "{log}"
if [ "$1" = list-units ]; then
  echo "jobs-huey@reports.1.service loaded active running Job scheduler Huey worker reports.1"
  echo "jobs-huey@reports.3.service loaded active running Job scheduler Huey worker reports.3"
fi
"""


@pytest.mark.django_db(transaction=True)
def test_the_script_reads_the_api_and_starts_the_next_worker(live_server, tmp_path, settings):
    settings.JOBS_QUEUE_LIMITS = {"reports": 10}
    job = make_job(queue="reports")
    make_run(job, status="pending", queue="reports", at=timezone.now() - timedelta(minutes=5))
    token = tmp_path / "token"
    token.write_text(make_token(make_user("scaler", JOB_VIEWERS)))
    log = tmp_path / "systemctl.log"
    systemctl = tmp_path / "systemctl"
    systemctl.write_text(FAKE_SYSTEMCTL.format(log=log))
    systemctl.chmod(0o755)

    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--url",
            live_server.url,
            "--token-file",
            str(token),
            "--queue",
            "reports=reports:1:4",
            "--systemctl",
            str(systemctl),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == "queue reports: 2 workers, start jobs-huey@reports.2.service\n"
    assert log.read_text().splitlines()[-1] == "start --no-block jobs-huey@reports.2.service"


def test_the_script_changes_nothing_when_the_site_does_not_answer(tmp_path):
    token = tmp_path / "token"
    token.write_text("x")
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--url",
            "http://127.0.0.1:9",
            "--token-file",
            str(token),
            "--queue",
            "reports",
            "--systemctl",
            "/nonexistent/systemctl",
            "--timeout",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("scale-workers: could not read the queues:")
