"""The API token pages (rest_framework.authtoken's own admin), for superusers only.

A token acts as its user, so whoever could see or make tokens could act as anyone;
Django's model permissions would let a staff user be given that by mistake.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

# Importing it registers DRF's TokenAdmin, which is replaced here (autodiscovery
# imports it again later, which registers nothing twice).
from rest_framework.authtoken import admin as token_admin
from rest_framework.authtoken.models import TokenProxy


def is_superuser(request: HttpRequest) -> bool:
    return request.user.is_active and request.user.is_superuser


class SuperuserTokenAdmin(token_admin.TokenAdmin):
    """DRF's TokenAdmin, which only active superusers may see or use."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_superuser(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return is_superuser(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request)


if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)
admin.site.register(TokenProxy, SuperuserTokenAdmin)
