"""The queues in the API: GET /api/v1/queues/ (needs jobs.view_job, as every read).

What jobs.queues.status.snapshot() says, the one reading behind the dashboard's card and the
jobs_queue_* gauges of /metrics too; for a team-scoped user, of the jobs they may see only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import conf
from jobs.api.policy import ApiPolicy, extend_schema
from jobs.api.views import ActorMixin
from jobs.queues import settings as queues
from jobs.queues import status as queue_status
from jobs.web import scoping


class QueueSerializer(serializers.Serializer):
    name = serializers.CharField()
    pending = serializers.IntegerField(
        min_value=0, help_text="Runs ready to start now, waiting for a slot or a worker."
    )
    waiting_later = serializers.IntegerField(
        min_value=0, help_text="Pending runs that may start only later (a retry's backoff)."
    )
    running = serializers.IntegerField(min_value=0)
    oldest_pending_seconds = serializers.FloatField(
        min_value=0, help_text="How long the oldest ready run has waited (0 when none)."
    )
    limit = serializers.IntegerField(
        allow_null=True,
        min_value=1,
        max_value=queues.MAX_QUEUE_LIMIT,
        help_text="The most runs running at once across all processes (JOBS_QUEUE_LIMITS); "
        "null: no limit.",
    )
    served = serializers.BooleanField(
        help_text="Whether a live scheduler serves the queue; false: its runs wait."
    )
    stalled = serializers.BooleanField(
        help_text="Whether the oldest ready run has waited longer than JOBS_QUEUE_STALL_SECONDS."
    )


class QueuesSerializer(serializers.Serializer):
    queues = QueueSerializer(
        many=True, help_text="Every queue with jobs, active runs or a limit, by name."
    )
    checked_at = serializers.DateTimeField(help_text="When the figures were read.")
    stall_seconds = serializers.FloatField(
        allow_null=True,
        min_value=0,
        help_text="JOBS_QUEUE_STALL_SECONDS: a longer wait is stalled; null: never.",
    )

    @staticmethod
    def of(now: datetime, found: list[queue_status.QueueState]) -> dict[str, Any]:
        stall = conf.queue_stall()
        return {
            "queues": [queue._asdict() for queue in found],
            "checked_at": now,
            "stall_seconds": stall.total_seconds() if stall is not None else None,
        }


class QueuesView(ApiPolicy, ActorMixin, APIView):
    @extend_schema(
        summary="The queues: runs waiting and running, the oldest wait, the limit",
        description=(
            "Per queue, the runs ready now and waiting for a slot or a worker, those "
            "running, how long the oldest ready one has waited, the queue's limit, and "
            "whether any live scheduler serves it."
        ),
        responses={200: QueuesSerializer},
    )
    def get(self, request: Request) -> Response:
        now = timezone.now()
        scope = scoping.filters(request)
        found = queue_status.snapshot(now, jobs_q=scope.jobs, runs_q=scope.runs)
        return Response(QueuesSerializer(QueuesSerializer.of(now, found)).data)
