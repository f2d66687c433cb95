"""Real processes on one database: two schedulers never run one enqueued task twice (each
run's start is a conditional update only one process wins), and two processes enqueueing
a task for the first time at once make one job for it (its unique code key)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

from jobs.models import Job, JobHistory, RunStatus
from jobs.tests import enqueued_tasks as tasks
from jobs.tests.processes import BASE_DIR, child_env, scheduler, wait_until

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

ENQUEUED = 300


def test_two_schedulers_run_each_enqueued_task_exactly_once(tmp_path):
    out = tmp_path / "calls"
    results = [tasks.append_pid.enqueue(str(out), f"call-{n}") for n in range(ENQUEUED)]
    procs = [scheduler("--workers", "4", "--tick", "0.2") for _ in range(2)]
    try:
        done = JobHistory.objects.filter(status=RunStatus.SUCCESS)
        wait_until(lambda: done.count() >= ENQUEUED, 180, interval=0.2)
        for proc in procs:
            assert proc.stop(timeout=60) == 0, proc.log()
        logs = "".join(proc.log() for proc in procs)
        assert "Traceback" not in logs, logs
    finally:
        for proc in procs:
            proc.cleanup()

    calls = Counter(line.split()[0] for line in out.read_text().splitlines())
    assert calls == Counter({f"call-{n}": 1 for n in range(ENQUEUED)})
    assert JobHistory.objects.count() == ENQUEUED  # no retry, no second attempt
    workers = {tasks.append_pid.get_result(result.id).worker_ids[0] for result in results}
    assert all(workers)


FIRST_ENQUEUES = """
import sys, time
from pathlib import Path
import django
django.setup()
from jobs.tests import enqueued_tasks as tasks
go = Path(sys.argv[1])
for _ in range(6000):  # at most 60 s for the other process to be ready
    if go.exists():
        break
    time.sleep(0.01)
for number in range(20):
    tasks.noop_task.enqueue(number)
print("enqueued")
"""


def test_two_processes_enqueueing_a_task_first_at_once_make_one_job(tmp_path):
    go = tmp_path / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", FIRST_ENQUEUES, str(go)],
            cwd=BASE_DIR,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    go.touch()  # both start their first enqueue together
    outputs = [child.communicate(timeout=120)[0] for child in children]

    assert all(child.returncode == 0 for child in children), outputs
    jobs = Job.objects.filter(enqueued_task=True)
    assert jobs.count() == 1
    assert JobHistory.objects.filter(job=jobs.get()).count() == 40
