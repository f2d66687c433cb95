from __future__ import annotations

from typing import TYPE_CHECKING

# Only names from rest_framework.permissions at run time: settings import this module
# while rest_framework.views is still loading.
from rest_framework.permissions import SAFE_METHODS, BasePermission

if TYPE_CHECKING:
    from rest_framework.request import Request
    from rest_framework.views import APIView


class StaffWritesOthersRead(BasePermission):
    """Any logged-in user may read; only staff may create, change, delete or act."""

    message = "Only staff users may change jobs or start runs."

    def has_permission(self, request: Request, view: APIView) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        return request.method in SAFE_METHODS or bool(user.is_staff)
