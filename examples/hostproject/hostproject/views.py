"""The project's own front page, named `dashboard` as the scheduler's is: the app's URL
names are in its namespace (`jobs:dashboard`), so the two never clash."""

from django.http import HttpRequest, HttpResponse
from django.urls import reverse


def dashboard(request: HttpRequest) -> HttpResponse:
    return HttpResponse(
        f'<p>The project\'s own dashboard. <a href="{reverse("jobs:dashboard")}">Scheduler</a></p>'
    )
