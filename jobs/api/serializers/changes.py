"""A job's changes (its audit trail)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from jobs.access.masking import (
    shown_changes,
)
from jobs.api.limits import (
    Limits,
    state_limits,
)
from jobs.api.serializers.fields import request_user
from jobs.models import (
    JobChange,
)


@extend_schema_field(
    {
        "type": "object",
        "description": 'Each changed field\'s [old, new] value: {"name": ["old", "new"]}.',
        "additionalProperties": {"type": "array", "items": {}, "minItems": 2, "maxItems": 2},
    }
)
class ChangesField(serializers.Field):
    """{"field": [old, new]} (for the schema; JobChangeSerializer masks the values)."""

    def to_representation(self, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        # Masked by JobChangeSerializer, which knows the record (jobs.access.masking.shown_changes).
        return value


class JobChangeSerializer(serializers.ModelSerializer):
    job = serializers.UUIDField(source="job_id", read_only=True)
    user = serializers.CharField(
        source="username", read_only=True, help_text="The username; empty for the system."
    )
    run = serializers.UUIDField(
        source="run_id",
        read_only=True,
        allow_null=True,
        help_text="The run started, retried or cancelled; null for other changes.",
    )
    changes = ChangesField(read_only=True)

    def to_representation(self, instance: JobChange) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["changes"] = shown_changes(request_user(self), instance)
        return data

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        state_limits(fields, {"id": Limits(1, None)})
        return fields

    class Meta:
        model = JobChange
        fields = [
            "id",
            "job",
            "job_name",
            "user",
            "channel",
            "action",
            "created_at",
            "run",
            "changes",
        ]
        read_only_fields = fields
