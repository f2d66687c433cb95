"""Template tags for the admin: the index page's counts and a cheap date hierarchy."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from django import template
from django.contrib.admin.views.main import ChangeList
from django.utils import formats, timezone
from django.utils.text import capfirst
from django.utils.translation import gettext as _

from jobs.models import CappedCount, Job, JobHistory, RunStatus

register = template.Library()

RECENT_FAILURES_WINDOW = timedelta(hours=24)


@register.simple_tag
def scheduler_counts() -> dict[str, int | CappedCount]:
    """Counts for the admin index, each one cheap however long the history is.

    Jobs are counted exactly (thousands of rows). Runs are counted up to a cap: pending
    and running through their partial indexes, recent failures through
    jobs_run_failed_recent, and the whole history with a LIMIT.
    """
    runs = JobHistory.objects.all()
    since = timezone.now() - RECENT_FAILURES_WINDOW
    return {
        "jobs": Job.objects.count(),
        "active_jobs": Job.objects.filter(is_active=True).count(),
        "runs": runs.capped_count(),
        "pending": runs.filter(status=RunStatus.PENDING).capped_count(),
        "running": runs.filter(status=RunStatus.RUNNING).capped_count(),
        "recent_failures": runs.filter(
            status=RunStatus.FAILED, created_at__gte=since
        ).capped_count(),
    }


def _bound(changelist: ChangeList, field: str, newest: bool) -> datetime | None:
    """The oldest or newest value of `field` in the list: one index look-up.

    Two queries rather than one with MIN() and MAX(): SQLite answers a lone MIN or MAX
    from the index but scans the whole table for both together.
    """
    ordering = f"-{field}" if newest else field
    value = changelist.queryset.order_by(ordering).values_list(field, flat=True).first()
    return timezone.localtime(value) if value is not None else None


def _month_starts(first: date, last: date) -> list[date]:
    months = []
    current = first.replace(day=1)
    while current <= last:
        months.append(current)
        current = (current + timedelta(days=32)).replace(day=1)
    return months


@register.inclusion_tag("admin/date_hierarchy.html")
def cheap_date_hierarchy(changelist: ChangeList) -> dict[str, Any]:
    """Django's date hierarchy, without its SELECT DISTINCT over every listed row.

    Django lists only the years, months or days that hold rows, which on a million runs
    is a full scan per page view. Here the choices are every period between the oldest
    and the newest listed row (two index look-ups), so a day with no runs in between
    may be offered and lead to an empty page: that's the price of a flat cost.
    """
    field = changelist.date_hierarchy
    year_field, month_field, day_field = f"{field}__year", f"{field}__month", f"{field}__day"
    params = changelist.params
    year, month, day = params.get(year_field), params.get(month_field), params.get(day_field)

    def link(filters: dict[str, Any]) -> str:
        return changelist.get_query_string(filters, [f"{field}__"])

    if year and month and day:
        chosen = date(int(year), int(month), int(day))
        return {
            "show": True,
            "back": {
                "link": link({year_field: year, month_field: month}),
                "title": capfirst(formats.date_format(chosen, "YEAR_MONTH_FORMAT")),
            },
            "choices": [{"title": capfirst(formats.date_format(chosen, "MONTH_DAY_FORMAT"))}],
        }

    first, last = _bound(changelist, field, newest=False), _bound(changelist, field, newest=True)
    if first is None or last is None:
        return {"show": False}
    if not year and first.year == last.year:
        # Like Django: start at the level where there is a choice to make.
        year = str(first.year)
        if first.month == last.month:
            month = str(first.month)

    if year and month:
        span = (last.date() - first.date()).days
        days = [first.date() + timedelta(days=n) for n in range(span + 1)]
        return {
            "show": True,
            "back": {"link": link({year_field: year}), "title": year},
            "choices": [
                {
                    "link": link({year_field: year, month_field: month, day_field: d.day}),
                    "title": capfirst(formats.date_format(d, "MONTH_DAY_FORMAT")),
                }
                for d in days
            ],
        }
    if year:
        return {
            "show": True,
            "back": {"link": link({}), "title": _("All dates")},
            "choices": [
                {
                    "link": link({year_field: year, month_field: m.month}),
                    "title": capfirst(formats.date_format(m, "YEAR_MONTH_FORMAT")),
                }
                for m in _month_starts(first.date(), last.date())
            ],
        }
    return {
        "show": True,
        "back": None,
        "choices": [
            {"link": link({year_field: str(y)}), "title": str(y)}
            for y in range(first.year, last.year + 1)
        ],
    }
