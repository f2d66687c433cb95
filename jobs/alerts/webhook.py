"""Sending one webhook: to a vetted address, within one deadline, nothing else.

- The host is resolved once and every address is checked (jobs/outbound/rules.py); the
  connection goes to the checked address itself, never to a second lookup, so a name
  that changes its answer (DNS rebinding) cannot send the request elsewhere. The Host
  header, and for https the SNI name and the certificate check, are the URL's host.
- JOBS_ALERT_TIMEOUT_SECONDS bounds the whole delivery (connecting, TLS, sending, the
  status line and headers): a timer shuts the socket when it passes, so a server that
  trickles its answer a byte at a time is cut off too.
- No redirects are followed and no response body is read; HTTP_PROXY / HTTPS_PROXY in
  the environment are not used (http.client never reads them).
- Every request carries the Standard Webhooks headers (jobs/outbound/signing.py): webhook-id,
  webhook-timestamp and, with a secret (the job's own, else JOBS_WEBHOOK_SECRET),
  webhook-signature. Without any secret the request goes unsigned: the receiver still
  gets the id and the time, and docs/alerts.md says how to turn signing on.
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import time
from typing import Any
from urllib.parse import unquote, urlsplit

from django.core.serializers.json import DjangoJSONEncoder

from jobs import conf
from jobs.outbound import rules as outbound
from jobs.outbound import signing
from jobs.outbound.http import Deadline, PinnedHTTPConnection, PinnedHTTPSConnection, within
from jobs.runs import new_key
from jobs.text import clean_remote

USER_AGENT = "django-job-scheduler-alerts/1"

# How the error text of a delivery the address rules refused begins (not retried).
REFUSED = "refused: "


def signing_key(secret: str = "") -> bytes | None:
    """The HMAC key for a webhook: of `secret` (a job's own), else of JOBS_WEBHOOK_SECRET;
    None when neither is set. Raises signing.BadSecret for a malformed one (both are
    validated before they are stored: at start-up, and by Job.clean())."""
    chosen = secret or conf.webhook_secret()
    return signing.parse_secret(chosen) if chosen else None


def new_webhook_id() -> str:
    return f"msg_{new_key()}"


def post_webhook(
    url: str,
    payload: dict[str, Any],
    *,
    webhook_id: str | None = None,
    secret: str = "",
    context: ssl.SSLContext | None = None,
) -> tuple[bool, int | None, str]:
    """POST the payload as JSON, signed. Returns (delivered, HTTP status, error text); the
    error text is cleaned (jobs.text.clean_remote) and names no credential or path.

    `webhook_id` names the delivery: pass the same one to every retry of it (None: a
    new one, for a delivery tried once). `secret` is a ``whsec_`` secret that signs in
    place of JOBS_WEBHOOK_SECRET (a job's own). Each call is an attempt with its own
    webhook-timestamp.
    """
    body = json.dumps(payload, cls=DjangoJSONEncoder).encode()
    timeout = conf.alert_timeout()
    try:
        key = signing_key(secret)
    except signing.BadSecret:
        return False, None, REFUSED + "the webhook signing secret is not valid"
    signature = signing.signature_headers(
        webhook_id or new_webhook_id(), int(time.time()), body, key
    )
    try:
        parts = urlsplit(url)
        scheme, host, port = parts.scheme.lower(), parts.hostname or "", parts.port
    except ValueError:
        return False, None, REFUSED + "not a valid URL"
    if scheme not in ("http", "https") or not host:
        return False, None, REFUSED + "only http:// and https:// URLs with a host"
    port = port or (443 if scheme == "https" else 80)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Connection": "close",
        **signature.as_dict(),
    }
    if parts.username is not None:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(credentials.encode()).decode()
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection: PinnedHTTPConnection | None = None
    with Deadline(timeout) as deadline:
        try:
            destinations = within(deadline, outbound.vetted, host, port)
            if scheme == "https":
                connection = PinnedHTTPSConnection(
                    host, port, destinations=destinations, deadline=deadline, context=context
                )
            else:
                connection = PinnedHTTPConnection(
                    host, port, destinations=destinations, deadline=deadline
                )
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()  # the status line and headers, no body
            if deadline.expired:
                # The deadline shut the socket in the middle of the headers, and
                # http.client takes the end of the stream for their end: not delivered.
                raise TimeoutError("deadline passed")
            code, reason = response.status, response.reason
        except outbound.Refused as exc:
            return False, None, REFUSED + clean_remote(str(exc))
        except http.client.InvalidURL:
            # Its message quotes the path, which may hold the hook's credential.
            return False, None, REFUSED + "the URL's path or host is not valid"
        except (OSError, ValueError, http.client.HTTPException) as exc:
            # Refused, timed out, DNS, TLS, a malformed answer...
            if deadline.expired or isinstance(exc, TimeoutError):
                return False, None, f"timed out: no answer within {timeout:g} s"
            return False, None, clean_remote(f"{type(exc).__name__}: {exc}")
        finally:
            if connection is not None:
                connection.close()
    if 200 <= code < 300:
        return True, code, ""
    return False, code, clean_remote(f"HTTP {code} {reason}")
