"""A view that enqueues, for the request-loop test (ROOT_URLCONF in that test only)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from jobs.tests import enqueued_tasks as tasks


@csrf_exempt
@login_not_required
@require_POST
def enqueue_many(request: HttpRequest) -> JsonResponse:
    """Enqueue noop_task `count` times, each with its number; answer the result ids."""
    start, count = int(request.POST["start"]), int(request.POST["count"])
    ids = [tasks.noop_task.enqueue(number).id for number in range(start, start + count)]
    return JsonResponse({"ids": ids})


urlpatterns = [path("enqueue/", enqueue_many)]
