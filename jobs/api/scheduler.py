"""The scheduler in the API: its state (GET /api/v1/scheduler/), pause all and resume.

Reading needs jobs.view_job, pausing and resuming jobs.pause_scheduler. A pause is
validated by jobs.models.clean_pause (the dashboard's and the admin's rules): a 400 with
the field's message, and nothing changes.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import engine
from jobs.access.permissions import PAUSE_SCHEDULER
from jobs.alerts import health
from jobs.api.limits import Limits, StatedMaxLength, state_limits
from jobs.api.policy import ApiPolicy, extend_schema
from jobs.api.views import ActorMixin
from jobs.models import PAUSE_NOTE_MAX_LENGTH, SchedulerHeartbeat

# A process id as PositiveIntegerField stores it on every database.
PID_MAX = 2**31 - 1


class SchedulerProcessSerializer(serializers.ModelSerializer):
    last_heartbeat = serializers.DateTimeField(source="seen_at")

    class Meta:
        model = SchedulerHeartbeat
        fields = ["name", "host", "pid", "started_at", "last_heartbeat"]

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        state_limits(fields, {"pid": Limits(1, PID_MAX)})
        return fields


class SchedulerSerializer(serializers.Serializer):
    """What health.overview() says, in the API's words."""

    state = serializers.ChoiceField(
        choices=[health.RUNNING, health.PAUSED, health.DOWN],
        help_text="running, paused (nothing is claimed), or down (see `health`).",
    )
    paused = serializers.BooleanField()
    paused_until = serializers.DateTimeField(
        allow_null=True, help_text="When the pause ends by itself; null: at a resume."
    )
    note = serializers.CharField(allow_blank=True, help_text="Why it is paused.")
    paused_by = serializers.CharField(allow_blank=True, help_text="Who paused it (username).")
    paused_since = serializers.DateTimeField(allow_null=True)
    health = serializers.CharField(
        allow_blank=True, help_text="Why the scheduler is down (empty when it is not)."
    )
    down_since = serializers.DateTimeField(
        allow_null=True, help_text="Since when an incident is open (alerted once)."
    )
    schedulers = SchedulerProcessSerializer(
        many=True, help_text="Scheduler processes seen lately, the latest heartbeat first."
    )

    @staticmethod
    def of(overview: health.Overview) -> dict[str, Any]:
        switch, paused = overview.switch, overview.state == health.PAUSED
        return {
            "state": overview.state,
            "paused": paused,
            "paused_until": switch.paused_until if paused else None,
            "note": switch.note if paused else "",
            "paused_by": switch.paused_by_name if paused else "",
            "paused_since": switch.paused_at if paused else None,
            "health": overview.health.reason if overview.state == health.DOWN else "",
            "down_since": overview.down_since,
            "schedulers": overview.schedulers,
        }


class PauseSerializer(serializers.Serializer):
    until = serializers.DateTimeField(
        required=False, allow_null=True, help_text="Resume by itself then (in the future)."
    )
    note = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,  # clean_pause trims, after counting what was sent
        # clean_pause judges the length, in its words; the schema states it.
        validators=[StatedMaxLength(PAUSE_NOTE_MAX_LENGTH)],
        help_text="Why (one line, at most 500 characters).",
    )


def _state() -> Response:
    return Response(SchedulerSerializer(SchedulerSerializer.of(health.overview())).data)


class SchedulerView(ApiPolicy, ActorMixin, APIView):
    @extend_schema(
        summary="The scheduler: paused or not, its health, its processes",
        responses={200: SchedulerSerializer},
    )
    def get(self, request: Request) -> Response:
        return _state()


class PauseView(ApiPolicy, ActorMixin, APIView):
    action = "pause"  # jobs.api.permissions: what an unsafe request needs
    permission_by_action = {"pause": PAUSE_SCHEDULER}

    @extend_schema(
        summary="Pause the whole scheduler (maintenance mode)",
        description=(
            "No occurrence is claimed while paused; runs already pending still start. "
            "With `until`, it resumes by itself then. Pausing while paused changes the "
            "until and the note."
        ),
        request=PauseSerializer,
        responses={200: SchedulerSerializer},
    )
    def post(self, request: Request) -> Response:
        given = PauseSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        # A ValidationError (until not in the future, a bad note) is a 400 by field
        # (jobs.api.views.exception_handler), and nothing is changed.
        engine.pause(given.validated_data.get("until"), given.validated_data.get("note", ""))
        return _state()


class ResumeView(ApiPolicy, ActorMixin, APIView):
    action = "resume"
    permission_by_action = {"resume": PAUSE_SCHEDULER}

    @extend_schema(
        summary="Resume the whole scheduler",
        description=(
            "What came due while paused follows each job's misfire policy. Resuming a "
            "scheduler that is not paused changes nothing."
        ),
        request=None,
        responses={200: SchedulerSerializer},
    )
    def post(self, request: Request) -> Response:
        engine.resume()
        return _state()
