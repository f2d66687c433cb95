"""Teams: which jobs a user sees and acts on. The one place that decides it.

A job's `team` is a Django group, or blank (the site's). A group is a *team group* when an
administrator marked it as one (a Team row, the admin's *Teams*) or when some job names
it as its team: holding a permission through a team group grants it for that team's jobs
only. A permission held directly, through any other group, or as a superuser stays
site-wide. Jobs without a team are seen by everyone who may view jobs; acting on them
(run, change, delete) needs the permission site-wide.

Scoping is on when JOBS_TEAM_SCOPED is "true", off when "false"; "auto" (the default)
turns it on once any job has a team. Every entry point (the screens, the API, the admin)
asks through jobs_visible_to() and may(), with the user and team restriction that
scope_of(request) gives: a job of another team is not found (404), never "forbidden".
"""

from __future__ import annotations

from typing import Any, NamedTuple

from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from jobs import conf
from jobs.access.permissions import ADD_JOB, CHANGE_JOB, RUN_JOB, VIEW_JOB
from jobs.models import changes
from jobs.models.chains import CHAIN_FIELDS, pending

SCOPED_VALUES = ("true", "false", "auto")


class Team(models.Model):
    """Marks a group as a team: its members' permissions hold for its jobs only. With
    `grants_for`, the group is a role in another team (e.g. "Team A operators" for the
    jobs of "Team A"): its permissions hold for that team's jobs only."""

    group = models.OneToOneField(
        Group, on_delete=models.CASCADE, primary_key=True, verbose_name=_("group")
    )
    grants_for = models.ForeignKey(
        Group,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="team_roles",
        verbose_name=_("grants for the jobs of"),
        help_text=_("Blank: the group's own jobs (the jobs whose team it is)."),
    )

    class Meta:
        verbose_name = _("team")
        verbose_name_plural = _("teams")

    def __str__(self) -> str:
        return str(self.group)


class Scope(NamedTuple):
    """Who is asking, and the one team a credential is limited to (None: the user's own
    reach). The API tokens' team restriction plugs in here (scope_of)."""

    user: Any
    team_id: int | None = None


def scope_of(request: Any) -> Scope:
    """The user of a request and the team its credential is limited to: the single hook
    every entry point goes through. A team-scoped API token sets `team_id` on
    request.auth."""
    team_id = getattr(getattr(request, "auth", None), "team_id", None)
    return Scope(request.user, team_id)


def scoping_on() -> bool:
    """Whether team scoping applies: JOBS_TEAM_SCOPED, or with "auto" once any job has a
    team (one indexed query)."""
    value = conf.team_scoped()
    if value == "true":
        return True
    if value == "false":
        return False
    return Group.objects.filter(jobs__isnull=False).exists()


def team_named(name: Any) -> int | None:
    """The id of the group called `name`, as the code and the imports name a job's team
    (ids differ from one database to another); None when there is none."""
    if not isinstance(name, str) or not name:
        return None
    return Group.objects.filter(name=name).values_list("pk", flat=True).first()


def team_groups() -> dict[int, int]:
    """Each team group (marked, or named by a job) and the team whose jobs its
    permissions hold for: itself, or the team a role group grants for."""
    named = Group.objects.filter(jobs__isnull=False).values_list("pk", flat=True)
    groups = {pk: pk for pk in named}
    for group_id, grants_for in Team.objects.values_list("group_id", "grants_for_id"):
        groups[group_id] = grants_for or group_id
    return groups


def teams_of(user: Any) -> set[int]:
    """The teams `user` belongs to: through a team group or one of its role groups."""
    if user is None or not user.is_authenticated:
        return set()
    groups = team_groups()
    return {groups[pk] for pk in user.groups.values_list("pk", flat=True) if pk in groups}


def _reach(user: Any, permission: str) -> frozenset[int] | None:
    """None: `user` holds `permission` site-wide; else the team groups it holds it
    through (empty: not at all). Cached on the user object, as Django caches its
    permissions."""
    if user is None or not user.is_active or not user.has_perm(permission):
        return frozenset()
    if user.is_superuser:
        return None
    cache = getattr(user, "_jobs_team_reach", None)
    if cache is None:
        cache = {}
        user._jobs_team_reach = cache
    if permission in cache:
        return cache[permission]
    if "scoping_on" not in cache:
        cache["scoping_on"] = scoping_on()
    if not cache["scoping_on"]:
        cache[permission] = None
        return None
    app_label, _dot, codename = permission.partition(".")
    held = {"codename": codename, "content_type__app_label": app_label}
    if user.user_permissions.filter(**held).exists():
        reach = None
    else:
        through = set(
            user.groups.filter(**{f"permissions__{k}": v for k, v in held.items()}).values_list(
                "pk", flat=True
            )
        )
        groups = team_groups()
        # Held some other way than a team group (another group, another backend): site-wide.
        scoped = bool(through) and through <= groups.keys()
        reach = frozenset(groups[pk] for pk in through) if scoped else None
    cache[permission] = reach
    return reach


def _restricted(reach: frozenset[int] | None, team_id: int | None) -> frozenset[int] | None:
    if team_id is None:
        return reach
    return frozenset({team_id}) if reach is None else reach & {team_id}


def jobs_visible_to(
    user: Any, permission: str = VIEW_JOB, *, team_id: int | None = None, prefix: str = ""
) -> Q:
    """The filter of the jobs `user` may act on with `permission` (`prefix` "job__" for
    runs). With VIEW_JOB, the site's jobs (no team) too."""
    reach = _restricted(_reach(user, permission), team_id)
    if reach is None:
        return Q()
    if not reach:  # not held at all (or not for the credential's team)
        return Q(**{f"{prefix}pk__in": []})
    allowed = Q(**{f"{prefix}team_id__in": sorted(reach)})
    if permission == VIEW_JOB:
        allowed |= Q(**{f"{prefix}team__isnull": True})
    return allowed


def runs_visible_to(user: Any, permission: str = VIEW_JOB, *, team_id: int | None = None) -> Q:
    """jobs_visible_to() for runs (JobHistory), by their job."""
    return jobs_visible_to(user, permission, team_id=team_id, prefix="job__")


def may(user: Any, permission: str, job: Any, *, team_id: int | None = None) -> bool:
    """Whether `user` may do what `permission` allows to `job`."""
    reach = _restricted(_reach(user, permission), team_id)
    if reach is None:
        return True
    if not reach:
        return False
    if job.team_id is None:
        return permission == VIEW_JOB
    return job.team_id in reach


def may_give_team(user: Any, group_id: int | None, permission: str = CHANGE_JOB) -> bool:
    """Whether `user`, acting with `permission` (add or change), may put a job in team
    `group_id` (None: the site's). The site's: when they hold it site-wide. A team: a
    superuser any; anyone else only a team they belong to and hold it for."""
    reach = _reach(user, permission)
    if group_id is None:
        return reach is None
    if user.is_superuser:
        return True
    if group_id not in teams_of(user):
        return False
    return reach is None or group_id in reach


TEAM_REFUSED = _("Choose a team you belong to (or leave it blank if you may act on every job).")
CHAIN_REFUSED = _("You may not chain to a job of a team you may not run jobs for.")


def team_errors(job: models.Model) -> dict[str, str]:
    """Job.clean()'s team rules for the acting user (the audit trail's when the entry
    point set none; none: the site's own code, such as syncjobs): the team given must be
    one they may give, and a job newly chained to must be one they may run (a chain kept
    as it was stays: it may be to a job of a team they may not see)."""
    user = job.acting_user or changes.current_actor().user  # type: ignore[attr-defined]
    if user is None:
        return {}
    errors: dict[str, str] = {}
    adding = job._state.adding
    before = None if adding else job._values_as_loaded().get("team_id")  # type: ignore[attr-defined]
    if (adding or before != job.team_id) and not may_give_team(  # type: ignore[attr-defined]
        user,
        job.team_id,
        ADD_JOB if adding else CHANGE_JOB,  # type: ignore[attr-defined]
    ):
        errors["team"] = str(TEAM_REFUSED)
    wanted = pending(job)
    for name in CHAIN_FIELDS if wanted is not None else ():
        targets = type(job).objects.filter(pk__in=getattr(wanted, name) or ())  # type: ignore[attr-defined]
        if not adding:  # a chain kept as it was is not judged again: only those added
            targets = targets.exclude(pk__in=getattr(job, name).values("pk"))
        for target in targets.only("pk", "team_id"):
            other = target.team_id is not None and target.team_id != job.team_id  # type: ignore[attr-defined]
            if other and not may(user, RUN_JOB, target):
                errors[name] = str(CHAIN_REFUSED)
                break
    return errors
