"""What the admin's pages share: formatting, the lean list pages, the capped paginator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from jobs.models import Job, JobHistory

# Counting runs stops here: "more than 10,000" costs a bounded scan, an exact count a full one.
RUN_COUNT_CAP = 10_000
# Per-job failures listed by name in one message before "and N more".
FAILURES_LISTED = 5
# Rows per list page (see LeanListMixin).
LIST_PER_PAGE = 50


@dataclass(frozen=True)
class CappedCount:
    """A row count that stopped at a cap: `value` is exact unless `capped`."""

    value: int
    capped: bool


def capped_count(queryset: QuerySet, cap: int | None = None) -> CappedCount:
    """Count at most cap + 1 rows (SELECT COUNT(*) FROM (... LIMIT cap + 1)).

    The ordering is dropped so the database may stop at the first cap + 1 rows it finds.
    """
    cap = RUN_COUNT_CAP if cap is None else cap
    counted = queryset.order_by()[: cap + 1].count()
    return CappedCount(value=min(counted, cap), capped=counted > cap)


class CappedCountPaginator(Paginator):
    """A paginator whose count stops at RUN_COUNT_CAP + 1.

    Pages up to the cap are real; beyond it the list says "more than 10,000" and the
    filters (status, date, job) narrow it down. This keeps the run list's cost flat
    however long the history grows.
    """

    cap = RUN_COUNT_CAP

    @cached_property
    def count(self) -> int:
        counted = capped_count(self.object_list, self.cap)
        return counted.value + 1 if counted.capped else counted.value

    @property
    def is_capped(self) -> bool:
        return self.count > self.cap


def format_time(value: datetime | None) -> str | None:
    """Local time to the second ("2026-03-01 12:00:05"); None (shown as "-") when unset.

    Runs are seconds apart, which Django's default DATETIME_FORMAT ("March 1, 2026, noon")
    hides; and strftime costs a fraction of Django's localised formatting per cell.
    """
    if value is None:
        return None
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S")


def time_column(field: str, description: str) -> Callable[[Any, Any], str | None]:
    """A column or read-only field showing `field` with format_time, sortable by it."""

    @admin.display(description=description, ordering=field)
    def column(model_admin: Any, obj: Any) -> str | None:
        return format_time(getattr(obj, field))

    return column


def format_duration(duration: timedelta | None) -> str | None:
    """How long, in words: "0.4 s", "3 min 12 s", "2 h 5 min"; None (shown as "-") if unknown."""
    if duration is None:
        return None
    seconds = duration.total_seconds()
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def badge(kind: str, value: str, label: str) -> SafeString:
    """A coloured label; the colours live in jobs/static/jobs/admin.css."""
    return format_html('<span class="jobs-badge jobs-{}-{}">{}</span>', kind, value, label)


def run_status_badge(run: JobHistory) -> SafeString:
    return badge("run", run.status, run.get_status_display())


def describe_failures(failures: Sequence[tuple[Job, str]]) -> str:
    """'“a”: reason; “b”: reason; and 3 more' for a message after a bulk action."""
    listed = "; ".join(f"“{job}”: {reason}" for job, reason in failures[:FAILURES_LISTED])
    hidden = len(failures) - FAILURES_LISTED
    if hidden > 0:
        listed += str(_("; and %(count)d more") % {"count": hidden})
    return listed


def validation_text(error: ValidationError) -> str:
    return " ".join(error.messages)


class LeanListMixin:
    """List pages that render quickly.

    Rendering, not the database, dominates these pages: each row costs about 1 ms of
    Django's change-list machinery on a small server, so a page holds 50 rows, not 100;
    and Django draws each row's action checkbox through the form widget templates, a
    quarter of the rest, which format_html does for almost nothing.
    """

    list_per_page = LIST_PER_PAGE

    def action_checkbox(self, obj: Any) -> SafeString:
        return format_html(
            '<input type="checkbox" name="{}" value="{}" class="action-select" aria-label="{}">',
            ACTION_CHECKBOX_NAME,
            obj.pk,
            format_html(gettext("Select this object for an action - {}"), str(obj)),
        )
