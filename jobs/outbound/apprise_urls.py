"""Apprise URLs (notification channels): whether the library reads one, and where it sends.

An Apprise URL names a service and carries its credential (slack://T/B/token). Where the
request goes depends on the service:

- services whose host is fixed by the service (Slack, Teams, Discord, Telegram, PagerDuty,
  ...): Apprise calls the service's own public API, whatever the URL says; nothing to
  check but that the URL parses;
- services where the user gives the host (json://, xml://, form://, ntfy://, gotify://,
  mailto:// with its SMTP host, ...): that host goes under the address rules of webhooks
  (jobs/outbound/rules.py, JOBS_WEBHOOK_ALLOWED_HOSTS for an internal receiver), at save
  and again right before each send (a name may resolve elsewhere by then).

Any other service is refused: the scheduler does not know where it would send. Apprise
itself is imported only here, and only when a URL is checked (the optional extra
`[apprise]`); `installed()` tells whether it is there.
"""

from __future__ import annotations

import importlib.util
from typing import Any, NamedTuple

from jobs.outbound import rules as outbound

# The service's own public API, whatever host the URL's authority holds.
FIXED_HOST_SCHEMES = frozenset(
    {
        "slack",
        "msteams",
        "pagerduty",
        "tgram",
        "discord",
        "pover",
        "opsgenie",
    }
)
# The user names the host: it is checked. scheme -> the plugin attribute holding it.
USER_HOST_SCHEMES = {
    "json": "host",
    "jsons": "host",
    "xml": "host",
    "xmls": "host",
    "form": "host",
    "forms": "host",
    "ntfy": "host",
    "ntfys": "host",
    "gotify": "host",
    "gotifys": "host",
    # Teams through Power Automate (Apprise 2 has no msteams:// any more).
    "workflow": "host",
    "workflows": "host",
    "mailto": "smtp_host",
    "mailtos": "smtp_host",
}
SUPPORTED_SCHEMES = FIXED_HOST_SCHEMES | USER_HOST_SCHEMES.keys()


class BadChannelUrl(ValueError):
    """The URL cannot be used; str() says why and never quotes the URL (its secret)."""


class Target(NamedTuple):
    """What a parsed channel URL sends through: the plugin, and the host to check (empty
    for a service whose host is its own)."""

    plugin: Any
    host: str
    port: int


def installed() -> bool:
    try:
        return importlib.util.find_spec("apprise") is not None
    except ModuleNotFoundError:
        return False


def scheme_of(url: str) -> str:
    return (url or "").partition("://")[0].strip().lower()


def parse(url: str) -> Target:
    """The Apprise plugin for `url` and the host it would call. Raises BadChannelUrl."""
    if not installed():
        raise BadChannelUrl("apprise is not installed")
    scheme = scheme_of(url)
    if scheme not in SUPPORTED_SCHEMES:
        raise BadChannelUrl(f"the service {scheme[:20]!r} is not supported")
    import apprise

    plugin = apprise.Apprise.instantiate(url, suppress_exceptions=True)
    if not plugin:
        raise BadChannelUrl("Apprise cannot read this URL")
    attribute = USER_HOST_SCHEMES.get(scheme)
    if attribute is None:
        return Target(plugin, "", 0)
    host = str(getattr(plugin, attribute, "") or "")
    if not host:
        raise BadChannelUrl("the URL names no host")
    port = getattr(plugin, "port", None) or (443 if getattr(plugin, "secure", False) else 80)
    return Target(plugin, host, int(port))


def refusal_at_save(url: str) -> str | None:
    """Why `url` may not be saved, or None (a name that does not resolve passes)."""
    try:
        target = parse(url)
    except BadChannelUrl as exc:
        return str(exc)
    if not target.host:
        return None
    return outbound.check_for_validation(target.host, target.port)


def vetted(url: str) -> Target:
    """The send-time check: the plugin, its host resolved and every address allowed.
    Raises BadChannelUrl, outbound.Refused, or OSError (the name does not resolve)."""
    target = parse(url)
    if target.host:
        outbound.vetted(target.host, target.port)
    return target


def shown(url: str) -> str:
    """How a channel URL is shown to anyone: the service only (`slack://…`)."""
    scheme = scheme_of(url)
    return f"{scheme}://…" if scheme else ""
