"""What the readers of another scheduler's tables share (beat.py, djangoq.py): the
database they are in, read through the app's own models when it is installed here, else
by SQL over the tables its migrations make; and the transaction to switch them off in."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, ClassVar

from django.apps import apps
from django.db import DatabaseError, connections, transaction

from jobs.imports.entries import Entry, Reading, Skipped, SourceError


class TableSource:
    """The tables in database `alias`: by the app's models when `use_models` (default:
    whether the app is installed here), else by SQL."""

    # Job.import_source of the jobs made; the app's name; how a message names its tables;
    # the SQL reading them, and the row type its columns fill, in order.
    source: ClassVar[str]
    app: ClassVar[str]
    tables: ClassVar[str]
    select: ClassVar[str]
    row_type: ClassVar[type]

    def __init__(self, alias: str = "default", *, use_models: bool | None = None) -> None:
        self.alias = alias
        self.use_models = apps.is_installed(self.app) if use_models is None else use_models

    def read(self) -> Reading:
        try:
            rows = self.model_rows() if self.use_models else self.sql_rows()
        except DatabaseError as error:
            raise SourceError(
                f"{self.tables} cannot be read in the database {self.alias!r}: {error}"
            ) from None
        entries: list[Entry] = []
        skipped: list[Skipped] = []
        for row in rows:
            result = self.translate(row)
            (entries if isinstance(result, Entry) else skipped).append(result)
        return Reading(self.source, tuple(entries), tuple(skipped))

    def atomic(self) -> AbstractContextManager[Any]:
        """The tables' own transaction, nested in the jobs' one: none when they are in the
        same database."""
        return nullcontext() if self.alias == "default" else transaction.atomic(using=self.alias)

    def sql_rows(self) -> list[Any]:
        with connections[self.alias].cursor() as cursor:
            cursor.execute(self.select)
            return [self.row_type(*values) for values in cursor.fetchall()]

    def model_rows(self) -> Sequence[Any]:
        raise NotImplementedError

    def translate(self, row: Any) -> Entry | Skipped:
        raise NotImplementedError
