"""The registered Python tasks and their parameters."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from jobs.pytasks import signature


class TaskParameterSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=[(kind, kind) for kind in signature.KINDS])
    required = serializers.BooleanField()
    default = serializers.SerializerMethodField(
        help_text="The default as JSON; null when there is none (see required)."
    )
    choices = serializers.ListField(
        child=serializers.JSONField(), help_text="Enum or Literal values."
    )
    annotation_text = serializers.CharField(allow_blank=True)
    nullable = serializers.BooleanField()

    @extend_schema_field({"description": "Any JSON value."})
    def get_default(self, parameter: signature.TaskParameter) -> Any:
        if parameter.required:
            return None
        value = signature.json_value(parameter.default)
        return value if _is_json(value) else signature.short_repr(parameter.default)


def _is_json(value: Any) -> bool:
    import json

    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


class TaskSerializer(serializers.Serializer):
    """A registered Python task a python job may run (its name goes in the job's command)."""

    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    signature = serializers.CharField(source="signature_text")
    parameters = TaskParameterSerializer(many=True)
