"""Business calendars and blackout windows through the API, and a backfill's range."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from jobs.api.limits import Limits, state_limits
from jobs.models import Blackout, Calendar
from jobs.models.calendars import BLACKOUT_FIELDS, CALENDAR_FIELDS

# The longest a window may last, stated for the schema: no cron recurrence is longer
# than 8 years (29 February in a century without a leap year between), and the model
# refuses a window longer than its recurrence.
BLACKOUT_LIMITS = {"duration_minutes": Limits(None, 8 * 366 * 24 * 60)}


class ModelJudged(serializers.ModelSerializer):
    """The model's own clean() judges the values (the admin and the forms call it too)."""

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        model = self.Meta.model  # type: ignore[attr-defined]
        instance = self.instance or model()
        values = {k: v for k, v in attrs.items() if k != "jobs"}
        for name, value in values.items():
            setattr(instance, name, value)
        try:
            instance.full_clean(validate_unique=True)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        # clean() normalises some values (upper-case codes, sorted dates): keep those.
        return {**attrs, **{name: getattr(instance, name) for name in values}}


class CalendarSerializer(ModelJudged):
    class Meta:
        model = Calendar
        fields = ["id", *CALENDAR_FIELDS, "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]


class BlackoutSerializer(ModelJudged):
    class Meta:
        model = Blackout
        fields = ["id", *BLACKOUT_FIELDS, "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        state_limits(fields, BLACKOUT_LIMITS)  # for the schema (jobs.api.limits)
        return fields


class BackfillSerializer(serializers.Serializer):
    start = serializers.DateTimeField(help_text="The first moment of the range (included).")
    end = serializers.DateTimeField(help_text="Its end (excluded), in the past.")


class BackfillAnswerSerializer(serializers.Serializer):
    occurrences = serializers.ListField(child=serializers.DateTimeField())
    created = serializers.ListField(child=serializers.DateTimeField())
