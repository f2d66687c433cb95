"""What the serializers share: Django's validation errors in DRF's shape, the arguments
field, the request's user, the date-time fields of the filters and the preview."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.settings import api_settings


def field_errors(exc: DjangoValidationError) -> dict[str, list[str]] | list[str]:
    """A Django ValidationError as DRF's {field: [messages]} (or a list of messages)."""
    if not hasattr(exc, "error_dict"):
        return list(exc.messages)
    return {
        (api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field): messages
        for field, messages in exc.message_dict.items()
    }


# A JSON object, documented as one (DRF's JSONField would say "any value").
ARGUMENTS_SCHEMA = {
    "type": "object",
    "additionalProperties": {},
    "description": (
        "A JSON object, read per executor: a Python task's keyword arguments; an HTTP "
        "job's method, headers, body and expect_status; a shell job's env. Secret header "
        "and env values are masked for users who may not change jobs."
    ),
}


@extend_schema_field(ARGUMENTS_SCHEMA)
class ArgumentsField(serializers.JSONField):
    """Job.arguments and JobHistory.arguments: a JSON object (checked by Job.clean())."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError('The arguments must be a JSON object, like {"a": 1}.')
        return value


def request_user(serializer: serializers.BaseSerializer) -> Any:
    """The request's user; None (who sees secrets masked) without a request."""
    request = serializer.context.get("request")
    return getattr(request, "user", None)


class BoundDateTimeField(serializers.DateTimeField):
    """A date-time to compare with, for a filter. A moment the schema allows but that
    lies before year 1 or after year 9999 once moved to UTC ("0001-01-01T00:00+12:00")
    is read as the first or last moment there is: every stored time compares with it
    as it would with the moment given."""

    def enforce_timezone(self, value: datetime) -> datetime:
        try:
            return super().enforce_timezone(value)
        except serializers.ValidationError:
            if value.year == datetime.min.year:
                return datetime.min.replace(tzinfo=UTC)
            if value.year == datetime.max.year:
                return datetime.max.replace(tzinfo=UTC)
            raise


class ZonedDateTimeField(serializers.DateTimeField):
    """A datetime written in its own zone, with that zone's offset."""

    def enforce_timezone(self, value: datetime) -> datetime:
        return value
