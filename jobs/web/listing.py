"""The job list's order: the `?sort=` parameter, read against a fixed list of columns.

A value not in the list is ignored (the list is by name), so a hand-typed or stale link
never fails. The order is in the page's URL, so the 3-second refresh (htmx re-requests
the same URL), the page links and the filter form (a hidden input) keep it.
"""

from __future__ import annotations

from typing import NamedTuple

from django.db.models import Case, F, IntegerField, OrderBy, QuerySet, Value, When

from jobs.models import RunStatus

SORT_PARAMETER = "sort"
DEFAULT_SORT = "name"

# The State column's order, ascending: what needs a look first.
_STATE_RANK = Case(
    When(is_running=True, then=Value(0)),
    When(last_run_status=RunStatus.FAILED, then=Value(1)),
    When(last_run_status=RunStatus.CANCELLED, then=Value(2)),
    When(last_run_status=RunStatus.SKIPPED, then=Value(3)),
    When(last_run_status=RunStatus.SUCCESS, then=Value(4)),
    default=Value(5),
    output_field=IntegerField(),
)


# The values of ?sort= (ascending; "-name" and so on descending).
SORT_COLUMNS = ("name", "status", "last_run", "next_run")


class Sort(NamedTuple):
    key: str
    descending: bool

    @property
    def value(self) -> str:
        return f"-{self.key}" if self.descending else self.key


class SortLink(NamedTuple):
    """A column heading's link: the ?sort= it asks for, and how the list is sorted by
    this column now ("ascending", "descending" or "" for aria-sort)."""

    sort: str
    current: str


def read_sort(text: str | None) -> Sort:
    """The order asked for, or the default one for a missing or unknown value."""
    text = (text or "")[:20]
    key = text.removeprefix("-")
    if key not in SORT_COLUMNS:
        return Sort(DEFAULT_SORT, descending=False)
    return Sort(key, descending=text.startswith("-"))


def _by(expression: F | Case, descending: bool) -> OrderBy:
    # Jobs without the value (never ran, no next run) come last either way.
    if descending:
        return expression.desc(nulls_last=True)
    return expression.asc(nulls_last=True)


def sorted_jobs(jobs: QuerySet, sort: Sort) -> QuerySet:
    """`jobs` (annotated with_running() for the State column) in `sort`'s order; name
    and id break ties, so pages never overlap."""
    if sort.key == "name":
        return jobs.order_by(_by(F("name"), sort.descending), "id")
    if sort.key == "status":
        return jobs.order_by(_by(_STATE_RANK, sort.descending), "name", "id")
    if sort.key == "last_run":
        return jobs.order_by(_by(F("last_run_at"), sort.descending), "name", "id")
    # next_run: a disabled job shows no next run ("disabled"), so it comes after the rest.
    return jobs.order_by(
        F("is_active").desc(), _by(F("next_run_at"), sort.descending), "name", "id"
    )


def sort_links(sort: Sort) -> dict[str, SortLink]:
    """Per column key, its heading's link: ascending first, the other way when the list
    is already sorted by it ascending."""
    links = {}
    for key in SORT_COLUMNS:
        if key != sort.key:
            links[key] = SortLink(key, "")
        elif sort.descending:
            links[key] = SortLink(key, "descending")
        else:
            links[key] = SortLink(f"-{key}", "ascending")
    return links
