"""The schedule preview's form: the job form's schedule fields alone."""

from __future__ import annotations

import copy

from django import forms

from jobs.forecasts.preview import PREVIEW_FIELDS
from jobs.web.forms.job import JobForm
from jobs.web.widgets import LOCAL_INPUT_FORMATS


class SchedulePreviewForm(forms.Form):
    """The job form's schedule fields alone, read exactly as the job form reads them (the
    same fields: local date-times in the viewer's zone, the same messages), for the
    preview shown as one types (jobs/forecasts/preview.py). `is_active` too: a disabled one-off
    job may keep a time that has passed, an enabled one may not."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        job_form = JobForm.base_fields
        self.fields = {
            name: copy.deepcopy(job_form[name]) for name in (*PREVIEW_FIELDS, "is_active")
        }
        self.fields["scheduled_at"].input_formats = LOCAL_INPUT_FORMATS
