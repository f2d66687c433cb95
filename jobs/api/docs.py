"""The API's OpenAPI schema and its Swagger UI: public, and the same in any project.

The schema describes this API alone (jobs.api.urls), with the app's drf-spectacular
settings (jobs.api.schema.SCHEMA_SETTINGS) over the project's SPECTACULAR_SETTINGS, and
its paths under the prefix the project mounted the API at. Swagger UI's files come from
drf-spectacular-sidecar (no CDN), and nothing inline runs (scheduler_site/content_policy.py).
"""

from __future__ import annotations

from typing import Any

from django.templatetags.static import static
from django.urls import reverse
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from jobs.api.policy import AUTHENTICATION_CLASSES, THROTTLE_CLASSES, OwnSchema, extend_schema
from jobs.api.schema import SCHEMA_SETTINGS


def api_mount_point() -> str:
    """Where the project mounted the API: "/api" in the standalone site, say
    "/scheduler/api" in a project that includes jobs.urls under "scheduler/"."""
    return reverse("jobs:api-root").removesuffix("/").removesuffix("/v1")


class SchemaView(SpectacularAPIView):
    authentication_classes = AUTHENTICATION_CLASSES
    permission_classes = [AllowAny]
    throttle_classes = THROTTLE_CLASSES
    versioning_class = None
    schema = OwnSchema()
    urlconf = "jobs.api.urls"

    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        self.custom_settings = {
            **SCHEMA_SETTINGS,
            "SCHEMA_PATH_PREFIX_INSERT": api_mount_point(),
        }
        return super().get(request, *args, **kwargs)


class SwaggerView(SpectacularSwaggerSplitView):
    """Swagger UI under a Content-Security-Policy without inline scripts or styles: its
    start-up script comes from this URL with ?script (the split view), its page from a
    template whose styles are a static file."""

    authentication_classes = AUTHENTICATION_CLASSES
    permission_classes = [AllowAny]
    throttle_classes = THROTTLE_CLASSES
    versioning_class = None
    schema = OwnSchema()
    url_name = "jobs:api-schema"
    title = SCHEMA_SETTINGS["TITLE"]
    template_name = "jobs/api/swagger_ui.html"

    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @staticmethod
    def _swagger_ui_resource(filename: str) -> str:
        return static(f"drf_spectacular_sidecar/swagger-ui-dist/{filename}")

    @staticmethod
    def _swagger_ui_favicon() -> str:
        return static("drf_spectacular_sidecar/swagger-ui-dist/favicon-32x32.png")
