"""The API's calendars and blackout windows (/api/v1/calendars/, /api/v1/blackouts/):
the calendar permissions of the model (jobs.add_calendar, ...), a calendar in use not
deleted (409 naming its jobs)."""

from __future__ import annotations

from django.db.models import ProtectedError
from drf_spectacular.utils import extend_schema_view
from rest_framework import status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from jobs.api.permissions import model_permissions
from jobs.api.policy import ApiPolicy, extend_schema
from jobs.api.serializers.calendars import BlackoutSerializer, CalendarSerializer
from jobs.api.views import ActorMixin
from jobs.models import Blackout, Calendar


@extend_schema_view(
    list=extend_schema(summary="List business calendars"),
    create=extend_schema(summary="Create a business calendar"),
    retrieve=extend_schema(summary="Read a business calendar"),
    update=extend_schema(summary="Replace a business calendar"),
    partial_update=extend_schema(summary="Change some fields of a business calendar"),
    destroy=extend_schema(summary="Delete a business calendar no job uses"),
)
class CalendarViewSet(ApiPolicy, ActorMixin, viewsets.ModelViewSet):
    serializer_class = CalendarSerializer
    queryset = Calendar.objects.order_by("name")
    permission_by_action = model_permissions("calendar")

    def destroy(self, request: Request, *args: object, **kwargs: object) -> Response:
        calendar = self.get_object()
        try:
            calendar.delete()
        except ProtectedError:
            names = ", ".join(calendar.jobs_in_use())
            return Response(
                {"detail": f"The calendar is in use by these jobs: {names}."},
                status=status.HTTP_409_CONFLICT,
            )
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    list=extend_schema(summary="List blackout windows"),
    create=extend_schema(summary="Create a blackout window"),
    retrieve=extend_schema(summary="Read a blackout window"),
    update=extend_schema(summary="Replace a blackout window"),
    partial_update=extend_schema(summary="Change some fields of a blackout window"),
    destroy=extend_schema(summary="Delete a blackout window"),
)
class BlackoutViewSet(ApiPolicy, ActorMixin, viewsets.ModelViewSet):
    serializer_class = BlackoutSerializer
    queryset = Blackout.objects.order_by("name").prefetch_related("jobs")
    permission_by_action = model_permissions("blackout")
