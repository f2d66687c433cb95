"""Team scoping in the admin (jobs.models.teams' rules, through jobs.web.scoping): the
lists hold what the user may see, another team's job or run is a 404, and each object's
view, change and delete permission is asked for its team. Also the Teams admin, where a
group is marked as a team."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import Http404, HttpRequest

from jobs.access.permissions import CHANGE_JOB, DELETE_JOB, VIEW_JOB
from jobs.models import Job, JobChange, JobHistory, Team, teams
from jobs.web import scoping


def _job_of(obj: Any) -> Job | None:
    if isinstance(obj, Job):
        return obj
    return getattr(obj, "job", None) if isinstance(obj, JobHistory) else None


class ScopedAdminMixin:
    """For the admins of Job, JobHistory and JobChange."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)  # type: ignore[misc]
        if queryset.model is Job:
            return scoping.visible_jobs(request, queryset)
        if queryset.model is JobHistory:
            return scoping.visible_runs(request, queryset)
        if queryset.model is JobChange:
            scope = scoping.filters(request)
            if scope.jobs is None:
                return queryset
            # A deleted job's records: its team went with it, so site-wide viewers only.
            return queryset.filter(job_id__in=Job.objects.filter(scope.jobs).values("pk"))
        return queryset

    def _get_obj_does_not_exist_redirect(self, request: HttpRequest, opts: Any, object_id: str):  # type: ignore[no-untyped-def]
        # Another team's job is not found, as on the dashboard and the API: 404, not a
        # redirect that says whether it exists.
        raise Http404

    def _allowed(self, request: HttpRequest, permission: str, obj: Any) -> bool:
        job = _job_of(obj)
        return job is None or scoping.may(request, permission, job)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_view_permission(request, obj)  # type: ignore[misc]
        return allowed and self._allowed(request, VIEW_JOB, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_change_permission(request, obj)  # type: ignore[misc]
        return allowed and self._allowed(request, CHANGE_JOB, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_delete_permission(request, obj)  # type: ignore[misc]
        return allowed and self._allowed(request, DELETE_JOB, obj)


def acting_on(request: HttpRequest, queryset: QuerySet, permission: str) -> QuerySet:
    """The selected jobs or runs the user may do `permission` to (an action's rows)."""
    user, team_id = teams.scope_of(request)
    if queryset.model is JobHistory:
        return queryset.filter(teams.runs_visible_to(user, permission, team_id=team_id))
    return queryset.filter(teams.jobs_visible_to(user, permission, team_id=team_id))


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    """Marking a group as a team: its members' job permissions then hold for its jobs
    only (docs/permissions.md "Teams"). Kept by whoever may change groups."""

    list_display = ("group", "grants_for")
    search_fields = ("group__name",)

    def _may(self, request: HttpRequest) -> bool:
        return request.user.has_perm("auth.change_group")

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._may(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._may(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a marker has nothing to change: delete it to unmark the group

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may(request)
