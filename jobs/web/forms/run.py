""" "Run now" with arguments."""

from __future__ import annotations

from django import forms

from jobs.access import masking
from jobs.models import Job
from jobs.pytasks import signature
from jobs.web import arguments


class RunNowForm(forms.Form):
    """ "Run now" with arguments: the fields of the job's executor (jobs/web/arguments.py),
    prefilled with the job's own arguments.

    Values that may be secret (an http job's headers, a shell job's environment) are
    offered only to users who may see them (jobs.change_job), and a shell job's only to
    users who may change it (jobs.use_shell); for anyone else the job's own are kept.
    """

    # Posted with the form, so that job_run tells it from the one-click button.
    with_arguments = forms.CharField(widget=forms.HiddenInput, initial="1", required=False)

    def __init__(self, job: Job, *args, user: object = None, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.job = job
        # Prefilled as the user may read them (jobs.access.masking); the masked parts sent back
        # are put back by Job.run_arguments.
        visible = masking.may_see_secrets(user, job)
        given = masking.shown_arguments(user, job.arguments, job)
        self.section = arguments.section_for(
            job.executor, job.command, given, secrets_visible=visible
        )
        if self.section is not None:
            self.fields.update(self.section.fields())
        self.arguments: dict = {}

    @property
    def has_arguments(self) -> bool:
        """Whether there is anything to fill in (else the one-click button is enough)."""
        return len(self.fields) > 1

    @property
    def task(self) -> signature.RegisteredTask | None:
        return self.section.task if isinstance(self.section, arguments.TaskSection) else None

    @property
    def argument_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if name != "with_arguments"]

    def clean(self) -> dict:
        cleaned = super().clean()
        if self.section is None:
            self.arguments = dict(self.job.arguments or {})
            return cleaned
        reading = self.section.read(cleaned, fallback=None)
        for field, messages in reading.errors.items():
            for message in messages:
                self.add_error(field, message)
        self.arguments = reading.arguments
        return cleaned
