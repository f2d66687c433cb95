"""Who uses the scheduler, defined once: the users the tests act as.

Each persona is a user in the groups the migration makes (jobs.access.permissions:
Job viewers, Job operators, Job admins), or none, or a superuser. A test that needs a
user of its own (a second operator, a name the audit trail shows) passes `name`; the
groups stay the persona's. `signed_in` gives a test client logged in as one.
"""

from __future__ import annotations

from typing import Any

from django.test import Client

from jobs.access.permissions import JOB_ADMINS, JOB_OPERATORS, JOB_VIEWERS, USE_SHELL
from jobs.tests.factories import make_user


def nobody(name: str = "nobody") -> Any:
    """Logged in, in no group: what a new account is until an administrator decides."""
    return make_user(name)


def viewer(name: str = "viewer", *, staff: bool = False) -> Any:
    """Reads every job and run; changes nothing."""
    return make_user(name, JOB_VIEWERS, staff=staff)


def operator(name: str = "operator", *, staff: bool = False) -> Any:
    """Runs, enables and disables jobs, cancels and retries runs."""
    return make_user(name, JOB_OPERATORS, staff=staff)


def job_admin(name: str = "jobadmin", *, staff: bool = False) -> Any:
    """Adds, changes and deletes jobs; not shell jobs or dangerous commands."""
    return make_user(name, JOB_ADMINS, staff=staff)


def shell_admin(name: str = "shelladmin", *, staff: bool = False) -> Any:
    """A job admin who may also make jobs that run shell lines or any command."""
    return make_user(name, JOB_ADMINS, staff=staff, permissions=(USE_SHELL,))


def superuser(name: str = "root") -> Any:
    return make_user(name, superuser=True)


def signed_in(user: Any) -> Client:
    """A test client logged in as `user`."""
    client = Client()
    client.force_login(user)
    return client


# --- teams (jobs.models.teams) ---------------------------------------------------------
# A team is a group ("Team A"), marked as one; its viewers hold view_job through that
# group, its operators view/run/change through a role group ("Team A operators") that
# grants for Team A's jobs.


def team(name: str = "A") -> Any:
    """The group of team `name`, marked as a team, holding view_job (its viewers)."""
    from django.contrib.auth.models import Group, Permission

    from jobs.models import Team

    group, _created = Group.objects.get_or_create(name=f"Team {name}")
    Team.objects.get_or_create(group=group)
    group.permissions.add(Permission.objects.get(codename="view_job"))
    return group


def _team_operators(name: str) -> Any:
    from django.contrib.auth.models import Group, Permission

    from jobs.models import Team

    group, _created = Group.objects.get_or_create(name=f"Team {name} operators")
    Team.objects.get_or_create(group=group, defaults={"grants_for": team(name)})
    group.permissions.add(
        *Permission.objects.filter(
            content_type__app_label="jobs", codename__in=(*JOB_OPERATORS.codenames, "delete_job")
        )
    )
    return group


def team_viewer(team_name: str = "A", name: str = "") -> Any:
    """Sees the site's jobs and team `team_name`'s; changes nothing."""
    user = make_user(name or f"viewer_{team_name.lower()}")
    user.groups.add(team(team_name))
    return user


def team_operator(team_name: str = "A", name: str = "", *, staff: bool = False) -> Any:
    """Runs, changes and deletes team `team_name`'s jobs (and sees the site's); staff: it
    uses the admin too."""
    user = make_user(name or f"operator_{team_name.lower()}", staff=staff)
    user.groups.add(team(team_name), _team_operators(team_name))
    return user
