"""The questions asked about jobs (Job.objects), each answered by one bounded query."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from datetime import datetime
from functools import reduce

from django.db import models
from django.db.models import Q
from django.utils.text import smart_split, unescape_string_literal

from jobs.models.choices import STATE_BY_LAST_STATUS, JobState, RunStatus

# What a job search looks in: the dashboard's job list, the API's `search` and the admin.
JOB_SEARCH_FIELDS = ("name", "description", "command")


def search_terms(text: str) -> list[str]:
    """The words of a search; a "quoted phrase" counts as one word.

    The admin's rule (Django splits its search box the same way), used by every search
    here so that one text finds the same jobs on every screen.
    """
    terms = []
    for word in smart_split(text):
        if word[0] in "\"'" and word[-1] == word[0]:
            word = unescape_string_literal(word)
        if word:
            terms.append(word)
    return terms


def every_term_in(fields: Sequence[str], text: str) -> Q:
    """Each word of `text` is in one of `fields`, in any case (no words: everything)."""
    return reduce(
        operator.and_,
        (
            reduce(operator.or_, (Q(**{f"{field}__icontains": term}) for field in fields))
            for term in search_terms(text)
        ),
        Q(),
    )


# The job list's queue filter offers at most this many names.
MAX_QUEUE_NAMES_LISTED = 200


class JobQuerySet(models.QuerySet):
    def queue_names(self) -> list[str]:
        """The queues jobs are in, by name (index jobs_job_queue)."""
        names = self.order_by("queue").values_list("queue", flat=True).distinct()
        return list(names[:MAX_QUEUE_NAMES_LISTED])

    def search(self, text: str) -> JobQuerySet:
        """Jobs whose name, description or command holds every word of `text`, any case.

        The one search of jobs: the dashboard's job list, the API (`search`) and the
        admin's search box all call it.
        """
        return self.filter(every_term_in(JOB_SEARCH_FIELDS, text))

    def named(self, text: str) -> JobQuerySet:
        """Jobs whose name holds every word of `text`, any case (see search_terms)."""
        return self.filter(every_term_in(("name",), text))

    def due(self, now: datetime) -> JobQuerySet:
        """Active jobs whose next occurrence has come (index jobs_job_due)."""
        return self.filter(is_active=True, next_run_at__lte=now)

    def with_running(self) -> JobQuerySet:
        """Annotate `is_running`: does the job have a run in progress?

        `id IN (jobs with a running run)`: the database reads the few running runs once
        per query (the partial index jobs_run_running_heartbeat holds only them), where
        a correlated EXISTS would read them again for every job, which costs 100 ms when
        a filter visits 10,000 jobs.
        """
        return self.annotate(
            is_running=models.ExpressionWrapper(
                Q(pk__in=self._running_job_ids()), output_field=models.BooleanField()
            )
        )

    def next_due_at(self) -> datetime | None:
        """When the earliest active job comes due (index jobs_job_due)."""
        return (
            self.filter(is_active=True, next_run_at__isnull=False)
            .order_by("next_run_at")
            .values_list("next_run_at", flat=True)
            .first()
        )

    def upcoming(self) -> JobQuerySet:
        """Active jobs with a next run, soonest first (index jobs_job_due)."""
        return self.filter(is_active=True, next_run_at__isnull=False).order_by("next_run_at")

    def in_state(self, state: str) -> JobQuerySet:
        """Jobs whose `state` property is `state` (see Job.state)."""
        if state == JobState.RUNNING:
            return self.filter(pk__in=self._running_job_ids())
        idle = self.exclude(pk__in=self._running_job_ids())
        for status, state_of_status in STATE_BY_LAST_STATUS.items():
            if state == state_of_status:
                return idle.filter(last_run_status=status)
        return idle.exclude(last_run_status__in=list(STATE_BY_LAST_STATUS))

    def _running_job_ids(self) -> models.QuerySet:
        # The run model through the relation: jobs/models/run.py imports this module.
        runs = self.model._meta.get_field("runs").related_model
        return runs.objects.filter(status=RunStatus.RUNNING).values("job_id")
