"""Pages of the API's lists.

Runs page by the dashboard's keyset (jobs/web/pagination.py): the (created_at, id) of
the run at the page's edge. DRF's CursorPagination positions on created_at alone and
skips runs of the same instant with an OFFSET capped at 1,000; a claim gives its whole
batch one created_at, so following `next` repeated some runs and never reached others.
With the keyset every run comes exactly once, and each page is one indexed range read
with no OFFSET and no COUNT(*), however long the history.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.request import Request
from rest_framework.utils.urls import replace_query_param

from jobs.models import JobHistory
from jobs.web.pagination import Cursor, RunPage, run_page

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
# A cursor says which way it points: the runs older than its run, or the newer ones.
_OLDER, _NEWER = "o", "n"


class StatedPageLimits:
    """The page parameters' limits in the schema: a page_size of 1 to MAX_PAGE_SIZE (DRF
    cuts a bigger one to the most, and takes the default for one below 1), pages from 1,
    and counts from 0."""

    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)  # type: ignore[misc]
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
            elif parameter["name"] == getattr(self, "page_query_param", None):
                parameter["schema"].update(minimum=1)
        return parameters

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paged = super().get_paginated_response_schema(schema)  # type: ignore[misc]
        count = paged.get("properties", {}).get("count")
        if count is not None:
            count["minimum"] = 0
        return paged


class JobPagination(StatedPageLimits, PageNumberPagination):
    page_size = PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE


class ChangePagination(StatedPageLimits, PageNumberPagination):
    """A job's changes: a page number over the (job_id, created_at) index of one job."""

    page_size = PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE


class RunPagination(StatedPageLimits, CursorPagination):
    """Newest first, by a (created_at, id) keyset cursor.

    The response is DRF's cursor page ({"next", "previous", "results"}) and the cursor
    stays an opaque `cursor` parameter, so the OpenAPI schema and clients see what they
    saw; only the cursor's contents and the query behind it differ. A malformed cursor
    is a 404, as with DRF's.
    """

    page_size = PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE

    def paginate_queryset(
        self, queryset: QuerySet[JobHistory], request: Request, view: Any = None
    ) -> list[JobHistory]:
        self.request = request
        self.base_url = request.build_absolute_uri()
        before, after = self._decode(request.query_params.get(self.cursor_query_param))
        self.run_page: RunPage = run_page(
            queryset, before=before, after=after, size=self.get_page_size(request)
        )
        self.page = self.run_page.runs
        self.has_next = self.run_page.older is not None
        self.has_previous = self.run_page.newer is not None
        self.display_page_controls = self.has_next or self.has_previous
        return self.page

    def _decode(self, text: str | None) -> tuple[Cursor | None, Cursor | None]:
        """(before, after) for run_page: at most one of them, from `cursor`."""
        if not text:
            return None, None
        cursor = Cursor.parse(text[1:])
        if cursor is None or text[0] not in (_OLDER, _NEWER):
            raise NotFound(self.invalid_cursor_message)
        return (cursor, None) if text[0] == _OLDER else (None, cursor)

    def get_next_link(self) -> str | None:
        if self.run_page.older is None:
            return None
        return replace_query_param(
            self.base_url, self.cursor_query_param, f"{_OLDER}{self.run_page.older}"
        )

    def get_previous_link(self) -> str | None:
        if self.run_page.newer is None:
            return None
        return replace_query_param(
            self.base_url, self.cursor_query_param, f"{_NEWER}{self.run_page.newer}"
        )
