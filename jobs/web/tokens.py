"""The API token page: the signed-in user's own token (rest_framework.authtoken's Token,
the one `manage.py apitoken` hands out), whether they have one, and a button that makes
a new one and shows it once.

A token acts as its user with the user's permissions, so only its owner may make one
here, and never sees another's: the page reads and replaces request.user's alone. The
key is shown only in the answer to the POST that made it (never cached); after that the
page says only when it was made. Making one replaces the old, which stops working at
once. Whoever may see jobs (jobs.view_job) may have one: without that permission a token
is refused everywhere anyway.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token

from jobs.access.permissions import CHANGE_JOB, VIEW_JOB
from jobs.web.views import needs

# Who made or replaced a token, and when (never the key): the site's log, as for logins.
logger = logging.getLogger(__name__)


def replace_token(user: Any) -> Token:
    """A new token for `user`; the one they had, if any, stops working. In one
    transaction: a failure leaves the old token as it was."""
    with transaction.atomic():
        replaced = Token.objects.filter(user=user).delete()[0] > 0
        token = Token.objects.create(user=user)
    logger.info(
        "API token %s for user %s", "replaced" if replaced else "created", user.get_username()
    )
    return token


@never_cache
@require_http_methods(["GET", "POST"])
@needs(VIEW_JOB)
def api_token(request: HttpRequest) -> HttpResponse:
    new_key = replace_token(request.user).key if request.method == "POST" else None
    token = Token.objects.filter(user=request.user).only("created").first()
    context = {
        "section": "api_token",
        "token_created": token.created if token is not None else None,
        "new_key": new_key,
        "read_only": not request.user.has_perm(CHANGE_JOB),
    }
    return render(request, "jobs/api_token.html", context)
