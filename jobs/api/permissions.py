"""The API asks the same permissions as the dashboard and the admin (jobs.access.permissions).

Reads need jobs.view_job. Each view names what its other actions need in
`permission_by_action` (create -> add_job, run -> run_job, ...); an unsafe request to an
action a view does not name is refused, so a new action is closed until someone decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Only names from rest_framework.permissions at run time: settings import this module
# while rest_framework.views is still loading.
from rest_framework.permissions import SAFE_METHODS, BasePermission

from jobs.access.permissions import VIEW_JOB

if TYPE_CHECKING:
    from rest_framework.request import Request
    from rest_framework.views import APIView


def required_permission(request: Request, view: APIView) -> str | None:
    """The permission this request needs, or None when no permission allows it."""
    if request.method in SAFE_METHODS:
        return VIEW_JOB
    by_action: dict[str, str] = getattr(view, "permission_by_action", {})
    return by_action.get(getattr(view, "action", None) or "")


class JobPermissions(BasePermission):
    """403 with the missing permission's name; 401 (from authentication) when anonymous."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        needed = required_permission(request, view)
        if needed is None:
            self.message = "This action is not allowed through the API."
            return False
        if user.has_perm(needed):
            return True
        self.message = f"You need the permission {needed} for this."
        return False

    def has_object_permission(self, request: Request, view: APIView, obj: object) -> bool:
        """A job or run the user may see (the view's queryset is scoped: another team's is
        a 404) but not act on with this permission through its team: 403."""
        # Here, not at the top: settings import this module before the models load.
        from jobs.web import scoping

        job = getattr(obj, "job", obj)
        needed = required_permission(request, view)
        if needed is None or not hasattr(job, "team_id"):
            return True
        if scoping.may(request, needed, job):  # type: ignore[arg-type]
            return True
        self.message = f"You need the permission {needed} for this job's team."
        return False


def model_permissions(model: str) -> dict[str, str]:
    """The permission_by_action of a plain model's viewset: Django's add, change and
    delete permissions of `model` (reading needs jobs.view_job, as every read)."""
    return {
        "create": f"jobs.add_{model}",
        "update": f"jobs.change_{model}",
        "partial_update": f"jobs.change_{model}",
        "destroy": f"jobs.delete_{model}",
    }
