import pytest

from jobs.engine import enqueue


@pytest.fixture(autouse=True)
def _task_jobs_looked_up_afresh():
    """Each test's database starts without the tasks' jobs: no id cached by an earlier test."""
    enqueue.forget_job_ids()
    yield
    enqueue.forget_job_ids()
