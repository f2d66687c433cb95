"""Sending one webhook: to a vetted address, within one deadline, nothing else.

- The host is resolved once and every address is checked (jobs/outbound.py); the
  connection goes to the checked address itself, never to a second lookup, so a name
  that changes its answer (DNS rebinding) cannot send the request elsewhere. The Host
  header, and for https the SNI name and the certificate check, are the URL's host.
- JOBS_ALERT_TIMEOUT_SECONDS bounds the whole delivery (connecting, TLS, sending, the
  status line and headers): a timer shuts the socket when it passes, so a server that
  trickles its answer a byte at a time is cut off too.
- No redirects are followed and no response body is read; HTTP_PROXY / HTTPS_PROXY in
  the environment are not used (http.client never reads them).
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
from typing import Any
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder

from jobs import outbound
from jobs.outbound_http import Deadline, PinnedHTTPConnection, PinnedHTTPSConnection, within
from jobs.text import clean_remote

USER_AGENT = "django-job-scheduler-alerts/1"

# How the error text of a delivery the address rules refused begins (not retried).
REFUSED = "refused: "


def post_webhook(
    url: str, payload: dict[str, Any], *, context: ssl.SSLContext | None = None
) -> tuple[bool, int | None, str]:
    """POST the payload as JSON. Returns (delivered, HTTP status, error text); the error
    text is cleaned (jobs.text.clean_remote) and names no credential or path."""
    body = json.dumps(payload, cls=DjangoJSONEncoder).encode()
    timeout = float(settings.JOBS_ALERT_TIMEOUT_SECONDS)
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
