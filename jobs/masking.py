"""Values that are secret to some users, and how they are shown to the others.

A webhook URL often carries its credential in the path or the query (Slack, Teams) or as
user:password; an alert address list says who is on call. Users who may change jobs see
them whole; everyone else sees the scheme and host of the URL and how many addresses
there are. The API, the screens and the audit trail all mask through here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.utils.translation import ngettext

from jobs.access import CHANGE_JOB

MASK = "…"

# notify_emails is split the same way in jobs.models.job_rules.
_ADDRESS_SEPARATORS = re.compile(r"[,;\s]+")


def url_origin(url: str) -> str:
    """scheme://host[:port]: no user, password, path, query or fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return ""
    if not parts.scheme or not host:
        return ""
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def mask_url(url: str) -> str:
    if not url:
        return ""
    origin = url_origin(url)
    return f"{origin}/{MASK}" if origin else MASK


def address_count(text: str) -> int:
    return len([part for part in _ADDRESS_SEPARATORS.split(text or "") if part])


def mask_emails(text: str) -> str:
    count = address_count(text)
    if not count:
        return ""
    return ngettext("%(count)d address", "%(count)d addresses", count) % {"count": count}


# Field name -> how it is shown to a user who may not see it.
SECRET_JOB_FIELDS: dict[str, Callable[[str], str]] = {
    "webhook_url": mask_url,
    "notify_emails": mask_emails,
}


def may_see_secrets(user: Any) -> bool:
    return bool(user and user.has_perm(CHANGE_JOB))


def masked(field: str, value: Any) -> Any:
    """The value as a user without the right to see it gets it (unchanged when the
    field holds no secret)."""
    mask = SECRET_JOB_FIELDS.get(field)
    if mask is None or value in (None, ""):
        return value
    return mask(str(value))


# --- alert delivery attempts (jobs.models.NotificationAttempt) -------------------------


def masked_target(channel: str, target: str) -> str:
    """Where an attempt went, as a user who may not see secrets gets it: the addresses
    counted, a webhook's origin (attempts store no more than that) with "/…"."""
    if not target:
        return ""
    if channel == "email":  # NotificationChannel.EMAIL
        return mask_emails(target)
    return mask_url(target)


def shown_target(user: Any, channel: str, target: str) -> str:
    return target if may_see_secrets(user) else masked_target(channel, target)


# What a failed attempt's answer was (HTTP code, error text): only for users who may see
# secrets; to anyone else it would tell which internal ports answer ("sent" or "failed").
ATTEMPT_DETAIL_FIELDS = ("response_code", "error")


# --- the arguments of http and shell jobs ------------------------------------------------

# Header and environment variable names whose values are credentials: Authorization,
# Cookie, and any name holding token, secret, password or key (X-Api-Key, DB_PASSWORD).
_SECRET_NAME = re.compile(r"authorization|cookie|token|secret|passw(or)?d|key", re.IGNORECASE)


def looks_secret(name: str) -> bool:
    return bool(_SECRET_NAME.search(str(name)))


def _masked_values(values: Any) -> Any:
    if not isinstance(values, dict):
        return values
    return {name: MASK if looks_secret(name) else value for name, value in values.items()}


def masked_arguments(executor: str, arguments: Any) -> Any:
    """A job's (or a run's) arguments as a user who may not see secrets gets them: an
    http job's header values and a shell job's environment values under secret-looking
    names replaced by "…"; anything else unchanged."""
    if not isinstance(arguments, dict):
        return arguments
    if executor == "http" and "headers" in arguments:
        return {**arguments, "headers": _masked_values(arguments["headers"])}
    if executor == "shell" and "env" in arguments:
        return {**arguments, "env": _masked_values(arguments["env"])}
    return arguments


def shown_arguments(user: Any, executor: str, arguments: Any) -> Any:
    return arguments if may_see_secrets(user) else masked_arguments(executor, arguments)
