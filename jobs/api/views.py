"""API views: short, and every state change goes through the engine or Job.full_clean()."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Prefetch, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema_view
from rest_framework import exceptions, generics, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from jobs import engine
from jobs.access.permissions import ADD_JOB, CHANGE_JOB, DELETE_JOB, RUN_JOB
from jobs.api.pagination import ChangePagination, JobPagination, RunPagination
from jobs.api.policy import ApiPolicy, extend_schema
from jobs.api.serializers import (
    JobChangeSerializer,
    JobFilterSerializer,
    JobRunFilterSerializer,
    JobSerializer,
    RunDetailSerializer,
    RunFilterSerializer,
    RunNowSerializer,
    RunSerializer,
    SchedulePreviewQuerySerializer,
    SchedulePreviewSerializer,
    TaskSerializer,
    field_errors,
)
from jobs.api.serializers.calendars import BackfillAnswerSerializer, BackfillSerializer
from jobs.forecasts import preview
from jobs.models import Channel, Job, JobChange, JobHistory, NotificationChannel, gate
from jobs.models.chains import CHAIN_FIELDS
from jobs.models.changes import reset_actor, set_actor
from jobs.pytasks import registry
from jobs.web import scoping


def _query(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    params = serializer_class(data=request.query_params)
    params.is_valid(raise_exception=True)
    return params.validated_data


def _runs() -> QuerySet[JobHistory]:
    # The log can be long: only one run's page shows it.
    return JobHistory.objects.select_related("job").defer("log")


class ActorMixin:
    """What the view changes is recorded in the audit trail as done through the API by
    the user DRF authenticated (token or session): known only from initial() on."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        self._actor_token = set_actor(request.user, Channel.API)

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]
        finally:
            token = self.__dict__.pop("_actor_token", None)
            if token is not None:
                reset_actor(token)


@extend_schema_view(
    list=extend_schema(summary="List jobs", parameters=[JobFilterSerializer]),
    create=extend_schema(summary="Create a job"),
    retrieve=extend_schema(summary="Read a job"),
    update=extend_schema(summary="Replace a job"),
    partial_update=extend_schema(summary="Change some fields of a job"),
    destroy=extend_schema(summary="Delete a job and its runs"),
)
class JobViewSet(ApiPolicy, ActorMixin, viewsets.ModelViewSet):
    serializer_class = JobSerializer
    pagination_class = JobPagination
    permission_by_action = {
        "create": ADD_JOB,
        "update": CHANGE_JOB,
        "partial_update": CHANGE_JOB,
        "enable": CHANGE_JOB,
        "disable": CHANGE_JOB,
        "destroy": DELETE_JOB,
        "run": RUN_JOB,
        "backfill": RUN_JOB,
    }

    def get_queryset(self) -> QuerySet[Job]:
        # with_running() gives `state` without a query per job; id makes the order total;
        # the chains' ids come with two queries per page, the alert channels' with one.
        # team_id: whether the user may see a chained job (JobSerializer.to_representation).
        ids_only = Job.objects.only("pk", "team_id").order_by()
        channel_ids = NotificationChannel.objects.only("pk").order_by()
        return (
            scoping.visible_jobs(self.request, Job.objects.with_running())
            .order_by("name", "id")
            .prefetch_related(
                *(Prefetch(name, queryset=ids_only) for name in CHAIN_FIELDS),
                Prefetch("channels", queryset=channel_ids),
            )
        )

    def filter_queryset(self, queryset: QuerySet[Job]) -> QuerySet[Job]:
        if self.action != "list":
            return queryset
        params = _query(JobFilterSerializer, self.request)
        if params.get("is_active") is not None:
            queryset = queryset.filter(is_active=params["is_active"])
        if params.get("schedule_type"):
            queryset = queryset.filter(schedule_type=params["schedule_type"])
        if params.get("queue"):
            queryset = queryset.filter(queue=params["queue"])
        if params.get("search"):
            queryset = queryset.search(params["search"])
        return queryset

    @extend_schema(
        summary="Run a job now",
        description=(
            'With the job\'s own arguments, or with {"arguments": {...}} for this run '
            "only (checked as the job's are; a shell job's need jobs.use_shell). 409 when "
            "the job has JOBS_MAX_PENDING_MANUAL_RUNS runs started by hand waiting already."
        ),
        request=RunNowSerializer,
        responses={201: RunDetailSerializer, 409: OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["post"])
    def run(self, request: Request, pk: str | None = None, **kwargs: Any) -> Response:
        job = self.get_object()
        body = RunNowSerializer(data=request.data if isinstance(request.data, dict) else {})
        body.is_valid(raise_exception=True)
        arguments = body.validated_data.get("arguments")
        if arguments is not None:
            # Before the arguments are read: a refusal says nothing about them.
            if (refusal := gate.run_refusal(request.user, job, arguments)) is not None:
                raise exceptions.PermissionDenied(refusal)
            try:
                arguments = job.run_arguments(arguments)
            except DjangoValidationError as exc:
                raise exceptions.ValidationError(field_errors(exc)) from None
        try:
            run = engine.run_now(job, arguments=arguments, user=request.user)
        except engine.ManualRunsExceeded as refusal:
            # A conflict with the job's state (its runs waiting), as a cancel of a run
            # that has ended is; 429 stays the throttles' (a rate, with Retry-After).
            detail = " ".join(refusal.messages)
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        url = reverse("jobs:api-run-detail", args=[run.pk], request=request)
        return Response(
            # With the request: the run's arguments masked as its user may read them.
            RunDetailSerializer(run, context=self.get_serializer_context()).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": url},
        )

    @extend_schema(
        summary="Run a job for a past range",
        description=(
            "One run per occurrence in [start, end) that has none yet (trigger backfill), "
            "at most JOBS_BACKFILL_MAX_RUNS; the end must be in the past."
        ),
        request=BackfillSerializer,
        responses={201: BackfillAnswerSerializer},
    )
    @action(detail=True, methods=["post"])
    def backfill(self, request: Request, pk: str | None = None, **kwargs: Any) -> Response:
        job = self.get_object()
        body = BackfillSerializer(data=request.data if isinstance(request.data, dict) else {})
        body.is_valid(raise_exception=True)
        try:
            done = engine.backfill(job, body.validated_data["start"], body.validated_data["end"])
        except engine.BackfillRefused as refused:
            raise exceptions.ValidationError({refused.field: [str(refused)]}) from None
        answer = {"occurrences": done.occurrences, "created": done.created}
        return Response(BackfillAnswerSerializer(answer).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Enable a job", request=None, responses={200: JobSerializer})
    @action(detail=True, methods=["post"])
    def enable(self, request: Request, pk: str | None = None, **kwargs: Any) -> Response:
        return self._set_active(True)

    @extend_schema(summary="Disable a job", request=None, responses={200: JobSerializer})
    @action(detail=True, methods=["post"])
    def disable(self, request: Request, pk: str | None = None, **kwargs: Any) -> Response:
        return self._set_active(False)

    def _set_active(self, active: bool) -> Response:
        job = self.get_object()
        try:
            job.set_active(active, user=self.request.user)
        except DjangoValidationError as exc:
            if (refusal := gate.refusal_of(exc)) is not None:
                raise exceptions.PermissionDenied(refusal) from None
            # e.g. enabling a one-off job whose time has passed.
            raise exceptions.ValidationError(field_errors(exc)) from None
        return Response(self.get_serializer(job).data)


@extend_schema(
    summary="List the registered Python tasks",
    description=(
        "The tasks a python job may name in its command (registered with @jobs.register, "
        "or django.tasks tasks in a task module), sorted by name, with their parameters."
    ),
    responses={200: TaskSerializer(many=True)},
)
class TaskListView(ApiPolicy, generics.GenericAPIView):
    serializer_class = TaskSerializer
    pagination_class = None

    def get(self, request: Request) -> Response:
        return Response(TaskSerializer(registry.registered_tasks(), many=True).data)


@extend_schema_view(
    list=extend_schema(summary="List runs, newest first", parameters=[RunFilterSerializer]),
    retrieve=extend_schema(summary="Read a run with its log and alert attempts"),
)
class RunViewSet(ApiPolicy, ActorMixin, viewsets.ReadOnlyModelViewSet):
    pagination_class = RunPagination
    permission_by_action = {"cancel": RUN_JOB}

    def get_queryset(self) -> QuerySet[JobHistory]:
        if self.action == "retrieve":
            runs = JobHistory.objects.select_related("job").prefetch_related("notifications")
            return scoping.visible_runs(self.request, runs)
        return scoping.visible_runs(self.request, _runs())

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return RunDetailSerializer if self.action == "retrieve" else RunSerializer

    def filter_queryset(self, queryset: QuerySet[JobHistory]) -> QuerySet[JobHistory]:
        if self.action != "list":
            return queryset
        return queryset.matching(**_query(RunFilterSerializer, self.request))

    @extend_schema(
        request=None,
        responses={200: RunDetailSerializer, 409: OpenApiTypes.OBJECT},
        summary="Cancel a run",
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None, **kwargs: Any) -> Response:
        """Cancel a pending or running run (409 if it has already finished)."""
        run = self.get_object()
        try:
            engine.cancel_run(run, by=request.user.get_username())
        except engine.CancelRefused as refused:
            return Response({"detail": str(refused)}, status=status.HTTP_409_CONFLICT)
        run.refresh_from_db()
        return Response(RunDetailSerializer(run, context={"request": request}).data)


@extend_schema(
    summary="List a job's runs, newest first",
    parameters=[
        OpenApiParameter("job_pk", OpenApiTypes.UUID, OpenApiParameter.PATH),
        JobRunFilterSerializer,
    ],
)
class JobRunsView(ApiPolicy, ActorMixin, generics.ListAPIView):
    serializer_class = RunSerializer
    pagination_class = RunPagination

    def get_queryset(self) -> QuerySet[JobHistory]:
        # 404 for an unknown or malformed id, not an empty list.
        # (values_list: Job.from_db reads the schedule fields, which .only() would defer.)
        job_id = generics.get_object_or_404(
            scoping.visible_jobs(self.request).values_list("pk", flat=True),
            pk=self.kwargs["job_pk"],
        )
        params = _query(JobRunFilterSerializer, self.request)
        return _runs().filter(job_id=job_id).matching(**params)


@extend_schema(
    summary="List a job's changes (its audit trail), newest first",
    description=(
        "Who changed the job, when, through which channel, and each field's old and new "
        "value. A deleted job's changes stay readable. Webhook URLs and alert addresses "
        "are masked for users who may not change jobs."
    ),
    parameters=[OpenApiParameter("job_pk", OpenApiTypes.UUID, OpenApiParameter.PATH)],
)
class JobChangesView(ApiPolicy, ActorMixin, generics.ListAPIView):
    serializer_class = JobChangeSerializer
    pagination_class = ChangePagination

    def get_queryset(self) -> QuerySet[JobChange]:
        try:
            job_id = uuid.UUID(self.kwargs["job_pk"])
        except ValueError:
            raise exceptions.NotFound() from None
        changes = JobChange.objects.filter(job_id=job_id).order_by("-created_at", "-id")
        # 404 only when there is neither a job nor any record (a deleted job has records).
        if Job.objects.filter(pk=job_id).exists():
            if not scoping.visible_jobs(self.request).filter(pk=job_id).exists():
                raise exceptions.NotFound()  # another team's
        # A deleted job's records: its team is gone with it, so site-wide viewers only.
        elif not changes.exists() or scoping.filters(self.request).jobs is not None:
            raise exceptions.NotFound()
        return changes


class SchedulePreviewView(ApiPolicy, APIView):
    """The next occurrences of a schedule, computed by the scheduler's own code (the
    job form's preview, jobs/forecasts/preview.py). Saves nothing; needs jobs.view_job."""

    @extend_schema(
        summary="Preview a schedule's next occurrences",
        description=(
            "The schedule fields of a job as query parameters; the answer lists the next "
            "occurrences in UTC and in the schedule's zone, each with a note on what "
            "daylight saving does to it (or null). A schedule that could not be saved "
            "is a 400 with the same messages per field as creating the job."
        ),
        parameters=[SchedulePreviewQuerySerializer],
        responses={200: SchedulePreviewSerializer},
    )
    def get(self, request: Request) -> Response:
        params = _query(SchedulePreviewQuerySerializer, request)
        result = preview.preview(
            preview.schedule_job(params), count=params["count"], start=params.get("start")
        )
        if result.errors:
            raise exceptions.ValidationError(result.errors)
        answer = {"timezone": result.zone_name, "occurrences": result.occurrences}
        return Response(SchedulePreviewSerializer(answer).data)
