"""The API tokens (jobs.models.tokens) in the admin, for superusers only.

A token acts as its user, so whoever could see or make tokens could act as anyone;
Django's model permissions would let a staff user be given that by mistake. The admin
lists every user's tokens and revokes them (an action); it never shows the hash, and
has no add form: a secret is shown only to the user who makes it (the dashboard's API
tokens page, `manage.py apitoken`).

rest_framework.authtoken stays installed (migration 0027 moved its keys here), but its
own admin page is removed: its table is empty and nothing reads it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from jobs.admin.common import AdminScreensMixin
from jobs.models import ApiToken, revoke_token


def is_superuser(request: HttpRequest) -> bool:
    return request.user.is_active and request.user.is_superuser


@admin.action(description=_("Revoke the selected tokens"))
def revoke_tokens(modeladmin: Any, request: HttpRequest, queryset: QuerySet) -> None:
    revoked = sum(revoke_token(token) for token in queryset.select_related("user"))
    modeladmin.message_user(
        request,
        ngettext("%(n)d token revoked.", "%(n)d tokens revoked.", revoked) % {"n": revoked},
        messages.SUCCESS,
    )


@admin.register(ApiToken)
class ApiTokenAdmin(AdminScreensMixin, admin.ModelAdmin):
    list_display = (
        "name",
        "user",
        "prefix",
        "created_at",
        "expires_at",
        "last_used_at",
        "revoked_at",
        "team",
        "read_only",
    )
    list_filter = ("read_only", "revoked_at", "expires_at")
    search_fields = ("name", "prefix", "user__username")
    fields = list_display  # never key_hash
    readonly_fields = list_display
    actions = [revoke_tokens]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_superuser(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_superuser(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Actions need it; every field is read-only, so no form saves anything.
        return is_superuser(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _unregister_authtoken() -> None:
    try:
        # Importing it registers DRF's TokenAdmin, which is removed here (autodiscovery
        # imports it again later, which then registers nothing).
        from rest_framework.authtoken import admin as _token_admin  # noqa: F401
        from rest_framework.authtoken.models import TokenProxy
    except RuntimeError:  # rest_framework.authtoken not installed
        return
    if admin.site.is_registered(TokenProxy):
        admin.site.unregister(TokenProxy)


_unregister_authtoken()
