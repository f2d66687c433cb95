"""The API's notification channels (/api/v1/channels/): the model permissions
(jobs.add_notificationchannel, ...; reading needs jobs.view_job, as every read), the URL
write-only."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_view
from rest_framework import viewsets

from jobs.api.permissions import model_permissions
from jobs.api.policy import ApiPolicy, extend_schema
from jobs.api.serializers.channels import NotificationChannelSerializer
from jobs.api.views import ActorMixin
from jobs.models import NotificationChannel


@extend_schema_view(
    list=extend_schema(summary="List alert channels"),
    create=extend_schema(summary="Create an alert channel"),
    retrieve=extend_schema(summary="Read an alert channel (never its URL)"),
    update=extend_schema(summary="Replace an alert channel"),
    partial_update=extend_schema(summary="Change some fields of an alert channel"),
    destroy=extend_schema(summary="Delete an alert channel"),
)
class NotificationChannelViewSet(ApiPolicy, ActorMixin, viewsets.ModelViewSet):
    serializer_class = NotificationChannelSerializer
    queryset = NotificationChannel.objects.order_by("name")
    permission_by_action = model_permissions("notificationchannel")
