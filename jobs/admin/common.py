"""What the admin's pages share: formatting, the lean list pages, the capped paginator,
and the reporting of bulk actions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import MAXYEAR, MINYEAR, datetime, timedelta
from functools import cached_property
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import model_ngettext
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest
from django.urls import URLPattern, URLResolver
from django.utils.functional import Promise
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from jobs import times
from jobs.access.permissions import VIEW_JOB
from jobs.models import RUN_COUNT_CAP, Job, JobHistory, JobHistoryQuerySet, capped_count
from jobs.web.screens import admin_screen

StrOrPromise = str | Promise

# Per-job failures listed by name in one message before "and N more".
FAILURES_LISTED = 5
# Rows per list page (see LeanListMixin).
LIST_PER_PAGE = 50


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
    """The screens' one format, in the viewer's zone ("2026-03-01 12:00:05 JST",
    jobs.times); None (shown as "-") when unset."""
    if value is None:
        return None
    return times.moment_text(value)


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


def refusal_text(error: Exception) -> str:
    """Why an item was refused, in words fit for the user."""
    if isinstance(error, ValidationError):
        return " ".join(error.messages)
    return str(error)


class BulkAction:
    """One bulk action's outcome, item by item, and the messages that report it.

    Every action here has one shape: refuse a selection over a cap, try each item, keep
    what was done and why an item was refused, then say so: one message for what was
    done, and the refusals either counted by reason (runs: many, alike) or named (jobs:
    few, each with its own reason). Messages are ngettext_lazy(..., "count") strings.
    """

    def __init__(self, model_admin: admin.ModelAdmin, request: HttpRequest) -> None:
        self.model_admin = model_admin
        self.request = request
        self.done: list[Any] = []
        self.refused: list[tuple[Any, str]] = []

    def say(self, message: str, level: int) -> None:
        self.model_admin.message_user(self.request, message, level)

    def over_cap(self, runs: JobHistoryQuerySet, cap: int, message: StrOrPromise) -> bool:
        """True, after saying `message` (with %(max)d), when `runs` holds over `cap` rows.

        A selection can be "all matching" over the whole history; each item costs a
        few queries, so an action must not run for minutes.
        """
        if runs.capped_count(cap).capped:
            self.say(message % {"max": cap}, messages.ERROR)
            return True
        return False

    def apply(
        self,
        items: Iterable[Any],
        act: Callable[[Any], object],
        refusals: tuple[type[Exception], ...],
    ) -> None:
        """act(item) for each item; an exception in `refusals` refuses that item only."""
        for item in items:
            try:
                act(item)
            except refusals as error:
                self.refused.append((item, refusal_text(error)))
            else:
                self.done.append(item)

    def report_done(self, message: StrOrPromise) -> None:
        """Say `message` (%(count)d) for what was done, if anything was."""
        if self.done:
            self.say(message % {"count": len(self.done)}, messages.SUCCESS)

    def report_refused_by_reason(self, message: StrOrPromise) -> None:
        """One warning per reason: `message` with %(count)d, %(runs)s (the model's noun,
        singular or plural) and %(reason)s."""
        for reason, count in Counter(reason for _item, reason in self.refused).items():
            noun = model_ngettext(self.model_admin.opts, count)
            self.say(message % {"count": count, "runs": noun, "reason": reason}, messages.WARNING)

    def report_named(
        self,
        message: StrOrPromise,
        items: Sequence[tuple[Any, str]] | None = None,
        level: int = messages.ERROR,
    ) -> None:
        """One message naming each item and why: `message` with %(count)d and %(why)s.
        `items` defaults to the refused ones."""
        items = self.refused if items is None else items
        if items:
            self.say(message % {"count": len(items), "why": describe_failures(items)}, level)


class AdminScreensMixin:
    """The admin pages of the app's models show times in the browser's zone and record
    what they change as the user's, through the admin (jobs.web.screens.admin_screen),
    without the project's adding TimezoneMiddleware or ActorMiddleware."""

    @property
    def media(self) -> forms.Media:
        # app.js tells the server the browser's zone (the `tz` cookie), so that an admin
        # visited before any dashboard page shows times in it from the next page on.
        return super().media + forms.Media(js=["jobs/app.js"])  # type: ignore[misc]

    def get_urls(self) -> list[URLPattern | URLResolver]:
        patterns = super().get_urls()  # type: ignore[misc]
        for pattern in patterns:
            if isinstance(pattern, URLPattern):
                pattern.callback = admin_screen(pattern.callback)
        return patterns


class RecordedByCodeMixin:
    """A table only the code writes (runs, the audit trail): nobody adds or edits a row
    here, superusers may delete one, and whoever may see jobs (jobs.view_job) sees it."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm(VIEW_JOB)


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


# The date hierarchy's parts and the values each may take. Not the first or last year
# Python knows: Django's filter goes up to the next year, and the local day's bounds in
# UTC may fall a day outside the year.
DATE_PARTS = {"year": (MINYEAR + 1, MAXYEAR - 1), "month": (1, 12), "day": (1, 31)}


class BoundedDateChangeList(ChangeList):
    """A change list whose date hierarchy refuses years it cannot filter by.

    Django turns ?created_at__year=9999 into a range ending in the year 10000 (a
    ValueError), and a 30-digit year into an OverflowError: both were 500s. A part out
    of range is an IncorrectLookupParameters, which the admin answers with its usual
    redirect to ?e=1, like any other bad filter.
    """

    def get_filters(self, request: HttpRequest) -> Any:
        if self.date_hierarchy:
            for part, (lowest, highest) in DATE_PARTS.items():
                for raw in request.GET.getlist(f"{self.date_hierarchy}__{part}"):
                    try:
                        value = int(raw)
                    except ValueError as error:
                        raise IncorrectLookupParameters(error) from error
                    if not lowest <= value <= highest:
                        raise IncorrectLookupParameters(
                            f"{part} {value} is outside {lowest} to {highest}"
                        )
        return super().get_filters(request)
