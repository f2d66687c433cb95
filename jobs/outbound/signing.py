"""Signing webhooks the Standard Webhooks way (https://www.standardwebhooks.com/).

Each webhook carries three headers:

- ``webhook-id``: the message's id, the same on every retry of one delivery, so a
  receiver can drop a duplicate;
- ``webhook-timestamp``: when this attempt was made, whole seconds since the epoch (new
  on every attempt, so a receiver can refuse an old one replayed);
- ``webhook-signature``: ``v1,`` and the base64 HMAC-SHA256 of ``id.timestamp.body``.

A secret is written ``whsec_`` followed by base64 (padded with "=" or not); the HMAC
key is the decoded bytes, 24 to 64 of them (the specification's bounds). Nothing here
touches Django: the settings module parses JOBS_WEBHOOK_SECRET with `parse_secret` at
start-up, Job.clean() a job's own secret, and jobs/alerts/webhook.py signs with
`signature_headers`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from typing import NamedTuple

SECRET_PREFIX = "whsec_"
MIN_KEY_BYTES = 24
MAX_KEY_BYTES = 64
# "whsec_" and the base64 of 64 bytes (88 characters).
SECRET_MAX_LENGTH = len(SECRET_PREFIX) + 4 * ((MAX_KEY_BYTES + 2) // 3)


class BadSecret(ValueError):
    """A secret not in the whsec_<base64> form. The message says what is wrong, in
    English for logs and start-up errors (never repeating the secret); `code` lets a
    form say it in the user's language: "prefix", "base64" or "length" (then
    `key_bytes` is how many bytes it decoded to)."""

    def __init__(self, message: str, code: str, key_bytes: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.key_bytes = key_bytes


def parse_secret(secret: str) -> bytes:
    """The HMAC key of a ``whsec_<base64>`` secret. Raises BadSecret."""
    if not secret.startswith(SECRET_PREFIX):
        raise BadSecret(f"must start with {SECRET_PREFIX!r}, followed by base64", "prefix")
    encoded = secret.removeprefix(SECRET_PREFIX)
    # Base64 with its "=" padding or without: the specification's libraries accept
    # both, and some generators leave it off.
    encoded += "=" * (-len(encoded) % 4)
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise BadSecret(f"must be {SECRET_PREFIX!r} followed by valid base64", "base64") from None
    if not MIN_KEY_BYTES <= len(key) <= MAX_KEY_BYTES:
        raise BadSecret(
            f"must hold {MIN_KEY_BYTES} to {MAX_KEY_BYTES} bytes once decoded, "
            f"this one holds {len(key)}",
            "length",
            len(key),
        )
    return key


def sign(key: bytes, message_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


class SignatureHeaders(NamedTuple):
    webhook_id: str
    webhook_timestamp: str
    webhook_signature: str | None  # None: no secret, sent unsigned

    def as_dict(self) -> dict[str, str]:
        headers = {"webhook-id": self.webhook_id, "webhook-timestamp": self.webhook_timestamp}
        if self.webhook_signature is not None:
            headers["webhook-signature"] = self.webhook_signature
        return headers


def signature_headers(
    message_id: str, timestamp: int, body: bytes, key: bytes | None
) -> SignatureHeaders:
    """The Standard Webhooks headers of one attempt; unsigned when `key` is None.

    The id must not hold a full stop: it is the separator of what is signed.
    """
    if "." in message_id or not message_id:
        raise ValueError("a webhook id must be non-empty and hold no '.'")
    signature = None if key is None else sign(key, message_id, timestamp, body)
    return SignatureHeaders(message_id, str(timestamp), signature)
