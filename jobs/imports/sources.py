"""Which source the import reads, from importschedules' words.

celery-beat and django-q2 read their tables in a database: through their models when
their app is installed here (in the alias `--database` names, "default" unless said),
else by SQL over their tables in that alias; or, given SOURCE, a database URL (read as
DATABASE_URL is: `sqlite:////path/to/old.sqlite3`, `postgres://...`), by SQL, in a
connection opened for the import only. crontab reads the file SOURCE names.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import dj_database_url
from django.db import connections
from django.db.utils import ConnectionDoesNotExist, load_backend

from jobs.imports.beat import BeatSource
from jobs.imports.crontab import CrontabSource
from jobs.imports.djangoq import DjangoQSource
from jobs.imports.entries import Source, SourceError

CELERY_BEAT = "celery-beat"
CRONTAB = "crontab"
DJANGO_Q2 = "django-q2"
KINDS = (CELERY_BEAT, CRONTAB, DJANGO_Q2)
# The connection a SOURCE URL opens (never one of the project's own aliases).
URL_ALIAS = "importschedules_source"


def open_source(
    kind: str,
    location: str | None,
    *,
    database: str = "default",
    enable: bool = False,
    disable: bool = False,
) -> Source:
    """The source of `kind` at `location`. Raises SourceError for one that cannot be opened."""
    if kind == CRONTAB:
        if not location:
            raise SourceError("--from crontab needs the file: importschedules --from crontab FILE")
        if disable:
            raise SourceError(
                "--disable-source does not edit a crontab file: comment out its imported lines"
            )
        return CrontabSource(location, enable=enable)
    if enable:
        raise SourceError("--enable is for crontab files only")
    if kind not in (CELERY_BEAT, DJANGO_Q2):
        raise SourceError(f"unknown source kind {kind!r}: one of {', '.join(KINDS)}")
    reader = BeatSource if kind == CELERY_BEAT else DjangoQSource
    if location:
        return reader(_url_alias(location), use_models=False)
    if database not in connections.settings:
        raise SourceError(
            f"there is no database alias {database!r} (DATABASES names "
            f"{', '.join(connections.settings)})"
        )
    return reader(database)


def _url_alias(url: str) -> str:
    """An alias for the database at `url`: its file must exist (SQLite would make one)."""
    try:
        settings = dj_database_url.parse(url)
    except (ValueError, KeyError) as error:
        raise SourceError(f"{url!r} is not a database URL: {error}") from None
    if settings["ENGINE"] == "django.db.backends.sqlite3":
        name = Path(str(settings["NAME"]))
        if not name.is_file():
            raise SourceError(f"the SQLite database {name} does not exist")
    close_url_connection()  # a second import in this process: the first one's goes
    # Django's own defaults filled in, as for the aliases of DATABASES; the connection is
    # this thread's only, and no alias of the project's settings.
    configured = connections.configure_settings({"default": settings})["default"]
    connections[URL_ALIAS] = load_backend(configured["ENGINE"]).DatabaseWrapper(
        configured, URL_ALIAS
    )
    return URL_ALIAS


def close_url_connection() -> None:
    """Close the connection a SOURCE URL opened, if any (the command does when it ends)."""
    with contextlib.suppress(ConnectionDoesNotExist):
        connections[URL_ALIAS].close()
