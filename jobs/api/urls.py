from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from jobs.api.views import JobRunsView, JobViewSet, RunViewSet

router = DefaultRouter()
router.register("jobs", JobViewSet, basename="api-job")
router.register("runs", RunViewSet, basename="api-run")

urlpatterns = [
    path("v1/jobs/<str:job_pk>/runs/", JobRunsView.as_view(), name="api-job-runs"),
    path("v1/", include(router.urls)),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
