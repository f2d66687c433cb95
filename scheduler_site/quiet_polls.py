"""The development server's log without the pages' own refreshes.

Every open page asks again every few seconds (htmx polling, `hx-trigger="every ..."`),
and runserver logs each request: the start-up output (the admin password among it)
scrolled away behind them. The middleware marks a request that htmx made (the
HX-Request header) in the thread that serves it; runserver logs the request in that
same thread once the response is sent, and the filter drops the line when it answered
a GET successfully. Other requests, and every error, are still logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

_current = threading.local()


class MarkHtmxRequestsMiddleware:
    """Remembers, for the log filter, whether this thread's request is an htmx GET."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Set for every request, so a kept-alive connection's next request starts afresh.
        _current.htmx_get = request.method in ("GET", "HEAD") and "HX-Request" in request.headers
        return self.get_response(request)


class DropHtmxPolls(logging.Filter):
    """For the django.server logger: drops the line of a successful htmx GET."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if not getattr(_current, "htmx_get", False) or not isinstance(status, int):
            return True
        _current.htmx_get = False  # one line per request
        return status >= 400
