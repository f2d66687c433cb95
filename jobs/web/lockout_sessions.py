"""A locked-out user name is logged out everywhere: every session of that user ends.

A lockout means someone is guessing the password; if they already guessed it, the
sessions they opened with it must not outlive the lockout. The owner logs in again (from
any address that is not locked). Ending sessions is done through the session store, so
that a cached_db store forgets its cached copy as well.
"""

from __future__ import annotations

import logging
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY, get_user_model
from django.utils import timezone

log = logging.getLogger(__name__)


def end_sessions_of(username: str) -> int:
    """End every unexpired session of the user called `username`; how many ended.

    Only database-backed session engines (db, cached_db, or one of their subclasses) can
    be searched by user; with another engine nothing is ended and a warning is logged.
    """
    if not username:
        return 0
    user_model = get_user_model()
    user = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).first()
    if user is None:
        return 0
    store_class = import_module(settings.SESSION_ENGINE).SessionStore
    if not hasattr(store_class, "get_model_class"):
        log.warning(
            "%s was locked out but their sessions were kept: the session engine %s "
            "cannot be searched by user.",
            username,
            settings.SESSION_ENGINE,
        )
        return 0
    user_id = str(user.pk)
    unexpired = store_class.get_model_class().objects.filter(expire_date__gt=timezone.now())
    keys = [
        session.session_key
        for session in unexpired.iterator(chunk_size=500)
        if session.get_decoded().get(SESSION_KEY) == user_id
    ]
    for key in keys:
        store_class(session_key=key).delete()
    if keys:
        log.warning("%s was locked out: %d of their sessions ended.", username, len(keys))
    return len(keys)


def on_user_locked_out(sender: Any, request: Any = None, username: str = "", **kwargs: Any) -> None:
    """django-axes' user_locked_out signal."""
    end_sessions_of(username or "")
