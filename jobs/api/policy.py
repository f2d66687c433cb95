"""The API's own DRF policies, whatever the project's REST_FRAMEWORK setting says.

A project may have DRF defaults of its own for its own API (AllowAny, other
authentication, a default paginator, filter backends, another schema class); every view
of this API names its classes here instead, so that a project's defaults neither open it
nor change its answers. DRF's output formats (DATETIME_FORMAT, COERCE_DECIMAL_TO_STRING,
...) still follow the project's settings.

- Authentication: a token (`Authorization: Token <key>`, first, so that an anonymous
  request is answered 401 with WWW-Authenticate) or the dashboard's session.
- Permissions: jobs.api.permissions.JobPermissions (the dashboard's, jobs.access.permissions).
- JSON in (bounded in depth) and out, plus DRF's browsable pages (jobs.api.browsable:
  under a Content-Security-Policy without inline styles).
- Throttles: per address without credentials (JOBS_API_THROTTLE_ANON) and per user
  (JOBS_API_THROTTLE_USER), counted in the cache every process shares (jobs.conf.shared_cache);
  the address is the one
  TRUSTED_PROXY allows trusting (jobs.web.addresses).
- drf-spectacular's AutoSchema; no filter backends or versioning.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache import BaseCache
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular import utils as spectacular
from drf_spectacular.openapi import AutoSchema
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication
from rest_framework.metadata import SimpleMetadata
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.schemas.inspectors import DefaultSchema, ViewInspector
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle
from rest_framework.views import exception_handler as drf_exception_handler

from jobs import conf
from jobs.api.authentication import LockoutTokenAuthentication
from jobs.api.browsable import BrowsablePages
from jobs.api.parsers import JSONParser
from jobs.api.permissions import JobPermissions
from jobs.api.serializers import field_errors
from jobs.web.addresses import client_address
from jobs.web.middleware import NUL_MESSAGE, request_has_nul

F = TypeVar("F", bound=Callable[..., Any])


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus: a model ValidationError is a 400 with its field messages."""
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(field_errors(exc))
    return drf_exception_handler(exc, context)


class _AddressIdent:
    """Count a client by the address jobs.web.addresses trusts, not by whatever
    X-Forwarded-For says (DRF's default when the project sets no NUM_PROXIES), in the
    cache every process shares."""

    def get_ident(self, request: Request) -> str:
        return client_address(request) or request.META.get("REMOTE_ADDR", "")

    @property
    def cache(self) -> BaseCache:
        # Every web process counts in the same place: a limit per process would be that
        # many times the limit.
        return conf.shared_cache()


class AnonThrottle(_AddressIdent, AnonRateThrottle):
    """Requests without credentials, per address: JOBS_API_THROTTLE_ANON."""

    scope = "jobs_anon"

    def get_rate(self) -> str | None:
        return conf.api_throttle_anon()


class UserThrottle(_AddressIdent, UserRateThrottle):
    """Requests of one user (anonymous ones by address): JOBS_API_THROTTLE_USER."""

    scope = "jobs_user"

    def get_rate(self) -> str | None:
        return conf.api_throttle_user()


class OwnSchema(DefaultSchema):
    """drf-spectacular's AutoSchema for each view, whatever DEFAULT_SCHEMA_CLASS says
    (a new inspector per view, as DRF's DefaultSchema gives)."""

    def __get__(self, instance: Any, owner: Any) -> Any:
        # A schema set on the view instance (drf-spectacular's generator sets the one of
        # each method) comes first, as with DRF's DefaultSchema.
        found = ViewInspector.__get__(self, instance, owner)
        if not isinstance(found, OwnSchema):
            return found
        inspector = AutoSchema()
        inspector.view = instance
        return inspector


def extend_schema(**kwargs: Any) -> Callable[[F], F]:
    """drf-spectacular's extend_schema, built on its AutoSchema whatever the project's
    DEFAULT_SCHEMA_CLASS is.

    On a view method, drf-spectacular derives the method's schema from
    DEFAULT_SCHEMA_CLASS (DRF's own AutoSchema unless a project says otherwise), and
    such a schema loses the annotation; a method that names a schema class is derived
    from that one instead.
    """
    decorate = spectacular.extend_schema(**kwargs)

    def decorator(target: F) -> F:
        if inspect.isclass(target) or getattr(target, "kwargs", {}).get("schema"):
            # A class's own `schema` (OwnSchema), or an annotation already stacked here.
            return decorate(target)
        target.schema = AutoSchema  # type: ignore[attr-defined]
        try:
            return decorate(target)
        finally:
            del target.schema  # type: ignore[attr-defined]

    return decorator


AUTHENTICATION_CLASSES = [LockoutTokenAuthentication, SessionAuthentication]
THROTTLE_CLASSES = [AnonThrottle, UserThrottle]


# Mixed into every view of the API, first, so that these win. (No docstring: drf-spectacular
# would show it as the description of the operations of views that have none.)
class ApiPolicy:
    authentication_classes = AUTHENTICATION_CLASSES
    permission_classes = [JobPermissions]
    parser_classes = [JSONParser]
    renderer_classes = [JSONRenderer, BrowsablePages]
    throttle_classes = THROTTLE_CLASSES
    content_negotiation_class = DefaultContentNegotiation
    metadata_class = SimpleMetadata
    versioning_class = None
    # Generic views only: the lists page with their own classes (jobs.api.pagination)
    # and filter by their own query serializers.
    pagination_class = None
    filter_backends: list[type] = []
    schema = OwnSchema()

    def get_exception_handler(self) -> Any:
        return exception_handler

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # Before authentication looks a token up: PostgreSQL refuses NUL in text (the
        # standalone site's RejectNulMiddleware answers so for every page).
        if request_has_nul(request._request):
            raise exceptions.ParseError(NUL_MESSAGE)
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
