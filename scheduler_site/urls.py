from django.contrib import admin
from django.urls import include, path

from jobs.metrics import metrics_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    # The JSON API, its schema and docs; Prometheus metrics (README: "API", "Metrics").
    path("api/", include("jobs.api.urls")),
    path("metrics", metrics_view, name="metrics"),
    path("", include("jobs.urls")),
]
