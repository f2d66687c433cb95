"""Alert channels through the API: the URL write-only (taken, never returned: `service`
says which one it is), the model's clean() judging every value."""

from __future__ import annotations

import copy
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from jobs.models import NotificationChannel
from jobs.models.channels import CHANNEL_EVENTS, CHANNEL_URL_MAX_LENGTH


class NotificationChannelSerializer(serializers.ModelSerializer):
    url = serializers.CharField(
        write_only=True,
        required=False,
        max_length=CHANNEL_URL_MAX_LENGTH,
        help_text="The Apprise URL (slack://…, json://host/path, mailto://…). Write-only: "
        "never returned; leave it out of an update to keep it.",
    )
    service = serializers.SerializerMethodField(help_text='The URL\'s service, e.g. "slack://…".')
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=list(CHANNEL_EVENTS)),
        required=False,
        max_length=len(CHANNEL_EVENTS),
    )

    class Meta:
        model = NotificationChannel
        fields = [
            "id",
            "name",
            "team",
            "url",
            "service",
            "is_team_default",
            "is_active",
            "events",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "created_at", "updated_at"]

    def get_service(self, channel: NotificationChannel) -> str:
        return channel.shown_url

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is None and not attrs.get("url"):
            raise serializers.ValidationError({"url": ["This field is required."]})
        # A copy: a refused update leaves the loaded channel untouched.
        channel = copy.copy(self.instance) if self.instance is not None else NotificationChannel()
        for name, value in attrs.items():
            setattr(channel, name, value)
        try:
            channel.full_clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        return attrs
