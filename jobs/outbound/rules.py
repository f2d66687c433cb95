"""Where the scheduler may send a request: the address rules of webhooks.

A webhook URL is chosen by whoever edits a job, and the scheduler POSTs to it from inside
the network: without rules it could reach the cloud metadata service, a database's HTTP
port or an admin interface on localhost. So a webhook may only go to global unicast
addresses: not loopback, private (10/8, 172.16/12, 192.168/16), carrier-grade NAT
(100.64/10), link-local (169.254/16, fe80::/10), unique-local (fc00::/7), multicast,
reserved or unspecified, nor an IPv4 address wrapped in IPv6 (::ffff:127.0.0.1).

The rules are applied twice: when a job is validated (jobs.models.job_rules, a message at
the webhook URL) and when an alert is sent (jobs.alerts), which connects to the very
address it checked, so a name that resolves differently the second time (DNS rebinding)
gains nothing. A name that does not resolve at validation is accepted (it is checked
when sending). Hosts in JOBS_WEBHOOK_ALLOWED_HOSTS (an internal alert receiver) skip the
address rules. HTTP jobs (jobs/executors/http.py) follow the same rules, with their own
list: JOBS_HTTP_ALLOWED_HOSTS.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import NamedTuple

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(Exception):
    """The host may not be sent to; str() says why (no secret: host and address only)."""


class Destination(NamedTuple):
    """One address to connect to, as socket.getaddrinfo() gives it."""

    family: int
    type: int
    proto: int
    sockaddr: tuple


def normal_host(host: str) -> str:
    return (host or "").strip().rstrip(".").lower().strip("[]")


# The settings listing hosts allowed although internal: for alerts, and for HTTP jobs.
WEBHOOK_HOSTS = "JOBS_WEBHOOK_ALLOWED_HOSTS"
HTTP_JOB_HOSTS = "JOBS_HTTP_ALLOWED_HOSTS"


def allowed_hosts(setting: str = WEBHOOK_HOSTS) -> set[str]:
    """The hosts a setting allows (JOBS_WEBHOOK_ALLOWED_HOSTS unless named otherwise),
    normalised (lower case, IPv6 without brackets)."""
    names = set()
    for entry in getattr(settings, setting, ()) or ():
        name = normal_host(str(entry))
        address = parse_address(name)
        names.add(str(address) if address is not None else name)
    return names


def is_allowed_anyway(host: str, setting: str = WEBHOOK_HOSTS) -> bool:
    name = normal_host(host)
    address = parse_address(name)
    return (str(address) if address is not None else name) in allowed_hosts(setting)


def parse_address(text: str) -> IPAddress | None:
    """An IP address written literally (an IPv6 zone "%eth0" ignored), else None."""
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def is_public(address: IPAddress) -> bool:
    """A global unicast address: what a webhook may reach."""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None and not is_public(mapped):
            return False
    return address.is_global and not (
        address.is_multicast
        or address.is_loopback
        or address.is_link_local
        or address.is_private
        or address.is_reserved
        or address.is_unspecified
    )


def is_local_name(host: str) -> bool:
    """localhost and its sub-domains (RFC 6761), refused without asking DNS."""
    name = normal_host(host)
    return name in ("localhost", "localhost.localdomain") or name.endswith(".localhost")


def resolve(host: str, port: int) -> list[Destination]:
    """Every address of `host` (TCP). Raises OSError (socket.gaierror) when it has none."""
    return [
        Destination(family, kind, proto, sockaddr)
        for family, kind, proto, _canonical, sockaddr in socket.getaddrinfo(
            normal_host(host), port, type=socket.SOCK_STREAM
        )
    ]


def refusal(
    host: str, destinations: list[Destination] | None = None, setting: str = WEBHOOK_HOSTS
) -> str | None:
    """Why `host` (with the addresses it resolved to, if known) may not be sent to; None
    when it may. Used by both checks, so they say the same. `setting` names the list of
    hosts allowed anyway."""
    if is_allowed_anyway(host, setting):
        return None
    name = normal_host(host)
    literal = parse_address(name)
    if literal is not None:
        if not is_public(literal):
            return f"{literal} is not a public address"
        return None
    if is_local_name(name):
        return f"{name} is a local name"
    for destination in destinations or ():
        address = parse_address(str(destination.sockaddr[0]))
        if address is None or not is_public(address):
            return f"{name} resolves to {destination.sockaddr[0]}, not a public address"
    return None


def check_for_validation(host: str, port: int, setting: str = WEBHOOK_HOSTS) -> str | None:
    """The validation-time check: why not, or None. A name that does not resolve passes
    (it is checked again when an alert is sent)."""
    literal = parse_address(normal_host(host)) is not None
    if literal or is_allowed_anyway(host, setting) or is_local_name(host):
        return refusal(host, setting=setting)
    try:
        destinations = resolve(host, port)
    except (OSError, UnicodeError):
        return None
    return refusal(host, destinations, setting)


def vetted(host: str, port: int, setting: str = WEBHOOK_HOSTS) -> list[Destination]:
    """The send-time check: the addresses to connect to, every one of them allowed.
    Raises Refused (with the reason), or OSError when the name does not resolve."""
    early = refusal(host, setting=setting)
    if early is not None:
        raise Refused(early)
    try:
        destinations = resolve(host, port)
    except UnicodeError as exc:
        raise Refused(f"{normal_host(host)[:100]!r} is not a valid host name") from exc
    if not destinations:
        raise OSError(f"{normal_host(host)} has no address")
    reason = refusal(host, destinations, setting)
    if reason is not None:
        raise Refused(reason)
    return destinations
