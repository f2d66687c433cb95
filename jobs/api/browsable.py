"""DRF's browsable pages under a Content-Security-Policy without inline styles.

Nothing inline runs on them (DRF's scripts are static files; its CSRF token is a JSON
<script>, which is data). Two things style inline: the Pygments <style> of its code
blocks (left out: the JSON shows unhighlighted) and a few fixed style="" attributes of
DRF's own templates (the OPTIONS button, the fieldsets of its forms). Those are allowed
by their hashes alone ('unsafe-hashes' for style attributes only: no other inline
style, and no script), on these pages only.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import django
from django.conf import settings
from rest_framework.renderers import BrowsableAPIRenderer

# Every style="" value of the DRF templates the browsable pages use (rest_framework/base.html,
# horizontal/fieldset.html, horizontal/list_fieldset.html).
DRF_STYLE_ATTRIBUTES = (
    "float: right; margin-right: 10px",
    "border-bottom: 1px solid #e5e5e5",
    "border-bottom: 0",
)


def _hash(value: str) -> str:
    digest = hashlib.sha256(value.encode()).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


STYLE_ATTRIBUTES = {"style-src-attr": ["'unsafe-hashes'", *map(_hash, DRF_STYLE_ATTRIBUTES)]}


class BrowsablePages(BrowsableAPIRenderer):
    def get_context(self, data: Any, accepted_media_type: str, renderer_context: dict) -> dict:
        context = super().get_context(data, accepted_media_type, renderer_context)
        # Pygments' styles would be an inline <style>.
        context["code_style"] = None
        return context

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict | None = None,
    ) -> Any:
        response = (renderer_context or {}).get("response")
        if response is not None:
            # django-csp (Django 5.2) adds these to the project's policy...
            response._csp_update = STYLE_ATTRIBUTES
            # ...Django 6's own middleware takes a whole policy: the project's, plus these.
            project_policy = getattr(settings, "SECURE_CSP", None)
            if django.VERSION >= (6, 0) and project_policy:
                response._csp_config = {**project_policy, **STYLE_ATTRIBUTES}
        return super().render(data, accepted_media_type, renderer_context)
