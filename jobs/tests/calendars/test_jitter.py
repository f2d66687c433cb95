"""Jitter: each run starts up to jitter_seconds after its occurrence, the occurrence key
unchanged; a run whose start is still to come is left pending, not handed out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError

from jobs import engine
from jobs.calendars.planning import jitter_delay
from jobs.models import JobHistory, RunStatus
from jobs.tests.factories import NOW

pytestmark = pytest.mark.django_db


def test_a_jittered_run_keeps_its_occurrence_and_waits_for_its_start(make_job, clock):
    job = make_job(interval=1, interval_unit="hour", jitter_seconds=600)
    due = job.next_run_at
    clock.move_to(due)
    assert engine.claim_due() == []  # its start is later: nothing handed out now
    run = JobHistory.objects.get()
    assert run.scheduled_for == due and run.status == RunStatus.PENDING
    assert run.not_before == due + jitter_delay(job.pk.hex, due, 600)
    assert timedelta(0) <= run.not_before - due < timedelta(seconds=600)
    assert engine.claim_due() == []  # a second claim of the occurrence adds nothing
    assert JobHistory.objects.count() == 1


def test_the_delay_differs_between_occurrences_and_jobs():
    delays = {jitter_delay(key, NOW + timedelta(hours=h), 3600) for key in "ab" for h in range(5)}
    assert len(delays) == 10


@pytest.mark.parametrize("value", [-1, 3601])
def test_a_jitter_out_of_range_is_refused_at_its_field(make_job, value):
    with pytest.raises(ValidationError) as refused:
        make_job(jitter_seconds=value, clean=True)
    assert "jitter_seconds" in refused.value.message_dict
