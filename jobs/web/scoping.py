"""Team scoping at the entry points: the screens, the API and the admin find jobs and runs
through these, so a job of another team is not found (404) and one the user may see but
not act on is refused (403). The rules are jobs.models.teams'."""

from __future__ import annotations

from typing import Any, NamedTuple

from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q, QuerySet
from django.http import Http404

from jobs.access.permissions import CHANGE_JOB, DELETE_JOB, RUN_JOB, VIEW_JOB
from jobs.models import Job, JobHistory, teams
from jobs.models.chains import ChainLinks, chain_links


def visible_jobs(request: Any, queryset: QuerySet[Job] | None = None) -> QuerySet[Job]:
    """The jobs the request's user may see."""
    user, team_id = teams.scope_of(request)
    base = Job.objects.all() if queryset is None else queryset
    return base.filter(teams.jobs_visible_to(user, VIEW_JOB, team_id=team_id))


def visible_runs(
    request: Any, queryset: QuerySet[JobHistory] | None = None
) -> QuerySet[JobHistory]:
    """The runs of the jobs the request's user may see."""
    user, team_id = teams.scope_of(request)
    base = JobHistory.objects.all() if queryset is None else queryset
    return base.filter(teams.runs_visible_to(user, VIEW_JOB, team_id=team_id))


def may(request: Any, permission: str, job: Job) -> bool:
    user, team_id = teams.scope_of(request)
    return teams.may(user, permission, job, team_id=team_id)


class Actions(NamedTuple):
    """What the request's user may do to one job: the buttons its row and page show."""

    run: bool  # run now, run for a past range, cancel a run
    change: bool  # edit, enable or disable
    delete: bool


def actions(request: Any, job: Job) -> Actions:
    """The buttons to show for `job`: each by may() for that job, so a team's operator
    sees Run on its team's jobs and not on the site's, which it may only view."""
    return Actions(
        run=may(request, RUN_JOB, job),
        change=may(request, CHANGE_JOB, job),
        delete=may(request, DELETE_JOB, job),
    )


def check(request: Any, permission: str, job: Job) -> None:
    """403 unless the request's user may do `permission` to `job` (which they can see)."""
    if not may(request, permission, job):
        raise PermissionDenied


def job_or_404(
    request: Any, permission: str, pk: Any, queryset: QuerySet[Job] | None = None
) -> Job:
    """The job `pk` if the user may see it (else 404) and do `permission` to it (else 403)."""
    try:
        job = visible_jobs(request, queryset).get(pk=pk)
    except (Job.DoesNotExist, ValidationError, ValueError, TypeError):
        raise Http404 from None
    check(request, permission, job)
    return job


def run_or_404(
    request: Any, permission: str, pk: Any, queryset: QuerySet[JobHistory] | None = None
) -> JobHistory:
    """The run `pk` if the user may see its job (else 404) and do `permission` to it
    (else 403)."""
    base = JobHistory.objects.select_related("job") if queryset is None else queryset
    try:
        run = visible_runs(request, base).get(pk=pk)
    except (JobHistory.DoesNotExist, ValidationError, ValueError, TypeError):
        raise Http404 from None
    check(request, permission, run.job)
    return run


class Filters(NamedTuple):
    """A team-scoped user's filters of jobs and of runs; both None for a site-wide one."""

    jobs: Q | None
    runs: Q | None


def filters(request: Any) -> Filters:
    user, team_id = teams.scope_of(request)
    jobs_q = teams.jobs_visible_to(user, VIEW_JOB, team_id=team_id)
    if not jobs_q:  # Q(): everything
        return Filters(None, None)
    return Filters(jobs_q, teams.runs_visible_to(user, VIEW_JOB, team_id=team_id))


def visible_ids(request: Any) -> set[Any] | None:
    """The ids of the jobs a team-scoped user may see; None for a site-wide one."""
    scope = filters(request)
    if scope.jobs is None:
        return None
    return set(Job.objects.filter(scope.jobs).values_list("pk", flat=True))


def chainable_jobs(request: Any) -> QuerySet[Job]:
    """The jobs the user may chain to: the site's, and those of the teams they may run
    jobs for (Job.clean() judges the chains saved, jobs.models.teams.team_errors)."""
    user, team_id = teams.scope_of(request)
    runnable = teams.jobs_visible_to(user, RUN_JOB, team_id=team_id)
    return visible_jobs(request).filter(runnable | Q(team__isnull=True))


def chains_shown(request: Any, job: Job) -> ChainLinks:
    """The job's chains both ways for its page, a job the user may not see as (None, "")
    (shown as "a job of another team": no name, no link), after the ones they may."""
    links = chain_links(job)
    ids = {pk for side in links for pk, _name in side}
    if not ids or filters(request).jobs is None:
        return links
    seen = set(visible_jobs(request).filter(pk__in=ids).values_list("pk", flat=True))
    return ChainLinks(
        *(
            [link for link in side if link[0] in seen]
            + [(None, "") for link in side if link[0] not in seen]
            for side in links
        )
    )
