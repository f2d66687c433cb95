"""Team scoping (jobs.models.teams) at every entry point: the dashboard, the API and the
admin, table-driven over the URL conf.

Every route of the jobs app and of its admin pages is classified below: a route that
takes a job, run or change id must answer 404 to team B's operator for team A's object;
a list must not show team A's job to team B; anything else is exempt with a reason. A
new route nobody classified fails the test, so a view cannot be added without deciding
how it is scoped.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from django.contrib.auth.models import Group
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from jobs.models import ChangeAction, Channel, Job, JobChange, JobHistory, RunStatus, teams
from jobs.tests import personas
from jobs.tests.factories import make_job, make_run

pytestmark = pytest.mark.django_db

SECRET_NAME = "alpha-team-nightly"


class Route(NamedTuple):
    name: str  # "namespace:name"
    route: str
    kwargs: tuple[str, ...]


def _walk(patterns: list, namespace: tuple[str, ...], prefix: str) -> Iterator[Route]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = (*namespace, pattern.namespace) if pattern.namespace else namespace
            yield from _walk(pattern.url_patterns, inner, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            names = tuple(
                sorted(
                    set(getattr(pattern.pattern, "converters", {}))
                    | set(pattern.pattern.regex.groupindex)
                )
            )
            yield Route(
                ":".join((*namespace, pattern.name or "")), prefix + str(pattern.pattern), names
            )


def app_routes() -> list[Route]:
    """The jobs app's routes (the screens and the API) and its models' admin pages."""
    found = []
    for route in _walk(get_resolver().url_patterns, (), ""):
        namespace, _sep, name = route.name.rpartition(":")
        if namespace == "jobs" or (namespace == "admin" and name.startswith("jobs_")):
            found.append(route)
    return found


# --- the classification ------------------------------------------------------------------

# Routes with an object id: what the id is of.
JOB, RUN, CHANGE = "job", "run", "change"
BY_ID = {
    "jobs:job_detail": JOB,
    "jobs:job_edit": JOB,
    "jobs:job_delete": JOB,
    "jobs:job_run": JOB,
    "jobs:job_toggle": JOB,
    "jobs:job_backfill": JOB,
    "jobs:job_restore": JOB,  # and change_id, of that job
    "jobs:run_detail": RUN,
    "jobs:run_cancel": RUN,
    "jobs:run_again": RUN,
    "jobs:api-job-runs": JOB,
    "jobs:api-job-changes": JOB,
    "jobs:api-job-detail": JOB,
    "jobs:api-job-backfill": JOB,
    "jobs:api-job-disable": JOB,
    "jobs:api-job-enable": JOB,
    "jobs:api-job-run": JOB,
    "jobs:api-run-detail": RUN,
    "jobs:api-run-cancel": RUN,
    "admin:jobs_job_change": JOB,
    "admin:jobs_job_delete": JOB,
    "admin:jobs_job_history": JOB,
    "admin:jobs_jobhistory_change": RUN,
    "admin:jobs_jobhistory_delete": RUN,
    "admin:jobs_jobhistory_history": RUN,
    "admin:jobs_jobchange_change": CHANGE,
    "admin:jobs_jobchange_delete": CHANGE,
    "admin:jobs_jobchange_history": CHANGE,
}

NOT_SCOPED_BY_JOB = "calendars and blackout windows belong to the site, not to a team"
# Not scoped by team yet: whoever holds the channel model permissions keeps every team's.
CHANNELS = "notification channels are kept with their model permissions, not by team"
OWN_TOKENS = "the user's own API tokens (another user's token is 404): no job or run"
SUPERUSERS_ONLY = "API tokens in the admin: superusers only"
ADMIN_ONLY = "the site's own records (the pause switch), kept by site admins"
EXEMPT_BY_ID = {
    "jobs:calendar_edit": NOT_SCOPED_BY_JOB,
    "jobs:calendar_delete": NOT_SCOPED_BY_JOB,
    "jobs:blackout_edit": NOT_SCOPED_BY_JOB,
    "jobs:blackout_delete": NOT_SCOPED_BY_JOB,
    "jobs:api-calendar-detail": NOT_SCOPED_BY_JOB,
    "jobs:api-blackout-detail": NOT_SCOPED_BY_JOB,
    "admin:jobs_calendar_change": NOT_SCOPED_BY_JOB,
    "admin:jobs_calendar_delete": NOT_SCOPED_BY_JOB,
    "admin:jobs_calendar_history": NOT_SCOPED_BY_JOB,
    "admin:jobs_blackout_change": NOT_SCOPED_BY_JOB,
    "admin:jobs_blackout_delete": NOT_SCOPED_BY_JOB,
    "admin:jobs_blackout_history": NOT_SCOPED_BY_JOB,
    "admin:jobs_team_change": "a group, not a job: kept by whoever may change groups",
    "admin:jobs_team_delete": "a group, not a job: kept by whoever may change groups",
    "admin:jobs_team_history": "a group, not a job: kept by whoever may change groups",
    "admin:jobs_schedulerstate_change": ADMIN_ONLY,
    "admin:jobs_schedulerstate_delete": ADMIN_ONLY,
    "admin:jobs_schedulerstate_history": ADMIN_ONLY,
    "admin:jobs_schedulerevent_change": ADMIN_ONLY,
    "admin:jobs_schedulerevent_delete": ADMIN_ONLY,
    "admin:jobs_schedulerevent_history": ADMIN_ONLY,
    "jobs:channel_edit": CHANNELS,
    "jobs:channel_delete": CHANNELS,
    "jobs:channel_test": CHANNELS,
    "jobs:api-channel-detail": CHANNELS,
    "admin:jobs_notificationchannel_change": CHANNELS,
    "admin:jobs_notificationchannel_delete": CHANNELS,
    "admin:jobs_notificationchannel_history": CHANNELS,
    "jobs:api_token_revoke": OWN_TOKENS,
    "admin:jobs_apitoken_change": SUPERUSERS_ONLY,
    "admin:jobs_apitoken_delete": SUPERUSERS_ONLY,
    "admin:jobs_apitoken_history": SUPERUSERS_ONLY,
}

# Routes without an id that list jobs or runs: team A's job must not be in them.
LISTS = {
    "jobs:dashboard": "",
    "jobs:job_list": "",
    "jobs:upcoming": "",
    "jobs:history": "",
    "jobs:job_choices": "?field=on_success&on_success_search=alpha",
    "jobs:api-job-list": "",
    "jobs:api-run-list": "",
    "jobs:api-queues": "",
    "admin:jobs_job_changelist": "",
    "admin:jobs_jobhistory_changelist": "",
    "admin:jobs_jobchange_changelist": "",
}

# Routes that read a job named in the query string: `job=<team A's id>`.
BY_QUERY = {"jobs:schedule_preview", "jobs:task_arguments"}

NO_JOB = "reads or changes no job or run"
EXEMPT = {
    "jobs:job_create": "a new job: its team is judged by Job.clean() (tested below)",
    "jobs:job_bulk": "a POST of ids: tested below (another team's id is unknown)",
    "jobs:calendar_list": NOT_SCOPED_BY_JOB,
    "jobs:calendar_create": NOT_SCOPED_BY_JOB,
    "jobs:blackout_list": NOT_SCOPED_BY_JOB,
    "jobs:blackout_create": NOT_SCOPED_BY_JOB,
    "jobs:api-calendar-list": NOT_SCOPED_BY_JOB,
    "jobs:api-blackout-list": NOT_SCOPED_BY_JOB,
    "jobs:scheduler": "the whole scheduler's pause switch (jobs.pause_scheduler)",
    "jobs:scheduler_pause": "the whole scheduler's pause switch (jobs.pause_scheduler)",
    "jobs:scheduler_resume": "the whole scheduler's pause switch (jobs.pause_scheduler)",
    "jobs:api-scheduler": "the whole scheduler's pause switch (jobs.pause_scheduler)",
    "jobs:api-scheduler-pause": "the whole scheduler's pause switch (jobs.pause_scheduler)",
    "jobs:api-scheduler-resume": "the whole scheduler's pause switch (jobs.pause_scheduler)",
    "jobs:api-schedule-preview": "computes from the parameters it is sent: " + NO_JOB,
    "jobs:api-tasks": "the registered Python tasks: " + NO_JOB,
    "jobs:api-root": "the list of collections: " + NO_JOB,
    "jobs:api-schema": "public: describes the API, not the data",
    "jobs:api-docs": "public: describes the API, not the data",
    "jobs:api_token": "the user's own API token: " + NO_JOB,
    "jobs:healthz": "public: the database answers or not",
    "jobs:metrics": "site-wide counters behind METRICS_TOKEN, not a user's screen",
    "admin:jobs_job_add": "a new job: its team is judged by Job.clean()",
    "admin:jobs_jobhistory_add": "nobody adds runs in the admin",
    "admin:jobs_jobchange_add": "nobody adds audit records in the admin",
    "admin:jobs_calendar_changelist": NOT_SCOPED_BY_JOB,
    "admin:jobs_calendar_add": NOT_SCOPED_BY_JOB,
    "admin:jobs_blackout_changelist": NOT_SCOPED_BY_JOB,
    "admin:jobs_blackout_add": NOT_SCOPED_BY_JOB,
    "admin:jobs_team_changelist": "the groups marked as teams, for whoever may change groups",
    "admin:jobs_team_add": "the groups marked as teams, for whoever may change groups",
    "admin:jobs_schedulerstate_changelist": ADMIN_ONLY,
    "admin:jobs_schedulerstate_add": ADMIN_ONLY,
    "admin:jobs_schedulerevent_changelist": ADMIN_ONLY,
    "admin:jobs_schedulerevent_add": ADMIN_ONLY,
    "jobs:channel_list": CHANNELS,
    "jobs:channel_create": CHANNELS,
    "jobs:api-channel-list": CHANNELS,
    "admin:jobs_notificationchannel_changelist": CHANNELS,
    "admin:jobs_notificationchannel_add": CHANNELS,
    "admin:jobs_apitoken_changelist": SUPERUSERS_ONLY,
    "admin:jobs_apitoken_add": SUPERUSERS_ONLY,
}


# --- the world: team A's job and run, team B's operator ------------------------------


class World(NamedTuple):
    job: Job
    run: JobHistory
    change: JobChange
    own_job: Job  # team B's
    site_job: Job  # no team


@pytest.fixture
def world() -> World:
    team_a, team_b = personas.team("A"), personas.team("B")
    job = make_job(name=SECRET_NAME, team=team_a, command="echo alpha-only")
    run = make_run(job, status=RunStatus.FAILED)
    change = JobChange.objects.create(
        job_id=job.pk,
        job_name=job.name,
        action=ChangeAction.EDIT,
        channel=Channel.API,
        username="someone",
        changes={"description": ["", "x"]},
    )
    own = make_job(name="bravo-team-job", team=team_b)
    site = make_job(name="site-wide-job")
    return World(job, run, change, own, site)


@pytest.fixture
def team_b() -> Client:
    return personas.signed_in(personas.team_operator("B", staff=True))


def _kwargs(route: Route, world: World) -> dict[str, Any]:
    kind = BY_ID[route.name]
    obj = {JOB: world.job, RUN: world.run, CHANGE: world.change}[kind]
    values: dict[str, Any] = {}
    for name in route.kwargs:
        if name in ("job_id", "run_id", "job_pk", "pk", "object_id"):
            values[name] = str(obj.pk)
        elif name == "change_id":
            values[name] = world.change.pk
        elif name == "format":
            values[name] = "json"
        else:
            pytest.fail(f"{route.name} ({route.route}): no value for {name}")
    return values


def _missing(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The same arguments naming objects that do not exist."""
    absent = {"change_id": 999999}
    return {
        name: absent.get(name, value if name == "format" else _absent_id(value))
        for name, value in kwargs.items()
    }


def _absent_id(value: Any) -> str:
    return "999999" if str(value).isdigit() else str(uuid.uuid4())


def test_every_route_of_the_app_is_classified() -> None:
    """A new route must say how it is scoped before this passes."""
    known = BY_ID.keys() | EXEMPT_BY_ID.keys() | LISTS.keys() | BY_QUERY | EXEMPT.keys()
    unknown = sorted({f"{r.name} {r.route}" for r in app_routes() if r.name not in known})
    assert unknown == [], "classify these routes in jobs/tests/access/test_teams.py"
    with_ids = {r.name for r in app_routes() if set(r.kwargs) - {"format"}}
    # A route with an id is never a list or exempt without a reason of the id kind.
    assert with_ids <= BY_ID.keys() | EXEMPT_BY_ID.keys()
    routes = {r.name for r in app_routes()}
    assert routes >= BY_ID.keys() | LISTS.keys() | BY_QUERY, "stale entries"


def test_another_teams_object_is_not_found_on_every_route(world: World, team_b: Client) -> None:
    checked = []
    for route in app_routes():
        if route.name not in BY_ID:
            continue
        kwargs = _kwargs(route, world)
        url = reverse(route.name, kwargs=kwargs)
        missing = reverse(route.name, kwargs=_missing(kwargs))
        for method in ("get", "post"):
            answer = getattr(team_b, method)(url).status_code
            # A POST-only view answers GET with 405 before any look-up. A 403 before any
            # look-up (an audit record in the admin: nobody edits it, superusers alone
            # delete it) says nothing of the object: it must be the answer to a missing
            # id too.
            if answer in (403, 405):
                assert getattr(team_b, method)(missing).status_code == answer, (method, url)
            else:
                assert answer == 404, (method, url, answer)
        checked.append(route.name)
    assert set(checked) == BY_ID.keys()
    world.job.refresh_from_db()
    assert world.job.is_active and not world.job.runs.exclude(pk=world.run.pk).exists()
    assert Job.objects.filter(pk=world.job.pk).exists()


def test_the_same_routes_find_the_users_own_teams_job(world: World) -> None:
    """The 404s above are the scoping's, not broken URLs: team A's operator reaches them."""
    client = personas.signed_in(personas.team_operator("A", staff=True))
    for name in ("jobs:job_detail", "jobs:api-job-detail", "admin:jobs_job_change"):
        route = next(r for r in app_routes() if r.name == name and "format" not in r.kwargs)
        assert client.get(reverse(name, kwargs=_kwargs(route, world))).status_code == 200
    run_url = reverse("jobs:run_detail", args=[world.run.pk])
    assert client.get(run_url).status_code == 200


def test_no_list_shows_another_teams_job(world: World, team_b: Client) -> None:
    for name, query in LISTS.items():
        response = team_b.get(reverse(name) + query)
        assert response.status_code == 200, name
        body = response.content.decode()
        assert SECRET_NAME not in body and str(world.job.pk) not in body, name
        assert str(world.run.pk) not in body, name


def test_the_admins_job_filters_do_not_name_another_teams_job(world: World, team_b: Client) -> None:
    for name in ("admin:jobs_jobhistory_changelist", "admin:jobs_jobchange_changelist"):
        response = team_b.get(reverse(name), {"job": str(world.job.pk)})
        assert SECRET_NAME not in response.content.decode(), name


def test_the_lists_show_a_site_wide_viewer_every_job(world: World) -> None:
    client = personas.signed_in(personas.viewer(staff=True))
    for name in ("jobs:job_list", "jobs:api-job-list", "admin:jobs_job_changelist"):
        assert SECRET_NAME in client.get(reverse(name)).content.decode(), name


def test_team_b_sees_its_own_and_the_sites_jobs(world: World, team_b: Client) -> None:
    names = {job["name"] for job in team_b.get(reverse("jobs:api-job-list")).json()["results"]}
    assert names == {"bravo-team-job", "site-wide-job"}


def test_a_job_named_in_the_query_string_is_not_found(world: World, team_b: Client) -> None:
    preview = team_b.get(reverse("jobs:schedule_preview"), {"job": str(world.job.pk)})
    assert preview.status_code == 404
    arguments = team_b.get(reverse("jobs:task_arguments"), {"job": str(world.job.pk), "task": ""})
    assert "alpha-only" not in arguments.content.decode()


def test_bulk_actions_treat_another_teams_job_as_unknown(world: World, team_b: Client) -> None:
    team_b.post(reverse("jobs:job_bulk"), {"action": "disable", "jobs": [str(world.job.pk)]})
    world.job.refresh_from_db()
    assert world.job.is_active


# --- what a team grants -----------------------------------------------------------------


def test_a_team_viewer_sees_but_does_not_run_its_teams_job(world: World) -> None:
    client = personas.signed_in(personas.team_viewer("A"))
    assert client.get(reverse("jobs:job_detail", args=[world.job.pk])).status_code == 200
    assert client.post(reverse("jobs:job_run", args=[world.job.pk])).status_code == 403
    assert not world.job.runs.exclude(pk=world.run.pk).exists()


def test_a_team_operator_runs_its_job_but_only_sees_the_sites(world: World) -> None:
    client = personas.signed_in(personas.team_operator("B"))
    assert client.post(reverse("jobs:api-job-run", args=[world.own_job.pk])).status_code == 201
    assert client.get(reverse("jobs:job_detail", args=[world.site_job.pk])).status_code == 200
    site_run = client.post(reverse("jobs:api-job-run", args=[world.site_job.pk]))
    assert site_run.status_code == 403
    assert not world.site_job.runs.exists()


def test_a_site_wide_operator_keeps_every_job(world: World) -> None:
    client = personas.signed_in(personas.operator())
    assert client.post(reverse("jobs:api-job-run", args=[world.job.pk])).status_code == 201


def test_the_permission_direct_or_through_another_group_is_site_wide(world: World) -> None:
    user = personas.team_viewer("B")
    user.groups.add(Group.objects.get(name="Job viewers"))
    assert teams.may(user, "jobs.view_job", world.job)
    assert teams.jobs_visible_to(user) == teams.Q()


@override_settings(JOBS_TEAM_SCOPED="false")
def test_scoping_off_gives_every_team_every_job(world: World, team_b: Client) -> None:
    assert team_b.get(reverse("jobs:job_detail", args=[world.job.pk])).status_code == 200
    assert SECRET_NAME in team_b.get(reverse("jobs:job_list")).content.decode()


def test_auto_turns_scoping_on_once_a_job_has_a_team() -> None:
    user = personas.team_operator("B")
    job = make_job(name="nobodys")
    assert not teams.scoping_on()
    assert teams.may(user, "jobs.run_job", job)  # no team anywhere yet: as before
    make_job(name="owned", team=personas.team("A"))
    assert teams.scoping_on()
    assert not teams.may(personas.team_operator("B", name="fresh"), "jobs.run_job", job)


@override_settings(JOBS_TEAM_SCOPED="true")
def test_on_before_any_job_has_a_team() -> None:
    job = make_job(name="nobodys")
    assert not teams.may(personas.team_operator("B"), "jobs.run_job", job)


# --- choosing a team, chaining across teams, the audit trail ---------------------------


def test_a_user_may_only_give_a_team_they_belong_to(world: World, team_b: Client) -> None:
    team_a = Group.objects.get(name="Team A")
    answer = team_b.patch(
        reverse("jobs:api-job-detail", args=[world.own_job.pk]),
        {"team": team_a.pk},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert "team" in answer.json()
    world.own_job.refresh_from_db()
    assert world.own_job.team.name == "Team B"


def test_a_team_operator_may_not_make_its_job_the_sites(world: World, team_b: Client) -> None:
    answer = team_b.patch(
        reverse("jobs:api-job-detail", args=[world.own_job.pk]),
        {"team": None},
        content_type="application/json",
    )
    assert answer.status_code == 400
    world.own_job.refresh_from_db()
    assert world.own_job.team is not None


def test_chaining_to_another_teams_job_needs_run_job_on_its_team(world: World) -> None:
    owner = personas.team_operator("B")
    owner.groups.add(personas.team("A"))  # sees team A's jobs, may not run them
    client = personas.signed_in(owner)
    answer = client.patch(
        reverse("jobs:api-job-detail", args=[world.own_job.pk]),
        {"on_success": [str(world.job.pk)]},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert "on_success" in answer.json()
    assert not world.own_job.on_success.exists()


def test_the_audit_trail_records_a_team_change(world: World) -> None:
    client = personas.signed_in(personas.superuser())
    team_a = Group.objects.get(name="Team A")
    answer = client.patch(
        reverse("jobs:api-job-detail", args=[world.site_job.pk]),
        {"team": team_a.pk},
        content_type="application/json",
    )
    assert answer.status_code == 200, answer.content
    change = JobChange.objects.filter(job_id=world.site_job.pk).order_by("-id").first()
    assert change.changes["team_id"] == [None, team_a.pk]


def test_a_group_with_jobs_cannot_be_deleted(world: World) -> None:
    from django.db.models import ProtectedError

    with pytest.raises(ProtectedError):
        Group.objects.get(name="Team A").delete()
