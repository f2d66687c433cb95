from django.contrib import admin
from django.urls import include, path

from hostproject import views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    # The scheduler's screens, its API (scheduler/api/) and its metrics, under a prefix.
    path("scheduler/", include("jobs.urls")),
    # The project's own page named as the app's dashboard is: the app's is jobs:dashboard.
    path("", views.dashboard, name="dashboard"),
]
