"""Values that are secret to some users, and how they are shown to the others.

A webhook URL often carries its credential in the path or the query (Slack, Teams) or as
user:password; an alert address list says who is on call. Users who may change jobs see
them whole; everyone else sees the scheme and host of the URL and how many addresses
there are. Likewise every value of an http job's headers and a shell job's env (a
credential hides under any name: DATABASE_URL, PGPASS, AUTH), in the arguments and
wherever a run's log repeats them; for a job only users with jobs.use_shell may create
(a shell job), only they see them.

The credentials of URLs (userinfo, query values, fragment) are shown to nobody, wherever
a URL appears: an http job's URL, a command line, an env value, a log. The scheme, host,
path and query keys stay, to tell which URL it is. A value sent back as it was shown
keeps the stored one (restore_field). The API, the screens, the admin, the audit trail
and the alerts all mask through here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy, ngettext

from jobs.access import permissions
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


# --- credentials in URLs: hidden from everyone ------------------------------------------

# A URL anywhere in a text (a command line, an env value, a log): scheme://, then up to
# the first space or quote. Only URLs with "://" carry userinfo or a host to recognise.
URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]+")


class UrlSecrets(NamedTuple):
    """A URL as shown (its credentials masked) and the credentials it held."""

    shown: str
    secrets: tuple[str, ...]


def _url_secrets(url: str) -> UrlSecrets:
    """A URL with its userinfo, every query value and its fragment masked: the scheme,
    host, path and query keys stay, to tell which URL it is (`postgres://u:pw@h/d` ->
    `postgres://…@h/d`, `https://h/p?token=abc` -> `https://h/p?token=…`)."""
    scheme, _sep, rest = url.partition("://")
    authority_end = len(rest)
    for mark in "/?#":
        where = rest.find(mark)
        if where != -1:
            authority_end = min(authority_end, where)
    authority, rest = rest[:authority_end], rest[authority_end:]
    secrets: list[str] = []
    if "@" in authority:
        userinfo, _at, host = authority.rpartition("@")
        # The password; the user name too when it stands alone (a token as the user).
        _name, colon, password = userinfo.partition(":")
        secrets += [userinfo, password] if colon else [userinfo]
        authority = f"{MASK}@{host}"
    rest, hash_, fragment = rest.partition("#")
    path, question, query = rest.partition("?")
    if query:
        shown_pairs = []
        for pair in query.split("&"):
            key, equals, value = pair.partition("=")
            if not equals:  # a bare value ("?abc123"): the whole pair may be the secret
                shown_pairs.append(MASK if key else "")
                secrets.append(key)
            else:
                shown_pairs.append(f"{key}={MASK}" if value else f"{key}=")
                secrets.append(value)
        query = "&".join(shown_pairs)
    if fragment:  # "#access_token=..." of an OAuth redirect
        secrets.append(fragment)
        fragment = MASK
    shown = f"{scheme}://{authority}{path}{question}{query}{hash_}{fragment}"
    return UrlSecrets(shown, tuple(secret for secret in secrets if secret))


def mask_urls(text: str) -> str:
    """A text with the credentials of every URL in it masked (see _url_secrets)."""
    if "://" not in text:
        return text
    return URL_IN_TEXT.sub(lambda match: _url_secrets(match[0]).shown, text)


def url_credentials(text: str) -> list[str]:
    """The userinfo, query values and fragments of the URLs in a text."""
    if "://" not in text:
        return []
    return [
        secret for match in URL_IN_TEXT.finditer(text) for secret in _url_secrets(match[0]).secrets
    ]


def mask_url_values(value: Any) -> Any:
    """A JSON value (arguments, a command) with the URLs of its strings masked."""
    if isinstance(value, str):
        return mask_urls(value)
    if isinstance(value, dict):
        return {name: mask_url_values(item) for name, item in value.items()}
    if isinstance(value, list):
        return [mask_url_values(item) for item in value]
    return value


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


class HiddenValueKept(ValueError):
    """A value sent back still holding the mask where no stored value stands behind it."""


def restore(sent: Any, stored: Any) -> Any:
    """What a user sent back, with each masked part put back from the stored value:
    a value (or a URL inside one) sent as it was shown means "unchanged", never the mask
    itself. This is how every form, the admin and the API keep secrets that their user
    was shown masked.

    A string equal to the stored one as any user is shown it (wholly masked, or its URLs'
    credentials masked) is the stored string; a URL inside a string equal to a stored URL
    as shown is that URL. Objects are restored key by key. Raises HiddenValueKept when a
    URL still holds a masked credential with nothing stored behind it (it was edited):
    saving it would store the mask.
    """
    if isinstance(sent, dict):
        stored_dict = stored if isinstance(stored, dict) else {}
        return {name: restore(item, stored_dict.get(name)) for name, item in sent.items()}
    if isinstance(sent, list):
        stored_list = stored if isinstance(stored, list) else []
        return [
            restore(item, stored_list[index] if index < len(stored_list) else None)
            for index, item in enumerate(sent)
        ]
    if not isinstance(sent, str) or MASK not in sent:
        return sent
    if isinstance(stored, str) and sent in (MASK, mask_urls(stored)) and stored:
        return stored
    # URLs shown masked anywhere in the stored value, by how they were shown.
    known = {
        _url_secrets(match[0]).shown: match[0]
        for text in _strings(stored)
        for match in URL_IN_TEXT.finditer(text)
    }

    def put_back(match: re.Match[str]) -> str:
        url = match[0]
        if url in known:
            return known[url]
        if any(MASK in secret for secret in _url_secrets(url).secrets):
            raise HiddenValueKept(url)
        return url

    return URL_IN_TEXT.sub(put_back, sent)


HIDDEN_VALUE_KEPT = gettext_lazy(
    "“…” stands for a hidden value that only the unchanged text can keep: type the whole "
    "value again (%(url)s)."
)


def restore_or_error(sent: Any, stored: Any) -> Any:
    """restore(), with HiddenValueKept as a ValidationError saying what to do."""
    try:
        return restore(sent, stored)
    except HiddenValueKept as kept:
        raise ValidationError(
            str(HIDDEN_VALUE_KEPT) % {"url": str(kept)[:200]}, code="masked"
        ) from None


# --- the values of a job's arguments: hidden from users who may not change the job -----

# The parts of Job.arguments holding names and values: an http job's headers, a shell
# job's env. Every value of these is hidden from users who may not change the job: a
# credential hides under any name (DATABASE_URL, PGPASS, AUTH, X-Upstream).
SECRET_SECTIONS = ("headers", "env")
# Elsewhere in the arguments (a Python task's keyword arguments, a JSON body), values
# under a name that says it is secret: these two whole names, and any name containing
# one of the words.
SECRET_NAMES = ("authorization", "proxy-authorization", "cookie", "set-cookie")
SECRET_WORDS = ("token", "secret", "password", "passwd", "key", "credential", "auth", "dsn")
# A secret value shorter than this is not looked for in a log: it would mask at random.
LOG_SECRET_MIN_CHARS = 4


def looks_secret(name: str) -> bool:
    """Whether a name says its value is secret (Authorization, Cookie, api_key,
    DB_PASSWORD, GITHUB_TOKEN, ...)."""
    lowered = str(name).lower()
    return lowered in SECRET_NAMES or any(word in lowered for word in SECRET_WORDS)


def _hide_named(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            name: MASK if looks_secret(name) and item not in (None, "") else _hide_named(item)
            for name, item in value.items()
        }
    if isinstance(value, list):
        return [_hide_named(item) for item in value]
    return mask_url_values(value)


def mask_arguments(arguments: Any) -> Any:
    """A job's (or a run's) arguments as users who may not change the job see them:
    every header and env value masked, values under secret-looking names masked, the
    credentials of every URL masked."""
    if not isinstance(arguments, dict):
        return mask_url_values(arguments)
    shown = {}
    for section, values in arguments.items():
        if section in SECRET_SECTIONS and isinstance(values, dict):
            shown[section] = {
                name: MASK if value not in (None, "") else value for name, value in values.items()
            }
        else:
            shown[section] = _hide_named({section: values})[section]
    return shown


def _hidden_values(arguments: Any) -> Iterator[str]:
    if not isinstance(arguments, dict):
        return
    for section, values in arguments.items():
        if section in SECRET_SECTIONS and isinstance(values, dict):
            for value in values.values():
                if isinstance(value, str):
                    yield value
                    # "Bearer abc": the credential alone may be printed too.
                    yield from value.split()[1:]
        elif looks_secret(section):
            yield from _strings(values)
        elif isinstance(values, dict):
            yield from _hidden_values(values)


def secret_values(arguments: Any, command: str = "") -> list[str]:
    """The values users who may not change the job must not read in a run's log: its
    header and env values, values under secret names, and the credentials of the URLs in
    its arguments and command; longest first."""
    found = set(_hidden_values(arguments))
    for text in (*_strings(arguments), command or ""):
        found.update(url_credentials(text))
    return sorted(
        (value for value in found if len(value) >= LOG_SECRET_MIN_CHARS and MASK not in value),
        key=len,
        reverse=True,
    )


def mask_log(log: str, arguments: Any, command: str = "") -> str:
    """A run's log as users who may not change the job see it: every secret value of its
    arguments and command replaced by the mask (a script may print its $TOKEN; an error
    may quote a header), and the credentials of every URL masked."""
    for value in secret_values(arguments, command):
        log = log.replace(value, MASK)
    return mask_urls(log)


def may_see_secrets(user: Any, job: Any = None) -> bool:
    """Whether `user` reads the secrets of jobs (of `job`, when given) unmasked: who may
    change jobs, and for a job only users with jobs.use_shell may create (a shell job, a
    dangerous management command), only users with jobs.use_shell."""
    if not (user and user.has_perm(CHANGE_JOB)):
        return False
    return job is None or permissions.may_change_job_like(user, job)


def shown_arguments(user: Any, arguments: Any, job: Any = None) -> Any:
    """Arguments as `user` may read them: URL credentials masked for everyone, and every
    header and env value too for users who may not change `job`."""
    if may_see_secrets(user, job):
        return mask_url_values(arguments)
    return mask_arguments(arguments)


def shown_log(user: Any, log: str, arguments: Any, job: Any = None) -> str:
    """A run's log as `user` may read it (see mask_log); URL credentials masked for
    everyone, the log's first line included ("$ GET https://h/p?token=…")."""
    if may_see_secrets(user, job):
        return mask_urls(log)
    return mask_log(log, arguments, getattr(job, "command", "") or "")


# Field name -> how it is shown to a user who may not see the job's secrets.
SECRET_JOB_FIELDS: dict[str, Callable[[Any], Any]] = {
    "command": mask_urls,
    "webhook_url": mask_url,
    "notify_emails": mask_emails,
    "arguments": mask_arguments,
}
# Field name -> how it is shown to a user who may: URL credentials are for nobody's eyes.
EDITOR_JOB_FIELDS: dict[str, Callable[[Any], Any]] = {
    "command": mask_urls,
    "webhook_url": mask_urls,
    "arguments": mask_url_values,
}


def shown_value(see_secrets: bool, field: str, value: Any) -> Any:
    """A job field's value as shown to a user who may see the job's secrets or not."""
    if value in (None, ""):
        return value
    if see_secrets:
        show = EDITOR_JOB_FIELDS.get(field)
        return value if show is None else show(value)
    return masked(field, value)


def shown_field(user: Any, job: Any, field: str, value: Any) -> Any:
    """A job field's value as `user` may read it (the API, the screens, the forms)."""
    return shown_value(may_see_secrets(user, job), field, value)


# The fields that say whether a job needs jobs.use_shell (jobs.access).
_SHELL_FIELDS = ("executor", "command")


def may_see_change_secrets(user: Any, change: Any, job: Any = None) -> bool:
    """Whether `user` reads the values of an audit-trail record (a JobChange) unmasked:
    as for the job (when given), and as for the job as it was before and after that
    change (a version that ran shell commands stays for users with jobs.use_shell)."""
    if not may_see_secrets(user, job):
        return False
    changes = getattr(change, "changes", None) or {}
    versions = [getattr(change, "snapshot", None) or {}]
    for side in (0, 1):
        versions.append(
            {
                name: pair[side]
                for name, pair in changes.items()
                if name in _SHELL_FIELDS and isinstance(pair, list) and len(pair) == 2
            }
        )
    return all(permissions.may_change_job_like(user, version) for version in versions)


def shown_changes(user: Any, change: Any, job: Any = None) -> dict[str, list[Any]]:
    """An audit-trail record's {"field": [old, new]} as `user` may read it."""
    see_secrets = may_see_change_secrets(user, change, job)
    return {
        name: [shown_value(see_secrets, name, value) for value in pair]
        for name, pair in (getattr(change, "changes", None) or {}).items()
    }


def restore_field(field: str, sent: Any, stored: Any) -> Any:
    """A job field's value as a user sent it back, the masked parts of what that user
    was shown put back from the stored value (see restore). Raises ValidationError
    when a masked credential was edited."""
    if sent == stored or stored in (None, ""):
        return sent
    if field in SECRET_JOB_FIELDS and sent == masked(field, stored):
        return stored
    if field in EDITOR_JOB_FIELDS:
        return restore_or_error(sent, stored)
    return sent


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
    if channel == "email":  # DeliveryChannel.EMAIL
        return mask_emails(target)
    return mask_url(target)


def shown_target(user: Any, channel: str, target: str) -> str:
    return target if may_see_secrets(user) else masked_target(channel, target)


# What a failed attempt's answer was (HTTP code, error text): only for users who may see
# secrets; to anyone else it would tell which internal ports answer ("sent" or "failed").
ATTEMPT_DETAIL_FIELDS = ("response_code", "error")
