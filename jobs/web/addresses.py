"""The client's address, as far as it can be trusted: what the API's throttles and the
failed-login counts (jobs.web.logins) count requests by."""

from __future__ import annotations

import ipaddress

from django.http import HttpRequest

from jobs import conf


def client_address(request: HttpRequest) -> str | None:
    """The address of the client, as far as it can be trusted; None when unknown.

    REMOTE_ADDR, unless TRUSTED_PROXY says a reverse proxy stands in front: then the last
    address in X-Forwarded-For, the one that proxy appended (whatever a client sends in
    the header itself comes before it). A header that is there but unreadable gives None
    rather than the proxy's own address, which every client shares.
    """
    if conf.trusted_proxy() and "HTTP_X_FORWARDED_FOR" in request.META:
        return _address(request.META["HTTP_X_FORWARDED_FOR"].split(",")[-1])
    return _address(request.META.get("REMOTE_ADDR", ""))


def _address(text: str) -> str | None:
    """An IPv4 or IPv6 address in its usual spelling, without port or zone, or None."""
    text = text.strip()
    if text.startswith("["):  # [2001:db8::1]:443
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:  # 192.0.2.1:443
        text = text.partition(":")[0]
    try:
        return str(ipaddress.ip_address(text.partition("%")[0]))
    except ValueError:
        return None
