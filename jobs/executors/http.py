"""The http executor: one HTTP request to the job's URL (Job.command).

The same address rules as webhooks (jobs/outbound/rules.py): private, loopback, link-local
and the other internal addresses are refused unless listed in JOBS_HTTP_ALLOWED_HOSTS,
checked when the job is saved and again, on the very address connected to, when the run
starts (jobs/outbound/http.py). The whole exchange has one deadline: the job's timeout,
else JOBS_HTTP_TIMEOUT_SECONDS. Redirects are not followed.

Arguments: ``method`` (GET), ``headers`` (an object of names to text), ``body`` (text,
or any other JSON value, sent as JSON), ``expect_status`` (a status or a list of them;
default any 2xx). The log holds the request line, the status and the first part of the
body; never the header values (they may hold credentials).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from jobs import conf
from jobs.executors.base import ExecutionContext, Outcome
from jobs.executors.command_line import command_line
from jobs.executors.output import RunOutput
from jobs.observability import traceparent
from jobs.outbound import rules as outbound
from jobs.outbound.http import Deadline, PinnedHTTPConnection, PinnedHTTPSConnection, within
from jobs.runs import SCHEDULED_FOR_HEADER, RunTicket, scheduled_for_text
from jobs.text import clean_remote

USER_AGENT = "django-job-scheduler/1"
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# What of the answer's body goes to the log.
BODY_LOG_BYTES = 4096
ARGUMENT_NAMES = ("method", "headers", "body", "expect_status")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def timeout_seconds(ticket: RunTicket) -> float:
    return float(ticket.timeout_seconds or conf.http_timeout())


def url_parts(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query); ValueError when it is not an http(s) URL
    with a host."""
    try:
        parts = urlsplit(url)
        scheme, host, port = parts.scheme.lower(), parts.hostname or "", parts.port
    except ValueError:
        raise ValueError("not a valid URL") from None
    if scheme not in ("http", "https") or not host:
        raise ValueError("only http:// and https:// URLs with a host")
    if parts.username is not None:
        raise ValueError("put credentials in a header (Authorization), not in the URL")
    port = port or (443 if scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return scheme, host, port, path


def argument_errors(arguments: Any) -> dict[str, str]:
    """What is wrong with an http job's arguments, by argument name."""
    if not isinstance(arguments, Mapping):
        return {"__all__": "the arguments must be a JSON object"}
    errors = {}
    for name in arguments:
        if name not in ARGUMENT_NAMES:
            errors[str(name)] = (
                f"not an argument of an HTTP job (they are {', '.join(ARGUMENT_NAMES)})"
            )
    method = arguments.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in METHODS:
        errors["method"] = f"one of {', '.join(METHODS)}"
    headers = arguments.get("headers", {})
    if not isinstance(headers, Mapping):
        errors["headers"] = "a JSON object of header names to text"
    else:
        for name, value in headers.items():
            if not isinstance(name, str) or not _HEADER_NAME.match(name):
                errors["headers"] = f"{str(name)[:50]!r} is not a header name"
            elif not isinstance(value, str) or any(c in value for c in "\r\n\x00"):
                errors["headers"] = f"the value of {name} must be one line of text"
    expected = arguments.get("expect_status")
    if expected is not None and not _statuses(expected):
        errors["expect_status"] = "a status from 100 to 599, or a list of them"
    return errors


def _statuses(expected: Any) -> list[int]:
    values = expected if isinstance(expected, list) else [expected]
    if not values or not all(
        isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599
        for value in values
    ):
        return []
    return values


def host_problem(url: str, *, resolve: bool = True) -> str | None:
    """Why the address rules refuse the URL's host, or None (a name that does not
    resolve passes: it is checked again when the run starts)."""
    try:
        _, host, port, _ = url_parts(url)
    except ValueError as error:
        return str(error)
    if not resolve:
        reason = outbound.refusal(host, setting=outbound.HTTP_JOB_HOSTS)
    else:
        reason = outbound.check_for_validation(host, port, outbound.HTTP_JOB_HOSTS)
    if reason is None:
        return None
    return f"{reason}; an internal host can be allowed with JOBS_HTTP_ALLOWED_HOSTS"


def _body(arguments: Mapping[str, Any]) -> tuple[bytes | None, str | None]:
    """The body to send and its content type (None: leave it to the headers)."""
    if "body" not in arguments or arguments["body"] is None:
        return None, None
    body = arguments["body"]
    if isinstance(body, str):
        return body.encode(), None
    return json.dumps(body).encode(), "application/json"


class HttpExecutor:
    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        output = RunOutput()
        context.output = output
        arguments = ticket.arguments or {}
        method = str(arguments.get("method") or "GET").upper()
        output.line(command_line("http", ticket.command, arguments))
        problems = argument_errors(arguments)
        try:
            scheme, host, port, path = url_parts(ticket.command)
        except ValueError as error:
            problems["url"] = str(error)
        if problems:
            for name, message in problems.items():
                output.line(f"not run: {name}: {message}.")
            return Outcome(succeeded=False, log=output.text())
        body, content_type = _body(arguments)
        headers = {
            "User-Agent": USER_AGENT,
            "Connection": "close",
            SCHEDULED_FOR_HEADER: scheduled_for_text(ticket.scheduled_for),
        }
        if content_type:
            headers["Content-Type"] = content_type
        headers.update({str(k): str(v) for k, v in (arguments.get("headers") or {}).items()})
        # The run's span as the parent of the server's (W3C trace context).
        traceparent.add_to_headers(headers)
        expected = _statuses(arguments.get("expect_status")) if "expect_status" in arguments else []
        limit = timeout_seconds(ticket)
        connection: PinnedHTTPConnection | None = None
        with Deadline(limit) as deadline:
            # A cancelled run's request is cut off like one past its deadline.
            stop_watch = _StopWatch(context, deadline)
            try:
                destinations = within(
                    deadline, outbound.vetted, host, port, outbound.HTTP_JOB_HOSTS
                )
                kind = PinnedHTTPSConnection if scheme == "https" else PinnedHTTPConnection
                connection = kind(host, port, destinations=destinations, deadline=deadline)
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                # The remote server chose the reason phrase and, below, the error text.
                output.line(f"HTTP {response.status} {clean_remote(response.reason)}")
                first = response.read(BODY_LOG_BYTES + 1) if method != "HEAD" else b""
            except outbound.Refused as error:
                output.line(f"refused: {error}; JOBS_HTTP_ALLOWED_HOSTS can allow a host.")
                return Outcome(succeeded=False, log=output.text())
            except (OSError, ValueError, http.client.HTTPException) as error:
                if context.stop.is_set():
                    output.line(f"interrupted: {context.stop_words()}.")
                elif deadline.expired or isinstance(error, TimeoutError):
                    output.line(f"timed out: no whole answer within {limit:g} s.")
                else:
                    output.line(clean_remote(f"failed: {type(error).__name__}: {error}"))
                return Outcome(succeeded=False, log=output.text())
            finally:
                stop_watch.cancel()
                if connection is not None:
                    connection.close()
        if first:
            output.write(first[:BODY_LOG_BYTES])
            if len(first) > BODY_LOG_BYTES:
                output.line(f"[… the body goes on; the first {BODY_LOG_BYTES} bytes are shown]")
        code = response.status
        succeeded = code in expected if expected else 200 <= code < 300
        if not succeeded:
            wanted = ", ".join(map(str, expected)) if expected else "2xx"
            output.line(f"failed: status {code}, expected {wanted}.")
        return Outcome(succeeded=succeeded, log=output.text())


class _StopWatch:
    """Expires the deadline (shutting the socket) as soon as the run is stopped."""

    def __init__(self, context: ExecutionContext, deadline: Deadline) -> None:
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, args=(context, deadline), name="http-stop", daemon=True
        )
        self._thread.start()

    def _watch(self, context: ExecutionContext, deadline: Deadline) -> None:
        while not self._done.is_set():
            if context.stop.wait(0.2):
                deadline.expire()
                return

    def cancel(self) -> None:
        self._done.set()
