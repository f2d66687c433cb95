"""The standalone site's Content-Security-Policy: every page, the admin's, the API's
browsable pages and /api/docs/ included (docs/deployment.md: "Content-Security-Policy").

Nothing inline runs or styles a page: no 'unsafe-inline', no 'unsafe-eval'. The app's
scripts and styles are static files, htmx is configured without eval (jobs/base.html),
and Swagger UI loads its start-up script from a URL of its own (jobs.api.docs).

Django 6 has the header built in (django.middleware.csp, SECURE_CSP); on Django 5.2
django-csp sends it (CONTENT_SECURITY_POLICY). Both settings are set, each read only by
its own middleware.
"""

from __future__ import annotations

from typing import Any

import django

DIRECTIVES: dict[str, list[str]] = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "font-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}

BUILT_IN = django.VERSION >= (6, 0)
MIDDLEWARE = (
    "django.middleware.csp.ContentSecurityPolicyMiddleware"
    if BUILT_IN
    else "csp.middleware.CSPMiddleware"
)


def policies() -> tuple[dict[str, Any], dict[str, list[str]]]:
    """(CONTENT_SECURITY_POLICY for django-csp, SECURE_CSP for Django 6): the same policy."""
    return {"DIRECTIVES": {**DIRECTIVES}}, {**DIRECTIVES}
