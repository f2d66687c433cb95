"""Two real scheduler processes on one database never run one enqueued task twice: each
run's start is a conditional update only one process wins (jobs/tests/processes.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from jobs.models import JobHistory, RunStatus
from jobs.tests import enqueued_tasks as tasks
from jobs.tests.processes import scheduler, wait_until

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
