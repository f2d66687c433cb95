"""What Django's error reports (the DEBUG page, the e-mails to ADMINS) may show."""

from __future__ import annotations

import re

from django.views.debug import SafeExceptionReporterFilter


class SecretHidingExceptionReporterFilter(SafeExceptionReporterFilter):
    """Django's filter, also hiding every setting and request header named like a URL
    or DSN: DATABASE_URL and REDIS_URL carry passwords (and runserver copies the
    environment into request.META). METRICS_TOKEN is hidden by Django's own TOKEN."""

    hidden_settings = re.compile("API|TOKEN|KEY|SECRET|PASS|SIGNATURE|URL|DSN", flags=re.I)
