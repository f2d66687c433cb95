"""Named, hashed, expiring API tokens.

A token's text is `jobs_<prefix>_<secret>`: the prefix (8 hex characters) is public and
finds the row; the database keeps only the SHA-256 of the whole text. A token is a long
random string, so a fast hash is enough (as GitHub's and PyPI's are): nobody can try
enough guesses against it, and a slow hash would cost every API request. Whoever reads
the table therefore holds nothing that authenticates.

Keys of rest_framework.authtoken (40 hex characters) moved here by migration 0027 keep
working until they expire: their prefix is their first 8 characters.

Creating and revoking a token is a SchedulerEvent (the site-wide audit trail), never
with the secret.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from jobs.conf import token_max_days
from jobs.models.scheduler import SchedulerAction, SchedulerEvent

TOKEN_NAME_MAX_LENGTH = 100
TEXT_PREFIX = "jobs_"
PREFIX_LENGTH = 8
# A client using its token often writes last_used_at at most this often.
LAST_USED_EVERY = timedelta(minutes=1)
# The longest text looked at: anything longer is no token of ours, and is not hashed.
TOKEN_TEXT_MAX_LENGTH = 200
_NEW = re.compile(r"jobs_([0-9a-f]{8})_[A-Za-z0-9_-]{20,}")
_LEGACY = re.compile(r"[0-9a-f]{40}")


def hash_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def prefix_of(text: str) -> str | None:
    """The prefix that finds `text`'s row, or None when it is no token's shape."""
    if len(text) > TOKEN_TEXT_MAX_LENGTH:
        return None
    if found := _NEW.fullmatch(text):
        return found.group(1)
    if _LEGACY.fullmatch(text):
        return text[:PREFIX_LENGTH]
    return None


def max_days() -> int:
    return token_max_days()


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        on_delete=models.CASCADE,
        related_name="api_tokens",
    )
    name = models.CharField(_("name"), max_length=TOKEN_NAME_MAX_LENGTH)
    prefix = models.CharField(_("prefix"), max_length=PREFIX_LENGTH, db_index=True)
    key_hash = models.CharField(_("key hash"), max_length=64)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    expires_at = models.DateTimeField(_("expires"))
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)
    # A token scoped to one team. Deleting the team deletes its tokens: a token whose
    # scope vanished must not become one with no scope (every team).
    team = models.ForeignKey(
        "auth.Group",
        verbose_name=_("team"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="api_tokens",
    )
    read_only = models.BooleanField(_("read-only"), default=False)

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "name"], name="jobs_token_user_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix})"

    def matches(self, text: str) -> bool:
        return hmac.compare_digest(self.key_hash, hash_text(text))

    def touch(self, now: datetime) -> None:
        """Note a use, at most once a LAST_USED_EVERY: a conditional update, so a busy
        client (or many processes) writes once a minute, not on every request."""
        if self.last_used_at is not None and now - self.last_used_at < LAST_USED_EVERY:
            return
        ApiToken.objects.filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - LAST_USED_EVERY), pk=self.pk
        ).update(last_used_at=now)
        self.last_used_at = now


class IssuedToken(NamedTuple):
    token: ApiToken
    text: str  # the only time the secret exists outside the client


def find_token(text: str) -> ApiToken | None:
    """The token whose text this is (revoked or expired too), or None."""
    prefix = prefix_of(text)
    if prefix is None:
        return None
    candidates = ApiToken.objects.select_related("user").filter(prefix=prefix)
    # Compare every candidate: the time taken does not tell which one matched.
    found = None
    for token in candidates:
        if token.matches(text):
            found = token
    return found


def token_errors(user: Any, name: str, days: Any, team: Any) -> dict[str, str]:
    """What is wrong with these choices for a new token of `user`, by field."""
    errors: dict[str, str] = {}
    name = (name or "").strip()
    if not name:
        errors["name"] = gettext("Give the token a name.")
    elif len(name) > TOKEN_NAME_MAX_LENGTH:
        errors["name"] = gettext("A name is at most %(n)d characters.") % {
            "n": TOKEN_NAME_MAX_LENGTH
        }
    elif ApiToken.objects.filter(user=user, name=name).exists():
        errors["name"] = gettext("You already have a token named %(name)s.") % {"name": name}
    longest = max_days()
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= longest:
        errors["days"] = gettext("A token lasts from 1 to %(n)d days.") % {"n": longest}
    if team is not None and not user.is_superuser and not user.groups.filter(pk=team.pk).exists():
        errors["team"] = gettext("You may scope a token only to a team you belong to.")
    return errors


def issue_token(
    user: Any,
    name: str,
    days: int | None = None,
    *,
    team: Any = None,
    read_only: bool = False,
    now: datetime | None = None,
) -> IssuedToken:
    """A new token of `user`; ValidationError (nothing saved) when a choice is wrong."""
    days = max_days() if days is None else days
    errors = token_errors(user, name, days, team)
    if errors:
        raise ValidationError(errors)
    now = now or timezone.now()
    prefix = secrets.token_hex(PREFIX_LENGTH // 2)
    text = f"{TEXT_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user,
            name=name.strip(),
            prefix=prefix,
            key_hash=hash_text(text),
            created_at=now,
            expires_at=now + timedelta(days=days),
            team=team,
            read_only=read_only,
        )
        SchedulerEvent.record(SchedulerAction.TOKEN_CREATE, at=now, note=_note(token))
    return IssuedToken(token, text)


def revoke_token(token: ApiToken, now: datetime | None = None) -> bool:
    """Revoke `token` (it stops working at once); False when it already was."""
    now = now or timezone.now()
    with transaction.atomic():
        if not ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now):
            return False
        token.revoked_at = now
        SchedulerEvent.record(SchedulerAction.TOKEN_REVOKE, at=now, note=_note(token))
    return True


def _note(token: ApiToken) -> str:
    return f"API token {token.name} ({token.prefix}) of {token.user.get_username()}"[:500]
