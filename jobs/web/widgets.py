"""Widgets shared by the dashboard's job form and the admin's."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.forms.utils import flatatt
from django.utils.functional import lazy
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from jobs import kinds
from jobs.models import SCHEDULE_TYPE_FIELDS
from jobs.pytasks import registry
from jobs.schedules import arithmetic as schedules


def _site_zone_label() -> str:
    return gettext("Site time zone (%(zone)s)") % {"zone": settings.TIME_ZONE}


# Worded when an option is drawn, in the reader's language: a form's widgets are built
# once, when its class is defined, and a label formatted then stays in English.
site_zone_label = lazy(_site_zone_label, str)


def time_zone_choices() -> list[tuple[str, str]]:
    """Every IANA zone, after "the site's zone" for a blank value."""
    return [("", site_zone_label()), *((name, name) for name in schedules.time_zone_names())]


class TimeZoneSelect(forms.Select):
    """The time zone as a list of IANA names (600 of them, so not a radio list), with a
    text box above that narrows the options to those holding what is typed
    (jobs/static/jobs/zone_picker.js; hidden without JavaScript, never posted: the
    select's value is, and the model checks it).

    The options are written out here rather than through Django's template per option:
    600 template renders took 200 ms, most of a job form's time (the admin's too).
    """

    class Media:
        js = ("jobs/zone_picker.js",)

    def __init__(self, attrs: dict | None = None) -> None:
        super().__init__(attrs=attrs)
        self.choices = time_zone_choices()

    def render(
        self,
        name: str,
        value: object,
        attrs: dict | None = None,
        renderer: object = None,
    ) -> SafeString:
        final_attrs = self.build_attrs(self.attrs, attrs)
        final_attrs["name"] = name
        selected = "" if value is None else str(value)
        options = format_html_join(
            "",
            '<option value="{}"{}>{}</option>',
            (
                (choice, mark_safe(" selected") if choice == selected else "", label)
                for choice, label in self.choices
            ),
        )
        select = format_html("<select{}>{}</select>", flatatt(final_attrs), options)
        select_id = final_attrs.get("id")
        if not select_id:
            return select
        box = format_html(
            '<input type="search" class="{}" data-zone-filter="{}" aria-controls="{}" '
            'aria-label="{}" placeholder="{}" autocomplete="off" spellcheck="false" hidden>',
            # The admin's widgets take no Bootstrap class; the dashboard's do.
            "form-control form-control-sm mb-1"
            if "form-select" in str(final_attrs.get("class", ""))
            else "vTextField",
            select_id,
            select_id,
            _("Filter the time zones"),
            _("Type to filter: Tokyo, New York…"),
        )
        return format_html("{}{}", box, select)


def mark_schedule_switch(fields: dict[str, forms.Field]) -> None:
    """Tag a job form's fields for job_form.js: the switch, and what each field needs;
    those some types do without are optional in the form."""
    if "schedule_type" not in fields:  # a read-only view of the job
        return
    fields["schedule_type"].widget.attrs["data-schedule-switch"] = ""
    for name, types in SCHEDULE_TYPE_FIELDS.items():
        if name in fields:
            fields[name].widget.attrs["data-schedule-types"] = " ".join(types)
            # Hidden (so disabled, so not sent) for the other types: the model requires
            # what the chosen type needs (Job.clean) and stores the rest empty.
            fields[name].required = False


# What a browser's datetime-local input sends (with or without seconds).
LOCAL_INPUT_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"]


class LocalDateTimeInput(forms.DateTimeInput):
    """<input type="datetime-local">; the value is shown and read in the user's zone
    (forms.DateTimeField converts with the active time zone both ways)."""

    input_type = "datetime-local"

    def __init__(self, attrs: dict | None = None) -> None:
        super().__init__(attrs=attrs, format="%Y-%m-%dT%H:%M")


# The job form's fields that belong to one or more executors (jobs/static/jobs/job_form.js
# shows them for those only). The arguments' own fields sit in sections of the layout
# that name their executor.
EXECUTOR_FIELDS = {
    # The kinds whose form shows the command field (jobs.kinds).
    "command": tuple(kind.value for kind in kinds.KINDS if kind.command_label),
    "task": ("python",),
    "sim_failure_rate": ("simulated",),
    "sim_min_seconds": ("simulated",),
    "sim_max_seconds": ("simulated",),
}


def mark_executor_switch(fields: dict[str, forms.Field]) -> None:
    """Tag a job form's fields for job_form.js: the executor switch and what each needs."""
    if "executor" not in fields:
        return
    fields["executor"].widget.attrs["data-executor-switch"] = ""
    for name, values in EXECUTOR_FIELDS.items():
        if name in fields:
            fields[name].widget.attrs["data-executor-kinds"] = " ".join(values)


class TaskSelect(forms.Select):
    """The registered tasks; each option carries the task's signature as its title."""

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):  # type: ignore[no-untyped-def]
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        task = registry.get_task(str(value)) if value else None
        if task is not None:
            option["attrs"]["title"] = task.signature_text
        return option
