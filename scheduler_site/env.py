"""Read typed values from the environment and fail loudly on bad ones.

A mistyped variable must stop the process at start-up with a message naming the
variable, never fall back silently to a default.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false (1/0, yes/no, on/off), got {raw!r}")


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ImproperlyConfigured(f"{name} must be a finite number, got {raw!r}")
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {raw!r}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {raw!r}")
    return value


def env_int(
    name: str, default: int | None, *, minimum: int | None = None, maximum: int | None = None
) -> int | None:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {raw!r}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {raw!r}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# Django REST framework's rate syntax: "<requests>/<period>" ("1200/minute", "60/m").
_RATE_PERIODS = {
    "s", "sec", "second", "seconds",
    "m", "min", "minute", "minutes",
    "h", "hour", "hours",
    "d", "day", "days",
}  # fmt: skip


def env_rate(name: str, default: str) -> str:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    count, _, period = raw.strip().partition("/")
    if not (count.isascii() and count.isdigit()) or int(count) < 1 or period not in _RATE_PERIODS:
        raise ImproperlyConfigured(
            f"{name} must be a rate like 1200/minute (a number of requests per second, "
            f"minute, hour or day), got {raw!r}"
        )
    return f"{int(count)}/{period}"


def redact_url(url: str) -> str:
    """`url` without its user and password, for messages: redis://***@host:6379/0."""
    if "@" not in url:
        return url
    userinfo_end = url.rindex("@")
    scheme_end = url.find("://")
    start = scheme_end + 3 if 0 <= scheme_end < userinfo_end else 0
    return f"{url[:start]}***{url[userinfo_end:]}"


def redis_url_parses(url: str) -> bool:
    """Whether `url` has a host part and port that redis-py can read."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return False
    return parts.scheme == "unix" or bool(parts.hostname)
