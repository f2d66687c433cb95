"""Values that are secret to some users, and how they are shown to the others.

A webhook URL often carries its credential in the path or the query (Slack, Teams) or as
user:password; an alert address list says who is on call. Users who may change jobs see
them whole; everyone else sees the scheme and host of the URL and how many addresses
there are. Likewise the values of an http job's headers and a shell job's env whose
names look secret (Authorization, Cookie, *TOKEN*, *SECRET*, *PASSWORD*, *KEY*), in
the arguments and wherever a run's log repeats them. The API, the screens and the audit
trail all mask through here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.utils.translation import ngettext

from jobs.access.permissions import CHANGE_JOB

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


# --- secret values among a job's arguments ---------------------------------------------

# Header names (http jobs) and variable names (shell jobs) whose values are secret: these
# two whole names, and any name containing one of the words.
SECRET_NAMES = ("authorization", "proxy-authorization", "cookie", "set-cookie")
SECRET_WORDS = ("token", "secret", "password", "passwd", "key", "credential")
# The parts of Job.arguments holding names and values: an http job's headers, a shell
# job's env.
SECRET_SECTIONS = ("headers", "env")
# A secret value shorter than this is not looked for in a log: it would mask at random.
LOG_SECRET_MIN_CHARS = 4


def looks_secret(name: str) -> bool:
    """Whether a header or variable name says its value is secret (Authorization,
    Cookie, X-Api-Key, DB_PASSWORD, GITHUB_TOKEN, ...)."""
    lowered = str(name).lower()
    return lowered in SECRET_NAMES or any(word in lowered for word in SECRET_WORDS)


def mask_arguments(arguments: Any) -> Any:
    """A job's (or a run's) arguments with the secret header and env values masked."""
    if not isinstance(arguments, dict):
        return arguments
    shown = dict(arguments)
    for section in SECRET_SECTIONS:
        values = shown.get(section)
        if isinstance(values, dict):
            shown[section] = {
                name: MASK if looks_secret(name) and value not in (None, "") else value
                for name, value in values.items()
            }
    return shown


def secret_values(arguments: Any) -> list[str]:
    """The secret header and env values of the arguments, longest first."""
    if not isinstance(arguments, dict):
        return []
    found = set()
    for section in SECRET_SECTIONS:
        values = arguments.get(section)
        if isinstance(values, dict):
            for name, value in values.items():
                if looks_secret(name) and isinstance(value, str):
                    found.add(value)
                    # "Bearer abc": the credential alone may be printed too.
                    found.update(value.split()[1:])
    return sorted(
        (value for value in found if len(value) >= LOG_SECRET_MIN_CHARS), key=len, reverse=True
    )


def mask_log(log: str, arguments: Any) -> str:
    """A run's log with every secret value of its arguments replaced by the mask (a
    script may print its $TOKEN; an error may quote a header)."""
    for value in secret_values(arguments):
        log = log.replace(value, MASK)
    return log


def shown_log(user: Any, log: str, arguments: Any) -> str:
    return log if may_see_secrets(user) else mask_log(log, arguments)


def shown_arguments(user: Any, arguments: Any) -> Any:
    return arguments if may_see_secrets(user) else mask_arguments(arguments)


# Field name -> how it is shown to a user who may not see it.
SECRET_JOB_FIELDS: dict[str, Callable[[Any], Any]] = {
    "webhook_url": mask_url,
    "notify_emails": mask_emails,
    "arguments": mask_arguments,
}


# Fields nobody reads back, not even who may change jobs: the API takes them and never
# returns them, the forms leave them blank (blank keeps the stored value), the admin does
# the same, and the audit trail records only that they changed (concealed_change).
WRITE_ONLY_JOB_FIELDS = ("webhook_secret",)
# What the audit trail keeps of a write-only field's change: [old, new].
SECRET_WAS_SET = MASK
SECRET_CHANGED = "changed"


def concealed_change(old: Any, new: Any) -> list[str]:
    """A write-only field's [old, new] as the audit trail keeps it: "…" where a value was
    set before, "changed" where one is set now, "" for none."""
    return [SECRET_WAS_SET if old else "", SECRET_CHANGED if new else ""]


def may_see_secrets(user: Any) -> bool:
    return bool(user and user.has_perm(CHANGE_JOB))


def masked(field: str, value: Any) -> Any:
    """The value as a user without the right to see it gets it (unchanged when the
    field holds no secret)."""
    mask = SECRET_JOB_FIELDS.get(field)
    if mask is None or value in (None, ""):
        return value
    return mask(value if isinstance(value, dict) else str(value))


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
